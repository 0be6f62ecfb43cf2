import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../store";

export function foundation(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("accounts")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("email", "text", (c) => c.notNull().unique())
        .addColumn("password_hash", "text", (c) => c.notNull())
        .addColumn("tier", "text", (c) => c.notNull())
        .addColumn("plan", "text", (c) => c.notNull())
        .addColumn("rate_limit_per_minute", "integer")
        .addColumn("agent_rate_limit_per_minute", "integer")
        .addColumn("ws_connections", "integer")
        .addColumn("markets_per_subscription", "integer")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("sessions")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
        .addColumn("token_hash", "text", (c) => c.notNull().unique())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addColumn("revoked_at", "text")
        .execute();

      await db.schema
        .createTable("api_keys")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("permissions", "text", (c) => c.notNull())
        .addColumn("environment", "text", (c) => c.notNull())
        .addColumn("prefix", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull().unique())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("last_used_at", "text")
        .addColumn("revoked_at", "text")
        .execute();
      await db.schema
        .createIndex("api_keys_account_idx")
        .on("api_keys")
        .columns(["account_id", "id"])
        .execute();

      let events = db.schema.createTable("events");
      if (dialect === "postgres") {
        events = events
          .addColumn("seq", "bigserial", (c) => c.primaryKey())
          .addColumn("tx_id", sql`xid8`, (c) => c.notNull().defaultTo(sql`pg_current_xact_id()`));
      } else {
        events = events
          .addColumn("seq", "integer", (c) => c.primaryKey().autoIncrement())
          .addColumn("tx_id", "integer", (c) => c.notNull().defaultTo(0));
      }
      await events
        .addColumn("id", "text", (c) => c.notNull().unique())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("account_id", "text")
        .addColumn("environment", "text")
        .addColumn("data", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("events_position_idx").on("events").columns(["tx_id", "seq"]).execute();
    },
  };
}
