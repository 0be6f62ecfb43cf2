/** One contract for both rate limiters: exact fixed one-minute windows, atomic under concurrency. */
import { afterEach, describe, expect, it } from "vitest";
import type { RateLimiter } from "../../src/infra/limiter/limiter";
import { MemoryRateLimiter } from "../../src/infra/limiter/memory";
import { RedisRateLimiter } from "../../src/infra/limiter/redis";
import { INFRA_BACKENDS, REDIS_URL, uniqueName } from "../support/backends";

const MINUTE = Date.UTC(2026, 10, 22, 12, 0, 0);

describe.each(INFRA_BACKENDS)("%s rate limiter", (backend) => {
  const opened: RateLimiter[] = [];
  const prefix = `${uniqueName("cbrl")}:`;
  const make = () => {
    const limiter = backend === "redis" ? new RedisRateLimiter(REDIS_URL!, prefix) : new MemoryRateLimiter();
    opened.push(limiter);
    return limiter;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((l) => l.close()));
  });

  it("allows exactly `limit` requests per window and reports what is left", async () => {
    const limiter = make();
    for (let i = 1; i <= 5; i++) {
      const decision = await limiter.consume("a", 5, MINUTE + i * 1000);
      expect(decision).toEqual({ allowed: true, limit: 5, remaining: 5 - i, resetSeconds: 60 - i });
    }
    expect(await limiter.consume("a", 5, MINUTE + 59_500)).toEqual({
      allowed: false,
      limit: 5,
      remaining: 0,
      resetSeconds: 1,
    });
    expect((await limiter.consume("a", 5, MINUTE + 60_000)).allowed).toBe(true);
  });

  it("keeps subjects apart", async () => {
    const limiter = make();
    await limiter.consume("x", 1, MINUTE);
    expect((await limiter.consume("x", 1, MINUTE)).allowed).toBe(false);
    expect((await limiter.consume("y", 1, MINUTE)).allowed).toBe(true);
  });

  it("is exact under concurrent requests", async () => {
    const limiter = make();
    const decisions = await Promise.all(
      Array.from({ length: 300 }, () => limiter.consume("burst", 100, MINUTE + 10)),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
  });

  if (backend === "redis") {
    it("shares the budget between two limiter instances", async () => {
      const a = make();
      const b = make();
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).consume("shared", 60, MINUTE + 5)),
      );
      expect(results.filter((d) => d.allowed)).toHaveLength(60);
    });
  }
});
