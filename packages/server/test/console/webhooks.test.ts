/**
 * The console's webhooks pages through their routes: registering (secret generated and shown once,
 * or supplied), the service's refusals as field errors, editing events, a test event, the delivery
 * log with the headers and payload each attempt sent, "retry now" (also when another instance holds
 * the webhook's lease, and on a webhook disabled after its retries ran out), re-enabling, deleting
 * with a confirmation page, and another account's webhook as a 404.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SUBSCRIBABLE_EVENT_TYPES } from "../../src/events/types";
import type { SendInput } from "../../src/webhooks/dispatcher";
import * as repo from "../../src/webhooks/repo";
import { createTestApp, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { deposit, FAIL500, fakeLookup, OK, type Receiver, record } from "../webhooks/setup";
import { ConsoleClient } from "./support";

let address = 0;

describe.each(STORE_BACKENDS)("console webhooks on %s", (store) => {
  let t: TestApp;
  const receiver: Receiver & { sent: Array<SendInput & { at: number }> } = { sent: [], answer: () => OK };
  const fresh = () => new ConsoleClient(t.app, { "x-forwarded-for": `10.8.${store.length}.${++address}` });
  const run = () => t.services.webhookDispatcher.runOnce();
  const db = () => t.runtime.store.db;

  beforeAll(async () => {
    t = await createTestApp({
      store,
      config: { trustProxy: ["loopback"] },
      webhooks: {
        lookup: fakeLookup,
        jitter: 0,
        send: async (input) => {
          receiver.sent.push({ ...input, at: t.clock.now() } as never);
          return receiver.answer(input);
        },
      },
    });
  });
  afterAll(() => t.close());
  beforeEach(() => {
    receiver.sent.length = 0;
    receiver.answer = () => OK;
  });

  /** Registers through the form with the given secret; returns the webhook id. */
  async function registerWebhook(
    c: ConsoleClient,
    url = "https://hooks.example.com/in",
    events = ["deposit.completed"],
    secret = "my-own-secret-0123456789",
  ): Promise<string> {
    await c.get("/console/webhooks");
    const response = await c.post("/console/webhooks", { url, events, secret });
    expect(response.statusCode).toBe(303);
    return /\/console\/webhooks\/(wh_[^/?]+)$/.exec(String(response.headers.location))![1]!;
  }

  /**
   * Records a deposit event for the webhook's account and fans it out. On PostgreSQL the outbox
   * shows an event once no older transaction is open anywhere on the server (other test files'
   * included), so the fan-out is tried until it has taken it.
   */
  async function deposited(webhookId: string, transferId: string): Promise<void> {
    const account = (await repo.webhookById(db(), webhookId))!.account_id;
    await record(t, "deposit.completed", deposit(transferId), account);
    for (let i = 0; i < 200; i++) {
      if ((await t.services.webhookDispatcher.fanOut()) > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error("the event was never fanned out");
  }

  it("sends a signed-out visitor to sign in", async () => {
    const response = await fresh().get("/console/webhooks");
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/console/signin?next=%2Fconsole%2Fwebhooks");
  });

  it("offers every event type the API accepts, each checkbox labelled", async () => {
    const c = fresh();
    await c.signUp();
    const page = await c.get("/console/webhooks");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-testid="no-webhooks"');
    expect(page.body).toContain('<label for="f-url">HTTPS URL</label>');
    expect(page.body).toContain('<label for="f-secret">Signing secret (optional)</label>');
    for (const type of SUBSCRIBABLE_EVENT_TYPES)
      expect(page.body).toContain(`<label><input type="checkbox" name="events" value="${type}" >`);
  });

  it("registers with a generated secret shown once, with a copy button", async () => {
    const c = fresh();
    await c.signUp();
    await c.get("/console/webhooks");
    const answer = await c.post("/console/webhooks", {
      url: "https://hooks.example.com/generated",
      events: ["deposit.completed", "order.filled"],
      secret: "",
    });
    expect(answer.statusCode).toBe(200);
    const secret = /data-testid="webhook-secret">([^<]+)</.exec(answer.body)![1]!;
    expect(secret).toMatch(/^whsec_/);
    expect(answer.body).toContain('<button type="button" data-copy="webhook-secret" hidden>Copy</button>');
    expect(answer.body).toContain("you will not see this again");
    const id = /href="\/console\/webhooks\/(wh_[^"]+)"/.exec(answer.body)![1]!;

    const list = await c.get("/console/webhooks");
    expect(list.body.match(/data-testid="webhook"/g)).toHaveLength(1);
    expect(list.body).toContain("https://hooks.example.com/generated");
    expect(list.body).toContain("order.filled, deposit.completed");
    expect(list.body).toContain("Active");
    expect(list.body).toContain('<td data-label="Created"><time');
    expect(list.body).not.toContain(secret);
    const detail = await c.get(`/console/webhooks/${id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).not.toContain(secret);
    // The secret works: a test is signed with it (the stub sees the signature, not the secret).
    await c.post(`/console/webhooks/${id}/test`);
    expect(receiver.sent).toHaveLength(1);
    expect(JSON.stringify(receiver.sent[0]!.headers)).not.toContain(secret);
  });

  it("shows the service's refusals next to their fields, never a 500, never echoing the secret", async () => {
    const c = fresh();
    await c.signUp();
    await c.get("/console/webhooks");
    const cases: Array<[Record<string, string | string[]>, string, RegExp]> = [
      [{ url: "http://hooks.example.com/in", events: ["deposit.completed"] }, "url", /https/i],
      [
        { url: "https://internal.example.com/in", events: ["deposit.completed"] },
        "url",
        /resolves to a (private|non-public)/,
      ],
      [{ url: "https://127.0.0.1/in", events: ["deposit.completed"] }, "url", /loopback/],
      [{ url: "https://nowhere.example.com/in", events: ["deposit.completed"] }, "url", /./],
      [{ url: "", events: ["deposit.completed"] }, "url", /Enter the HTTPS URL/],
      [{ url: "https://hooks.example.com/in" }, "events", /at least one event/],
      [{ url: "https://hooks.example.com/in", events: ["no.such.event"] }, "events", /unknown event types/],
      [
        { url: "https://hooks.example.com/in", events: ["deposit.completed"], secret: "short-secret" },
        "secret",
        /16 to 256 characters/,
      ],
      [
        { url: "https://hooks.example.com/in", events: ["deposit.completed"], secret: "x".repeat(257) },
        "secret",
        /16 to 256 characters/,
      ],
    ];
    for (const [fields, name, message] of cases) {
      const response = await c.post("/console/webhooks", fields);
      expect(response.statusCode, JSON.stringify(fields)).toBe(400);
      const error = new RegExp(`id="(f-${name}|register-${name})-error">([^<]*)<`).exec(response.body);
      expect(error?.[2], JSON.stringify(fields)).toMatch(message);
      if (typeof fields["secret"] === "string") expect(response.body).not.toContain(fields["secret"]);
      // The rest of the form is kept.
      if (fields["url"]) expect(response.body).toContain(`value="${fields["url"]}"`);
    }
    expect((await c.get("/console/webhooks")).body).toContain('data-testid="no-webhooks"');
  });

  it("registers with a supplied secret straight to the webhook's page", async () => {
    const c = fresh();
    await c.signUp();
    const id = await registerWebhook(c);
    const page = await c.follow();
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("signed with your secret");
    expect(page.body).toContain(id);
    expect(page.body).not.toContain("my-own-secret-0123456789");
    expect(page.body).toContain('data-testid="no-deliveries"');
  });

  it("edits the events, with the error next to the checkboxes", async () => {
    const c = fresh();
    await c.signUp();
    const id = await registerWebhook(c);
    await c.get(`/console/webhooks/${id}`);
    const none = await c.post(`/console/webhooks/${id}/events`, {});
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('id="edit-events-error"');
    const saved = await c.post(`/console/webhooks/${id}/events`, { events: ["order.filled", "price.alert"] });
    expect(saved.statusCode).toBe(303);
    const page = await c.follow();
    expect(page.body).toContain("Events saved.");
    expect(page.body).toContain('value="order.filled" checked');
    expect(page.body).toContain('value="price.alert" checked');
    expect(page.body).not.toContain('value="deposit.completed" checked');
    expect(JSON.parse((await repo.webhookById(db(), id))!.events)).toEqual(["order.filled", "price.alert"]);
  });

  it("sends a test and logs it with its status, response code, headers and payload", async () => {
    const c = fresh();
    await c.signUp();
    const id = await registerWebhook(c);
    await c.get(`/console/webhooks/${id}`);
    const sent = await c.post(`/console/webhooks/${id}/test`);
    expect(sent.statusCode).toBe(303);
    const page = await c.follow();
    expect(page.body).toContain("Test event delivered: HTTP 200");
    expect(page.body).toContain('data-testid="delivery-status">Test delivered<');
    expect(page.body).toContain('data-testid="delivery-code">200<');
    const request = receiver.sent[0]!;
    // What the log shows is what was sent: every header (signature included) and the body.
    for (const [name, value] of Object.entries(request.headers))
      expect(page.body).toContain(`${name}: ${value}`);
    expect(page.body).toContain("&quot;type&quot;: &quot;webhook.test&quot;");
    expect(page.body).not.toContain("my-own-secret-0123456789");

    receiver.answer = () => FAIL500;
    await c.post(`/console/webhooks/${id}/test`);
    const failed = await c.follow();
    expect(failed.body).toContain("Test event failed: HTTP 500");
    expect(failed.body).toContain('data-testid="delivery-status">Test failed<');
    expect(failed.body).toContain('data-testid="delivery-code">500<');
    expect(failed.body.match(/data-testid="delivery"/g)).toHaveLength(2);
  });

  it("logs each attempt of a failing delivery, and retries it now on request", async () => {
    const c = fresh();
    await c.signUp();
    const id = await registerWebhook(c);
    await deposited(id, "trf_console_1");
    receiver.answer = () => FAIL500;
    await run();
    expect(receiver.sent).toHaveLength(1);
    const first = receiver.sent[0]!;

    let page = await c.get(`/console/webhooks/${id}`);
    expect(page.body).toContain('data-testid="delivery-status">Failed, will retry<');
    expect(page.body).toContain('data-testid="delivery-code">500<');
    expect(page.body).toContain("next attempt");
    expect(page.body).toContain(first.headers["x-service-signature"]);
    expect(page.body).toContain("trf_console_1");
    expect(page.body).toContain(">Retry now</button>");

    // Not due for a minute: nothing goes out...
    await run();
    expect(receiver.sent).toHaveLength(1);
    // ...until "retry now", which makes it due at once.
    const deliveryId = JSON.parse(first.body).id as string;
    const retried = await c.post(`/console/webhooks/${id}/deliveries/${deliveryId}/retry`);
    expect(retried.statusCode).toBe(303);
    expect((await c.follow()).body).toContain("goes out at once");
    t.clock.advance(1_000); // a second later: a new timestamp, so new signatures
    await run();
    expect(receiver.sent).toHaveLength(2);
    const second = receiver.sent[1]!;
    expect(second.body).toBe(first.body); // the same delivery, same id and body
    expect(second.headers["x-service-signature"]).not.toBe(first.headers["x-service-signature"]);

    page = await c.get(`/console/webhooks/${id}`);
    expect(page.body.match(/data-testid="delivery"/g)).toHaveLength(1);
    expect(page.body.match(/data-testid="attempt"/g)).toHaveLength(2);
    expect(page.body).toContain(first.headers["x-service-signature"]);
    expect(page.body).toContain(second.headers["x-service-signature"]);
    expect(page.body).toMatch(/<td data-label="Retries" class="num">1<\/td>/);

    receiver.answer = () => OK;
    await c.post(`/console/webhooks/${id}/deliveries/${deliveryId}/retry`);
    await run();
    page = await c.get(`/console/webhooks/${id}`);
    expect(page.body).toContain('data-testid="delivery-status">Delivered<');
    expect(page.body).toMatch(/<td data-label="Retries" class="num">2<\/td>/);
    expect(page.body).not.toContain(">Retry now</button>");
    // A delivered delivery cannot be retried: a message, not an error page.
    const again = await c.post(`/console/webhooks/${id}/deliveries/${deliveryId}/retry`);
    expect(again.statusCode).toBe(303);
    expect((await c.follow()).body).toContain("not waiting for a retry");
  });

  it("leaves a retried delivery to the instance holding the webhook's lease", async () => {
    const c = fresh();
    await c.signUp();
    const id = await registerWebhook(c);
    await deposited(id, "trf_console_2");
    receiver.answer = () => FAIL500;
    await run();
    const deliveryId = JSON.parse(receiver.sent[0]!.body).id as string;
    // Another instance holds the queue for 10 s (it may be sending this very delivery).
    const until = new Date(t.clock.now() + 10_000).toISOString();
    await repo.updateWebhook(db(), id, { lease_owner: "another-instance", lease_until: until });
    await c.get(`/console/webhooks/${id}`);
    await c.post(`/console/webhooks/${id}/deliveries/${deliveryId}/retry`);
    await run();
    expect(receiver.sent).toHaveLength(1); // not sent twice
    t.clock.advance(11_000); // its lease lapsed (it died): the due delivery goes out here, once
    receiver.answer = () => OK;
    await run();
    await run();
    expect(receiver.sent).toHaveLength(2);
  });

  it("shows a webhook disabled after its retries ran out, and re-enables it by retrying", async () => {
    const c = fresh();
    await c.signUp();
    const id = await registerWebhook(c);
    const other = await registerWebhook(c, "https://other.example.com/in");
    await deposited(id, "trf_console_3");
    receiver.answer = (input) => (input.url.includes("hooks.example.com") ? FAIL500 : OK);
    await run();
    for (const delay of [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000]) {
      t.clock.advance(delay);
      await run();
    }
    expect(receiver.sent.filter((s) => s.url.includes("hooks.example.com"))).toHaveLength(6);
    expect((await repo.webhookById(db(), id))!.status).toBe("failed");

    const list = await c.get("/console/webhooks");
    expect(list.body).toContain("Disabled: retries ran out");
    expect(list.body.match(/Active/g)).toHaveLength(1); // the other one
    let page = await c.get(`/console/webhooks/${id}`);
    expect(page.body).toContain('data-testid="failed-note"');
    expect(page.body).toContain('data-testid="delivery-status">Failed, given up<');
    expect(page.body).toMatch(/<td data-label="Retries" class="num">5<\/td>/);
    expect(page.body.match(/data-testid="attempt"/g)).toHaveLength(6);
    expect(page.body).toContain(">Re-enable and retry now</button>");

    receiver.answer = () => OK;
    const deliveryId = /data-delivery="(whd_[^"]+)"/.exec(page.body)![1]!;
    await c.post(`/console/webhooks/${id}/deliveries/${deliveryId}/retry`);
    expect((await c.follow()).body).toContain("Webhook re-enabled");
    expect((await repo.webhookById(db(), id))!.status).toBe("active");
    await run();
    page = await c.get(`/console/webhooks/${id}`);
    expect(page.body).toContain('data-testid="delivery-status">Delivered<');
    expect(page.body).not.toContain('data-testid="failed-note"');
    expect((await repo.webhookById(db(), other))!.status).toBe("active");
  });

  it("re-enables a disabled webhook from its page", async () => {
    const c = fresh();
    await c.signUp();
    const id = await registerWebhook(c);
    await deposited(id, "trf_console_4");
    await repo.markWebhookFailed(db(), id, new Date(t.clock.now()).toISOString());
    let page = await c.get(`/console/webhooks/${id}`);
    expect(page.body).toContain("1 delivery is");
    const enabled = await c.post(`/console/webhooks/${id}/enable`);
    expect(enabled.statusCode).toBe(303);
    expect((await c.follow()).body).toContain("Webhook re-enabled");
    await run();
    expect(receiver.sent.map((s) => JSON.parse(s.body).data.transfer_id)).toEqual(["trf_console_4"]);
    page = await c.get(`/console/webhooks/${id}`);
    expect(page.body).toContain('data-testid="delivery-status">Delivered<');
  });

  it("deletes after a confirmation page that works without script", async () => {
    const c = fresh();
    await c.signUp();
    const id = await registerWebhook(c);
    const confirm = await c.get(`/console/webhooks/${id}/delete`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain(`<form method="post" action="/console/webhooks/${id}/delete"`);
    expect(await repo.webhookById(db(), id)).toBeDefined();
    const deleted = await c.post(`/console/webhooks/${id}/delete`);
    expect(deleted.statusCode).toBe(303);
    expect(deleted.headers.location).toBe("/console/webhooks");
    expect((await c.follow()).body).toContain("deleted");
    expect(await repo.webhookById(db(), id)).toBeUndefined();
    expect((await c.get(`/console/webhooks/${id}`)).statusCode).toBe(404);
  });

  it("answers another account's webhook with a 404 page, changing nothing", async () => {
    const owner = fresh();
    await owner.signUp();
    const id = await registerWebhook(owner);
    const stranger = fresh();
    await stranger.signUp();
    await stranger.get("/console/webhooks");
    for (const url of [`/console/webhooks/${id}`, `/console/webhooks/${id}/delete`]) {
      const response = await stranger.get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.body).toContain("Not found");
    }
    for (const action of ["test", "enable", "delete", "events", "deliveries/whd_x/retry"]) {
      const response = await stranger.post(`/console/webhooks/${id}/${action}`, { events: ["order.filled"] });
      expect(response.statusCode, action).toBe(404);
    }
    expect(receiver.sent).toHaveLength(0);
    expect(JSON.parse((await repo.webhookById(db(), id))!.events)).toEqual(["deposit.completed"]);
    expect((await owner.get(`/console/webhooks/${id}`)).statusCode).toBe(200);
  });

  it("keeps sandbox and live webhooks apart", async () => {
    const c = fresh();
    await c.signUp();
    const id = await registerWebhook(c);
    await c.post("/console/environment", { environment: "live", next: "/console/webhooks" });
    const live = await c.follow();
    expect(live.body).toContain('data-testid="no-webhooks"');
    expect((await c.get(`/console/webhooks/${id}`)).statusCode).toBe(404);
    expect((await repo.webhookById(db(), id))!.environment).toBe("sandbox");
  });
});
