/**
 * Resting sandbox orders across instances, on PostgreSQL + Redis: the holder of `sandbox matching`
 * holds every resting order, whichever instance accepted it; a real trade fills it once (the other
 * instance sees the same forwarded trade and fills nothing); a cancel through the other instance
 * takes effect at once; and when the holder stops, the other loads the resting orders from the store
 * and fills them. On one process (any store), the holder's check against the store rests what it
 * was not told about and forgets what was cancelled behind its back.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cancelOrderRow } from "../../src/ledger/bookkeeping";
import { orderById } from "../../src/ledger/orders-repo";
import { book, get, placed, printTrade, setBook, type Trading, tradingApp } from "../orders/setup";
import { bearer } from "../support/app";
import { INFRA_BACKENDS, STORE_BACKENDS } from "../support/backends";
import { until } from "../support/until";

const scaledOut = INFRA_BACKENDS.includes("redis") && STORE_BACKENDS.includes("postgres");

const MATCHING = "sandbox matching";

describe.runIf(scaledOut)("sandbox resting orders once per cluster (PostgreSQL + Redis)", () => {
  let one: Trading;
  let two: Trading;
  const options = (instanceId: string) =>
    ({
      store: "postgres",
      infra: "redis",
      clustered: true,
      config: { instanceId, jobLeaseSeconds: 3 },
    }) as const;

  beforeAll(async () => {
    one = await tradingApp(options("one"));
    two = await tradingApp({
      ...options("two"),
      shareWith: { schema: one.t.schema!, redisPrefix: one.t.redisPrefix },
    });
    await one.t.services.clusterJobs.start();
    await until(() => one.t.services.clusterJobs.status()[MATCHING] === "running");
    await until(() => one.kalshi.feedHandler !== undefined);
    await two.t.services.clusterJobs.start();
    expect(two.t.services.clusterJobs.status()).toMatchObject({
      [MATCHING]: "standby",
      "venue feed: kalshi": "standby",
    });
    const k = book("kalshi:K", { bids: [[0.4, 100]], asks: [[0.45, 100]] });
    setBook(one.kalshi, k);
    two.kalshi.books.set("kalshi:K", k);
    await until(() => two.t.services.live.book("kalshi:K") !== undefined);
  });
  afterAll(async () => {
    await two?.t.services.clusterJobs.stop();
    await one?.t.services.clusterJobs.stop();
    await two?.t.close();
    await one?.t.close();
  });

  const fillsOf = async (orderId: string) =>
    (await one.t.runtime.store.db.selectFrom("fills").select("id").where("order_id", "=", orderId).execute())
      .length;
  const statusOf = async (orderId: string) =>
    (await get(one.t.app, one.key, `/v1/orders/${orderId}`)).data.status as string;

  it("rests an order accepted by the other instance on the holder, and fills it once", async () => {
    const order = await placed(two.t.app, one.key, {
      market_id: "kalshi:K",
      side: "buy",
      price: 0.4,
      amount: 10,
    });
    expect(order.status).toBe("open");
    await until(() => one.t.services.exchange.restingCount === 1, { what: "the order on the holder" });
    expect(two.t.services.exchange.restingCount).toBe(0);

    // 100 were queued ahead at 0.40: a print of 150 fills the order's 10 in full.
    printTrade(one.kalshi, "kalshi:K", { price: 0.4, size: 150, side: "sell" });
    await until(async () => (await statusOf(order.id)) === "filled", { what: "the fill" });
    await one.t.services.exchange.idle();
    await two.t.services.exchange.idle();
    expect(await fillsOf(order.id)).toBe(1);
    expect(one.t.services.exchange.restingCount).toBe(0);
  });

  it("cancels through the other instance at once: the next print fills nothing", async () => {
    const order = await placed(one.t.app, one.key, {
      market_id: "kalshi:K",
      side: "buy",
      price: 0.4,
      amount: 10,
    });
    expect(one.t.services.exchange.restingCount).toBe(1);
    const cancelled = await two.t.app.inject({
      method: "DELETE",
      url: `/v1/orders/${order.id}`,
      headers: bearer(one.key),
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    // Printed before the holder may have heard of the cancel: the store says no.
    printTrade(one.kalshi, "kalshi:K", { price: 0.4, size: 500, side: "sell" });
    await one.t.services.exchange.idle();
    await until(() => one.t.services.exchange.restingCount === 0, { what: "the holder to forget it" });
    expect(await fillsOf(order.id)).toBe(0);
    expect(await statusOf(order.id)).toBe("cancelled");
  });

  it("when the holder stops, the other loads the resting orders and fills them", async () => {
    const order = await placed(one.t.app, one.key, {
      market_id: "kalshi:K",
      side: "buy",
      price: 0.4,
      amount: 10,
    });
    expect(one.t.services.exchange.restingCount).toBe(1);
    await one.t.services.clusterJobs.stop();
    expect(one.t.services.exchange.holding).toBe(false);
    expect(one.t.services.exchange.restingCount).toBe(0);
    await until(() => two.t.services.exchange.restingCount === 1, { what: "the takeover" });
    await until(() => two.kalshi.feedHandler !== undefined, { what: "the feed on the new holder" });
    two.kalshi.books.set("kalshi:K", book("kalshi:K", { bids: [[0.4, 100]], asks: [[0.45, 100]] }));
    // The queue ahead starts again from the 100 shown when the order was placed.
    printTrade(two.kalshi, "kalshi:K", { price: 0.4, size: 105, side: "sell" });
    await until(
      async () => (await get(one.t.app, one.key, `/v1/orders/${order.id}`)).data.filled_amount === 5,
      {
        what: "the first fill on the new holder",
      },
    );
    printTrade(two.kalshi, "kalshi:K", { price: 0.4, size: 20, side: "sell" });
    await until(async () => (await statusOf(order.id)) === "filled", { what: "the second fill" });
    expect(await fillsOf(order.id)).toBe(2);
  });
});

describe.each(STORE_BACKENDS)("the holder checks its resting orders against the store (%s)", (store) => {
  let s: Trading;
  beforeEach(async () => {
    s = await tradingApp({ store });
    setBook(s.kalshi, book("kalshi:K", { bids: [[0.4, 100]], asks: [[0.45, 100]] }));
  });
  afterEach(async () => {
    await s.t.close();
  });

  it("rests what it was not told about, and forgets what was cancelled behind its back", async () => {
    const exchange = s.t.services.exchange;
    await exchange.release();
    // Accepted while nobody held the resting orders: in one process, the message goes nowhere.
    const order = await placed(s.t.app, s.key, { market_id: "kalshi:K", side: "buy", price: 0.4, amount: 3 });
    expect(exchange.restingCount).toBe(0);
    await exchange.hold();
    expect(exchange.restingCount).toBe(1);

    const db = s.t.runtime.store.db;
    const row = (await orderById(db, order.id))!;
    await db
      .transaction()
      .execute((trx) =>
        cancelOrderRow(trx, { outbox: s.t.services.outbox, nowIso: new Date().toISOString() }, row, "user"),
      );
    expect(exchange.restingCount).toBe(1);
    await exchange.reconcile();
    expect(exchange.restingCount).toBe(0);
  });
});
