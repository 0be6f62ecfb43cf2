/**
 * Prefixed, time-sortable identifiers (`ord_…`, `key_…`, `evt_…`): a 48-bit millisecond timestamp
 * and 80 random bits in Crockford base32, ULID style, so ids sort by creation time in both stores.
 * Within one millisecond the random part is incremented, keeping ids from one process ordered.
 */
import { randomBytes, randomFillSync } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

let lastTime = -1;
/** `lastTime` in base32 (10 characters): every id of one millisecond shares it. */
let lastTimeText = "";
/** The 80 random bits of the last id as 16 base32 digits (5 bits each), most significant first. */
const randomDigits = new Uint8Array(16);
/** The first 15 of those digits as text: an increment usually changes only the last one. */
let randomHead = "";

function encodeTime(ms: number): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function encodeHead(): string {
  let out = "";
  for (let i = 0; i < 15; i++) out += ALPHABET[randomDigits[i]!];
  return out;
}

/**
 * Adds one to the 80-bit random part (16 digits of 5 bits: the same number, so the same +1 as on
 * bytes), wrapping at the top. Returns whether a digit other than the last changed.
 */
function incrementRandom(): boolean {
  for (let i = 15; i >= 0; i--) {
    const digit = randomDigits[i]!;
    if (digit < 31) {
      randomDigits[i] = digit + 1;
      return i < 15;
    }
    randomDigits[i] = 0;
  }
  return true;
}

/**
 * Random bytes drawn from the OS 4 KiB at a time: one call per 409 ids instead of one per id (every
 * request gets an id, and a crypto call per request showed up in profiles).
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;
const drawn = new Uint8Array(10);

/** 80 fresh random bits into `randomDigits`. */
function drawRandom(): void {
  if (poolOffset + drawn.length > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  drawn.set(pool.subarray(poolOffset, poolOffset + drawn.length));
  poolOffset += drawn.length;
  let buffer = 0;
  let bits = 0;
  let digit = 0;
  for (const byte of drawn) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      randomDigits[digit++] = (buffer >> bits) & 31;
    }
    buffer &= (1 << bits) - 1;
  }
}

/**
 * A ULID-like body (26 characters), monotonic within this process. Every request gets one (its
 * request id), so the time and the first 15 random characters are kept as text between calls.
 */
export function ulid(nowMs: number = Date.now()): string {
  if (nowMs === lastTime) {
    if (incrementRandom()) randomHead = encodeHead();
  } else {
    lastTime = nowMs;
    lastTimeText = encodeTime(nowMs);
    drawRandom();
    randomHead = encodeHead();
  }
  return lastTimeText + randomHead + ALPHABET[randomDigits[15]!];
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
