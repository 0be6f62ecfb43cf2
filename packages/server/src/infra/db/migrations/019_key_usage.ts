import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Request counts per API key and minute (issue 22, the console's usage page): what the auth plugin
 * admitted and what it refused with 429. `minute` is whole minutes since the Unix epoch, the
 * rate limiter's own windows. Rows older than about 48 hours are pruned; the index on `minute`
 * keeps that delete from walking the table.
 */
export function keyUsage(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("key_usage")
        .addColumn("key_id", "text", (c) => c.notNull())
        .addColumn("minute", "integer", (c) => c.notNull())
        .addColumn("requests", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("limited", "integer", (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint("key_usage_pk", ["key_id", "minute"])
        .execute();
      await db.schema.createIndex("key_usage_minute").on("key_usage").column("minute").execute();
    },
  };
}
