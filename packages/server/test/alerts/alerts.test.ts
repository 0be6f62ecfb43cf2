/**
 * Price alerts, the happy path: create/read/list/delete through the API, and evaluation driven by
 * venue feed quotes (`TestVenue.emit`) through the app: crossing, no re-fire, re-arming, one-shot,
 * the 24-hour change conditions, and the `price.alert` record in the outbox.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createKey, signup } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import type { TestVenue } from "../support/fake-venue";
import {
  type AlertsTestApp,
  alertsApp,
  createAlert,
  EVENT_TITLE,
  eventsFor,
  getAlert,
  newAlert,
  setPrice,
} from "./setup";

describe.each(STORE_BACKENDS)("price alerts on %s", (store) => {
  let t: AlertsTestApp;
  let venue: TestVenue;
  let key: string;
  let session: string;
  let accountId: string;

  beforeAll(async () => {
    ({ t, venue, key, session, accountId } = await alertsApp({ store }));
  });
  afterAll(() => t.close());

  it("creates an alert (201) and reads it back", async () => {
    const response = await createAlert(t.app, key, {
      market_id: "kalshi:B",
      condition: "price_above",
      threshold: 0.65,
    });
    expect(response.statusCode).toBe(201);
    const created = response.json().data;
    expect(created).toEqual({
      id: expect.stringMatching(/^alt_/),
      market_id: "kalshi:B",
      condition: "price_above",
      threshold: 0.65,
      repeat: false,
      status: "active",
      armed: true,
      trigger_count: 0,
      last_triggered_at: null,
      environment: "live",
      created_at: "2026-11-22T12:00:00.000Z",
    });
    expect(await getAlert(t.app, key, created.id)).toEqual(created);
    const list = (await t.app.inject({ method: "GET", url: "/v1/alerts", headers: bearer(key) })).json();
    expect(list.data.map((a: { id: string }) => a.id)).toContain(created.id);
  });

  it("fires once when the price crosses above, and not again while it stays above", async () => {
    const id = await newAlert(t.app, key, {
      market_id: "kalshi:A",
      condition: "price_above",
      threshold: 0.5,
    });
    setPrice(venue, "kalshi:A", 0.45);
    expect(await eventsFor(t, id)).toHaveLength(0);

    t.clock.advance(1_000);
    setPrice(venue, "kalshi:A", 0.55);
    expect(await eventsFor(t, id)).toHaveLength(1);
    setPrice(venue, "kalshi:A", 0.6);
    setPrice(venue, "kalshi:A", 0.58);
    expect(await eventsFor(t, id)).toHaveLength(1);
    expect(await getAlert(t.app, key, id)).toMatchObject({
      status: "triggered",
      armed: false,
      trigger_count: 1,
      last_triggered_at: "2026-11-22T12:00:01.000Z",
    });
  });

  it("without repeat fires only once, even after the price crosses back and again", async () => {
    const watching = t.services.alerts.watching;
    const id = await newAlert(t.app, key, {
      market_id: "kalshi:C",
      condition: "price_below",
      threshold: 0.3,
    });
    expect(t.services.alerts.watching).toBe(watching + 1);
    setPrice(venue, "kalshi:C", 0.25);
    setPrice(venue, "kalshi:C", 0.4);
    setPrice(venue, "kalshi:C", 0.2);
    expect(await eventsFor(t, id)).toHaveLength(1);
    expect(await getAlert(t.app, key, id)).toMatchObject({
      status: "triggered",
      armed: false,
      trigger_count: 1,
    });
    // A triggered alert is no longer evaluated at all.
    expect(t.services.alerts.watching).toBe(watching);
  });

  it("with repeat re-arms only once the price is strictly back on the other side, then fires again", async () => {
    const id = await newAlert(t.app, key, {
      market_id: "kalshi:D",
      condition: "price_below",
      threshold: 0.3,
      repeat: true,
    });
    setPrice(venue, "kalshi:D", 0.35);
    setPrice(venue, "kalshi:D", 0.25);
    expect(await eventsFor(t, id)).toHaveLength(1);
    expect(await getAlert(t.app, key, id)).toMatchObject({
      status: "active",
      armed: false,
      trigger_count: 1,
    });

    // Still below, then exactly at the threshold (neither side), then below again: no new firing.
    setPrice(venue, "kalshi:D", 0.2);
    setPrice(venue, "kalshi:D", 0.3);
    setPrice(venue, "kalshi:D", 0.28);
    expect(await eventsFor(t, id)).toHaveLength(1);

    setPrice(venue, "kalshi:D", 0.32);
    await t.services.alerts.idle();
    expect(await getAlert(t.app, key, id)).toMatchObject({ armed: true, trigger_count: 1 });

    setPrice(venue, "kalshi:D", 0.29);
    const events = await eventsFor(t, id);
    expect(events.map((e) => e.data.current_price)).toEqual([0.25, 0.29]);
    expect(await getAlert(t.app, key, id)).toMatchObject({
      status: "active",
      armed: false,
      trigger_count: 2,
    });
  });

  it("records the spec's price.alert payload in the outbox, for the alert's account and environment", async () => {
    const sandboxKey = (await createKey(t.app, session, { type: "read_only", environment: "sandbox" })).key;
    const live = await newAlert(t.app, key, {
      market_id: "kalshi:A",
      condition: "price_below",
      threshold: 0.4,
    });
    const sandbox = await newAlert(t.app, sandboxKey, {
      market_id: "kalshi:A",
      condition: "price_below",
      threshold: 0.35,
    });
    setPrice(venue, "kalshi:A", 0.3125);
    const [event] = await eventsFor(t, live);
    expect(event).toMatchObject({ type: "price.alert", account_id: accountId, environment: "live" });
    expect(event!.data).toEqual({
      alert_id: live,
      market_id: "kalshi:A",
      event_title: EVENT_TITLE,
      condition: "price_below",
      threshold: 0.4,
      current_price: 0.3125,
      platform: "kalshi",
    });
    const [sandboxEvent] = await eventsFor(t, sandbox);
    expect(sandboxEvent).toMatchObject({ account_id: accountId, environment: "sandbox" });
    expect(sandboxEvent!.data).toMatchObject({ threshold: 0.35, current_price: 0.3125 });
  });

  it("uses the market's own title when it belongs to no event", async () => {
    const id = await newAlert(t.app, key, {
      market_id: "kalshi:E",
      condition: "price_above",
      threshold: 0.9,
    });
    setPrice(venue, "kalshi:E", 0.95);
    const [event] = await eventsFor(t, id);
    expect(event!.data.event_title).toBe("Market E");
  });

  it("evaluates the 24-hour change conditions in percent", async () => {
    const above = await newAlert(t.app, key, {
      market_id: "kalshi:F",
      condition: "change_pct_24h_above",
      threshold: 10,
    });
    const below = await newAlert(t.app, key, {
      market_id: "kalshi:F",
      condition: "change_pct_24h_below",
      threshold: -10,
    });
    setPrice(venue, "kalshi:F", 0.4);
    // One minute short of a day later, the price of a day ago is the 0.40 above.
    t.clock.advance(24 * 3_600_000 - 60_000);
    setPrice(venue, "kalshi:F", 0.42);
    expect(t.services.live.quotes.get("kalshi:F", t.clock.now())?.changePct24h).toBe(5);
    expect(await eventsFor(t, above)).toHaveLength(0);
    expect(await eventsFor(t, below)).toHaveLength(0);

    setPrice(venue, "kalshi:F", 0.46);
    expect(t.services.live.quotes.get("kalshi:F", t.clock.now())?.changePct24h).toBe(15);
    setPrice(venue, "kalshi:F", 0.34);
    const [up] = await eventsFor(t, above);
    const [down] = await eventsFor(t, below);
    expect(up!.data).toMatchObject({ condition: "change_pct_24h_above", threshold: 10, current_price: 0.46 });
    expect(down!.data).toMatchObject({
      condition: "change_pct_24h_below",
      threshold: -10,
      current_price: 0.34,
    });
    expect(await eventsFor(t, above)).toHaveLength(1);
  });

  it("knows the 24-hour change from the venue's price a day ago, before crossbook has a day of its own", async () => {
    const above = await newAlert(t.app, key, {
      market_id: "kalshi:I",
      condition: "change_pct_24h_above",
      threshold: 10,
    });
    // The first quote after a start: 0.46 against the venue's 0.40 of a day ago is +15 %.
    setPrice(venue, "kalshi:I", 0.46);
    expect(t.services.live.quotes.get("kalshi:I", t.clock.now())?.changePct24h).toBe(15);
    const [event] = await eventsFor(t, above);
    expect(event!.data).toMatchObject({
      condition: "change_pct_24h_above",
      threshold: 10,
      current_price: 0.46,
    });
  });

  it("fires at creation when the condition already holds on the current quote", async () => {
    setPrice(venue, "kalshi:G", 0.7);
    const response = await createAlert(t.app, key, {
      market_id: "kalshi:G",
      condition: "price_above",
      threshold: 0.6,
    });
    expect(response.statusCode).toBe(201);
    const created = response.json().data;
    expect(created).toMatchObject({ status: "triggered", armed: false, trigger_count: 1 });
    expect(created.last_triggered_at).toBe(created.created_at);
    const [event] = await eventsFor(t, created.id);
    expect(event!.data).toMatchObject({ threshold: 0.6, current_price: 0.7 });
    setPrice(venue, "kalshi:G", 0.75);
    expect(await eventsFor(t, created.id)).toHaveLength(1);

    const repeating = (
      await createAlert(t.app, key, {
        market_id: "kalshi:G",
        condition: "price_above",
        threshold: 0.6,
        repeat: true,
      })
    ).json().data;
    expect(repeating).toMatchObject({ status: "active", armed: false, trigger_count: 1 });
    setPrice(venue, "kalshi:G", 0.5);
    setPrice(venue, "kalshi:G", 0.65);
    expect(await eventsFor(t, repeating.id)).toHaveLength(2);
  });

  it("never fires on an unknown price", async () => {
    const id = await newAlert(t.app, key, {
      market_id: "kalshi:H",
      condition: "price_below",
      threshold: 0.5,
    });
    // A bid alone gives no price (no ask, no trade yet).
    venue.emit({
      kind: "quote",
      marketId: "kalshi:H",
      bestBid: 300_000,
      bestAsk: null,
      lastPrice: null,
      timestamp: "t",
    });
    expect(t.services.live.quotes.get("kalshi:H", t.clock.now())?.price).toBeNull();
    expect(await eventsFor(t, id)).toHaveLength(0);
    venue.emit({
      kind: "quote",
      marketId: "kalshi:H",
      bestBid: 300_000,
      bestAsk: 400_000,
      lastPrice: null,
      timestamp: "t",
    });
    expect((await eventsFor(t, id)).map((e) => e.data.current_price)).toEqual([0.35]);
  });

  it("stops evaluating a deleted alert", async () => {
    setPrice(venue, "kalshi:B", 0.5);
    const id = await newAlert(t.app, key, {
      market_id: "kalshi:B",
      condition: "price_above",
      threshold: 0.55,
      repeat: true,
    });
    const watching = t.services.alerts.watching;
    const response = await t.app.inject({ method: "DELETE", url: `/v1/alerts/${id}`, headers: bearer(key) });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({ id, status: "active", armed: true });
    expect(t.services.alerts.watching).toBe(watching - 1);
    setPrice(venue, "kalshi:B", 0.6);
    expect(await eventsFor(t, id)).toHaveLength(0);
    const gone = await t.app.inject({ method: "GET", url: `/v1/alerts/${id}`, headers: bearer(key) });
    expect(gone.statusCode).toBe(404);
  });

  it("lists the caller's alerts newest first, filtered and paginated", async () => {
    const fresh = (await createKey(t.app, (await signup(t.app)).session, { type: "read_only" })).key;
    const ids: string[] = [];
    for (const [market, threshold] of [
      ["kalshi:C", 0.91],
      ["kalshi:C", 0.92],
      ["kalshi:D", 0.93],
    ] as const) {
      t.clock.advance(1);
      ids.push(await newAlert(t.app, fresh, { market_id: market, condition: "price_above", threshold }));
    }
    setPrice(venue, "kalshi:D", 0.95);
    await t.services.alerts.idle();
    const list = async (query: string) =>
      (await t.app.inject({ method: "GET", url: `/v1/alerts${query}`, headers: bearer(fresh) })).json();

    const all = await list("");
    expect(all.data.map((a: { id: string }) => a.id)).toEqual([...ids].reverse());
    expect(all.meta).toEqual({ page: 1, limit: 50, total: 3 });

    const page2 = await list("?limit=2&offset=2");
    expect(page2.data.map((a: { id: string }) => a.id)).toEqual([ids[0]]);
    expect(page2.meta).toEqual({ page: 2, limit: 2, total: 3 });

    const onC = await list("?market_id=kalshi:C");
    expect(onC.data.map((a: { id: string }) => a.id)).toEqual([ids[1], ids[0]]);
    const triggered = await list("?status=triggered");
    expect(triggered.data.map((a: { id: string }) => a.id)).toEqual([ids[2]]);
    expect((await list("?status=active&market_id=kalshi:D")).meta.total).toBe(0);
  });
});
