/**
 * The hot paths' queries use the indexes made for them (migrations 010, 023). A plan that falls back
 * to a scan still gives right answers, so only the plan can show the regression: the expiry sweep
 * runs every second, and walking every open order each time grew with the book; `GET /v1/fills`
 * sorting an account's every fill to serve a page would grow with its history.
 */
import { CompiledQuery } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/infra/db/store";
import { expiredOrdersQuery, listFillsQuery } from "../../src/ledger/orders-repo";
import { openTestStore, type TestStore } from "../support/store";

describe("hot-path indexes on SQLite", () => {
  let opened: TestStore;
  let store: Store;
  beforeAll(async () => {
    opened = await openTestStore("sqlite");
    store = opened.store;
  });
  afterAll(() => opened.close());

  async function plan(query: CompiledQuery): Promise<string> {
    const result = await store.db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
    );
    return result.rows.map((row) => row.detail).join("\n");
  }

  it("the GTD expiry sweep searches the partial expiry index", async () => {
    const query = expiredOrdersQuery(store.db, "sandbox", "2026-11-24T00:00:00.000Z").compile();
    expect(await plan(query)).toMatch(/SEARCH orders USING INDEX orders_expiry_idx/);
  });

  const owner = { accountId: "acc_1", environment: "sandbox" as const };
  const after = { created_at: "2026-11-24T00:00:00.000Z", id: "fil_01" };

  it("the fills list walks the account's fills in (created_at, id) order on its index, without sorting", async () => {
    const filters = [{}, { marketId: "kalshi:K", since: "2026-11-23T00:00:00.000Z" }];
    for (const filter of filters) {
      for (const cursor of [undefined, after]) {
        const detail = await plan(listFillsQuery(store.db, owner, filter, cursor, 51).compile());
        expect(detail).toMatch(
          /SEARCH fills USING INDEX fills_account_time_idx \(account_id=\? AND environment=\?/,
        );
        expect(detail).not.toMatch(/TEMP B-TREE/);
      }
    }
  });

  it("the fills list of one order reads that order's fills only, through the order's index", async () => {
    const query = listFillsQuery(store.db, owner, { orderId: "ord_1" }, after, 51).compile();
    const detail = await plan(query);
    expect(detail).toMatch(/SEARCH fills USING INDEX fills_order_cause_idx \(order_id=\?\)/);
    expect(detail).toMatch(/SEARCH orders USING INDEX sqlite_autoindex_orders_1 \(id=\?\)/);
  });

  it("events are not indexed by (tx_id, seq) on SQLite, where only seq orders them", async () => {
    const indexes = await store.db.executeQuery<{ name: string }>(
      CompiledQuery.raw("select name from sqlite_master where type = 'index' and tbl_name = 'events'"),
    );
    expect(indexes.rows.map((row) => row.name)).not.toContain("events_position_idx");
  });
});
