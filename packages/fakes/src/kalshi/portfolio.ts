/**
 * Trading and portfolio endpoints (VENUES.md §2.6), all signed. Order entry is the V2 shape only,
 * `POST /portfolio/events/orders` (bid|ask on the YES book, dollar-string price, fp-string count):
 * the legacy `POST /portfolio/orders` and `DELETE /portfolio/orders/{id}` answer
 * 410 `deprecated_v1_order_endpoint`, as the venue has since June 2026 (VENUES-AUDIT #2). A V2 cancel
 * of an order that is no longer resting answers 404. Orders and fills past the historical cutoff are
 * left to `/historical/*` (historical.ts).
 */
import type { FastifyInstance } from "fastify";
import { type Ctx, listParam, optInt, paginate, type Query, requireKey } from "./context";
import { cancelOrder, KalshiError, type PlaceOrderInput, placeOrder } from "./engine";
import {
  balancePayload,
  eventPositionPayload,
  fillPayload,
  marketPositionPayload,
  orderPayload,
  v2OrderResponse,
} from "./payloads";
import type {
  BookSide,
  KalshiState,
  KFill,
  KOrder,
  OutcomeSide,
  Position,
  StpType,
  TimeInForce,
} from "./state";
import { fmtFp, PRICE_SCALE, parseCountFp, parsePriceDollars } from "./units";

type Body = Record<string, unknown>;

const TIFS: TimeInForce[] = ["fill_or_kill", "good_till_canceled", "immediate_or_cancel"];
const STPS: StpType[] = ["taker_at_cross", "maker"];

function bad(message: string): never {
  throw new KalshiError(400, "invalid_parameters", message);
}

function bodyOf(raw: unknown): Body {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) bad("request body must be a JSON object");
  return raw as Body;
}

function str(b: Body, name: string, required: boolean): string | undefined {
  const v = b[name];
  if (v === undefined || v === null) {
    if (required) bad(`missing required field: ${name}`);
    return undefined;
  }
  if (typeof v !== "string") bad(`${name} must be a string`);
  return v;
}

function common(b: Body, tifRequired: boolean) {
  const tif = (str(b, "time_in_force", tifRequired) ?? "good_till_canceled") as TimeInForce;
  if (!TIFS.includes(tif)) bad(`invalid time_in_force: ${tif}`);
  const stp = (str(b, "self_trade_prevention_type", tifRequired) ?? "taker_at_cross") as StpType;
  if (!STPS.includes(stp)) bad(`invalid self_trade_prevention_type: ${stp}`);
  const exp = b["expiration_time"] ?? b["expiration_ts"];
  if (exp !== undefined && exp !== null && !Number.isInteger(exp)) bad("expiration must be unix seconds");
  return {
    timeInForce: tif,
    stp,
    postOnly: b["post_only"] === true,
    reduceOnly: b["reduce_only"] === true,
    expirationTs: typeof exp === "number" ? exp : null,
    clientOrderId: str(b, "client_order_id", false) ?? "",
  };
}

/** VENUES.md §2.6 "V2 order entry": side bid = buy YES, ask = sell YES ≡ buy NO at 1 − p. */
function parseV2(b: Body, userId: string): PlaceOrderInput {
  const ticker = str(b, "ticker", true)!;
  const side = str(b, "side", true) as BookSide;
  if (side !== "bid" && side !== "ask") bad("side must be bid or ask");
  const count = parseCountFp(str(b, "count", true));
  if (count === null) bad("count must be a decimal string with at most 2 decimals");
  const price = parsePriceDollars(str(b, "price", true));
  if (price === null) throw new KalshiError(400, "invalid_price", "invalid price");
  // One bit: a bid is long YES (buy YES ≡ sell NO), an ask long NO (sell YES ≡ buy NO).
  const outcome: OutcomeSide = side === "bid" ? "yes" : "no";
  return {
    userId,
    ticker,
    bookSide: side,
    outcomeSide: outcome,
    yesPrice: price,
    count,
    ...common(b, true),
  };
}

export function registerPortfolio(app: FastifyInstance, ctx: Ctx): void {
  const { state } = ctx;
  const user = (req: Parameters<typeof requireKey>[1]) => requireKey(ctx, req).userId;

  app.post("/portfolio/events/orders", async (req, reply) => {
    const userId = user(req);
    const { order } = placeOrder(state, parseV2(bodyOf(req.body), userId));
    reply.code(201);
    return v2OrderResponse(order, state.nowMs());
  });

  // The legacy order mutations are gone at the venue: 410 whatever the body (signature checked
  // first, as on every portfolio route).
  const gone = (req: Parameters<typeof requireKey>[1]) => {
    user(req);
    throw new KalshiError(410, "deprecated_v1_order_endpoint", LEGACY_GONE);
  };
  app.post("/portfolio/orders", async (req) => gone(req));
  app.delete("/portfolio/orders/:order_id", async (req) => gone(req));
  app.post("/portfolio/orders/batched", async (req) => gone(req));

  app.delete("/portfolio/events/orders/:order_id", async (req) => {
    const userId = user(req);
    const { order_id } = req.params as { order_id: string };
    const { order, reducedBy } = cancelOrder(state, userId, order_id);
    return {
      order_id: order.orderId,
      client_order_id: order.clientOrderId,
      reduced_by: fmtFp(reducedBy),
      ts_ms: state.nowMs(),
    };
  });

  app.delete("/portfolio/events/orders", async (req) => {
    const userId = user(req);
    const q = req.query as Query;
    const out: Record<string, unknown>[] = [];
    for (const o of [...state.orders.values()]) {
      if (o.userId !== userId || o.status !== "resting") continue;
      if (q["market_ticker"] && o.ticker !== q["market_ticker"]) continue;
      const { reducedBy } = cancelOrder(state, userId, o.orderId);
      out.push({ order_id: o.orderId, client_order_id: o.clientOrderId, reduced_by: fmtFp(reducedBy) });
    }
    return { orders: out, ts_ms: state.nowMs() };
  });

  app.get("/portfolio/orders", async (req) => {
    const userId = user(req);
    const q = req.query as Query;
    const list = filterOrders(
      state,
      [...state.orders.values()].filter((o) => o.userId === userId && !state.archivedOrder(o)),
      q,
    );
    const { page, cursor } = paginate(list, q, 100, 1000);
    return { orders: page.map(orderPayload), cursor };
  });

  app.get("/portfolio/orders/:order_id", async (req) => {
    const userId = user(req);
    const { order_id } = req.params as { order_id: string };
    const o = state.orders.get(order_id);
    if (!o || o.userId !== userId || state.archivedOrder(o))
      throw new KalshiError(404, "not_found", "order not found");
    return { order: orderPayload(o) };
  });

  app.get("/portfolio/fills", async (req) => {
    const userId = user(req);
    const q = req.query as Query;
    const list = filterFills(
      state.fills.filter((f) => f.userId === userId && !state.archivedFill(f)),
      q,
    );
    const { page, cursor } = paginate(list, q, 100, 1000);
    return { fills: page.map(fillPayload), cursor };
  });

  app.get("/portfolio/positions", async (req) => {
    const userId = user(req);
    const q = req.query as Query;
    let list = [...state.account(userId).positions.values()];
    if (q["ticker"]) list = list.filter((p) => p.ticker === q["ticker"]);
    const events = listParam(q, "event_ticker");
    if (events) list = list.filter((p) => events.includes(p.eventTicker));
    const filters = listParam(q, "count_filter") ?? [];
    for (const f of filters) {
      if (f === "position") list = list.filter((p) => p.position !== 0);
      else if (f === "total_traded") list = list.filter((p) => p.tradedMicro !== 0);
      else bad(`invalid count_filter: ${f}`);
    }
    const { page, cursor } = paginate(list, q, 100, 1000);
    const byEvent = new Map<string, Position[]>();
    for (const p of page) byEvent.set(p.eventTicker, [...(byEvent.get(p.eventTicker) ?? []), p]);
    return {
      market_positions: page.map((p) => marketPositionPayload(p)),
      event_positions: [...byEvent.entries()].map(([e, ps]) => eventPositionPayload(e, ps)),
      cursor,
    };
  });

  app.get("/portfolio/balance", async (req) => {
    const userId = user(req);
    const acct = state.account(userId);
    let value = 0;
    for (const p of acct.positions.values()) {
      const m = state.markets.get(p.ticker);
      if (!m || p.position === 0) continue;
      const px = p.position > 0 ? m.lastPrice : PRICE_SCALE - m.lastPrice;
      value += Math.abs(p.position) * px;
    }
    return balancePayload(acct, value);
  });
}

/** The 410's message (its wording is the fake's; the status and code are the venue's). */
const LEGACY_GONE = "v1 order endpoint is deprecated; use /portfolio/events/orders";

/** `ticker`, `event_ticker`, `status`, `min_ts`, `max_ts` filters of the orders listings, newest first. */
export function filterOrders(state: KalshiState, orders: KOrder[], q: Query): KOrder[] {
  let list = [...orders].reverse();
  if (q["ticker"]) list = list.filter((o) => o.ticker === q["ticker"]);
  const events = listParam(q, "event_ticker");
  if (events) list = list.filter((o) => events.includes(state.markets.get(o.ticker)?.eventTicker ?? ""));
  if (q["status"]) {
    if (!["resting", "canceled", "executed"].includes(q["status"])) bad("invalid status");
    list = list.filter((o) => o.status === q["status"]);
  }
  const minTs = optInt(q, "min_ts");
  if (minTs !== null) list = list.filter((o) => o.createdMs >= minTs * 1000);
  const maxTs = optInt(q, "max_ts");
  if (maxTs !== null) list = list.filter((o) => o.createdMs <= maxTs * 1000);
  return list;
}

/** `ticker`, `order_id`, `min_ts`, `max_ts` filters of the fills listings, newest first. */
export function filterFills(fills: KFill[], q: Query): KFill[] {
  let list = [...fills].reverse();
  if (q["ticker"]) list = list.filter((f) => f.ticker === q["ticker"]);
  if (q["order_id"]) list = list.filter((f) => f.orderId === q["order_id"]);
  const minTs = optInt(q, "min_ts");
  if (minTs !== null) list = list.filter((f) => f.createdMs >= minTs * 1000);
  const maxTs = optInt(q, "max_ts");
  if (maxTs !== null) list = list.filter((f) => f.createdMs <= maxTs * 1000);
  return list;
}
