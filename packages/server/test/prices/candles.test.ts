/**
 * Candle building with an injected clock: OHLC of the quote price and trade volume per minute,
 * the roll-ups, UTC alignment, batched writes, and continuity across a restart and across two
 * instances fed the same updates, on every store.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/infra/clock";
import type { Store } from "../../src/infra/db/store";
import { silentLogger } from "../../src/infra/log";
import {
  bucketStart,
  CandleBuilder,
  type CandleState,
  type Interval,
  mergeCandles,
} from "../../src/prices/candles";
import * as repo from "../../src/prices/candles-repo";
import { QuoteBook } from "../../src/prices/quotes";
import type { FeedEvent } from "../../src/venues/venue";
import { STORE_BACKENDS } from "../support/backends";
import { openTestStore, type TestStore } from "../support/store";

const SEC = 1_000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** Sunday 2026-11-22 12:00 UTC. */
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
describe("periods", () => {
  const at = (iso: string) => Date.parse(iso);
  const start = (iso: string, interval: Interval) => new Date(bucketStart(at(iso), interval)).toISOString();

  it("aligns every interval in UTC", () => {
    expect(start("2026-11-22T13:37:42.123Z", "1m")).toBe("2026-11-22T13:37:00.000Z");
    expect(start("2026-11-22T13:37:42.123Z", "5m")).toBe("2026-11-22T13:35:00.000Z");
    expect(start("2026-11-22T13:37:42.123Z", "15m")).toBe("2026-11-22T13:30:00.000Z");
    expect(start("2026-11-22T13:37:42.123Z", "1h")).toBe("2026-11-22T13:00:00.000Z");
    expect(start("2026-11-22T13:37:42.123Z", "4h")).toBe("2026-11-22T12:00:00.000Z");
    expect(start("2026-11-22T03:59:59.999Z", "4h")).toBe("2026-11-22T00:00:00.000Z");
    expect(start("2026-11-22T23:59:59.999Z", "1d")).toBe("2026-11-22T00:00:00.000Z");
  });

  it("starts weeks on Monday 00:00 UTC", () => {
    // Sunday the 22nd belongs to the week of Monday the 16th; Monday the 23rd starts the next.
    expect(start("2026-11-22T23:59:59.999Z", "1w")).toBe("2026-11-16T00:00:00.000Z");
    expect(start("2026-11-23T00:00:00.000Z", "1w")).toBe("2026-11-23T00:00:00.000Z");
    expect(start("2026-11-16T00:00:00.000Z", "1w")).toBe("2026-11-16T00:00:00.000Z");
    for (let t = Date.UTC(2025, 0, 1); t < Date.UTC(2027, 0, 1); t += 37 * HOUR + 11 * MIN) {
      const week = bucketStart(t, "1w");
      expect(new Date(week).getUTCDay()).toBe(1);
      expect(t - week).toBeGreaterThanOrEqual(0);
      expect(t - week).toBeLessThan(7 * DAY);
    }
  });
});

describe("mergeCandles", () => {
  const c = (open: number, close: number, volume: number, firstAt: number, lastAt: number): CandleState => ({
    open,
    high: Math.max(open, close),
    low: Math.min(open, close),
    close,
    volume,
    firstAt,
    lastAt,
  });

  it("adds the volumes of views that do not overlap in time", () => {
    const before = c(40, 50, 10, T0, T0 + 20 * SEC);
    const after = c(30, 35, 7, T0 + 30 * SEC, T0 + 50 * SEC);
    expect(mergeCandles(before, after)).toEqual({
      open: 40,
      high: 50,
      low: 30,
      close: 35,
      volume: 17,
      firstAt: T0,
      lastAt: T0 + 50 * SEC,
    });
    // Either order: the earlier view gives the open, the later the close.
    expect(mergeCandles(after, before)).toEqual(mergeCandles(before, after));
  });

  it("keeps the wider of two overlapping views of the same feed, so rewriting changes nothing", () => {
    const partial = c(40, 45, 10, T0, T0 + 20 * SEC);
    const whole = c(40, 35, 12, T0, T0 + 50 * SEC);
    expect(mergeCandles(partial, whole)).toEqual({ ...whole, high: 45 });
    expect(mergeCandles(whole, whole)).toEqual(whole);
  });
});

describe.each(STORE_BACKENDS)("candle building on %s", (backend) => {
  let store: Store;
  let opened: TestStore;
  beforeAll(async () => {
    opened = await openTestStore(backend);
    store = opened.store;
  });
  afterAll(() => opened.close());

  let marketCounter = 0;
  let market: string;
  let clock: ManualClock;
  let quotes: QuoteBook;
  beforeEach(() => {
    market = `kalshi:CANDLE-${++marketCounter}`;
    clock = new ManualClock(T0);
    quotes = new QuoteBook();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const book = (bid: number, ask: number): FeedEvent => ({
    kind: "book",
    book: {
      marketId: market,
      yes: { bids: [{ price: bid, size: 1 }], asks: [{ price: ask, size: 1 }] },
      no: { bids: [], asks: [] },
      timestamp: "t",
      sequence: null,
    },
  });
  const trade = (price: number, contracts: number): FeedEvent => ({
    kind: "trade",
    trade: {
      marketId: market,
      outcome: "yes",
      price,
      size: contracts * 1_000_000,
      takerSide: "buy",
      timestamp: "t",
      venueTradeId: null,
    },
  });
  /** Feeds events through the quote math at a clock time, as LiveMarkets does. */
  const feed = (builders: CandleBuilder[], at: number, ...events: FeedEvent[]) => {
    clock.set(at);
    for (const event of events) {
      const quote = quotes.apply(event, clock.now());
      if (quote) for (const builder of builders) builder.onQuote(quote, event);
    }
  };
  const stored = async (interval: Interval, start: number) => {
    const rows = await repo.listCandles(
      store.db,
      market,
      interval,
      new Date(start).toISOString(),
      new Date(start + 1).toISOString(),
    );
    if (!rows[0]) return undefined;
    const { open, high, low, close, volume } = rows[0];
    return { open, high, low, close, volume };
  };
  const count = async () =>
    Number(
      (
        await store.db
          .selectFrom("candles")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("market_id", "=", market)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it("builds 1m OHLC from the quote price, volume from trades, and every roll-up from the same updates", async () => {
    const builder = new CandleBuilder(store.db, silentLogger);
    feed([builder], T0 + 10 * SEC, book(400_000, 440_000)); // 0.42
    feed([builder], T0 + 20 * SEC, trade(450_000, 10)); // mid unchanged, 10 contracts
    feed([builder], T0 + 30 * SEC, book(460_000, 500_000)); // 0.48
    feed([builder], T0 + 50 * SEC, book(380_000, 400_000)); // 0.39
    // Nothing in 12:01; 12:02 opens at the price in force, the 12:00 close.
    feed([builder], T0 + 2 * MIN + 5 * SEC, book(400_000, 420_000)); // 0.41
    await builder.flush();

    expect(await stored("1m", T0)).toEqual({
      open: 420_000,
      high: 480_000,
      low: 390_000,
      close: 390_000,
      volume: 10_000_000,
    });
    expect(await stored("1m", T0 + MIN)).toBeUndefined();
    expect(await stored("1m", T0 + 2 * MIN)).toEqual({
      open: 390_000,
      high: 410_000,
      low: 390_000,
      close: 410_000,
      volume: 0,
    });
    const whole = { open: 420_000, high: 480_000, low: 390_000, close: 410_000, volume: 10_000_000 };
    expect(await stored("5m", T0)).toEqual(whole);
    expect(await stored("15m", T0)).toEqual(whole);
    expect(await stored("1h", T0)).toEqual(whole);
    expect(await stored("4h", Date.UTC(2026, 10, 22, 12))).toEqual(whole);
    expect(await stored("1d", Date.UTC(2026, 10, 22))).toEqual(whole);
    expect(await stored("1w", Date.UTC(2026, 10, 16))).toEqual(whole);
  });

  it("starts new periods of each interval at their own boundaries", async () => {
    const builder = new CandleBuilder(store.db, silentLogger);
    feed([builder], T0 + 3 * HOUR + 59 * MIN, book(400_000, 420_000)); // 15:59, 0.41
    feed([builder], T0 + 4 * HOUR, book(500_000, 520_000)); // 16:00, 0.51: a new 4h period
    await builder.flush();
    expect(await stored("4h", T0)).toMatchObject({ open: 410_000, close: 410_000 });
    expect(await stored("4h", T0 + 4 * HOUR)).toMatchObject({ open: 410_000, high: 510_000, close: 510_000 });
    expect(await stored("1d", Date.UTC(2026, 10, 22))).toMatchObject({ open: 410_000, close: 510_000 });
  });

  it("writes nothing until a flush, then every changed candle in one transaction", async () => {
    const builder = new CandleBuilder(store.db, silentLogger);
    feed([builder], T0 + 10 * SEC, book(400_000, 440_000));
    feed([builder], T0 + MIN + 10 * SEC, book(410_000, 440_000));
    expect(await count()).toBe(0);
    const transactions = vi.spyOn(store.db, "transaction");
    // Two 1m candles and one each of the six roll-ups.
    expect(await builder.flush()).toBe(8);
    expect(transactions).toHaveBeenCalledTimes(1);
    transactions.mockRestore();
    expect(await count()).toBe(8);
    // Nothing changed: nothing written.
    expect(await builder.flush()).toBe(0);
    // One update changes the current candle of every interval, and only those.
    feed([builder], T0 + MIN + 20 * SEC, book(420_000, 440_000));
    expect(await builder.flush()).toBe(7);
    expect(await stored("1m", T0 + MIN)).toMatchObject({ close: 430_000 });
  });

  it("flushes on its timer and once more on stop", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const builder = new CandleBuilder(store.db, silentLogger, { flushIntervalMs: 5_000 });
    builder.start();
    feed([builder], T0 + 10 * SEC, book(400_000, 440_000));
    vi.advanceTimersByTime(5_000);
    // The timer's flush wrote everything, so the one queued behind it finds nothing left.
    expect(await builder.flush()).toBe(0);
    expect(await stored("1m", T0)).toMatchObject({ close: 420_000 });
    feed([builder], T0 + 20 * SEC, book(500_000, 540_000));
    await builder.stop();
    expect(await stored("1m", T0)).toMatchObject({ close: 520_000, high: 520_000 });
  });

  it("keeps the stored part of a period across a restart, without counting it twice", async () => {
    const before = new CandleBuilder(store.db, silentLogger);
    feed([before], T0 + 10 * SEC, trade(420_000, 10));
    feed([before], T0 + 20 * SEC, trade(500_000, 5));
    await before.stop();

    // A new process: no memory of the minute, a fresh quote book.
    quotes = new QuoteBook();
    const after = new CandleBuilder(store.db, silentLogger);
    feed([after], T0 + 40 * SEC, trade(300_000, 7));
    await after.flush();
    const expected = { open: 420_000, high: 500_000, low: 300_000, close: 300_000, volume: 22_000_000 };
    expect(await stored("1m", T0)).toEqual(expected);
    expect(await stored("1h", T0)).toEqual(expected);
    expect(await stored("1w", Date.UTC(2026, 10, 16))).toEqual(expected);

    // Later writes of the same period add only what is new.
    feed([after], T0 + 50 * SEC, trade(350_000, 1));
    await after.flush();
    await after.flush();
    feed([after], T0 + 55 * SEC, trade(360_000, 1));
    await after.stop();
    expect(await stored("1m", T0)).toEqual({ ...expected, close: 360_000, volume: 24_000_000 });
    expect(await stored("1d", Date.UTC(2026, 10, 22))).toEqual({
      ...expected,
      close: 360_000,
      volume: 24_000_000,
    });
  });

  it("gives the same candles when two instances build them from the same feed", async () => {
    const a = new CandleBuilder(store.db, silentLogger);
    const b = new CandleBuilder(store.db, silentLogger);
    feed([a, b], T0 + 10 * SEC, trade(420_000, 10));
    await a.flush();
    feed([a, b], T0 + 20 * SEC, trade(440_000, 5));
    await b.flush();
    await a.flush();
    feed([a, b], T0 + 30 * SEC, trade(410_000, 1));
    await a.flush();
    await b.flush();
    expect(await stored("1m", T0)).toEqual({
      open: 420_000,
      high: 440_000,
      low: 410_000,
      close: 410_000,
      volume: 16_000_000,
    });
  });

  it("shows candles not yet written through held()", () => {
    const builder = new CandleBuilder(store.db, silentLogger);
    feed([builder], T0 + 10 * SEC, trade(420_000, 2));
    feed([builder], T0 + MIN + 10 * SEC, trade(430_000, 3));
    expect(builder.held(market, "1m").map((c) => [c.start, c.close, c.volume])).toEqual([
      [T0, 420_000, 2_000_000],
      [T0 + MIN, 430_000, 3_000_000],
    ]);
    expect(builder.held(market, "1h").map((c) => c.volume)).toEqual([5_000_000]);
    expect(builder.held("kalshi:NOTHING", "1m")).toEqual([]);
  });

  describe("history roll-ups", () => {
    const minute = (start: number, open: number, close: number, contracts: number) => ({
      market_id: market,
      interval: "1m",
      start: new Date(start).toISOString(),
      open,
      high: Math.max(open, close),
      low: Math.min(open, close),
      close,
      volume: contracts * 1_000_000,
      first_at: new Date(start).toISOString(),
      last_at: new Date(start + MIN - 1).toISOString(),
    });
    const backfill = async () => {
      await repo.insertMissingCandles(store.db, [
        minute(T0, 300_000, 310_000, 1),
        minute(T0 + MIN, 310_000, 320_000, 1),
        minute(T0 + 2 * MIN, 320_000, 330_000, 1),
      ]);
    };

    it("fills the part of a period nobody watched into the candle being built, once", async () => {
      const builder = new CandleBuilder(store.db, silentLogger);
      feed([builder], T0 + 3 * MIN + 30 * SEC, trade(500_000, 2));
      await builder.flush();
      await backfill();
      await builder.rollUpHistory(market, "1m", T0, T0 + 3 * MIN);
      await builder.rollUpHistory(market, "1m", T0, T0 + 3 * MIN);
      feed([builder], T0 + 3 * MIN + 40 * SEC, trade(510_000, 1));
      await builder.flush();
      const expected = { open: 300_000, high: 510_000, low: 300_000, close: 510_000, volume: 6_000_000 };
      expect(await stored("5m", T0)).toEqual(expected);
      expect(await stored("15m", T0)).toEqual(expected);
      expect(builder.held(market, "5m")[0]).toMatchObject(expected);
      // Roll-ups reach only the larger intervals built from 1m; 1h has venue history of its own.
      expect(await stored("1h", T0)).toMatchObject({ open: 500_000, volume: 3_000_000 });
    });

    it("adds history to a stored period after a restart, once", async () => {
      const builder = new CandleBuilder(store.db, silentLogger);
      feed([builder], T0 + 3 * MIN + 30 * SEC, trade(500_000, 2));
      await builder.stop();
      await backfill();
      const restarted = new CandleBuilder(store.db, silentLogger);
      await restarted.rollUpHistory(market, "1m", T0, T0 + 3 * MIN);
      await restarted.rollUpHistory(market, "1m", T0, T0 + 3 * MIN);
      quotes = new QuoteBook();
      feed([restarted], T0 + 4 * MIN, trade(520_000, 1));
      await restarted.flush();
      expect(await stored("5m", T0)).toEqual({
        open: 300_000,
        high: 520_000,
        low: 300_000,
        close: 520_000,
        volume: 6_000_000,
      });
    });
  });
});
