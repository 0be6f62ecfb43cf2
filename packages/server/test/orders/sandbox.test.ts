/**
 * The sandbox exchange through the API: a marketable order walks the real book, a resting order
 * fills only from real trades after the volume ahead of it, fees per venue, collateral locked and
 * released, settlement at resolution.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { bearer } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import {
  balance,
  book,
  eventsOfType,
  expectLedgerBalanced,
  get,
  place,
  placed,
  printTrade,
  setBook,
  type Trading,
  tradingApp,
} from "./setup";

describe.each(STORE_BACKENDS)("on %s", (store) => {
  let s: Trading;
  beforeEach(async () => {
    s = await tradingApp({ store });
  });
  afterEach(async () => {
    await s.t.close();
  });

  describe("sandbox balance", () => {
    it("starts every sandbox account at 10,000 USDC", async () => {
      const b = await balance(s.t.app, s.key);
      expect(b).toMatchObject({
        environment: "sandbox",
        available: 10_000,
        locked: 0,
        positions_cost: 0,
        total: 10_000,
      });
      const deposits = await eventsOfType(s.t, "deposit.completed");
      expect(deposits).toHaveLength(1);
      expect(deposits[0]!.data).toMatchObject({ amount: 10_000, balance: 10_000, environment: "sandbox" });
    });
  });

  describe("marketable orders walk the real book", () => {
    it("a buy takes the asks level by level up to its limit, paying Kalshi's fee", async () => {
      setBook(
        s.kalshi,
        book("kalshi:K", {
          bids: [[0.4, 100]],
          asks: [
            [0.42, 10],
            [0.43, 20],
            [0.45, 50],
          ],
        }),
      );
      const order = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.43,
        amount: 25,
      });
      expect(order.status).toBe("filled"); // 25 of the 30 within 0.43
      expect(order.filled_amount).toBe(25);
      // 10 @ 0.42 + 15 @ 0.43 = 4.2 + 6.45
      expect(order.average_fill_price).toBeCloseTo(10.65 / 25, 6);
      // Kalshi's rounding on each fill, with the order's fee accumulator: 10 @ 0.42, trade fee 0.17052
      // -> 0.1706, the balance change (−4.3706) to the cent: 0.18; 15 @ 0.43, 0.257355 -> 0.2574, to the
      // cent 0.26 less the cent of rounding the order has now overpaid: 0.25. 0.43 in all, what one
      // 25-lot costs (not 0.44, a cent rounded up on each fill).
      expect(order.fees).toBeCloseTo(0.43, 6);
      const fills = (await get(s.t.app, s.key, `/v1/orders/${order.id}/fills`)).data;
      expect(fills.map((f: { price: number; size: number }) => [f.price, f.size])).toEqual([
        [0.42, 10],
        [0.43, 15],
      ]);
      expect(fills[0].cause).toMatchObject({ kind: "book_level", price: 0.42, size_shown: 10 });
      expect(fills[0].liquidity).toBe("taker");
      const b = await balance(s.t.app, s.key);
      expect(b.available).toBeCloseTo(10_000 - 10.65 - 0.43, 6);
      expect(b.positions_cost).toBeCloseTo(10.65, 6);
      await expectLedgerBalanced(s.t, s.accountId);
    });

    it("a NO buy takes the NO asks (the complement of the YES bids), never the YES price", async () => {
      setBook(s.kalshi, book("kalshi:K", { bids: [[0.6, 10]], asks: [[0.62, 10]] }));
      const order = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        outcome: "no",
        price: 0.4,
        amount: 5,
      });
      expect(order.filled_amount).toBe(5);
      expect(order.average_fill_price).toBeCloseTo(0.4, 6);
      const positions = (await get(s.t.app, s.key, "/v1/positions")).data;
      expect(positions).toHaveLength(1);
      expect(positions[0]).toMatchObject({ outcome: "no", size: 5, cost_basis: 2 });
      // Marked at 1 − YES mid (0.61): 0.39, not at the YES price.
      expect(positions[0].current_price).toBeCloseTo(0.39, 6);
      expect(positions[0].unrealized_pnl).toBeCloseTo(5 * 0.39 - 2, 6);
    });

    it("FOK fills all or nothing; IOC keeps what it got and cancels the rest", async () => {
      setBook(s.kalshi, book("kalshi:K", { asks: [[0.5, 10]] }));
      const fok = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.5,
        amount: 20,
        time_in_force: "FOK",
      });
      expect(fok).toMatchObject({ status: "cancelled", filled_amount: 0, cancel_reason: "unfilled_fok" });
      const ioc = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.5,
        amount: 20,
        time_in_force: "IOC",
      });
      expect(ioc).toMatchObject({ status: "cancelled", filled_amount: 10, cancel_reason: "unfilled_ioc" });
      const b = await balance(s.t.app, s.key);
      expect(b.locked).toBe(0);
      await expectLedgerBalanced(s.t, s.accountId);
    });

    it("liquidity one order took is not there for the next until the venue's book changes", async () => {
      setBook(s.kalshi, book("kalshi:K", { asks: [[0.5, 10]] }));
      const first = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.5,
        amount: 8,
        time_in_force: "IOC",
      });
      const second = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.5,
        amount: 8,
        time_in_force: "IOC",
      });
      expect([first.filled_amount, second.filled_amount]).toEqual([8, 2]);
      setBook(s.kalshi, book("kalshi:K", { asks: [[0.5, 30]] }));
      const third = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.5,
        amount: 8,
        time_in_force: "IOC",
      });
      expect(third.filled_amount).toBe(8);
    });

    it("a market order honours max_slippage from the best price", async () => {
      setBook(
        s.kalshi,
        book("kalshi:K", {
          asks: [
            [0.5, 10],
            [0.51, 10],
            [0.6, 100],
          ],
        }),
      );
      const order = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        type: "market",
        amount: 50,
        max_slippage: 0.05,
      });
      // 0.5 × 1.05 = 0.525: takes 0.50 and 0.51, never 0.60; the rest is cancelled.
      expect(order).toMatchObject({
        status: "cancelled",
        filled_amount: 20,
        price: 0.52,
        time_in_force: "IOC",
      });
    });

    it("Polymarket charges shares × rate × p(1 − p) from the market's fee schedule on taker fills", async () => {
      setBook(s.polymarket, book("polymarket:P", { asks: [[0.3, 100]] }));
      const order = await placed(s.t.app, s.key, {
        market_id: "polymarket:P",
        side: "buy",
        price: 0.3,
        amount: 10,
      });
      // P's schedule: rate 0.05, exponent 1 (takerBaseFee 1000 is the cap): 10 × 0.05 × 0.3 × 0.7 = 0.105
      expect(order.fees).toBeCloseTo(0.105, 6);
      await expectLedgerBalanced(s.t, s.accountId);
    });
  });

  describe("resting orders fill only from real trades, after the queue ahead", () => {
    it("book changes never fill; trades through the queue do", async () => {
      setBook(s.kalshi, book("kalshi:K", { bids: [[0.4, 100]], asks: [[0.45, 50]] }));
      const order = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.4,
        amount: 30,
      });
      expect(order).toMatchObject({ status: "open", filled_amount: 0 });
      let b = await balance(s.t.app, s.key);
      expect(b.locked).toBeGreaterThan(12); // 30 × 0.40 plus the fee bound
      // The ask drops onto our price in the book: book churn, no trade, no fill.
      setBook(s.kalshi, book("kalshi:K", { bids: [[0.4, 100]], asks: [[0.41, 50]] }));
      await s.t.services.exchange.idle();
      expect((await get(s.t.app, s.key, `/v1/orders/${order.id}`)).data.filled_amount).toBe(0);
      // 60 sold into the bid: all of it goes to the 100 ahead of us.
      printTrade(s.kalshi, "kalshi:K", { price: 0.4, size: 60, side: "sell" });
      await s.t.services.exchange.idle();
      expect((await get(s.t.app, s.key, `/v1/orders/${order.id}`)).data.filled_amount).toBe(0);
      // 50 more: 40 finish the queue ahead, 10 reach us.
      printTrade(s.kalshi, "kalshi:K", { price: 0.4, size: 50, side: "sell" });
      await s.t.services.exchange.idle();
      let now = (await get(s.t.app, s.key, `/v1/orders/${order.id}`)).data;
      expect(now).toMatchObject({ status: "open", filled_amount: 10, fees: 0 });
      // A buy-side trade never fills a bid.
      printTrade(s.kalshi, "kalshi:K", { price: 0.4, size: 50, side: "buy" });
      await s.t.services.exchange.idle();
      expect((await get(s.t.app, s.key, `/v1/orders/${order.id}`)).data.filled_amount).toBe(10);
      // A sell through our price (0.39) fills the rest.
      printTrade(s.kalshi, "kalshi:K", { price: 0.39, size: 100, side: "sell" });
      await s.t.services.exchange.idle();
      now = (await get(s.t.app, s.key, `/v1/orders/${order.id}`)).data;
      expect(now).toMatchObject({ status: "filled", filled_amount: 30, average_fill_price: 0.4 });
      const fills = (await get(s.t.app, s.key, `/v1/orders/${order.id}/fills`)).data;
      expect(fills[0].cause).toMatchObject({ kind: "trade", price: 0.4, size: 50, queue_ahead_before: 40 });
      expect(fills.every((f: { liquidity: string }) => f.liquidity === "maker")).toBe(true);
      b = await balance(s.t.app, s.key);
      expect(b.locked).toBe(0);
      expect(b.available).toBeCloseTo(10_000 - 12, 6);
      expect((await eventsOfType(s.t, "order.filled")).map((e) => e.data.order_id)).toEqual([order.id]);
      expect(await eventsOfType(s.t, "order.partially_filled")).toHaveLength(1);
      await expectLedgerBalanced(s.t, s.accountId);
    });
  });

  describe("cancel releases what the order held", () => {
    it("a cancelled buy returns its locked cash; a second cancel is a 409", async () => {
      setBook(s.kalshi, book("kalshi:K", { bids: [[0.4, 100]], asks: [[0.45, 50]] }));
      const order = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.3,
        amount: 10,
      });
      const cancel = await s.t.app.inject({
        method: "DELETE",
        url: `/v1/orders/${order.id}`,
        headers: bearer(s.key),
      });
      expect(cancel.statusCode).toBe(200);
      expect(Object.keys(cancel.json().data).sort()).toEqual([
        "amount",
        "cancelled_at",
        "filled_amount",
        "id",
        "market_id",
        "status",
      ]);
      expect((await balance(s.t.app, s.key)).available).toBe(10_000);
      const again = await s.t.app.inject({
        method: "DELETE",
        url: `/v1/orders/${order.id}`,
        headers: bearer(s.key),
      });
      expect(again.statusCode).toBe(409);
      expect(again.json().error).toMatchObject({
        code: "ORDER_NOT_CANCELLABLE",
        details: { order_id: order.id, status: "cancelled" },
      });
      // Trades after the cancel never fill it.
      printTrade(s.kalshi, "kalshi:K", { price: 0.2, size: 1000, side: "sell" });
      await s.t.services.exchange.idle();
      expect((await get(s.t.app, s.key, `/v1/orders/${order.id}`)).data.filled_amount).toBe(0);
      await expectLedgerBalanced(s.t, s.accountId);
    });
  });

  describe("selling and settlement", () => {
    it("selling needs contracts held; a sell realizes PnL and closes the position", async () => {
      setBook(s.kalshi, book("kalshi:K", { bids: [[0.6, 100]], asks: [[0.4, 100]] }));
      const naked = await place(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "sell",
        price: 0.6,
        amount: 5,
      });
      expect(naked.statusCode).toBe(422);
      expect(naked.json().error.code).toBe("INSUFFICIENT_POSITION");
      await placed(s.t.app, s.key, { market_id: "kalshi:K", side: "buy", price: 0.4, amount: 10 });
      const sell = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "sell",
        price: 0.6,
        amount: 10,
      });
      expect(sell).toMatchObject({ status: "filled", filled_amount: 10, average_fill_price: 0.6 });
      const positions = (await get(s.t.app, s.key, "/v1/positions?status=all")).data;
      expect(positions[0]).toMatchObject({ status: "closed", size: 0, cost_basis: 0, realized_pnl: 2 });
      expect(await eventsOfType(s.t, "position.closed")).toHaveLength(1);
      await expectLedgerBalanced(s.t, s.accountId);
    });

    it("a resolution reported by the venue feed settles at once, before the next catalog sync", async () => {
      setBook(s.kalshi, book("kalshi:K", { bids: [[0.6, 100]], asks: [[0.4, 100]] }));
      await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        outcome: "no",
        price: 0.4,
        amount: 10,
      });
      s.kalshi.emit({ kind: "status", marketId: "kalshi:K", status: "resolved", resolution: "no" });
      await vi.waitFor(async () => {
        const [position] = (await get(s.t.app, s.key, "/v1/positions?status=resolved")).data;
        expect(position).toMatchObject({ outcome: "no", payout: 10, realized_pnl: 6, redeemable: true });
      });
      const refused = await place(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.4,
        amount: 1,
      });
      expect(refused.json().error.code).toBe("MARKET_CLOSED");
      await expectLedgerBalanced(s.t, s.accountId);
    });

    it("resolution pays winning YES holders 1 per contract and NO holders nothing, and cancels open orders", async () => {
      setBook(s.kalshi, book("kalshi:K", { bids: [[0.6, 100]], asks: [[0.4, 100]] }));
      await placed(s.t.app, s.key, { market_id: "kalshi:K", side: "buy", price: 0.4, amount: 10 });
      await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        outcome: "no",
        price: 0.4,
        amount: 5,
      });
      const resting = await placed(s.t.app, s.key, {
        market_id: "kalshi:K",
        side: "buy",
        price: 0.2,
        amount: 5,
      });
      s.kalshi.set({ ...s.kalshi.markets.get("kalshi:K")!, status: "resolved", resolution: "yes" });
      await s.t.services.catalog.syncVenue("kalshi");
      await s.t.services.orders.settleFromCatalog();
      const all = (await get(s.t.app, s.key, "/v1/positions?status=resolved")).data;
      const yes = all.find((p: { outcome: string }) => p.outcome === "yes");
      const no = all.find((p: { outcome: string }) => p.outcome === "no");
      expect(yes).toMatchObject({ payout: 10, realized_pnl: 6, redeemable: true, resolution: "yes" });
      expect(no).toMatchObject({ payout: 0, realized_pnl: -2, redeemable: false });
      expect((await get(s.t.app, s.key, `/v1/orders/${resting.id}`)).data).toMatchObject({
        status: "cancelled",
        cancel_reason: "market_resolved",
      });
      const resolved = await eventsOfType(s.t, "position.resolved");
      expect(resolved.map((e) => e.data.won).sort()).toEqual([false, true]);
      expect(resolved[0]!.data.event_title).toBe("The K event");
      await expectLedgerBalanced(s.t, s.accountId);
      // Settling again changes nothing.
      await s.t.services.orders.settleFromCatalog();
      expect(await eventsOfType(s.t, "position.resolved")).toHaveLength(2);
    });
  });
});
