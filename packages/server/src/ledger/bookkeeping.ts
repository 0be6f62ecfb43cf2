/**
 * The one writer of money movements: a new order with its immediate fills, a later fill, a cancel,
 * and a market's resolution. The accounting is planned in memory (plan.ts) and written here with
 * one statement per table: the balance, the position, the order, its fills, then the events in the
 * order they happened. Each runs inside the caller's transaction and records its events in the
 * outbox in that same transaction, so the state and the event describing it commit together or
 * not at all. Sandbox and live orders share this code; only what causes a fill differs.
 *
 * Every order write is fenced: an order changes only if its status and filled amount are still what
 * the caller read, so a fill racing a cancel (or two instances applying the same trade) cannot both
 * win.
 */

import { type FeeSchedule, scheduleOrDefault } from "@crossbook/fees";
import type { Owner } from "../access/owner";
import type { Outbox, RecordInput } from "../events/outbox";
import type { EventType } from "../events/types";
import { AppError } from "../http/errors";
import type { DbOrTrx } from "../infra/db/store";
import { MICROS } from "../venues/decimal";
import type { Resolution, VenueId } from "../venues/model";
import * as events from "./events";
import { buyLock, type FeeModel } from "./money";
import { insertFill, insertNewFills, insertOrder, type OrderRow, updateOrderIf } from "./orders-repo";
import {
  type BookPlan,
  changedColumns,
  type FillInput,
  planCancel,
  planFill,
  planSettlement,
  startPlan,
} from "./plan";
import {
  addToPosition,
  adjustBalance,
  findBalance,
  findPositionByKey,
  type PositionRow,
  positionIdByKey,
  releaseReservation,
  reserveByKey,
  reservePosition,
  updatePosition,
} from "./positions-repo";

export type { FillCause, FillInput } from "./plan";

export interface Bookkeeping {
  outbox: Outbox;
  nowIso: string;
  /** Title used in position events (the market's event title, else its own). */
  title: string;
}

const ownerOf = (row: { account_id: string; environment: string }): Owner => ({
  accountId: row.account_id,
  environment: row.environment as Owner["environment"],
});

/** The fee schedule a market's fills are charged by: its own, else the venue's default (@crossbook/fees). */
export function feeModelOf(market: { venue: string; fees: FeeSchedule | null }): FeeModel {
  return scheduleOrDefault(market.venue as VenueId, market.fees);
}

/** Thrown inside a transaction when an order changed underneath; the transaction rolls back. */
export class FenceError extends Error {
  constructor(orderId: string) {
    super(`order ${orderId} changed while it was being updated`);
    this.name = "FenceError";
  }
}

/**
 * A new order with the fills it gets at once (a sandbox placement walking the real book), and its
 * cancellation when the unfilled rest may not rest (IOC, FOK, market). A buy locks its collateral
 * only if that much is available, a sell reserves its contracts only if held. Throws
 * INSUFFICIENT_BALANCE or INSUFFICIENT_POSITION; the caller's transaction (or savepoint) then undoes
 * what was written.
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
  const lock = buy ? buyLock(fees, draft.price, draft.amount) : 0;
  // A sell's contracts are promised first: what the fills take from the position depends on it.
  const held = buy
    ? undefined
    : await reserveByKey(trx, owner, draft.market_id, draft.outcome, draft.amount, ctx.nowIso);
  if (!buy && !held) {
    const found = await findPositionByKey(trx, owner, draft.market_id, draft.outcome);
    throw new AppError("INSUFFICIENT_POSITION", undefined, {
      outcome: draft.outcome,
      amount: draft.amount / MICROS,
      held: (found?.size ?? 0) / MICROS,
      reserved: (found?.reserved ?? 0) / MICROS,
    });
  }
  const order: OrderRow = { ...draft, locked: lock, position_id: held?.id ?? draft.position_id };
  const plan = startPlan(order, held);
  plan.balance.available = -lock;
  plan.balance.locked = lock;
  for (const fill of fills) planFill(plan, fill, fees, ctx.nowIso);
  if (restReason !== null) planCancel(plan, restReason, ctx.nowIso);
  return writePlan(trx, ctx, plan, {
    created: order,
    order: "insert",
    heldBefore: held,
    requireAvailable: buy ? lock : undefined,
  });
}

/**
 * A live order before the venue has it: stored `pending` with its `order.created` event. No cash
 * moves here (live cash lives at the venue); a sell promises its contracts from `held`, the position
 * the caller found or took over from the venue, and nothing is written when they are not free
 * (returns undefined for the caller to explain). With a `cancelReason` (a market order with nothing
 * to take) the order is stored cancelled at once, unfilled, as the sandbox does.
 */
export async function openPendingOrder(
  trx: DbOrTrx,
  ctx: Omit<Bookkeeping, "title">,
  draft: OrderRow,
  held: PositionRow | undefined,
  cancelReason: string | null,
): Promise<OrderRow | undefined> {
  let order = draft;
  if (draft.side === "sell") {
    if (!held || !(await reservePosition(trx, held.id, draft.amount, ctx.nowIso))) return undefined;
    order = { ...draft, position_id: held.id };
  }
  const plan = startPlan(order, undefined);
  if (cancelReason !== null) planCancel(plan, cancelReason, ctx.nowIso);
  return writePlan(trx, { ...ctx, title: "" }, plan, { created: order, order: "insert" });
}

/**
 * Applies one fill to an order, its position and its owner's balance. Returns the updated order, or
 * null when the fill was already applied or the order is finished (the caller re-reads); throws
 * FenceError when the order changed underneath.
 */
export async function applyFill(
  trx: DbOrTrx,
  ctx: Bookkeeping,
  order: OrderRow,
  fill: FillInput,
  fees: FeeModel,
): Promise<OrderRow | null> {
  const sellFrom =
    order.side === "sell"
      ? await findPositionByKey(trx, ownerOf(order), order.market_id, order.outcome)
      : undefined;
  const plan = startPlan(order, sellFrom);
  if (!planFill(plan, fill, fees, ctx.nowIso)) return null;
  // The fill's cause is unique per order: a second delivery of the same trade stops here.
  if (!(await insertFill(trx, plan.fillRows[0]!))) return null;
  return writePlan(trx, ctx, plan, { order: { fence: order }, heldBefore: sellFrom, fillsWritten: true });
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
  const plan = startPlan(order, undefined);
  if (!planCancel(plan, reason, ctx.nowIso)) return null;
  // Fenced first: a cancel that lost a race writes nothing.
  if (!(await updateOrderIf(trx, order, plan.order))) return null;
  return writePlan(trx, { ...ctx, title: "" }, plan, { order: "written" });
}

interface WriteOptions {
  /** The order as placed, for its `order.created` event (a new order only). */
  created?: OrderRow;
  /** Insert the order, update it fenced on the row as read, or leave it (already written). */
  order: "insert" | { fence: OrderRow } | "written";
  /** A sell's position as read or reserved before the plan changed it. */
  heldBefore?: PositionRow;
  /** Write the balance only if this much is available (a new buy's lock). */
  requireAvailable?: number;
  /** The plan's fill rows are written already (a later fill, deduplicated by its cause). */
  fillsWritten?: boolean;
}

/**
 * Writes a plan: the balance (guarded as a new buy's lock requires), then the position (the order's
 * position id may come from it), the order, its fills, and the events in the order they happened.
 */
async function writePlan(
  trx: DbOrTrx,
  ctx: Bookkeeping,
  plan: BookPlan,
  options: WriteOptions,
): Promise<OrderRow> {
  const owner = ownerOf(plan.order);
  const { balance } = plan;
  if (options.requireAvailable !== undefined) {
    if (!(await adjustBalance(trx, owner, balance, ctx.nowIso, options.requireAvailable))) {
      const found = await findBalance(trx, owner);
      throw new AppError("INSUFFICIENT_BALANCE", undefined, {
        required: options.requireAvailable / MICROS,
        available: (found?.available ?? 0) / MICROS,
      });
    }
  } else if (
    balance.available !== 0 ||
    balance.locked !== 0 ||
    balance.fees !== 0 ||
    balance.realizedPnl !== 0
  ) {
    await adjustBalance(trx, owner, balance, ctx.nowIso);
  }

  let row = plan.order;
  let opened: events.OpenedPosition | undefined;
  if (plan.buy && plan.bought.size > 0) {
    const after = await addToPosition(
      trx,
      owner,
      { newId: row.position_id, marketId: row.market_id, outcome: row.outcome, ...plan.bought },
      ctx.nowIso,
    );
    row = { ...row, position_id: after.id };
    if (after.size === plan.bought.size) {
      // Empty before the first fill: the position opened with that fill.
      const first = plan.fills[0]!;
      opened = {
        id: after.id,
        market_id: row.market_id,
        outcome: row.outcome,
        size: first.size,
        cost_basis: after.cost_basis - plan.bought.cost + first.value,
      };
    }
  } else if (plan.buy && options.order === "insert") {
    row = {
      ...row,
      position_id: (await positionIdByKey(trx, owner, row.market_id, row.outcome)) ?? row.position_id,
    };
  } else if (!plan.buy && plan.position && options.heldBefore) {
    row = { ...row, position_id: plan.position.id };
    if (plan.position !== options.heldBefore) {
      await updatePosition(trx, plan.position.id, changedColumns(options.heldBefore, plan.position));
    }
  } else if (!plan.buy && plan.released > 0) {
    await releaseReservation(trx, row.position_id, plan.released, ctx.nowIso);
  }

  if (options.order === "insert") {
    await insertOrder(trx, row);
  } else if (options.order !== "written") {
    if (!(await updateOrderIf(trx, options.order.fence, row))) throw new FenceError(row.id);
  }
  if (!options.fillsWritten && plan.fillRows.length > 0) await insertNewFills(trx, plan.fillRows);

  const recorded: Array<RecordInput<EventType>> = [];
  const add = <T extends EventType>(type: T, data: RecordInput<T>["data"]) =>
    recorded.push({ type, data, accountId: owner.accountId, environment: owner.environment });
  if (options.created) add("order.created", events.orderCreated(options.created));
  for (const [index, fill] of plan.fills.entries()) {
    if (index === 0 && opened) add("position.opened", events.positionOpened(opened, ctx.title));
    const after = { ...fill.order, position_id: row.position_id };
    if (after.status === "filled") add("order.filled", events.orderFilled(after));
    else
      add(
        "order.partially_filled",
        events.orderPartiallyFilled(after, { size: fill.size, price: fill.price }),
      );
    if (fill.closed) add("position.closed", events.positionClosed(fill.closed, ctx.title));
  }
  if (plan.cancelReason !== undefined) add("order.cancelled", events.orderCancelled(row, plan.cancelReason));
  // recordMany even for one event: no RETURNING, which SQLite makes a placement pay for.
  if (recorded.length > 0) await ctx.outbox.recordMany(trx, recorded);
  return row;
}

/**
 * Settles a position at its market's resolution as `planSettlement` works it out: the payout is
 * credited to the balance, the position is marked resolved, and `position.resolved` recorded.
 */
export async function settlePosition(
  trx: DbOrTrx,
  ctx: Bookkeeping,
  position: PositionRow,
  resolution: Resolution,
): Promise<PositionRow> {
  const { won, payout, realized, settled } = planSettlement(position, resolution, ctx.nowIso);
  const owner = ownerOf(position);
  await adjustBalance(trx, owner, { available: payout, realizedPnl: realized }, ctx.nowIso);
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
      payout: payout / MICROS,
      realized_pnl: realized / MICROS,
      redeemable: payout > 0,
    },
    accountId: position.account_id,
    environment: owner.environment,
  });
  return settled;
}
