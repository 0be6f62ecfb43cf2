import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../store";

/**
 * Indexes sized for the write-heavy paths.
 * - The sandbox's expiry sweep (every second) reads only unexpired-yet GTD orders that are still
 *   open: a partial index holds just those, where the status index made it walk every open order.
 *   The sweep's query repeats the index's condition word for word, as SQLite needs to use it.
 * - On SQLite, events are read by `seq` alone (one writer: seq order is commit order), so the
 *   (tx_id, seq) index that PostgreSQL's outbox reads need was only a cost on every event written.
 */
export function hotPathIndexes(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex("orders_expiry_idx")
        .on("orders")
        .columns(["environment", "expires_at"])
        .where(sql.raw<boolean>(OPEN_GTD_CONDITION))
        .execute();
      if (dialect === "sqlite") await db.schema.dropIndex("events_position_idx").execute();
    },
  };
}

/** The expiry index's condition; `orders/repo.expiredOrders` repeats the same text. */
export const OPEN_GTD_CONDITION = "status in ('open', 'pending') and expires_at is not null";
