/**
 * Reading and cancelling orders (spec 4.1, 3.1), idempotent placement, GTD expiry, sandbox money
 * and tenant isolation.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bearer, createKey, signup } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import {
  balance,
  book,
  eventsOfType,
  expectLedgerBalanced,
  get,
  place,
  placed,
  setBook,
  type Trading,
  tradingApp,
} from "./setup";

describe.each(STORE_BACKENDS)("on %s", (store) => {
  let s: Trading;
  beforeEach(async () => {
    s = await tradingApp({ store });
    setBook(s.kalshi, book("kalshi:K", { bids: [[0.4, 100]], asks: [[0.45, 100]] }));
    setBook(s.kalshi, book("kalshi:K2", { bids: [[0.3, 100]], asks: [[0.35, 100]] }));
  });
  afterEach(async () => {
    await s.t.close();
  });

  const del = (url: string, key = s.key) => s.t.app.inject({ method: "DELETE", url, headers: bearer(key) });

  describe("listing and reading", () => {
    it("lists open orders by default, newest first, in the list form with page meta", async () => {
      const a = await placed(s.t.app, s.key, { market_id: "kalshi:K", side: "buy", price: 0.3, amount: 1 });
      const b = await placed(s.t.app, s.key, { market_id: "kalshi:K2", side: "buy", price: 0.2, amount: 1 });
      await placed(s.t.app, s.key, { market_id: "kalshi:K", side: "buy", price: 0.45, amount: 1 }); // fills
      const list = await get(s.t.app, s.key, "/v1/orders");
      expect(list.data.map((o: { id: string }) => o.id)).toEqual([b.id, a.id]);
      expect(list.meta).toEqual({ page: 1, limit: 50, total: 2 });
      for (const omitted of ["average_fill_price", "fees", "updated_at"])
        expect(list.data[0]).not.toHaveProperty(omitted);
      expect((await get(s.t.app, s.key, "/v1/orders?status=filled")).data).toHaveLength(1);
      expect((await get(s.t.app, s.key, "/v1/orders?status=all")).meta.total).toBe(3);
      expect(
        (await get(s.t.app, s.key, "/v1/orders?status=all&market_id=kalshi:K2")).data.map(
          (o: { id: string }) => o.id,
        ),
      ).toEqual([b.id]);
      const page2 = await get(s.t.app, s.key, "/v1/orders?status=all&limit=2&offset=2");
      expect(page2.meta).toEqual({ page: 2, limit: 2, total: 3 });
      expect(page2.data).toHaveLength(1);
      const bad = await s.t.app.inject({
        method: "GET",
        url: "/v1/orders?limit=101",
        headers: bearer(s.key),
      });
      expect(bad.statusCode).toBe(400);
    });

    it("the full form has average_fill_price null when unfilled", async () => {
      const order = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.3,
        amount: 1,
      });
      const full = (await get(s.t.app, s.key, `/v1/orders/${order.id}`)).data;
      expect(full).toMatchObject({
        average_fill_price: null,
        fees: 0,
        platform: "kalshi",
        status: "open",
        environment: "sandbox",
      });
      expect(full).not.toHaveProperty("cancelled_at");
    });

    it("another account's order is a 404, and so is a live key's view of a sandbox order", async () => {
      const order = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.3,
        amount: 1,
      });
      const other = await signup(s.t.app);
      const otherKey = (await createKey(s.t.app, other.session, { type: "trading", environment: "sandbox" }))
        .key;
      for (const key of [otherKey, s.liveKey]) {
        const read = await s.t.app.inject({
          method: "GET",
          url: `/v1/orders/${order.id}`,
          headers: bearer(key),
        });
        expect(read.statusCode).toBe(404);
        expect(read.json().error.code).toBe("ORDER_NOT_FOUND");
        expect((await del(`/v1/orders/${order.id}`, key)).statusCode).toBe(404);
        expect((await get(s.t.app, key, "/v1/orders?status=all")).data).toEqual([]);
        const fills = await s.t.app.inject({
          method: "GET",
          url: `/v1/orders/${order.id}/fills`,
          headers: bearer(key),
        });
        expect(fills.statusCode).toBe(404);
      }
      // Their bulk cancel does not touch it.
      await del("/v1/orders", otherKey);
      expect((await get(s.t.app, s.key, `/v1/orders/${order.id}`)).data.status).toBe("open");
    });
  });

  describe("cancelling", () => {
    it("a filled order cannot be cancelled (409 with its status)", async () => {
      const order = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.45,
        amount: 1,
      });
      const response = await del(`/v1/orders/${order.id}`);
      expect(response.statusCode).toBe(409);
      expect(response.json().error).toMatchObject({
        code: "ORDER_NOT_CANCELLABLE",
        details: { order_id: order.id, status: "filled" },
      });
    });

    it("a partly filled order stays open; its cancel keeps the filled amount", async () => {
      setBook(s.kalshi, book("kalshi:K", { asks: [[0.45, 4]] }));
      const order = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.45,
        amount: 10,
      });
      expect(order).toMatchObject({ status: "open", filled_amount: 4 });
      const cancelled = (await del(`/v1/orders/${order.id}`)).json().data;
      expect(cancelled).toMatchObject({ status: "cancelled", filled_amount: 4, amount: 10 });
      const events = await eventsOfType(s.t, "order.cancelled");
      expect(events.at(-1)!.data).toMatchObject({ order_id: order.id, filled_amount: 4, reason: "user" });
      await expectLedgerBalanced(s.t, s.accountId);
    });

    it("bulk cancel takes the market and side filters and reports what it cancelled", async () => {
      await placed(s.t.app, s.key, { market_id: "kalshi:K", side: "buy", price: 0.3, amount: 1 });
      await placed(s.t.app, s.key, { market_id: "kalshi:K", side: "buy", price: 0.31, amount: 1 });
      await placed(s.t.app, s.key, { market_id: "kalshi:K2", side: "buy", price: 0.2, amount: 1 });
      // A sell needs a holding: buy 2 on K2 at the ask, then offer them.
      await placed(s.t.app, s.key, { market_id: "kalshi:K2", side: "buy", price: 0.35, amount: 2 });
      const sell = await placed(s.t.app, s.key, {
        market_id: "kalshi:K2",
        side: "sell",
        price: 0.9,
        amount: 2,
      });
      const sells = (
        await s.t.app.inject({ method: "DELETE", url: "/v1/orders?side=sell", headers: bearer(s.key) })
      ).json().data;
      expect(sells).toEqual({
        cancelled_count: 1,
        cancelled_orders: [{ id: sell.id, market_id: "kalshi:K2" }],
      });
      const k = (
        await s.t.app.inject({
          method: "DELETE",
          url: "/v1/orders?market_id=kalshi:K",
          headers: bearer(s.key),
        })
      ).json().data;
      expect(k.cancelled_count).toBe(2);
      expect(k.cancelled_orders.every((o: { market_id: string }) => o.market_id === "kalshi:K")).toBe(true);
      const rest = (await del("/v1/orders")).json().data;
      expect(rest.cancelled_count).toBe(1);
      expect((await get(s.t.app, s.key, "/v1/orders")).data).toEqual([]);
      // The sell's reservation is released: the 2 contracts can be sold again.
      const again = await placed(s.t.app, s.key, {
        market_id: "kalshi:K2",
        side: "sell",
        price: 0.9,
        amount: 2,
      });
      expect(again.status).toBe("open");
      await expectLedgerBalanced(s.t, s.accountId);
    });
  });

  describe("GTD expiry", () => {
    it("a GTD order is cancelled as expired once its time is up", async () => {
      const expiresAt = new Date(s.t.clock.now() + 60_000).toISOString();
      const order = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.3,
        amount: 5,
        time_in_force: "GTD",
        expires_at: expiresAt,
      });
      expect(order.expires_at).toBe(expiresAt);
      expect(await s.t.services.orders.expireDue()).toBe(0);
      s.t.clock.advance(60_000);
      expect(await s.t.services.orders.expireDue()).toBe(1);
      expect((await get(s.t.app, s.key, `/v1/orders/${order.id}`)).data).toMatchObject({
        status: "cancelled",
        cancel_reason: "expired",
      });
      expect((await balance(s.t.app, s.key)).locked).toBe(0);
    });
  });

  describe("idempotency", () => {
    const body = { market_id: "kalshi:K", side: "buy", price: 0.3, amount: 2 };

    it("the same key and body return the first response; a different body is a 422", async () => {
      const first = await place(s.t.app, s.key, body, { "idempotency-key": "abc-1" });
      expect(first.statusCode).toBe(201);
      const again = await place(s.t.app, s.key, { ...body }, { "idempotency-key": "abc-1" });
      expect(again.statusCode).toBe(201);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.json().data).toEqual(first.json().data);
      const reordered = await place(
        s.t.app,
        s.key,
        { amount: 2, price: 0.3, side: "buy", market_id: "kalshi:K" },
        { "idempotency-key": "abc-1" },
      );
      expect(reordered.json().data.id).toBe(first.json().data.id);
      const changed = await place(s.t.app, s.key, { ...body, amount: 3 }, { "idempotency-key": "abc-1" });
      expect(changed.statusCode).toBe(422);
      expect(changed.json().error.code).toBe("IDEMPOTENCY_KEY_REUSED");
      expect((await get(s.t.app, s.key, "/v1/orders")).meta.total).toBe(1);
      // One lock, not two: 2 × 0.30, Kalshi's trade fee on them (0.0294) and a cent for its rounding.
      expect((await balance(s.t.app, s.key)).locked).toBeCloseTo(0.6 + 0.0294 + 0.01, 6);
    });

    it("a retry gets the first response even where a new placement would be refused now", async () => {
      const first = await place(s.t.app, s.key, body, { "idempotency-key": "then" });
      expect(first.statusCode).toBe(201);
      // Nothing left to lock: the same body as a new order would be INSUFFICIENT_BALANCE.
      const available = (await balance(s.t.app, s.key)).available;
      const withdraw = await s.t.app.inject({
        method: "POST",
        url: "/v1/sandbox/withdraw",
        headers: bearer(s.key),
        payload: { amount: available },
      });
      expect(withdraw.statusCode).toBe(200);
      const again = await place(s.t.app, s.key, body, { "idempotency-key": "then" });
      expect(again.statusCode).toBe(201);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.json().data).toEqual(first.json().data);
      // Another body under the key is IDEMPOTENCY_KEY_REUSED, even one that is invalid on its own.
      const offTick = await place(s.t.app, s.key, { ...body, price: 0.305 }, { "idempotency-key": "then" });
      expect(offTick.json().error.code).toBe("IDEMPOTENCY_KEY_REUSED");
      // A new key is refused for what it is.
      const fresh = await place(s.t.app, s.key, body, { "idempotency-key": "now" });
      expect(fresh.json().error.code).toBe("INSUFFICIENT_BALANCE");
      expect((await get(s.t.app, s.key, "/v1/orders")).meta.total).toBe(1);
    });

    it("client_order_id is an idempotency key too", async () => {
      const a = await placed(s.t.app, s.key, { ...body, client_order_id: "mm-1" });
      const b = await placed(s.t.app, s.key, { ...body, client_order_id: "mm-1" });
      expect(b.id).toBe(a.id);
      expect(b.client_order_id).toBe("mm-1");
      const clash = await place(s.t.app, s.key, { ...body, amount: 5, client_order_id: "mm-1" });
      expect(clash.statusCode).toBe(422);
    });

    it("concurrent retries with one key create one order", async () => {
      const responses = await Promise.all(
        Array.from({ length: 8 }, () => place(s.t.app, s.key, body, { "idempotency-key": "burst" })),
      );
      expect(new Set(responses.map((r) => r.statusCode))).toEqual(new Set([201]));
      expect(new Set(responses.map((r) => r.json().data.id)).size).toBe(1);
      expect((await get(s.t.app, s.key, "/v1/orders")).meta.total).toBe(1);
    });

    it("keys are kept 24 hours, then the key may be used again", async () => {
      const first = (await place(s.t.app, s.key, body, { "idempotency-key": "day" })).json().data;
      s.t.clock.advance(24 * 3_600_000 + 1);
      const later = (await place(s.t.app, s.key, body, { "idempotency-key": "day" })).json().data;
      expect(later.id).not.toBe(first.id);
    });

    it("keys are per account: another account's same key is its own", async () => {
      const other = await signup(s.t.app);
      const otherKey = (await createKey(s.t.app, other.session, { type: "trading", environment: "sandbox" }))
        .key;
      const mine = (await place(s.t.app, s.key, body, { "idempotency-key": "shared" })).json().data;
      const theirs = (await place(s.t.app, otherKey, body, { "idempotency-key": "shared" })).json().data;
      expect(theirs.id).not.toBe(mine.id);
    });
  });

  describe("sandbox money", () => {
    it("deposit and withdraw move the available balance and record their events", async () => {
      const deposit = await s.t.app.inject({
        method: "POST",
        url: "/v1/sandbox/deposit",
        headers: bearer(s.key),
        payload: { amount: 500.5 },
      });
      expect(deposit.statusCode).toBe(200);
      expect(deposit.json().data.balance).toMatchObject({ available: 10_500.5, deposits: 10_500.5 });
      const withdraw = await s.t.app.inject({
        method: "POST",
        url: "/v1/sandbox/withdraw",
        headers: bearer(s.key),
        payload: { amount: 20_000 },
      });
      expect(withdraw.statusCode).toBe(422);
      expect(withdraw.json().error.code).toBe("INSUFFICIENT_BALANCE");
      const ok = await s.t.app.inject({
        method: "POST",
        url: "/v1/sandbox/withdraw",
        headers: bearer(s.key),
        payload: { amount: 0.5 },
      });
      expect(ok.json().data.balance.available).toBe(10_500);
      const withdrawals = await eventsOfType(s.t, "withdrawal.completed");
      expect(withdrawals.map((e) => e.data)).toMatchObject([
        { amount: 0.5, balance: 10_500, currency: "USDC", environment: "sandbox" },
      ]);
      for (const amount of [0, -5, 1e-7]) {
        const bad = await s.t.app.inject({
          method: "POST",
          url: "/v1/sandbox/deposit",
          headers: bearer(s.key),
          payload: { amount },
        });
        expect(bad.statusCode, String(amount)).toBe(400);
      }
    });

    it("reset wipes orders, fills and positions and restores 10,000; another account keeps its own", async () => {
      const other = await signup(s.t.app, "other-reset@example.com");
      const otherKey = (await createKey(s.t.app, other.session, { type: "trading", environment: "sandbox" }))
        .key;
      const otherFilled = await placed(s.t.app, otherKey, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.45,
        amount: 5,
      });
      const filled = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.45,
        amount: 10,
      });
      const fillsOf = async (orderId: string) =>
        (
          await s.t.runtime.store.db
            .selectFrom("fills")
            .select("id")
            .where("order_id", "=", orderId)
            .execute()
        ).length;
      expect(await fillsOf(filled.id)).toBe(1);
      const resting = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.3,
        amount: 10,
      });
      expect(s.t.services.exchange.restingCount).toBe(1);
      const reset = await s.t.app.inject({
        method: "POST",
        url: "/v1/sandbox/reset",
        headers: bearer(s.key),
      });
      expect(reset.statusCode).toBe(200);
      expect(reset.json().data).toMatchObject({
        available: 10_000,
        locked: 0,
        positions_cost: 0,
        total: 10_000,
      });
      expect((await get(s.t.app, s.key, "/v1/orders?status=all")).data).toEqual([]);
      expect((await get(s.t.app, s.key, "/v1/positions?status=all")).data).toEqual([]);
      expect(s.t.services.exchange.restingCount).toBe(0);
      expect(
        (await s.t.app.inject({ method: "GET", url: `/v1/orders/${resting.id}`, headers: bearer(s.key) }))
          .statusCode,
      ).toBe(404);
      expect(await fillsOf(filled.id)).toBe(0);
      expect(await fillsOf(otherFilled.id)).toBe(1);
      expect((await get(s.t.app, otherKey, `/v1/orders/${otherFilled.id}/fills`)).data).toHaveLength(1);
    });

    it("live keys cannot touch sandbox money (403 SANDBOX_ONLY)", async () => {
      for (const url of ["/v1/sandbox/deposit", "/v1/sandbox/withdraw", "/v1/sandbox/reset"]) {
        const response = await s.t.app.inject({
          method: "POST",
          url,
          headers: bearer(s.liveKey),
          payload: { amount: 1 },
        });
        expect(response.statusCode, url).toBe(403);
        expect(response.json().error.code).toBe("SANDBOX_ONLY");
      }
      expect((await balance(s.t.app, s.key)).available).toBe(10_000);
      const rows = await s.t.runtime.store.db.selectFrom("balances").select("environment").execute();
      expect(rows.map((r) => r.environment)).toEqual(["sandbox"]);
    });
  });
});
