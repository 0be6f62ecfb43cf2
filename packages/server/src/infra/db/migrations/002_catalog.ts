import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/** The market catalog: venue events and markets as last seen, with their status history. */
export function catalog(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("venue_events")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("venue", "text", (c) => c.notNull())
        .addColumn("venue_event_id", "text", (c) => c.notNull())
        .addColumn("title", "text", (c) => c.notNull())
        .addColumn("category", "text")
        .addColumn("market_ids", "text", (c) => c.notNull())
        .addColumn("close_time", "text")
        .addColumn("url", "text")
        .addColumn("mutually_exclusive", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("markets")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("venue", "text", (c) => c.notNull())
        .addColumn("venue_market_id", "text", (c) => c.notNull())
        .addColumn("event_id", "text")
        .addColumn("title", "text", (c) => c.notNull())
        .addColumn("question", "text", (c) => c.notNull())
        .addColumn("rules", "text")
        .addColumn("settlement_source", "text")
        .addColumn("outcomes", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("resolution", "text")
        .addColumn("open_time", "text")
        .addColumn("close_time", "text")
        .addColumn("tick_size", "bigint", (c) => c.notNull())
        .addColumn("min_size", "bigint", (c) => c.notNull())
        .addColumn("volume", "bigint", (c) => c.notNull())
        .addColumn("volume_24h", "bigint", (c) => c.notNull())
        .addColumn("liquidity", "bigint", (c) => c.notNull())
        .addColumn("url", "text")
        .addColumn("last_price", "bigint")
        .addColumn("best_bid", "bigint")
        .addColumn("best_ask", "bigint")
        .addColumn("neg_risk", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("fee_rate_bps", "integer")
        .addColumn("first_seen_at", "text", (c) => c.notNull())
        .addColumn("status_changed_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("markets_venue_status_idx")
        .on("markets")
        .columns(["venue", "status", "id"])
        .execute();
      await db.schema.createIndex("markets_event_idx").on("markets").column("event_id").execute();
      await db.schema.createIndex("markets_status_idx").on("markets").columns(["status", "id"]).execute();
    },
  };
}
