/**
 * Exact units for the fake Kalshi. Prices are integer units of 1e-4 dollars (the 4 dp of the
 * `*_dollars` strings), contract counts integer units of 1e-2 (the 2 dp of the `*_fp` strings), and
 * cash integer micro-dollars (price unit × count unit = 1e-6 $). Strings appear only at the wire edge
 * (VENUES.md §2.2 "Fixed-point"). Also the seeded RNG, stable hashes and Kalshi's taker-fee formula.
 */
import { createHash } from "node:crypto";
import { Rng as SeededRng } from "../world/random";

export { hash32 } from "../world/random";

/** Price units per dollar (0.0001 resolution). */
export const PRICE_SCALE = 10_000;
/** Count units per contract (0.01 resolution). */
export const COUNT_SCALE = 100;
/** Micro-dollars per dollar. */
export const MICRO = 1_000_000;

function fixed(value: number | bigint, scale: number, dp: number): string {
  const v = BigInt(value);
  const neg = v < 0n;
  const abs = neg ? -v : v;
  const s = BigInt(scale);
  const whole = abs / s;
  const fracDigits = String(scale).length - 1;
  const frac = (abs % s).toString().padStart(fracDigits, "0").slice(0, dp).padEnd(dp, "0");
  return `${neg ? "-" : ""}${whole}${dp > 0 ? `.${frac}` : ""}`;
}

/** Price units → `"0.4200"`. */
export const fmtDollars = (priceUnits: number): string => fixed(priceUnits, PRICE_SCALE, 4);
/** Count units → `"10.00"`. */
export const fmtFp = (countUnits: number): string => fixed(countUnits, COUNT_SCALE, 2);
/** Micro-dollars → `"1000.0000"` (truncated toward zero at 4 dp). */
export const fmtMicroDollars = (micro: number): string => fixed(micro, MICRO, 4);
/** Micro-dollars → whole cents, rounded down (the venue's integer `balance`). */
export const microToCents = (micro: number): number => Math.floor(micro / 10_000);

/**
 * Decimal text → integer units at `scale`, accepting between `minDp` and `maxDp` decimals.
 * Returns null on anything else (sign, exponent, too many decimals, garbage).
 */
export function parseDecimal(input: unknown, scale: number, minDp: number, maxDp: number): number | null {
  if (typeof input !== "string") return null;
  const m = /^(\d+)(?:\.(\d+))?$/.exec(input.trim());
  if (!m) return null;
  const frac = m[2] ?? "";
  if (frac.length < minDp || frac.length > maxDp) return null;
  const digits = String(scale).length - 1;
  if (frac.length > digits && /[1-9]/.test(frac.slice(digits))) return null;
  const n = Number(m[1]) * scale + Number(frac.slice(0, digits).padEnd(digits, "0") || "0");
  return Number.isSafeInteger(n) ? n : null;
}

/** Request prices: 2–4 dp dollar strings (VENUES.md §2.2). */
export const parsePriceDollars = (input: unknown): number | null => parseDecimal(input, PRICE_SCALE, 2, 4);
/** Request counts: 0–2 dp fp strings (VENUES.md §2.2). */
export const parseCountFp = (input: unknown): number | null => parseDecimal(input, COUNT_SCALE, 0, 2);

/**
 * Kalshi's trade fee for one fill, in micro-dollars, rounded up to $0.0001 (the "trade fee" of
 * docs.kalshi.com/getting_started/fee_rounding). The coefficient comes from the series' fee type
 * and multiplier m (SDK 3.30 `Series.fee_type`): takers pay 0.07·m·C·P·(1 − P); makers pay a
 * quarter of that on `quadratic_with_maker_fees`, half on `quadratic_with_combo_maker_fees`, nothing
 * otherwise. `flat` ("Specific Trading Fees Table", not published in a form we could read) is served
 * as a price-independent 0.0175·m a contract for takers. Count in 1e-2 units, price in 1e-4 units.
 */
export function tradeFeeMicro(
  fees: { feeType: string; feeMultiplier: number },
  isTaker: boolean,
  countUnits: number,
  priceUnits: number,
): number {
  const share = isTaker
    ? 1
    : fees.feeType === "quadratic_with_maker_fees"
      ? 0.25
      : fees.feeType === "quadratic_with_combo_maker_fees"
        ? 0.5
        : 0;
  // The coefficient in units of 1e-8 (0.07 -> 7,000,000).
  const coef = BigInt(Math.round(7_000_000 * fees.feeMultiplier * share));
  if (coef === 0n || countUnits <= 0) return 0;
  let num: bigint;
  let den: bigint;
  if (fees.feeType === "flat") {
    if (!isTaker) return 0;
    // (coef/4)/1e8 dollars × C = coef·Cu / (4·1e8·100) dollars = coef·Cu / 4e4 micro
    num = coef * BigInt(countUnits);
    den = 40_000n;
  } else {
    if (priceUnits <= 0 || priceUnits >= PRICE_SCALE) return 0;
    // coef/1e8 × Cu/100 × Pu/1e4 × (1e4 − Pu)/1e4 dollars, × 1e6 for micro
    num = coef * BigInt(countUnits) * BigInt(priceUnits) * BigInt(PRICE_SCALE - priceUnits);
    den = 1_000_000_000_000n;
  }
  const centicents = (num + den * 100n - 1n) / (den * 100n);
  return Number(centicents) * 100;
}

/**
 * A fill's net fee after the venue's rounding: the balance change (−cost − trade fee) is floored to
 * the cent, the difference is a rounding fee, and the order's accumulated rounding comes back a whole
 * cent at a time (docs.kalshi.com/getting_started/fee_rounding; accounts that settle in cents).
 */
export function netFeeMicro(
  costMicro: number,
  tradeFee: number,
  carryMicro: number,
): { fee: number; carry: number } {
  const change = -costMicro - tradeFee;
  const rounding = change - Math.floor(change / 10_000) * 10_000;
  const owed = carryMicro + rounding;
  const rebate = Math.floor(owed / 10_000) * 10_000;
  return { fee: tradeFee + rounding - rebate, carry: owed - rebate };
}

/** The fakes' shared PRNG; Kalshi's keeps its own fallback for a zero seed, so worlds stay the same. */
export class Rng extends SeededRng {
  constructor(seed: number) {
    super(seed, 0x2545f491);
  }
}

/** A UUID-shaped id derived from text (Kalshi market ids, order ids and trade ids are UUIDs). */
export function uuidFrom(text: string): string {
  const h = createHash("sha256").update(text).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export const isoFromMs = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
