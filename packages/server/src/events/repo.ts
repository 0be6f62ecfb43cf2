/**
 * SQL for the events outbox. Inserts are prepared statements (infra/db/prepared.ts): recording
 * events is on every write path, orders' among them. Reads follow the ordering rule explained in
 * outbox.ts: on PostgreSQL only rows of transactions older than every running one, by (tx_id, seq).
 */
import { type QueryResult, type SelectQueryBuilder, sql } from "kysely";
import { prepare, prepareRows } from "../infra/db/prepared";
import type { Database } from "../infra/db/schema";
import type { DbOrTrx, Dialect } from "../infra/db/store";
import { comparePositions, type EventPosition } from "./position";

/** One event row's values, as `bindEventRow` appends them. */
type EventValues = [
  id: string,
  type: string,
  accountId: string | null,
  environment: string | null,
  dataJson: string,
  createdAt: string,
];

function eventRow([id, type, accountId, environment, dataJson, createdAt]: EventValues) {
  return { id, type, account_id: accountId, environment, data: dataJson, created_at: createdAt };
}

const insertEventSql = prepare((db, event: EventValues) =>
  db.insertInto("events").values(eventRow(event)).returning("seq"),
);
const insertEventsSql = prepareRows((db, events: readonly EventValues[]) =>
  db.insertInto("events").values(events.map(eventRow)),
);
/** Rows per multi-row insert (6 parameters each, well under either store's parameter limit). */
export const EVENTS_PER_STATEMENT = 100;

/** Appends one event's row to `rows` (for `insertEvent` and `insertEvents`). */
export function bindEventRow(
  rows: unknown[],
  id: string,
  type: string,
  accountId: string | null,
  environment: string | null,
  dataJson: string,
  createdAt: string,
): void {
  rows.push([id, type, accountId, environment, dataJson, createdAt] satisfies EventValues);
}

// Not async, these two: the statement's own promise is returned, so recording an event costs no
// extra promise on the write path.

/** Inserts the one event bound in `rows`; its row's `seq` (a string on PostgreSQL). */
export function insertEvent(
  trx: DbOrTrx,
  rows: readonly unknown[],
): Promise<{ seq: number | string } | undefined> {
  return insertEventSql.first(trx, rows[0] as EventValues);
}

/** Inserts the events bound in `rows` (at most EVENTS_PER_STATEMENT) with one statement. */
export function insertEvents(trx: DbOrTrx, rows: readonly unknown[]): Promise<QueryResult<never>> {
  return insertEventsSql.run(trx, rows as readonly EventValues[], []);
}

/** An events row as read; `tx_text` (the transaction id) only on PostgreSQL. */
export interface StoredEventRow {
  seq: number;
  id: string;
  type: string;
  account_id: string | null;
  environment: string | null;
  data: string;
  created_at: string;
  tx_text?: string;
}

type Position = EventPosition;

/**
 * PostgreSQL's "committed for good" rule: rows of transactions older than every one still running,
 * so nothing can later appear before them (see outbox.ts).
 */
const SETTLED = sql<boolean>`tx_id < pg_snapshot_xmin(pg_current_snapshot())`;

/** A row's transaction id as text ("0" on SQLite, which has none). */
function txText(dialect: Dialect) {
  return dialect === "postgres" ? sql<string>`tx_id::text` : sql<string>`'0'`;
}

/**
 * Events after `cursor` in the outbox's order, committed ones only: on PostgreSQL, rows of
 * transactions older than every running one, by (transaction id, seq), so a late commit is never
 * behind a cursor already handed out; on SQLite (one writer), by seq.
 */
function afterInOutboxOrder<O>(
  query: SelectQueryBuilder<Database, "events", O>,
  dialect: Dialect,
  cursor: Position,
): SelectQueryBuilder<Database, "events", O> {
  if (dialect !== "postgres") return query.where("seq", ">", cursor.seq).orderBy("seq");
  return query
    .where(SETTLED)
    .where(sql<boolean>`(tx_id, seq) > (${cursor.tx}::xid8, ${cursor.seq})`)
    .orderBy("tx_id")
    .orderBy("seq");
}

/** Up to `limit` committed events after the cursor (transaction id, seq), in recording order. */
export async function eventsAfter(
  db: DbOrTrx,
  dialect: Dialect,
  cursor: Position,
  limit: number,
): Promise<StoredEventRow[]> {
  let query = db
    .selectFrom("events")
    .select(["seq", "id", "type", "account_id", "environment", "data", "created_at"])
    .limit(limit);
  if (dialect === "postgres") query = query.select(txText(dialect).as("tx_text"));
  return afterInOutboxOrder(query, dialect, cursor).execute();
}

/** Where an event stands in the outbox's order, and whose it is. */
export interface StoredEventPosition {
  seq: number;
  tx: string;
  account_id: string | null;
  environment: string | null;
  created_at: string;
}

/** The position of the event with this sequence number or id; undefined when there is none. */
export async function eventPosition(
  db: DbOrTrx,
  dialect: Dialect,
  key: { seq: number } | { id: string },
): Promise<StoredEventPosition | undefined> {
  const query = db
    .selectFrom("events")
    .select(["seq", "account_id", "environment", "created_at"])
    .select(txText(dialect).as("tx"));
  const row = await ("seq" in key ? query.where("seq", "=", key.seq) : query.where("id", "=", key.id))
    .limit(1)
    .executeTakeFirst();
  return row ? { ...row, seq: Number(row.seq) } : undefined;
}

/** An account event as the events API and the account stream read it: with its place in the order. */
export interface AccountEventRow {
  seq: number;
  id: string;
  type: string;
  account_id: string;
  environment: string;
  data: string;
  created_at: string;
  /** The recording transaction's id as text ("0" on SQLite). */
  tx: string;
}

function accountEventColumns(db: DbOrTrx, dialect: Dialect) {
  return db
    .selectFrom("events")
    .select(["seq", "id", "type", "account_id", "environment", "data", "created_at"])
    .select(txText(dialect).as("tx"));
}

/** Rows as read, with numbers for seq (PostgreSQL's bigint arrives as text). */
function accountRows(rows: ReadonlyArray<Record<string, unknown>>): AccountEventRow[] {
  for (const row of rows) row["seq"] = Number(row["seq"]);
  return rows as unknown as AccountEventRow[];
}

/**
 * Up to `limit` committed events of one account and environment after `cursor`, recorded at or
 * after `since`, of the given types (all when empty), in the outbox's order (see `eventsAfter`).
 */
export async function accountEventsAfter(
  db: DbOrTrx,
  dialect: Dialect,
  owner: { accountId: string; environment: string },
  cursor: Position,
  options: { since: string; types: readonly string[]; limit: number },
): Promise<AccountEventRow[]> {
  let query = accountEventColumns(db, dialect)
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .where("created_at", ">=", options.since)
    .limit(options.limit);
  if (options.types.length > 0) query = query.where("type", "in", options.types);
  return accountRows(await afterInOutboxOrder(query, dialect, cursor).execute());
}

/**
 * Up to `limit` committed events of every account after `cursor`, in the outbox's order: what the
 * account streams' tail (live-tail.ts) hands on. Global events (no account) are left out.
 */
export async function allAccountEventsAfter(
  db: DbOrTrx,
  dialect: Dialect,
  cursor: Position,
  limit: number,
): Promise<AccountEventRow[]> {
  const query = accountEventColumns(db, dialect)
    .where("account_id", "is not", null)
    .where("environment", "is not", null)
    .limit(limit);
  return accountRows(await afterInOutboxOrder(query, dialect, cursor).execute());
}

/**
 * The place of the last committed event in the outbox's order (where a reader that wants only
 * what comes next starts), of one account and environment when `owner` is given; the beginning
 * when there is none. On PostgreSQL only transactions older than every running one count, as in
 * `eventsAfter`: whatever commits later comes after this place.
 */
export async function lastCommittedPosition(
  db: DbOrTrx,
  dialect: Dialect,
  owner?: { accountId: string; environment: string },
): Promise<Position> {
  let query = db.selectFrom("events").select("seq").select(txText(dialect).as("tx")).limit(1);
  if (owner) {
    query = query.where("account_id", "=", owner.accountId).where("environment", "=", owner.environment);
  }
  if (dialect === "postgres") query = query.where(SETTLED);
  // The order an index holds: (tx_id, seq) on PostgreSQL and in the account index; SQLite's whole
  // table by seq, its primary key (every tx_id there is 0).
  query =
    dialect === "postgres" || owner
      ? query.orderBy("tx_id", "desc").orderBy("seq", "desc")
      : query.orderBy("seq", "desc");
  const row = await query.executeTakeFirst();
  return row ? { tx: row.tx, seq: Number(row.seq) } : { tx: "0", seq: 0 };
}

/** The oldest event of an account and environment recorded at or after `since`. */
export async function oldestAccountEvent(
  db: DbOrTrx,
  owner: { accountId: string; environment: string },
  since: string,
): Promise<{ seq: number; id: string } | undefined> {
  const row = await db
    .selectFrom("events")
    .select(["seq", "id"])
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .where("created_at", ">=", since)
    .orderBy("tx_id")
    .orderBy("seq")
    .limit(1)
    .executeTakeFirst();
  return row ? { seq: Number(row.seq), id: row.id } : undefined;
}

/** The smallest sequence number still stored (undefined when the table is empty). */
export async function oldestSeq(db: DbOrTrx): Promise<number | undefined> {
  const row = await db
    .selectFrom("events")
    .select((eb) => eb.fn.min("seq").as("seq"))
    .executeTakeFirst();
  return row?.seq === null || row?.seq === undefined ? undefined : Number(row.seq);
}

/**
 * Deletes up to `batch` of the oldest events, in the outbox's order, recorded before `before` and
 * behind `horizon` (the slowest outbox consumer's cursor, so nothing unread goes). Stops at the
 * first event that must stay: events are recorded in roughly that order, so what follows it is
 * newer. Returns how many it deleted.
 */
export async function pruneEvents(
  db: DbOrTrx,
  dialect: Dialect,
  before: string,
  horizon: Position,
  batch: number,
): Promise<number> {
  const rows = await db
    .selectFrom("events")
    .select(["seq", "created_at"])
    .select(txText(dialect).as("tx"))
    .orderBy("tx_id")
    .orderBy("seq")
    .limit(batch)
    .execute();
  const doomed: number[] = [];
  for (const row of rows) {
    const position = { tx: row.tx, seq: Number(row.seq) };
    if (row.created_at >= before || comparePositions(position, horizon) > 0) break;
    doomed.push(position.seq);
  }
  if (doomed.length > 0) await db.deleteFrom("events").where("seq", "in", doomed).execute();
  return doomed.length;
}

/** The cursor of the outbox consumer that has read least; undefined when none has started. */
export async function slowestOutboxCursor(db: DbOrTrx): Promise<Position | undefined> {
  const rows = await db.selectFrom("outbox_cursors").select(["tx", "seq"]).execute();
  let slowest: Position | undefined;
  for (const row of rows) {
    const cursor = { tx: String(row.tx), seq: Number(row.seq) };
    if (slowest === undefined || comparePositions(cursor, slowest) < 0) slowest = cursor;
  }
  return slowest;
}
