import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * What each webhook attempt sent (issue 22, the console's delivery log): the request headers as
 * signed at send time (a JSON object; the signatures change with every attempt's timestamp, never
 * the secret itself), and the body for attempts without a delivery row (`webhook.test`); a queued
 * delivery's body is the same on every attempt and stays in `webhook_deliveries.body`. Both are null
 * for attempts recorded before this migration.
 */
export function webhookAttemptDetail(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("webhook_attempts").addColumn("request_headers", "text").execute();
      await db.schema.alterTable("webhook_attempts").addColumn("request_body", "text").execute();
    },
  };
}
