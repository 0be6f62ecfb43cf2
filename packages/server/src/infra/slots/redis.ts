import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { type ConnectionSlots, SLOT_TTL_MS } from "./slots";

// Drop expired members, then add ours only if there is room: one atomic step, so two instances
// racing for the last slot cannot both get it.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

type SlotCommands = {
  crossbookAcquireSlot(
    key: string,
    now: number,
    limit: number,
    expiry: number,
    token: string,
    ttl: number,
  ): Promise<number>;
};

export class RedisConnectionSlots implements ConnectionSlots {
  readonly kind = "redis" as const;
  readonly #redis: Redis;

  constructor(
    url: string,
    private readonly prefix = "crossbook:",
  ) {
    this.#redis = new Redis(url, { maxRetriesPerRequest: 2 });
    this.#redis.defineCommand("crossbookAcquireSlot", { numberOfKeys: 1, lua: ACQUIRE });
  }

  #key(subject: string): string {
    return `${this.prefix}slots:${subject}`;
  }

  async acquire(subject: string, limit: number, nowMs: number): Promise<string | null> {
    const token = randomUUID();
    const ok = await (this.#redis as unknown as SlotCommands).crossbookAcquireSlot(
      this.#key(subject),
      nowMs,
      limit,
      nowMs + SLOT_TTL_MS,
      token,
      SLOT_TTL_MS * 2,
    );
    return Number(ok) === 1 ? token : null;
  }

  async release(subject: string, token: string): Promise<void> {
    await this.#redis.zrem(this.#key(subject), token);
  }

  async refresh(held: ReadonlyArray<{ subject: string; token: string }>, nowMs: number): Promise<void> {
    if (held.length === 0) return;
    const pipeline = this.#redis.pipeline();
    for (const { subject, token } of held) {
      // XX: only members that still exist (a released slot must not come back).
      pipeline.zadd(this.#key(subject), "XX", nowMs + SLOT_TTL_MS, token);
      pipeline.pexpire(this.#key(subject), SLOT_TTL_MS * 2);
    }
    await pipeline.exec();
  }

  async count(subject: string, nowMs: number): Promise<number> {
    return this.#redis.zcount(this.#key(subject), nowMs, "+inf");
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}
