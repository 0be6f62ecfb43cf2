/** Performance figures of an equity curve, round trips and forecasts. Pure functions. */
import { INTERVAL_MS } from "./sources.js";
import type { Interval, Outcome } from "./types.js";

/**
 * Days in the year used to annualise: prediction markets trade every day.
 *
 * @example
 * const periodsPerYear = (DAYS_PER_YEAR * 86_400_000) / INTERVAL_MS["1h"]; // 8760
 */
export const DAYS_PER_YEAR = 365;

/**
 * Total return: `finalEquity / initialCash − 1`.
 *
 * @example
 * totalReturn(1000, 1100); // 0.1
 */
export function totalReturn(initialCash: number, finalEquity: number): number {
  return initialCash > 0 ? finalEquity / initialCash - 1 : 0;
}

/**
 * Maximum drawdown: the largest fall from a running peak, as a fraction of that peak
 * (`max (peak − equity) / peak`). The peak starts at `initial` when given (the starting cash).
 *
 * @example
 * maxDrawdown([100, 120, 90, 130], 100); // 0.25 (120 → 90)
 */
export function maxDrawdown(equity: ArrayLike<number>, initial?: number): number {
  let peak = initial ?? (equity.length > 0 ? equity[0]! : 0);
  let worst = 0;
  for (let i = 0; i < equity.length; i++) {
    const e = equity[i]!;
    if (e > peak) peak = e;
    else if (peak > 0) {
      const dd = (peak - e) / peak;
      if (dd > worst) worst = dd;
    }
  }
  return worst;
}

/**
 * The drawdown at each point, `(peak − equity) / peak` (0 at a new high), for charts.
 *
 * @example
 * drawdownSeries([100, 120, 90], 100); // [0, 0, 0.25]
 */
export function drawdownSeries(equity: ArrayLike<number>, initial?: number): number[] {
  let peak = initial ?? (equity.length > 0 ? equity[0]! : 0);
  const out = new Array<number>(equity.length);
  for (let i = 0; i < equity.length; i++) {
    const e = equity[i]!;
    if (e > peak) peak = e;
    out[i] = peak > 0 ? (peak - e) / peak : 0;
  }
  return out;
}

/**
 * Annualised Sharpe ratio of per-interval returns, risk-free rate 0:
 *
 * `sharpe = mean(r) / stdev(r) × √(365 days / interval)`
 *
 * where `r` are the returns of consecutive equity points, `r_i = E_i / E_{i−1} − 1` (the first
 * against `initialCash` when given), `stdev` is the sample standard deviation (n − 1), and a gap of
 * k intervals between two points counts as k − 1 periods of return 0 plus the return across it
 * (equity is flat while no candle arrives). Null with fewer than 2 periods or no variance.
 *
 * @example
 * sharpeRatio({ time: [0, 86_400_000, 172_800_000], equity: [101, 100, 102] }, "1d", 100); // ≈ 8.4
 */
export function sharpeRatio(
  curve: { time: ArrayLike<number>; equity: ArrayLike<number> },
  interval: Interval,
  initialCash?: number,
): number | null {
  const step = INTERVAL_MS[interval];
  const { time, equity } = curve;
  const n = equity.length;
  const first = initialCash === undefined ? 1 : 0;
  let periods = 0;
  let sum = 0;
  for (let i = first; i < n; i++) {
    const prev = i === 0 ? initialCash! : equity[i - 1]!;
    const gap = i === 0 ? 1 : Math.max(1, Math.round((time[i]! - time[i - 1]!) / step));
    periods += gap;
    sum += prev > 0 ? equity[i]! / prev - 1 : 0;
  }
  if (periods < 2) return null;
  const mean = sum / periods;
  let squares = 0;
  for (let i = first; i < n; i++) {
    const prev = i === 0 ? initialCash! : equity[i - 1]!;
    const gap = i === 0 ? 1 : Math.max(1, Math.round((time[i]! - time[i - 1]!) / step));
    const r = prev > 0 ? equity[i]! / prev - 1 : 0;
    squares += (r - mean) * (r - mean) + (gap - 1) * mean * mean;
  }
  const variance = squares / (periods - 1);
  const stdev = Math.sqrt(variance);
  if (!(stdev > 1e-15 * Math.max(1, Math.abs(mean)))) return null;
  return (mean / stdev) * Math.sqrt((DAYS_PER_YEAR * 86_400_000) / step);
}

/**
 * Win rate: the share of PnLs above 0 (null when there are none). The backtest passes one PnL per
 * closed round trip (a position opened from 0 and sold back to 0) and per resolved position.
 *
 * @example
 * winRate([5, -2, 1, 0]); // 0.5
 */
export function winRate(pnls: readonly number[]): number | null {
  if (pnls.length === 0) return null;
  let wins = 0;
  for (const pnl of pnls) if (pnl > 0) wins++;
  return wins / pnls.length;
}

/**
 * Brier score: the mean of `(p − o)²` where p is the stated probability of YES and o is 1 when the
 * market resolved YES, else 0. 0 is perfect, 0.25 is always saying 50 %. Null without forecasts.
 *
 * @example
 * brierScore([{ probability: 0.8, outcome: "yes" }, { probability: 0.3, outcome: "no" }]); // 0.065
 */
export function brierScore(
  forecasts: ReadonlyArray<{ probability: number; outcome: Outcome }>,
): number | null {
  if (forecasts.length === 0) return null;
  let sum = 0;
  for (const f of forecasts) {
    const o = f.outcome === "yes" ? 1 : 0;
    sum += (f.probability - o) ** 2;
  }
  return sum / forecasts.length;
}
