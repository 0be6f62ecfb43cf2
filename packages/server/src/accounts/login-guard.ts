/**
 * Slows password guessing on sign-in and sign-up, before any password is hashed:
 * - a per-minute budget of attempts per client address (IPv6 counted by /64) and, for sign-in, per
 *   email, in the shared rate limiter (so several instances on Redis share it);
 * - exponential backoff after repeated failures, per address and per (email, address) pair: after
 *   a few failures each further attempt must wait 1 s, 2 s, 4 s … up to 15 minutes since the last
 *   failure. The pair, not the email alone, so that someone failing on purpose from elsewhere
 *   cannot lock the owner out with it; the per-email budget still caps a guessing campaign spread
 *   over many addresses. Backoff state lives in this process (bounded), the budgets in the limiter.
 */
import { addressBucket } from "../http/client-address";
import { AppError } from "../http/errors";
import type { Clock } from "../infra/clock";
import { sha256Hex } from "../infra/hashing";
import type { LimitDecision, RateLimiter } from "../infra/limiter/limiter";

/** Failures allowed before backoff starts: per (email, address) pair, and per address (NATs). */
const FREE_FAILURES_PAIR = 5;
const FREE_FAILURES_ADDRESS = 20;
const MAX_BACKOFF_MS = 15 * 60_000;
/** A run of failures is forgotten this long after its last one. */
const FAILURE_MEMORY_MS = 60 * 60_000;
/** Subjects tracked at once; past it the oldest are dropped (an attacker cannot grow memory). */
const MAX_TRACKED = 100_000;

interface Failures {
  count: number;
  lastMs: number;
}

export class LoginGuard {
  /** subject -> its current run of failures; Map order is insertion order, oldest first. */
  readonly #failures = new Map<string, Failures>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly clock: Clock,
    private readonly attemptsPerMinute: number,
  ) {}

  /** Throws 429 RATE_LIMITED (with Retry-After) when this attempt must not be tried now. */
  async admit(address: string, email?: string): Promise<void> {
    const now = this.clock.now();
    const subjects = this.#subjects(address, email);
    for (const [subject, free] of [
      [subjects.address, FREE_FAILURES_ADDRESS],
      ...(subjects.pair ? [[subjects.pair, FREE_FAILURES_PAIR] as const] : []),
    ] as const) {
      const waitMs = this.#backoffLeft(subject, free, now);
      if (waitMs > 0) {
        const seconds = Math.ceil(waitMs / 1000);
        throw new AppError(
          "RATE_LIMITED",
          `Too many failed sign-ins; wait ${seconds} s before trying again`,
          { reason: "backoff", retry_after_seconds: seconds },
        ).withHeaders({ "Retry-After": String(seconds) });
      }
    }
    const budgets = [`login:addr:${subjects.address}`];
    if (subjects.email) budgets.push(`login:email:${subjects.email}`);
    for (const subject of budgets) {
      const decision = await this.limiter.consume(subject, this.attemptsPerMinute, now);
      if (!decision.allowed) throw tooManyAttempts(decision);
    }
  }

  /**
   * One guarded sign-in (the API's and the console's): admitted first (429 when it must wait), then
   * `attempt`; its refusal (UNAUTHORIZED) extends the backoff, its success clears the pair's run.
   */
  async signIn<T>(address: string, email: string, attempt: () => Promise<T>): Promise<T> {
    await this.admit(address, email);
    let result: T;
    try {
      result = await attempt();
    } catch (error) {
      if (error instanceof AppError && error.code === "UNAUTHORIZED") this.failed(address, email);
      throw error;
    }
    this.succeeded(address, email);
    return result;
  }

  /** A wrong password (or unknown email): extends the backoff of the address and the pair. */
  failed(address: string, email: string): void {
    const now = this.clock.now();
    const { address: bucket, pair } = this.#subjects(address, email);
    for (const subject of [bucket, pair!]) {
      const previous = this.#failures.get(subject);
      const fresh = !previous || now - previous.lastMs > FAILURE_MEMORY_MS;
      this.#failures.delete(subject);
      this.#failures.set(subject, { count: fresh ? 1 : previous.count + 1, lastMs: now });
    }
    while (this.#failures.size > MAX_TRACKED) {
      this.#failures.delete(this.#failures.keys().next().value!);
    }
  }

  /** A sign-in that worked clears the pair's run; the address's run clears with time. */
  succeeded(address: string, email: string): void {
    const { pair } = this.#subjects(address, email);
    this.#failures.delete(pair!);
  }

  #subjects(address: string, email: string | undefined) {
    const bucket = addressBucket(address);
    const emailHash = email === undefined ? undefined : sha256Hex(email.trim().toLowerCase()).slice(0, 32);
    return {
      address: bucket,
      email: emailHash,
      pair: emailHash === undefined ? undefined : `${emailHash}@${bucket}`,
    };
  }

  #backoffLeft(subject: string, free: number, now: number): number {
    const run = this.#failures.get(subject);
    if (!run || run.count < free || now - run.lastMs > FAILURE_MEMORY_MS) return 0;
    const backoff = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (run.count - free));
    return run.lastMs + backoff - now;
  }
}

function tooManyAttempts(decision: LimitDecision): AppError {
  return new AppError("RATE_LIMITED", "Too many sign-in attempts; wait and retry", {
    limit: decision.limit,
    remaining: decision.remaining,
    reset_seconds: decision.resetSeconds,
  }).withHeaders({ "Retry-After": String(decision.resetSeconds) });
}
