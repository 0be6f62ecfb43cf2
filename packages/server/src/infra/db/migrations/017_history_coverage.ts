import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../store";

/**
 * Venue data that history and 24-hour changes need (issue 19, parts 6 and 7):
 * - `markets.price_24h_ago`: the YES price 24 hours before the listing, as the venue states it
 *   (Kalshi `previous_price_dollars`, Polymarket price − `oneDayPriceChange`), micro-units.
 * - `candle_backfill_ranges` replaces `candle_backfills`: every range of venue history fetched, so a
 *   past range can be fetched on its own (one contiguous range per market could not say so), with
 *   the spacing the venue served when coarser than asked. Existing records are carried over.
 */
export function historyCoverage(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("markets").addColumn("price_24h_ago", "bigint").execute();

      await db.schema
        .createTable("candle_backfill_ranges")
        .addColumn("market_id", "text", (c) => c.notNull())
        .addColumn("interval", "text", (c) => c.notNull())
        .addColumn("covered_from", "text", (c) => c.notNull())
        .addColumn("covered_to", "text", (c) => c.notNull())
        .addColumn("resolution_minutes", "integer")
        .addColumn("fetched_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("candle_backfill_ranges_pk", ["market_id", "interval", "covered_from"])
        .execute();
      await sql`insert into candle_backfill_ranges (market_id, "interval", covered_from, covered_to, resolution_minutes, fetched_at)
        select market_id, "interval", covered_from, covered_to, null, fetched_at from candle_backfills`.execute(
        db,
      );
      await db.schema.dropTable("candle_backfills").execute();
    },
  };
}
