/** SQL for API keys. Only hashes of secrets are ever written. */
import type { Insertable, Selectable } from "kysely";
import type { ApiKeysTable } from "../infra/db/schema";
import type { DbOrTrx } from "../infra/db/store";

export type ApiKeyRow = Selectable<ApiKeysTable>;

export async function insertKey(db: DbOrTrx, row: Insertable<ApiKeysTable>): Promise<void> {
  await db.insertInto("api_keys").values(row).execute();
}

export async function findKeyByHash(db: DbOrTrx, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom("api_keys").selectAll().where("key_hash", "=", keyHash).executeTakeFirst();
}

export async function findKeyForAccount(
  db: DbOrTrx,
  accountId: string,
  id: string,
): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom("api_keys")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

export async function findKeyById(db: DbOrTrx, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function listKeys(db: DbOrTrx, accountId: string): Promise<ApiKeyRow[]> {
  return db.selectFrom("api_keys").selectAll().where("account_id", "=", accountId).orderBy("id").execute();
}

export async function countActiveKeys(db: DbOrTrx, accountId: string): Promise<number> {
  const row = await db
    .selectFrom("api_keys")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .where("revoked_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function renameKey(db: DbOrTrx, accountId: string, id: string, name: string): Promise<boolean> {
  const result = await db
    .updateTable("api_keys")
    .set({ name })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function revokeKey(db: DbOrTrx, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable("api_keys")
    .set({ revoked_at: at })
    .where("id", "=", id)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function touchKeys(db: DbOrTrx, usage: ReadonlyMap<string, string>): Promise<void> {
  for (const [id, at] of usage) {
    await db.updateTable("api_keys").set({ last_used_at: at }).where("id", "=", id).execute();
  }
}

export async function revokedAmong(db: DbOrTrx, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom("api_keys")
    .select("id")
    .where("id", "in", [...ids])
    .where("revoked_at", "is not", null)
    .execute();
  return rows.map((r) => r.id);
}

/** Keys revoked at or after `since` (ISO time), oldest first: the query `revokedSince` runs. */
export function revokedSinceQuery(db: DbOrTrx, since: string, limit: number) {
  return db
    .selectFrom("api_keys")
    .select(["id", "key_hash", "revoked_at"])
    .where("revoked_at", "is not", null)
    .where("revoked_at", ">=", since)
    .orderBy("revoked_at")
    .limit(limit);
}

/**
 * Keys revoked at or after `since`: how an instance without a shared bus learns of revocations
 * another process (the CLI) wrote. The partial index on `revoked_at` (migration 024) holds revoked
 * keys only, so this reads a few index entries, not the table.
 */
export async function revokedSince(
  db: DbOrTrx,
  since: string,
  limit: number,
): Promise<Array<{ id: string; key_hash: string; revoked_at: string }>> {
  const rows = await revokedSinceQuery(db, since, limit).execute();
  return rows as Array<{ id: string; key_hash: string; revoked_at: string }>;
}
