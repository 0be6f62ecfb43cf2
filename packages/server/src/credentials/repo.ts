/**
 * SQL for linked venue accounts. Every read and write is scoped to the owning account, so another
 * account's id simply matches no row. `sealed_secret` is opaque here: sealing is the service's job.
 */
import type { Insertable, Selectable, Updateable } from "kysely";
import type { VenueCredentialsTable } from "../infra/db/schema";
import type { DbOrTrx } from "../infra/db/store";

export type CredentialRow = Selectable<VenueCredentialsTable>;
export type NewCredentialRow = Insertable<VenueCredentialsTable>;
export type CredentialChanges = Omit<
  Updateable<VenueCredentialsTable>,
  "id" | "account_id" | "venue" | "created_at"
>;

export async function findCredential(
  db: DbOrTrx,
  accountId: string,
  id: string,
): Promise<CredentialRow | undefined> {
  return db
    .selectFrom("venue_credentials")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
}

export async function findByVenue(
  db: DbOrTrx,
  accountId: string,
  venue: string,
): Promise<CredentialRow | undefined> {
  return db
    .selectFrom("venue_credentials")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("venue", "=", venue)
    .executeTakeFirst();
}

/** The account's links, by venue name. */
export async function listCredentials(db: DbOrTrx, accountId: string): Promise<CredentialRow[]> {
  return db
    .selectFrom("venue_credentials")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("venue")
    .execute();
}

/** Inserts unless the account already has a credential for the venue; true when it inserted. */
export async function insertIfAbsent(db: DbOrTrx, row: NewCredentialRow): Promise<boolean> {
  const result = await db
    .insertInto("venue_credentials")
    .values(row)
    .onConflict((oc) => oc.columns(["account_id", "venue"]).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Replaces a credential's fields in place; true when the row still existed. */
export async function updateCredential(
  db: DbOrTrx,
  accountId: string,
  id: string,
  changes: CredentialChanges,
): Promise<boolean> {
  const result = await db
    .updateTable("venue_credentials")
    .set(changes)
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteCredential(db: DbOrTrx, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("venue_credentials")
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
