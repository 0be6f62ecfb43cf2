/** Payloads of the order and position events (spec 6.5 where it shows them; events/README otherwise). */
import type { EventPayload } from "../events/types";
import { microsToNumber } from "../venues/decimal";
import type { OrderRow } from "./orders-repo";
import type { PositionRow } from "./positions-repo";

const n = microsToNumber;

export function averageFillPrice(order: OrderRow): number | null {
  if (order.filled_amount <= 0) return null;
  return Math.round((order.filled_notional / order.filled_amount) * 1_000_000) / 1_000_000;
}

export function orderCreated(order: OrderRow): EventPayload<"order.created"> {
  return {
    order_id: order.id,
    market_id: order.market_id,
    platform: order.venue,
    side: order.side as "buy" | "sell",
    outcome: order.outcome,
    type: order.type,
    amount: n(order.amount),
    price: n(order.price),
    time_in_force: order.time_in_force,
    status: order.status,
    client_order_id: order.client_order_id,
    created_at: order.created_at,
  };
}

export function orderFilled(order: OrderRow): EventPayload<"order.filled"> {
  return {
    order_id: order.id,
    market_id: order.market_id,
    platform: order.venue,
    side: order.side as "buy" | "sell",
    type: order.type,
    amount: n(order.amount),
    price: n(order.price),
    filled_amount: n(order.filled_amount),
    average_fill_price: averageFillPrice(order) ?? 0,
    fees: n(order.fees),
    position_id: order.position_id,
  };
}

export function orderPartiallyFilled(
  order: OrderRow,
  fill: { size: number; price: number },
): EventPayload<"order.partially_filled"> {
  return { ...orderFilled(order), fill_amount: n(fill.size), fill_price: n(fill.price) };
}

export function orderCancelled(order: OrderRow, reason: string): EventPayload<"order.cancelled"> {
  return {
    order_id: order.id,
    market_id: order.market_id,
    platform: order.venue,
    side: order.side as "buy" | "sell",
    amount: n(order.amount),
    filled_amount: n(order.filled_amount),
    cancelled_at: order.cancelled_at ?? order.updated_at,
    reason,
  };
}

/** What a `position.opened` event tells of the position. */
export type OpenedPosition = Pick<PositionRow, "id" | "market_id" | "outcome" | "size" | "cost_basis">;

export function positionOpened(
  position: OpenedPosition,
  eventTitle: string,
): EventPayload<"position.opened"> {
  return {
    position_id: position.id,
    market_id: position.market_id,
    event_title: eventTitle,
    outcome: position.outcome,
    size: n(position.size),
    average_price: position.size > 0 ? Math.round((position.cost_basis / position.size) * 1e6) / 1e6 : 0,
    cost_basis: n(position.cost_basis),
  };
}

export function positionClosed(position: PositionRow, eventTitle: string): EventPayload<"position.closed"> {
  return {
    position_id: position.id,
    market_id: position.market_id,
    event_title: eventTitle,
    outcome: position.outcome,
    realized_pnl: n(position.realized_pnl),
    closed_at: position.closed_at ?? position.updated_at,
  };
}
