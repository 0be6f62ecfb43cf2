/**
 * Delivery from the outbox: only subscribed types, the body and headers, order per webhook, the
 * full retry schedule on an injected clock, failed after the sixth attempt, re-enable and resume,
 * Retry-After, and tenant isolation of events.
 */
import { createHmac } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bearer, createKey, signup } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { deposit, FAIL500, OK, orderCancelled, record, register, webhooksApp } from "./setup";

describe.each(STORE_BACKENDS)("on %s", (store) => {
  let s: Awaited<ReturnType<typeof webhooksApp>>;
  beforeEach(async () => {
    s = await webhooksApp({ store });
  });
  afterEach(async () => {
    await s.t.close();
  });
  const run = () => s.t.services.webhookDispatcher.runOnce();

  it("sends only subscribed types, signed, with the spec's body and headers", async () => {
    const hook = await register(s.t.app, s.key, {
      url: "https://hooks.example.com/in",
      events: ["order.cancelled"],
      secret: "a-very-secret-value-123",
    });
    expect(hook).not.toHaveProperty("secret");
    await record(s.t, "deposit.completed", deposit("trf_1"), s.accountId);
    const event = await record(s.t, "order.cancelled", orderCancelled("ord_1"), s.accountId);
    await run();
    expect(s.receiver.sent).toHaveLength(1);
    const [sent] = s.receiver.sent;
    expect(sent!.url).toBe("https://hooks.example.com/in");
    expect(sent!.json).toMatchObject({ type: "order.cancelled", data: { order_id: "ord_1" } });
    expect(sent!.json.id).toMatch(/^whd_/);
    expect(sent!.headers["content-type"]).toBe("application/json");
    expect(sent!.headers["x-service-event"]).toBe("order.cancelled");
    expect(sent!.headers["x-service-delivery-id"]).toBe(sent!.json.id);
    const timestamp = sent!.headers["x-service-timestamp"]!;
    expect(timestamp).toBe(String(Math.floor(s.t.clock.now() / 1000)));
    const expected = createHmac("sha256", "a-very-secret-value-123")
      .update(`${timestamp}.${sent!.body}`)
      .digest("hex");
    expect(sent!.headers["x-service-signature"]).toBe(`sha256=${expected}`);
    expect(event.id).toMatch(/^evt_/);
    // Nothing more to send.
    await run();
    expect(s.receiver.sent).toHaveLength(1);
  });

  it("delivers a webhook's events in the order they were recorded, one at a time", async () => {
    await register(s.t.app, s.key, { url: "https://hooks.example.com/in", events: ["order.cancelled"] });
    for (let i = 0; i < 5; i++) await record(s.t, "order.cancelled", orderCancelled(`ord_${i}`), s.accountId);
    for (let i = 0; i < 5; i++) await run();
    expect(s.receiver.sent.map((x) => x.json.data["order_id"])).toEqual([
      "ord_0",
      "ord_1",
      "ord_2",
      "ord_3",
      "ord_4",
    ]);
  });

  it("retries on the spec's schedule, keeps the delivery id, and fails the webhook after the sixth attempt", async () => {
    const hook = await register(s.t.app, s.key, {
      url: "https://hooks.example.com/in",
      events: ["order.cancelled"],
    });
    s.receiver.answer = () => FAIL500;
    await record(s.t, "order.cancelled", orderCancelled("ord_a"), s.accountId);
    await record(s.t, "order.cancelled", orderCancelled("ord_b"), s.accountId);
    const start = s.t.clock.now();
    await run(); // attempt 1 at once
    const delays = [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000];
    for (const delay of delays) {
      // Never earlier than the schedule says.
      s.t.clock.advance(delay - 1_000);
      await run();
      expect(s.receiver.sent.length).toBe(delays.indexOf(delay) + 1);
      s.t.clock.advance(1_000);
      await run();
    }
    expect(s.receiver.sent).toHaveLength(6);
    expect(new Set(s.receiver.sent.map((x) => x.json.id)).size).toBe(1);
    expect(s.receiver.sent.every((x) => x.json.data["order_id"] === "ord_a")).toBe(true);
    const offsets = s.receiver.sent.map((x) => x.at - start);
    expect(offsets).toEqual([0, 60_000, 360_000, 2_160_000, 9_360_000, 52_560_000]);
    const view = (
      await s.t.app.inject({ method: "GET", url: `/v1/webhooks/${hook.id}`, headers: bearer(s.key) })
    ).json().data;
    expect(view.status).toBe("failed");
    // Failed: nothing more is sent, however long we wait.
    s.t.clock.advance(48 * 3_600_000);
    await run();
    expect(s.receiver.sent).toHaveLength(6);
    const records = (
      await s.t.app.inject({
        method: "GET",
        url: `/v1/webhooks/${hook.id}/deliveries?limit=10`,
        headers: bearer(s.key),
      })
    ).json().data;
    expect(records).toHaveLength(6);
    expect(records[0]).toMatchObject({
      status: "failed",
      response_code: 500,
      retry_count: 5,
      error: "HTTP 500",
    });
    expect(records.at(-1)).toMatchObject({ retry_count: 0 });

    // Re-enabled: the waiting deliveries resume, in order.
    s.receiver.answer = () => OK;
    const patched = await s.t.app.inject({
      method: "PATCH",
      url: `/v1/webhooks/${hook.id}`,
      headers: bearer(s.key),
      payload: { status: "active" },
    });
    expect(patched.json().data.status).toBe("active");
    await run();
    await run();
    expect(s.receiver.sent.slice(6).map((x) => x.json.data["order_id"])).toEqual(["ord_a", "ord_b"]);
    expect(s.receiver.sent[6]!.json.id).toBe(s.receiver.sent[0]!.json.id);
  });

  it("a run cut short by its time goes on with the rest, in order, each sent once and recorded", async () => {
    const hook = await register(s.t.app, s.key, {
      url: "https://hooks.example.com/in",
      events: ["order.cancelled"],
    });
    for (let i = 0; i < 5; i++) await record(s.t, "order.cancelled", orderCancelled(`ord_${i}`), s.accountId);
    // Every attempt takes 300 ms: each run ends after one send, is recorded, and the next goes on.
    s.receiver.answer = () => {
      s.t.clock.advance(300);
      return OK;
    };
    await run();
    expect(s.receiver.sent.map((x) => x.json.data["order_id"])).toEqual([
      "ord_0",
      "ord_1",
      "ord_2",
      "ord_3",
      "ord_4",
    ]);
    const records = (
      await s.t.app.inject({
        method: "GET",
        url: `/v1/webhooks/${hook.id}/deliveries?limit=10`,
        headers: bearer(s.key),
      })
    ).json().data as Array<{ status: string; retry_count: number }>;
    expect(records).toHaveLength(5);
    expect(records.every((r) => r.status === "success" && r.retry_count === 0)).toBe(true);
    await run();
    expect(s.receiver.sent).toHaveLength(5);
  });

  it("after its lease lapsed, a dispatcher reads the queue again instead of trusting the rest of its run", async () => {
    await register(s.t.app, s.key, { url: "https://hooks.example.com/in", events: ["order.cancelled"] });
    for (let i = 0; i < 3; i++) await record(s.t, "order.cancelled", orderCancelled(`ord_${i}`), s.accountId);
    let first = true;
    s.receiver.answer = async () => {
      if (first) {
        first = false;
        // The first attempt outlives the lease (30 s), and meanwhile another instance, which took
        // the lapsed lease, delivered the next event.
        s.t.clock.advance(31_000);
        await s.t.runtime.store.db
          .updateTable("webhook_deliveries")
          .set({ status: "success" })
          .where("body", "like", '%"ord_1"%')
          .execute();
      }
      return OK;
    };
    await run();
    expect(s.receiver.sent.map((x) => x.json.data["order_id"])).toEqual(["ord_0", "ord_2"]);
  });

  it("a failing endpoint holds back only its own webhook", async () => {
    await register(s.t.app, s.key, { url: "https://hooks.example.com/in", events: ["order.cancelled"] });
    await register(s.t.app, s.key, { url: "https://other.example.com/in", events: ["order.cancelled"] });
    s.receiver.answer = (input) => (input.url.includes("hooks.example.com") ? FAIL500 : OK);
    await record(s.t, "order.cancelled", orderCancelled("ord_1"), s.accountId);
    await record(s.t, "order.cancelled", orderCancelled("ord_2"), s.accountId);
    for (let i = 0; i < 3; i++) await run();
    const other = s.receiver.sent.filter((x) => x.url.includes("other.example.com"));
    expect(other.map((x) => x.json.data["order_id"])).toEqual(["ord_1", "ord_2"]);
    const failing = s.receiver.sent.filter((x) => x.url.includes("hooks.example.com"));
    expect(failing.map((x) => x.json.data["order_id"])).toEqual(["ord_1"]);
  });

  it("Retry-After on a 429 can only delay the next attempt", async () => {
    await register(s.t.app, s.key, { url: "https://hooks.example.com/in", events: ["order.cancelled"] });
    s.receiver.answer = () => ({
      ok: false,
      status: 429,
      responseTimeMs: 1,
      error: "HTTP 429",
      retryAfterSeconds: 600,
    });
    await record(s.t, "order.cancelled", orderCancelled("ord_1"), s.accountId);
    await run();
    s.t.clock.advance(60_000);
    await run();
    expect(s.receiver.sent).toHaveLength(1); // the schedule says 1 min; Retry-After says 10
    s.t.clock.advance(540_000);
    await run();
    expect(s.receiver.sent).toHaveLength(2);
    // The second answer asked for 10 minutes too (the schedule says 5): the third attempt waits 10.
    s.receiver.answer = () => ({
      ok: false,
      status: 503,
      responseTimeMs: 1,
      error: "HTTP 503",
      retryAfterSeconds: 1,
    });
    s.t.clock.advance(300_000);
    await run();
    expect(s.receiver.sent).toHaveLength(2);
    s.t.clock.advance(300_000);
    await run();
    expect(s.receiver.sent).toHaveLength(3);
    // A short Retry-After never brings an attempt forward: 30 minutes after the third failure.
    s.t.clock.advance(29 * 60_000);
    await run();
    expect(s.receiver.sent).toHaveLength(3);
    s.t.clock.advance(60_000);
    await run();
    expect(s.receiver.sent).toHaveLength(4);
  });

  it("another account's events never reach a webhook; global events reach every subscriber", async () => {
    await register(s.t.app, s.key, {
      url: "https://hooks.example.com/in",
      events: ["order.cancelled", "market.matched"],
    });
    const other = await signup(s.t.app);
    await record(s.t, "order.cancelled", orderCancelled("theirs"), other.accountId);
    await record(s.t, "order.cancelled", orderCancelled("live-one"), s.accountId, "live");
    await record(
      s.t,
      "market.matched",
      { match_id: "mch_1", confidence: 0.99, platforms: {}, spread: 0.01, spread_pct: 2 },
      null,
      null,
    );
    await run();
    await run();
    expect(s.receiver.sent.map((x) => x.json.type)).toEqual(["market.matched"]);
  });

  it("events recorded before a webhook existed are not sent to it", async () => {
    await record(s.t, "order.cancelled", orderCancelled("old"), s.accountId);
    s.t.clock.advance(1_000);
    await register(s.t.app, s.key, { url: "https://hooks.example.com/in", events: ["order.cancelled"] });
    await run();
    expect(s.receiver.sent).toHaveLength(0);
  });

  it("the test endpoint sends webhook.test now and returns its record", async () => {
    const hook = await register(s.t.app, s.key, {
      url: "https://hooks.example.com/in",
      events: ["order.filled"],
    });
    const response = await s.t.app.inject({
      method: "POST",
      url: `/v1/webhooks/${hook.id}/test`,
      headers: bearer(s.key),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({
      event_type: "webhook.test",
      status: "success",
      response_code: 200,
      retry_count: 0,
    });
    expect(s.receiver.sent[0]!.json).toMatchObject({ type: "webhook.test", data: { webhook_id: hook.id } });
    const other = await signup(s.t.app);
    const otherKey = (await createKey(s.t.app, other.session, { type: "trading", environment: "sandbox" }))
      .key;
    const denied = await s.t.app.inject({
      method: "POST",
      url: `/v1/webhooks/${hook.id}/test`,
      headers: bearer(otherKey),
    });
    expect(denied.statusCode).toBe(404);
  });
});
