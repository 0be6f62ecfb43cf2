/**
 * Idempotency keys of order placement: a placement claims its key in the transaction that writes
 * the order, with the response a retry replays (orders/service.ts).
 */
import type { Selectable } from "kysely";
import type { Owner } from "../access/owner";
import { Statement } from "../infra/db/prepared";
import type { IdempotencyKeysTable } from "../infra/db/schema";
import type { DbOrTrx } from "../infra/db/store";

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;

const idempotencyKeySql = new Statement<IdempotencyKeyRow>(
  'select * from idempotency_keys where account_id = ? and environment = ? and "key" = ?',
);
const claimIdempotencyKeySql = new Statement(
  'insert into idempotency_keys (account_id, environment, "key", request_hash, status_code, response, ' +
    'created_at, expires_at) values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (account_id, environment, "key") do update ' +
    "set request_hash = excluded.request_hash, status_code = excluded.status_code, response = excluded.response, " +
    "created_at = excluded.created_at, expires_at = excluded.expires_at " +
    "where idempotency_keys.expires_at <= excluded.created_at",
);
const keepIdempotentResponseSql = new Statement(
  'update idempotency_keys set response = ? where account_id = ? and environment = ? and "key" = ?',
);
const deleteIdempotencyKeySql = new Statement(
  'delete from idempotency_keys where account_id = ? and environment = ? and "key" = ?',
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
