/**
 * Prefixed, time-sortable identifiers (`ord_…`, `key_…`, `evt_…`): a 48-bit millisecond timestamp
 * and 80 random bits in Crockford base32, ULID style, so ids sort by creation time in both stores.
 * Within one millisecond the random part is incremented, keeping ids from one process ordered.
 */
import { randomBytes, randomFillSync } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

let lastTime = -1;
const lastRandom = new Uint8Array(10);

function encodeTime(ms: number): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits -> 16 base32 characters, 5 bits at a time.
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

function incrementRandom(): void {
  for (let i = lastRandom.length - 1; i >= 0; i--) {
    const value = lastRandom[i]!;
    if (value < 255) {
      lastRandom[i] = value + 1;
      return;
    }
    lastRandom[i] = 0;
  }
}

/**
 * Random bytes drawn from the OS 4 KiB at a time: one call per 409 ids instead of one per id (every
 * request gets an id, and a crypto call per request showed up in profiles).
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function fillRandom(target: Uint8Array): void {
  if (poolOffset + target.length > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  target.set(pool.subarray(poolOffset, poolOffset + target.length));
  poolOffset += target.length;
}

/** A ULID-like body (26 characters), monotonic within this process. */
export function ulid(nowMs: number = Date.now()): string {
  if (nowMs === lastTime) {
    incrementRandom();
  } else {
    lastTime = nowMs;
    fillRandom(lastRandom);
  }
  return encodeTime(nowMs) + encodeRandom(lastRandom);
}

export type IdPrefix =
  | "acc"
  | "ses"
  | "key"
  | "evt"
  | "req"
  | "ord"
  | "trf"
  | "fil"
  | "pos"
  | "wh"
  | "whd"
  | "wha"
  | "alt"
  | "mat"
  | "xev"
  | "vcr";

export function newId(prefix: IdPrefix, nowMs?: number): string {
  return `${prefix}_${ulid(nowMs)}`;
}

/** URL-safe random secret with `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}
