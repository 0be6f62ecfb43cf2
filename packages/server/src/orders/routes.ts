/** Orders over HTTP: place, list, read, explain (fills), cancel one, cancel many; fills across orders. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { tradingOwner } from "../http/auth";
import { Envelope, ok, PagedEnvelope, PageMeta, pageMeta } from "../http/envelope";
import { averageFillPrice } from "../ledger/events";
import type { FillRow, OrderRow, Owner } from "../ledger/orders-repo";
import { microsToNumber } from "../venues/decimal";
import {
  BulkCancelQuery,
  BulkCancelSchema,
  CancelledOrderSchema,
  FillListMeta,
  FillListQuery,
  FillSchema,
  IdempotencyHeaders,
  OrderListItem,
  OrderListQuery,
  OrderParams,
  OrderSchema,
  PlaceOrderBody,
  REFRESH_DESCRIPTION,
  RefreshQuery,
} from "./schemas";
import type { OrdersService } from "./service";

const n = microsToNumber;

/** Market titles by id, read once per answer (OrdersService.marketTitles). */
type Titles = ReadonlyMap<string, string>;

export function orderView(order: OrderRow, marketTitle: string | null) {
  return {
    id: order.id,
    market_id: order.market_id,
    market_title: marketTitle,
    platform: order.venue,
    side: order.side as "buy" | "sell",
    outcome: order.outcome as "yes" | "no",
    type: order.type as "limit" | "market",
    time_in_force: order.time_in_force as "GTC",
    status: order.status as "open",
    amount: n(order.amount),
    price: n(order.price),
    filled_amount: n(order.filled_amount),
    average_fill_price: averageFillPrice(order),
    fees: n(order.fees),
    position_id: order.position_id,
    cancel_reason: order.cancel_reason,
    client_order_id: order.client_order_id,
    expires_at: order.expires_at,
    environment: order.environment as Owner["environment"],
    requested_amount: order.requested_amount === null ? null : n(order.requested_amount),
    amount_note: order.amount_note,
    created_at: order.created_at,
    updated_at: order.updated_at,
  };
}

function cancelledView(order: OrderRow) {
  return {
    id: order.id,
    market_id: order.market_id,
    status: "cancelled" as const,
    amount: n(order.amount),
    filled_amount: n(order.filled_amount),
    cancelled_at: order.cancelled_at ?? order.updated_at,
  };
}

function fillView(fill: FillRow, titles: Titles) {
  return {
    id: fill.id,
    order_id: fill.order_id,
    market_id: fill.market_id,
    market_title: titles.get(fill.market_id) ?? null,
    side: fill.side as "buy" | "sell",
    outcome: fill.outcome as "yes" | "no",
    price: n(fill.price),
    size: n(fill.size),
    fee: n(fill.fee),
    liquidity: fill.liquidity as "taker" | "maker",
    cause: JSON.parse(fill.cause) as Record<string, unknown>,
    created_at: fill.created_at,
  };
}

export const orderRoutes: FastifyPluginAsyncTypebox<{ orders: OrdersService }> = async (app, { orders }) => {
  app.post(
    "/v1/orders",
    {
      config: { auth: "key", permission: "trade" },
      schema: {
        tags: ["orders"],
        summary: "Place an order (sandbox keys: the sandbox exchange; live keys: the venue)",
        headers: IdempotencyHeaders,
        body: PlaceOrderBody,
        response: { 201: Envelope(OrderSchema) },
      },
    },
    async (request, reply) => {
      const result = await orders.place(
        tradingOwner(request),
        request.body,
        request.headers["idempotency-key"],
      );
      if (result.replayed) reply.header("idempotent-replayed", "true");
      return reply.code(201).send(ok(orderView(result.order, result.marketTitle)));
    },
  );

  app.get(
    "/v1/orders",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["orders"],
        summary: "The caller's orders, newest first (default status=open)",
        querystring: OrderListQuery,
        response: { 200: PagedEnvelope(OrderListItem, PageMeta) },
      },
    },
    async (request) => {
      const { status = "open", market_id, side, limit = 50, offset = 0 } = request.query;
      const { rows, total } = await orders.list(
        tradingOwner(request),
        { status, ...(market_id ? { marketId: market_id } : {}), ...(side ? { side } : {}) },
        { limit, offset },
      );
      const titles = await orders.marketTitles(rows.map((row) => row.market_id));
      return {
        success: true as const,
        data: rows.map((row) => orderView(row, titles.get(row.market_id) ?? null)),
        meta: pageMeta(offset, limit, total),
      };
    },
  );

  app.get(
    "/v1/orders/:id",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["orders"],
        summary: "One order in full",
        description: REFRESH_DESCRIPTION,
        params: OrderParams,
        querystring: RefreshQuery,
        response: { 200: Envelope(OrderSchema) },
      },
    },
    async (request) => {
      const order = await orders.get(tradingOwner(request), request.params.id, {
        refresh: request.query.refresh === true,
      });
      const titles = await orders.marketTitles([order.market_id]);
      return ok(orderView(order, titles.get(order.market_id) ?? null));
    },
  );

  app.get(
    "/v1/orders/:id/fills",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["orders"],
        summary: "An order's fills, oldest first, each with the real book level or trade that caused it",
        description: REFRESH_DESCRIPTION,
        params: OrderParams,
        querystring: RefreshQuery,
        response: { 200: Envelope(Type.Array(FillSchema)) },
      },
    },
    async (request) => {
      const fills = await orders.fills(tradingOwner(request), request.params.id, {
        refresh: request.query.refresh === true,
      });
      const titles = await orders.marketTitles(fills.map((fill) => fill.market_id));
      return ok(fills.map((fill) => fillView(fill, titles)));
    },
  );

  app.get(
    "/v1/fills",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["orders"],
        summary:
          "The caller's fills across orders in the key's environment, oldest first by (created_at, id), after a cursor",
        querystring: FillListQuery,
        response: { 200: PagedEnvelope(FillSchema, FillListMeta) },
      },
    },
    async (request) => {
      const { market_id, order_id, since, after, limit } = request.query;
      const page = await orders.listFills(tradingOwner(request), {
        marketId: market_id,
        orderId: order_id,
        since,
        after,
        limit,
      });
      const titles = await orders.marketTitles(page.fills.map((fill) => fill.market_id));
      return {
        success: true as const,
        data: page.fills.map((fill) => fillView(fill, titles)),
        meta: { next_after: page.nextAfter, has_more: page.hasMore },
      };
    },
  );

  app.delete(
    "/v1/orders/:id",
    {
      config: { auth: "key", permission: "manage_orders" },
      schema: {
        tags: ["orders"],
        summary: "Cancel an open or pending order (409 ORDER_NOT_CANCELLABLE when filled or cancelled)",
        params: OrderParams,
        response: { 200: Envelope(CancelledOrderSchema) },
      },
    },
    async (request) => ok(cancelledView(await orders.cancel(tradingOwner(request), request.params.id))),
  );

  app.delete(
    "/v1/orders",
    {
      config: { auth: "key", permission: "manage_orders" },
      schema: {
        tags: ["orders"],
        summary: "Cancel all the caller's open and pending orders, optionally of one market or side",
        querystring: BulkCancelQuery,
        response: { 200: Envelope(BulkCancelSchema) },
      },
    },
    async (request) => {
      const { market_id, side } = request.query;
      const cancelled = await orders.cancelAll(tradingOwner(request), {
        ...(market_id ? { marketId: market_id } : {}),
        ...(side ? { side } : {}),
      });
      return ok({
        cancelled_count: cancelled.length,
        cancelled_orders: cancelled.map((o) => ({ id: o.id, market_id: o.market_id })),
      });
    },
  );
};
