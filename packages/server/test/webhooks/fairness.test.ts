/**
 * Fairness between accounts (issue 18, abuse limits): one account's attempts in flight are capped,
 * so its hanging receivers cannot take every dispatcher slot from other accounts; and an endpoint
 * that keeps timing out is held back by its circuit breaker (cool-down, then a single probe),
 * which only delays attempts: no failure is recorded for a held delivery and none is dropped.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SendOutcome } from "../../src/webhooks/dispatcher";
import { bearer, createKey, signup } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { OK, orderCancelled, record, register, webhooksApp } from "./setup";

const TIMEOUT: SendOutcome = {
  ok: false,
  status: null,
  responseTimeMs: 5_000,
  error: "timeout after 5000 ms",
  retryAfterSeconds: null,
  timedOut: true,
};

describe.each(STORE_BACKENDS)("webhook fairness on %s", (store) => {
  let s: Awaited<ReturnType<typeof webhooksApp>> | undefined;
  afterEach(async () => {
    await s?.t.close();
    s = undefined;
  });

  it("an account's hanging endpoints hold at most its share of the slots; another account's go out meanwhile", async () => {
    const app = await webhooksApp({ store, webhooks: { concurrency: 4, accountConcurrency: 2 } });
    s = app;
    // Account A: five webhooks whose receiver never answers (until the test lets go).
    for (let i = 0; i < 5; i++) {
      await register(app.t.app, app.key, {
        url: `https://hooks.example.com/slow/${i}`,
        events: ["order.cancelled"],
      });
    }
    const b = await signup(app.t.app);
    const bKey = (await createKey(app.t.app, b.session, { type: "trading", environment: "sandbox" })).key;
    await register(app.t.app, bKey, { url: "https://other.example.com/in", events: ["order.cancelled"] });
    // A's events first, B's a second later: oldest first, A's five would fill every slot.
    await record(app.t, "order.cancelled", orderCancelled("ord_a"), app.accountId);
    app.t.clock.advance(1_000);
    await record(app.t, "order.cancelled", orderCancelled("ord_b"), b.accountId);

    const hanging: Array<() => void> = [];
    let letGo = false;
    app.receiver.answer = (input) => {
      if (!input.url.includes("/slow/")) return OK;
      if (letGo) return TIMEOUT;
      return new Promise<SendOutcome>((resolve) => hanging.push(() => resolve(TIMEOUT)));
    };
    const running = app.t.services.webhookDispatcher.runOnce();
    try {
      await vi.waitFor(
        () => {
          expect(app.receiver.sent.map((x) => x.url)).toContain("https://other.example.com/in");
          expect(hanging.length).toBeGreaterThanOrEqual(2);
        },
        { timeout: 5_000 },
      );
      // A few more turns: A still holds two attempts (its cap), not four.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(hanging).toHaveLength(2);
    } finally {
      letGo = true;
      for (const release of hanging.splice(0)) release();
      await running;
    }
  });

  it("holds back an endpoint after repeated timeouts until its cool-down, then sends a single probe", async () => {
    const app = await webhooksApp({
      store,
      webhooks: { breaker: { threshold: 3, cooldownMs: 600_000, maxCooldownMs: 3_600_000 } },
    });
    s = app;
    const run = () => app.t.services.webhookDispatcher.runOnce();
    const hooks: string[] = [];
    for (let i = 0; i < 3; i++) {
      hooks.push(
        (
          await register(app.t.app, app.key, {
            url: `https://hooks.example.com/h/${i}`,
            events: ["order.cancelled"],
          })
        ).id,
      );
    }
    // The same account's webhook on another host: a breaker of its own.
    await register(app.t.app, app.key, { url: "https://other.example.com/in", events: ["order.cancelled"] });
    const start = app.t.clock.now();
    const slow = () => app.receiver.sent.filter((x) => x.url.includes("hooks.example.com"));
    const other = () => app.receiver.sent.filter((x) => x.url.includes("other.example.com"));
    app.receiver.answer = (input) => (input.url.includes("hooks.example.com") ? TIMEOUT : OK);

    await record(app.t, "order.cancelled", orderCancelled("ord_1"), app.accountId);
    await run();
    expect(slow()).toHaveLength(3); // three timeouts in a row: the breaker opens for 10 min

    // The retries are due a minute later (spec schedule), but the endpoint is held.
    app.t.clock.advance(60_000);
    await record(app.t, "order.cancelled", orderCancelled("ord_2"), app.accountId);
    await run();
    expect(slow()).toHaveLength(3);
    // ...while the account's other endpoint is not.
    expect(other().map((x) => x.json.data["order_id"])).toEqual(["ord_1", "ord_2"]);
    app.t.clock.advance(540_000 - 1_000);
    await run();
    expect(slow()).toHaveLength(3);

    // Cool-down over: one probe, not three. It times out: held again, for twice as long.
    app.t.clock.advance(1_000);
    await run();
    await run();
    expect(slow()).toHaveLength(4);
    app.t.clock.advance(1_200_000 - 1_000);
    await run();
    expect(slow()).toHaveLength(4);

    // The next probe gets an answer: the breaker closes and everything held goes out, in order.
    app.receiver.answer = () => OK;
    app.t.clock.advance(1_000);
    await run();
    await run();
    await run();
    expect(slow().map((x) => x.at - start)).toEqual([
      0,
      0,
      0,
      600_000,
      ...Array<number>(slow().length - 4).fill(1_800_000),
    ]);
    let failed = 0;
    for (const id of hooks) {
      const records = (
        await app.t.app.inject({
          method: "GET",
          url: `/v1/webhooks/${id}/deliveries?limit=100`,
          headers: bearer(app.key),
        })
      ).json().data as Array<{ status: string; retry_count: number }>;
      failed += records.filter((r) => r.status === "failed").length;
      // Nothing dropped: both events delivered to each webhook, in order.
      const delivered = slow().filter(
        (x) => x.url.endsWith(`/h/${hooks.indexOf(id)}`) && x.json.data["order_id"],
      );
      expect(delivered.map((x) => x.json.data["order_id"]).slice(-2)).toEqual(["ord_1", "ord_2"]);
    }
    // Only real attempts failed: the three first timeouts and the first probe.
    expect(failed).toBe(4);
    const view = (
      await app.t.app.inject({ method: "GET", url: `/v1/webhooks/${hooks[0]}`, headers: bearer(app.key) })
    ).json().data;
    expect(view.status).toBe("active");
  });
});
