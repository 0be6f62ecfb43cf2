/**
 * The console's API keys pages through their routes: name, then generate, with the secret shown
 * once and never again; field errors next to the fields; rename; revoke behind a confirmation page,
 * after which the API refuses the key; another account's key is a 404 page.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createTestApp, type TestApp } from "../support/app";
import { ConsoleClient } from "./support";

const SECRET = /id="new-key-secret"[^>]*>(cb_(?:test|live)_[A-Za-z0-9]{40})</;

describe("console API keys", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { loginAttemptsPerMinute: 1000 } });
  });
  afterAll(() => t.close());

  const api = (key: string) => t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(key) });

  async function signedIn() {
    const c = new ConsoleClient(t.app);
    await c.signUp();
    return c;
  }

  /** Creates a key through the form; returns its secret and id. */
  async function generate(c: ConsoleClient, fields: Record<string, string | string[]>) {
    await c.get("/console/keys");
    const page = await c.post("/console/keys", fields);
    expect(page.statusCode).toBe(200);
    const secret = SECRET.exec(page.body)?.[1];
    expect(secret).toBeTruthy();
    const list = await c.get("/console/keys");
    const name = String(fields["name"]).replace(/&/g, "&amp;");
    const row = new RegExp(`data-key-id="([^"]+)">\\s*<td data-label="Name">${name}</td>`).exec(list.body);
    return { page, secret: secret!, id: row![1]! };
  }

  it("sends a signed-out visitor to sign in", async () => {
    const response = await new ConsoleClient(t.app).get("/console/keys");
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/console/signin?next=%2Fconsole%2Fkeys");
  });

  it("shows the form with labels and the empty list", async () => {
    const c = await signedIn();
    const page = await c.get("/console/keys");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("No keys yet");
    expect(page.body).toContain('<label for="f-name">Name</label>');
    expect(page.body).toContain("<legend>Type</legend>");
    expect(page.body).toContain("<legend>Agent permissions</legend>");
    expect(page.body).toContain("<legend>Environment</legend>");
    // The user's environment (sandbox by default) is preselected.
    expect(page.body).toMatch(/name="environment" value="sandbox"\s+checked/);
    expect(page.body).toContain('aria-current="page"');
  });

  it("generates a key and shows its secret exactly once", async () => {
    const c = await signedIn();
    const { page, secret, id } = await generate(c, {
      name: "pricing bot",
      type: "trading",
      environment: "sandbox",
    });
    expect(secret).toMatch(/^cb_test_/);
    expect(page.body).toContain("you will not see it again");
    expect(page.body).toContain('<button type="button" data-copy="new-key-secret" hidden>Copy</button>');
    expect(page.headers["cache-control"]).toBe("no-store");
    expect(page.body).toContain("read, trade, manage_orders");
    // The secret works on the API...
    expect((await api(secret)).statusCode).toBe(200);
    // ...and no page shows it again.
    for (const url of [
      "/console/keys",
      "/console/usage",
      `/console/keys/${id}/rename`,
      `/console/keys/${id}/revoke`,
    ]) {
      const again = await c.get(url);
      expect(again.statusCode).toBe(200);
      expect(again.body).not.toContain(secret);
      expect(again.body).not.toContain(secret.slice(14));
    }
    const list = await c.get("/console/keys");
    expect(list.body).toContain("pricing bot");
    expect(list.body).toContain(`${secret.slice(0, 14)}…`);
    expect(list.body).toContain('<span class="badge ok nowrap">Active</span>');
    expect(list.body).toContain('<table class="responsive keys">');
    for (const label of [
      "Name",
      "Type",
      "Permissions",
      "Environment",
      "Prefix",
      "Created",
      "Last used",
      "Status",
    ])
      expect(list.body).toContain(`data-label="${label}"`);
  });

  it("shows a key used a moment ago as used, before the batched last-used time is written", async () => {
    const c = await signedIn();
    const { secret, id } = await generate(c, {
      name: "just used",
      type: "read_only",
      environment: "sandbox",
    });
    const lastUsed = (body: string) =>
      new RegExp(`data-key-id="${id}">[\\s\\S]*?<td data-label="Last used">([\\s\\S]*?)</td>`).exec(
        body,
      )![1]!;
    expect(lastUsed((await c.get("/console/keys")).body)).toContain("never");
    expect((await api(secret)).statusCode).toBe(200);
    expect(lastUsed((await c.get("/console/keys")).body)).toContain("<time");
  });

  it("creates live keys and agent keys with the chosen permissions", async () => {
    const c = await signedIn();
    const agent = await generate(c, {
      name: "agent",
      type: "agent",
      permissions: ["read", "trade"],
      environment: "live",
    });
    expect(agent.secret).toMatch(/^cb_live_/);
    expect(agent.page.body).toContain('<td data-label="Permissions">read, trade</td>');
    // Boxes left ticked under another type are not the key's: its permissions are the type's.
    const readOnly = await generate(c, {
      name: "reader",
      type: "read_only",
      permissions: ["trade"],
      environment: "sandbox",
    });
    expect(readOnly.page.body).toContain('<td data-label="Permissions">read</td>');
  });

  it("puts the service's refusals next to the fields, with what was typed kept", async () => {
    const c = await signedIn();
    await c.get("/console/keys");
    const empty = await c.post("/console/keys", { name: "  ", type: "trading", environment: "sandbox" });
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toContain('id="f-name-error"');
    expect(empty.body).toContain("Must be 1 to 100 characters");
    expect(empty.body).toContain('aria-invalid="true"');
    expect(empty.body).not.toMatch(SECRET);
    const bad = await c.post("/console/keys", { name: "kept name", type: "superuser", environment: "moon" });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="f-type-error"');
    expect(bad.body).toContain('id="f-environment-error"');
    expect(bad.body).toContain('value="kept name"');
    expect((await c.get("/console/keys")).body).toContain("No keys yet");
  });

  it("answers the tier's key cap with a message, not an error page", async () => {
    const c = await signedIn();
    await generate(c, { name: "one", type: "read_only", environment: "sandbox" });
    await generate(c, { name: "two", type: "read_only", environment: "sandbox" });
    await c.get("/console/keys");
    const third = await c.post("/console/keys", { name: "three", type: "read_only", environment: "sandbox" });
    expect(third.statusCode).toBe(403); // KEY_LIMIT_REACHED, as the API answers it
    expect(third.body).toContain("allows 2 active API keys");
    expect(third.body).toContain('class="flash error"');
    expect(third.body).toContain('value="three"');
  });

  it("renames a key, refusing a bad name next to the field", async () => {
    const c = await signedIn();
    const { id, secret } = await generate(c, { name: "old name", type: "read_only", environment: "sandbox" });
    const form = await c.get(`/console/keys/${id}/rename`);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('value="old name"');
    const bad = await c.post(`/console/keys/${id}/rename`, { name: "x".repeat(101) });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="f-name-error"');
    const ok = await c.post(`/console/keys/${id}/rename`, { name: "new <name>" });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe("/console/keys");
    const list = await c.follow(ok);
    expect(list.body).toContain("Key renamed to “new &lt;name&gt;”.");
    expect(list.body).toContain('<td data-label="Name">new &lt;name&gt;</td>');
    expect(list.body).not.toContain("old name");
    expect((await api(secret)).statusCode).toBe(200); // same secret
  });

  it("revokes after a confirmation page, and the API refuses the key on its next request", async () => {
    const c = await signedIn();
    const { id, secret } = await generate(c, { name: "doomed", type: "trading", environment: "sandbox" });
    expect((await api(secret)).statusCode).toBe(200); // cached by the auth plugin now
    const confirm = await c.get(`/console/keys/${id}/revoke`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain("Revoke “doomed”?");
    expect(confirm.body).toContain(`action="/console/keys/${id}/revoke"`);
    expect(confirm.body).toContain("cannot be undone");
    // Only the page was shown: nothing revoked yet.
    expect((await api(secret)).statusCode).toBe(200);
    const done = await c.post(`/console/keys/${id}/revoke`);
    expect(done.statusCode).toBe(303);
    expect((await api(secret)).statusCode).toBe(401);
    const list = await c.follow(done);
    expect(list.body).toContain("is revoked: the API refuses it from now on");
    expect(list.body).toContain('<span class="badge error nowrap">Revoked</span>');
    expect(list.body).not.toContain(`href="/console/keys/${id}/revoke"`);
    const again = await c.get(`/console/keys/${id}/revoke`);
    expect(again.body).toContain("“doomed” is revoked");
    expect(again.body).not.toContain(`action="/console/keys/${id}/revoke"`);
  });

  it("answers another account's key, or none, with a 404 page and changes nothing", async () => {
    const owner = await signedIn();
    const { id, secret } = await generate(owner, { name: "mine", type: "read_only", environment: "sandbox" });
    const other = await signedIn();
    await other.get("/console/keys");
    for (const response of [
      await other.get(`/console/keys/${id}/rename`),
      await other.get(`/console/keys/${id}/revoke`),
      await other.post(`/console/keys/${id}/rename`, { name: "stolen" }),
      await other.post(`/console/keys/${id}/revoke`),
      await other.get("/console/keys/key_nope/revoke"),
    ]) {
      expect(response.statusCode).toBe(404);
      expect(response.headers["content-type"]).toContain("text/html");
      expect(response.body).toContain("API key not found");
    }
    expect((await api(secret)).statusCode).toBe(200);
    expect((await owner.get("/console/keys")).body).toContain("mine");
  });

  it("refuses a key form without its CSRF token", async () => {
    const c = await signedIn();
    const response = await c.post("/console/keys", { _csrf: "", name: "x", type: "read_only" });
    expect(response.statusCode).toBe(403);
    expect((await c.get("/console/keys")).body).toContain("No keys yet");
  });
});
