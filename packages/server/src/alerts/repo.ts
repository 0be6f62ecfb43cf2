/**
 * SQL for price alerts. Firing and re-arming are conditional updates fenced by `trigger_count`, so
 * several instances racing on the same crossing change the row (and record the event) once.
 */
import type { Insertable, Selectable } from "kysely";
import type { Owner } from "../access/owner";
import { type PageRequest, pageWithTotal } from "../infra/db/pages";
import type { AlertsTable } from "../infra/db/schema";
import type { DbOrTrx } from "../infra/db/store";

export type AlertRow = Selectable<AlertsTable>;

export interface AlertFilter {
  marketId?: string;
  status?: string;
}

export async function insertAlert(db: DbOrTrx, row: Insertable<AlertsTable>): Promise<void> {
  await db.insertInto("alerts").values(row).execute();
}

export async function findAlert(db: DbOrTrx, owner: Owner, id: string): Promise<AlertRow | undefined> {
  return db
    .selectFrom("alerts")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .executeTakeFirst();
}

export async function findAlertById(db: DbOrTrx, id: string): Promise<AlertRow | undefined> {
  return db.selectFrom("alerts").selectAll().where("id", "=", id).executeTakeFirst();
}

function owned(db: DbOrTrx, owner: Owner, filter: AlertFilter) {
  let query = db
    .selectFrom("alerts")
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment);
  if (filter.marketId) query = query.where("market_id", "=", filter.marketId);
  if (filter.status) query = query.where("status", "=", filter.status);
  return query;
}

/** Newest first. */
export async function listAlerts(
  db: DbOrTrx,
  owner: Owner,
  filter: AlertFilter,
  page: PageRequest,
): Promise<{ rows: AlertRow[]; total: number }> {
  return pageWithTotal(owned(db, owner, filter), (q) => q.selectAll().orderBy("id", "desc"), page);
}

export async function deleteAlert(db: DbOrTrx, owner: Owner, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("alerts")
    .where("id", "=", id)
    .where("account_id", "=", owner.accountId)
    .where("environment", "=", owner.environment)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** An account's alerts that can still fire, in both environments (what the tier's cap counts). */
export async function countActiveAlerts(db: DbOrTrx, accountId: string): Promise<number> {
  const row = await db
    .selectFrom("alerts")
    .select((eb) => eb.fn.countAll<string | number>().as("n"))
    .where("account_id", "=", accountId)
    .where("status", "=", "active")
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Every alert that can still fire, for the in-memory index. */
export async function activeAlerts(db: DbOrTrx): Promise<AlertRow[]> {
  return db.selectFrom("alerts").selectAll().where("status", "=", "active").execute();
}

/**
 * Fires an armed alert if nobody fired it since this process last knew its count; true when this
 * call did. One-shot alerts become `triggered`.
 */
export async function markFired(
  db: DbOrTrx,
  id: string,
  expectedCount: number,
  change: { repeat: boolean; at: string },
): Promise<boolean> {
  const result = await db
    .updateTable("alerts")
    .set({
      armed: 0,
      status: change.repeat ? "active" : "triggered",
      trigger_count: expectedCount + 1,
      last_triggered_at: change.at,
      updated_at: change.at,
    })
    .where("id", "=", id)
    .where("status", "=", "active")
    .where("armed", "=", 1)
    .where("trigger_count", "=", expectedCount)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Re-arms a waiting alert, unless it fired again meanwhile; true when the row changed. */
export async function markRearmed(
  db: DbOrTrx,
  id: string,
  expectedCount: number,
  at: string,
): Promise<boolean> {
  const result = await db
    .updateTable("alerts")
    .set({ armed: 1, updated_at: at })
    .where("id", "=", id)
    .where("status", "=", "active")
    .where("armed", "=", 0)
    .where("trigger_count", "=", expectedCount)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What a `price.alert` event says about the market: its event's title (else its own) and venue. */
export async function marketContext(
  db: DbOrTrx,
  marketId: string,
): Promise<{ title: string; venue: string } | undefined> {
  const row = await db
    .selectFrom("markets")
    .leftJoin("venue_events", "venue_events.id", "markets.event_id")
    .select(["markets.title as market_title", "markets.venue", "venue_events.title as event_title"])
    .where("markets.id", "=", marketId)
    .executeTakeFirst();
  return row ? { title: row.event_title ?? row.market_title, venue: row.venue } : undefined;
}
