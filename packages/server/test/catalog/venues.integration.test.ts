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
  const quiet = { info() {}, warn() {} };
  const venues = createVenues(config, systemClock, quiet);
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
