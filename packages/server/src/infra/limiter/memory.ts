import { decide, type LimitDecision, type RateLimiter, WINDOW_MS } from "./limiter";

export class MemoryRateLimiter implements RateLimiter {
  readonly kind = "memory" as const;
  readonly #counters = new Map<string, { window: number; count: number }>();
  #lastSweepWindow = 0;

  async consume(subject: string, limit: number, nowMs: number): Promise<LimitDecision> {
    return this.consumeSync(subject, limit, nowMs);
  }

  consumeSync(subject: string, limit: number, nowMs: number): LimitDecision {
    const window = Math.floor(nowMs / WINDOW_MS);
    if (window > this.#lastSweepWindow) this.#sweep(window);
    let counter = this.#counters.get(subject);
    if (!counter || counter.window !== window) {
      counter = { window, count: 0 };
      this.#counters.set(subject, counter);
    }
    counter.count += 1;
    return decide(counter.count, limit, nowMs);
  }

  /** Drops counters of past windows so memory follows the number of active subjects. */
  #sweep(window: number): void {
    this.#lastSweepWindow = window;
    for (const [subject, counter] of this.#counters) {
      if (counter.window < window) this.#counters.delete(subject);
    }
  }

  async close(): Promise<void> {
    this.#counters.clear();
  }
}
