/**
 * Per-subject request budgets in fixed one-minute windows aligned to the clock's minutes: the
 * (limit+1)-th request inside a window is refused, and the budget is whole again when the next
 * minute starts. Exact on both implementations: the in-memory one counts in this process, the Redis
 * one counts atomically (INCR with expiry in one script) so several instances share one budget.
 */
export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
}

export interface RateLimiter {
  readonly kind: "memory" | "redis";
  consume(subject: string, limit: number, nowMs: number): Promise<LimitDecision>;
  /** Present when the limiter can decide without I/O (in-memory): the hot path skips a promise. */
  consumeSync?(subject: string, limit: number, nowMs: number): LimitDecision;
  close(): Promise<void>;
}

export const WINDOW_MS = 60_000;

export function decide(count: number, limit: number, nowMs: number): LimitDecision {
  const windowEnd = (Math.floor(nowMs / WINDOW_MS) + 1) * WINDOW_MS;
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil((windowEnd - nowMs) / 1000)),
  };
}
