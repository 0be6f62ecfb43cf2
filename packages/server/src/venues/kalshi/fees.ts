/**
 * Kalshi's published taker fee: ceil(0.07 × C × P × (1 − P)) rounded UP to the next cent, where C is
 * the contract count and P the price in dollars. Computed in exact integer arithmetic (BigInt) so a
 * fee never lands a cent off through float noise. The capability map names this model
 * (`kalshi_quadratic`); the sandbox and order previews call this function.
 */
import { MICROS, type Micros } from "../decimal";

/** The standard taker multiplier, 0.07, in basis points. */
export const KALSHI_TAKER_FEE_BPS = 700;

const M = BigInt(MICROS);

/**
 * Fee in micro-USD (always a whole number of cents) for `size` contracts (micros) at `price`
 * (micros, 0..1). `multiplierBps` covers per-series fee multipliers (0.07 = 700 bps).
 */
export function kalshiTakerFee(size: Micros, price: Micros, multiplierBps = KALSHI_TAKER_FEE_BPS): Micros {
  if (size <= 0 || price <= 0 || price >= MICROS) return 0;
  // fee in dollars = bps/10_000 × (size/1e6) × (price/1e6) × ((1e6 − price)/1e6)
  // fee in cents   = bps × size × price × (1e6 − price) / (100 × 1e18)
  const numerator = BigInt(multiplierBps) * BigInt(size) * BigInt(price) * (M - BigInt(price));
  const denominator = 100n * M * M * M;
  const cents = (numerator + denominator - 1n) / denominator;
  return Number(cents) * 10_000;
}
