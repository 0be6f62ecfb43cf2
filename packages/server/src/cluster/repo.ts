/**
 * SQL for job leases (PostgreSQL). Every comparison uses the database's clock (`now()`), so the
 * instances' own clocks never decide who holds a job.
 */
import { sql } from "kysely";
import type { Db } from "../infra/db/store";

const inMs = (ms: number) => sql<Date>`now() + ${ms} * interval '1 millisecond'`;

/**
 * Takes the lease on `job` for `holder` when nobody holds it or its holder let it expire; the new
 * fencing token, or undefined when it is held.
 */
export async function takeLease(
  db: Db,
  job: string,
  holder: string,
  ttlMs: number,
): Promise<number | undefined> {
  const row = await db
    .insertInto("job_leases")
    .values({ job, holder, token: 1, expires_at: inMs(ttlMs), acquired_at: sql`now()` })
    .onConflict((oc) =>
      oc
        .column("job")
        .doUpdateSet({
          holder,
          token: sql`job_leases.token + 1`,
          expires_at: inMs(ttlMs),
          acquired_at: sql`now()`,
        })
        .where("job_leases.expires_at", "<=", sql<Date>`now()`),
    )
    .returning("token")
    .executeTakeFirst();
  return row ? Number(row.token) : undefined;
}

/** Extends a lease still held (not expired) under this token; false when it is no longer ours. */
export async function extendLease(
  db: Db,
  job: string,
  holder: string,
  token: number,
  ttlMs: number,
): Promise<boolean> {
  const row = await db
    .updateTable("job_leases")
    .set({ expires_at: inMs(ttlMs) })
    .where("job", "=", job)
    .where("holder", "=", holder)
    .where("token", "=", token)
    .where("expires_at", ">", sql<Date>`now()`)
    .returning("token")
    .executeTakeFirst();
  return row !== undefined;
}

/** Lets a lease go at once (a clean shutdown), so another instance need not wait for it to expire. */
export async function endLease(db: Db, job: string, holder: string, token: number): Promise<void> {
  await db
    .updateTable("job_leases")
    .set({ expires_at: sql`now()` })
    .where("job", "=", job)
    .where("holder", "=", holder)
    .where("token", "=", token)
    .execute();
}

export interface LeaseRow {
  job: string;
  holder: string;
  token: number;
  /** Not expired now. */
  live: boolean;
}

/** Every lease, and whether it is still in force. */
export async function allLeases(db: Db): Promise<LeaseRow[]> {
  const rows = await db
    .selectFrom("job_leases")
    .select(["job", "holder", "token"])
    .select(sql<boolean>`expires_at > now()`.as("live"))
    .orderBy("job")
    .execute();
  return rows.map((row) => ({ ...row, token: Number(row.token) }));
}
