/**
 * Scoring a run: the equity curve as the replay records it, the strategy's forecasts (summed per
 * market and scored with the Brier score when the market resolves), and the metrics built from
 * them at the end. The formulas are in metrics.ts; this module holds what they are computed on, so
 * the replay only reports points, forecasts and resolutions.
 */
import { usd } from "./accounting.js";
import { maxDrawdown, sharpeRatio, totalReturn, winRate } from "./metrics.js";
import type { EquityCurve, Interval, Metrics, Outcome } from "./types.js";

/**
 * @example
 * const scores = new Scorecard(indexOf, resolved);
 * scores.record(t, 1000.5);
 * scores.predict("kalshi:A", 0.7);
 * scores.resolve(0, "yes"); // the forecast adds (0.7 − 1)² to the Brier sum
 */
export class Scorecard {
  /** One point per step (and per resolution after the last candle): epoch ms and equity, USD. */
  readonly curve: EquityCurve = { time: [], equity: [] };
  // Forecasts of markets not resolved yet: count, Σp and Σp² per market, enough for Σ(p − o)².
  private readonly count: Float64Array;
  private readonly sum: Float64Array;
  private readonly squares: Float64Array;
  private brierSum = 0;
  private brierCount = 0;

  /**
   * @param resolved per market, non-zero once it resolved (set by the replay): later forecasts of it are not scored
   */
  constructor(
    private readonly indexOf: ReadonlyMap<string, number>,
    private readonly resolved: Uint8Array,
  ) {
    const n = indexOf.size;
    this.count = new Float64Array(n);
    this.sum = new Float64Array(n);
    this.squares = new Float64Array(n);
  }

  /** Adds a point to the equity curve. */
  record(time: number, equity: number): void {
    this.curve.time.push(time);
    this.curve.equity.push(equity);
  }

  /**
   * A point after the last candle (a resolution before the run's end): a new point when it is
   * later than the last one, else it restates the last one.
   */
  restate(time: number, equity: number): void {
    const { time: times, equity: values } = this.curve;
    const lastTime = times.length > 0 ? times[times.length - 1]! : Number.NEGATIVE_INFINITY;
    if (time > lastTime) this.record(time, equity);
    else values[values.length - 1] = equity;
  }

  /** A forecast that `marketId` resolves YES with `probability`. */
  predict(marketId: string, probability: number): void {
    const m = this.indexOf.get(marketId);
    if (m === undefined) throw new RangeError(`predict: ${marketId} is not in the run's markets`);
    if (!(typeof probability === "number" && probability >= 0 && probability <= 1)) {
      throw new RangeError(`predict: probability must be in 0-1, got ${probability}`);
    }
    if (this.resolved[m] !== 0) return;
    this.count[m]!++;
    this.sum[m]! += probability;
    this.squares[m]! += probability * probability;
  }

  /** Market `m` resolved: its forecasts are scored, Σ(p − o)² = Σp² − 2oΣp + o·n. */
  resolve(m: number, outcome: Outcome): void {
    const count = this.count[m]!;
    if (count === 0) return;
    const o = outcome === "yes" ? 1 : 0;
    this.brierSum += this.squares[m]! - 2 * o * this.sum[m]! + o * count;
    this.brierCount += count;
  }

  /**
   * The run's metrics from its curve, the PnL of each closed position (micros) and the fees paid
   * (micros).
   */
  metrics(
    interval: Interval,
    initialCash: number,
    finalEquity: number,
    closedPnls: readonly number[],
    feesMicros: number,
  ): Metrics {
    const curve = this.curve;
    const wins = closedPnls.reduce((n, pnl) => n + (pnl > 0 ? 1 : 0), 0);
    return {
      totalReturn: totalReturn(initialCash, finalEquity),
      sharpe: sharpeRatio(curve, interval, initialCash),
      maxDrawdown: maxDrawdown(curve.equity, initialCash),
      winRate: winRate(closedPnls),
      roundTrips: closedPnls.length,
      wins,
      brier: this.brierCount > 0 ? Math.max(0, this.brierSum) / this.brierCount : null,
      predictions: this.brierCount,
      fees: usd(feesMicros),
    };
  }
}
