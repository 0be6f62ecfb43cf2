/**
 * SQL for the events outbox. Inserts are prepared statements (infra/db/prepared.ts): recording
 * events is on every write path, orders' among them. Reads follow the ordering rule explained in
 * outbox.ts: on PostgreSQL only rows of transactions older than every running one, by (tx_id, seq).
 */
import { type QueryResult, sql } from "kysely";
import { prepare, prepareRows } from "../infra/db/prepared";
import type { DbOrTrx, Dialect } from "../infra/db/store";

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

/** Up to `limit` committed events after the cursor (transaction id, seq), in recording order. */
export async function eventsAfter(
  db: DbOrTrx,
  dialect: Dialect,
  cursor: { tx: string; seq: number },
  limit: number,
): Promise<StoredEventRow[]> {
  let query = db
    .selectFrom("events")
    .select(["seq", "id", "type", "account_id", "environment", "data", "created_at"])
    .limit(limit);
  if (dialect === "postgres") {
    query = query
      .select(sql<string>`tx_id::text`.as("tx_text"))
      .where(sql<boolean>`tx_id < pg_snapshot_xmin(pg_current_snapshot())`)
      .where(sql<boolean>`(tx_id, seq) > (${cursor.tx}::xid8, ${cursor.seq})`)
      .orderBy("tx_id")
      .orderBy("seq");
  } else {
    query = query.where("seq", ">", cursor.seq).orderBy("seq");
  }
  return query.execute();
}
