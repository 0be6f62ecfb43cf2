import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../store";

/**
 * Trading (orders/, portfolio/, sandbox/): orders and their fills, positions per account, market and
 * outcome, cash balances per account and environment, sandbox transfers, and the idempotency keys
 * that make an order placement safe to retry. Money and sizes are integer micro-units.
 */
export function trading(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("orders")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
        .addColumn("environment", "text", (c) => c.notNull())
        .addColumn("market_id", "text", (c) => c.notNull())
        .addColumn("venue", "text", (c) => c.notNull())
        .addColumn("side", "text", (c) => c.notNull())
        .addColumn("outcome", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("time_in_force", "text", (c) => c.notNull())
        .addColumn("price", "bigint", (c) => c.notNull())
        .addColumn("max_slippage_ppm", "bigint")
        .addColumn("amount", "bigint", (c) => c.notNull())
        .addColumn("filled_amount", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("filled_notional", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("fees", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("locked", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("queue_ahead", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("cancel_reason", "text")
        .addColumn("client_order_id", "text")
        .addColumn("venue_order_id", "text")
        .addColumn("position_id", "text", (c) => c.notNull())
        .addColumn("expires_at", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("cancelled_at", "text")
        .execute();
      // Lists are per account and environment, newest first, filtered by status.
      await db.schema
        .createIndex("orders_account_idx")
        .on("orders")
        .columns(["account_id", "environment", "status", "created_at"])
        .execute();
      // The sandbox reloads resting orders and the expiry sweep finds GTD orders by status.
      await db.schema
        .createIndex("orders_status_idx")
        .on("orders")
        .columns(["status", "environment"])
        .execute();

      await db.schema
        .createTable("fills")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("order_id", "text", (c) => c.notNull().references("orders.id").onDelete("cascade"))
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("environment", "text", (c) => c.notNull())
        .addColumn("market_id", "text", (c) => c.notNull())
        .addColumn("outcome", "text", (c) => c.notNull())
        .addColumn("side", "text", (c) => c.notNull())
        .addColumn("price", "bigint", (c) => c.notNull())
        .addColumn("size", "bigint", (c) => c.notNull())
        .addColumn("fee", "bigint", (c) => c.notNull())
        .addColumn("liquidity", "text", (c) => c.notNull())
        // What caused the fill (a real trade or a real book level), as JSON, and a key that makes
        // applying the same cause to the same order twice impossible.
        .addColumn("cause", "text", (c) => c.notNull())
        .addColumn("cause_key", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("fills_order_cause_idx")
        .on("fills")
        .columns(["order_id", "cause_key"])
        .unique()
        .execute();
      await db.schema
        .createIndex("fills_account_idx")
        .on("fills")
        .columns(["account_id", "environment", "created_at"])
        .execute();

      await db.schema
        .createTable("positions")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
        .addColumn("environment", "text", (c) => c.notNull())
        .addColumn("market_id", "text", (c) => c.notNull())
        .addColumn("outcome", "text", (c) => c.notNull())
        .addColumn("size", "bigint", (c) => c.notNull())
        .addColumn("reserved", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("cost_basis", "bigint", (c) => c.notNull())
        .addColumn("realized_pnl", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("fees", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("resolution", "text")
        .addColumn("payout", "bigint")
        .addColumn("redeemable", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("opened_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("closed_at", "text")
        .addColumn("resolved_at", "text")
        .execute();
      await db.schema
        .createIndex("positions_key_idx")
        .on("positions")
        .columns(["account_id", "environment", "market_id", "outcome"])
        .unique()
        .execute();
      await db.schema
        .createIndex("positions_market_idx")
        .on("positions")
        .columns(["market_id", "status"])
        .execute();

      await db.schema
        .createTable("balances")
        .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
        .addColumn("environment", "text", (c) => c.notNull())
        .addColumn("available", "bigint", (c) => c.notNull())
        .addColumn("locked", "bigint", (c) => c.notNull())
        // Running totals, so the ledger identity can be checked at any moment.
        .addColumn("deposits", "bigint", (c) => c.notNull())
        .addColumn("withdrawals", "bigint", (c) => c.notNull())
        .addColumn("fees", "bigint", (c) => c.notNull())
        .addColumn("realized_pnl", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("balances_pk", ["account_id", "environment"])
        .execute();

      await db.schema
        .createTable("transfers")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
        .addColumn("environment", "text", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("amount", "bigint", (c) => c.notNull())
        .addColumn("balance_after", "bigint", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("idempotency_keys")
        .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
        .addColumn("environment", "text", (c) => c.notNull())
        .addColumn("key", "text", (c) => c.notNull())
        .addColumn("request_hash", "text", (c) => c.notNull())
        .addColumn("status_code", "integer", (c) => c.notNull())
        .addColumn("response", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("idempotency_keys_pk", ["account_id", "environment", "key"])
        .execute();
      await db.schema
        .createIndex("idempotency_expiry_idx")
        .on("idempotency_keys")
        .column("expires_at")
        .execute();
    },
  };
}
