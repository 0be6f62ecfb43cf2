import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/** Price alerts (alerts/): one row per alert, its arming state and how often it fired. */
export function alerts(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("alerts")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
        .addColumn("environment", "text", (c) => c.notNull())
        .addColumn("market_id", "text", (c) => c.notNull())
        .addColumn("condition", "text", (c) => c.notNull())
        .addColumn("threshold", "bigint", (c) => c.notNull())
        .addColumn("repeat", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("armed", "integer", (c) => c.notNull())
        .addColumn("trigger_count", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("last_triggered_at", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      // Listing is per account and environment; loading the index reads the active ones.
      await db.schema
        .createIndex("alerts_account_idx")
        .on("alerts")
        .columns(["account_id", "environment", "id"])
        .execute();
      await db.schema
        .createIndex("alerts_status_idx")
        .on("alerts")
        .columns(["status", "market_id"])
        .execute();
    },
  };
}
