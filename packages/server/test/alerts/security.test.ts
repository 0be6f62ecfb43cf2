/**
 * Price alerts, the security matrix: an alert belongs to its account and to the environment of the
 * key that made it; anything else sees a 404, never the alert, and keys without the permission get
 * 403 before anything is looked up.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createKey, expectError, setAccount, signup } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import type { TestVenue } from "../support/fake-venue";
import { type AlertsTestApp, alertsApp, eventsFor, getAlert, newAlert, setPrice } from "./setup";

describe.each(STORE_BACKENDS)("price alert security on %s", (store) => {
  let t: AlertsTestApp;
  let venue: TestVenue;
  let owner: string;
  let session: string;
  let accountId: string;
  let stranger: string;
  let alertId: string;

  beforeAll(async () => {
    ({ t, venue, key: owner, session, accountId } = await alertsApp({ store }));
    // This suite mints more keys than the free tier allows.
    await setAccount(t.services, accountId, { tier: "enterprise" });
    stranger = (await createKey(t.app, (await signup(t.app)).session, { type: "admin" })).key;
    alertId = await newAlert(t.app, owner, {
      market_id: "kalshi:A",
      condition: "price_above",
      threshold: 0.8,
    });
  });
  afterAll(() => t.close());

  const list = async (key: string) =>
    (await t.app.inject({ method: "GET", url: "/v1/alerts", headers: bearer(key) })).json();

  it("hides another account's alert: 404 on GET and DELETE, absent from its list", async () => {
    for (const method of ["GET", "DELETE"] as const) {
      const response = await t.app.inject({
        method,
        url: `/v1/alerts/${alertId}`,
        headers: bearer(stranger),
      });
      expectError(response, 404, "ALERT_NOT_FOUND");
    }
    const theirs = await list(stranger);
    expect(theirs.data).toEqual([]);
    expect(theirs.meta.total).toBe(0);
    // The stranger's DELETE did nothing: the owner still has it, and it still fires for the owner.
    expect(await getAlert(t.app, owner, alertId)).toMatchObject({ status: "active" });
    setPrice(venue, "kalshi:A", 0.85);
    const [event] = await eventsFor(t, alertId);
    expect(event).toMatchObject({ account_id: accountId, environment: "live" });
  });

  it("keeps live and sandbox alerts apart, even within one account", async () => {
    const sandbox = (await createKey(t.app, session, { type: "read_only", environment: "sandbox" })).key;
    const response = await t.app.inject({
      method: "GET",
      url: `/v1/alerts/${alertId}`,
      headers: bearer(sandbox),
    });
    expectError(response, 404, "ALERT_NOT_FOUND");
    expect((await list(sandbox)).meta.total).toBe(0);
    const sandboxAlert = await newAlert(t.app, sandbox, {
      market_id: "kalshi:B",
      condition: "price_below",
      threshold: 0.1,
    });
    expect((await list(owner)).data.map((a: { id: string }) => a.id)).not.toContain(sandboxAlert);
    expect(await getAlert(t.app, sandbox, sandboxAlert)).toMatchObject({ environment: "sandbox" });
    // Another live key of the same account sees the live alert.
    const second = (await createKey(t.app, session, { type: "trading" })).key;
    expect(await getAlert(t.app, second, alertId)).toMatchObject({ id: alertId });
  });

  it("refuses keys without the permission (403) and requests without a key (401)", async () => {
    const tradeOnly = (await createKey(t.app, session, { type: "agent", permissions: ["trade"] })).key;
    const requests = [
      { method: "GET" as const, url: "/v1/alerts" },
      { method: "GET" as const, url: `/v1/alerts/${alertId}` },
      { method: "DELETE" as const, url: `/v1/alerts/${alertId}` },
      {
        method: "POST" as const,
        url: "/v1/alerts",
        payload: { market_id: "kalshi:A", condition: "price_above", threshold: 0.5 },
      },
    ];
    for (const request of requests) {
      expectError(await t.app.inject({ ...request, headers: bearer(tradeOnly) }), 403, "FORBIDDEN");
      expectError(await t.app.inject(request), 401, "UNAUTHORIZED");
      // A sign-in session manages keys only.
      expectError(await t.app.inject({ ...request, headers: bearer(session) }), 401, "UNAUTHORIZED");
    }
    expect(await getAlert(t.app, owner, alertId)).toMatchObject({ id: alertId });
  });
});
