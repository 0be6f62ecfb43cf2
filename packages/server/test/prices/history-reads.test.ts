/**
 * The history service's kept store reads (read-memo.ts): a repeated request reads nothing from the
 * store and asks the venue nothing; this process's own candle writes and backfills are seen at once;
 * another instance's writes within the read TTL; a failed read is not kept.
 */
import type { KyselyPlugin } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertMarket } from "../../src/catalog/repo";
import { marketRow } from "../../src/catalog/service";
import { ManualClock } from "../../src/infra/clock";
import type { Db } from "../../src/infra/db/store";
import { silentLogger } from "../../src/infra/log";
import { CandleBuilder } from "../../src/prices/candles";
import * as repo from "../../src/prices/candles-repo";
import { PriceHistoryService, withSpan } from "../../src/prices/history";
import { ReadMemo } from "../../src/prices/read-memo";
import type { Candle, VenueId } from "../../src/venues/model";
import type { MarketDataVenue, Venue } from "../../src/venues/venue";
import { STORE_BACKENDS } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";
import { openTestStore, type TestStore } from "../support/store";

const SEC = 1_000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
/** Sunday 2026-11-22 12:00 UTC. */
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

/** A Kysely plugin that counts the statements run through it. */
function counting(): KyselyPlugin & { count: number } {
  const plugin = {
    count: 0,
    transformQuery(args: { node: unknown }) {
      plugin.count++;
      return args.node as never;
    },
    async transformResult(args: { result: unknown }) {
      return args.result as never;
    },
  };
  return plugin;
}

describe("ReadMemo", () => {
  it("keeps a value for its revision and TTL, and drops failures and the oldest past its bound", async () => {
    const clock = new ManualClock(T0);
    const memo = new ReadMemo(clock, 1_000, 2);
    let loads = 0;
    const load = async () => ++loads;
    expect(await memo.read("a", 0, load)).toBe(1);
    expect(await memo.read("a", 0, load)).toBe(1);
    expect(await memo.read("a", 1, load)).toBe(2); // a newer revision reads again
    clock.advance(1_000);
    expect(await memo.read("a", 1, load)).toBe(3); // past the TTL
    await expect(memo.read("b", 0, async () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await memo.read("b", 0, load)).toBe(4); // the failure was not kept
    await memo.read("c", 0, load);
    expect(memo.size).toBe(2);
    expect(await memo.read("a", 1, load)).toBe(6); // "a", the oldest, went when "c" came
  });

  it("keeps nothing with a TTL of 0", async () => {
    const memo = new ReadMemo(new ManualClock(T0), 0);
    let loads = 0;
    await memo.read("a", 0, async () => ++loads);
    await memo.read("a", 0, async () => ++loads);
    expect(loads).toBe(2);
    expect(memo.size).toBe(0);
  });
});

describe("withSpan", () => {
  it("adds a span to sorted ranges, merging the ones it overlaps or touches", () => {
    expect(withSpan([], [2, 3])).toEqual([[2, 3]]);
    expect(
      withSpan(
        [
          [0, 1],
          [5, 6],
          [8, 9],
        ],
        [2, 3],
      ),
    ).toEqual([
      [0, 1],
      [2, 3],
      [5, 6],
      [8, 9],
    ]);
    expect(
      withSpan(
        [
          [0, 2],
          [5, 6],
          [8, 9],
        ],
        [2, 5],
      ),
    ).toEqual([
      [0, 6],
      [8, 9],
    ]);
  });
});

describe.each(STORE_BACKENDS)("price history's kept store reads on %s", (backend) => {
  let t: TestStore;
  let db: Db;
  const statements = counting();
  const clock = new ManualClock(T0 + 10 * MIN);
  const venue = new TestVenue("kalshi");
  const venueCalls: string[] = [];
  let candles: CandleBuilder;
  let history: PriceHistoryService;

  beforeAll(async () => {
    t = await openTestStore(backend);
    db = t.store.db.withPlugin(statements) as Db;
    for (const key of ["KEPT", "OTHER", "FLUSHED"]) {
      await upsertMarket(t.store.db, marketRow(testMarket("kalshi", key), iso(T0)));
    }
    (venue as Venue).getPriceHistory = async (marketId, options) => {
      venueCalls.push(`${marketId} ${options.start} ${options.end}`);
      const out: Candle[] = [];
      for (let at = Date.parse(options.start); at < Date.parse(options.end); at += HOUR) {
        out.push({
          timestamp: iso(at),
          open: 400_000,
          high: 420_000,
          low: 390_000,
          close: 410_000,
          volume: 0,
        });
      }
      return out;
    };
    candles = new CandleBuilder(db, silentLogger);
    history = new PriceHistoryService(
      db,
      new Map<VenueId, MarketDataVenue>([["kalshi", venue]]),
      candles,
      clock,
      silentLogger,
    );
  });
  afterAll(() => t.close());

  const lastDay = (marketId: string) => history.history({ marketId, interval: "1h", limit: 24 });

  it("answers a repeated request without reading the store or asking the venue", async () => {
    const first = await lastDay("kalshi:KEPT");
    expect(first.candles).toHaveLength(24);
    expect(venueCalls).toEqual([`kalshi:KEPT ${iso(T0 - 23 * HOUR)} ${iso(T0)}`]);
    const before = statements.count;
    const again = await lastDay("kalshi:KEPT");
    expect(statements.count).toBe(before);
    expect(again).toEqual(first);
    expect(venueCalls).toHaveLength(1);
  });

  it("sees its own candle writes at once", async () => {
    await lastDay("kalshi:FLUSHED");
    candles.record("kalshi:FLUSHED", 600_000, 2_000_000, T0 + 11 * MIN);
    // Held in memory: overlaid on the kept rows.
    expect((await lastDay("kalshi:FLUSHED")).candles.at(-1)).toMatchObject({
      close: 600_000,
      volume: 2_000_000,
    });
    await candles.flush();
    // Written and no longer held: the kept rows are stale and read again.
    const before = statements.count;
    expect((await lastDay("kalshi:FLUSHED")).candles.at(-1)).toMatchObject({
      close: 600_000,
      volume: 2_000_000,
    });
    expect(statements.count).toBeGreaterThan(before);
  });

  it("sees another instance's writes once the read TTL has passed", async () => {
    const first = await lastDay("kalshi:OTHER");
    expect(first.candles.at(-1)?.volume).toBe(0);
    // Another instance writes the hour under way straight to the store.
    await repo.mergeCandles(t.store.db, [
      {
        market_id: "kalshi:OTHER",
        interval: "1h",
        start: iso(T0),
        open: 500_000,
        high: 500_000,
        low: 500_000,
        close: 500_000,
        volume: 3_000_000,
        first_at: iso(T0 + 5 * MIN),
        last_at: iso(T0 + 5 * MIN),
      },
    ]);
    expect((await lastDay("kalshi:OTHER")).candles.at(-1)?.volume).toBe(0);
    clock.advance(1_000);
    expect((await lastDay("kalshi:OTHER")).candles.at(-1)).toMatchObject({
      close: 500_000,
      volume: 3_000_000,
    });
  });

  it("asks the venue for a new hour once it is over, and only for that hour", async () => {
    const before = venueCalls.length;
    clock.set(T0 + HOUR + 10 * MIN);
    await lastDay("kalshi:KEPT");
    await lastDay("kalshi:KEPT");
    // The 12:00 hour is over and nobody built it live: it is fetched, once.
    expect(venueCalls.slice(before)).toEqual([`kalshi:KEPT ${iso(T0)} ${iso(T0 + HOUR)}`]);
  });
});
