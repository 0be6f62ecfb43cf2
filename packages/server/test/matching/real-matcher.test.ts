/**
 * The real Matcher (src/matching/matcher.ts), fed by the matching service from a catalog synced
 * from the fake venues through the real adapters, judged against the world's labels
 * (`crossListings()`): only what the real matcher must do, whatever its internals.
 * It is the acceptance check that the matcher and the service fit together.
 */
import { crossListings } from "@crossbook/fakes";
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../../src/config";
import { fakeVenueUrls } from "../../src/demo";
import { systemClock } from "../../src/infra/clock";
import { silentLogger } from "../../src/infra/log";
import { Matcher } from "../../src/matching/matcher";
import { createVenues } from "../../src/venues/registry";
import { STORE_BACKENDS } from "../support/backends";
import { allPairs, type MatchingTestApp, matchedEvents, matchingApp } from "./setup";

describe.each(STORE_BACKENDS)("the real matcher over the fake venues' world on %s", (store) => {
  let polymarket: PolymarketFake;
  let kalshi: KalshiFake;
  let t: MatchingTestApp;
  /** Seed keys to our market ids (only markets the catalog holds: open ones). */
  const ids = { polymarket: new Map<string, string>(), kalshi: new Map<string, string>() };

  beforeAll(async () => {
    polymarket = await startPolymarketFake();
    kalshi = await startKalshiFake();
    const config = testConfig({
      venues: ["polymarket", "kalshi"],
      venueUrls: fakeVenueUrls(polymarket, kalshi),
    });
    const venues = createVenues(config, systemClock, silentLogger);
    t = await matchingApp({
      store,
      venues,
      matcher: new Matcher(),
      config: { venues: config.venues, venueUrls: config.venueUrls },
    });
    await t.sync();
    const markets = await t.runtime.store.db.selectFrom("markets").select(["id", "venue", "url"]).execute();
    for (const m of markets) {
      if (m.venue === "kalshi") ids.kalshi.set(m.id.slice("kalshi:".length), m.id);
      // Polymarket's seed key is the market's slug, the last segment of its URL.
      else if (m.url) ids.polymarket.set(m.url.slice(m.url.lastIndexOf("/") + 1), m.id);
    }
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await Promise.all([polymarket?.close(), kalshi?.close()]);
  });

  /** The world's key of a catalog market id (for messages). */
  function seedKey(id: string): string {
    for (const venue of [ids.polymarket, ids.kalshi])
      for (const [key, value] of venue) if (value === id) return key;
    return id;
  }

  /** The world's labelled pairs whose two markets are in the catalog, as canonical market ids. */
  function labelled() {
    return crossListings().flatMap((p) => {
      const a = ids.polymarket.get(p.polymarket);
      const b = ids.kalshi.get(p.kalshi);
      return a && b ? [{ ...p, a, b }] : [];
    });
  }

  it("has the world in the catalog and every open market in the matcher's index", () => {
    expect(ids.polymarket.size).toBeGreaterThan(10);
    expect(ids.kalshi.size).toBeGreaterThan(10);
    expect(labelled().length).toBeGreaterThan(20);
    expect(t.services.matching.indexed).toBe(ids.polymarket.size + ids.kalshi.size);
  });

  it("never auto-verifies a look-alike", async () => {
    const rows = new Map((await allPairs(t)).map((r) => [`${r.market_a}\n${r.market_b}`, r]));
    for (const p of labelled().filter((l) => l.relation === "lookalike")) {
      const row = rows.get(`${p.a}\n${p.b}`);
      expect(row?.status, `${p.polymarket} / ${p.kalshi}: ${p.why}`).not.toBe("verified");
    }
  });

  it("auto-verifies only labelled identities and complements, with the right relation and polarity", async () => {
    const truth = new Map(labelled().map((p) => [`${p.a}\n${p.b}`, p.relation]));
    const verified = (await allPairs(t)).filter((r) => r.status === "verified");
    const right = verified.filter((r) => truth.get(`${r.market_a}\n${r.market_b}`) === r.relation);
    // The precision target at the auto-accept threshold; and something must be verified,
    // or the ratio would hold of nothing.
    expect(verified.length).toBeGreaterThan(0);
    const wrong = verified
      .filter((r) => !right.includes(r))
      .map((r) => `${seedKey(r.market_a)} ~ ${seedKey(r.market_b)} ${r.relation}: ${r.reasons}`);
    expect(right.length / verified.length, wrong.join("\n")).toBeGreaterThanOrEqual(0.97);
    for (const r of verified) {
      expect(r.polarity, r.id).toBe(r.relation === "complement" ? "inverted" : "same");
      expect(r.event_id, r.id).toMatch(/^xev_/);
    }
    // Each one announced once.
    expect((await matchedEvents(t)).length).toBe(verified.length);
  });

  it("proposes most labelled identities and complements with the right relation", async () => {
    const rows = new Map((await allPairs(t)).map((r) => [`${r.market_a}\n${r.market_b}`, r]));
    const wanted = labelled().filter((l) => l.relation !== "lookalike");
    const found = wanted.filter((p) => rows.get(`${p.a}\n${p.b}`)?.relation === p.relation);
    expect(found.length / wanted.length).toBeGreaterThanOrEqual(0.85);
  });

  it("finds nothing new when the catalog syncs again unchanged", async () => {
    const before = await allPairs(t);
    t.clock.advance(60_000);
    await t.sync();
    const after = await allPairs(t);
    expect(after.map((r) => [r.id, r.status, r.relation, r.confidence])).toEqual(
      before.map((r) => [r.id, r.status, r.relation, r.confidence]),
    );
  });
});
