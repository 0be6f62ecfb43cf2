/**
 * Exact units for the fake Polymarket. Prices live as integer units of 1e-4 (the finest CLOB tick),
 * share sizes and pUSD cash as integer micro-units (6 decimals, as on-chain), and they turn into
 * the venue's decimal strings only at the wire edge. Also the seeded RNG and the hashes used to
 * derive stable ids from seed keys.
 */
import { createHash } from "node:crypto";

export { hash32, Rng } from "../world/random";

/** Price units per 1.0 (0.0001 resolution). */
export const PRICE_SCALE = 10_000;
/** Micro-units per share or per pUSD. */
export const MICRO = 1_000_000;

/** Integer → decimal string with trailing zeros removed ("0.5", "1000", "219.217767"). */
export function fmtScaled(value: number | bigint, scale: number): string {
  const v = BigInt(value);
  const neg = v < 0n;
  const abs = neg ? -v : v;
  const s = BigInt(scale);
  const whole = abs / s;
  let frac = (abs % s).toString().padStart(String(scale).length - 1, "0");
  frac = frac.replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

export const fmtPrice = (units: number): string => fmtScaled(units, PRICE_SCALE);
export const fmtSize = (micro: number | bigint): string => fmtScaled(micro, MICRO);
export const priceNum = (units: number): number => units / PRICE_SCALE;
export const sizeNum = (micro: number | bigint): number => Number(micro) / MICRO;

/** Decimal string/number → integer units at `scale`; null if not exactly representable. */
export function parseScaled(input: string | number, scale: number): number | null {
  const str = typeof input === "number" ? input.toString() : input.trim();
  const m = /^(\d+)(?:\.(\d+))?$/.exec(str);
  if (!m) return null;
  const digits = String(scale).length - 1;
  const frac = (m[2] ?? "").replace(/0+$/, "");
  if (frac.length > digits) return null;
  return Number(m[1]) * scale + Number(frac.padEnd(digits, "0") || "0");
}

/** Round a float probability to the nearest multiple of `tickUnits` price units. */
export function snapPrice(p: number, tickUnits: number): number {
  return Math.round((p * PRICE_SCALE) / tickUnits) * tickUnits;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** uint256 as a decimal string, derived from text (the shape of CLOB token ids). */
export function uint256Decimal(text: string): string {
  return BigInt(`0x${sha256Hex(text)}`).toString(10);
}

/** 0x-prefixed 32-byte hex derived from text (the shape of condition and question ids). */
export function bytes32Hex(text: string): `0x${string}` {
  return `0x${sha256Hex(text)}`;
}

export function uuidFrom(text: string): string {
  const h = sha256Hex(text);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Polymarket's taker fee on one fill (docs.polymarket.com/trading/fees; clob-client-v2 `dist/fees`):
 * shares × rate × (p × (1 − p))^exponent, never above the base fee signed as the order's fee rate
 * (baseFee bps × min(p, 1 − p) × shares: the CTF exchange refunds anything above it), rounded down
 * to 0.00001 pUSD. Shares and the result in micro-units, the price in units of 1e-4, the rate read
 * to six decimals. Makers pay nothing on taker-only schedules (the caller's concern).
 */
export function takerFeeMicro(
  shares: number,
  price: number,
  fees: { rate: number; exponent: number; baseFee: number },
): bigint {
  if (shares <= 0 || price <= 0 || price >= PRICE_SCALE || fees.rate <= 0) return 0n;
  const e = BigInt(fees.exponent);
  const spread = BigInt(price) * BigInt(PRICE_SCALE - price); // p(1 − p) × 1e8
  const curve =
    (BigInt(shares) * BigInt(Math.round(fees.rate * MICRO)) * spread ** e) /
    (BigInt(MICRO) * BigInt(PRICE_SCALE * PRICE_SCALE) ** e);
  const edge = BigInt(Math.min(price, PRICE_SCALE - price));
  const cap = (BigInt(fees.baseFee) * edge * BigInt(shares)) / (10_000n * BigInt(PRICE_SCALE));
  const fee = fees.baseFee > 0 && cap < curve ? cap : curve;
  return (fee / 10n) * 10n;
}
