/**
 * Venue fees, as the sandbox charges them, in exact integer arithmetic on micro-units (1e-6) so a
 * fee never lands a cent off through float noise.
 */
import type { FeeConfig, FeeFunction, FeeInput } from "./types.js";

/**
 * Micro-units per unit (USD, contract, price).
 *
 * @example
 * toMicros(0.45) === 0.45 * MICROS; // 450000
 */
export const MICROS = 1_000_000;
const M = 1_000_000n;

/**
 * A price or amount in micro-units, rounded to the nearest.
 *
 * @example
 * toMicros(0.123456789); // 123457
 */
export function toMicros(value: number): number {
  return Math.round(value * MICROS);
}

/**
 * Kalshi's fee in micro-USD (a whole number of cents) for `sizeMicros` contracts at `priceMicros`.
 *
 * @example
 * kalshiFeeMicros(100_000_000, 500_000); // 1_750_000 (1.75 USD)
 */
export function kalshiFeeMicros(sizeMicros: number, priceMicros: number, multiplierBps = 700): number {
  if (sizeMicros <= 0 || priceMicros <= 0 || priceMicros >= MICROS || multiplierBps <= 0) return 0;
  // cents = bps × size × price × (1e6 − price) / (100 × 1e18), rounded up
  const numerator =
    BigInt(multiplierBps) * BigInt(sizeMicros) * BigInt(priceMicros) * (M - BigInt(priceMicros));
  const denominator = 100n * M * M * M;
  return Number((numerator + denominator - 1n) / denominator) * 10_000;
}

/**
 * Polymarket's fee in micro-USD: bps × min(P, 1 − P) × C, rounded up to the micro.
 *
 * @example
 * polymarketFeeMicros(100_000_000, 400_000, 200); // 800_000 (0.80 USD)
 */
export function polymarketFeeMicros(sizeMicros: number, priceMicros: number, rateBps: number): number {
  if (sizeMicros <= 0 || rateBps <= 0) return 0;
  const edge = Math.min(priceMicros, MICROS - priceMicros);
  if (edge <= 0) return 0;
  const numerator = BigInt(Math.round(rateBps)) * BigInt(edge) * BigInt(sizeMicros);
  const denominator = 10_000n * M;
  return Number((numerator + denominator - 1n) / denominator);
}

/**
 * Kalshi's taker fee in USD: `ceil(multiplier × C × P × (1 − P))` rounded up to the cent.
 *
 * @example
 * kalshiFee(0.5, 100); // 1.75 (0.07 × 100 × 0.25)
 * kalshiFee(0.45, 10); // 0.18 (0.17325 rounded up)
 */
export function kalshiFee(price: number, amount: number, multiplier = 0.07): number {
  return kalshiFeeMicros(toMicros(amount), toMicros(price), Math.round(multiplier * 10_000)) / MICROS;
}

/**
 * Polymarket's fee in USD: `rateBps / 10,000 × min(P, 1 − P) × C` rounded up to the micro-dollar
 * (most markets charge 0 bps).
 *
 * @example
 * polymarketFee(0.4, 100, 200); // 0.8 (2 % × 0.4 × 100)
 */
export function polymarketFee(price: number, amount: number, rateBps: number): number {
  return polymarketFeeMicros(toMicros(amount), toMicros(price), rateBps) / MICROS;
}

/**
 * The venue a market id belongs to, from its prefix.
 *
 * @example
 * venueOf("kalshi:FED-26DEC-T4.00"); // "kalshi"
 */
export function venueOf(marketId: string): FeeInput["venue"] {
  if (marketId.startsWith("kalshi:")) return "kalshi";
  if (marketId.startsWith("polymarket:")) return "polymarket";
  return "other";
}

/**
 * A fee rule resolved for the run: micro-USD for one fill.
 *
 * @example
 * const micros: number = feeRule({})(input, sizeMicros, priceMicros);
 */
export type FeeRule = (input: FeeInput, sizeMicros: number, priceMicros: number) => number;

/**
 * Builds the run's fee rule from the `fees` option.
 *
 * @example
 * const fee = feeRule({ polymarket: { defaultBps: 100 } });
 * fee({ market_id: "polymarket:0xabc", venue: "polymarket", side: "buy", outcome: "yes", price: 0.4, amount: 10, liquidity: "taker" }, 10_000_000, 400_000); // 40_000
 */
export function feeRule(fees: FeeConfig | FeeFunction | undefined): FeeRule {
  if (typeof fees === "function") {
    return (input) => {
      const fee = fees(input);
      if (!Number.isFinite(fee) || fee < 0) throw new RangeError(`fee function returned ${fee}`);
      return toMicros(fee);
    };
  }
  const config = fees ?? {};
  const kalshiBps = config.kalshi === false ? 0 : Math.round((config.kalshi?.multiplier ?? 0.07) * 10_000);
  const polyDefault = config.polymarket?.defaultBps ?? 0;
  const polyRates = config.polymarket?.rateBps ?? {};
  const makersPay = config.makersPay === true;
  return (input, sizeMicros, priceMicros) => {
    if (input.liquidity === "maker" && !makersPay) return 0;
    if (input.venue === "kalshi") return kalshiFeeMicros(sizeMicros, priceMicros, kalshiBps);
    if (input.venue === "polymarket") {
      const bps = Object.hasOwn(polyRates, input.market_id) ? polyRates[input.market_id]! : polyDefault;
      return polymarketFeeMicros(sizeMicros, priceMicros, bps);
    }
    return 0;
  };
}
