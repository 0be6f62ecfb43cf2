import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Price candles (1m and its roll-ups) and the record of what was backfilled from the venues. The
 * primary key (market_id, interval, start) is the index every history query walks.
 */
export function candles(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("candles")
        .addColumn("market_id", "text", (c) => c.notNull())
        .addColumn("interval", "text", (c) => c.notNull())
        .addColumn("start", "text", (c) => c.notNull())
        .addColumn("open", "bigint", (c) => c.notNull())
        .addColumn("high", "bigint", (c) => c.notNull())
        .addColumn("low", "bigint", (c) => c.notNull())
        .addColumn("close", "bigint", (c) => c.notNull())
        .addColumn("volume", "bigint", (c) => c.notNull())
        .addColumn("first_at", "text", (c) => c.notNull())
        .addColumn("last_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("candles_pk", ["market_id", "interval", "start"])
        .execute();

      await db.schema
        .createTable("candle_backfills")
        .addColumn("market_id", "text", (c) => c.notNull())
        .addColumn("interval", "text", (c) => c.notNull())
        .addColumn("covered_from", "text", (c) => c.notNull())
        .addColumn("covered_to", "text", (c) => c.notNull())
        .addColumn("fetched_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("candle_backfills_pk", ["market_id", "interval"])
        .execute();
    },
  };
}
