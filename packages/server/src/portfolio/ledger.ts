/**
 * The money math of trading, in integer micro-units and nothing else: what a fill costs, what a
 * venue charges for it, and how much cash an open buy order must hold back. Both the sandbox and
 * live routing use these, so a fill is accounted for the same way whichever way it happened.
 *
 * The ledger identity every account keeps at every moment (tested property-based):
 *   available + locked + Σ position cost basis = deposits − withdrawals − fees + realized PnL
 * Fees are kept out of cost basis and realized PnL (they are their own line), so realized PnL is
 * "sold for minus paid for" and every fee appears once.
 */
import { MICROS, type Micros } from "../venues/decimal";
import { kalshiTakerFee } from "../venues/kalshi/fees";
import type { VenueId } from "../venues/model";

const M = BigInt(MICROS);

/** price × size in micro-USD, rounded half up; exact whenever the size is a whole cent of contracts. */
export function notional(price: Micros, size: Micros): Micros {
  const product = price * size;
  if (Number.isSafeInteger(product)) return Math.floor((product + MICROS / 2) / MICROS);
  return Number((BigInt(price) * BigInt(size) + M / 2n) / M);
}

/** a × b / c for non-negative integers, floored, exact. */
export function mulDiv(a: number, b: number, c: number): number {
  const product = a * b;
  if (Number.isSafeInteger(product)) return Math.floor(product / c);
  return Number((BigInt(a) * BigInt(b)) / BigInt(c));
}

export interface FeeModel {
  venue: VenueId;
  /** Polymarket's per-market taker rate; null or 0 charges nothing. */
  feeRateBps: number | null;
}

/**
 * A taker's fee for `size` contracts of an outcome at `price`:
 * - Kalshi: the published formula, ceil(0.07 × C × P × (1 − P)) to the next cent (venues/kalshi/fees).
 * - Polymarket: rate × min(P, 1 − P) × C, rounded up to the micro-dollar, with the market's
 *   `feeRateBps` (most markets charge 0).
 * Makers (a resting sandbox order reached by a real trade) pay nothing on either venue's standard
 * schedule.
 */
export function takerFee(model: FeeModel, price: Micros, size: Micros): Micros {
  if (size <= 0) return 0;
  if (model.venue === "kalshi") return kalshiTakerFee(size, price);
  const bps = model.feeRateBps ?? 0;
  if (bps <= 0) return 0;
  const edge = Math.min(price, MICROS - price);
  const numerator = BigInt(bps) * BigInt(edge) * BigInt(size);
  const denominator = 10_000n * M;
  return Number((numerator + denominator - 1n) / denominator);
}

/**
 * Cash an open buy order holds back for `remaining` contracts at limit `price`: the cost plus the
 * largest taker fee any fill at or better than the limit could bring (both fee curves peak at 0.5).
 */
export function buyLock(model: FeeModel, price: Micros, remaining: Micros): Micros {
  if (remaining <= 0) return 0;
  return notional(price, remaining) + takerFee(model, Math.min(price, MICROS / 2), remaining);
}

/** The slice of a position's cost basis that `sold` of its `size` contracts carry (pro rata). */
export function costOfSlice(costBasis: Micros, size: Micros, sold: Micros): Micros {
  if (sold >= size) return costBasis;
  return mulDiv(costBasis, sold, size);
}
