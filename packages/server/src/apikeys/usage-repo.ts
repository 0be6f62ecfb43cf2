/** SQL for the request counts per key and minute (usage.ts). Runs on SQLite and PostgreSQL alike. */
import { sql } from "kysely";
import type { KeyUsageTable } from "../infra/db/schema";
import type { DbOrTrx } from "../infra/db/store";

export type UsageRow = KeyUsageTable;

/** Four parameters a row: 250 rows stay far below either store's limit on bound parameters. */
const CHUNK = 250;

/**
 * Adds the counts to what is stored (a row per key and minute, created on first use). Several
 * instances may add to the same minute. Rows must be unique by (key_id, minute) within one call:
 * PostgreSQL refuses to update one row twice in a statement.
 */
export async function addUsage(db: DbOrTrx, rows: readonly UsageRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await db
      .insertInto("key_usage")
      .values(rows.slice(i, i + CHUNK))
      .onConflict((oc) =>
        oc.columns(["key_id", "minute"]).doUpdateSet((eb) => ({
          requests: eb("key_usage.requests", "+", eb.ref("excluded.requests")),
          limited: eb("key_usage.limited", "+", eb.ref("excluded.limited")),
        })),
      )
      .execute();
  }
}

/** Deletes the counts of minutes before `minute`. */
export async function pruneUsage(db: DbOrTrx, beforeMinute: number): Promise<void> {
  await db.deleteFrom("key_usage").where("minute", "<", beforeMinute).execute();
}

export interface UsageSlotRow {
  key_id: string;
  /** floor(minute / slotMinutes) */
  slot: number;
  requests: number;
  limited: number;
  /** The most requests (admitted and refused) in one minute of the slot. */
  peak: number;
  /** Minutes of the slot in which at least one request was refused. */
  limited_minutes: number;
}

/** The stored counts of these keys from `fromMinute` on, summed per slot of `slotMinutes`. */
export async function usageSlots(
  db: DbOrTrx,
  keyIds: readonly string[],
  fromMinute: number,
  slotMinutes: number,
): Promise<UsageSlotRow[]> {
  if (keyIds.length === 0) return [];
  // Integer division on both stores (minutes are positive, so it is floor).
  const slot = sql<number>`minute / ${sql.lit(slotMinutes)}`;
  const rows = await db
    .selectFrom("key_usage")
    .select([
      "key_id",
      slot.as("slot"),
      sql<number>`sum(requests)`.as("requests"),
      sql<number>`sum(limited)`.as("limited"),
      sql<number>`max(requests + limited)`.as("peak"),
      sql<number>`sum(case when limited > 0 then 1 else 0 end)`.as("limited_minutes"),
    ])
    .where("key_id", "in", [...keyIds])
    .where("minute", ">=", fromMinute)
    .groupBy(["key_id", slot])
    .execute();
  // PostgreSQL's sum() is numeric/bigint: make every figure a number whatever the driver returned.
  return rows.map((r) => ({
    key_id: r.key_id,
    slot: Number(r.slot),
    requests: Number(r.requests),
    limited: Number(r.limited),
    peak: Number(r.peak),
    limited_minutes: Number(r.limited_minutes),
  }));
}

/** The stored rows of these keys from `fromMinute` on, one per key and minute. */
export async function usageMinutes(
  db: DbOrTrx,
  keyIds: readonly string[],
  fromMinute: number,
): Promise<UsageRow[]> {
  if (keyIds.length === 0) return [];
  const rows = await db
    .selectFrom("key_usage")
    .selectAll()
    .where("key_id", "in", [...keyIds])
    .where("minute", ">=", fromMinute)
    .execute();
  return rows.map((r) => ({ ...r, requests: Number(r.requests), limited: Number(r.limited) }));
}
