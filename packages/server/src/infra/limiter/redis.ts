import { Redis } from "ioredis";
import { decide, type LimitDecision, type RateLimiter, WINDOW_MS } from "./limiter";

// Increment and set the expiry in one step, so a crash between the two cannot leave a counter
// that never expires.
const CONSUME = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

export class RedisRateLimiter implements RateLimiter {
  readonly kind = "redis" as const;
  readonly #redis: Redis;

  constructor(
    url: string,
    private readonly prefix = "crossbook:",
  ) {
    this.#redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.#redis.defineCommand("crossbookConsume", { numberOfKeys: 1, lua: CONSUME });
  }

  async consume(subject: string, limit: number, nowMs: number): Promise<LimitDecision> {
    const window = Math.floor(nowMs / WINDOW_MS);
    const key = `${this.prefix}rl:${subject}:${window}`;
    // Keep the counter a little past its window so clock skew between instances cannot reopen it.
    const ttl = (window + 1) * WINDOW_MS - nowMs + 5_000;
    const count = (await (
      this.#redis as unknown as { crossbookConsume(key: string, ttl: number): Promise<number> }
    ).crossbookConsume(key, ttl)) as number;
    return decide(Number(count), limit, nowMs);
  }

  async ping(): Promise<void> {
    await this.#redis.ping();
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}
