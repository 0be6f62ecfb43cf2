/** Webhooks, deliveries, attempts and the fan-out cursor: the only SQL over those tables. */
import { type Selectable, sql } from "kysely";
import type { Owner } from "../access/owner";
import type { EventCursor } from "../events/outbox";
import { everyColumn, pick, prepareList, prepareRows } from "../infra/db/prepared";
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhooksTable } from "../infra/db/schema";
import type { DbOrTrx, Dialect } from "../infra/db/store";

export type WebhookRow = Selectable<WebhooksTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

export async function insertWebhook(db: DbOrTrx, row: WebhookRow): Promise<void> {
  await db.insertInto("webhooks").values(row).execute();
}

export async function findWebhook(db: DbOrTrx, owner: Owner, id: string): Promise<WebhookRow | undefined> {
  return db
    .selectFrom("webhooks")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .executeTakeFirst();
}

export async function webhookById(db: DbOrTrx, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom("webhooks").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function listWebhooks(db: DbOrTrx, owner: Owner): Promise<WebhookRow[]> {
  return db
    .selectFrom("webhooks")
    .selectAll()
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
}

export async function countWebhooks(db: DbOrTrx, accountId: string): Promise<number> {
  const row = await db
    .selectFrom("webhooks")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function updateWebhook(db: DbOrTrx, id: string, changes: Partial<WebhookRow>): Promise<void> {
  await db.updateTable("webhooks").set(changes).where("id", "=", id).execute();
}

export async function deleteWebhook(db: DbOrTrx, id: string): Promise<void> {
  await db.deleteFrom("webhook_attempts").where("webhook_id", "=", id).execute();
  await db.deleteFrom("webhook_deliveries").where("webhook_id", "=", id).execute();
  await db.deleteFrom("webhooks").where("id", "=", id).execute();
}

/** Every webhook that may receive events (active or failed: a failed one keeps its queue). */
export async function allWebhooks(db: DbOrTrx): Promise<WebhookRow[]> {
  return db.selectFrom("webhooks").selectAll().execute();
}

// --- fan-out cursor ------------------------------------------------------------------------------

/** Reads (and on PostgreSQL locks, for the caller's transaction) a consumer's cursor. */
export async function lockCursor(
  db: DbOrTrx,
  dialect: Dialect,
  name: string,
  nowIso: string,
): Promise<EventCursor> {
  await db
    .insertInto("outbox_cursors")
    .values({ name, tx: "0", seq: 0, updated_at: nowIso })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  let query = db.selectFrom("outbox_cursors").select(["tx", "seq"]).where("name", "=", name);
  if (dialect === "postgres") query = query.forUpdate();
  const row = await query.executeTakeFirstOrThrow();
  return { tx: row.tx, seq: Number(row.seq) };
}

export async function saveCursor(
  db: DbOrTrx,
  name: string,
  cursor: EventCursor,
  nowIso: string,
): Promise<void> {
  await db
    .updateTable("outbox_cursors")
    .set({ tx: cursor.tx, seq: cursor.seq, updated_at: nowIso })
    .where("name", "=", name)
    .execute();
}

// --- bulk statements -----------------------------------------------------------------------------
//
// The dispatcher's per-delivery statements, many rows at a time: prepared statements
// (infra/db/prepared.ts), compiled once per row count with every run's value bound as a parameter
// (constants stay literals), so a run neither builds nor compiles a query and SQLite reuses its
// prepared statement.

/** Rows per statement: keeps the bound parameters far below SQLite's and PostgreSQL's limits. */
const BULK_ROWS = 500;
/** Compiled statements kept per bulk statement: one for every row count a caller may use. */
const BULK_KEPT = { maxKept: BULK_ROWS };

const insertDeliveriesSql = prepareRows(
  (db, rows: readonly NewDelivery[], [nowIso]: [nowIso: string]) =>
    db
      .insertInto("webhook_deliveries")
      .values(
        rows.map((row) => ({
          id: row.id,
          webhook_id: row.webhook_id,
          event_id: row.event_id,
          event_type: row.event_type,
          body: row.body,
          status: sql.lit("pending"),
          attempts: sql.lit(0),
          round_attempts: sql.lit(0),
          next_attempt_at: nowIso,
          created_at: nowIso,
          updated_at: nowIso,
        })),
      )
      .onConflict((oc) => oc.columns(["webhook_id", "event_id"]).doNothing()),
  BULK_KEPT,
);

const markDeliveredSql = prepareList(
  (db, seqs: readonly number[], [atIso]: [atIso: string]) =>
    db
      .updateTable("webhook_deliveries")
      .set((eb) => ({
        status: sql.lit("success"),
        attempts: eb("attempts", "+", sql.lit(1)),
        round_attempts: eb("round_attempts", "+", sql.lit(1)),
        last_error: sql.lit(null),
        completed_at: atIso,
        updated_at: atIso,
      }))
      // By key alone: with a status condition too, SQLite may walk the pending index instead.
      .where("seq", "in", seqs),
  BULK_KEPT,
);

/** Every column of `webhook_attempts` (the type check below fails if one is missing). */
const ATTEMPT_COLUMNS = [
  "id",
  "delivery_id",
  "webhook_id",
  "event_type",
  "attempt",
  "status",
  "response_code",
  "response_time_ms",
  "error",
  "created_at",
  "request_headers",
  "request_body",
] as const satisfies ReadonlyArray<keyof AttemptRow>;
everyColumn<AttemptRow, typeof ATTEMPT_COLUMNS>(true);

const insertAttemptsSql = prepareRows(
  (db, rows: readonly AttemptRow[]) =>
    db.insertInto("webhook_attempts").values(rows.map((row) => pick(row, ATTEMPT_COLUMNS))),
  BULK_KEPT,
);

// --- deliveries ----------------------------------------------------------------------------------

/** A delivery made by the fan-out: pending, never attempted, due at once. */
export interface NewDelivery {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  /** The exact JSON body sent on every attempt. */
  body: string;
}

/** Inserts new pending deliveries (in order: `seq` follows), skipping any (webhook, event) already there. */
export async function insertDeliveries(
  db: DbOrTrx,
  rows: readonly NewDelivery[],
  nowIso: string,
): Promise<void> {
  await insertDeliveriesSql.runInChunks(db, rows, [nowIso], { maxRows: BULK_ROWS });
}

/** A due head delivery, with what the dispatcher needs to decide whether to start it now. */
export interface DueDelivery {
  id: string;
  webhook_id: string;
  account_id: string;
  url: string;
}

/**
 * Deliveries ready for an attempt: for each active webhook, only its OLDEST pending delivery (so a
 * webhook receives events in the order they were recorded), when due and not leased. Walks the
 * webhooks (few) and seeks each one's head through the pending index, never the whole backlog.
 * `exclude` and `excludeAccounts` leave out webhooks the dispatcher will not start now (busy, held
 * by a breaker, or of an account at its concurrency cap), so they do not crowd out the others.
 */
export async function dueDeliveries(
  db: DbOrTrx,
  nowIso: string,
  exclude: readonly string[],
  limit: number,
  excludeAccounts: readonly string[] = [],
): Promise<DueDelivery[]> {
  let query = db
    .selectFrom("webhooks as w")
    .innerJoin("webhook_deliveries as d", (join) =>
      join.on(
        "d.seq",
        "=",
        sql<number>`(select min(d2.seq) from webhook_deliveries d2 where d2.status = 'pending' and d2.webhook_id = w.id)`,
      ),
    )
    .select(["d.id", "d.webhook_id", "w.account_id", "w.url"])
    .where("w.status", "=", "active")
    .where("d.next_attempt_at", "<=", nowIso)
    .where((eb) => eb.or([eb("w.lease_until", "is", null), eb("w.lease_until", "<", nowIso)]));
  if (exclude.length > 0) query = query.where("w.id", "not in", exclude);
  if (excludeAccounts.length > 0) query = query.where("w.account_id", "not in", excludeAccounts);
  return query.orderBy("d.next_attempt_at").limit(limit).execute();
}

/** What the dispatcher needs of a queued delivery to send it and record the attempt. */
export type QueuedDelivery = Pick<
  DeliveryRow,
  "seq" | "id" | "webhook_id" | "event_type" | "body" | "attempts" | "round_attempts" | "next_attempt_at"
>;

/** A webhook's oldest pending deliveries (after `afterSeq`, when given), in order. */
export async function pendingHead(
  db: DbOrTrx,
  webhookId: string,
  limit: number,
  afterSeq?: number,
): Promise<QueuedDelivery[]> {
  let query = db
    .selectFrom("webhook_deliveries")
    .select([
      "seq",
      "id",
      "webhook_id",
      "event_type",
      "body",
      "attempts",
      "round_attempts",
      "next_attempt_at",
    ])
    .where("status", "=", "pending")
    .where("webhook_id", "=", webhookId);
  if (afterSeq !== undefined) query = query.where("seq", ">", afterSeq);
  return query.orderBy("seq").limit(limit).execute();
}

/**
 * Marks deliveries of a webhook whose lease we hold as delivered (attempts recorded alongside). By
 * `seq`, the primary key (SQLite's rowid): each row is found without a secondary-index search.
 */
export async function markDelivered(db: DbOrTrx, seqs: readonly number[], atIso: string): Promise<void> {
  await markDeliveredSql.runInChunks(db, seqs, [atIso], { maxRows: BULK_ROWS });
}

export async function insertAttempts(db: DbOrTrx, rows: readonly AttemptRow[]): Promise<void> {
  await insertAttemptsSql.runInChunks(db, rows, [], { maxRows: BULK_ROWS });
}

export async function insertAttempt(db: DbOrTrx, row: AttemptRow): Promise<void> {
  await db.insertInto("webhook_attempts").values(row).execute();
}

export async function recentAttempts(db: DbOrTrx, webhookId: string, limit: number): Promise<AttemptRow[]> {
  return db
    .selectFrom("webhook_attempts")
    .selectAll()
    .where("webhook_id", "=", webhookId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
}

/** Every attempt of some deliveries of a webhook, newest first. */
export async function attemptsOfDeliveries(
  db: DbOrTrx,
  webhookId: string,
  deliveryIds: readonly string[],
): Promise<AttemptRow[]> {
  return db
    .selectFrom("webhook_attempts")
    .selectAll()
    .where("webhook_id", "=", webhookId)
    .where("delivery_id", "in", deliveryIds)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
}

/** What the console's delivery log shows of a delivery (its body is what every attempt sent). */
export type LoggedDelivery = Pick<
  DeliveryRow,
  | "id"
  | "event_type"
  | "body"
  | "status"
  | "attempts"
  | "round_attempts"
  | "next_attempt_at"
  | "created_at"
  | "completed_at"
>;

const LOGGED_DELIVERY_COLUMNS = [
  "id",
  "event_type",
  "body",
  "status",
  "attempts",
  "round_attempts",
  "next_attempt_at",
  "created_at",
  "completed_at",
] as const;

/** A webhook's deliveries by id (those of its recent attempts). */
export async function deliveriesByIds(
  db: DbOrTrx,
  webhookId: string,
  ids: readonly string[],
): Promise<LoggedDelivery[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom("webhook_deliveries")
    .select(LOGGED_DELIVERY_COLUMNS)
    .where("webhook_id", "=", webhookId)
    .where("id", "in", ids)
    .execute();
}

/**
 * A webhook's pending deliveries that have failed at least once: waiting for their next retry, or
 * given up on while the webhook is failed. In practice at most one, the head of its queue (a
 * failure holds back the deliveries behind it).
 */
export async function failedPendingDeliveries(db: DbOrTrx, webhookId: string): Promise<LoggedDelivery[]> {
  return db
    .selectFrom("webhook_deliveries")
    .select(LOGGED_DELIVERY_COLUMNS)
    .where("status", "=", "pending")
    .where("webhook_id", "=", webhookId)
    .where("attempts", ">", 0)
    .orderBy("seq")
    .limit(20)
    .execute();
}

/** How many deliveries of a webhook are pending (queued, waiting for a retry, or held). */
export async function countPending(db: DbOrTrx, webhookId: string): Promise<number> {
  const row = await db
    .selectFrom("webhook_deliveries")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("status", "=", "pending")
    .where("webhook_id", "=", webhookId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * "Retry now": a failed delivery still pending becomes due at once. Only `next_attempt_at` changes,
 * so a dispatcher sending it right now (it holds the webhook's lease) records its outcome over this
 * as usual; the dispatchers only claim it through the webhook's lease, so it is sent once. False
 * when the delivery is not pending or never failed.
 */
export async function retryDeliveryNow(
  db: DbOrTrx,
  webhookId: string,
  deliveryId: string,
  nowIso: string,
): Promise<boolean> {
  const result = await db
    .updateTable("webhook_deliveries")
    .set({ next_attempt_at: nowIso, updated_at: nowIso })
    .where("id", "=", deliveryId)
    .where("webhook_id", "=", webhookId)
    .where("status", "=", "pending")
    .where("attempts", ">", 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Pending deliveries of a re-enabled webhook start a fresh round of six attempts, now. */
export async function resumeDeliveries(db: DbOrTrx, webhookId: string, nowIso: string): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set({ round_attempts: 0, next_attempt_at: nowIso, updated_at: nowIso })
    .where("webhook_id", "=", webhookId)
    .where("status", "=", "pending")
    .execute();
}

/**
 * Takes (or extends) the lease on a webhook's queue: only one dispatcher sends a webhook's
 * deliveries at a time. False when another holds it or the webhook is not active.
 */
export async function leaseWebhook(
  db: DbOrTrx,
  id: string,
  owner: string,
  nowIso: string,
  untilIso: string,
): Promise<boolean> {
  const result = await db
    .updateTable("webhooks")
    .set({ lease_owner: owner, lease_until: untilIso })
    .where("id", "=", id)
    .where("status", "=", "active")
    .where((eb) =>
      eb.or([eb("lease_until", "is", null), eb("lease_until", "<", nowIso), eb("lease_owner", "=", owner)]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Extends a lease we hold and that has not lapsed (so no other dispatcher can have taken the queue
 * meanwhile). False otherwise: the caller then claims afresh with `leaseWebhook`.
 */
export async function renewLease(
  db: DbOrTrx,
  id: string,
  owner: string,
  nowIso: string,
  untilIso: string,
): Promise<boolean> {
  const result = await db
    .updateTable("webhooks")
    .set({ lease_until: untilIso })
    .where("id", "=", id)
    .where("status", "=", "active")
    .where("lease_owner", "=", owner)
    .where("lease_until", ">=", nowIso)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function releaseWebhook(db: DbOrTrx, id: string, owner: string): Promise<void> {
  await db
    .updateTable("webhooks")
    .set({ lease_owner: null, lease_until: null })
    .where("id", "=", id)
    .where("lease_owner", "=", owner)
    .execute();
}

/** Records a failed attempt's consequences on its delivery (still pending). */
export async function recordFailure(db: DbOrTrx, id: string, changes: Partial<DeliveryRow>): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set(changes)
    .where("id", "=", id)
    .where("status", "=", "pending")
    .execute();
}

/** Six failures in a row: an active webhook is disabled (`failed`) until its owner re-enables it. */
export async function markWebhookFailed(db: DbOrTrx, id: string, atIso: string): Promise<void> {
  await db
    .updateTable("webhooks")
    .set({ status: "failed", failed_at: atIso, updated_at: atIso })
    .where("id", "=", id)
    .where("status", "=", "active")
    .execute();
}
