import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../store";

/**
 * Revoked API keys by revocation time (issue 25): an instance whose bus is in-process asks every
 * half second for keys revoked since its last look, to close their streams when another process
 * (`crossbook keys revoke`) revoked them. Partial: only revoked keys are in it, so it stays small and
 * the frequent question costs a few index entries.
 */
export function revokedKeysIndex(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex("api_keys_revoked_idx")
        .on("api_keys")
        .column("revoked_at")
        .where(sql.ref("revoked_at"), "is not", null)
        .execute();
    },
  };
}
