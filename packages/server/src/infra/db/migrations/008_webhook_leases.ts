import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * A webhook's queue is leased to one dispatcher at a time (webhooks/dispatcher.ts): one lease per
 * webhook instead of one per delivery, since a webhook's deliveries go out one by one anyway.
 */
export function webhookLeases(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("webhooks").addColumn("lease_owner", "text").execute();
      await db.schema.alterTable("webhooks").addColumn("lease_until", "text").execute();
    },
  };
}
