/**
 * The catalog on the real adapters against the fake venues: a sync stores every open market of
 * both venues with YES mapped by label; a venue that goes down is shown unreachable while the
 * other keeps working; one that answers garbage is shown degraded; both recover.
 */
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../../src/config";
import { fakeVenueUrls } from "../../src/demo";
import { systemClock } from "../../src/infra/clock";
import { silentLogger } from "../../src/infra/log";
import { createVenues, venueUrlsInUse } from "../../src/venues/registry";
import { bearer, createKey, createTestApp, signup, type TestApp } from "../support/app";

let polymarket: PolymarketFake;
let kalshi: KalshiFake;
let t: TestApp;
let key: string;

beforeAll(async () => {
  polymarket = await startPolymarketFake();
  kalshi = await startKalshiFake();
  const config = testConfig({
    venues: ["polymarket", "kalshi"],
    venueUrls: fakeVenueUrls(polymarket, kalshi),
  });
  const venues = createVenues(config, systemClock, silentLogger);
  t = await createTestApp({ venues, config: { ...config, venues: config.venues } });
  expect(venueUrlsInUse(config)["kalshi"]).toEqual({ api: kalshi.apiUrl, ws: kalshi.wsUrl });
  key = (await createKey(t.app, (await signup(t.app)).session, { type: "read_only" })).key;
});

afterAll(async () => {
  await t.close();
  await Promise.all([polymarket.close(), kalshi.close()]);
});

const get = async (url: string) => (await t.app.inject({ method: "GET", url, headers: bearer(key) })).json();
const health = async (venue: string) =>
  (await get("/v1/venues")).data.find((v: { id: string }) => v.id === venue).health as {
    status: string;
    last_error: string | null;
  };

describe("catalog against the fake venues", () => {
  it("stores every open market of both venues", async () => {
    await t.services.catalog.syncVenue("polymarket");
    await t.services.catalog.syncVenue("kalshi");
    expect((await health("polymarket")).status).toBe("ok");
    expect((await health("kalshi")).status).toBe("ok");
    const poly = await get("/v1/markets?venue=polymarket&limit=100");
    const kal = await get("/v1/markets?venue=kalshi&limit=100");
    expect(poly.meta.total).toBeGreaterThan(5);
    expect(kal.meta.total).toBeGreaterThan(5);
    // No combo markets, nothing that is not open.
    for (const m of kal.data) {
      expect(m.venue_market_id.startsWith("KXMVE")).toBe(false);
      expect(m.status).toBe("open");
    }
  });

  it("shows each market's fee schedule: Polymarket's feeSchedule, Kalshi's series fee type (event overrides first)", async () => {
    await t.services.catalog.syncVenue("polymarket");
    await t.services.catalog.syncVenue("kalshi");
    const market = async (id: string) => (await get(`/v1/markets/${encodeURIComponent(id)}`)).data;
    const fed = polymarket.script.market("fed-decision-december-2026-no-change");
    // Gamma's feeSchedule (rate 0.05, exponent 1); takerBaseFee 1000 is the cap, not a rate.
    expect((await market(`polymarket:${fed.conditionId}`)).fees).toEqual({
      model: "polymarket",
      rate: 0.05,
      exponent: 1,
      taker_only: true,
      maker_rate: 0,
      fee_type: null,
      multiplier: null,
      cap_bps: 1000,
    });
    const free = polymarket.script.market("us-government-shutdown-by-december-31-2026");
    expect((await market(`polymarket:${free.conditionId}`)).fees).toMatchObject({
      rate: 0,
      taker_only: true,
    });
    // Kalshi: the series' fee type and multiplier, learned from GET /series during the sync.
    expect((await market("kalshi:KXFEDDECISION-26DEC-H0")).fees).toEqual({
      model: "kalshi",
      rate: 0.07,
      exponent: 1,
      taker_only: false,
      maker_rate: 0.0175,
      fee_type: "quadratic_with_maker_fees",
      multiplier: 1,
      cap_bps: null,
    });
    expect((await market("kalshi:KXBTCY-26DEC31-T100000")).fees).toMatchObject({
      fee_type: "quadratic",
      multiplier: 1,
      taker_only: true,
    });
    // /v1/venues describes the formulas, not a bps figure.
    const venues = (await get("/v1/venues")).data as Array<{
      id: string;
      fees: { model: string; description: string };
    }>;
    const described = Object.fromEntries(venues.map((v) => [v.id, v.fees]));
    expect(described["polymarket"]).toMatchObject({
      model: "polymarket",
      description: expect.stringMatching(/cap, not a rate/),
    });
    expect(described["kalshi"]).toMatchObject({
      model: "kalshi",
      description: expect.stringMatching(/fee_multiplier/),
    });
    // An event's override wins over its series (KXNFLGAME charges makers; this game is quadratic × 0.5).
    expect((await market("kalshi:KXNFLGAME-26DEC27KCDEN-KC")).fees).toMatchObject({
      fee_type: "quadratic",
      multiplier: 0.5,
      rate: 0.035,
      taker_only: true,
    });
  });

  it("maps YES by label even when the venue lists No first", async () => {
    const eth = (await get("/v1/markets?venue=polymarket&q=ethereum%205,000")).data[0];
    expect(eth.outcomes.yes.label).toBe("Yes");
    expect(eth.outcomes.no.label).toBe("No");
    expect(eth.outcomes.yes.token_id).not.toBe(eth.outcomes.no.token_id);
    expect(eth.rules).toContain("Ether");
  });

  it("shows a venue that is down as unreachable, keeps the other, and recovers", async () => {
    kalshi.script.goDown(true);
    await t.services.catalog.syncVenue("kalshi");
    expect((await health("kalshi")).status).toBe("unreachable");
    await t.services.catalog.syncVenue("polymarket");
    expect((await health("polymarket")).status).toBe("ok");
    expect((await get("/v1/markets?venue=kalshi")).meta.total).toBeGreaterThan(5);
    kalshi.script.goDown(false);
    await t.services.catalog.syncVenue("kalshi");
    expect((await health("kalshi")).status).toBe("ok");
  }, 60_000);

  it("shows a venue that answers garbage as degraded", async () => {
    polymarket.script.malformNext(50, "garbage");
    await t.services.catalog.syncVenue("polymarket");
    const h = await health("polymarket");
    expect(h.status).toBe("degraded");
    expect(h.last_error).toContain("bad_response");
  }, 60_000);
});

describe("the Kalshi market-data feed", () => {
  const venueOf = async (app: TestApp, id: string, as = key) =>
    (await app.app.inject({ method: "GET", url: "/v1/venues", headers: bearer(as) }))
      .json()
      .data.find((v: { id: string }) => v.id === id);

  it("without KALSHI_FEED_KEY_ID no feed is started, and the venue's health says why", async () => {
    kalshi.script.resetRequestCounts();
    await t.services.catalog.syncVenue("kalshi");
    await t.services.live.refresh("kalshi");
    const venue = await venueOf(t, "kalshi");
    expect(venue.capabilities.feed).toBe(false);
    expect(venue.health.feed_connected).toBe(false);
    expect(venue.health.feed_disabled_reason).toMatch(/requires authentication/);
    expect(venue.health.feed_disabled_reason).toMatch(/KALSHI_FEED_KEY_ID/);
    // No socket was even tried (the venue refuses unsigned ones; no endless reconnecting).
    expect(kalshi.script.requestCount("GET /trade-api/ws/v2")).toBe(0);
    expect((await venueOf(t, "polymarket")).health.feed_disabled_reason).toBeNull();
  });

  it("with a feed key the feed is signed and connects", async () => {
    const config = testConfig({
      venues: ["kalshi"],
      venueUrls: fakeVenueUrls(polymarket, kalshi),
      kalshiFeedKey: await kalshi.feedKey(),
    });
    const venues = createVenues(config, systemClock, silentLogger);
    const keyed = await createTestApp({ venues, config: { ...config, venues: config.venues } });
    try {
      const reader = (await createKey(keyed.app, (await signup(keyed.app)).session, { type: "read_only" }))
        .key;
      await keyed.services.catalog.syncVenue("kalshi");
      await keyed.services.live.refresh("kalshi");
      const deadline = Date.now() + 5000;
      let venue = await venueOf(keyed, "kalshi", reader);
      while (!venue.health.feed_connected && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        venue = await venueOf(keyed, "kalshi", reader);
      }
      expect(venue.capabilities.feed).toBe(true);
      expect(venue.health).toMatchObject({ feed_connected: true, feed_disabled_reason: null });
    } finally {
      await keyed.close();
    }
  });
});
