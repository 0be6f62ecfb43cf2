import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../store";

/**
 * Match caveats (issue 20): differences in edge clauses only (how a tie, cancellation or
 * postponement settles, the close instant, a source named on one side only), kept beside the
 * relation instead of turning it into `overlap`. A JSON array of sentences; `[]` for older rows until
 * the matcher sees their pair again.
 */
export function matchCaveats(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("matches")
        .addColumn("caveats", "text", (c) => c.notNull().defaultTo(sql`'[]'`))
        .execute();
    },
  };
}
