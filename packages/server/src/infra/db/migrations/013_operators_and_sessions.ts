import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Trust and hardening (issue 18):
 * - `accounts.operator`: only operators curate the global match data; set by the CLI alone.
 * - `matches.decided_by_account` / `decided_by_key`: who made a person's decision, for the audit.
 * - `sessions.ip` / `user_agent`: what a user sees when listing their sign-ins.
 */
export function operatorsAndSessions(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("accounts")
        .addColumn("operator", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable("matches").addColumn("decided_by_account", "text").execute();
      await db.schema.alterTable("matches").addColumn("decided_by_key", "text").execute();
      await db.schema.alterTable("sessions").addColumn("ip", "text").execute();
      await db.schema.alterTable("sessions").addColumn("user_agent", "text").execute();
    },
  };
}
