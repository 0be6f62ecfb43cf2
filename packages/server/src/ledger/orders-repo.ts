/** Order rows: the only SQL over `orders` and `fills`. */
import { type Selectable, sql } from "kysely";
import { type PageRequest, pageWithTotal } from "../infra/db/pages";
import { everyColumn, pick, prepare, prepareRows } from "../infra/db/prepared";
import type { FillsTable, IdempotencyKeysTable, OrdersTable } from "../infra/db/schema";
import type { DbOrTrx } from "../infra/db/store";

export type OrderRow = Selectable<OrdersTable>;
export type FillRow = Selectable<FillsTable>;
export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;

export const ORDER_STATUSES = ["open", "pending", "filled", "cancelled"] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const CANCELLABLE: ReadonlySet<string> = new Set(["open", "pending"]);

import type { Owner } from "../access/owner";

export type { Owner };

export interface OrderFilter {
  status?: OrderStatus | "all";
  marketId?: string;
  side?: "buy" | "sell";
}

/** Every column of `orders` (the type check below fails if one is missing). */
const ORDER_COLUMNS = [
  "id",
  "account_id",
  "environment",
  "market_id",
  "venue",
  "side",
  "outcome",
  "type",
  "time_in_force",
  "price",
  "max_slippage_ppm",
  "amount",
  "filled_amount",
  "filled_notional",
  "fees",
  "locked",
  "queue_ahead",
  "status",
  "cancel_reason",
  "client_order_id",
  "venue_order_id",
  "position_id",
  "expires_at",
  "created_at",
  "updated_at",
  "cancelled_at",
  "requested_amount",
  "amount_note",
  "fee_carry",
] as const satisfies ReadonlyArray<keyof OrderRow>;
everyColumn<OrderRow, typeof ORDER_COLUMNS>(true);

const insertOrderSql = prepare((db, row: OrderRow) =>
  db.insertInto("orders").values(pick(row, ORDER_COLUMNS)),
);

export async function insertOrder(db: DbOrTrx, row: OrderRow): Promise<void> {
  await insertOrderSql.run(db, row);
}

export async function findOrder(db: DbOrTrx, owner: Owner, id: string): Promise<OrderRow | undefined> {
  return db
    .selectFrom("orders")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .executeTakeFirst();
}

export async function orderById(db: DbOrTrx, id: string): Promise<OrderRow | undefined> {
  return db.selectFrom("orders").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function listOrders(
  db: DbOrTrx,
  owner: Owner,
  filter: OrderFilter,
  page: PageRequest,
): Promise<{ rows: OrderRow[]; total: number }> {
  let query = db
    .selectFrom("orders")
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment);
  if (filter.status && filter.status !== "all") query = query.where("status", "=", filter.status);
  if (filter.marketId) query = query.where("market_id", "=", filter.marketId);
  if (filter.side) query = query.where("side", "=", filter.side);
  return pageWithTotal(query, (q) => q.selectAll().orderBy("created_at", "desc").orderBy("id", "desc"), page);
}

/** Open or pending orders of an owner (bulk cancel), oldest first. */
export async function cancellableOrders(
  db: DbOrTrx,
  owner: Owner,
  filter: { marketId?: string; side?: "buy" | "sell" },
): Promise<OrderRow[]> {
  let query = db
    .selectFrom("orders")
    .selectAll()
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .where("status", "in", ["open", "pending"]);
  if (filter.marketId) query = query.where("market_id", "=", filter.marketId);
  if (filter.side) query = query.where("side", "=", filter.side);
  return query.orderBy("created_at").orderBy("id").execute();
}

/**
 * Writes an order's new state only if nobody changed it since `expected` was read (same status and
 * filled amount): the fence that keeps a fill and a cancel, or two instances, from both applying.
 */
export async function updateOrderIf(
  db: DbOrTrx,
  expected: OrderRow,
  changes: Partial<OrderRow>,
): Promise<boolean> {
  // Only the columns that change: rewriting the rest (ids, indexed columns) costs index updates for
  // nothing, and would put back stale values of columns this caller did not mean to touch.
  const set: Partial<OrderRow> = {};
  for (const column of Object.keys(changes) as Array<keyof OrderRow>) {
    if (changes[column] !== expected[column]) (set as Record<string, unknown>)[column] = changes[column];
  }
  // Nothing to change: still run the fenced statement, so the answer says whether the row is as read.
  if (Object.keys(set).length === 0) set.status = expected.status;
  const result = await db
    .updateTable("orders")
    .set(set)
    .where("id", "=", expected.id)
    .where("status", "=", expected.status)
    .where("filled_amount", "=", expected.filled_amount)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Inserts a fill unless this cause was already applied to this order; true when inserted. */
export async function insertFill(db: DbOrTrx, row: FillRow): Promise<boolean> {
  const result = await db
    .insertInto("fills")
    .values(row)
    .onConflict((oc) => oc.columns(["order_id", "cause_key"]).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** Every column of `fills` (the type check below fails if one is missing). */
const FILL_COLUMNS = [
  "id",
  "order_id",
  "account_id",
  "environment",
  "market_id",
  "outcome",
  "side",
  "price",
  "size",
  "fee",
  "liquidity",
  "cause",
  "cause_key",
  "created_at",
] as const satisfies ReadonlyArray<keyof FillRow>;
everyColumn<FillRow, typeof FILL_COLUMNS>(true);

const insertFillsSql = prepareRows((db, rows: readonly FillRow[]) =>
  db.insertInto("fills").values(rows.map((row) => pick(row, FILL_COLUMNS))),
);

/** Inserts the fills of a new order in one statement (a new order cannot have applied them before). */
export async function insertNewFills(db: DbOrTrx, rows: readonly FillRow[]): Promise<void> {
  await insertFillsSql.runInChunks(db, rows, [], { maxRows: 200 });
}

export async function fillsOf(db: DbOrTrx, orderId: string): Promise<FillRow[]> {
  return db
    .selectFrom("fills")
    .selectAll()
    .where("order_id", "=", orderId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

export interface FillFilter {
  marketId?: string;
  orderId?: string;
  /** Recorded at or after this instant (ISO 8601 UTC, as stored). */
  since?: string;
}

/** A fill's place in the list order (created_at, then id): what a page cursor stands for. */
export interface FillPosition {
  created_at: string;
  id: string;
}

/** Where one of the owner's fills stands in the list order; undefined when it is not theirs. */
export async function fillPosition(db: DbOrTrx, owner: Owner, id: string): Promise<FillPosition | undefined> {
  return db
    .selectFrom("fills")
    .select(["created_at", "id"])
    .where("id", "=", id)
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .executeTakeFirst();
}

/**
 * The owner's fills after `after` (exclusive), oldest first by (created_at, id), up to `limit`.
 * Without `orderId` it walks `fills_account_time_idx` (migration 023) in order. With one, the owner
 * is checked on the order (a fill carries its order's account and environment): the order's few
 * fills are read through `fills_order_cause_idx` and sorted, where an owner condition on `fills`
 * would send the planner down the account index, past every other fill of the account.
 */
export function listFillsQuery(
  db: DbOrTrx,
  owner: Owner,
  filter: FillFilter,
  after: FillPosition | undefined,
  limit: number,
) {
  let query = db.selectFrom("fills").selectAll();
  if (filter.orderId) {
    const ownOrder = db
      .selectFrom("orders")
      .select("id")
      .where("id", "=", filter.orderId)
      .where("account_id", "=", owner.accountId)
      .where("environment", "=", owner.environment);
    query = query.where("order_id", "in", ownOrder);
  } else {
    query = query.where("account_id", "=", owner.accountId).where("environment", "=", owner.environment);
  }
  if (filter.marketId) query = query.where("market_id", "=", filter.marketId);
  if (filter.since) query = query.where("created_at", ">=", filter.since);
  if (after)
    query = query.where((eb) =>
      eb(eb.refTuple("created_at", "id"), ">", eb.tuple(after.created_at, after.id)),
    );
  return query.orderBy("created_at").orderBy("id").limit(limit);
}

export async function listFills(
  db: DbOrTrx,
  owner: Owner,
  filter: FillFilter,
  after: FillPosition | undefined,
  limit: number,
): Promise<FillRow[]> {
  return listFillsQuery(db, owner, filter, after, limit).execute();
}

/** Every open sandbox order, oldest first (the exchange rebuilds its books from them at start). */
export async function restingSandboxOrders(db: DbOrTrx): Promise<OrderRow[]> {
  return db
    .selectFrom("orders")
    .selectAll()
    .where("status", "=", "open")
    .where("environment", "=", "sandbox")
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** Open orders on a market of any account and environment (market closed or resolved). */
export async function openOrdersOnMarket(
  db: DbOrTrx,
  marketId: string,
  environment: string,
): Promise<OrderRow[]> {
  return db
    .selectFrom("orders")
    .selectAll()
    .where("market_id", "=", marketId)
    .where("environment", "=", environment)
    .where("status", "in", ["open", "pending"])
    .orderBy("created_at")
    .execute();
}

/** GTD orders whose time is up. */
export async function expiredOrders(db: DbOrTrx, environment: string, nowIso: string): Promise<OrderRow[]> {
  return expiredOrdersQuery(db, environment, nowIso).execute();
}

/**
 * The condition of migration 010's partial expiry index, word for word: SQLite uses a partial index
 * only for a query that repeats its condition. Copied rather than imported (runtime code does not
 * import migrations, which stay as they shipped); test/orders/indexes.test.ts fails if they part.
 */
const OPEN_GTD_CONDITION = "status in ('open', 'pending') and expires_at is not null";

/** The expiry sweep's query, on the partial index. */
export function expiredOrdersQuery(db: DbOrTrx, environment: string, nowIso: string) {
  return db
    .selectFrom("orders")
    .selectAll()
    .where(sql.raw<boolean>(OPEN_GTD_CONDITION))
    .where("environment", "=", environment)
    .where("expires_at", "<=", nowIso)
    .orderBy("expires_at")
    .limit(500);
}

/** An owner's open or pending orders. */
export async function openOrdersOfOwner(db: DbOrTrx, owner: Owner): Promise<OrderRow[]> {
  return cancellableOrders(db, owner, {});
}

// --- live routing and its fill poller (orders/live*.ts) ------------------------------------------

/** Every (account, venue) with open or pending live orders: what the fill poller visits. */
export async function liveOrderGroups(db: DbOrTrx): Promise<Array<{ account_id: string; venue: string }>> {
  return db
    .selectFrom("orders")
    .select(["account_id", "venue"])
    .distinct()
    .where("environment", "=", "live")
    .where("status", "in", ["open", "pending"])
    .orderBy("account_id")
    .orderBy("venue")
    .execute();
}

/** An account's open or pending live orders on one venue, oldest first. */
export async function openLiveOrders(db: DbOrTrx, accountId: string, venue: string): Promise<OrderRow[]> {
  return db
    .selectFrom("orders")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("environment", "=", "live")
    .where("venue", "=", venue)
    .where("status", "in", ["open", "pending"])
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** Cash an account's open and pending live buy orders hold back (the live balance's `locked`). */
export async function liveLocked(db: DbOrTrx, accountId: string, venue?: string): Promise<number> {
  let query = db
    .selectFrom("orders")
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>("locked"), eb.lit(0)).as("total"))
    .where("account_id", "=", accountId)
    .where("environment", "=", "live")
    .where("status", "in", ["open", "pending"]);
  if (venue) query = query.where("venue", "=", venue);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.total);
}

/** Records the venue's id of an order whatever its state (a placement acknowledged after a cancel). */
export async function setVenueOrderId(db: DbOrTrx, id: string, venueOrderId: string): Promise<void> {
  await db.updateTable("orders").set({ venue_order_id: venueOrderId }).where("id", "=", id).execute();
}

/** How many live orders an account has open or pending on a venue (unlinking it would orphan them). */
export async function liveOpenOrderCount(db: DbOrTrx, accountId: string, venue: string): Promise<number> {
  const row = await db
    .selectFrom("orders")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .where("environment", "=", "live")
    .where("venue", "=", venue)
    .where("status", "in", ["open", "pending"])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
