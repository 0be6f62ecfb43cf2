/**
 * The SDK's order types, named from the types generated from the server's OpenAPI document
 * (src/generated/api.ts) instead of written out by hand: when the server's order schema changes,
 * `npm run generate -w @crossbook/agent` changes these names too, and agent code that relied on the
 * old shape stops compiling. The document has no named schemas (every schema is inline), so each
 * name is the path, method and status it comes from.
 */
import type { paths } from "./generated/api.js";

/**
 * A new order: the body of `POST /v1/orders`.
 *
 * @example
 * const order: OrderRequest = { market_id: "kalshi:FED-26DEC-T4.00", side: "buy", price: 0.42, amount: 10 };
 */
export type OrderRequest = paths["/v1/orders"]["post"]["requestBody"]["content"]["application/json"];

/**
 * An order in full, as `GET /v1/orders/{id}` answers: fills, fees and position included.
 *
 * @example
 * const o: Order = await client.orders.get("ord_…");
 * if (o.status === "filled") console.log(o.average_fill_price, o.fees);
 */
export type Order = paths["/v1/orders/{id}"]["get"]["responses"][200]["content"]["application/json"]["data"];

/**
 * The order `POST /v1/orders` answers with (today the same schema as {@link Order}; the agent's
 * execution helpers rely on that, and test/order-types.test.ts says so).
 *
 * @example
 * const placed: PlacedOrder = await client.orders.place(order);
 */
export type PlacedOrder =
  paths["/v1/orders"]["post"]["responses"][201]["content"]["application/json"]["data"];

/**
 * An order as `GET /v1/orders` lists it: the short form, without fills, fees or position.
 *
 * @example
 * const { data } = await client.orders.list({ status: "open" });
 * const resting: number = data.reduce((n: number, o: OrderSummary) => n + o.amount - o.filled_amount, 0);
 */
export type OrderSummary =
  paths["/v1/orders"]["get"]["responses"][200]["content"]["application/json"]["data"][number];

/** @example const side: OrderSide = "buy"; */
export type OrderSide = OrderRequest["side"];
/** @example const outcome: OrderOutcome = "no"; */
export type OrderOutcome = NonNullable<OrderRequest["outcome"]>;
/** @example const type: OrderType = "market"; */
export type OrderType = NonNullable<OrderRequest["type"]>;
/** @example const tif: TimeInForce = "IOC"; */
export type TimeInForce = NonNullable<OrderRequest["time_in_force"]>;
/** @example const done = (o: Order) => o.status === ("filled" satisfies OrderStatus); */
export type OrderStatus = Order["status"];
