// The order types are the generated API types; these pin the relationships agent code relies on,
// so a server change that breaks one fails `tsc` here with a name, not somewhere downstream.
import { describe, expectTypeOf, it } from "vitest";
import type { OrderInput, OrderType, Outcome, Side } from "../src/backtest/index";
import type { paths } from "../src/generated/api";
import type { Crossbook, Order, OrderRequest, OrderSummary, PlacedOrder } from "../src/index";
import type { OrderIntent } from "../src/risk/index";

type Body = paths["/v1/orders"]["post"]["requestBody"]["content"]["application/json"];

describe("order types", () => {
  it("are what the client's order calls send and return", () => {
    expectTypeOf<OrderRequest>().toEqualTypeOf<Body>();
    expectTypeOf<Parameters<Crossbook["orders"]["place"]>[0]>().toEqualTypeOf<OrderRequest>();
    expectTypeOf<Awaited<ReturnType<Crossbook["orders"]["place"]>>>().toEqualTypeOf<PlacedOrder>();
    expectTypeOf<Awaited<ReturnType<Crossbook["orders"]["get"]>>>().toEqualTypeOf<Order>();
    expectTypeOf<Awaited<ReturnType<Crossbook["orders"]["list"]>>["data"]>().toEqualTypeOf<OrderSummary[]>();
  });

  it("answer a placement with the full order (the execution helpers treat both alike)", () => {
    expectTypeOf<PlacedOrder>().toEqualTypeOf<Order>();
  });

  it("list orders in a short form whose fields are the full order's", () => {
    expectTypeOf<Pick<Order, keyof OrderSummary>>().toEqualTypeOf<OrderSummary>();
  });

  it("are what the risk chain and the backtester take", () => {
    expectTypeOf<OrderIntent>().toEqualTypeOf<OrderRequest>();
    expectTypeOf<OrderInput>().toEqualTypeOf<
      Pick<OrderRequest, "market_id" | "side" | "outcome" | "type" | "price" | "amount" | "max_slippage">
    >();
    expectTypeOf<Side>().toEqualTypeOf<OrderRequest["side"]>();
    expectTypeOf<Outcome>().toEqualTypeOf<NonNullable<OrderRequest["outcome"]>>();
    expectTypeOf<OrderType>().toEqualTypeOf<NonNullable<OrderRequest["type"]>>();
  });
});
