/**
 * Deterministic randomness for the fakes: a seeded PRNG (mulberry32) and a text hash to seed
 * per-market generators, so the same seed always builds the same world and simulation.
 */
import { createHash } from "node:crypto";

export class Rng {
  private state: number;
  /** `zeroSeed` replaces a seed of 0, which would make mulberry32 start from nothing. */
  constructor(seed: number, zeroSeed = 0x9e3779b9) {
    this.state = seed >>> 0 || zeroSeed;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
}

/**
 * The same generator as a plain function (a seed of 0 kept as 0), for tests and benches across the
 * packages that replay the same inputs on every run.
 */
export function seededRandom(seed: number): () => number {
  const rng = new Rng(seed, 0);
  return () => rng.next();
}

/** 32-bit hash of text, for seeding per-market generators. */
export function hash32(text: string): number {
  return Number.parseInt(createHash("sha256").update(text).digest("hex").slice(0, 8), 16);
}
