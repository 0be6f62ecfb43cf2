/**
 * Our order request -> Kalshi's order entry (VENUES.md §2.6), as pure functions.
 *
 * `POST /portfolio/events/orders` (V2): one YES book, `side` bid|ask, `price` = YES price. It is
 * the only order entry: the legacy `POST /portfolio/orders` (side yes|no + action buy|sell) answers
 * 410 `deprecated_v1_order_endpoint` at the venue (VENUES-AUDIT #2), so it is not built here.
 * Our four cases map as follows (p = the limit price of the outcome we trade):
 *
 *   buy  YES @ p  -> side "bid", price p        (buy YES)
 *   sell YES @ p  -> side "ask", price p        (sell YES)
 *   buy  NO  @ p  -> side "ask", price 1 − p    (selling YES at 1 − p is buying NO at p)
 *   sell NO  @ p  -> side "bid", price 1 − p    (buying YES at 1 − p closes NO at p)
 *
 * buy YES and sell NO are the same order on that book, as are sell YES and buy NO: the venue
 * keeps one direction bit (`book_side`/`outcome_side`), so what a user asked for is known only to
 * the order built here and to crossbook's own order row (see account.ts `orderDirection`).
 *
 * Kalshi has no market order type in the current shape: a "market" order is sent as an
 * immediate-or-cancel limit at the caller's worst acceptable price.
 */
import { complement, formatMicros, MICROS, type Micros, parseMicros } from "../decimal";
import { VenueError } from "../errors";
import { marketId, type VenueOrder, type VenueOrderRequest } from "../venue";
import { asObject, tickerFromMarketId } from "./normalize";

export type KalshiTimeInForce = "good_till_canceled" | "immediate_or_cancel" | "fill_or_kill";

export interface KalshiV2OrderBody {
  ticker: string;
  client_order_id: string;
  side: "bid" | "ask";
  count: string;
  price: string;
  time_in_force: KalshiTimeInForce;
  self_trade_prevention_type: "taker_at_cross" | "maker";
  post_only: boolean;
  reduce_only: boolean;
  expiration_time?: number;
}

function reject(message: string): never {
  throw new VenueError("kalshi", "rejected", message, { venueMessage: message });
}

/** Prices go out with 4 decimals, counts with 2 (VENUES.md §2.2 fixed-point request rules). */
function checkedPrice(price: Micros): string {
  if (!Number.isInteger(price) || price <= 0 || price >= MICROS) reject(`price ${price} is outside (0, 1)`);
  if (price % 100 !== 0) reject(`price ${formatMicros(price)} has more than 4 decimals`);
  return formatMicros(price, 4);
}

function checkedCount(size: Micros): string {
  if (!Number.isInteger(size) || size <= 0) reject(`size ${size} must be positive`);
  if (size % 10_000 !== 0) reject(`size ${formatMicros(size)} has more than 2 decimals`);
  return formatMicros(size, 2);
}

function timeInForce(order: VenueOrderRequest): { tif: KalshiTimeInForce; expiresSec?: number } {
  if (order.timeInForce === "FOK") return { tif: "fill_or_kill" };
  if (order.timeInForce === "IOC" || order.type === "market") return { tif: "immediate_or_cancel" };
  if (order.timeInForce === "GTD") {
    const ms = order.expiresAt ? Date.parse(order.expiresAt) : Number.NaN;
    if (Number.isNaN(ms)) reject("GTD orders need a valid expiresAt");
    return { tif: "good_till_canceled", expiresSec: Math.floor(ms / 1000) };
  }
  return { tif: "good_till_canceled" };
}

/** The YES-book side and YES price of one of our orders (see the table in the header). */
export function yesBookSide(order: Pick<VenueOrderRequest, "outcome" | "side" | "price">): {
  side: "bid" | "ask";
  yesPrice: Micros;
} {
  const buysYes = (order.outcome === "yes") === (order.side === "buy");
  return {
    side: buysYes ? "bid" : "ask",
    yesPrice: order.outcome === "yes" ? order.price : complement(order.price),
  };
}

export function toV2OrderBody(order: VenueOrderRequest, clientOrderId: string): KalshiV2OrderBody {
  const { side, yesPrice } = yesBookSide(order);
  const { tif, expiresSec } = timeInForce(order);
  return {
    ticker: tickerFromMarketId(order.marketId),
    client_order_id: clientOrderId,
    side,
    count: checkedCount(order.size),
    price: checkedPrice(yesPrice),
    time_in_force: tif,
    self_trade_prevention_type: "taker_at_cross",
    post_only: false,
    reduce_only: false,
    ...(expiresSec !== undefined ? { expiration_time: expiresSec } : {}),
  };
}

/**
 * The current shape answers only ids and counts (`order_id, fill_count, remaining_count, ...`), so
 * the order is rebuilt from what we sent: same outcome, side and price as requested.
 */
export function orderFromV2Response(
  body: unknown,
  order: VenueOrderRequest,
  clientOrderId: string,
  now: string,
): VenueOrder {
  const o = asObject(body);
  const orderId = o?.["order_id"];
  if (!o || typeof orderId !== "string" || orderId === "") {
    throw new VenueError("kalshi", "bad_response", "kalshi order response has no order_id");
  }
  const parse = (key: string) => {
    const v = o[key];
    return typeof v === "string" ? parseMicros(v) : undefined;
  };
  const filled = parse("fill_count") ?? 0;
  const remaining = parse("remaining_count") ?? order.size - filled;
  const immediate = order.type === "market" || order.timeInForce === "IOC" || order.timeInForce === "FOK";
  // An IOC/FOK remainder is cancelled by the venue rather than left resting.
  const status: VenueOrder["status"] =
    remaining > 0 ? (immediate ? "cancelled" : "open") : filled >= order.size ? "filled" : "cancelled";
  const tsMs = o["ts_ms"];
  return {
    venueOrderId: orderId,
    marketId: marketId("kalshi", tickerFromMarketId(order.marketId)),
    outcome: order.outcome,
    side: order.side,
    price: order.price,
    size: order.size,
    filledSize: filled,
    status,
    createdAt: typeof tsMs === "number" ? new Date(tsMs).toISOString() : now,
    clientOrderId:
      typeof o["client_order_id"] === "string" ? (o["client_order_id"] as string) : clientOrderId,
  };
}
