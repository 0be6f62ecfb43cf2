/**
 * Fixed-SQL statements (infra/db/prepared.ts) on both stores: a multi-row statement run in chunks
 * writes every row once, in order, with values that precede the rows bound first; inside a
 * transaction opened with `inTransaction` (SQLite's direct path) as well as outside one.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inTransaction, MultiRowStatement } from "../../src/infra/db/prepared";
import { STORE_BACKENDS } from "../support/backends";
import { openTestStore, type TestStore } from "../support/store";

describe.each(STORE_BACKENDS)("prepared statements on %s", (backend) => {
  let opened: TestStore;
  beforeAll(async () => {
    opened = await openTestStore(backend);
    await sql`create table chunk_probe (n integer primary key, label text not null, tag text)`.execute(
      opened.store.db,
    );
  });
  afterAll(() => opened.close());

  const insert = new MultiRowStatement("insert into chunk_probe (n, label) values ", "(?, ?)");
  const tag = new MultiRowStatement("update chunk_probe set tag = ? where n in (", "?", ")");

  it("writes 1,050 rows 100 per statement, then tags some with a leading value", async () => {
    const { db } = opened.store;
    const rows = Array.from({ length: 1_050 }, (_, n) => ({ n, label: `row ${n}` }));
    const inserted = await insert.runInChunks(db, rows, (r, p) => p.push(r.n, r.label), { maxRows: 100 });
    expect(inserted).toBe(1_050);
    const tagged = await inTransaction(db, (trx) =>
      tag.runInChunks(
        trx,
        rows.filter((r) => r.n % 3 === 0),
        (r, p) => p.push(r.n),
        { maxRows: 64, leading: ["third"] },
      ),
    );
    expect(tagged).toBe(350);
    const stored = await sql<{
      n: number;
      label: string;
      tag: string | null;
    }>`select n, label, tag from chunk_probe order by n`.execute(db);
    expect(stored.rows.map((r) => [Number(r.n), r.label, r.tag])).toEqual(
      rows.map((r) => [r.n, r.label, r.n % 3 === 0 ? "third" : null]),
    );
    expect(await insert.runInChunks(db, [], () => {}, { maxRows: 100 })).toBe(0);
  });
});
