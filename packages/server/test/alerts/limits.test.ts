/**
 * The cap on active alerts per account, by tier (free 50, pro 500, enterprise 5,000), counted over
 * both environments: past it 403 ALERT_LIMIT_REACHED with {tier, alerts_allowed}; alerts that can
 * no longer fire do not count; concurrent creations do not pass it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isoFromMs } from "../../src/infra/clock";
import { bearer, createKey, expectError, setAccount, signup } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import type { TestVenue } from "../support/fake-venue";
import { type AlertsTestApp, alertsApp, createAlert, setPrice } from "./setup";

describe.each(STORE_BACKENDS)("alert cap on %s", (store) => {
  let t: AlertsTestApp;
  let venue: TestVenue;

  beforeAll(async () => {
    ({ t, venue } = await alertsApp({ store }));
  });
  afterAll(() => t.close());

  /** A fresh free-tier account with a live and a sandbox key, and `count` active alerts already. */
  async function account(count: number) {
    const { session, accountId } = await signup(t.app);
    const live = (await createKey(t.app, session, { type: "read_only" })).key;
    const sandbox = (await createKey(t.app, session, { type: "read_only", environment: "sandbox" })).key;
    const now = isoFromMs(t.clock.now());
    const rows = Array.from({ length: count }, (_, i) => ({
      id: `alt_seed_${accountId}_${i}`,
      account_id: accountId,
      environment: i % 2 === 0 ? "live" : "sandbox",
      market_id: "kalshi:B",
      condition: "price_above",
      threshold: 900_000,
      repeat: 0,
      status: "active",
      armed: 1,
      trigger_count: 0,
      last_triggered_at: null,
      created_at: now,
      updated_at: now,
    }));
    if (rows.length > 0) await t.runtime.store.db.insertInto("alerts").values(rows).execute();
    return { accountId, live, sandbox };
  }
  const body = { market_id: "kalshi:C", condition: "price_above", threshold: 0.9 };

  it("refuses the free tier's 51st active alert, in either environment, with its figures", async () => {
    const a = await account(49);
    expect((await createAlert(t.app, a.live, body)).statusCode).toBe(201);
    const refused = await createAlert(t.app, a.sandbox, body);
    const error = expectError(refused, 403, "ALERT_LIMIT_REACHED");
    expect(error.details).toEqual({ tier: "free", alerts_allowed: 50 });
    expect(error.message).toMatch(/free tier allows 50 active price alerts/);
    expectError(await createAlert(t.app, a.live, body), 403, "ALERT_LIMIT_REACHED");

    // Deleting one frees a place.
    const list = (
      await t.app.inject({ method: "GET", url: "/v1/alerts?limit=1", headers: bearer(a.live) })
    ).json();
    await t.app.inject({ method: "DELETE", url: `/v1/alerts/${list.data[0].id}`, headers: bearer(a.live) });
    expect((await createAlert(t.app, a.sandbox, body)).statusCode).toBe(201);
    expectError(await createAlert(t.app, a.sandbox, body), 403, "ALERT_LIMIT_REACHED");

    // A higher tier, a higher cap.
    await setAccount(t.services, a.accountId, { tier: "pro" });
    expect((await createAlert(t.app, a.live, body)).statusCode).toBe(201);
  });

  it("does not count one-shot alerts that have fired", async () => {
    const a = await account(49);
    setPrice(venue, "kalshi:D", 0.5);
    // Fires at creation (the price is already above 0.4): triggered, no longer active.
    const fired = await createAlert(t.app, a.live, {
      market_id: "kalshi:D",
      condition: "price_above",
      threshold: 0.4,
    });
    expect(fired.json().data.status).toBe("triggered");
    expect((await createAlert(t.app, a.live, body)).statusCode).toBe(201);
    expectError(await createAlert(t.app, a.live, body), 403, "ALERT_LIMIT_REACHED");
  });

  it("lets concurrent creations fill the cap but never pass it", async () => {
    const a = await account(45);
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => createAlert(t.app, i % 2 ? a.live : a.sandbox, body)),
    );
    const codes = responses.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 201)).toHaveLength(5);
    expect(codes.filter((c) => c === 403)).toHaveLength(7);
    const active = await t.runtime.store.db
      .selectFrom("alerts")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("account_id", "=", a.accountId)
      .where("status", "=", "active")
      .executeTakeFirstOrThrow();
    expect(Number(active.n)).toBe(50);
  });
});
