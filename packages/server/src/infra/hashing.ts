/**
 * Hashes for secrets we must recognise but never store: API keys and session tokens are high-entropy,
 * so a SHA-256 digest is enough (and fast on the hot path); passwords are low-entropy, so scrypt.
 * Every comparison of secret-derived bytes is constant-time.
 */
import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

const scrypt = promisify(scryptCallback) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  if (left.length !== right.length) {
    // Compare against itself so the time taken does not depend on where the inputs differ.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

// OWASP's scrypt floor is N=2^17, r=8, p=1; tests lower the cost through config.
export const DEFAULT_SCRYPT_LOG2_N = 17;
const MAX_MEMORY = 256 * 1024 * 1024;
const KEY_LENGTH = 32;

/** `scrypt$N$r$p$salt$hash`, self-describing so the cost can be raised later. */
export async function hashPassword(password: string, log2N = DEFAULT_SCRYPT_LOG2_N): Promise<string> {
  const salt = randomBytes(16);
  const params = { N: 2 ** log2N, r: 8, p: 1, maxmem: MAX_MEMORY };
  const hash = await scrypt(password, salt, KEY_LENGTH, params);
  return [
    "scrypt",
    params.N,
    params.r,
    params.p,
    salt.toString("base64url"),
    hash.toString("base64url"),
  ].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const actual = await scrypt(password, Buffer.from(salt, "base64url"), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: MAX_MEMORY,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash to compare against when the account does not exist, so timing does not reveal it. */
const dummyHashes = new Map<number, Promise<string>>();
export function dummyPasswordHash(log2N = DEFAULT_SCRYPT_LOG2_N): Promise<string> {
  let hash = dummyHashes.get(log2N);
  if (!hash) {
    hash = hashPassword(randomBytes(16).toString("hex"), log2N);
    dummyHashes.set(log2N, hash);
  }
  return hash;
}

/**
 * Caps how many password hashes run at once. scrypt at the default cost holds 128 MiB while it
 * runs, so a flood of sign-ins must queue rather than exhaust memory; past `maxWaiting` queued
 * callers, `run` fails at once with `HashQueueFull` (the HTTP layer answers 503, retryable).
 */
export class HashLimiter {
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(
    readonly maxConcurrent: number,
    readonly maxWaiting: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running >= this.maxConcurrent) {
      if (this.#waiting.length >= this.maxWaiting) throw new HashQueueFull();
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running += 1;
    }
    try {
      return await work();
    } finally {
      // Hand the slot straight to the next caller, or free it.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiting.length;
  }
}

export class HashQueueFull extends Error {
  constructor() {
    super("too many password checks are queued");
    this.name = "HashQueueFull";
  }
}
