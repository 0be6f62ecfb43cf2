/**
 * Per-key rate limits through the full stack, with an injected clock, on the in-memory limiter and
 * (when configured) on Redis, where two instances share one budget.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createKey, createTestApp, setAccount, signup, type TestApp } from "../support/app";
import { INFRA_BACKENDS } from "../support/backends";

describe.each(INFRA_BACKENDS)("rate limits on the %s limiter", (infra) => {
  let t: TestApp & { redisPrefix: string };
  beforeAll(async () => {
    t = await createTestApp({ infra });
    // Start at the very beginning of a minute so the window is whole.
    t.clock.set(Date.UTC(2026, 10, 22, 12, 0, 0));
  });
  afterAll(() => t.close());

  const get = (key: string) => t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(key) });

  it("refuses the 61st request of a free key within a minute, with headers and details", async () => {
    const { session } = await signup(t.app);
    const { key } = await createKey(t.app, session, { type: "read_only" });
    for (let i = 1; i <= 60; i++) {
      const response = await get(key);
      expect(response.statusCode).toBe(200);
      expect(response.headers["ratelimit-limit"]).toBe("60");
      expect(response.headers["ratelimit-remaining"]).toBe(String(60 - i));
      expect(response.headers["x-ratelimit-remaining"]).toBe(String(60 - i));
      if (i === 30) t.clock.advance(20_000);
    }
    const refused = await get(key);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      success: false,
      error: {
        code: "RATE_LIMITED",
        message: expect.stringContaining("60 requests per minute"),
        details: { limit: 60, remaining: 0, reset_seconds: 40 },
      },
    });
    expect(refused.headers["retry-after"]).toBe("40");
    expect(refused.headers["ratelimit-reset"]).toBe("40");
    expect(refused.headers["x-ratelimit-limit"]).toBe("60");
    expect(refused.headers["x-ratelimit-reset"]).toBe("40");

    t.clock.advance(40_000);
    const next = await get(key);
    expect(next.statusCode).toBe(200);
    expect(next.headers["ratelimit-remaining"]).toBe("59");
  });

  it("counts each key separately", async () => {
    const { session } = await signup(t.app);
    const a = await createKey(t.app, session, { type: "read_only" });
    const b = await createKey(t.app, session, { type: "read_only" });
    for (let i = 0; i < 61; i++) await get(a.key);
    expect((await get(a.key)).statusCode).toBe(429);
    expect((await get(b.key)).statusCode).toBe(200);
  });

  it("gives pro keys 300, agent keys their plan's rate, and enterprise a custom figure", async () => {
    const { session, accountId } = await signup(t.app);
    await setAccount(t.services, accountId, { tier: "pro" });
    const pro = await createKey(t.app, session, { type: "trading" });
    expect((await get(pro.key)).headers["ratelimit-limit"]).toBe("300");
    const agent = await createKey(t.app, session, { type: "agent", permissions: ["read"] });
    expect((await get(agent.key)).headers["ratelimit-limit"]).toBe("1000");
    await setAccount(t.services, accountId, { plan: "agent" });
    const agent2 = await createKey(t.app, session, { type: "agent", permissions: ["read"] });
    expect((await get(agent2.key)).headers["ratelimit-limit"]).toBe("10000");
    await setAccount(t.services, accountId, {
      tier: "enterprise",
      plan: "enterprise",
      rate_limit_per_minute: 1234,
      agent_rate_limit_per_minute: 54321,
    });
    const ent = await createKey(t.app, session, { type: "read_only" });
    expect((await get(ent.key)).headers["ratelimit-limit"]).toBe("1234");
    const entAgent = await createKey(t.app, session, { type: "agent" });
    expect((await get(entAgent.key)).headers["ratelimit-limit"]).toBe("54321");
  });

  it("exempts public routes and does not add headers to them", async () => {
    const response = await t.app.inject({ method: "GET", url: "/healthz" });
    expect(response.headers["ratelimit-limit"]).toBeUndefined();
  });

  if (infra === "redis") {
    it("shares one budget across two instances", async () => {
      const second = await createTestApp({
        infra,
        clock: t.clock,
        shareWith: { redisPrefix: t.redisPrefix },
      });
      try {
        // Both instances need the same key: create it through the first app's store, then copy the row.
        const { session } = await signup(t.app);
        const { key, id } = await createKey(t.app, session, { type: "read_only" });
        const row = await t.runtime.store.db
          .selectFrom("api_keys")
          .selectAll()
          .where("id", "=", id)
          .executeTakeFirstOrThrow();
        const account = await t.runtime.store.db
          .selectFrom("accounts")
          .selectAll()
          .where("id", "=", row.account_id)
          .executeTakeFirstOrThrow();
        await second.runtime.store.db.insertInto("accounts").values(account).execute();
        await second.runtime.store.db.insertInto("api_keys").values(row).execute();

        for (let i = 0; i < 30; i++) expect((await get(key)).statusCode).toBe(200);
        for (let i = 0; i < 30; i++) {
          const response = await second.app.inject({
            method: "GET",
            url: "/v1/account",
            headers: bearer(key),
          });
          expect(response.statusCode).toBe(200);
        }
        const refused = await second.app.inject({ method: "GET", url: "/v1/account", headers: bearer(key) });
        expect(refused.statusCode).toBe(429);
        expect((await get(key)).statusCode).toBe(429);
      } finally {
        await second.close();
      }
    });
  }
});
