/**
 * The three things that move money once an order exists: a fill, a cancel, and a market's
 * resolution. Each runs inside the caller's transaction and records its events in the outbox in
 * that same transaction, so the state and the event describing it commit together or not at all.
 * Sandbox and live orders share this code; only what causes a fill differs.
 *
 * Every write is fenced: an order changes only if its status and filled amount are still what the
 * caller read, so a fill racing a cancel (or two instances applying the same trade) cannot both win.
 */

import { type FeeSchedule, scheduleOrDefault } from "@crossbook/fees";
import type { Outbox, RecordInput } from "../events/outbox";
import type { EventPayload, EventType } from "../events/types";
import { AppError } from "../http/errors";
import type { DbOrTrx } from "../infra/db/store";
import { newId } from "../infra/ids";
import { MICROS } from "../venues/decimal";
import type { Resolution, VenueId } from "../venues/model";
import type { OpenedPosition } from "./events";
import * as events from "./events";
import { buyLock, costOfSlice, type FeeModel, mulDiv, notional } from "./money";
import {
  type FillRow,
  insertFill,
  insertNewFills,
  insertOrder,
  type OrderRow,
  type Owner,
  updateOrderIf,
} from "./orders-repo";
import {
  addToPosition,
  adjustBalance,
  findBalance,
  findPositionByKey,
  insertPosition,
  type PositionRow,
  positionIdByKey,
  releaseReservation,
  reserveByKey,
  updatePosition,
} from "./positions-repo";

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

export interface Bookkeeping {
  outbox: Outbox;
  nowIso: string;
  /** Title used in position events (the market's event title, else its own). */
  title: string;
}

const ownerOf = (order: { account_id: string; environment: string }): Owner => ({
  accountId: order.account_id,
  environment: order.environment as Owner["environment"],
});

/** The fee schedule a market's fills are charged by: its own, else the venue's default (@crossbook/fees). */
export function feeModelOf(market: { venue: string; fees: FeeSchedule | null }): FeeModel {
  return scheduleOrDefault(market.venue as VenueId, market.fees);
}

/**
 * Applies one fill to an order, its position and its owner's balance. Returns the updated order, or
 * null when the fill was already applied or the order changed underneath (the caller re-reads).
 */
export async function applyFill(
  trx: DbOrTrx,
  ctx: Bookkeeping,
  order: OrderRow,
  fill: FillInput,
  fees: FeeModel,
): Promise<OrderRow | null> {
  const size = Math.min(fill.size, order.amount - order.filled_amount);
  if (size <= 0 || order.status === "cancelled" || order.status === "filled") return null;
  const inserted = await insertFill(trx, fillRow(order, fill, size, ctx.nowIso));
  if (!inserted) return null;

  const owner = ownerOf(order);
  const filled = order.filled_amount + size;
  const value = notional(fill.price, size);
  let position = await findPositionByKey(trx, owner, order.market_id, order.outcome);
  const wasEmpty = !position || position.size === 0;
  let lockedAfter = order.locked;
  let closed = false;

  if (order.side === "buy") {
    // Release what the filled part held back; pay the cost and the fee from it.
    lockedAfter = buyLock(fees, order.price, order.amount - filled, fill.carry ?? order.fee_carry);
    const release = order.locked - lockedAfter;
    await adjustBalance(
      trx,
      owner,
      { available: release - value - fill.fee, locked: -release, fees: fill.fee },
      ctx.nowIso,
    );
    if (!position) {
      position = {
        id: order.position_id,
        account_id: order.account_id,
        environment: order.environment,
        market_id: order.market_id,
        outcome: order.outcome,
        size,
        reserved: 0,
        cost_basis: value,
        realized_pnl: 0,
        fees: fill.fee,
        status: "open",
        resolution: null,
        payout: null,
        redeemable: 0,
        opened_at: ctx.nowIso,
        updated_at: ctx.nowIso,
        closed_at: null,
        resolved_at: null,
        unknown_cost_size: 0,
      };
      await insertPosition(trx, position);
    } else {
      const before: PositionRow = position;
      position = {
        ...position,
        size: position.size + size,
        cost_basis: position.cost_basis + value,
        fees: position.fees + fill.fee,
        status: "open",
        closed_at: null,
        ...(wasEmpty ? { opened_at: ctx.nowIso } : {}),
        updated_at: ctx.nowIso,
      };
      await updatePosition(trx, position.id, changedColumns(before, position));
    }
  } else {
    // A sell always has its contracts reserved (orders/service checks), so the position exists.
    if (!position) throw new Error(`sell order ${order.id} has no position`);
    const sale = positionAfterSale(position, size, value, fill.fee, ctx.nowIso);
    await adjustBalance(
      trx,
      owner,
      { available: value - fill.fee, fees: fill.fee, realizedPnl: sale.realized },
      ctx.nowIso,
    );
    closed = sale.position.size === 0;
    await updatePosition(trx, position.id, changedColumns(position, sale.position));
    position = sale.position;
  }

  const updated: OrderRow = {
    ...orderAfterFill(order, size, value, fill, lockedAfter, ctx.nowIso),
    position_id: position.id,
  };
  if (!(await updateOrderIf(trx, order, updated))) throw new FenceError(order.id);

  const accountId = order.account_id;
  const environment = order.environment as Owner["environment"];
  if (order.side === "buy" && wasEmpty) {
    await ctx.outbox.record(trx, {
      type: "position.opened",
      data: events.positionOpened(position, ctx.title),
      accountId,
      environment,
    });
  }
  if (updated.status === "filled") {
    await ctx.outbox.record(trx, {
      type: "order.filled",
      data: events.orderFilled(updated),
      accountId,
      environment,
    });
  } else {
    await ctx.outbox.record(trx, {
      type: "order.partially_filled",
      data: events.orderPartiallyFilled(updated, { size, price: fill.price }),
      accountId,
      environment,
    });
  }
  if (closed) {
    await ctx.outbox.record(trx, {
      type: "position.closed",
      data: events.positionClosed(position, ctx.title),
      accountId,
      environment,
    });
  }
  return updated;
}

/**
 * A new order with the fills it gets at once (a sandbox placement walking the real book), and its
 * cancellation when the unfilled rest may not rest (IOC, FOK, market). The outcome is the same state,
 * balance, fills and events, in the same order, as inserting the order open (locking a buy's
 * collateral only if that much is available, reserving a sell's contracts only if held), then
 * running `applyFill` for each fill and `cancelOrderRow` for the rest. It is computed in memory first
 * and written with one statement per table: the balance (guarded as the lock was), the position,
 * the order in its final state, its fills, and the events. Throws INSUFFICIENT_BALANCE or
 * INSUFFICIENT_POSITION; the caller's transaction (or savepoint) then undoes what was written.
 */
export async function openOrder(
  trx: DbOrTrx,
  ctx: Bookkeeping,
  draft: OrderRow,
  fills: readonly FillInput[],
  restReason: string | null,
  fees: FeeModel,
): Promise<OrderRow> {
  const owner = ownerOf(draft);
  const buy = draft.side === "buy";
  let row: OrderRow = { ...draft, locked: buy ? buyLock(fees, draft.price, draft.amount) : 0 };
  // A sell's contracts are promised first: what the fills take from the position depends on it.
  const held = buy
    ? undefined
    : await reserveByKey(trx, owner, row.market_id, row.outcome, row.amount, ctx.nowIso);
  if (!buy) {
    if (!held) {
      const found = await findPositionByKey(trx, owner, row.market_id, row.outcome);
      throw new AppError("INSUFFICIENT_POSITION", undefined, {
        outcome: row.outcome,
        amount: row.amount / MICROS,
        held: (found?.size ?? 0) / MICROS,
        reserved: (found?.reserved ?? 0) / MICROS,
      });
    }
    row.position_id = held.id;
  }
  const lock = row.locked;
  const created = events.orderCreated(row);
  const balance = { available: -lock, locked: lock, fees: 0, realizedPnl: 0 };

  // The fills, one after another, in memory.
  interface Step {
    size: number;
    price: number;
    value: number;
    row: OrderRow;
    /** A sell that emptied the position: the position as that fill left it. */
    closed: PositionRow | undefined;
  }
  const steps: Step[] = [];
  const fillRows: FillRow[] = [];
  let position = held;
  const bought = { size: 0, cost: 0, fees: 0 };
  for (const fill of fills) {
    const size = Math.min(fill.size, row.amount - row.filled_amount);
    if (size <= 0 || row.status === "cancelled" || row.status === "filled") continue;
    fillRows.push(fillRow(row, fill, size, ctx.nowIso));
    const filled = row.filled_amount + size;
    const value = notional(fill.price, size);
    let lockedAfter = row.locked;
    let closed: PositionRow | undefined;
    if (buy) {
      lockedAfter = buyLock(fees, row.price, row.amount - filled, fill.carry ?? row.fee_carry);
      const release = row.locked - lockedAfter;
      balance.available += release - value - fill.fee;
      balance.locked -= release;
      balance.fees += fill.fee;
      bought.size += size;
      bought.cost += value;
      bought.fees += fill.fee;
    } else {
      const sale = positionAfterSale(position!, size, value, fill.fee, ctx.nowIso);
      balance.available += value - fill.fee;
      balance.fees += fill.fee;
      balance.realizedPnl += sale.realized;
      position = sale.position;
      if (position.size === 0) closed = position;
    }
    row = orderAfterFill(row, size, value, fill, lockedAfter, ctx.nowIso);
    steps.push({ size, price: fill.price, value, row, closed });
  }

  // What may not rest is cancelled: a buy's remaining collateral and a sell's promised contracts go back.
  let cancelReason: string | undefined;
  if (restReason !== null && (row.status === "open" || row.status === "pending")) {
    cancelReason = restReason;
    if (buy) {
      balance.available += row.locked;
      balance.locked -= row.locked;
    } else {
      const rest = row.amount - row.filled_amount;
      if (rest > 0) position = { ...position!, reserved: position!.reserved - rest, updated_at: ctx.nowIso };
    }
    row = {
      ...row,
      status: "cancelled",
      cancel_reason: restReason,
      locked: 0,
      cancelled_at: ctx.nowIso,
      updated_at: ctx.nowIso,
    };
  }

  // The writes: the balance (a buy only if its collateral is available, as the lock requires) and
  // the position first (the order's position id may come from it), then the order in its final
  // state, its fills, and the events in the order they happened.
  if (buy) {
    if (!(await adjustBalance(trx, owner, balance, ctx.nowIso, lock))) {
      const found = await findBalance(trx, owner);
      throw new AppError("INSUFFICIENT_BALANCE", undefined, {
        required: lock / MICROS,
        available: (found?.available ?? 0) / MICROS,
      });
    }
  } else if (steps.length > 0) {
    await adjustBalance(trx, owner, balance, ctx.nowIso);
  }
  let opened: OpenedPosition | undefined;
  if (buy && bought.size > 0) {
    const after = await addToPosition(
      trx,
      owner,
      { newId: draft.position_id, marketId: row.market_id, outcome: row.outcome, ...bought },
      ctx.nowIso,
    );
    row.position_id = after.id;
    if (after.size === bought.size) {
      // Empty before the first fill: the position opened with that fill.
      const first = steps[0]!;
      opened = {
        id: after.id,
        market_id: row.market_id,
        outcome: row.outcome,
        size: first.size,
        cost_basis: after.cost_basis - bought.cost + first.value,
      };
    }
  } else if (buy) {
    row.position_id = (await positionIdByKey(trx, owner, row.market_id, row.outcome)) ?? draft.position_id;
  } else if (position !== held) {
    await updatePosition(trx, held!.id, changedColumns(held!, position!));
  }
  await insertOrder(trx, row);
  await insertNewFills(trx, fillRows);

  // The events in the order they happened, written with one statement.
  const recorded: Array<RecordInput<EventType>> = [];
  addEvent(recorded, owner, "order.created", created);
  for (const [index, step] of steps.entries()) {
    if (index === 0 && opened) {
      addEvent(recorded, owner, "position.opened", events.positionOpened(opened, ctx.title));
    }
    const after = { ...step.row, position_id: row.position_id };
    if (after.status === "filled") addEvent(recorded, owner, "order.filled", events.orderFilled(after));
    else
      addEvent(
        recorded,
        owner,
        "order.partially_filled",
        events.orderPartiallyFilled(after, { size: step.size, price: step.price }),
      );
    if (step.closed)
      addEvent(recorded, owner, "position.closed", events.positionClosed(step.closed, ctx.title));
  }
  if (cancelReason !== undefined) {
    addEvent(recorded, owner, "order.cancelled", events.orderCancelled(row, cancelReason));
  }
  await ctx.outbox.recordMany(trx, recorded);
  return row;
}

/**
 * Appends an owner's event to a placement's list. A module function, not an arrow inside
 * `openOrder`: tsx keeps function names, which costs a property definition per named closure.
 */
function addEvent<T extends EventType>(
  recorded: Array<RecordInput<EventType>>,
  owner: Owner,
  type: T,
  data: EventPayload<T>,
): void {
  recorded.push({ type, data, accountId: owner.accountId, environment: owner.environment });
}

/** The columns of `after` that differ from `before` (what an update needs to write). */
function changedColumns<T extends object>(before: T, after: T): Partial<T> {
  const changes: Partial<T> = {};
  for (const column of Object.keys(after) as Array<keyof T>) {
    if (after[column] !== before[column]) changes[column] = after[column];
  }
  return changes;
}

/** Thrown inside a transaction when an order changed underneath; the transaction rolls back. */
export class FenceError extends Error {
  constructor(orderId: string) {
    super(`order ${orderId} changed while it was being updated`);
    this.name = "FenceError";
  }
}

/**
 * Cancels an open or pending order: what it held back (cash for a buy, contracts for a sell) is
 * released. Returns the cancelled order, or null when it was no longer cancellable.
 */
export async function cancelOrderRow(
  trx: DbOrTrx,
  ctx: Omit<Bookkeeping, "title">,
  order: OrderRow,
  reason: string,
): Promise<OrderRow | null> {
  if (order.status !== "open" && order.status !== "pending") return null;
  const updated: OrderRow = {
    ...order,
    status: "cancelled",
    cancel_reason: reason,
    locked: 0,
    cancelled_at: ctx.nowIso,
    updated_at: ctx.nowIso,
  };
  if (!(await updateOrderIf(trx, order, updated))) return null;
  const owner = ownerOf(order);
  if (order.side === "buy" && order.locked > 0) {
    await adjustBalance(trx, owner, { available: order.locked, locked: -order.locked }, ctx.nowIso);
  }
  if (order.side === "sell") {
    const rest = order.amount - order.filled_amount;
    if (rest > 0) await releaseReservation(trx, order.position_id, rest, ctx.nowIso);
  }
  await ctx.outbox.record(trx, {
    type: "order.cancelled",
    data: events.orderCancelled(updated, reason),
    accountId: order.account_id,
    environment: owner.environment,
  });
  return updated;
}

/**
 * Settles a position at its market's resolution: a winning contract pays 1, a losing one 0, a void
 * market refunds the cost basis. The payout is credited at once, so the position is redeemable
 * (in the sandbox) and its PnL realized.
 */
export async function settlePosition(
  trx: DbOrTrx,
  ctx: Bookkeeping,
  position: PositionRow,
  resolution: Resolution,
): Promise<PositionRow> {
  const won = resolution !== "void" && resolution === position.outcome;
  // A contract pays $1: `size` micro-contracts pay `size` micro-dollars.
  const payoutMicros = resolution === "void" ? position.cost_basis : won ? position.size : 0;
  // Contracts taken over from the venue (live) have no known cost: their payout realizes nothing
  // crossbook can measure, so realized PnL counts the contracts of known cost only.
  const known = position.size - position.unknown_cost_size;
  const realized = (resolution === "void" ? position.cost_basis : won ? known : 0) - position.cost_basis;
  const owner = ownerOf(position);
  await adjustBalance(trx, owner, { available: payoutMicros, realizedPnl: realized }, ctx.nowIso);
  const settled: PositionRow = {
    ...position,
    size: 0,
    reserved: 0,
    cost_basis: 0,
    realized_pnl: position.realized_pnl + realized,
    status: "resolved",
    resolution,
    payout: payoutMicros,
    redeemable: payoutMicros > 0 ? 1 : 0,
    unknown_cost_size: 0,
    resolved_at: ctx.nowIso,
    closed_at: ctx.nowIso,
    updated_at: ctx.nowIso,
  };
  await updatePosition(trx, position.id, changedColumns(position, settled));
  await ctx.outbox.record(trx, {
    type: "position.resolved",
    data: {
      position_id: position.id,
      market_id: position.market_id,
      event_title: ctx.title,
      outcome: position.outcome,
      resolution,
      won,
      size: position.size / MICROS,
      cost_basis: position.cost_basis / MICROS,
      payout: payoutMicros / MICROS,
      realized_pnl: realized / MICROS,
      redeemable: payoutMicros > 0,
    },
    accountId: position.account_id,
    environment: owner.environment,
  });
  return settled;
}

/**
 * A position after selling `size` of it for `value` (fee `fee`): its cost leaves pro rata, the
 * difference is realized, and it closes when empty. Both the step-by-step and the one-plan path use it.
 *
 * Contracts taken over from the venue at unknown cost (live, `unknown_cost_size`) are sold first;
 * what they sold for realizes nothing crossbook can measure, so realized PnL covers only the
 * contracts of known cost. Sandbox positions never hold such contracts.
 */
function positionAfterSale(
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

/** The stored row of one fill of `order` (both the step-by-step and the one-plan path write it). */
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
