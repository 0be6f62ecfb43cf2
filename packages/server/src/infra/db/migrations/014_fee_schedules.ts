import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../store";

/**
 * Fee schedules (issue 19, part 1). `markets.fee_rate_bps` held Polymarket's `takerBaseFee`, a cap
 * (1000 on every fee-enabled market), and was charged as a rate. A market's schedule is now
 * C × fee_rate × (P(1 − P))^fee_exponent for takers (fee_maker_rate for makers), rounded by
 * `fee_model`'s rules (`polymarket` | `kalshi`), with Polymarket's cap in `fee_cap_bps` and Kalshi's
 * series `fee_type` / `fee_multiplier` (event override applied). All null: not known yet (the next
 * catalog sync fills it in; until then crossbook charges the venue's default, see @crossbook/fees).
 *
 * Existing rows: a Polymarket market stored with 0 bps had fees off and keeps a zero schedule; the
 * others are left unknown until the sync. `orders.fee_carry`: Kalshi's per-order fee accumulator
 * (rounding overpaid and not yet rebated, micro-USD).
 */
export function feeSchedules(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const add = (column: string, type: "text" | "double precision" | "integer") =>
        db.schema.alterTable("markets").addColumn(column, type).execute();
      await add("fee_model", "text");
      await add("fee_rate", "double precision");
      await add("fee_exponent", "double precision");
      await add("fee_maker_rate", "double precision");
      await add("fee_cap_bps", "integer");
      await add("fee_type", "text");
      await add("fee_multiplier", "double precision");
      await sql`update markets set fee_model = 'polymarket', fee_rate = 0, fee_exponent = 1, fee_maker_rate = 0
        where venue = 'polymarket' and fee_rate_bps = 0`.execute(db);
      await db.schema.alterTable("markets").dropColumn("fee_rate_bps").execute();
      await db.schema
        .alterTable("orders")
        .addColumn("fee_carry", "bigint", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
