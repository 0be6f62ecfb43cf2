import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Venue-held positions (issue 19, part 5): `positions.unknown_cost_size` counts the contracts of a
 * live position that crossbook took over from the account's holding at the venue (bought outside
 * crossbook) when the user sold them through crossbook. Their cost is not known, so `cost_basis`
 * covers only `size − unknown_cost_size`. Micro-contracts, like `size`; 0 for everything else.
 */
export function venuePositions(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("positions")
        .addColumn("unknown_cost_size", "bigint", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
