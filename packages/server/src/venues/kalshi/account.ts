/**
 * Kalshi portfolio objects -> crossbook model (VENUES.md §2.6): orders, fills (REST and the `fill`
 * channel), positions and the balance, as pure functions like the market-data normalizers. Kept
 * apart because the account side has its own rule: an order or fill carries one direction bit,
 * read on the YES book (`orderDirection`).
 */
import { complement, MICROS, type Micros } from "../decimal";
import type { Outcome } from "../model";
import { marketId, type VenueFill, type VenueOrder, type VenuePosition } from "../venue";
import {
  asObject,
  isoTime,
  type Json,
  KalshiParseError,
  messageTime,
  type NormalizeContext,
  optMicros,
  type Report,
  text,
} from "./normalize";

/**
 * Which outcome and direction an order/fill stands for, and so which price of it to read.
 *
 * Current objects carry `outcome_side` (yes|no) and `book_side` (bid|ask), and the two carry ONE
 * bit: buy YES and sell NO both give (yes, bid), buy NO and sell YES both give (no, ask); (yes, ask)
 * and (no, bid) never occur (docs.kalshi.com/getting_started/order_direction; SDK 3.30 `Order.md`,
 * `Fill.md`). Kalshi has one YES book and V2 order entry sends only `side: bid|ask` with the YES
 * price (`CreateOrderV2Request`, `BookSide`: "bid means buy YES, ask means sell YES"), so the venue
 * itself cannot tell buy YES from sell NO. We read the bit in that book's terms: bid = buy YES,
 * ask = sell YES, at the YES price. A user's "sell YES @ 0.60" (sent as ask 0.60) comes back as
 * exactly that; a "buy NO @ 0.40" (also ask 0.60) comes back as the same order, sell YES @ 0.60,
 * and crossbook's own order row keeps what the user asked (orders/live-fills.ts turns fills round).
 *
 * Should the two fields ever disagree, `book_side` wins (it is the order-entry vocabulary) and the
 * disagreement is reported. Objects with only the deprecated `side` (yes|no) + `action`
 * (buy|sell), which do carry two bits, are read as they are.
 */
export function orderDirection(
  o: Json,
  ticker: string,
  report: Report,
): { outcome: Outcome; side: "buy" | "sell" } {
  const outcomeSide = text(o, "outcome_side");
  const bookSide = text(o, "book_side");
  const fromBook = bookSide === "bid" ? "yes" : bookSide === "ask" ? "no" : undefined;
  const fromOutcome = outcomeSide === "yes" || outcomeSide === "no" ? outcomeSide : undefined;
  if (fromBook && fromOutcome && fromBook !== fromOutcome)
    report("direction_fields_disagree", { ticker, outcome_side: outcomeSide, book_side: bookSide });
  const long = fromBook ?? fromOutcome;
  if (long) return { outcome: "yes", side: long === "yes" ? "buy" : "sell" };
  const side = text(o, "side");
  const action = text(o, "action");
  if ((side === "yes" || side === "no") && (action === "buy" || action === "sell")) {
    report("deprecated_side_action_only", { ticker });
    return { outcome: side, side: action };
  }
  // V2 order entry echoes `side: bid|ask` on the YES book.
  if (side === "bid" || side === "ask") return { outcome: "yes", side: side === "bid" ? "buy" : "sell" };
  throw new KalshiParseError(ticker, "order/fill without outcome_side, book_side or side+action");
}

function priceFor(o: Json, outcome: Outcome, ticker: string): Micros | undefined {
  const yes = optMicros(o, "yes_price_dollars", ticker);
  const no = optMicros(o, "no_price_dollars", ticker);
  if (outcome === "yes") return yes ?? (no === undefined ? undefined : complement(no));
  return no ?? (yes === undefined ? undefined : complement(yes));
}

const ORDER_STATUS: Record<string, VenueOrder["status"]> = {
  resting: "open",
  pending: "pending",
  canceled: "cancelled",
  cancelled: "cancelled",
  executed: "filled",
};

/** VENUES.md §2.6 "Order object" -> VenueOrder. */
export function normalizeOrder(raw: unknown, ctx: NormalizeContext): VenueOrder {
  const o = asObject(raw);
  if (!o) throw new KalshiParseError("<order>", "order is not an object");
  const ticker = text(o, "ticker") ?? text(o, "market_ticker");
  const orderId = text(o, "order_id");
  if (!ticker || !orderId)
    throw new KalshiParseError(ticker ?? "<order>", "order without ticker or order_id");
  const { outcome, side } = orderDirection(o, ticker, ctx.report);
  const price = priceFor(o, outcome, ticker);
  if (price === undefined) throw new KalshiParseError(ticker, `order ${orderId} has no price`);
  const filled = optMicros(o, "fill_count_fp", ticker) ?? 0;
  const remaining = optMicros(o, "remaining_count_fp", ticker);
  const initial =
    optMicros(o, "initial_count_fp", ticker) ?? (remaining === undefined ? undefined : filled + remaining);
  if (initial === undefined) throw new KalshiParseError(ticker, `order ${orderId} has no count`);
  const statusText = text(o, "status") ?? "";
  let status = ORDER_STATUS[statusText];
  if (status === undefined) {
    ctx.report("unknown_order_status", { ticker, status: statusText });
    status = "pending";
  }
  return {
    venueOrderId: orderId,
    marketId: marketId("kalshi", ticker),
    outcome,
    side,
    price,
    size: initial,
    filledSize: filled,
    status,
    createdAt: isoTime(o, "created_time") ?? ctx.now,
    clientOrderId: text(o, "client_order_id") ?? null,
  };
}

/**
 * VENUES.md §2.6 "Fill" (REST, `fill_id`) and §2.4 `fill` messages (keyed by `trade_id`) ->
 * VenueFill. `fee_cost` is a dollar string.
 */
export function normalizeFill(raw: unknown, ctx: NormalizeContext): VenueFill {
  const o = asObject(raw);
  if (!o) throw new KalshiParseError("<fill>", "fill is not an object");
  const ticker = text(o, "market_ticker") ?? text(o, "ticker");
  const fillId = text(o, "fill_id") ?? text(o, "trade_id");
  const orderId = text(o, "order_id");
  if (!ticker || !fillId || !orderId) {
    throw new KalshiParseError(ticker ?? "<fill>", "fill without ticker, fill_id/trade_id or order_id");
  }
  const { outcome, side } = orderDirection(o, ticker, ctx.report);
  const price = priceFor(o, outcome, ticker);
  const size = optMicros(o, "count_fp", ticker);
  if (price === undefined || size === undefined)
    throw new KalshiParseError(ticker, `fill ${fillId} without price or count`);
  const fee = optMicros(o, "fee_cost", ticker);
  if (fee === undefined) ctx.report("missing_field:fee_cost", { ticker });
  const taker = o["is_taker"];
  return {
    venueFillId: fillId,
    venueOrderId: orderId,
    marketId: marketId("kalshi", ticker),
    outcome,
    side,
    price,
    size,
    // Without `fee_cost` crossbook's model of the market's schedule charges the fill.
    fee: fee ?? null,
    ...(typeof taker === "boolean" ? { liquidity: taker ? ("taker" as const) : ("maker" as const) } : {}),
    timestamp: messageTime(o, () => isoTime(o, "created_time") ?? ctx.now),
  };
}

/**
 * VENUES.md §2.6 `market_positions[]` -> VenuePosition. `position_fp` is signed (+ YES, − NO);
 * the average price is the position's exposure (its cost) per contract. Flat positions are dropped.
 */
export function normalizePosition(raw: unknown, ctx: NormalizeContext): VenuePosition | null {
  const o = asObject(raw);
  const ticker = o ? text(o, "ticker") : undefined;
  if (!o || !ticker) throw new KalshiParseError("<position>", "position without ticker");
  const position = optMicros(o, "position_fp", ticker);
  if (position === undefined) throw new KalshiParseError(ticker, "position without position_fp");
  if (position === 0) return null;
  const size = Math.abs(position);
  const exposure = optMicros(o, "market_exposure_dollars", ticker);
  if (exposure === undefined) ctx.report("missing_field:market_exposure_dollars", { ticker });
  return {
    marketId: marketId("kalshi", ticker),
    outcome: position > 0 ? "yes" : "no",
    size,
    averagePrice: exposure === undefined ? null : Math.round((exposure * MICROS) / size),
  };
}

/**
 * VENUES.md §2.6 `GET /portfolio/balance` -> micro-USD. `balance` is integer cents; the exact
 * `balance_dollars` string wins when present (they must agree; disagreement is reported).
 */
export function normalizeBalance(body: unknown, ctx: NormalizeContext): Micros {
  const o = asObject(body);
  if (!o) throw new KalshiParseError("<balance>", "balance response is not an object");
  const cents = o["balance"];
  const fromCents = typeof cents === "number" && Number.isInteger(cents) ? cents * 10_000 : undefined;
  const fromDollars = optMicros(o, "balance_dollars", "<balance>");
  if (fromDollars !== undefined && fromCents !== undefined && Math.abs(fromDollars - fromCents) >= 10_000) {
    ctx.report("balance_fields_disagree", { balance: cents, balance_dollars: o["balance_dollars"] });
  }
  const value = fromDollars ?? fromCents;
  if (value === undefined) throw new KalshiParseError("<balance>", "balance response has no balance");
  return value;
}
