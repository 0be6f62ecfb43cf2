/**
 * The event types of spec part 6.1 and their payload schemas. Where the spec shows a payload
 * (order.filled, position.resolved, market.matched, price.alert) the schema has exactly its fields;
 * the others are designed here and documented in this folder's README. `webhook.test` is ours: the
 * event the webhook test endpoint sends.
 */

import { type Static, Type } from "typebox";
import { Nullable } from "../http/envelope";

const Side = Type.Union([Type.Literal("buy"), Type.Literal("sell")]);
const Outcome = Type.String({ description: "Outcome the order or position is on, e.g. yes or no" });
const Timestamp = Type.String({ format: "date-time" });

/** Spec 6.5, exactly. */
const OrderFilled = Type.Object({
  order_id: Type.String(),
  market_id: Type.String(),
  platform: Type.String(),
  side: Side,
  type: Type.String(),
  amount: Type.Number(),
  price: Type.Number(),
  filled_amount: Type.Number(),
  average_fill_price: Type.Number(),
  fees: Type.Number(),
  position_id: Type.String(),
});

/** Designed: the order as accepted. */
const OrderCreated = Type.Object({
  order_id: Type.String(),
  market_id: Type.String(),
  platform: Type.String(),
  side: Side,
  outcome: Outcome,
  type: Type.String(),
  amount: Type.Number(),
  price: Nullable(Type.Number()),
  time_in_force: Type.String(),
  status: Type.String(),
  client_order_id: Nullable(Type.String()),
  created_at: Timestamp,
});

/** Designed: order.filled's fields plus the fill that just happened. */
const OrderPartiallyFilled = Type.Object({
  ...OrderFilled.properties,
  fill_amount: Type.Number({ description: "Contracts filled by this fill" }),
  fill_price: Type.Number({ description: "Price of this fill" }),
});

/** Designed: mirrors the cancel response (spec 4.1) plus who cancelled it and why. */
const OrderCancelled = Type.Object({
  order_id: Type.String(),
  market_id: Type.String(),
  platform: Type.String(),
  side: Side,
  amount: Type.Number(),
  filled_amount: Type.Number(),
  cancelled_at: Timestamp,
  reason: Type.String({ description: "user, bulk_cancel, expired, unfilled_ioc, venue, market_closed" }),
});

const PositionOpened = Type.Object({
  position_id: Type.String(),
  market_id: Type.String(),
  event_title: Type.String(),
  outcome: Outcome,
  size: Type.Number(),
  average_price: Type.Number(),
  cost_basis: Type.Number(),
});

const PositionClosed = Type.Object({
  position_id: Type.String(),
  market_id: Type.String(),
  event_title: Type.String(),
  outcome: Outcome,
  realized_pnl: Type.Number(),
  closed_at: Timestamp,
});

/** Spec 6.5, exactly. */
const PositionResolved = Type.Object({
  position_id: Type.String(),
  market_id: Type.String(),
  event_title: Type.String(),
  outcome: Type.String(),
  resolution: Type.String(),
  won: Type.Boolean(),
  size: Type.Number(),
  cost_basis: Type.Number(),
  payout: Type.Number(),
  realized_pnl: Type.Number(),
  redeemable: Type.Boolean(),
});

/** Spec 6.5, exactly. */
const MarketMatched = Type.Object({
  match_id: Type.String(),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  platforms: Type.Record(
    Type.String(),
    Type.Object({ event_id: Type.String(), title: Type.String(), yes_price: Type.Number() }),
  ),
  spread: Type.Number(),
  spread_pct: Type.Number(),
});

/** Spec 6.5, exactly. */
const PriceAlert = Type.Object({
  alert_id: Type.String(),
  market_id: Type.String(),
  event_title: Type.String(),
  condition: Type.String(),
  threshold: Type.Number(),
  current_price: Type.Number(),
  platform: Type.String(),
});

/** Designed: a balance movement (sandbox deposits and withdrawals, venue transfers). */
const Transfer = Type.Object({
  transfer_id: Type.String(),
  amount: Type.Number(),
  currency: Type.String({ description: "USDC" }),
  balance: Type.Number({ description: "Available balance after the transfer" }),
  environment: Type.String({ description: "live or sandbox" }),
  completed_at: Timestamp,
});

const WebhookTest = Type.Object({
  webhook_id: Type.String(),
  message: Type.String(),
});

export const EVENT_SCHEMAS = {
  "order.created": OrderCreated,
  "order.filled": OrderFilled,
  "order.partially_filled": OrderPartiallyFilled,
  "order.cancelled": OrderCancelled,
  "position.opened": PositionOpened,
  "position.closed": PositionClosed,
  "position.resolved": PositionResolved,
  "market.matched": MarketMatched,
  "price.alert": PriceAlert,
  "deposit.completed": Transfer,
  "withdrawal.completed": Transfer,
  "webhook.test": WebhookTest,
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;
export type EventPayload<T extends EventType> = Static<(typeof EVENT_SCHEMAS)[T]>;

/** The types a webhook may subscribe to (spec 6.1); `webhook.test` is sent on request only. */
export const SUBSCRIBABLE_EVENT_TYPES = [
  "order.created",
  "order.filled",
  "order.partially_filled",
  "order.cancelled",
  "position.opened",
  "position.closed",
  "position.resolved",
  "market.matched",
  "price.alert",
  "deposit.completed",
  "withdrawal.completed",
] as const satisfies readonly EventType[];

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_SCHEMAS, value);
}
