/** Our orders -> Kalshi's V2 order entry (`/portfolio/events/orders`), the only one the venue takes. */
import { describe, expect, it } from "vitest";
import { orderFromV2Response, toV2OrderBody, yesBookSide } from "../../../src/venues/kalshi/orders";
import type { VenueOrderRequest } from "../../../src/venues/venue";
import { fixture } from "./fixtures";

const base: VenueOrderRequest = {
  marketId: "kalshi:KXFEDDECISION-26DEC-H0",
  outcome: "yes",
  side: "buy",
  type: "limit",
  price: 420_000,
  size: 10_000_000,
  timeInForce: "GTC",
};

describe("current order shape (YES book, bid|ask)", () => {
  it.each([
    ["yes", "buy", "bid", "0.4200"],
    ["yes", "sell", "ask", "0.4200"],
    ["no", "buy", "ask", "0.5800"],
    ["no", "sell", "bid", "0.5800"],
  ] as const)("%s %s @ 0.42 -> side %s price %s", (outcome, side, kalshiSide, price) => {
    const body = toV2OrderBody({ ...base, outcome, side }, "cid-1");
    expect(body).toEqual({
      ticker: "KXFEDDECISION-26DEC-H0",
      client_order_id: "cid-1",
      side: kalshiSide,
      count: "10.00",
      price,
      time_in_force: "good_till_canceled",
      self_trade_prevention_type: "taker_at_cross",
      post_only: false,
      reduce_only: false,
    });
    expect(yesBookSide({ outcome, side, price: 420_000 }).side).toBe(kalshiSide);
  });

  it("time in force, GTD expiry in unix seconds, market orders as IOC, sub-cent prices", () => {
    expect(toV2OrderBody({ ...base, timeInForce: "IOC" }, "c").time_in_force).toBe("immediate_or_cancel");
    expect(toV2OrderBody({ ...base, timeInForce: "FOK" }, "c").time_in_force).toBe("fill_or_kill");
    expect(toV2OrderBody({ ...base, type: "market" }, "c").time_in_force).toBe("immediate_or_cancel");
    const gtd = toV2OrderBody({ ...base, timeInForce: "GTD", expiresAt: "2026-12-01T00:00:00Z" }, "c");
    expect(gtd).toMatchObject({ time_in_force: "good_till_canceled", expiration_time: 1796083200 });
    expect(toV2OrderBody({ ...base, price: 5_500, size: 2_500_000 }, "c")).toMatchObject({
      price: "0.0055",
      count: "2.50",
    });
  });

  it("refuses prices and sizes the venue cannot take, as rejected, before sending", () => {
    for (const bad of [
      { price: 0 },
      { price: 1_000_000 },
      { price: 420_050 },
      { size: 0 },
      { size: 1_234_567 },
      { timeInForce: "GTD" as const },
    ]) {
      expect(() => toV2OrderBody({ ...base, ...bad }, "c")).toThrowError(
        expect.objectContaining({ kind: "rejected" }),
      );
    }
  });

  it("rebuilds the order from the id-and-counts response", () => {
    const response = fixture("v2-create-response.json");
    expect(
      orderFromV2Response(response, { ...base, outcome: "no" }, "cid-1", "2026-01-01T00:00:00.000Z"),
    ).toEqual({
      venueOrderId: "v2-order-1",
      marketId: "kalshi:KXFEDDECISION-26DEC-H0",
      outcome: "no",
      side: "buy",
      price: 420_000,
      size: 10_000_000,
      filledSize: 4_000_000,
      status: "open",
      createdAt: new Date(1795348800000).toISOString(),
      clientOrderId: "cid-1",
    });
    const filled = { order_id: "x", fill_count: "10.00", remaining_count: "0.00" };
    expect(orderFromV2Response(filled, base, "c", "t").status).toBe("filled");
    const ioc = { order_id: "x", fill_count: "3.00", remaining_count: "7.00" };
    expect(orderFromV2Response(ioc, { ...base, timeInForce: "IOC" }, "c", "t").status).toBe("cancelled");
    expect(() => orderFromV2Response({}, base, "c", "t")).toThrowError(
      expect.objectContaining({ kind: "bad_response" }),
    );
  });
});
