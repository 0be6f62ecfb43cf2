import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../store";

/**
 * Leases on cluster-wide jobs (issue 24): which instance runs each background job that must run once
 * per cluster (cluster/leases.ts). Expiry is PostgreSQL's own clock (`now()`), so instances' clocks
 * do not matter; `token` grows each time the lease changes hands (a fencing token). The embedded
 * store runs every job in its one process and never reads this table: it exists there too so both
 * stores have one schema.
 */
export function jobLeases(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const time = dialect === "postgres" ? sql`timestamptz` : sql`text`;
      await db.schema
        .createTable("job_leases")
        .addColumn("job", "text", (c) => c.primaryKey())
        .addColumn("holder", "text", (c) => c.notNull())
        .addColumn("token", "bigint", (c) => c.notNull())
        .addColumn("expires_at", time, (c) => c.notNull())
        .addColumn("acquired_at", time, (c) => c.notNull())
        .execute();
    },
  };
}
