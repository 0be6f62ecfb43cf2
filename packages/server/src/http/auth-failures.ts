/**
 * Failed authentication counted per client address (IPv6 by /64), for REST and the price stream
 * alike: an unknown or revoked key, or an unknown or expired session token, spends one of the
 * address's AUTH_FAILURES_PER_MINUTE (in the shared limiter, so instances on Redis count together).
 * Past it the address is blocked until the minute ends: its unknown credentials are answered 429
 * before any store look-up, while keys it already proved (cached) keep working.
 */
import type { Clock } from "../infra/clock";
import type { RateLimiter } from "../infra/limiter/limiter";
import { addressBucket } from "./client-address";
import { AppError } from "./errors";

/** Blocked addresses remembered at once; past it the list starts over (the limiter still counts). */
const MAX_BLOCKED = 10_000;

export class AuthFailures {
  /** Address bucket -> when its block ends (ms). */
  readonly #blocked = new Map<string, number>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly clock: Clock,
    private readonly perMinute: number,
  ) {}

  /** The 429 to answer at once for an address that is blocked, or undefined. No I/O. */
  blocked(address: string): AppError | undefined {
    if (this.#blocked.size === 0) return undefined;
    const bucket = addressBucket(address);
    const until = this.#blocked.get(bucket);
    if (until === undefined) return undefined;
    const now = this.clock.now();
    if (until <= now) {
      this.#blocked.delete(bucket);
      return undefined;
    }
    return tooManyFailures(Math.ceil((until - now) / 1000));
  }

  /** Counts one failure; resolves to the 429 to answer instead when the address is over budget. */
  async record(address: string): Promise<AppError | undefined> {
    const bucket = addressBucket(address);
    const now = this.clock.now();
    const decision = await this.limiter.consume(`authfail:${bucket}`, this.perMinute, now);
    if (decision.allowed) return undefined;
    if (this.#blocked.size >= MAX_BLOCKED) this.#blocked.clear();
    this.#blocked.set(bucket, now + decision.resetSeconds * 1000);
    return tooManyFailures(decision.resetSeconds);
  }
}

function tooManyFailures(retryAfterSeconds: number): AppError {
  return new AppError(
    "RATE_LIMITED",
    `Too many failed authentications from this address; retry in ${retryAfterSeconds} s`,
    { reason: "authentication_failures", reset_seconds: retryAfterSeconds },
  ).withHeaders({ "Retry-After": String(retryAfterSeconds) });
}
