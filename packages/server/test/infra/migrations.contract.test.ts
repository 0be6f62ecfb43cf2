/**
 * Migrations that reshape a table holding data: the rows survive, and numbering continues where it
 * was. Each test starts from the schema just before the migration it checks.
 */
import { CompiledQuery, sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { Outbox, START_CURSOR } from "../../src/events/outbox";
import { ManualClock } from "../../src/infra/clock";
import { migrate } from "../../src/infra/db/store";
import { STORE_BACKENDS } from "../support/backends";
import { priceAlert } from "../support/events";
import { openTestStore, type TestStore } from "../support/store";

describe.each(STORE_BACKENDS)("migrations on %s", (backend) => {
  let opened: TestStore | undefined;
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });

  async function indexNames(table: string): Promise<string[]> {
    const { store } = opened!;
    const query =
      store.dialect === "postgres"
        ? CompiledQuery.raw(
            "select indexname as name from pg_indexes where tablename = $1 and schemaname = current_schema()",
            [table],
          )
        : CompiledQuery.raw("select name from sqlite_master where type = 'index' and tbl_name = ?", [table]);
    return (await store.db.executeQuery<{ name: string }>(query)).rows.map((row) => row.name);
  }

  it("012 keeps every event and its seq, continues numbering past the last seq handed out, and drops the unused indexes", async () => {
    opened = await openTestStore(backend, { migrateTo: "011_drop_delivery_leases" });
    const { store } = opened;
    const outbox = new Outbox(store.dialect, new ManualClock(Date.UTC(2026, 10, 25, 12)));
    for (const n of [1, 2, 3])
      await outbox.record(store.db, { type: "price.alert", data: priceAlert(n), accountId: "acc_1" });
    const before = await outbox.readAfter(store.db, START_CURSOR);
    // The newest event gone: its number must still never be handed out again.
    await store.db.deleteFrom("events").where("seq", "=", before[2]!.seq).execute();

    expect((await migrate(store)).applied).toEqual(["012_write_path_indexes"]);

    const after = await outbox.readAfter(store.db, START_CURSOR);
    expect(after.map(({ seq, id, data }) => ({ seq, id, data }))).toEqual(
      before.slice(0, 2).map(({ seq, id, data }) => ({ seq, id, data })),
    );
    const next = await outbox.record(store.db, {
      type: "price.alert",
      data: priceAlert(4),
      accountId: "acc_1",
    });
    expect(next.seq).toBeGreaterThan(before[2]!.seq);
    // Ids are no longer indexed: they are ULIDs, never looked up.
    await sql`insert into events (id, type, account_id, environment, data, created_at)
      values (${before[0]!.id}, 'price.alert', null, null, '{}', '2026-11-25T12:00:00.000Z')`.execute(
      store.db,
    );
    expect((await indexNames("events")).filter((name) => !name.endsWith("_pkey"))).toEqual(
      store.dialect === "postgres" ? ["events_position_idx"] : [],
    );
    expect(await indexNames("fills")).not.toContain("fills_account_idx");
    expect(await indexNames("fills")).toContain("fills_order_cause_idx");
    expect((await migrate(store)).applied).toEqual([]);
  });
});
