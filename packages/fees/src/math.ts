/**
 * Exact integer arithmetic for fees: the curve C × rate × (P × (1 − P))^exponent computed on
 * BigInt and rounded once, in the direction the venue rounds, so a fee never lands a unit off
 * through float noise. Whole and half-whole exponents are exact; any other exponent falls back to
 * floating point (no venue is known to use one).
 */
import { MICROS } from "./schedule.js";

const M = BigInt(MICROS);
const M2 = M * M;
/** Rates are read to nine decimals (0.0175 -> 17,500,000). */
const RATE_SCALE = 1_000_000_000n;

/** price × size in micro-USD, rounded half up (the ledger's notional). */
export function notional(price: number, size: number): number {
  const product = price * size;
  if (Number.isSafeInteger(product)) return Math.floor((product + MICROS / 2) / MICROS);
  return Number((BigInt(price) * BigInt(size) + M / 2n) / M);
}

/**
 * C × rate × (P × (1 − P))^exponent in whole `unit`s of micro-USD, rounded down (`up` false) or up.
 * `price` and `size` in micro-units; 0 outside 0 < P < 1.
 */
export function curveUnits(
  rate: number,
  exponent: number,
  price: number,
  size: number,
  unit: number,
  up: boolean,
): number {
  if (size <= 0 || rate <= 0 || price <= 0 || price >= MICROS) return 0;
  const r = BigInt(Math.round(rate * 1e9));
  if (r <= 0n) return 0;
  const x = BigInt(price) * (M - BigInt(price)); // P(1 − P), scaled by 1e12
  const c = BigInt(size);
  const u = BigInt(unit);
  if (Number.isInteger(exponent)) {
    const e = BigInt(exponent);
    const num = c * r * x ** e;
    const den = RATE_SCALE * M2 ** e * u;
    return Number(up ? (num + den - 1n) / den : num / den);
  }
  if (Number.isInteger(exponent * 2)) {
    // (fee / unit)² = C² rate² x^k / (scale² 1e12^k unit²), with k = 2 × exponent odd.
    const k = BigInt(exponent * 2);
    const num = c * c * r * r * x ** k;
    const den = RATE_SCALE * RATE_SCALE * M2 ** k * u * u;
    const root = isqrt(num / den);
    return Number(up && root * root * den !== num ? root + 1n : root);
  }
  const p = price / MICROS;
  const units = (size * rate * (p * (1 - p)) ** exponent) / unit;
  return up ? Math.ceil(units - 1e-9) : Math.floor(units + 1e-9);
}

/** capBps / 10,000 × min(P, 1 − P) × C in whole `unit`s of micro-USD, rounded down. */
export function capUnits(capBps: number, price: number, size: number, unit: number): number {
  if (size <= 0 || price <= 0 || price >= MICROS) return 0;
  const edge = BigInt(Math.min(price, MICROS - price));
  const num = BigInt(Math.round(capBps)) * edge * BigInt(size);
  return Number(num / (10_000n * M * BigInt(unit)));
}

/** ⌊√n⌋ for n ≥ 0. */
function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  const estimate = Math.sqrt(Number(n));
  let x = Number.isFinite(estimate) ? BigInt(Math.floor(estimate)) || 1n : n;
  // Newton steps from the float estimate, then settle the last unit exactly.
  for (let i = 0; i < 4096; i++) {
    const next = (x + n / x) >> 1n;
    if (next === x || next === x + 1n) break;
    x = next;
  }
  while (x * x > n) x -= 1n;
  while ((x + 1n) * (x + 1n) <= n) x += 1n;
  return x;
}
