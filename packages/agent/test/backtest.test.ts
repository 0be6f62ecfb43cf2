import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seededRandom } from "@crossbook/fakes/random";
import { afterAll, describe, expect, it, vi } from "vitest";
import {
  type BacktestOptions,
  type BacktestResult,
  backtest,
  brierScore,
  CandleTape,
  type FetchHistory,
  fileSource,
  historySource,
  kalshiFee,
  type MarketCandle,
  maxDrawdown,
  type Progress,
  polymarketFee,
  renderReport,
  type StrategyContext,
  saveCandles,
  sharpeRatio,
  totalReturn,
  winRate,
  writeReport,
} from "../src/backtest/index";
import { createProgress } from "../src/backtest/progress";

const K = "kalshi:TEST-26";
const P = "polymarket:0xabc";
const O = "other:X";
const T0 = Date.UTC(2026, 0, 1);
const H = 3_600_000;
const at = (hour: number) => new Date(T0 + hour * H).toISOString();

/** A 1h candle of `market` at hour `hour`: [open, high, low, close]. */
function candle(
  market: string,
  hour: number,
  ohlc: [number, number, number, number],
  volume = 100,
): MarketCandle {
  const [open, high, low, close] = ohlc;
  return { market_id: market, timestamp: at(hour), open, high, low, close, volume };
}

type Step = (ctx: StrategyContext, step: number) => void;

/** Runs a strategy whose onCandle calls `steps[n]` at step n; `start` runs in onStart. */
function run(
  candles: MarketCandle[],
  steps: Record<number, Step>,
  extra: Partial<BacktestOptions> & { start?: (ctx: StrategyContext) => void } = {},
): Promise<BacktestResult> {
  let n = 0;
  const { start, ...rest } = extra;
  const markets = [...new Set(candles.map((c) => c.market_id))];
  return backtest({
    strategy: {
      onStart: start,
      onCandle(ctx) {
        steps[n]?.(ctx, n);
        n++;
      },
    },
    markets: markets.length ? markets : [K],
    interval: "1h",
    from: at(0),
    to: at(100),
    initialCash: 1000,
    source: candles,
    progressLog: false,
    ...rest,
  });
}

describe("fees", () => {
  it("Kalshi: the series' fee type and multiplier, the trade fee to $0.0001 and the balance to the cent", () => {
    expect(kalshiFee(0.5, 100)).toBe(1.75); // exactly 175 cents: no float ceil to 1.76
    expect(kalshiFee(0.45, 10)).toBe(0.18); // 0.17325 → 0.1733, the balance change to the cent
    expect(kalshiFee(0.51, 10)).toBe(0.18); // 0.17493 → 0.1750 → 0.18
    expect(kalshiFee(0.01, 1)).toBe(0.01); // 0.000693 → 0.0007 → one cent
    expect(kalshiFee(0.5, 100, { feeMultiplier: 0.5 })).toBe(0.88); // 0.875 → 0.88
    expect(kalshiFee(0.5, 100, { liquidity: "maker" })).toBe(0); // quadratic: makers free
    expect(kalshiFee(0.5, 100, { feeType: "quadratic_with_maker_fees", liquidity: "maker" })).toBe(0.44);
    expect(() => kalshiFee(0.5, 100, 0.035 as never)).toThrow(TypeError);
  });
  it("Polymarket: shares × rate × (P × (1 − P))^exponent, makers free", () => {
    expect(polymarketFee(0.5, 100, { rate: 0.05, exponent: 1 })).toBe(1.25);
    expect(polymarketFee(0.7, 100, { rate: 0.05, exponent: 1 })).toBe(1.05);
    expect(polymarketFee(0.5, 100, { rate: 0.25, exponent: 2 })).toBe(1.5625);
    expect(polymarketFee(0.5, 100, { rate: 0.05, exponent: 1 }, "maker")).toBe(0);
    expect(polymarketFee(0.7, 100, { rate: 0, exponent: 1 })).toBe(0);
    // a bps figure is takerBaseFee, a cap, not a rate: refused rather than misread
    expect(() => polymarketFee(0.4, 100, 200 as never)).toThrow(TypeError);
  });
});

describe("fill rules", () => {
  const flat: Array<[number, number, number, number]> = [
    [0.5, 0.55, 0.45, 0.5],
    [0.5, 0.52, 0.41, 0.45],
    [0.45, 0.47, 0.38, 0.4],
    [0.4, 0.42, 0.39, 0.41],
  ];
  const candles = flat.map((ohlc, h) => candle(K, h, ohlc));

  it("a limit buy the candles never reach does not fill, and is cancelled at the end", async () => {
    const r = await run(candles.slice(0, 2), {
      0: (ctx) => ctx.order({ market_id: K, side: "buy", price: 0.4, amount: 10 }),
    });
    expect(r.trades).toEqual([]);
    expect(r.finalCash).toBe(1000);
    expect(r.cancelled).toEqual([
      {
        order_id: "bt_1",
        timestamp: at(100),
        market_id: K,
        side: "buy",
        outcome: "yes",
        type: "limit",
        price: 0.4,
        amount: 10,
        reason: "backtest_end",
      },
    ]);
  });

  it("a limit buy fills at its price on a later candle whose low reaches it; a resting one pays no fee", async () => {
    let available = 0;
    const r = await run(candles, {
      0: (ctx) => {
        ctx.order({ market_id: K, side: "buy", price: 0.4, amount: 10 });
        available = ctx.portfolio.available;
      },
    });
    expect(available).toBe(996); // 4 held back
    expect(r.trades).toEqual([
      {
        order_id: "bt_1",
        timestamp: at(2), // low 0.38 ≤ 0.40 (hour 1's low 0.41 did not reach it)
        market_id: K,
        side: "buy",
        outcome: "yes",
        type: "limit",
        liquidity: "maker",
        price: 0.4,
        amount: 10,
        fee: 0,
        realized_pnl: 0,
      },
    ]);
    expect(r.finalCash).toBe(996);
    expect(r.finalEquity).toBeCloseTo(996 + 10 * 0.41, 10);
    expect(r.positions).toMatchObject([
      { market_id: K, outcome: "yes", size: 10, cost_basis: 4, avg_price: 0.4 },
    ]);
  });

  it("makers pay too with makersPay; a limit crossing the last price is a taker", async () => {
    const r = await run(
      candles,
      {
        0: (ctx) => {
          ctx.order({ market_id: K, side: "buy", price: 0.4, amount: 10 }); // rests (close 0.5)
          ctx.order({ market_id: K, side: "buy", price: 0.5, amount: 10 }); // crosses the close 0.5
        },
      },
      { fees: { makersPay: true } },
    );
    expect(r.trades.map((t) => [t.order_id, t.timestamp, t.liquidity, t.price, t.fee])).toEqual([
      ["bt_2", at(1), "taker", 0.5, 0.18], // ceil(0.07 × 10 × 0.25 = 0.175)
      ["bt_1", at(2), "maker", 0.4, 0.17], // ceil(0.168)
    ]);
    expect(r.finalCash).toBeCloseTo(1000 - 5 - 0.18 - 4 - 0.17, 10);
    expect(r.metrics.fees).toBeCloseTo(0.35, 10);
  });

  it("a limit sell fills when the high reaches it, at its price", async () => {
    const r = await run(candles, {
      0: (ctx) => ctx.order({ market_id: K, side: "buy", type: "market", amount: 10 }),
      1: (ctx) => ctx.order({ market_id: K, side: "sell", price: 0.47, amount: 10 }),
    });
    // bought at hour 1's open 0.50 (+ fee 0.18), sold at hour 2 (high 0.47) at 0.47 (maker, free)
    expect(r.trades.map((t) => [t.side, t.timestamp, t.price, t.fee, t.realized_pnl])).toEqual([
      ["buy", at(1), 0.5, 0.18, 0],
      ["sell", at(2), 0.47, 0, -0.48],
    ]);
    expect(r.finalCash).toBeCloseTo(1000 - 5.18 + 4.7, 10);
    expect(r.metrics.roundTrips).toBe(1);
    expect(r.metrics.winRate).toBe(0);
  });

  it("a market order fills at the next open moved against it by slippage, and is rejected beyond max_slippage", async () => {
    const r = await run(
      candles,
      {
        0: (ctx) => {
          ctx.order({ market_id: K, side: "buy", type: "market", amount: 10 });
          ctx.order({ market_id: K, side: "buy", type: "market", amount: 10, max_slippage: 0.01 });
        },
        1: (ctx) => ctx.order({ market_id: K, side: "sell", type: "market", amount: 10 }),
      },
      { slippage: 0.02 },
    );
    expect(r.trades.map((t) => [t.side, t.timestamp, t.price, t.fee])).toEqual([
      ["buy", at(1), 0.51, 0.18], // 0.50 × 1.02; ceil(0.07 × 10 × 0.51 × 0.49 = 0.17493)
      ["sell", at(2), 0.441, 0.18], // 0.45 × 0.98; ceil(0.07 × 10 × 0.441 × 0.559 = 0.17256)
    ]);
    expect(r.rejected).toMatchObject([
      { order_id: "bt_2", timestamp: at(1), reason: "slippage_exceeded", type: "market", amount: 10 },
    ]);
    expect(r.finalCash).toBeCloseTo(1000 - 5.1 - 0.18 + 4.41 - 0.18, 10);
  });

  it("a market order's price is a bound, and a slippage function sees the order and the candle", async () => {
    const seen: unknown[] = [];
    const r = await run(
      candles,
      {
        0: (ctx) => {
          ctx.order({ market_id: K, side: "buy", type: "market", amount: 10, price: 0.5 });
          ctx.order({ market_id: K, side: "buy", type: "market", amount: 20, price: 0.5 });
        },
      },
      {
        slippage: (o) => {
          seen.push(o);
          return o.amount >= 20 ? 0.04 : 0;
        },
      },
    );
    expect(seen[0]).toEqual({
      market_id: K,
      side: "buy",
      outcome: "yes",
      amount: 10,
      price: 0.5,
      volume: 100,
    });
    expect(r.trades.map((t) => [t.amount, t.price])).toEqual([[10, 0.5]]);
    expect(r.rejected).toMatchObject([{ order_id: "bt_2", reason: "price_bound" }]);
  });

  it("fees per venue: Kalshi, Polymarket at the market's own schedule, or a custom function", async () => {
    const two = [candle(K, 0, [0.5, 0.5, 0.5, 0.5]), candle(P, 0, [0.3, 0.3, 0.3, 0.3])];
    two.push(candle(K, 1, [0.5, 0.5, 0.5, 0.5]), candle(P, 1, [0.3, 0.3, 0.3, 0.3]));
    const orders: Record<number, Step> = {
      0: (ctx) => {
        ctx.order({ market_id: K, side: "buy", type: "market", amount: 100 });
        ctx.order({ market_id: P, side: "buy", outcome: "no", type: "market", amount: 100 });
      },
    };
    // P's schedule as GET /v1/markets/{id} publishes it
    const pFees = {
      model: "polymarket" as const,
      rate: 0.05,
      exponent: 1,
      taker_only: true,
      maker_rate: 0,
      fee_type: null,
      multiplier: null,
      cap_bps: 1000,
    };
    const venues = await run(two, orders, { fees: { markets: { [P]: pFees } } });
    expect(venues.trades.map((t) => [t.market_id, t.outcome, t.price, t.fee])).toEqual([
      [K, "yes", 0.5, 1.75],
      [P, "no", 0.7, 1.05], // 0.05 × 0.7 × 0.3 × 100
    ]);
    expect(venues.finalCash).toBeCloseTo(1000 - 50 - 1.75 - 70 - 1.05, 10);

    // Without a schedule: what the server charges a market it knows no schedule for (0.07, exponent 1).
    const polyDefault = await run(two, orders, {});
    expect(polyDefault.trades.map((t) => t.fee)).toEqual([1.75, 1.47]);
    const venueSettings = await run(two, orders, {
      fees: { kalshi: { feeMultiplier: 0.5 }, polymarket: { rate: 0 } },
    });
    expect(venueSettings.trades.map((t) => t.fee)).toEqual([0.88, 0]);
    // Options of earlier versions whose meaning changed are refused, not misread.
    await expect(run(two, orders, { fees: { kalshi: { multiplier: 0.07 } as never } })).rejects.toThrow(
      /feeMultiplier/,
    );

    const custom = await run(two, orders, { fees: (f) => (f.venue === "polymarket" ? 0.01 * f.amount : 0) });
    expect(custom.trades.map((t) => t.fee)).toEqual([0, 1]);
  });

  it("prices NO at 1 − YES: a NO buy fills when 1 − high reaches it, and is marked at 1 − close", async () => {
    const r = await run(
      [
        candle(O, 0, [0.4, 0.42, 0.4, 0.42]),
        candle(O, 1, [0.42, 0.44, 0.38, 0.42]), // NO low 0.56 > 0.55
        candle(O, 2, [0.42, 0.46, 0.41, 0.43]), // NO low 0.54 ≤ 0.55
      ],
      { 0: (ctx) => ctx.order({ market_id: O, side: "buy", outcome: "no", price: 0.55, amount: 10 }) },
    );
    expect(r.trades.map((t) => [t.timestamp, t.outcome, t.price])).toEqual([[at(2), "no", 0.55]]);
    expect(r.finalCash).toBe(994.5);
    expect(r.positions[0]).toMatchObject({ outcome: "no", size: 10 });
    expect(r.positions[0]!.mark).toBeCloseTo(0.57, 12);
    expect(r.finalEquity).toBeCloseTo(994.5 + 5.7, 10);
  });

  it("keeps cash from going negative: orders beyond it are rejected and recorded", async () => {
    const r = await run(
      candles,
      {
        0: (ctx) => {
          ctx.order({ market_id: K, side: "buy", price: 0.4, amount: 30 }); // 12 > 10
          ctx.order({ market_id: K, side: "buy", type: "market", amount: 30 }); // 15 at the next open
          ctx.order({ market_id: K, side: "buy", price: 0.45, amount: 20 }); // 9 + fee: fits, holds 9.18
          ctx.order({ market_id: K, side: "sell", price: 0.6, amount: 1 }); // nothing held
        },
      },
      { initialCash: 10 },
    );
    expect(r.rejected.map((x) => [x.order_id, x.reason, x.timestamp])).toEqual([
      ["bt_1", "insufficient_cash", at(0)],
      ["bt_4", "insufficient_position", at(0)],
      ["bt_2", "insufficient_cash", at(1)],
    ]);
    expect(r.trades.map((t) => [t.order_id, t.price, t.amount])).toEqual([["bt_3", 0.45, 20]]);
    expect(r.finalCash).toBeCloseTo(10 - 9, 10);
    expect(Math.min(r.finalCash, ...r.equityCurve.equity)).toBeGreaterThanOrEqual(0);
  });

  it("pays 1 per winning contract at resolution, cancels the market's orders and scores predictions", async () => {
    let resolvedSeen = "";
    const r = await run(
      [...candles, candle(O, 0, [0.3, 0.3, 0.3, 0.3]), candle(O, 1, [0.3, 0.3, 0.3, 0.3])],
      {
        0: (ctx) => {
          ctx.order({ market_id: K, side: "buy", type: "market", amount: 10 }); // 0.50 at hour 1
          ctx.order({ market_id: O, side: "buy", type: "market", amount: 10, outcome: "no" }); // 0.70
          ctx.order({ market_id: K, side: "buy", price: 0.1, amount: 5 }); // never reached
          ctx.predict(K, 0.8);
          ctx.predict(O, 0.4);
        },
        1: (ctx) => ctx.predict(K, 0.6),
        2: (ctx) => {
          expect(ctx.order({ market_id: O, side: "buy", price: 0.2, amount: 1 })).toEqual({
            id: "bt_4",
            status: "rejected",
            reason: "market_resolved",
          });
        },
      },
      {
        fees: { kalshi: false },
        resolutions: [
          { market_id: O, outcome: "yes", at: at(2) }, // during the run: NO holders get 0
          { market_id: K, outcome: "yes", at: at(50) }, // after the last candle, before `to`
        ],
      },
    ).then((result) => {
      resolvedSeen = result.resolutions.map((x) => `${x.market_id}:${x.outcome}:${x.payout}`).join(",");
      return result;
    });
    expect(resolvedSeen).toBe(`${O}:yes:0,${K}:yes:10`);
    expect(r.resolutions.map((x) => x.timestamp)).toEqual([at(2), at(50)]);
    expect(r.finalCash).toBeCloseTo(1000 - 5 - 7 + 10, 10);
    expect(r.positions).toEqual([]);
    expect(r.cancelled).toMatchObject([{ order_id: "bt_3", reason: "market_resolved", timestamp: at(50) }]);
    expect(r.metrics.roundTrips).toBe(2);
    expect(r.metrics.wins).toBe(1); // K +5, O −7
    expect(r.metrics.winRate).toBe(0.5);
    // K: (0.8 − 1)² and (0.6 − 1)²; O: (0.4 − 1)²
    expect(r.metrics.brier).toBeCloseTo((0.04 + 0.16 + 0.36) / 3, 12);
    expect(r.metrics.predictions).toBe(3);
    // The curve gets a point at the resolution after the last candle.
    expect(r.equityCurve.time.at(-1)).toBe(T0 + 50 * H);
    expect(r.equityCurve.equity.at(-1)).toBeCloseTo(1000 - 5 - 7 + 10, 10);
    expect(r.finalEquity).toBeCloseTo(998, 10);
  });

  it("a resolution at or after `to` is not applied: the position stays, marked at the last close", async () => {
    const r = await run(
      candles,
      { 0: (ctx) => ctx.order({ market_id: K, side: "buy", type: "market", amount: 10 }) },
      { fees: { kalshi: false }, resolutions: [{ market_id: K, outcome: "no", at: at(100) }] },
    );
    expect(r.resolutions).toEqual([]);
    expect(r.positions).toMatchObject([{ market_id: K, size: 10, mark: 0.41 }]);
  });

  it("lets the strategy cancel, see its open orders, candles and portfolio", async () => {
    const log: unknown[] = [];
    const r = await run(candles, {
      0: (ctx) => {
        const t = ctx.order({ market_id: K, side: "buy", price: 0.3, amount: 1 });
        log.push(
          ctx.openOrders.map((o) => o.id),
          ctx.candle?.close,
          ctx.candleOf(K)?.timestamp,
          ctx.price(K),
        );
        log.push(ctx.cancel(t.id), ctx.cancel(t.id), ctx.openOrders.length, ctx.portfolio.available);
      },
    });
    expect(log).toEqual([["bt_1"], 0.5, at(0), 0.5, true, false, 0, 1000]);
    expect(r.cancelled).toMatchObject([{ order_id: "bt_1", reason: "cancelled", timestamp: at(0) }]);
  });

  it("calls onStart, onResolution and onEnd; an order placed in onStart fills at the first open", async () => {
    const calls: string[] = [];
    const r = await backtest({
      strategy: {
        onStart(ctx) {
          calls.push(`start ${ctx.timestamp} ${ctx.candles.length} ${ctx.portfolio.equity}`);
          ctx.order({ market_id: K, side: "buy", type: "market", amount: 2 });
        },
        onCandle(ctx) {
          calls.push(`candle ${ctx.timestamp}`);
        },
        onResolution(ctx, event) {
          calls.push(
            `resolution ${event.market_id} ${event.outcome} ${event.timestamp} ${event.payout} ${ctx.portfolio.cash}`,
          );
        },
        onEnd(ctx) {
          calls.push(`end ${ctx.timestamp} ${ctx.portfolio.equity}`);
        },
      },
      markets: [K],
      interval: "1h",
      from: at(0),
      to: at(3),
      initialCash: 100,
      fees: { kalshi: false },
      source: candles,
      resolutions: [{ market_id: K, outcome: "no", at: at(2) }],
      progressLog: false,
    });
    expect(calls).toEqual([
      `start ${at(0)} 0 100`,
      `candle ${at(0)}`,
      `candle ${at(1)}`,
      `resolution ${K} no ${at(2)} 0 99`,
      `end ${at(3)} 99`,
    ]);
    expect(r.trades.map((t) => [t.timestamp, t.price])).toEqual([[at(0), 0.5]]);
    expect(r.candles).toBe(3); // hour 2's candle is replayed but the market has resolved
    expect(r.steps).toBe(2);
  });

  it("refuses bad options up front", async () => {
    const base = {
      strategy: { onCandle() {} },
      markets: [K],
      interval: "1h" as const,
      from: at(0),
      to: at(1),
      initialCash: 10,
    };
    await expect(backtest(base)).rejects.toThrow(/no candles/);
    await expect(backtest({ ...base, to: at(0), source: [] })).rejects.toThrow(/from must be before to/);
    await expect(backtest({ ...base, interval: "2h" as never, source: [] })).rejects.toThrow(/interval/);
    await expect(backtest({ ...base, initialCash: 0, source: [] })).rejects.toThrow(/initialCash/);
    await expect(
      backtest({ ...base, source: [], resolutions: [{ market_id: P, outcome: "yes", at: at(0) }] }),
    ).rejects.toThrow(/not in markets/);
  });

  it("does not fill where a market has no candle, and merges markets in time order", async () => {
    const seen: string[] = [];
    const r = await run(
      [
        candle(P, 1, [0.2, 0.2, 0.2, 0.2]),
        candle(K, 0, [0.5, 0.5, 0.5, 0.5]),
        candle(K, 1, [0.5, 0.5, 0.5, 0.5]),
        candle(K, 3, [0.5, 0.5, 0.1, 0.5]),
        candle(P, 3, [0.2, 0.2, 0.2, 0.2]),
      ],
      {
        0: (ctx) => {
          seen.push(ctx.candles.map((c) => c.market_id).join("+"));
          ctx.order({ market_id: P, side: "buy", price: 0.1, amount: 1 });
        },
        1: (ctx) => seen.push(ctx.candles.map((c) => c.market_id).join("+")),
        2: (ctx) => seen.push(ctx.candles.map((c) => c.market_id).join("+")),
      },
      { markets: [K, P] },
    );
    expect(seen).toEqual([K, `${K}+${P}`, `${K}+${P}`]);
    expect(r.steps).toBe(3);
    expect(r.equityCurve.time).toEqual([T0, T0 + H, T0 + 3 * H]);
    expect(r.trades).toEqual([]); // K's low 0.1 at hour 3 never fills an order on P
  });
});

describe("metrics", () => {
  it("computes return, drawdown, Sharpe, win rate and Brier by their formulas", () => {
    expect(totalReturn(1000, 1100)).toBeCloseTo(0.1, 15);
    expect(maxDrawdown([100, 120, 90, 130], 100)).toBe(0.25);
    expect(maxDrawdown([90, 80], 100)).toBeCloseTo(0.2, 15);
    expect(winRate([5, -2, 1, 0])).toBe(0.5);
    expect(winRate([])).toBeNull();
    expect(
      brierScore([
        { probability: 0.8, outcome: "yes" },
        { probability: 0.3, outcome: "no" },
      ]),
    ).toBeCloseTo(0.065, 15);

    const day = 86_400_000;
    const r = [101 / 100 - 1, 100 / 101 - 1, 102 / 100 - 1];
    const mean = (r[0]! + r[1]! + r[2]!) / 3;
    const sd = Math.sqrt(r.reduce((s, x) => s + (x - mean) ** 2, 0) / 2);
    const expected = (mean / sd) * Math.sqrt(365);
    expect(sharpeRatio({ time: [0, day, 2 * day], equity: [101, 100, 102] }, "1d", 100)).toBeCloseTo(
      expected,
      12,
    );
    expect(expected).toBeCloseTo(8.409, 3);

    // A gap of 3 days counts 2 flat days: returns [0.01, 0, 0, 0.02] at 1d.
    const g = [0.01, 0, 0, 0.02];
    const gm = 0.03 / 4;
    const gsd = Math.sqrt(g.reduce((s, x) => s + (x - gm) ** 2, 0) / 3);
    expect(sharpeRatio({ time: [0, 3 * day], equity: [101, 103.02] }, "1d", 100)).toBeCloseTo(
      (gm / gsd) * Math.sqrt(365),
      9,
    );
    // Hourly returns annualise by √(365 × 24).
    expect(sharpeRatio({ time: [0, H, 2 * H], equity: [101, 100, 102] }, "1h", 100)).toBeCloseTo(
      (mean / sd) * Math.sqrt(365 * 24),
      12,
    );
    expect(sharpeRatio({ time: [0], equity: [101] }, "1d", 100)).toBeNull();
    expect(sharpeRatio({ time: [0, day], equity: [100, 100] }, "1d", 100)).toBeNull();
  });

  it("reports the same figures from a run", async () => {
    // Equity 1000 → buy 10 at 0.5 → marks 0.6, 0.3, 0.7 → 1001, 998, 1002 (no fees).
    const r = await run(
      [
        candle(O, 0, [0.5, 0.5, 0.5, 0.5]),
        candle(O, 1, [0.5, 0.6, 0.5, 0.6]),
        candle(O, 2, [0.6, 0.6, 0.3, 0.3]),
        candle(O, 3, [0.3, 0.7, 0.3, 0.7]),
      ],
      { 0: (ctx) => ctx.order({ market_id: O, side: "buy", type: "market", amount: 10 }) },
    );
    expect(r.equityCurve.equity).toEqual([1000, 1001, 998, 1002]);
    expect(r.metrics.totalReturn).toBeCloseTo(0.002, 12);
    expect(r.metrics.maxDrawdown).toBeCloseTo(3 / 1001, 12);
    expect(r.metrics.sharpe).toBeCloseTo(sharpeRatio(r.equityCurve, "1h", 1000)!, 15);
    expect(r.metrics.winRate).toBeNull(); // still open
  });
});

/** Deterministic pseudo-random candles and a strategy that trades on them. */
function randomCandles(markets: string[], hours: number, seed: number): MarketCandle[] {
  const random = seededRandom(seed);
  const out: MarketCandle[] = [];
  for (const m of markets) {
    let p = 0.5;
    for (let h = 0; h < hours; h++) {
      if (random() < 0.1) continue; // some hours without a candle
      const open = p;
      p = Math.min(0.98, Math.max(0.02, p + (random() - 0.5) * 0.06));
      const high = Math.min(0.99, Math.max(open, p) + random() * 0.02);
      const low = Math.max(0.01, Math.min(open, p) - random() * 0.02);
      out.push(candle(m, h, [round(open), round(high), round(low), round(p)], Math.floor(random() * 500)));
    }
  }
  return out;
}
const round = (x: number) => Math.round(x * 1e4) / 1e4;

function tradingStrategy(seed: number) {
  const random = seededRandom(seed);
  return {
    onCandle(ctx: StrategyContext) {
      for (const c of ctx.candles) {
        const x = random();
        if (x < 0.1) ctx.order({ market_id: c.market_id, side: "buy", type: "market", amount: 5 });
        else if (x < 0.2)
          ctx.order({ market_id: c.market_id, side: "buy", price: round(c.close - 0.02), amount: 7 });
        else if (x < 0.3 && ctx.portfolio.position(c.market_id) >= 5) {
          ctx.order({ market_id: c.market_id, side: "sell", price: round(c.close + 0.01), amount: 5 });
        } else if (x < 0.32)
          ctx.order({ market_id: c.market_id, side: "buy", outcome: "no", type: "market", amount: 3 });
        if (x > 0.95) ctx.predict(c.market_id, c.close);
      }
    },
  };
}

const MARKETS = [K, P, O];
const RESOLUTIONS = [
  { market_id: K, outcome: "yes" as const, at: at(150) },
  { market_id: P, outcome: "no" as const, at: at(300) },
];

function randomRun(source: BacktestOptions["source"], extra: Partial<BacktestOptions> = {}) {
  return backtest({
    strategy: tradingStrategy(7),
    markets: MARKETS,
    interval: "1h",
    from: at(0),
    to: at(400),
    initialCash: 500,
    fees: { polymarket: { rate: 0.05, exponent: 1 } },
    slippage: 0.01,
    resolutions: RESOLUTIONS,
    source,
    progressLog: false,
    ...extra,
  });
}

const dir = mkdtempSync(join(tmpdir(), "crossbook-backtest-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("determinism and sources", () => {
  const candles = randomCandles(MARKETS, 400, 42);

  it("gives byte-identical JSON for the same inputs, whatever the input order", async () => {
    const a = await randomRun(candles);
    const b = await randomRun([...candles].reverse());
    expect(a.trades.length).toBeGreaterThan(20);
    expect(a.resolutions.length).toBe(2);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
  });

  it("reads a JSONL file and a saved history response (JSON) like the same candles in memory", async () => {
    const expected = JSON.stringify(await randomRun(candles));
    const jsonl = join(dir, "candles.jsonl");
    await saveCandles(jsonl, candles);
    expect(readFileSync(jsonl, "utf8").split("\n")[0]).toBe(JSON.stringify(candles[0]));
    expect(JSON.stringify(await randomRun(fileSource(jsonl)))).toBe(expected);

    // One history response body per market, as `GET /v1/prices/history` returns it, in a JSON array.
    const pages = MARKETS.map((m) => ({
      success: true,
      data: candles.filter((c) => c.market_id === m).map(({ market_id: _, ...c }) => c),
      meta: { market_id: m, interval: "1h", start: at(0), end: at(400) },
    }));
    const json = join(dir, "history.json");
    writeFileSync(json, JSON.stringify(pages));
    expect(JSON.stringify(await randomRun(fileSource(json)))).toBe(expected);

    // JSONL with epoch-ms timestamps and a blank line, in a file without the .jsonl extension.
    const ms = join(dir, "candles.txt");
    writeFileSync(
      ms,
      `${candles.map((c) => JSON.stringify({ ...c, timestamp: Date.parse(String(c.timestamp)) })).join("\n")}\n\n`,
    );
    expect(JSON.stringify(await randomRun(fileSource(ms)))).toBe(expected);

    const tape = CandleTape.fromCandles(candles, MARKETS);
    expect(JSON.stringify(await randomRun(tape))).toBe(expected);
  });

  it("reports a bad line of a candle file with its place", async () => {
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, `${JSON.stringify(candles[0])}\n{"market_id": "${K}", "timestamp": "x"`);
    await expect(randomRun(fileSource(bad))).rejects.toThrow(/bad\.jsonl:2/);
  });

  it("pages through the history call by time, 1000 candles per call", async () => {
    const byMarket = new Map<string, MarketCandle[]>();
    for (const c of randomCandles(MARKETS, 2500, 3)) {
      if (!byMarket.has(c.market_id)) byMarket.set(c.market_id, []);
      byMarket.get(c.market_id)!.push(c);
    }
    const calls: string[] = [];
    const fetchHistory: FetchHistory = async (marketId, interval, start, end, limit) => {
      calls.push(`${marketId} ${interval} ${start} ${end} ${limit}`);
      const s = Date.parse(start);
      const e = Date.parse(end);
      // Like the service: the first `limit` periods from start; meta.end = the next page's start.
      const pageEnd = Math.min(e, s + limit * H);
      const data = (byMarket.get(marketId) ?? [])
        .filter((c) => Date.parse(String(c.timestamp)) >= s && Date.parse(String(c.timestamp)) < pageEnd)
        .map(({ market_id: _, ...c }) => ({ ...c, timestamp: String(c.timestamp) }));
      return { data, meta: { market_id: marketId, interval, start, end: new Date(pageEnd).toISOString() } };
    };
    const source = historySource(fetchHistory);
    const loaded = [
      ...(await source.load({ markets: MARKETS, interval: "1h", from: T0, to: T0 + 2500 * H })),
    ];
    expect(calls.filter((c) => c.startsWith(K))).toEqual([
      `${K} 1h ${at(0)} ${at(2500)} 1000`,
      `${K} 1h ${at(1000)} ${at(2500)} 1000`,
      `${K} 1h ${at(2000)} ${at(2500)} 1000`,
    ]);
    expect(calls.length).toBe(9);
    expect(loaded.length).toBe([...byMarket.values()].reduce((n, list) => n + list.length, 0));

    const viaHistory = await randomRun(historySource(fetchHistory));
    const inMemory = await randomRun([...byMarket.values()].flat());
    expect(JSON.stringify(viaHistory)).toBe(JSON.stringify(inMemory));
  });

  it("pages by the last candle when the call returns bare arrays", async () => {
    const all = randomCandles([K], 25, 5).map(({ market_id: _, ...c }) => ({
      ...c,
      timestamp: String(c.timestamp),
    }));
    const starts: string[] = [];
    const fetchHistory: FetchHistory = async (_id, _interval, start, _end, limit) => {
      starts.push(start);
      return all.filter((c) => Date.parse(c.timestamp) >= Date.parse(start)).slice(0, limit);
    };
    const loaded = [
      ...(await historySource(fetchHistory, { pageSize: 10 }).load({
        markets: [K],
        interval: "1h",
        from: T0,
        to: T0 + 25 * H,
      })),
    ];
    expect(loaded.length).toBe(all.length);
    expect(starts.length).toBeGreaterThanOrEqual(3);
  });
});

describe("report and progress", () => {
  it("writes a self-contained HTML report with charts and the trades", async () => {
    const result = await randomRun(randomCandles(MARKETS, 400, 42));
    const path = join(dir, "report.html");
    await writeReport(result, path, { title: "Random <strategy>" });
    const html = readFileSync(path, "utf8");
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).toContain("<style>");
    expect(html.match(/<svg /g)?.length).toBe(2);
    expect(html).toContain("Random &#60;strategy&#62;");
    // No title known: the id is the market's name.
    expect(html).toContain(`<td class="wrap"><span class="id only">${K}</span></td>`);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<link/i);
    expect(html).not.toMatch(/https?:/i);
    expect(html).not.toMatch(/@import|url\(/i);
    expect(renderReport(result, { title: "Random <strategy>" })).toBe(html);
  });

  it("shows markets by title with the id beneath, from the run or the report's options", async () => {
    const result = await randomRun(randomCandles(MARKETS, 400, 42), {
      titles: { [K]: "Fed cuts in <December>?", "kalshi:NOT-IN-RUN": "ignored" },
    });
    // Only the run's markets are kept.
    expect(result.titles).toEqual({ [K]: "Fed cuts in <December>?" });
    const html = renderReport(result, { titles: { [P]: "Polymarket twin" } });
    expect(html).toContain(`Fed cuts in &#60;December&#62;?<span class="id">${K}</span>`);
    expect(html).toContain(`Polymarket twin<span class="id">${P}</span>`);
    expect(html).toContain(`<span class="id only">${O}</span>`);
    expect(html).not.toContain("ignored");
  });

  it("never shows a negative zero, and labels both axes with round ticks", () => {
    // A drawdown of a hundredth of a cent: rounded, every figure is zero, none of them "-0".
    const base = emptyResult();
    const tiny = renderReport({
      ...base,
      finalEquity: 99.9999,
      metrics: { ...base.metrics, totalReturn: -0.000001, maxDrawdown: 0.000001 },
      equityCurve: {
        time: [T0, T0 + H, T0 + 2 * H, T0 + 3 * H],
        equity: [100, 99.9999, 100, 99.9999],
      },
    });
    expect(tiny).not.toMatch(/-0(\.0+)?(?![\d.])/);
    expect(tiny).toContain(">0.00 %<"); // total return
    const axes = [...tiny.matchAll(/<text class="axis-title"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(axes).toEqual(["Equity (USD)", "Time (UTC)", "Drawdown (%)", "Time (UTC)"]);
    // The drawdown axis runs from 0 down (at least 1 %) by a round step; three hours by half hours.
    const drawdown = tiny.slice(tiny.indexOf('class="chart drawdown"'));
    const yLabels = [...drawdown.matchAll(/text-anchor="end">([^<]*) %<\/text>/g)].map((m) => m[1]);
    expect(yLabels).toEqual(["-1.0", "-0.8", "-0.6", "-0.4", "-0.2", "0.0"]);
    const xLabels = [
      ...drawdown.matchAll(/y="\d+(?:\.\d)?" text-anchor="(?:start|middle|end)">(\d\d:\d\d)<\/text>/g),
    ].map((m) => m[1]);
    expect(xLabels).toEqual(["00:00", "00:30", "01:00", "01:30", "02:00", "02:30", "03:00"]);
  });

  it("renders a run without candles or trades", () => {
    const empty = renderReport(emptyResult());
    expect(empty).toContain("No trades.");
  });

  function emptyResult(): BacktestResult {
    return {
      markets: [K],
      interval: "1h",
      from: at(0),
      to: at(1),
      initialCash: 100,
      finalCash: 100,
      finalEquity: 100,
      candles: 0,
      steps: 0,
      metrics: {
        totalReturn: 0,
        sharpe: null,
        maxDrawdown: 0,
        winRate: null,
        roundTrips: 0,
        wins: 0,
        brier: null,
        predictions: 0,
        fees: 0,
      },
      trades: [],
      rejected: [],
      cancelled: [],
      positions: [],
      resolutions: [],
      equityCurve: { time: [], equity: [] },
    };
  }

  it("calls onProgress about every 1 % and at the end", async () => {
    const candles = randomCandles([K], 1000, 9);
    const seen: Progress[] = [];
    await randomRun(candles, {
      markets: [K],
      to: at(1000),
      onProgress: (p) => seen.push(p),
      resolutions: [],
    });
    expect(seen.length).toBeGreaterThanOrEqual(90);
    expect(seen.length).toBeLessThanOrEqual(102);
    expect(seen.at(-1)).toEqual({ done: candles.length, total: candles.length, pct: 100 });
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.done).toBeGreaterThan(seen[i - 1]!.done);
  });

  it("writes a stderr line every ~2 s once a run is longer than that", () => {
    const lines: string[] = [];
    let fake = performance.now();
    const spy = vi.spyOn(performance, "now").mockImplementation(() => fake);
    try {
      const p = createProgress(1000, undefined, true, (l) => lines.push(l));
      p.check(100); // 0 s: nothing
      fake += 2100;
      p.check(500);
      fake += 500;
      p.check(600); // 0.5 s after the last line: nothing
      fake += 1600;
      p.check(900);
      p.finish(1000);
    } finally {
      spy.mockRestore();
    }
    expect(lines.length).toBe(3);
    expect(lines[0]).toMatch(/^backtest: 500 \/ 1,000 candles \(50\.0 %\), 2\.1 s/);
    expect(lines[2]).toMatch(/^backtest: 1,000 \/ 1,000 candles \(100\.0 %\)/);
    const quiet: string[] = [];
    const q = createProgress(1000, undefined, true, (l) => quiet.push(l));
    q.check(1000);
    q.finish(1000);
    expect(quiet).toEqual([]);
  });
});
