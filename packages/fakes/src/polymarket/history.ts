/**
 * Deterministic price history for `GET /prices-history`: before the fake started, a smooth seeded
 * walk that lands on the market's starting fair price; after it, the real prints of this run.
 * The same seed and the same timestamp always give the same point. Wire format: VENUES.md §1.3.
 * The venue's limits (VENUES-AUDIT #6, observed by third parties, unverified): an explicit
 * `startTs`..`endTs` spans at most 15 days, and a closed or resolved market has nothing below
 * 720-minute fidelity.
 */
import type { PmMarket } from "./state";
import { hash32, PRICE_SCALE } from "./units";

const HOUR = 3600;

/** Hashed noise in [-1, 1] for an integer lattice point. */
function lattice(seed: number, key: string, i: number): number {
  return (hash32(`${seed}:hist:${key}:${i}`) / 0xffffffff) * 2 - 1;
}

/** Smooth value noise: lattice points every 6 h, cosine-interpolated, plus an hourly wiggle. */
function noise(seed: number, key: string, t: number): number {
  const span = 6 * HOUR;
  const i = Math.floor(t / span);
  const f = (t - i * span) / span;
  const w = (1 - Math.cos(f * Math.PI)) / 2;
  const coarse = lattice(seed, key, i) * (1 - w) + lattice(seed, key, i + 1) * w;
  const fine = lattice(seed, `${key}:h`, Math.floor(t / HOUR)) * 0.15;
  return coarse + fine;
}

/** YES probability at unix second `t` (synthetic part, before `anchorS`). */
export function syntheticYes(
  seed: number,
  m: PmMarket,
  t: number,
  anchorS: number,
  anchorPrice: number,
): number {
  const base = anchorPrice / PRICE_SCALE;
  const ageDays = Math.max(0, (anchorS - t) / 86_400);
  // Further back in time, wider swings; converge on the anchor as t → anchor.
  const amp = Math.min(0.25, 0.02 + ageDays * 0.01) * Math.min(base, 1 - base) * 2;
  const p = base + amp * (noise(seed, m.seed.key, t) - noise(seed, m.seed.key, anchorS));
  return Math.min(0.999, Math.max(0.001, Math.round(p * 1000) / 1000));
}

/** Longest `endTs − startTs` one request may ask for: 15 days = 1,296,000 s (observed). */
export const MAX_WINDOW_SECONDS = 15 * 86_400;
/** Finest fidelity (minutes) served for a closed or resolved market (Polymarket/py-clob-client#216). */
export const CLOSED_MIN_FIDELITY = 720;

/** YES probability at unix second `t`: the synthetic walk before `anchorS`, then the last print (or the anchor). */
export function yesAt(seed: number, m: PmMarket, t: number, anchorS: number, anchorPrice: number): number {
  if (t < anchorS) return syntheticYes(seed, m, t, anchorS, anchorPrice);
  let lo = 0;
  let hi = m.prints.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (m.prints[mid]!.t <= t) lo = mid + 1;
    else hi = mid;
  }
  return (lo > 0 ? m.prints[lo - 1]!.p : anchorPrice) / PRICE_SCALE;
}

export const INTERVAL_SECONDS: Record<string, number> = {
  "1h": HOUR,
  "6h": 6 * HOUR,
  "1d": 24 * HOUR,
  "1w": 7 * 24 * HOUR,
  "1m": 30 * 24 * HOUR,
  max: 90 * 24 * HOUR,
  all: 90 * 24 * HOUR,
};

/** Points `{t, p}` for a token between startTs and endTs (unix s) every `fidelity` minutes. */
export function history(
  seed: number,
  m: PmMarket,
  tokenIsYes: boolean,
  startTs: number,
  endTs: number,
  fidelityMin: number,
  anchorS: number,
  anchorPrice: number,
): { t: number; p: number }[] {
  const step = Math.max(1, Math.floor(fidelityMin)) * 60;
  const out: { t: number; p: number }[] = [];
  const first = Math.ceil(startTs / step) * step;
  const maxPoints = 20_000;
  const prints = m.prints;
  let pi = 0;
  let lastPrint: number | null = null;
  for (let t = first; t <= endTs && out.length < maxPoints; t += step) {
    let yes: number;
    if (t < anchorS) {
      yes = syntheticYes(seed, m, t, anchorS, anchorPrice);
    } else {
      while (pi < prints.length && prints[pi]!.t <= t) {
        lastPrint = prints[pi]!.p;
        pi += 1;
      }
      yes = (lastPrint ?? anchorPrice) / PRICE_SCALE;
    }
    const p = tokenIsYes ? yes : Math.round((1 - yes) * 10_000) / 10_000;
    out.push({ t, p });
  }
  return out;
}
