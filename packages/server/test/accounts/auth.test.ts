/**
 * Sign-up, sign-in, sessions and API-key management through the HTTP API, on every store backend.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bearer,
  createKey,
  createTestApp,
  expectError,
  PASSWORD,
  setAccount,
  signup,
  type TestApp,
} from "../support/app";
import { STORE_BACKENDS } from "../support/backends";

describe.each(STORE_BACKENDS)("accounts and keys on %s", (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ store, config: { sessionTtlSeconds: 3600, loginAttemptsPerMinute: 1000 } });
  });
  afterAll(() => t.close());

  describe("sign-up and sign-in", () => {
    it("signs up, returns a session that expires, and never echoes the password", async () => {
      const response = await t.app.inject({
        method: "POST",
        url: "/v1/auth/signup",
        payload: { email: "Alice@Example.com", password: PASSWORD },
      });
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(body.success).toBe(true);
      expect(body.data.account).toMatchObject({ email: "alice@example.com", tier: "free", plan: "standard" });
      expect(body.data.account.id).toMatch(/^acc_/);
      expect(body.data.session.token).toMatch(/^cbs_/);
      expect(Date.parse(body.data.session.expires_at) - t.clock.now()).toBe(3600_000);
      expect(response.body).not.toContain(PASSWORD);
      expect(response.body).not.toContain("password_hash");
    });

    it("refuses a duplicate email (case-insensitive) and weak input", async () => {
      await signup(t.app, "bob@example.com");
      const again = await t.app.inject({
        method: "POST",
        url: "/v1/auth/signup",
        payload: { email: "BOB@example.com", password: PASSWORD },
      });
      expectError(again, 409, "EMAIL_TAKEN");
      const weak = await t.app.inject({
        method: "POST",
        url: "/v1/auth/signup",
        payload: { email: "not-an-email", password: "short" },
      });
      expect(expectError(weak, 400, "VALIDATION_ERROR").details).toEqual({
        fields: { email: "must be an email address", password: "must be at least 10 characters" },
      });
    });

    it("logs in with the right password only, with one message for every failure", async () => {
      const { email } = await signup(t.app);
      const good = await t.app.inject({
        method: "POST",
        url: "/v1/auth/login",
        payload: { email, password: PASSWORD },
      });
      expect(good.statusCode).toBe(200);
      expect(good.json().data.session.token).toMatch(/^cbs_/);
      const wrong = await t.app.inject({
        method: "POST",
        url: "/v1/auth/login",
        payload: { email, password: "wrong password!!" },
      });
      const unknown = await t.app.inject({
        method: "POST",
        url: "/v1/auth/login",
        payload: { email: "nobody@example.com", password: PASSWORD },
      });
      expect(expectError(wrong, 401, "UNAUTHORIZED").message).toBe(
        expectError(unknown, 401, "UNAUTHORIZED").message,
      );
    });

    it("expires sessions", async () => {
      const { session } = await signup(t.app);
      const list = () => t.app.inject({ method: "GET", url: "/v1/api-keys", headers: bearer(session) });
      expect((await list()).statusCode).toBe(200);
      t.clock.advance(3600_000 - 1);
      expect((await list()).statusCode).toBe(200);
      t.clock.advance(1);
      expectError(await list(), 401, "UNAUTHORIZED");
    });

    it("sweeps sessions a day past their expiry", async () => {
      await signup(t.app);
      t.clock.advance(3600_000 + 86_400_000 + 1);
      expect(await t.services.accounts.deleteExpiredSessions()).toBeGreaterThan(0);
      expect(await t.services.accounts.deleteExpiredSessions()).toBe(0);
    });

    it("ends a session on logout", async () => {
      const { session } = await signup(t.app);
      const out = await t.app.inject({ method: "POST", url: "/v1/auth/logout", headers: bearer(session) });
      expect(out.json()).toEqual({ success: true, data: { logged_out: true } });
      expectError(
        await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: bearer(session) }),
        401,
        "UNAUTHORIZED",
      );
    });

    it("does not accept a session token on data routes", async () => {
      const { session } = await signup(t.app);
      expectError(
        await t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(session) }),
        401,
        "UNAUTHORIZED",
      );
    });
  });

  describe("API keys", () => {
    it("creates a key whose secret is shown once and stored only as a hash", async () => {
      const { session, accountId } = await signup(t.app);
      const created = await t.app.inject({
        method: "POST",
        url: "/v1/api-keys",
        headers: bearer(session),
        payload: { name: "bot", type: "Trading" },
      });
      expect(created.statusCode).toBe(201);
      const data = created.json().data;
      expect(data).toMatchObject({
        name: "bot",
        type: "trading",
        permissions: ["read", "trade", "manage_orders"],
        environment: "live",
      });
      expect(data.key).toMatch(/^cb_live_[0-9A-Za-z]{40}$/);
      expect(data.key.startsWith(data.prefix)).toBe(true);

      const rows = await t.runtime.store.db
        .selectFrom("api_keys")
        .selectAll()
        .where("account_id", "=", accountId)
        .execute();
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toContain(data.key);
      expect(rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);

      const listed = await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: bearer(session) });
      expect(listed.body).not.toContain(data.key);
      expect(listed.json().data[0]).toEqual({
        id: data.id,
        name: "bot",
        type: "trading",
        permissions: ["read", "trade", "manage_orders"],
        environment: "live",
        prefix: data.prefix,
        created_at: data.created_at,
        last_used_at: null,
        revoked_at: null,
      });
    });

    it("accepts the spec's type spellings and makes sandbox keys with cb_test_", async () => {
      const { session } = await signup(t.app);
      const ro = await createKey(t.app, session, { type: "Read-Only", environment: "sandbox" });
      expect(ro.key).toMatch(/^cb_test_/);
      expect(ro.permissions).toEqual(["read"]);
    });

    it("lets agent keys choose permissions and refuses unknown ones", async () => {
      const { session, accountId } = await signup(t.app);
      await setAccount(t.services, accountId, { tier: "pro" });
      const agent = await createKey(t.app, session, {
        type: "agent",
        permissions: ["read", "manage_orders"],
      });
      expect(agent.permissions).toEqual(["read", "manage_orders"]);
      const bad = await t.app.inject({
        method: "POST",
        url: "/v1/api-keys",
        headers: bearer(session),
        payload: { name: "x", type: "agent", permissions: ["withdraw"] },
      });
      expect(expectError(bad, 400, "VALIDATION_ERROR").details?.["fields"]).toHaveProperty(
        "body.permissions.0",
      );
      const badType = await t.app.inject({
        method: "POST",
        url: "/v1/api-keys",
        headers: bearer(session),
        payload: { name: "x", type: "superuser" },
      });
      expect(expectError(badType, 400, "VALIDATION_ERROR").details?.["fields"]).toHaveProperty("type");
      const fixed = await t.app.inject({
        method: "POST",
        url: "/v1/api-keys",
        headers: bearer(session),
        payload: { name: "x", type: "read_only", permissions: ["trade"] },
      });
      expect(expectError(fixed, 400, "VALIDATION_ERROR").details?.["fields"]).toHaveProperty("permissions");
    });

    it("caps keys by tier with KEY_LIMIT_REACHED, counting only active keys", async () => {
      const { session, accountId } = await signup(t.app);
      const first = await createKey(t.app, session, { type: "read_only" });
      await createKey(t.app, session, { type: "read_only" });
      const third = await t.app.inject({
        method: "POST",
        url: "/v1/api-keys",
        headers: bearer(session),
        payload: { name: "third", type: "read_only" },
      });
      expect(expectError(third, 403, "KEY_LIMIT_REACHED").details).toEqual({ tier: "free", keys_allowed: 2 });
      await t.app.inject({ method: "DELETE", url: `/v1/api-keys/${first.id}`, headers: bearer(session) });
      await createKey(t.app, session, { type: "read_only" });

      await setAccount(t.services, accountId, { tier: "pro" });
      for (let i = 0; i < 8; i++) await createKey(t.app, session, { type: "read_only" });
      const eleventh = await t.app.inject({
        method: "POST",
        url: "/v1/api-keys",
        headers: bearer(session),
        payload: { name: "11", type: "read_only" },
      });
      expect(expectError(eleventh, 403, "KEY_LIMIT_REACHED").details).toEqual({
        tier: "pro",
        keys_allowed: 10,
      });

      await setAccount(t.services, accountId, { tier: "enterprise" });
      for (let i = 0; i < 3; i++) await createKey(t.app, session, { type: "read_only" });
    });

    it("renames and revokes; revocation takes effect on the very next request", async () => {
      const { session } = await signup(t.app);
      const key = await createKey(t.app, session, { type: "read_only", name: "old" });
      const whoami = () => t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(key.key) });
      expect((await whoami()).statusCode).toBe(200);

      const renamed = await t.app.inject({
        method: "PATCH",
        url: `/v1/api-keys/${key.id}`,
        headers: bearer(session),
        payload: { name: "new" },
      });
      expect(renamed.json().data.name).toBe("new");
      expect((await whoami()).json().data.key.name).toBe("new");

      const revoked = await t.app.inject({
        method: "DELETE",
        url: `/v1/api-keys/${key.id}`,
        headers: bearer(session),
      });
      expect(revoked.statusCode).toBe(200);
      expect(revoked.json().data.revoked_at).toBe(new Date(t.clock.now()).toISOString());
      expectError(await whoami(), 401, "UNAUTHORIZED");
    });

    it("keeps accounts apart: another account's key is a 404", async () => {
      const a = await signup(t.app);
      const b = await signup(t.app);
      const key = await createKey(t.app, a.session, { type: "read_only" });
      expectError(
        await t.app.inject({ method: "DELETE", url: `/v1/api-keys/${key.id}`, headers: bearer(b.session) }),
        404,
        "API_KEY_NOT_FOUND",
      );
      expectError(
        await t.app.inject({
          method: "PATCH",
          url: `/v1/api-keys/${key.id}`,
          headers: bearer(b.session),
          payload: { name: "x" },
        }),
        404,
        "API_KEY_NOT_FOUND",
      );
      const listB = await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: bearer(b.session) });
      expect(listB.json().data).toEqual([]);
    });

    it("lets an admin key manage keys, and no other key type", async () => {
      const { session, accountId } = await signup(t.app);
      await setAccount(t.services, accountId, { tier: "pro" });
      const admin = await createKey(t.app, session, { type: "admin" });
      const trading = await createKey(t.app, session, { type: "trading" });
      const viaAdmin = await t.app.inject({
        method: "POST",
        url: "/v1/api-keys",
        headers: bearer(admin.key),
        payload: { name: "made by admin", type: "read_only" },
      });
      expect(viaAdmin.statusCode).toBe(201);
      const viaTrading = await t.app.inject({
        method: "GET",
        url: "/v1/api-keys",
        headers: bearer(trading.key),
      });
      expect(expectError(viaTrading, 403, "FORBIDDEN").details).toEqual({
        required_permission: "manage_keys",
      });
    });

    it("binds an admin key to its own environment; a session token manages both", async () => {
      const { session, accountId } = await signup(t.app);
      await setAccount(t.services, accountId, { tier: "pro" });
      const liveAdmin = await createKey(t.app, session, { type: "admin" });
      const sandboxAdmin = await createKey(t.app, session, { type: "admin", environment: "sandbox" });
      const liveBot = await createKey(t.app, session, { type: "read_only" });
      const as = (key: string, method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: object) =>
        t.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });

      // Created with an API key, a key defaults to the caller's environment.
      const made = await as(sandboxAdmin.key, "POST", "/v1/api-keys", { name: "bot", type: "trading" });
      expect(made.statusCode, made.body).toBe(201);
      expect(made.json().data).toMatchObject({
        environment: "sandbox",
        key: expect.stringMatching(/^cb_test_/),
      });

      // A sandbox key can never create, rename or revoke a live key, nor list them.
      const refused = expectError(
        await as(sandboxAdmin.key, "POST", "/v1/api-keys", { name: "x", type: "admin", environment: "live" }),
        403,
        "FORBIDDEN",
      );
      expect(refused.details).toEqual({ environment: "live", allowed_environment: "sandbox" });
      expectError(await as(sandboxAdmin.key, "DELETE", `/v1/api-keys/${liveBot.id}`), 403, "FORBIDDEN");
      expectError(await as(sandboxAdmin.key, "DELETE", `/v1/api-keys/${liveAdmin.id}`), 403, "FORBIDDEN");
      expectError(
        await as(sandboxAdmin.key, "PATCH", `/v1/api-keys/${liveBot.id}`, { name: "renamed" }),
        403,
        "FORBIDDEN",
      );
      expectError(await as(sandboxAdmin.key, "GET", "/v1/api-keys?environment=live"), 403, "FORBIDDEN");
      const sandboxList = (await as(sandboxAdmin.key, "GET", "/v1/api-keys")).json().data;
      expect(new Set(sandboxList.map((k: { environment: string }) => k.environment))).toEqual(
        new Set(["sandbox"]),
      );
      expect(sandboxList).toHaveLength(2);
      // The live key was not touched by any of that.
      expect((await as(liveBot.key, "GET", "/v1/account")).statusCode).toBe(200);

      // The other way round too: a live admin key manages live keys only.
      expectError(
        await as(liveAdmin.key, "POST", "/v1/api-keys", {
          name: "x",
          type: "read_only",
          environment: "sandbox",
        }),
        403,
        "FORBIDDEN",
      );
      expectError(await as(liveAdmin.key, "DELETE", `/v1/api-keys/${sandboxAdmin.id}`), 403, "FORBIDDEN");
      const liveList = (await as(liveAdmin.key, "GET", "/v1/api-keys")).json().data;
      expect(liveList.map((k: { id: string }) => k.id).sort()).toEqual([liveAdmin.id, liveBot.id].sort());
      const renamed = await as(liveAdmin.key, "PATCH", `/v1/api-keys/${liveBot.id}`, { name: "renamed" });
      expect(renamed.json().data).toMatchObject({ name: "renamed", environment: "live" });

      // A session token lists and manages both, and can filter.
      const all = (await as(session, "GET", "/v1/api-keys")).json().data;
      expect(all).toHaveLength(4);
      const onlySandbox = (await as(session, "GET", "/v1/api-keys?environment=sandbox")).json().data;
      expect(onlySandbox).toHaveLength(2);
      expectError(await as(session, "GET", "/v1/api-keys?environment=staging"), 400, "VALIDATION_ERROR");
      const revoked = await as(session, "DELETE", `/v1/api-keys/${sandboxAdmin.id}`);
      expect(revoked.json().data.revoked_at).not.toBeNull();
    });

    it("records last_used_at in batches", async () => {
      const { session } = await signup(t.app);
      const key = await createKey(t.app, session, { type: "read_only" });
      await t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(key.key) });
      const before = await t.runtime.store.db
        .selectFrom("api_keys")
        .select("last_used_at")
        .where("id", "=", key.id)
        .executeTakeFirst();
      expect(before?.last_used_at).toBeNull();
      await t.services.apiKeys.flushUsage();
      const after = await t.runtime.store.db
        .selectFrom("api_keys")
        .select("last_used_at")
        .where("id", "=", key.id)
        .executeTakeFirst();
      expect(after?.last_used_at).toBe(new Date(t.clock.now()).toISOString());
    });
  });

  describe("who am I", () => {
    it("tells any key its account, itself and its limits", async () => {
      const { session, accountId, email } = await signup(t.app);
      await setAccount(t.services, accountId, { tier: "pro", plan: "agent" });
      const agent = await createKey(t.app, session, { type: "agent", permissions: ["trade"] });
      const response = await t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(agent.key) });
      expect(response.json().data).toEqual({
        account: {
          id: accountId,
          email,
          tier: "pro",
          plan: "agent",
          operator: false,
          created_at: expect.any(String),
        },
        key: { id: agent.id, name: "agent key", type: "agent", permissions: ["trade"], environment: "live" },
        limits: {
          requests_per_minute: 10_000,
          websocket_connections: 10,
          markets_per_subscription: 500,
          keys_allowed: 10,
        },
      });
      const ro = await createKey(t.app, session, { type: "read_only" });
      const roResponse = await t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(ro.key) });
      expect(roResponse.json().data.limits.requests_per_minute).toBe(300);
      expect(roResponse.json().data.key.permissions).toEqual(["read", "manage_webhooks", "manage_alerts"]);
    });
  });
});
