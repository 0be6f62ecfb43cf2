import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Venue precision (issue 19, Polymarket FAK/FOK): when a venue's amount precision makes crossbook
 * place fewer contracts than asked, the order keeps the amount it was placed for in `amount`, the
 * amount asked for in `requested_amount` and why in `amount_note`; both are null otherwise.
 */
export function orderAmountNote(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("orders").addColumn("requested_amount", "bigint").execute();
      await db.schema.alterTable("orders").addColumn("amount_note", "text").execute();
    },
  };
}
