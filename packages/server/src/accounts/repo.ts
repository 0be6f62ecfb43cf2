/** SQL for accounts and sign-in sessions. */
import type { Insertable, Selectable } from "kysely";
import type { AccountsTable, SessionsTable } from "../infra/db/schema";
import type { DbOrTrx, Dialect } from "../infra/db/store";

export type AccountRow = Selectable<AccountsTable>;
export type SessionRow = Selectable<SessionsTable>;

export async function insertAccount(db: DbOrTrx, row: Insertable<AccountsTable>): Promise<void> {
  await db.insertInto("accounts").values(row).execute();
}

export async function findAccountById(db: DbOrTrx, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function findAccountByEmail(db: DbOrTrx, email: string): Promise<AccountRow | undefined> {
  return db.selectFrom("accounts").selectAll().where("email", "=", email).executeTakeFirst();
}

export async function updateAccount(
  db: DbOrTrx,
  id: string,
  changes: Partial<Omit<AccountRow, "id" | "created_at">>,
): Promise<void> {
  await db.updateTable("accounts").set(changes).where("id", "=", id).execute();
}

export async function insertSession(db: DbOrTrx, row: Insertable<SessionsTable>): Promise<void> {
  await db.insertInto("sessions").values(row).execute();
}

export async function findSessionByHash(db: DbOrTrx, tokenHash: string): Promise<SessionRow | undefined> {
  return db.selectFrom("sessions").selectAll().where("token_hash", "=", tokenHash).executeTakeFirst();
}

export async function revokeSession(db: DbOrTrx, id: string, at: string): Promise<void> {
  await db
    .updateTable("sessions")
    .set({ revoked_at: at })
    .where("id", "=", id)
    .where("revoked_at", "is", null)
    .execute();
}

/** Housekeeping: sessions past their expiry are useless; keep the table small. */
export async function deleteExpiredSessions(db: DbOrTrx, before: string): Promise<number> {
  const result = await db.deleteFrom("sessions").where("expires_at", "<", before).executeTakeFirst();
  return Number(result.numDeletedRows ?? 0);
}

/** The account's sign-ins that still work (not revoked, not expired), newest first. */
export async function listActiveSessions(db: DbOrTrx, accountId: string, now: string): Promise<SessionRow[]> {
  return db
    .selectFrom("sessions")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", now)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
}

/** Ends every live session of the account, but `keep` if given; returns how many ended. */
export async function revokeAccountSessions(
  db: DbOrTrx,
  accountId: string,
  at: string,
  keep?: string,
): Promise<number> {
  const result = await db
    .updateTable("sessions")
    .set({ revoked_at: at })
    .where("account_id", "=", accountId)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", at)
    .$if(keep !== undefined, (qb) => qb.where("id", "!=", keep!))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * The account's tier, locking its row until the transaction ends on PostgreSQL (SQLite serializes
 * writers anyway), so a count-then-insert against the tier's cap cannot race another one.
 */
export async function lockAccountTier(
  trx: DbOrTrx,
  accountId: string,
  dialect: Dialect,
): Promise<{ id: string; tier: string } | undefined> {
  return trx
    .selectFrom("accounts")
    .select(["id", "tier"])
    .where("id", "=", accountId)
    .$if(dialect === "postgres", (qb) => qb.forUpdate())
    .executeTakeFirst();
}
