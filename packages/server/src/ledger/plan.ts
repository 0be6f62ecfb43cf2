/**
 * What fills and cancels do to an order, its position and its owner's balance, worked out in memory
 * with no store access. Every path that moves money (a sandbox placement with its immediate fills,
 * a later sandbox or live fill, a cancel) builds a `BookPlan` here and hands it to the one writer in
 * bookkeeping.ts, so the accounting exists once.
 */
import { newId } from "../infra/ids";
import type { Resolution } from "../venues/model";
import { buyLock, costOfSlice, type FeeModel, mulDiv, notional } from "./money";
import type { FillRow, OrderRow } from "./orders-repo";
import type { PositionRow } from "./positions-repo";

/** Why a fill happened, stored with it so every fill can be explained. Prices and sizes as numbers. */
export type FillCause =
  | {
      kind: "book_level";
      /** The real venue book level the order took liquidity from. */
      price: number;
      size_shown: number;
      book_timestamp: string;
      book_sequence: number | null;
    }
  | {
      kind: "trade";
      /** The real venue trade that reached the resting order. */
      venue_trade_id: string | null;
      outcome: string;
      price: number;
      size: number;
      taker_side: string | null;
      timestamp: string;
      queue_ahead_before: number;
    }
  | { kind: "venue_fill"; venue_fill_id: string };

export interface FillInput {
  price: number;
  size: number;
  fee: number;
  /**
   * Kalshi: the order's fee accumulator after this fill, when crossbook's fee model priced it
   * (@crossbook/fees `fillFee`); absent when the venue reported the fee (the accumulator is its own).
   */
  carry?: number;
  liquidity: "taker" | "maker";
  cause: FillCause;
  /** Unique per order: the same cause is never applied twice. */
  causeKey: string;
}

/** One applied fill: what it added, and the order as it left it. */
export interface PlannedFill {
  size: number;
  price: number;
  value: number;
  order: OrderRow;
  /** A sell that emptied the position: the position as that fill left it. */
  closed: PositionRow | undefined;
}

/**
 * The money an order's fills and cancel move. Balance figures are deltas; a buy's contracts are
 * added to the position by key when written (`bought`), a sell's position is the row as it is now.
 */
export interface BookPlan {
  order: OrderRow;
  buy: boolean;
  /** A sell's position (as read or reserved), updated by each fill; undefined for a buy. */
  position: PositionRow | undefined;
  balance: { available: number; locked: number; fees: number; realizedPnl: number };
  bought: { size: number; cost: number; fees: number };
  fills: PlannedFill[];
  fillRows: FillRow[];
  /** Set when the plan cancels the order's unfilled rest. */
  cancelReason: string | undefined;
  /** Contracts a cancelled sell gave back to its position. */
  released: number;
}

/** A plan starting from an order as stored (or as drafted, its lock already in the balance delta). */
export function startPlan(order: OrderRow, position: PositionRow | undefined): BookPlan {
  return {
    order,
    buy: order.side === "buy",
    position,
    balance: { available: 0, locked: 0, fees: 0, realizedPnl: 0 },
    bought: { size: 0, cost: 0, fees: 0 },
    fills: [],
    fillRows: [],
    cancelReason: undefined,
    released: 0,
  };
}

/**
 * Adds one fill to the plan: a buy releases what the filled part held back and pays cost and fee
 * from it; a sell's proceeds come in, its cost basis leaves pro rata and the difference is realized.
 * A fill beyond the order's amount is cut to it; one on a finished order is skipped (returns false).
 */
export function planFill(plan: BookPlan, fill: FillInput, fees: FeeModel, nowIso: string): boolean {
  const order = plan.order;
  const size = Math.min(fill.size, order.amount - order.filled_amount);
  if (size <= 0 || order.status === "cancelled" || order.status === "filled") return false;
  plan.fillRows.push(fillRow(order, fill, size, nowIso));
  const value = notional(fill.price, size);
  let lockedAfter = order.locked;
  let closed: PositionRow | undefined;
  if (plan.buy) {
    lockedAfter = buyLock(
      fees,
      order.price,
      order.amount - order.filled_amount - size,
      fill.carry ?? order.fee_carry,
    );
    const release = order.locked - lockedAfter;
    plan.balance.available += release - value - fill.fee;
    plan.balance.locked -= release;
    plan.balance.fees += fill.fee;
    plan.bought.size += size;
    plan.bought.cost += value;
    plan.bought.fees += fill.fee;
  } else {
    // A sell always has its contracts reserved (orders/service checks), so the position exists.
    if (!plan.position) throw new Error(`sell order ${order.id} has no position`);
    const sale = positionAfterSale(plan.position, size, value, fill.fee, nowIso);
    plan.balance.available += value - fill.fee;
    plan.balance.fees += fill.fee;
    plan.balance.realizedPnl += sale.realized;
    plan.position = sale.position;
    if (sale.position.size === 0) closed = sale.position;
  }
  plan.order = orderAfterFill(order, size, value, fill, lockedAfter, nowIso);
  plan.fills.push({ size, price: fill.price, value, order: plan.order, closed });
  return true;
}

/**
 * Cancels what is left of an open or pending order: a buy's remaining collateral and a sell's
 * promised contracts go back. Returns false when the order was no longer cancellable.
 */
export function planCancel(plan: BookPlan, reason: string, nowIso: string): boolean {
  const order = plan.order;
  if (order.status !== "open" && order.status !== "pending") return false;
  if (plan.buy) {
    plan.balance.available += order.locked;
    plan.balance.locked -= order.locked;
  } else {
    plan.released = Math.max(0, order.amount - order.filled_amount);
    if (plan.position && plan.released > 0) {
      plan.position = {
        ...plan.position,
        reserved: plan.position.reserved - plan.released,
        updated_at: nowIso,
      };
    }
  }
  plan.cancelReason = reason;
  plan.order = {
    ...order,
    status: "cancelled",
    cancel_reason: reason,
    locked: 0,
    cancelled_at: nowIso,
    updated_at: nowIso,
  };
  return true;
}

/**
 * A position at its market's resolution: a winning contract pays 1, a losing one 0, a void market
 * refunds the cost basis. Returns the payout credited at once (so the position is redeemable in the
 * sandbox), the PnL it realizes, and the position as settled.
 *
 * Contracts taken over from the venue (live) have no known cost: their payout realizes nothing
 * crossbook can measure, so realized PnL counts the contracts of known cost only.
 */
export function planSettlement(
  position: PositionRow,
  resolution: Resolution,
  nowIso: string,
): { won: boolean; payout: number; realized: number; settled: PositionRow } {
  const won = resolution !== "void" && resolution === position.outcome;
  // A contract pays $1: `size` micro-contracts pay `size` micro-dollars.
  const payout = resolution === "void" ? position.cost_basis : won ? position.size : 0;
  const known = position.size - position.unknown_cost_size;
  const realized = (resolution === "void" ? position.cost_basis : won ? known : 0) - position.cost_basis;
  const settled: PositionRow = {
    ...position,
    size: 0,
    reserved: 0,
    cost_basis: 0,
    realized_pnl: position.realized_pnl + realized,
    status: "resolved",
    resolution,
    payout,
    redeemable: payout > 0 ? 1 : 0,
    unknown_cost_size: 0,
    resolved_at: nowIso,
    closed_at: nowIso,
    updated_at: nowIso,
  };
  return { won, payout, realized, settled };
}

/**
 * A position after selling `size` of it for `value` (fee `fee`): its cost leaves pro rata, the
 * difference is realized, and it closes when empty.
 *
 * Contracts taken over from the venue at unknown cost (live, `unknown_cost_size`) are sold first;
 * what they sold for realizes nothing crossbook can measure, so realized PnL covers only the
 * contracts of known cost. Sandbox positions never hold such contracts.
 */
export function positionAfterSale(
  position: PositionRow,
  size: number,
  value: number,
  fee: number,
  nowIso: string,
): { position: PositionRow; realized: number } {
  const unknownSold = Math.min(size, position.unknown_cost_size);
  const knownSold = size - unknownSold;
  const knownValue = unknownSold === 0 ? value : mulDiv(value, knownSold, size);
  const removed = costOfSlice(position.cost_basis, position.size - position.unknown_cost_size, knownSold);
  const realized = knownValue - removed;
  const remaining = position.size - size;
  return {
    realized,
    position: {
      ...position,
      size: remaining,
      unknown_cost_size: position.unknown_cost_size - unknownSold,
      reserved: Math.max(0, position.reserved - size),
      cost_basis: position.cost_basis - removed,
      realized_pnl: position.realized_pnl + realized,
      fees: position.fees + fee,
      status: remaining === 0 ? "closed" : "open",
      closed_at: remaining === 0 ? nowIso : null,
      updated_at: nowIso,
    },
  };
}

/** An order after one fill of `size` for `value`, its collateral now `lockedAfter`. */
function orderAfterFill(
  order: OrderRow,
  size: number,
  value: number,
  fill: FillInput,
  lockedAfter: number,
  nowIso: string,
): OrderRow {
  const filled = order.filled_amount + size;
  return {
    ...order,
    filled_amount: filled,
    filled_notional: order.filled_notional + value,
    fees: order.fees + fill.fee,
    fee_carry: fill.carry ?? order.fee_carry,
    locked: lockedAfter,
    status: filled >= order.amount ? "filled" : order.status === "pending" ? "open" : order.status,
    updated_at: nowIso,
  };
}

/** The stored row of one fill of `order`. */
function fillRow(order: OrderRow, fill: FillInput, size: number, nowIso: string): FillRow {
  return {
    id: newId("fil"),
    order_id: order.id,
    account_id: order.account_id,
    environment: order.environment,
    market_id: order.market_id,
    outcome: order.outcome,
    side: order.side,
    price: fill.price,
    size,
    fee: fill.fee,
    liquidity: fill.liquidity,
    cause: JSON.stringify(fill.cause),
    cause_key: fill.causeKey,
    created_at: nowIso,
  };
}

/** The columns of `after` that differ from `before` (what an update needs to write). */
export function changedColumns<T extends object>(before: T, after: T): Partial<T> {
  const changes: Partial<T> = {};
  for (const column of Object.keys(after) as Array<keyof T>) {
    if (after[column] !== before[column]) changes[column] = after[column];
  }
  return changes;
}
