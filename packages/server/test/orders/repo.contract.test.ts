/**
 * The order insert writes its values by position (orders/repo.ts `orderValues`): every column must
 * come back as written, on both stores. Each column gets a value no other column has, so a value
 * written into the wrong column shows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertAccount } from "../../src/accounts/repo";
import type { Store } from "../../src/infra/db/store";
import { insertOrder, type OrderRow, orderById } from "../../src/ledger/orders-repo";
import { STORE_BACKENDS } from "../support/backends";
import { openTestStore, type TestStore } from "../support/store";

describe.each(STORE_BACKENDS)("order rows on %s", (backend) => {
  let opened: TestStore;
  let store: Store;
  beforeAll(async () => {
    opened = await openTestStore(backend);
    store = opened.store;
    await insertAccount(store.db, {
      id: "acc_repo",
      email: "repo@example.com",
      password_hash: "scrypt$x",
      tier: "free",
      plan: "standard",
      created_at: "2026-11-25T00:00:00.000Z",
      updated_at: "2026-11-25T00:00:00.000Z",
    });
  });
  afterAll(() => opened.close());

  it("every column round-trips through the positional insert", async () => {
    const row: OrderRow = {
      id: "ord_repo_1",
      account_id: "acc_repo",
      environment: "sandbox",
      market_id: "kalshi:K",
      venue: "kalshi",
      side: "sell",
      outcome: "no",
      type: "limit",
      time_in_force: "GTD",
      price: 410_000,
      max_slippage_ppm: 20_000,
      amount: 7_000_000,
      filled_amount: 3_000_000,
      filled_notional: 1_230_000,
      fees: 40_000,
      locked: 55_000,
      queue_ahead: 9_000_000,
      status: "cancelled",
      cancel_reason: "user",
      client_order_id: "client-1",
      venue_order_id: "venue-1",
      position_id: "pos_repo_1",
      expires_at: "2026-12-01T00:00:00.000Z",
      created_at: "2026-11-25T01:00:00.000Z",
      updated_at: "2026-11-25T02:00:00.000Z",
      cancelled_at: "2026-11-25T03:00:00.000Z",
      requested_amount: 7_500_000,
      amount_note: "rounded down",
      fee_carry: 4_000,
    };
    await insertOrder(store.db, row);
    expect(await orderById(store.db, row.id)).toEqual(row);
  });
});
