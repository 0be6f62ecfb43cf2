import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Matched markets (matching/): one row per pair of markets the matcher compared or an admin made,
 * stored in canonical order (market_a on the venue first in VENUE_IDS; same venue: lower id), with
 * its curation state and the cross-venue event it belongs to.
 */
export function matches(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("matches")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("market_a", "text", (c) => c.notNull())
        .addColumn("market_b", "text", (c) => c.notNull())
        .addColumn("venue_a", "text", (c) => c.notNull())
        .addColumn("venue_b", "text", (c) => c.notNull())
        // The relation in force (the admin's when curated) and the matcher's latest opinion.
        .addColumn("relation", "text", (c) => c.notNull())
        .addColumn("polarity", "text", (c) => c.notNull())
        .addColumn("matcher_relation", "text")
        .addColumn("matcher_polarity", "text")
        // PostgreSQL's `real` is 4 bytes (0.93 would read back as 0.9300000071525574).
        .addColumn("confidence", dialect === "postgres" ? "double precision" : "real", (c) => c.notNull())
        // JSON arrays of sentences.
        .addColumn("reasons", "text", (c) => c.notNull())
        .addColumn("blockers", "text", (c) => c.notNull())
        // candidate | verified | rejected
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("status_reason", "text")
        .addColumn("status_note", "text")
        // matcher | admin | null (an undecided candidate)
        .addColumn("decided_by", "text")
        .addColumn("decided_at", "text")
        .addColumn("curated", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("event_id", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addUniqueConstraint("matches_pair_key", ["market_a", "market_b"])
        .execute();
      // Listing by status and confidence; a market's pairs from either side; an event's pairs.
      await db.schema
        .createIndex("matches_status_idx")
        .on("matches")
        .columns(["status", "confidence"])
        .execute();
      await db.schema.createIndex("matches_confidence_idx").on("matches").columns(["confidence"]).execute();
      await db.schema.createIndex("matches_market_b_idx").on("matches").columns(["market_b"]).execute();
      await db.schema.createIndex("matches_event_idx").on("matches").columns(["event_id"]).execute();
      await db.schema
        .createIndex("matches_venues_idx")
        .on("matches")
        .columns(["venue_a", "venue_b"])
        .execute();
    },
  };
}
