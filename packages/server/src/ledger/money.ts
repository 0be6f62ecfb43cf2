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
import { buyLockFee, type FeeSchedule, notional, takerFee as scheduleTakerFee } from "@crossbook/fees";
import type { Micros } from "../venues/decimal";

/** price × size in micro-USD, rounded half up; exact whenever the size is a whole cent of contracts. */
export { notional };

/** a × b / c for non-negative integers, floored, exact. */
export function mulDiv(a: number, b: number, c: number): number {
  const product = a * b;
  if (Number.isSafeInteger(product)) return Math.floor(product / c);
  return Number((BigInt(a) * BigInt(b)) / BigInt(c));
}

/**
 * A market's fee schedule (@crossbook/fees, shared with the agent's backtester): C × rate ×
 * (P × (1 − P))^exponent, rounded by the venue's rules (Polymarket: down to $0.00001, capped by
 * `takerBaseFee`; Kalshi: the trade fee up to $0.0001, the balance change to the cent, with the
 * order's fee accumulator).
 */
export type FeeModel = FeeSchedule;

/** A taker's fee for buying `size` contracts of an outcome at `price` in one fill (an order's first). */
export function takerFee(model: FeeModel, price: Micros, size: Micros): Micros {
  return scheduleTakerFee(model, price, size);
}

/**
 * Cash an open buy order holds back for `remaining` contracts at limit `price`: the cost plus the
 * largest fee any fill at or better than the limit could bring (every fee curve peaks at 0.5), plus
 * on Kalshi the rounding the order may still pay before its accumulator (`carry`) rebates it.
 */
export function buyLock(model: FeeModel, price: Micros, remaining: Micros, carry = 0): Micros {
  if (remaining <= 0) return 0;
  return notional(price, remaining) + buyLockFee(model, price, remaining, carry);
}

/** The slice of a position's cost basis that `sold` of its `size` contracts carry (pro rata). */
export function costOfSlice(costBasis: Micros, size: Micros, sold: Micros): Micros {
  if (sold >= size) return costBasis;
  return mulDiv(costBasis, sold, size);
}
