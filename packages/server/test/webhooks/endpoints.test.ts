/** Webhook registration over HTTP: validation, secrets, updates, deletion and tenant isolation. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createKey, setAccount, signup } from "../support/app";
import { register, webhooksApp } from "./setup";

let s: Awaited<ReturnType<typeof webhooksApp>>;
beforeAll(async () => {
  s = await webhooksApp();
  await setAccount(s.t.services, s.accountId, { tier: "pro" });
});
afterAll(() => s.t.close());

const call = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: unknown, key = s.key) =>
  s.t.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload: payload as object } : {}) });

describe("registering", () => {
  it("returns {id, url, events, status, created_at} and a generated secret once", async () => {
    const response = await call("POST", "/v1/webhooks", {
      url: "https://hooks.example.com/a",
      events: ["order.filled"],
    });
    expect(response.statusCode).toBe(200);
    const data = response.json().data;
    expect(data).toMatchObject({
      url: "https://hooks.example.com/a",
      events: ["order.filled"],
      status: "active",
    });
    expect(data.id).toMatch(/^wh_/);
    expect(data.secret).toMatch(/^whsec_/);
    const read = (await call("GET", `/v1/webhooks/${data.id}`)).json().data;
    expect(read).not.toHaveProperty("secret");
    const listed = (await call("GET", "/v1/webhooks")).json().data;
    expect(listed.every((w: Record<string, unknown>) => !("secret" in w))).toBe(true);
    // Encrypted at rest: the secret is nowhere in the row.
    const row = await s.t.runtime.store.db
      .selectFrom("webhooks")
      .selectAll()
      .where("id", "=", data.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(data.secret.slice(6));
  });

  it("refuses http, private addresses, unknown event types and short secrets with field errors", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ url: "http://hooks.example.com/a", events: ["order.filled"] }, "body.url"],
      [{ url: "https://10.1.2.3/a", events: ["order.filled"] }, "body.url"],
      [{ url: "https://internal.example.com/a", events: ["order.filled"] }, "body.url"],
      [{ url: "https://mixed.example.com/a", events: ["order.filled"] }, "body.url"],
      [{ url: "https://localhost/a", events: ["order.filled"] }, "body.url"],
      [{ url: "https://nowhere.example.com/a", events: ["order.filled"] }, "body.url"],
      [{ url: "not a url", events: ["order.filled"] }, "body.url"],
      [{ url: "https://hooks.example.com/a", events: ["order.exploded"] }, "body.events"],
      [{ url: "https://hooks.example.com/a", events: [] }, "body.events"],
      [{ url: "https://hooks.example.com/a", events: ["webhook.test"] }, "body.events"],
      [{ url: "https://hooks.example.com/a", events: ["order.filled"], secret: "short" }, "body.secret"],
    ];
    for (const [body, field] of cases) {
      const response = await call("POST", "/v1/webhooks", body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error.details.fields[field], JSON.stringify(body)).toBeTruthy();
    }
    const unknownField = await call("POST", "/v1/webhooks", {
      url: "https://hooks.example.com/a",
      events: ["order.filled"],
      colour: 1,
    });
    expect(unknownField.statusCode).toBe(400);
  });
});

describe("updating and deleting", () => {
  it("replaces events, changes the url (checked again), rotates the secret", async () => {
    const hook = await register(s.t.app, s.key, {
      url: "https://hooks.example.com/b",
      events: ["order.filled"],
    });
    const events = await call("PATCH", `/v1/webhooks/${hook.id}`, {
      events: ["order.cancelled", "price.alert"],
    });
    expect(events.json().data.events).toEqual(["order.cancelled", "price.alert"]);
    const badUrl = await call("PATCH", `/v1/webhooks/${hook.id}`, { url: "https://internal.example.com/x" });
    expect(badUrl.statusCode).toBe(400);
    const url = await call("PATCH", `/v1/webhooks/${hook.id}`, { url: "https://other.example.com/x" });
    expect(url.json().data.url).toBe("https://other.example.com/x");
    const rotated = (await call("PATCH", `/v1/webhooks/${hook.id}`, { rotate_secret: true })).json().data;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(hook.secret);
    const supplied = (
      await call("PATCH", `/v1/webhooks/${hook.id}`, { secret: "my own secret value" })
    ).json().data;
    expect(supplied).not.toHaveProperty("secret");
  });

  it("deletes; another account sees 404 everywhere", async () => {
    const hook = await register(s.t.app, s.key, {
      url: "https://hooks.example.com/c",
      events: ["order.filled"],
    });
    const other = await signup(s.t.app);
    const otherKey = (await createKey(s.t.app, other.session, { type: "trading", environment: "sandbox" }))
      .key;
    for (const [method, url, body] of [
      ["GET", `/v1/webhooks/${hook.id}`, undefined],
      ["PATCH", `/v1/webhooks/${hook.id}`, { events: ["order.filled"] }],
      ["DELETE", `/v1/webhooks/${hook.id}`, undefined],
      ["POST", `/v1/webhooks/${hook.id}/test`, undefined],
      ["GET", `/v1/webhooks/${hook.id}/deliveries`, undefined],
    ] as const) {
      const response = await call(method, url, body, otherKey);
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json().error.code).toBe("WEBHOOK_NOT_FOUND");
    }
    expect((await call("GET", "/v1/webhooks", undefined, otherKey)).json().data).toEqual([]);
    const deleted = await call("DELETE", `/v1/webhooks/${hook.id}`);
    expect(deleted.json().data).toEqual({ id: hook.id, deleted: true });
    expect((await call("GET", `/v1/webhooks/${hook.id}`)).statusCode).toBe(404);
  });

  it("a live key's webhooks are not a sandbox key's", async () => {
    const liveKey = (await createKey(s.t.app, s.session, { type: "trading", environment: "live" })).key;
    const hook = await register(s.t.app, liveKey, {
      url: "https://hooks.example.com/d",
      events: ["order.filled"],
    });
    expect((await call("GET", `/v1/webhooks/${hook.id}`)).statusCode).toBe(404);
    expect((await call("GET", `/v1/webhooks/${hook.id}`, undefined, liveKey)).json().data.environment).toBe(
      "live",
    );
  });
});
