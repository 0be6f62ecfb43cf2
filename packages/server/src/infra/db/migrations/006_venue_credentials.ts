import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Linked venue accounts (credentials/): one row per account and venue, its public fields in clear
 * and the secret ones sealed by the SecretBox (AES-256-GCM, bound to the row id).
 */
export function venueCredentials(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("venue_credentials")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
        .addColumn("venue", "text", (c) => c.notNull())
        .addColumn("label", "text")
        .addColumn("address", "text")
        .addColumn("key_id", "text")
        .addColumn("funder", "text")
        .addColumn("signature_type", "integer")
        .addColumn("has_api_credentials", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("sealed_secret", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      // One credential per account and venue; linking again replaces it (credentials/service.ts).
      await db.schema
        .createIndex("venue_credentials_account_venue_idx")
        .on("venue_credentials")
        .columns(["account_id", "venue"])
        .unique()
        .execute();
    },
  };
}
