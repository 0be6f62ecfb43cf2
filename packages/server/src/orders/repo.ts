/**
 * Idempotency keys of order placement: a placement claims its key in the transaction that writes
 * the order, with the response a retry replays (orders/service.ts).
 */
import type { Selectable } from "kysely";
import type { Owner } from "../access/owner";
import { prepare } from "../infra/db/prepared";
import type { IdempotencyKeysTable } from "../infra/db/schema";
import type { DbOrTrx } from "../infra/db/store";

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;

/** A key: whose it is, and the key itself. */
type KeyOf = [accountId: string, environment: string, key: string];

const idempotencyKeySql = prepare((db, [accountId, environment, key]: KeyOf) =>
  db
    .selectFrom("idempotency_keys")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("environment", "=", environment)
    .where("key", "=", key),
);

const claimIdempotencyKeySql = prepare(
  (
    db,
    [accountId, environment, key, requestHash, statusCode, response, createdAt, expiresAt]: [
      ...KeyOf,
      requestHash: string,
      statusCode: number,
      response: string,
      createdAt: string,
      expiresAt: string,
    ],
  ) =>
    db
      .insertInto("idempotency_keys")
      .values({
        account_id: accountId,
        environment,
        key,
        request_hash: requestHash,
        status_code: statusCode,
        response,
        created_at: createdAt,
        expires_at: expiresAt,
      })
      .onConflict((oc) =>
        oc
          .columns(["account_id", "environment", "key"])
          .doUpdateSet((eb) => ({
            request_hash: eb.ref("excluded.request_hash"),
            status_code: eb.ref("excluded.status_code"),
            response: eb.ref("excluded.response"),
            created_at: eb.ref("excluded.created_at"),
            expires_at: eb.ref("excluded.expires_at"),
          }))
          // Only a key whose 24 hours are over is taken over.
          .where((eb) => eb("idempotency_keys.expires_at", "<=", eb.ref("excluded.created_at"))),
      ),
);

const keepIdempotentResponseSql = prepare(
  (db, [response, accountId, environment, key]: [response: string, ...KeyOf]) =>
    db
      .updateTable("idempotency_keys")
      .set({ response })
      .where("account_id", "=", accountId)
      .where("environment", "=", environment)
      .where("key", "=", key),
);

const deleteIdempotencyKeySql = prepare((db, [accountId, environment, key]: KeyOf) =>
  db
    .deleteFrom("idempotency_keys")
    .where("account_id", "=", accountId)
    .where("environment", "=", environment)
    .where("key", "=", key),
);

export async function findIdempotencyKey(
  db: DbOrTrx,
  owner: Owner,
  key: string,
): Promise<IdempotencyKeyRow | undefined> {
  return idempotencyKeySql.first(db, [owner.accountId, owner.environment, key]);
}

/**
 * Claims a key with the response it replays (taking over a key whose 24 hours are over); false
 * when it is claimed already (by an earlier placement or a concurrent twin).
 */
export async function claimIdempotencyKey(
  db: DbOrTrx,
  owner: Owner,
  claim: {
    key: string;
    requestHash: string;
    statusCode: number;
    response: string;
    createdAt: string;
    expiresAt: string;
  },
): Promise<boolean> {
  const inserted = await claimIdempotencyKeySql.changes(db, [
    owner.accountId,
    owner.environment,
    claim.key,
    claim.requestHash,
    claim.statusCode,
    claim.response,
    claim.createdAt,
    claim.expiresAt,
  ]);
  return inserted === 1;
}

export async function keepIdempotentResponse(
  db: DbOrTrx,
  owner: Owner,
  key: string,
  response: string,
): Promise<void> {
  await keepIdempotentResponseSql.run(db, [response, owner.accountId, owner.environment, key]);
}

export async function deleteIdempotencyKey(db: DbOrTrx, owner: Owner, key: string): Promise<void> {
  await deleteIdempotencyKeySql.run(db, [owner.accountId, owner.environment, key]);
}
