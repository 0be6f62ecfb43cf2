import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Account events by account (issue 23): `GET /v1/account/events` reads one account's events in an
 * environment after a position, in the outbox's order (transaction id, then sequence).
 */
export function accountEvents(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex("events_account_idx")
        .on("events")
        .columns(["account_id", "environment", "tx_id", "seq"])
        .execute();
    },
  };
}
