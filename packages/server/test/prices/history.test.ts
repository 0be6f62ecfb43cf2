/**
 * GET /v1/prices/history through the app: candles from the live feed, gap filling, roll-ups, how
 * limit/start/end combine, every error, and backfill from a venue (once, never over live candles,
 * Kalshi-style candles and Polymarket-style points, a venue that is down), on every store.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/infra/clock";
import { VenueError } from "../../src/venues/errors";
import type { Candle, CandleInterval, PricePoint, VenueHistory, VenueId } from "../../src/venues/model";
import type { FeedEvent, Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, expectError, signup, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";

const SEC = 1_000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
/** Sunday 2026-11-22 12:00 UTC. */
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const DAY = 24 * HOUR;

type Coverage = {
  from: string | null;
  to: string | null;
  resolution: string;
  source: string;
  complete: boolean;
  reason: string | null;
};

type HistoryArgs = { interval: CandleInterval; start: string; end: string };
type HistoryFn = (marketId: string, options: HistoryArgs) => Candle[] | PricePoint[] | VenueHistory;

/** A TestVenue whose price history the test decides; records every history request. */
function historyVenue(id: VenueId) {
  const venue = new TestVenue(id);
  const calls: Array<{ marketId: string } & HistoryArgs> = [];
  const state: { history: HistoryFn } = { history: () => [] };
  (venue as Venue).getPriceHistory = async (marketId, options) => {
    calls.push({ marketId, ...options });
    if (venue.failWith) throw venue.failWith;
    return state.history(marketId, options);
  };
  return { venue, calls, state };
}

/** Kalshi-style candles for every period of [start, end): price walks up a cent a period. */
function venueCandles(options: HistoryArgs, size: number): Candle[] {
  const out: Candle[] = [];
  for (let t = Date.parse(options.start); t < Date.parse(options.end); t += size) {
    const open = 300_000 + ((t / size) % 20) * 10_000;
    out.push({
      timestamp: iso(t),
      open,
      high: open + 20_000,
      low: open - 10_000,
      close: open + 10_000,
      volume: 5_000_000,
    });
  }
  return out;
}

describe.each(STORE_BACKENDS)("price history on %s", (backend) => {
  let t: TestApp;
  let key: string;
  const clock = new ManualClock(T0);
  const kalshi = historyVenue("kalshi");
  const polymarket = historyVenue("polymarket");
  const KEYS = ["LIVE", "GAPS", "PAGE", "BACKFILL", "MIXED", "DOWN", "DOWNLOCAL", "PAST", "EMPTY"];
  /** Markets the venue has history for; the others have none. */
  const WITH_HISTORY = new Set([
    "kalshi:BACKFILL",
    "kalshi:MIXED",
    "kalshi:DOWN",
    "kalshi:DOWNLOCAL",
    "kalshi:PAST",
    "kalshi:YOUNG",
  ]);

  beforeAll(async () => {
    kalshi.venue.set(
      ...KEYS.map((k) => testMarket("kalshi", k)),
      testMarket("kalshi", "YOUNG", { openTime: iso(T0 - 2 * HOUR) }),
    );
    polymarket.venue.set(testMarket("polymarket", "0xpoints"), testMarket("polymarket", "0xcoarse"));
    kalshi.state.history = (id, options) =>
      WITH_HISTORY.has(id)
        ? venueCandles(
            options,
            options.interval === "1h" ? HOUR : options.interval === "1m" ? MIN : 24 * HOUR,
          )
        : [];
    t = await createTestApp({
      store: backend,
      clock,
      venues: new Map<VenueId, Venue>([
        ["kalshi", kalshi.venue],
        ["polymarket", polymarket.venue],
      ]),
    });
    key = (await createKey(t.app, (await signup(t.app)).session, { type: "read_only" })).key;
    await t.services.catalog.syncVenue("kalshi");
    await t.services.catalog.syncVenue("polymarket");
  });
  afterAll(() => t.close());

  const get = (query: string) =>
    t.app.inject({ method: "GET", url: `/v1/prices/history?${query}`, headers: bearer(key) });
  const history = async (query: string) => {
    const response = await get(query);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as {
      success: true;
      data: Array<{
        timestamp: string;
        open: number;
        high: number;
        low: number;
        close: number;
        volume: number;
      }>;
      meta: { market_id: string; interval: string; start: string; end: string; coverage: Coverage };
    };
  };
  const emit = (at: number, event: FeedEvent) => {
    clock.set(at);
    kalshi.venue.emit(event);
  };
  const trade = (market: string, price: number, contracts: number): FeedEvent => ({
    kind: "trade",
    trade: {
      marketId: `kalshi:${market}`,
      outcome: "yes",
      price,
      size: contracts * 1_000_000,
      takerSide: "buy",
      timestamp: "t",
      venueTradeId: null,
    },
  });
  const quote = (market: string, bid: number, ask: number): FeedEvent => ({
    kind: "quote",
    marketId: `kalshi:${market}`,
    bestBid: bid,
    bestAsk: ask,
    lastPrice: null,
    timestamp: "t",
  });
  const candle = (at: number, open: number, high: number, low: number, close: number, volume: number) => ({
    timestamp: iso(at),
    open,
    high,
    low,
    close,
    volume,
  });

  describe("from the live feed", () => {
    it("returns 1-minute candles of the quote price in ascending time, with meta", async () => {
      emit(T0 + 10 * SEC, quote("LIVE", 400_000, 440_000));
      emit(T0 + 20 * SEC, trade("LIVE", 450_000, 10)); // the mid stays 0.42; 10 contracts
      emit(T0 + 90 * SEC, quote("LIVE", 500_000, 540_000));
      clock.set(T0 + 2 * MIN + 10 * SEC);
      const calls = kalshi.calls.length;
      const body = await history("market_id=kalshi:LIVE&interval=1m&limit=3");
      expect(body).toEqual({
        success: true,
        data: [
          candle(T0, 0.42, 0.42, 0.42, 0.42, 10),
          candle(T0 + MIN, 0.42, 0.52, 0.42, 0.52, 0),
          // The period under way, with no update yet: the previous close.
          candle(T0 + 2 * MIN, 0.52, 0.52, 0.52, 0.52, 0),
        ],
        meta: {
          market_id: "kalshi:LIVE",
          interval: "1m",
          start: iso(T0),
          end: iso(T0 + 3 * MIN),
          coverage: {
            from: iso(T0),
            to: iso(T0 + 3 * MIN),
            resolution: "1m",
            source: "crossbook",
            complete: true,
            reason: null,
          },
        },
      });
      // Local history covers the range: the venue was not asked.
      expect(kalshi.calls.length).toBe(calls);
      // Written to the store, and with more updates in memory on top, the candles read the same.
      await t.services.candles.flush();
      expect(await history("market_id=kalshi:LIVE&interval=1m&limit=3")).toEqual(body);
      emit(T0 + 2 * MIN + 20 * SEC, trade("LIVE", 520_000, 2));
      const after = await history("market_id=kalshi:LIVE&interval=1m&limit=3");
      expect(after.data.slice(0, 2)).toEqual(body.data.slice(0, 2));
      expect(after.data[2]).toEqual(candle(T0 + 2 * MIN, 0.52, 0.52, 0.52, 0.52, 2));
      expect((await history("market_id=kalshi:LIVE&interval=1h&limit=1")).data[0]?.volume).toBe(12);
    });

    it("repeats the previous close with volume 0 where nothing happened, and makes up nothing before", async () => {
      emit(T0 + 10 * SEC, trade("GAPS", 400_000, 1));
      emit(T0 + 3 * MIN + 5 * SEC, trade("GAPS", 450_000, 2));
      clock.set(T0 + 3 * MIN + 30 * SEC);
      const body = await history(
        `market_id=kalshi:GAPS&interval=1m&start=${iso(T0 - 2 * MIN)}&end=${iso(T0 + 5 * MIN)}`,
      );
      expect(body.data).toEqual([
        candle(T0, 0.4, 0.4, 0.4, 0.4, 1),
        candle(T0 + MIN, 0.4, 0.4, 0.4, 0.4, 0),
        candle(T0 + 2 * MIN, 0.4, 0.4, 0.4, 0.4, 0),
        candle(T0 + 3 * MIN, 0.4, 0.45, 0.4, 0.45, 2),
        // 12:04 has not begun: nothing is made up for the future either.
      ]);
      expect(body.meta).toMatchObject({ start: iso(T0 - 2 * MIN), end: iso(T0 + 5 * MIN) });
    });

    it("rolls the same updates up to every larger interval", async () => {
      const whole = { open: 0.4, high: 0.45, low: 0.4, close: 0.45, volume: 3 };
      for (const [interval, start] of [
        ["5m", T0],
        ["15m", T0],
        ["1h", T0],
        ["4h", T0],
        ["1d", Date.UTC(2026, 10, 22)],
        ["1w", Date.UTC(2026, 10, 16)],
      ] as const) {
        const body = await history(`market_id=kalshi:GAPS&interval=${interval}&limit=1`);
        expect(body.data, interval).toEqual([{ timestamp: iso(start), ...whole }]);
      }
    });
  });

  describe("limit, start and end", () => {
    beforeAll(() => {
      // One trade a minute from 12:00 to 12:09 at 0.30, 0.31, …, i + 1 contracts.
      for (let i = 0; i < 10; i++) emit(T0 + i * MIN + 30 * SEC, trade("PAGE", 300_000 + i * 10_000, i + 1));
      clock.set(T0 + 10 * MIN + 30 * SEC);
    });
    const closes = (body: Awaited<ReturnType<typeof history>>) => body.data.map((c) => c.close);

    it("with start and end, returns the first `limit` periods and says where the next page starts", async () => {
      const first = await history(
        `market_id=kalshi:PAGE&interval=1m&start=${iso(T0)}&end=${iso(T0 + 10 * MIN)}&limit=4`,
      );
      expect(closes(first)).toEqual([0.3, 0.31, 0.32, 0.33]);
      expect(first.meta).toMatchObject({ start: iso(T0), end: iso(T0 + 4 * MIN) });
      const second = await history(
        `market_id=kalshi:PAGE&interval=1m&start=${first.meta.end}&end=${iso(T0 + 10 * MIN)}&limit=4`,
      );
      expect(closes(second)).toEqual([0.34, 0.35, 0.36, 0.37]);
      const third = await history(
        `market_id=kalshi:PAGE&interval=1m&start=${second.meta.end}&end=${iso(T0 + 10 * MIN)}&limit=4`,
      );
      expect(closes(third)).toEqual([0.38, 0.39]);
      expect(third.meta.end).toBe(iso(T0 + 10 * MIN));
    });

    it("with start only, runs forward from it up to the period under way", async () => {
      const body = await history(`market_id=kalshi:PAGE&interval=1m&start=${iso(T0 + 7 * MIN)}`);
      expect(closes(body)).toEqual([0.37, 0.38, 0.39, 0.39]);
      expect(body.meta).toMatchObject({ start: iso(T0 + 7 * MIN), end: iso(T0 + 11 * MIN) });
    });

    it("starts at the first period that begins at or after `start`", async () => {
      const body = await history(
        `market_id=kalshi:PAGE&interval=1m&start=${iso(T0 + 4 * MIN + 30 * SEC)}&limit=2`,
      );
      expect(body.data.map((c) => c.timestamp)).toEqual([iso(T0 + 5 * MIN), iso(T0 + 6 * MIN)]);
    });

    it("with end only, returns the last `limit` periods before it", async () => {
      const body = await history(`market_id=kalshi:PAGE&interval=1m&end=${iso(T0 + 5 * MIN)}&limit=3`);
      expect(closes(body)).toEqual([0.32, 0.33, 0.34]);
      expect(body.meta).toMatchObject({ start: iso(T0 + 2 * MIN), end: iso(T0 + 5 * MIN) });
    });

    it("with neither, returns the last `limit` periods through the one under way", async () => {
      const body = await history("market_id=kalshi:PAGE&interval=1m&limit=2");
      expect(body.data.map((c) => [c.timestamp, c.close, c.volume])).toEqual([
        [iso(T0 + 9 * MIN), 0.39, 10],
        [iso(T0 + 10 * MIN), 0.39, 0],
      ]);
    });

    it("defaults to 1h candles and a limit of 100", async () => {
      const body = await history("market_id=kalshi:PAGE");
      expect(body.meta).toEqual({
        market_id: "kalshi:PAGE",
        interval: "1h",
        start: iso(T0 - 99 * HOUR),
        end: iso(T0 + HOUR),
        // The venue has nothing before crossbook's own first price: the response says so.
        coverage: {
          from: iso(T0),
          to: iso(T0 + HOUR),
          resolution: "1h",
          source: "crossbook",
          complete: false,
          reason: "no_venue_data",
        },
      });
      expect(body.data.at(-1)).toEqual(candle(T0, 0.3, 0.39, 0.3, 0.39, 55));
    });
  });

  describe("errors", () => {
    const fields = async (query: string) =>
      expectError(await get(query), 400, "VALIDATION_ERROR").details?.fields;

    it("names a bad interval and lists the good ones", async () => {
      expect(await fields("market_id=kalshi:LIVE&interval=2m")).toEqual({
        "query.interval": "must be one of: 1m, 5m, 15m, 1h, 4h, 1d, 1w",
      });
    });

    it("refuses a limit outside 1 to 1000", async () => {
      for (const limit of ["0", "1001", "ten"]) {
        expect(Object.keys((await fields(`market_id=kalshi:LIVE&limit=${limit}`)) ?? {}), limit).toEqual([
          "query.limit",
        ]);
      }
    });

    it("refuses timestamps that are not ISO 8601 or not real dates", async () => {
      for (const bad of ["yesterday", "2026-02-30", "2026-11-22T25:00:00Z", "1795348800"]) {
        expect(Object.keys((await fields(`market_id=kalshi:LIVE&start=${bad}`)) ?? {}), bad).toEqual([
          "query.start",
        ]);
      }
      // A date-time without a zone is ambiguous.
      expect(Object.keys((await fields("market_id=kalshi:LIVE&end=2026-11-22T12:00:00")) ?? {})).toEqual([
        "query.end",
      ]);
      // Offsets and plain dates are fine.
      await history("market_id=kalshi:LIVE&start=2026-11-22T13:00:00%2B01:00&end=2026-11-23");
    });

    it("refuses a range that ends where or before it starts", async () => {
      for (const end of [iso(T0), iso(T0 - MIN)]) {
        expect(await fields(`market_id=kalshi:LIVE&start=${iso(T0)}&end=${end}`)).toEqual({
          "query.end": "must be later than start",
        });
      }
    });

    it("requires market_id and refuses unknown parameters", async () => {
      expect(await fields("interval=1m")).toEqual({ "query.market_id": "is required" });
      expect(await fields("market_id=kalshi:LIVE&from=2026-11-22")).toEqual({
        "query.from": "is not an accepted field",
      });
    });

    it("answers 404 MARKET_NOT_FOUND for a market it does not know", async () => {
      const error = expectError(await get("market_id=kalshi:NOPE&interval=1m"), 404, "MARKET_NOT_FOUND");
      expect(error.details).toEqual({ market_id: "kalshi:NOPE" });
    });

    it("needs a key", async () => {
      const response = await t.app.inject({ method: "GET", url: "/v1/prices/history?market_id=kalshi:LIVE" });
      expectError(response, 401, "UNAUTHORIZED");
    });
  });

  describe("backfill from the venue", () => {
    it("fetches the venue's history once, and again only for an earlier start", async () => {
      clock.set(T0 + 10 * MIN);
      const before = kalshi.calls.length;
      const body = await history("market_id=kalshi:BACKFILL&interval=1h&limit=24");
      const from = T0 - 23 * HOUR;
      expect(kalshi.calls.slice(before)).toEqual([
        { marketId: "kalshi:BACKFILL", interval: "1h", start: iso(from), end: iso(T0) },
      ]);
      const venue = venueCandles({ interval: "1h", start: iso(from), end: iso(T0) }, HOUR);
      expect(body.data).toHaveLength(24);
      expect(body.data.slice(0, 23)).toEqual(
        venue.map((c) => ({
          timestamp: c.timestamp,
          open: c.open / 1e6,
          high: c.high / 1e6,
          low: c.low / 1e6,
          close: c.close / 1e6,
          volume: 5,
        })),
      );
      // The hour under way is not backfilled: without live updates it repeats the last close.
      const lastClose = venue.at(-1)!.close / 1e6;
      expect(body.data[23]).toEqual(candle(T0, lastClose, lastClose, lastClose, lastClose, 0));

      // Asked again, and for a part of it: the venue is not asked again.
      await history("market_id=kalshi:BACKFILL&interval=1h&limit=24");
      await history(`market_id=kalshi:BACKFILL&interval=1h&start=${iso(T0 - 5 * HOUR)}`);
      expect(kalshi.calls.length).toBe(before + 1);

      // An earlier range fetches just that range.
      const earlier = T0 - 40 * HOUR;
      const older = await history(`market_id=kalshi:BACKFILL&interval=1h&start=${iso(earlier)}&limit=5`);
      expect(kalshi.calls.slice(before + 1)).toEqual([
        { marketId: "kalshi:BACKFILL", interval: "1h", start: iso(earlier), end: iso(earlier + 5 * HOUR) },
      ]);
      expect(older.data.map((c) => c.timestamp)).toEqual([0, 1, 2, 3, 4].map((i) => iso(earlier + i * HOUR)));
      expect(older.meta.coverage).toEqual({
        from: iso(earlier),
        to: iso(earlier + 5 * HOUR),
        resolution: "1h",
        source: "venue",
        complete: true,
        reason: null,
      });
      // What lies between the two ranges is fetched when it is asked for, and only that.
      await history(`market_id=kalshi:BACKFILL&interval=1h&start=${iso(earlier)}&end=${iso(from + HOUR)}`);
      expect(kalshi.calls.slice(before + 2)).toEqual([
        { marketId: "kalshi:BACKFILL", interval: "1h", start: iso(earlier + 5 * HOUR), end: iso(from) },
      ]);
    });

    it("rolls backfilled candles up to 4h without asking the venue again", async () => {
      const before = kalshi.calls.length;
      const body = await history(
        `market_id=kalshi:BACKFILL&interval=4h&start=${iso(T0 - 24 * HOUR)}&end=${iso(T0)}`,
      );
      expect(kalshi.calls.length).toBe(before);
      const hours = venueCandles({ interval: "1h", start: iso(T0 - 24 * HOUR), end: iso(T0) }, HOUR);
      expect(body.data).toHaveLength(6);
      for (let i = 0; i < 6; i++) {
        const part = hours.slice(i * 4, i * 4 + 4);
        expect(body.data[i]).toEqual({
          timestamp: part[0]!.timestamp,
          open: part[0]!.open / 1e6,
          high: Math.max(...part.map((c) => c.high)) / 1e6,
          low: Math.min(...part.map((c) => c.low)) / 1e6,
          close: part[3]!.close / 1e6,
          volume: 20,
        });
      }
    });

    it("fetches only what lies before the candles built live, and keeps those", async () => {
      emit(T0 - 90 * MIN, trade("MIXED", 900_000, 3)); // 10:30, into the 10:00 hour
      clock.set(T0 + 10 * MIN);
      const before = kalshi.calls.length;
      const body = await history("market_id=kalshi:MIXED&interval=1h&limit=5");
      expect(kalshi.calls.slice(before)).toEqual([
        { marketId: "kalshi:MIXED", interval: "1h", start: iso(T0 - 4 * HOUR), end: iso(T0 - 2 * HOUR) },
      ]);
      const venue = venueCandles({ interval: "1h", start: iso(T0 - 4 * HOUR), end: iso(T0) }, HOUR);
      expect(body.data.map((c) => [c.timestamp, c.open, c.close, c.volume])).toEqual([
        [venue[0]!.timestamp, venue[0]!.open / 1e6, venue[0]!.close / 1e6, 5],
        [venue[1]!.timestamp, venue[1]!.open / 1e6, venue[1]!.close / 1e6, 5],
        [iso(T0 - 2 * HOUR), 0.9, 0.9, 3],
        // A quiet hour after live building began repeats the close.
        [iso(T0 - HOUR), 0.9, 0.9, 0],
        [iso(T0), 0.9, 0.9, 0],
      ]);
      // The 4h candle holds the venue's hours and the live one.
      const fourHours = await history(
        `market_id=kalshi:MIXED&interval=4h&start=${iso(T0 - 4 * HOUR)}&limit=1`,
      );
      expect(fourHours.data).toEqual([
        {
          timestamp: iso(T0 - 4 * HOUR),
          open: venue[0]!.open / 1e6,
          high: 0.9,
          low: Math.min(venue[0]!.low, venue[1]!.low) / 1e6,
          close: 0.9,
          volume: 13,
        },
      ]);
    });

    it("turns Polymarket-style price points into candles without volume", async () => {
      polymarket.state.history = (_id, options) => {
        const points: PricePoint[] = [];
        for (let at = Date.parse(options.start); at < Date.parse(options.end); at += 30 * MIN) {
          points.push({ timestamp: iso(at), price: at % HOUR === 0 ? 500_000 : 600_000 });
        }
        return points;
      };
      clock.set(T0 + 10 * MIN);
      const body = await history("market_id=polymarket:0xpoints&interval=1h&limit=3");
      expect(polymarket.calls.at(-1)).toMatchObject({
        interval: "1h",
        start: iso(T0 - 2 * HOUR),
        end: iso(T0),
      });
      expect(body.data).toEqual([
        candle(T0 - 2 * HOUR, 0.5, 0.6, 0.5, 0.6, 0),
        candle(T0 - HOUR, 0.5, 0.6, 0.5, 0.6, 0),
        candle(T0, 0.6, 0.6, 0.6, 0.6, 0),
      ]);
    });

    it("answers 503 VENUE_UNAVAILABLE while the venue is down and nothing is stored, then recovers", async () => {
      clock.set(T0 + 10 * MIN);
      try {
        kalshi.venue.failWith = new VenueError("kalshi", "unavailable", "kalshi is down", { status: 503 });
        const error = expectError(
          await get("market_id=kalshi:DOWN&interval=1h&limit=3"),
          503,
          "VENUE_UNAVAILABLE",
        );
        expect(error.details).toEqual({ venue: "kalshi", reason: "unavailable" });
        kalshi.venue.failWith = new VenueError("kalshi", "rate_limited", "slow down", {
          retryAfterMs: 30_000,
        });
        const limited = await get("market_id=kalshi:DOWN&interval=1h&limit=3");
        expectError(limited, 503, "VENUE_UNAVAILABLE");
        expect(limited.headers["retry-after"]).toBe("30");
      } finally {
        kalshi.venue.failWith = undefined;
      }
      const body = await history("market_id=kalshi:DOWN&interval=1h&limit=3");
      expect(body.data.map((c) => c.volume)).toEqual([5, 5, 0]);
    });

    it("serves the candles it has while the venue is down", async () => {
      emit(T0 + 5 * MIN, trade("DOWNLOCAL", 700_000, 4));
      clock.set(T0 + 10 * MIN);
      try {
        kalshi.venue.failWith = new VenueError("kalshi", "unavailable", "kalshi is down", { status: 503 });
        const body = await history("market_id=kalshi:DOWNLOCAL&interval=1h&limit=3");
        expect(body.data).toEqual([candle(T0, 0.7, 0.7, 0.7, 0.7, 4)]);
        // …and says that the venue failed, not that there is nothing more.
        expect(body.meta.coverage).toEqual({
          from: iso(T0),
          to: iso(T0 + HOUR),
          resolution: "1h",
          source: "crossbook",
          complete: false,
          reason: "venue_unavailable",
        });
      } finally {
        kalshi.venue.failWith = undefined;
      }
    });

    it("covers a past range of a live market, however far back, and fetches only that range", async () => {
      emit(T0 + 2 * MIN, trade("PAST", 610_000, 1)); // crossbook builds today's candles live
      clock.set(T0 + 10 * MIN);
      const before = kalshi.calls.length;
      const start = T0 - 30 * DAY;
      const body = await history(
        `market_id=kalshi:PAST&interval=1m&start=${iso(start)}&end=${iso(start + 60 * MIN)}`,
      );
      expect(kalshi.calls.slice(before)).toEqual([
        { marketId: "kalshi:PAST", interval: "1m", start: iso(start), end: iso(start + 60 * MIN) },
      ]);
      const venue = venueCandles({ interval: "1m", start: iso(start), end: iso(start + 60 * MIN) }, MIN);
      expect(body.data).toHaveLength(60);
      expect(body.data.map((c) => c.close)).toEqual(venue.map((c) => c.close / 1e6));
      expect(body.meta.coverage).toEqual({
        from: iso(start),
        to: iso(start + 60 * MIN),
        resolution: "1m",
        source: "venue",
        complete: true,
        reason: null,
      });
      // Today's live candle is untouched, and the range is not fetched again.
      const today = await history(`market_id=kalshi:PAST&interval=1m&start=${iso(T0 + 2 * MIN)}&limit=1`);
      expect(today.data).toEqual([candle(T0 + 2 * MIN, 0.61, 0.61, 0.61, 0.61, 1)]);
      await history(`market_id=kalshi:PAST&interval=5m&start=${iso(start)}&end=${iso(start + 60 * MIN)}`);
      expect(kalshi.calls.length).toBe(before + 1);
    });

    it("says so when the venue has no history for the range, instead of an empty success", async () => {
      clock.set(T0 + 10 * MIN);
      const body = await history("market_id=kalshi:EMPTY&interval=1h&limit=3");
      expect(body.data).toEqual([]);
      expect(body.meta.coverage).toEqual({
        from: null,
        to: null,
        resolution: "1h",
        source: "none",
        complete: false,
        reason: "no_venue_data",
      });
    });

    it("says the range begins before the market opened", async () => {
      clock.set(T0 + 10 * MIN);
      const body = await history("market_id=kalshi:YOUNG&interval=1h&limit=5");
      expect(body.data.map((c) => c.timestamp)).toEqual([iso(T0 - 2 * HOUR), iso(T0 - HOUR), iso(T0)]);
      expect(body.meta.coverage).toMatchObject({
        from: iso(T0 - 2 * HOUR),
        source: "venue",
        complete: false,
        reason: "before_market_open",
      });
    });

    it("marks history the venue served coarser than the interval, also once stored", async () => {
      polymarket.state.history = (_id, options) => {
        // Closed-market style: one point every 12 hours, and the adapter says so.
        const points: PricePoint[] = [];
        const step = 12 * HOUR;
        for (
          let at = Math.ceil(Date.parse(options.start) / step) * step;
          at < Date.parse(options.end);
          at += step
        )
          points.push({ timestamp: iso(at), price: 300_000 });
        return { series: points, coarserMinutes: 720 };
      };
      clock.set(T0 + 10 * MIN);
      const query = `market_id=polymarket:0xcoarse&interval=1h&start=${iso(T0 - 24 * HOUR)}&end=${iso(T0)}`;
      const before = polymarket.calls.length;
      for (let i = 0; i < 2; i++) {
        const body = await history(query);
        expect(body.data).toHaveLength(24);
        expect(body.data[0]).toEqual(candle(T0 - 24 * HOUR, 0.3, 0.3, 0.3, 0.3, 0));
        expect(body.meta.coverage).toEqual({
          from: iso(T0 - 24 * HOUR),
          to: iso(T0),
          resolution: "12h",
          source: "venue",
          complete: false,
          reason: "coarser_at_venue",
        });
      }
      expect(polymarket.calls.length).toBe(before + 1);
    });
  });
});
