/** Balances, positions and transfers: the only SQL over those tables. */
import type { ExpressionBuilder, Kysely, Selectable } from "kysely";
import { sql } from "kysely";
import { type PageRequest, pageWithTotal } from "../infra/db/pages";
import { prepare } from "../infra/db/prepared";
import type { BalancesTable, Database, PositionsTable } from "../infra/db/schema";
import type { DbOrTrx } from "../infra/db/store";
import type { Owner } from "./orders-repo";

export type BalanceRow = Selectable<BalancesTable>;
export type PositionRow = Selectable<PositionsTable>;

export async function findBalance(db: DbOrTrx, owner: Owner): Promise<BalanceRow | undefined> {
  return db
    .selectFrom("balances")
    .selectAll()
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .executeTakeFirst();
}

/** Creates the balance row if missing; true when this call created it. */
export async function createBalance(
  db: DbOrTrx,
  owner: Owner,
  deposit: number,
  nowIso: string,
): Promise<boolean> {
  const result = await db
    .insertInto("balances")
    .values({
      account_id: owner.accountId,
      environment: owner.environment,
      available: deposit,
      locked: 0,
      deposits: deposit,
      withdrawals: 0,
      fees: 0,
      realized_pnl: 0,
      updated_at: nowIso,
    })
    .onConflict((oc) => oc.columns(["account_id", "environment"]).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

export interface BalanceDelta {
  available?: number;
  locked?: number;
  deposits?: number;
  withdrawals?: number;
  fees?: number;
  realizedPnl?: number;
}

/** A balance's change: how much each amount moves, when, and whose balance it is. */
type BalanceChange = [
  available: number,
  locked: number,
  deposits: number,
  withdrawals: number,
  fees: number,
  realizedPnl: number,
  nowIso: string,
  accountId: string,
  environment: string,
];

/**
 * The update a BalanceChange makes; values past it in the tuple are for the caller's own conditions.
 */
function adjustBalanceQuery(
  db: Kysely<Database>,
  [available, locked, deposits, withdrawals, fees, realizedPnl, nowIso, accountId, environment]: readonly [
    ...BalanceChange,
    ...unknown[],
  ],
) {
  return db
    .updateTable("balances")
    .set((eb) => ({
      available: eb("available", "+", available),
      locked: eb("locked", "+", locked),
      deposits: eb("deposits", "+", deposits),
      withdrawals: eb("withdrawals", "+", withdrawals),
      fees: eb("fees", "+", fees),
      realized_pnl: eb("realized_pnl", "+", realizedPnl),
      updated_at: nowIso,
    }))
    .where("account_id", "=", accountId)
    .where("environment", "=", environment);
}

const adjustBalanceSql = prepare(adjustBalanceQuery);
const adjustBalanceIfSql = prepare((db, change: [...BalanceChange, requireAvailable: number]) =>
  adjustBalanceQuery(db, change).where("available", ">=", change[9]),
);

/**
 * Moves money relative to what is stored (safe under concurrency). With `requireAvailable`, only
 * when at least that much is available; returns false (and changes nothing) otherwise.
 */
export async function adjustBalance(
  db: DbOrTrx,
  owner: Owner,
  delta: BalanceDelta,
  nowIso: string,
  requireAvailable?: number,
): Promise<boolean> {
  const available = delta.available ?? 0;
  const locked = delta.locked ?? 0;
  const deposits = delta.deposits ?? 0;
  const withdrawals = delta.withdrawals ?? 0;
  const fees = delta.fees ?? 0;
  const realizedPnl = delta.realizedPnl ?? 0;
  const { accountId, environment } = owner;
  // Array literals, not a spread of one into the other: this runs on every order placement.
  if (requireAvailable === undefined) {
    const change: BalanceChange = [
      available,
      locked,
      deposits,
      withdrawals,
      fees,
      realizedPnl,
      nowIso,
      accountId,
      environment,
    ];
    return (await adjustBalanceSql.changes(db, change)) === 1;
  }
  return (
    (await adjustBalanceIfSql.changes(db, [
      available,
      locked,
      deposits,
      withdrawals,
      fees,
      realizedPnl,
      nowIso,
      accountId,
      environment,
      requireAvailable,
    ])) === 1
  );
}

/** A position's key: whose it is, on which market, which outcome. */
type ByKey = [accountId: string, environment: string, marketId: string, outcome: string];

/** The condition "this is the position with key `key`" (the table's unique key). */
function isPosition(
  eb: ExpressionBuilder<Database, "positions">,
  [accountId, environment, marketId, outcome]: ByKey,
) {
  return eb.and([
    eb("account_id", "=", accountId),
    eb("environment", "=", environment),
    eb("market_id", "=", marketId),
    eb("outcome", "=", outcome),
  ]);
}

const positionByKeySql = prepare((db, key: ByKey) =>
  db
    .selectFrom("positions")
    .selectAll()
    .where((eb) => isPosition(eb, key)),
);

export async function findPositionByKey(
  db: DbOrTrx,
  owner: Owner,
  marketId: string,
  outcome: string,
): Promise<PositionRow | undefined> {
  return positionByKeySql.first(db, [owner.accountId, owner.environment, marketId, outcome]);
}

const positionIdByKeySql = prepare((db, key: ByKey) =>
  db
    .selectFrom("positions")
    .select("id")
    .where((eb) => isPosition(eb, key)),
);

/** The id of an owner's position on a market's outcome, if there is one. */
export async function positionIdByKey(
  db: DbOrTrx,
  owner: Owner,
  marketId: string,
  outcome: string,
): Promise<string | undefined> {
  return (await positionIdByKeySql.first(db, [owner.accountId, owner.environment, marketId, outcome]))?.id;
}

/** What `addToPosition` adds, and when. */
type Addition = [size: number, cost: number, fees: number, nowIso: string];

const addToPositionSql = prepare(
  (
    db,
    [id, accountId, environment, marketId, outcome, size, cost, fees, nowIso]: [
      id: string,
      ...ByKey,
      ...Addition,
    ],
  ) =>
    db
      .insertInto("positions")
      .values({
        id,
        account_id: accountId,
        environment,
        market_id: marketId,
        outcome,
        size,
        reserved: sql.lit(0),
        cost_basis: cost,
        realized_pnl: sql.lit(0),
        fees,
        status: sql.lit("open"),
        resolution: sql.lit(null),
        payout: sql.lit(null),
        redeemable: sql.lit(0),
        unknown_cost_size: sql.lit(0),
        opened_at: nowIso,
        updated_at: nowIso,
        closed_at: sql.lit(null),
        resolved_at: sql.lit(null),
      })
      .onConflict((oc) =>
        oc.columns(["account_id", "environment", "market_id", "outcome"]).doUpdateSet((eb) => ({
          size: eb("positions.size", "+", eb.ref("excluded.size")),
          cost_basis: eb("positions.cost_basis", "+", eb.ref("excluded.cost_basis")),
          fees: eb("positions.fees", "+", eb.ref("excluded.fees")),
          status: sql.lit("open"),
          closed_at: sql.lit(null),
          opened_at: eb
            .case()
            .when("positions.size", "=", sql.lit(0))
            .then(eb.ref("excluded.opened_at"))
            .else(eb.ref("positions.opened_at"))
            .end(),
          updated_at: eb.ref("excluded.updated_at"),
        })),
      )
      .returning(["id", "size", "cost_basis"]),
);

/** `addToPosition` when the position exists (the usual case). */
const growPositionSql = prepare(
  (db, [size, cost, fees, nowIso, accountId, environment, marketId, outcome]: [...Addition, ...ByKey]) =>
    db
      .updateTable("positions")
      .set((eb) => ({
        size: eb("size", "+", size),
        cost_basis: eb("cost_basis", "+", cost),
        fees: eb("fees", "+", fees),
        status: sql.lit("open"),
        closed_at: sql.lit(null),
        opened_at: eb.case().when("size", "=", sql.lit(0)).then(nowIso).else(eb.ref("opened_at")).end(),
        updated_at: nowIso,
      }))
      .where((eb) => isPosition(eb, [accountId, environment, marketId, outcome])),
);

/** What `addToPosition` reads back: the position's id, and enough to tell whether it just opened. */
export type GrownPosition = Pick<PositionRow, "id" | "size" | "cost_basis">;

const grownPositionSql = prepare((db, key: ByKey) =>
  db
    .selectFrom("positions")
    .select(["id", "size", "cost_basis"])
    .where((eb) => isPosition(eb, key)),
);

/**
 * Bought contracts: adds `size`, `cost` and `fees` to the owner's position on the market's outcome,
 * creating it (with `newId`) if there is none, and reopening it if it was empty. Returns the
 * position's id, size and cost basis as they are now; it was empty before exactly when its size is
 * `size`.
 *
 * An existing position is updated, then read back: on SQLite an update with RETURNING costs more
 * than a plain update and the read together (bench:orders). The read takes three columns, not the
 * row, which is cheaper to build. A missing position is inserted by the upsert (which also settles a
 * race with another writer creating it).
 */
export async function addToPosition(
  db: DbOrTrx,
  owner: Owner,
  add: { newId: string; marketId: string; outcome: string; size: number; cost: number; fees: number },
  nowIso: string,
): Promise<GrownPosition> {
  const { accountId, environment } = owner;
  const { marketId, outcome, size, cost, fees } = add;
  const grew = await growPositionSql.changes(db, [
    size,
    cost,
    fees,
    nowIso,
    accountId,
    environment,
    marketId,
    outcome,
  ]);
  if (grew === 1) {
    const grown = await grownPositionSql.first(db, [accountId, environment, marketId, outcome]);
    if (grown) return grown;
  }
  const row = await addToPositionSql.first(db, [
    add.newId,
    accountId,
    environment,
    marketId,
    outcome,
    size,
    cost,
    fees,
    nowIso,
  ]);
  if (!row) throw new Error("position upsert returned no row");
  return row;
}

export async function findPosition(db: DbOrTrx, owner: Owner, id: string): Promise<PositionRow | undefined> {
  return db
    .selectFrom("positions")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .executeTakeFirst();
}

export async function insertPosition(db: DbOrTrx, row: PositionRow): Promise<void> {
  await db.insertInto("positions").values(row).execute();
}

export async function updatePosition(db: DbOrTrx, id: string, changes: Partial<PositionRow>): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  await db.updateTable("positions").set(changes).where("id", "=", id).execute();
}

const reserveByKeySql = prepare(
  (db, [size, nowIso, accountId, environment, marketId, outcome]: [size: number, nowIso: string, ...ByKey]) =>
    db
      .updateTable("positions")
      .set((eb) => ({ reserved: eb("reserved", "+", size), updated_at: nowIso }))
      .where((eb) => isPosition(eb, [accountId, environment, marketId, outcome]))
      .where((eb) => eb(eb("size", "-", eb.ref("reserved")), ">=", size))
      .returningAll(),
);

/**
 * Promises `size` held contracts of the owner's position on a market's outcome to a sell order, if
 * that many are not promised already; returns the position as it is now (locked until the
 * transaction ends, on PostgreSQL), or undefined when it is not held.
 */
export async function reserveByKey(
  db: DbOrTrx,
  owner: Owner,
  marketId: string,
  outcome: string,
  size: number,
  nowIso: string,
): Promise<PositionRow | undefined> {
  return reserveByKeySql.first(db, [size, nowIso, owner.accountId, owner.environment, marketId, outcome]);
}

/** Promises `size` held contracts to a sell order, if that many are not promised already. */
export async function reservePosition(
  db: DbOrTrx,
  id: string,
  size: number,
  nowIso: string,
): Promise<boolean> {
  const result = await db
    .updateTable("positions")
    .set({ reserved: sql`reserved + ${size}`, updated_at: nowIso })
    .where("id", "=", id)
    .where(sql<boolean>`size - reserved >= ${size}`)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function releaseReservation(
  db: DbOrTrx,
  id: string,
  size: number,
  nowIso: string,
): Promise<void> {
  await db
    .updateTable("positions")
    .set({ reserved: sql`reserved - ${size}`, updated_at: nowIso })
    .where("id", "=", id)
    .execute();
}

export interface PositionFilter {
  status?: "open" | "closed" | "resolved" | "all";
  marketId?: string;
  outcome?: "yes" | "no";
}

export async function listPositions(
  db: DbOrTrx,
  owner: Owner,
  filter: PositionFilter,
  page: PageRequest,
): Promise<{ rows: PositionRow[]; total: number }> {
  let query = db
    .selectFrom("positions")
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment);
  if (filter.status && filter.status !== "all") query = query.where("status", "=", filter.status);
  if (filter.marketId) query = query.where("market_id", "=", filter.marketId);
  if (filter.outcome) query = query.where("outcome", "=", filter.outcome);
  return pageWithTotal(query, (q) => q.selectAll().orderBy("opened_at", "desc").orderBy("id", "desc"), page);
}

/** What `positionsOnMarkets` reads of each position. */
export type PositionKey = Pick<PositionRow, "id" | "market_id" | "outcome" | "size" | "status">;

/** An owner's positions (any status) on any of `marketIds`, a few columns of each. */
export async function positionsOnMarkets(
  db: DbOrTrx,
  owner: Owner,
  marketIds: readonly string[],
): Promise<PositionKey[]> {
  const unique = [...new Set(marketIds)];
  const out: PositionKey[] = [];
  // Chunks keep the statement under every driver's parameter limit.
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom("positions")
      .select(["id", "market_id", "outcome", "size", "status"])
      .where("account_id", "=", owner.accountId)
      .where("environment", "=", owner.environment)
      .where("market_id", "in", unique.slice(i, i + 500))
      .execute();
    out.push(...rows);
  }
  return out;
}

/**
 * An open position of `size` contracts held at unknown cost (nothing traded through crossbook): the
 * row `adoptIntoPosition` inserts, and the one the portfolio shows for a holding only the venue knows.
 */
export function unknownCostPosition(
  owner: Owner,
  held: { id: string; marketId: string; outcome: string; size: number },
  times: { openedAt: string; updatedAt: string },
): PositionRow {
  return {
    id: held.id,
    account_id: owner.accountId,
    environment: owner.environment,
    market_id: held.marketId,
    outcome: held.outcome,
    size: held.size,
    reserved: 0,
    cost_basis: 0,
    realized_pnl: 0,
    fees: 0,
    status: "open",
    resolution: null,
    payout: null,
    redeemable: 0,
    opened_at: times.openedAt,
    updated_at: times.updatedAt,
    closed_at: null,
    resolved_at: null,
    unknown_cost_size: held.size,
  };
}

/**
 * Takes `size` contracts the venue holds for a live owner beyond crossbook's record into the owner's
 * position on the market's outcome, at unknown cost (`unknown_cost_size`): creating the position
 * (with `newId`) if there is none, reopening it if it was empty. No money moves: nothing was traded.
 * Returns the position as it is now.
 */
export async function adoptIntoPosition(
  db: DbOrTrx,
  owner: Owner,
  add: { newId: string; marketId: string; outcome: string; size: number },
  nowIso: string,
): Promise<PositionRow> {
  const grow = () =>
    db
      .updateTable("positions")
      .set({
        size: sql`size + ${add.size}`,
        unknown_cost_size: sql`unknown_cost_size + ${add.size}`,
        status: "open",
        closed_at: null,
        opened_at: sql`case when size = 0 then ${nowIso} else opened_at end`,
        updated_at: nowIso,
      })
      .where((eb) => isPosition(eb, [owner.accountId, owner.environment, add.marketId, add.outcome]))
      .executeTakeFirst();
  if (Number((await grow()).numUpdatedRows) === 0) {
    const inserted = await db
      .insertInto("positions")
      .values(
        unknownCostPosition(
          owner,
          { id: add.newId, marketId: add.marketId, outcome: add.outcome, size: add.size },
          { openedAt: nowIso, updatedAt: nowIso },
        ),
      )
      .onConflict((oc) => oc.columns(["account_id", "environment", "market_id", "outcome"]).doNothing())
      .executeTakeFirst();
    // Created by another writer meanwhile: grow that one.
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) await grow();
  }
  const row = await findPositionByKey(db, owner, add.marketId, add.outcome);
  if (!row) throw new Error("adopted position not found");
  return row;
}

/** Open positions on a market (resolution settles them). */
export async function openPositionsOnMarket(db: DbOrTrx, marketId: string): Promise<PositionRow[]> {
  return db
    .selectFrom("positions")
    .selectAll()
    .where("market_id", "=", marketId)
    .where("status", "in", ["open", "closed"])
    .where("size", ">", 0)
    .execute();
}

/** Sum of cost basis over an owner's positions (the ledger identity's third term). */
export async function costBasisTotal(db: DbOrTrx, owner: Owner): Promise<number> {
  const row = await db
    .selectFrom("positions")
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>("cost_basis"), sql<number>`0`).as("total"))
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

export async function insertTransfer(
  db: DbOrTrx,
  row: { id: string; owner: Owner; kind: string; amount: number; balanceAfter: number; nowIso: string },
): Promise<void> {
  await db
    .insertInto("transfers")
    .values({
      id: row.id,
      account_id: row.owner.accountId,
      environment: row.owner.environment,
      kind: row.kind,
      amount: row.amount,
      balance_after: row.balanceAfter,
      created_at: row.nowIso,
    })
    .execute();
}

/** Deletes everything an owner traded (the sandbox reset). */
export async function wipeOwner(db: DbOrTrx, owner: Owner): Promise<void> {
  // Fills are indexed by order, not by owner: find them through the owner's orders.
  await db
    .deleteFrom("fills")
    .where("order_id", "in", (query) =>
      query
        .selectFrom("orders")
        .select("id")
        .where("account_id", "=", owner.accountId)
        .where("environment", "=", owner.environment),
    )
    .execute();
  for (const table of ["orders", "positions", "transfers", "balances", "idempotency_keys"] as const) {
    await db
      .deleteFrom(table)
      .where("account_id", "=", owner.accountId)
      .where("environment", "=", owner.environment)
      .execute();
  }
}
