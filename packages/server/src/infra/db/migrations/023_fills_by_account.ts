import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Fills by account (issue 25): `GET /v1/fills` reads one account's fills in an environment in
 * (created_at, id) order after a cursor. 012 dropped the older (account, environment, time) index
 * because nothing read it; this one has a reader, and ends in `id` so the page's tiebreak comes
 * from the index too. A `market_id` filter walks this index and filters; an `order_id` filter goes
 * through `fills_order_cause_idx` instead (ledger/orders-repo.ts `listFills`).
 */
export function fillsByAccount(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex("fills_account_time_idx")
        .on("fills")
        .columns(["account_id", "environment", "created_at", "id"])
        .execute();
    },
  };
}
