/**
 * The hot paths' queries use the indexes made for them (migration 010). A plan that falls back to
 * a scan still gives right answers, so only the plan can show the regression: the expiry sweep runs
 * every second, and walking every open order each time grew with the book.
 */
import { CompiledQuery } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/infra/db/store";
import { expiredOrdersQuery } from "../../src/ledger/orders-repo";
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

  it("events are not indexed by (tx_id, seq) on SQLite, where only seq orders them", async () => {
    const indexes = await store.db.executeQuery<{ name: string }>(
      CompiledQuery.raw("select name from sqlite_master where type = 'index' and tbl_name = 'events'"),
    );
    expect(indexes.rows.map((row) => row.name)).not.toContain("events_position_idx");
  });
});
