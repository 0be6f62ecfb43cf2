import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Deliveries were once leased one by one; since 008 a webhook's whole queue is leased instead
 * (`webhooks.lease_*`), and the per-delivery columns were never written again.
 */
export function dropDeliveryLeases(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("webhook_deliveries").dropColumn("lease_owner").execute();
      await db.schema.alterTable("webhook_deliveries").dropColumn("lease_until").execute();
    },
  };
}
