import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Webhooks (webhooks/): registrations, one delivery per (webhook, event) fanned out from the outbox,
 * every attempt of a delivery, and the cursor up to which the outbox has been fanned out.
 */
export function webhooks(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("webhooks")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
        .addColumn("environment", "text", (c) => c.notNull())
        .addColumn("url", "text", (c) => c.notNull())
        // JSON array of subscribed event types.
        .addColumn("events", "text", (c) => c.notNull())
        .addColumn("secret_sealed", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("failed_at", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("webhooks_account_idx")
        .on("webhooks")
        .columns(["account_id", "environment"])
        .execute();

      await db.schema
        .createTable("webhook_deliveries")
        .addColumn("seq", dialect === "postgres" ? "bigserial" : "integer", (c) =>
          dialect === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn("id", "text", (c) => c.notNull().unique())
        .addColumn("webhook_id", "text", (c) => c.notNull().references("webhooks.id").onDelete("cascade"))
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("event_type", "text", (c) => c.notNull())
        // The exact JSON body sent on every attempt ({id, type, timestamp, data}).
        .addColumn("body", "text", (c) => c.notNull())
        // pending | success | failed (failed: given up on; see webhooks/dispatcher.ts)
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        // Attempts since the webhook was last (re-)enabled: six failures in a row disable it.
        .addColumn("round_attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("next_attempt_at", "text", (c) => c.notNull())
        .addColumn("lease_owner", "text")
        .addColumn("lease_until", "text")
        .addColumn("last_response_code", "integer")
        .addColumn("last_response_time_ms", "integer")
        .addColumn("last_error", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("completed_at", "text")
        .execute();
      await db.schema
        .createIndex("webhook_deliveries_event_idx")
        .on("webhook_deliveries")
        .columns(["webhook_id", "event_id"])
        .unique()
        .execute();
      // The dispatcher's question: each webhook's oldest pending delivery.
      await db.schema
        .createIndex("webhook_deliveries_pending_idx")
        .on("webhook_deliveries")
        .columns(["status", "webhook_id", "seq"])
        .execute();

      await db.schema
        .createTable("webhook_attempts")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("delivery_id", "text", (c) => c.notNull())
        .addColumn("webhook_id", "text", (c) => c.notNull().references("webhooks.id").onDelete("cascade"))
        .addColumn("event_type", "text", (c) => c.notNull())
        .addColumn("attempt", "integer", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("response_code", "integer")
        .addColumn("response_time_ms", "integer", (c) => c.notNull())
        .addColumn("error", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("webhook_attempts_webhook_idx")
        .on("webhook_attempts")
        .columns(["webhook_id", "created_at"])
        .execute();

      await db.schema
        .createTable("outbox_cursors")
        .addColumn("name", "text", (c) => c.primaryKey())
        .addColumn("tx", "text", (c) => c.notNull())
        .addColumn("seq", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
    },
  };
}
