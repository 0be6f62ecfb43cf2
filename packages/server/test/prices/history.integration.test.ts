/**
 * Backfill on the real adapters against the fake venues: Kalshi candlesticks and Polymarket
 * prices-history become candles (stored once, then served without asking again), roll up to 4h,
 * a long Polymarket range is fetched in the 15-day windows the venue accepts, a resolved market's
 * history comes at the 12-hour fidelity the venue serves it and is marked coarser, a venue that is
 * down gives 503 VENUE_UNAVAILABLE until it is back, and 24-hour changes are known from the first
 * listing, from each venue's own figure.
 */
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Config, testConfig } from "../../src/config";
import { fakeVenueUrls } from "../../src/demo";
import { ManualClock, systemClock } from "../../src/infra/clock";
import { silentLogger } from "../../src/infra/log";
import type { Candle, PricePoint, VenueHistory, VenueId } from "../../src/venues/model";
import { createVenues } from "../../src/venues/registry";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, expectError, signup, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

let polymarket: PolymarketFake;
let fakesStarted = 0;
let kalshi: KalshiFake;
let config: Config;
let venues: Map<VenueId, Venue>;
let t: TestApp;
let key: string;
const calls = { kalshi: 0, polymarket: 0 };
/** The adapters' own answers, for comparing with what the API serves. */
const direct = new Map<VenueId, Venue["getPriceHistory"]>();

type Body = {
  data: Array<{ timestamp: string; open: number; high: number; low: number; close: number; volume: number }>;
  meta: {
    market_id: string;
    interval: string;
    start: string;
    end: string;
    coverage: { resolution: string; source: string; complete: boolean; reason: string | null };
  };
};

beforeAll(async () => {
  polymarket = await startPolymarketFake();
  fakesStarted = Date.now();
  kalshi = await startKalshiFake();
  config = testConfig({
    venues: ["polymarket", "kalshi"],
    venueUrls: fakeVenueUrls(polymarket, kalshi),
  });
  venues = createVenues(config, systemClock, silentLogger);
  for (const [id, venue] of venues) {
    const original = venue.getPriceHistory.bind(venue);
    direct.set(id, original);
    venue.getPriceHistory = (marketId, options) => {
      calls[id] += 1;
      return original(marketId, options);
    };
  }
});

afterAll(async () => {
  await Promise.all([polymarket?.close(), kalshi?.close()]);
});

const get = (query: string) =>
  t.app.inject({ method: "GET", url: `/v1/prices/history?${query}`, headers: bearer(key) });
const history = async (query: string): Promise<Body> => {
  const response = await get(query);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
};
const markets = async (venue: VenueId) =>
  (
    await t.app.inject({ method: "GET", url: `/v1/markets?venue=${venue}&limit=10`, headers: bearer(key) })
  ).json().data as Array<{ id: string }>;
const now = () => t.clock.now();
const hourStart = (ms: number) => Math.floor(ms / HOUR) * HOUR;

function expectSeries(body: Body, step: number, count: number) {
  expect(body.data).toHaveLength(count);
  for (let i = 0; i < body.data.length; i++) {
    const c = body.data[i]!;
    if (i > 0) expect(Date.parse(c.timestamp) - Date.parse(body.data[i - 1]!.timestamp)).toBe(step);
    for (const price of [c.open, c.high, c.low, c.close]) {
      expect(price).toBeGreaterThan(0);
      expect(price).toBeLessThan(1);
    }
    expect(c.low).toBeLessThanOrEqual(Math.min(c.open, c.close));
    expect(c.high).toBeGreaterThanOrEqual(Math.max(c.open, c.close));
  }
}

describe.each(STORE_BACKENDS)("price history backfill against the fake venues on %s", (backend) => {
  beforeAll(async () => {
    calls.kalshi = 0;
    calls.polymarket = 0;
    // The fakes' history runs on the real clock; the app's clock stands still a little behind it.
    t = await createTestApp({ store: backend, venues, config, clock: new ManualClock(Date.now()) });
    key = (await createKey(t.app, (await signup(t.app)).session, { type: "read_only" })).key;
    await t.services.catalog.syncVenue("polymarket");
    await t.services.catalog.syncVenue("kalshi");
  });
  afterAll(() => t.close());

  it("serves Kalshi candlesticks, fetched once", async () => {
    const [market] = await markets("kalshi");
    const body = await history(`market_id=${market!.id}&interval=1h&limit=24`);
    expect(calls.kalshi).toBe(1);
    expectSeries(body, HOUR, 24);
    const current = hourStart(now());
    expect(body.meta).toMatchObject({
      market_id: market!.id,
      interval: "1h",
      start: iso(current - 23 * HOUR),
      end: iso(current + HOUR),
      coverage: { resolution: "1h", source: "venue", complete: true, reason: null },
    });
    // The 23 finished hours are the venue's candles, stamped at their start, in contracts.
    const venue = (await direct.get("kalshi")!(market!.id, {
      interval: "1h",
      start: iso(current - 23 * HOUR),
      end: iso(current),
    })) as Candle[];
    expect(venue).toHaveLength(23);
    expect(body.data.slice(0, 23)).toEqual(
      venue.map((c) => ({
        timestamp: c.timestamp,
        open: c.open / 1e6,
        high: c.high / 1e6,
        low: c.low / 1e6,
        close: c.close / 1e6,
        volume: c.volume / 1e6,
      })),
    );
    expect(body.data.some((c) => c.volume > 0)).toBe(true);

    // Again, and rolled up to 4h: nothing more is asked of the venue.
    await history(`market_id=${market!.id}&interval=1h&limit=24`);
    const fourStart = Math.ceil((current - 23 * HOUR) / (4 * HOUR)) * 4 * HOUR;
    const fours = await history(
      `market_id=${market!.id}&interval=4h&start=${iso(fourStart)}&end=${iso(fourStart + 8 * HOUR)}`,
    );
    expect(calls.kalshi).toBe(1);
    expect(fours.data).toHaveLength(2);
    for (let i = 0; i < 2; i++) {
      const hours = body.data.filter((c) => {
        const at = Date.parse(c.timestamp);
        return at >= fourStart + i * 4 * HOUR && at < fourStart + (i + 1) * 4 * HOUR;
      });
      expect(hours).toHaveLength(4);
      expect(fours.data[i]).toEqual({
        timestamp: iso(fourStart + i * 4 * HOUR),
        open: hours[0]!.open,
        high: Math.max(...hours.map((c) => c.high)),
        low: Math.min(...hours.map((c) => c.low)),
        close: hours[3]!.close,
        volume: Number(hours.reduce((sum, c) => sum + c.volume, 0).toFixed(6)),
      });
    }
  });

  it("serves Kalshi 1-minute candles for 15m roll-ups", async () => {
    const [, market] = await markets("kalshi");
    const before = calls.kalshi;
    const body = await history(`market_id=${market!.id}&interval=15m&limit=8`);
    expect(calls.kalshi).toBe(before + 1);
    expectSeries(body, 15 * 60_000, 8);
  });

  it("turns Polymarket prices-history into candles without volume, fetched once", async () => {
    const [market] = await markets("polymarket");
    const body = await history(`market_id=${market!.id}&interval=1h&limit=12`);
    expect(calls.polymarket).toBe(1);
    expectSeries(body, HOUR, 12);
    const current = hourStart(now());
    const points = (
      (await direct.get("polymarket")!(market!.id, {
        interval: "1h",
        start: iso(current - 11 * HOUR),
        end: iso(current - HOUR),
      })) as VenueHistory
    ).series as PricePoint[];
    // One point per hour, on the hour: each finished hour opens and closes at its point's price.
    const byTime = new Map(points.map((p) => [p.timestamp, p.price / 1e6]));
    for (const c of body.data.slice(0, 10)) {
      expect(c.open, c.timestamp).toBe(byTime.get(c.timestamp));
      expect(c.volume).toBe(0);
    }
    await history(`market_id=${market!.id}&interval=1h&limit=12`);
    expect(calls.polymarket).toBe(1);
  });

  it("fetches a long Polymarket range in the 15-day windows the venue accepts", async () => {
    const [, market] = await markets("polymarket");
    const start = hourStart(now()) - 40 * 24 * HOUR;
    const before = calls.polymarket;
    const body = await history(`market_id=${market!.id}&interval=1h&start=${iso(start)}&limit=1000`);
    expect(calls.polymarket).toBe(before + 1);
    expect(body.data[0]!.timestamp).toBe(iso(start));
    expectSeries(body, HOUR, 40 * 24 + 1);
    expect(body.meta.coverage).toMatchObject({ resolution: "1h", complete: true });
  });

  it("gets a resolved Polymarket market's history at 12 hours and marks it coarser", async () => {
    // One market per store: the fake is shared and stays resolved.
    const market = (await markets("polymarket"))[3 + STORE_BACKENDS.indexOf(backend)]!;
    const info = polymarket.script.market(market.id.slice("polymarket:".length));
    polymarket.script.resolveMarket(info.key, "yes");
    await t.services.catalog.syncVenue("polymarket");
    const end = hourStart(now());
    const body = await history(`market_id=${market.id}&interval=1h&end=${iso(end)}&limit=24`);
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.meta.coverage).toMatchObject({
      resolution: "12h",
      source: "venue",
      complete: false,
      reason: "coarser_at_venue",
    });
  });

  it("knows change_24h from each venue's own figure at the first listing", async () => {
    const ids = [(await markets("kalshi"))[0]!.id, (await markets("polymarket"))[0]!.id];
    const response = await t.app.inject({
      method: "GET",
      url: `/v1/prices?market_ids=${ids.join(",")}`,
      headers: bearer(key),
    });
    const data = response.json().data as Record<string, { price: number; change_24h: number | null }>;
    // Kalshi: previous_price_dollars is the fake's candlestick price 24 hours before it listed.
    const kal = data[ids[0]!]!;
    expect(kal.change_24h).not.toBeNull();
    const kalThen = Number((kal.price - kal.change_24h!).toFixed(4));
    const around = fakesStarted - 24 * HOUR;
    const candles = (await direct.get("kalshi")!(ids[0]!, {
      interval: "1m",
      start: iso(Math.floor(around / 60_000) * 60_000 - 2 * 60_000),
      end: iso(Math.floor(around / 60_000) * 60_000 + 3 * 60_000),
    })) as Candle[];
    expect(candles.map((c) => c.close / 1e6)).toContain(kalThen);
    // Polymarket: price − oneDayPriceChange is the fake's prices-history point of 24 hours ago.
    const pm = data[ids[1]!]!;
    expect(pm.change_24h).not.toBeNull();
    const pmThen = pm.price - pm.change_24h!;
    const token = polymarket.script.market(ids[1]!.slice("polymarket:".length)).yesTokenId;
    const dayAgo = Math.floor(Date.now() / 1000) - 86_400;
    const res = await fetch(
      `${polymarket.clobUrl}/prices-history?market=${token}&startTs=${dayAgo - 120}&endTs=${dayAgo + 120}&fidelity=1`,
    );
    const points = ((await res.json()) as { history: Array<{ p: number }> }).history;
    expect(Math.min(...points.map((p) => Math.abs(p.p - pmThen)))).toBeLessThan(0.003);
  });

  it("answers 503 VENUE_UNAVAILABLE while the venue is down, then backfills when it is back", async () => {
    const [, , market] = await markets("kalshi");
    // Days that are over: the live feed may already be building today's candle.
    const today = Math.floor(now() / 86_400_000) * 86_400_000;
    const query = `market_id=${market!.id}&interval=1d&end=${iso(today)}&limit=5`;
    kalshi.script.goDown(true);
    try {
      const error = expectError(await get(query), 503, "VENUE_UNAVAILABLE");
      expect(error.details).toEqual({ venue: "kalshi", reason: "unavailable" });
    } finally {
      kalshi.script.goDown(false);
    }
    expectSeries(await history(query), 86_400_000, 5);
  }, 60_000);
});
