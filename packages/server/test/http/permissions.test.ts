/**
 * The permission matrix: every key type against a route needing each permission, plus the real
 * routes of this release. Expected outcomes are written out by hand from the table, not
 * computed by the code under test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS } from "../../src/access/permissions";
import { bearer, createKey, createTestApp, setAccount, signup, type TestApp } from "../support/app";

type Row = {
  name: string;
  type: string;
  permissions?: string[];
  /** The key's account: an ordinary one, or one the CLI made an operator. */
  account?: "operator";
  environment?: "sandbox";
  allowed: string[];
};

const ADMIN = ["read", "trade", "manage_orders", "manage_webhooks", "manage_alerts", "manage_keys", "admin"];
/** What a route may need: the key permissions plus the operator role (curation of shared data). */
const NEEDS = [...PERMISSIONS, "operator"] as const;

// read implies manage_webhooks and manage_alerts; admin holds everything but the operator role,
// which only a live admin key of an operator account has.
const MATRIX: Row[] = [
  { name: "read_only", type: "read_only", allowed: ["read", "manage_webhooks", "manage_alerts"] },
  {
    name: "trading",
    type: "trading",
    allowed: ["read", "trade", "manage_orders", "manage_webhooks", "manage_alerts"],
  },
  { name: "admin", type: "admin", allowed: ADMIN },
  { name: "operator admin (live)", type: "admin", account: "operator", allowed: [...ADMIN, "operator"] },
  {
    name: "operator admin (sandbox)",
    type: "admin",
    account: "operator",
    environment: "sandbox",
    allowed: ADMIN,
  },
  {
    name: "operator trading",
    type: "trading",
    account: "operator",
    allowed: ["read", "trade", "manage_orders", "manage_webhooks", "manage_alerts"],
  },
  {
    name: "agent[read]",
    type: "agent",
    permissions: ["read"],
    allowed: ["read", "manage_webhooks", "manage_alerts"],
  },
  { name: "agent[trade]", type: "agent", permissions: ["trade"], allowed: ["trade"] },
  { name: "agent[manage_orders]", type: "agent", permissions: ["manage_orders"], allowed: ["manage_orders"] },
  {
    name: "agent[read,trade,manage_orders]",
    type: "agent",
    permissions: ["read", "trade", "manage_orders"],
    allowed: ["read", "trade", "manage_orders", "manage_webhooks", "manage_alerts"],
  },
];

let t: TestApp;
const keys = new Map<string, string>();
let session: string;

beforeAll(async () => {
  t = await createTestApp({
    register: (app) => {
      for (const permission of NEEDS) {
        app.get(`/v1/_probe/${permission}`, { config: { auth: "key", permission } }, async () => ({
          success: true,
          data: permission,
        }));
      }
    },
  });
  const account = await signup(t.app);
  session = account.session;
  await setAccount(t.services, account.accountId, { tier: "enterprise" });
  const operator = await signup(t.app);
  await setAccount(t.services, operator.accountId, { tier: "enterprise", operator: true });
  for (const row of MATRIX) {
    const owner = row.account === "operator" ? operator.session : session;
    const body = {
      type: row.type,
      ...(row.permissions ? { permissions: row.permissions } : {}),
      ...(row.environment ? { environment: row.environment } : {}),
    };
    keys.set(row.name, (await createKey(t.app, owner, body)).key);
  }
});
afterAll(() => t.close());

describe("permission matrix", () => {
  for (const row of MATRIX) {
    for (const permission of NEEDS) {
      const allowed = row.allowed.includes(permission);
      it(`${row.name} ${allowed ? "may" : "may not"} use a route needing ${permission}`, async () => {
        const response = await t.app.inject({
          method: "GET",
          url: `/v1/_probe/${permission}`,
          headers: bearer(keys.get(row.name)!),
        });
        if (allowed) {
          expect(response.statusCode).toBe(200);
        } else {
          expect(response.statusCode).toBe(403);
          expect(response.json().error).toMatchObject({
            code: "FORBIDDEN",
            details: { required_permission: permission },
          });
        }
      });
    }
  }

  // Every real endpoint and the permission it needs, written out by hand. A route added without a
  // row here fails the completeness check below.
  const ENDPOINTS: Array<{
    method: "GET" | "POST" | "PATCH" | "DELETE";
    url: string;
    route: string;
    needs: string;
  }> = [
    { method: "GET", url: "/v1/account", route: "/v1/account", needs: "any" },
    { method: "GET", url: "/v1/api-keys", route: "/v1/api-keys", needs: "manage_keys" },
    { method: "POST", url: "/v1/api-keys", route: "/v1/api-keys", needs: "manage_keys" },
    { method: "PATCH", url: "/v1/api-keys/key_x", route: "/v1/api-keys/:id", needs: "manage_keys" },
    { method: "DELETE", url: "/v1/api-keys/key_x", route: "/v1/api-keys/:id", needs: "manage_keys" },
    // Signing out is for session tokens only: every API key gets 403.
    { method: "POST", url: "/v1/auth/logout", route: "/v1/auth/logout", needs: "session" },
    // Listing and ending sign-ins: session tokens only, every API key gets 403.
    { method: "GET", url: "/v1/auth/sessions", route: "/v1/auth/sessions", needs: "session" },
    { method: "DELETE", url: "/v1/auth/sessions", route: "/v1/auth/sessions", needs: "session" },
    { method: "GET", url: "/v1/markets", route: "/v1/markets", needs: "read" },
    { method: "GET", url: "/v1/markets/kalshi:X", route: "/v1/markets/:market_id", needs: "read" },
    { method: "GET", url: "/v1/venues", route: "/v1/venues", needs: "read" },
    { method: "GET", url: "/v1/prices?market_ids=kalshi:X", route: "/v1/prices", needs: "read" },
    { method: "GET", url: "/v1/prices/stream", route: "/v1/prices/stream", needs: "read" },
    { method: "GET", url: "/v1/alerts", route: "/v1/alerts", needs: "read" },
    { method: "POST", url: "/v1/alerts", route: "/v1/alerts", needs: "manage_alerts" },
    { method: "GET", url: "/v1/alerts/alt_x", route: "/v1/alerts/:id", needs: "read" },
    { method: "DELETE", url: "/v1/alerts/alt_x", route: "/v1/alerts/:id", needs: "manage_alerts" },
    { method: "GET", url: "/v1/venue-credentials", route: "/v1/venue-credentials", needs: "trade" },
    { method: "POST", url: "/v1/venue-credentials", route: "/v1/venue-credentials", needs: "trade" },
    {
      method: "GET",
      url: "/v1/venue-credentials/vcr_x",
      route: "/v1/venue-credentials/:id",
      needs: "trade",
    },
    {
      method: "DELETE",
      url: "/v1/venue-credentials/vcr_x",
      route: "/v1/venue-credentials/:id",
      needs: "trade",
    },
    { method: "POST", url: "/v1/webhooks", route: "/v1/webhooks", needs: "manage_webhooks" },
    { method: "GET", url: "/v1/webhooks", route: "/v1/webhooks", needs: "read" },
    { method: "GET", url: "/v1/webhooks/wh_x", route: "/v1/webhooks/:id", needs: "read" },
    { method: "PATCH", url: "/v1/webhooks/wh_x", route: "/v1/webhooks/:id", needs: "manage_webhooks" },
    { method: "DELETE", url: "/v1/webhooks/wh_x", route: "/v1/webhooks/:id", needs: "manage_webhooks" },
    {
      method: "POST",
      url: "/v1/webhooks/wh_x/test",
      route: "/v1/webhooks/:id/test",
      needs: "manage_webhooks",
    },
    {
      method: "GET",
      url: "/v1/webhooks/wh_x/deliveries",
      route: "/v1/webhooks/:id/deliveries",
      needs: "read",
    },
    { method: "POST", url: "/v1/orders", route: "/v1/orders", needs: "trade" },
    { method: "GET", url: "/v1/orders", route: "/v1/orders", needs: "read" },
    { method: "DELETE", url: "/v1/orders", route: "/v1/orders", needs: "manage_orders" },
    { method: "GET", url: "/v1/orders/ord_x", route: "/v1/orders/:id", needs: "read" },
    { method: "DELETE", url: "/v1/orders/ord_x", route: "/v1/orders/:id", needs: "manage_orders" },
    { method: "GET", url: "/v1/orders/ord_x/fills", route: "/v1/orders/:id/fills", needs: "read" },
    { method: "GET", url: "/v1/fills", route: "/v1/fills", needs: "read" },
    { method: "GET", url: "/v1/positions", route: "/v1/positions", needs: "read" },
    { method: "GET", url: "/v1/positions/pos_x", route: "/v1/positions/:id", needs: "read" },
    { method: "GET", url: "/v1/balance", route: "/v1/balance", needs: "read" },
    { method: "POST", url: "/v1/sandbox/deposit", route: "/v1/sandbox/deposit", needs: "trade" },
    { method: "POST", url: "/v1/sandbox/withdraw", route: "/v1/sandbox/withdraw", needs: "trade" },
    { method: "POST", url: "/v1/sandbox/reset", route: "/v1/sandbox/reset", needs: "trade" },
    {
      method: "GET",
      url: "/v1/prices/history?market_id=kalshi:X",
      route: "/v1/prices/history",
      needs: "read",
    },
    {
      method: "GET",
      url: "/v1/prices/compare?event_id=xev_x",
      route: "/v1/prices/compare",
      needs: "read",
    },
    { method: "GET", url: "/v1/arbitrage", route: "/v1/arbitrage", needs: "read" },
    // Matches are shared by every account: reads for any key with read, curation for operators.
    { method: "GET", url: "/v1/matches", route: "/v1/matches", needs: "read" },
    { method: "POST", url: "/v1/matches", route: "/v1/matches", needs: "operator" },
    { method: "GET", url: "/v1/matches/mat_x", route: "/v1/matches/:id", needs: "read" },
    {
      method: "POST",
      url: "/v1/matches/mat_x/verify",
      route: "/v1/matches/:id/verify",
      needs: "operator",
    },
    {
      method: "POST",
      url: "/v1/matches/mat_x/reject",
      route: "/v1/matches/:id/reject",
      needs: "operator",
    },
    { method: "GET", url: "/v1/events", route: "/v1/events", needs: "read" },
    { method: "GET", url: "/v1/events/xev_x", route: "/v1/events/:event_id", needs: "read" },
  ];
  const PUBLIC = ["/healthz", "/readyz", "/metrics", "/v1/openapi.json", "/v1/auth/signup", "/v1/auth/login"];

  it("has a row for every authenticated endpoint", () => {
    const routes = t.app
      .printRoutes({ commonPrefix: false })
      .split("\n")
      .filter((line) => line.includes("/v1/") && !line.includes("_probe"));
    expect(routes.length).toBeGreaterThan(0);
    const documented = new Set([...ENDPOINTS.map((e) => e.route), ...PUBLIC]);
    for (const line of routes) {
      const path = /(\/v1\/[^\s(]*)/.exec(line)?.[1];
      if (path) expect(documented.has(path), `no permission row for ${path}`).toBe(true);
    }
  });

  for (const endpoint of ENDPOINTS) {
    it(`${endpoint.method} ${endpoint.url} needs ${endpoint.needs}`, async () => {
      for (const row of MATRIX) {
        const response = await t.app.inject({
          method: endpoint.method,
          url: endpoint.url,
          headers: bearer(keys.get(row.name)!),
          ...(endpoint.method === "POST" || endpoint.method === "PATCH" ? { payload: {} } : {}),
        });
        const allowed = endpoint.needs === "any" || row.allowed.includes(endpoint.needs);
        // Allowed: past the permission check (a route may still refuse for another reason, e.g.
        // SANDBOX_ONLY for the live keys used here, or venue links refusing sandbox keys).
        const error = response.json().error;
        if (allowed) expect(error?.details?.required_permission, `${row.name}`).toBeUndefined();
        else {
          expect(response.statusCode, `${row.name}`).toBe(403);
          if ((NEEDS as readonly string[]).includes(endpoint.needs))
            expect(error?.details?.required_permission, `${row.name}`).toBe(endpoint.needs);
        }
      }
    });
  }

  it("lets every key type read /v1/account and only admin keys manage keys", async () => {
    for (const row of MATRIX) {
      const key = keys.get(row.name)!;
      expect(
        (await t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(key) })).statusCode,
        row.name,
      ).toBe(200);
      const list = await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: bearer(key) });
      expect(list.statusCode, row.name).toBe(row.type === "admin" ? 200 : 403);
    }
  });

  it("refuses missing, malformed, unknown and revoked credentials with 401", async () => {
    const probe = (authorization?: string) =>
      t.app.inject({
        method: "GET",
        url: "/v1/_probe/read",
        headers: authorization ? { authorization } : {},
      });
    for (const header of [
      undefined,
      "Basic abc",
      "Bearer",
      `Bearer cb_live_${"x".repeat(40)}`,
      "Bearer cb_live_",
      "Bearer nonsense",
    ]) {
      const response = await probe(header);
      expect(response.statusCode, String(header)).toBe(401);
      expect(response.json().error.code).toBe("UNAUTHORIZED");
    }
  });

  it("checks the permission before anything else on the route", async () => {
    // A route needing `trade`, hit by a read-only key with an invalid body, is a 403 not a 400.
    const response = await t.app.inject({
      method: "GET",
      url: "/v1/_probe/trade?unexpected=1",
      headers: bearer(keys.get("read_only")!),
    });
    expect(response.statusCode).toBe(403);
  });
});

// Key management by environment, written out by hand: an admin API key manages its own
// environment's keys only; a session token manages both.
describe("key management by environment", () => {
  type Caller = "session" | "live admin" | "sandbox admin";
  type Op = "create" | "list" | "rename" | "revoke";
  const ALLOWED: Record<Caller, Record<"live" | "sandbox", boolean>> = {
    session: { live: true, sandbox: true },
    "live admin": { live: true, sandbox: false },
    "sandbox admin": { live: false, sandbox: true },
  };
  let owner: { session: string; accountId: string };
  const callers = new Map<Caller, string>();

  beforeAll(async () => {
    owner = await signup(t.app);
    await setAccount(t.services, owner.accountId, { tier: "enterprise" });
    callers.set("session", owner.session);
    callers.set("live admin", (await createKey(t.app, owner.session, { type: "admin" })).key);
    callers.set(
      "sandbox admin",
      (await createKey(t.app, owner.session, { type: "admin", environment: "sandbox" })).key,
    );
  });

  for (const caller of Object.keys(ALLOWED) as Caller[]) {
    for (const environment of ["live", "sandbox"] as const) {
      for (const op of ["create", "list", "rename", "revoke"] as Op[]) {
        const allowed = ALLOWED[caller][environment];
        it(`${caller} ${allowed ? "may" : "may not"} ${op} ${environment} keys`, async () => {
          const target = await createKey(t.app, owner.session, { type: "read_only", environment });
          const headers = bearer(callers.get(caller)!);
          const response = await t.app.inject(
            op === "create"
              ? {
                  method: "POST",
                  url: "/v1/api-keys",
                  headers,
                  payload: { name: "n", type: "read_only", environment },
                }
              : op === "list"
                ? { method: "GET", url: `/v1/api-keys?environment=${environment}`, headers }
                : op === "rename"
                  ? {
                      method: "PATCH",
                      url: `/v1/api-keys/${target.id}`,
                      headers,
                      payload: { name: "renamed" },
                    }
                  : { method: "DELETE", url: `/v1/api-keys/${target.id}`, headers },
          );
          if (allowed) {
            expect(response.statusCode, response.body).toBe(op === "create" ? 201 : 200);
          } else {
            expect(response.statusCode, response.body).toBe(403);
            expect(response.json().error.code).toBe("FORBIDDEN");
          }
          // Whatever the answer, the target key still works unless a permitted revoke hit it.
          const still = await t.app.inject({
            method: "GET",
            url: "/v1/account",
            headers: bearer(target.key),
          });
          expect(still.statusCode).toBe(op === "revoke" && allowed ? 401 : 200);
        });
      }
    }
  }
});
