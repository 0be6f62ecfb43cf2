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

    expect((await migrate(store, { to: "012_write_path_indexes" })).applied).toEqual([
      "012_write_path_indexes",
    ]);

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
    expect((await migrate(store, { to: "012_write_path_indexes" })).applied).toEqual([]);
  });
  it("013 leaves every existing account a non-operator and keeps its sessions", async () => {
    opened = await openTestStore(backend, { migrateTo: "012_write_path_indexes" });
    const { store } = opened;
    const at = "2026-11-27T12:00:00.000Z";
    await sql`insert into accounts (id, email, password_hash, tier, plan, created_at, updated_at)
      values ('acc_old', 'old@example.com', 'scrypt$x', 'pro', 'standard', ${at}, ${at})`.execute(store.db);
    await sql`insert into sessions (id, account_id, token_hash, created_at, expires_at)
      values ('ses_old', 'acc_old', 'hash', ${at}, ${at})`.execute(store.db);

    expect((await migrate(store, { to: "013_operators_and_sessions" })).applied).toEqual([
      "013_operators_and_sessions",
    ]);
    const account = await store.db.selectFrom("accounts").selectAll().executeTakeFirstOrThrow();
    expect(account).toMatchObject({ id: "acc_old", tier: "pro", operator: 0 });
    const session = await store.db.selectFrom("sessions").selectAll().executeTakeFirstOrThrow();
    expect(session).toMatchObject({ id: "ses_old", ip: null, user_agent: null, revoked_at: null });
  });
});
