/**
 * Prepared statements (infra/db/prepared.ts) on both stores: a query built with the query builder
 * from placeholders runs with each run's values bound where the compiled SQL wants them (tuples
 * and records, a value used twice, constants of the query kept), inside a transaction opened with
 * `inTransaction` (SQLite's direct path) as well as outside one; multi-row statements run in chunks
 * write every row once, in order; and a statement over a list of plain values binds each value.
 */
import { type Generated, type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { everyColumn, inTransaction, prepare, prepareList, prepareRows } from "../../src/infra/db/prepared";
import type { Database } from "../../src/infra/db/schema";
import type { DbOrTrx } from "../../src/infra/db/store";
import { STORE_BACKENDS } from "../support/backends";
import { openTestStore, type TestStore } from "../support/store";

interface ProbeDb {
  probe: { n: number; label: string; amount: Generated<number>; tag: string | null };
}

/** The probe table is not in the app's schema: builders see it through this view. */
const probe = (db: Kysely<Database>) => db as unknown as Kysely<ProbeDb>;

const insertProbe = prepare((db, [n, label, amount]: [n: number, label: string, amount: number]) =>
  probe(db).insertInto("probe").values({ n, label, amount }).returning(["n", "label", "amount"]),
);

/** Records, a value bound twice (`amount`), and a constant of the query (`'moved'`). */
const moveAmount = prepare((db, p: { n: number; amount: number }) =>
  probe(db)
    .updateTable("probe")
    .set((eb) => ({ amount: eb("amount", "-", p.amount), tag: "moved" }))
    .where("n", "=", p.n)
    .where("amount", ">=", p.amount),
);

const byLabel = prepare((db, [label]: [label: string]) =>
  probe(db).selectFrom("probe").select(["n", "amount", "tag"]).where("label", "=", label).orderBy("n"),
);

const insertRows = prepareRows((db, rows: ReadonlyArray<{ n: number; label: string }>) =>
  probe(db)
    .insertInto("probe")
    .values(rows.map((row) => ({ n: row.n, label: row.label }))),
);

const tagRows = prepareRows((db, rows: ReadonlyArray<{ n: number }>, shared: { tag: string }) =>
  probe(db)
    .updateTable("probe")
    .set({ tag: shared.tag })
    .where(
      "n",
      "in",
      rows.map((row) => row.n),
    ),
);

/** The keys themselves are the rows; a shared value (bound twice) comes before them in the SQL. */
const tagKeys = prepareList((db, keys: readonly number[], [tag]: [tag: string]) =>
  probe(db)
    .updateTable("probe")
    .set({ tag, amount: sql.lit(1) })
    .where("n", "in", keys)
    .where((eb) => eb.or([eb("tag", "is", null), eb("tag", "<>", tag)])),
);

describe.each(STORE_BACKENDS)("prepared statements on %s", (backend) => {
  let opened: TestStore;
  beforeAll(async () => {
    opened = await openTestStore(backend);
    await sql`create table probe (n integer primary key, label text not null, amount integer not null default 0, tag text)`.execute(
      opened.store.db,
    );
  });
  afterAll(() => opened.close());
  beforeEach(async () => {
    await sql`delete from probe`.execute(opened.store.db);
  });

  const stored = async () =>
    (
      await sql<{
        n: number;
        label: string;
        amount: number;
        tag: string | null;
      }>`select n, label, amount, tag from probe order by n`.execute(opened.store.db)
    ).rows.map((r) => [Number(r.n), r.label, Number(r.amount), r.tag]);

  /** The same statements through the store, and in a transaction (SQLite: the direct path). */
  const paths: Array<[string, <T>(work: (db: DbOrTrx) => Promise<T>) => Promise<T>]> = [
    ["outside a transaction", (work) => work(opened.store.db)],
    ["in a transaction", (work) => inTransaction(opened.store.db, work)],
  ];

  for (const [path, within] of paths) {
    it(`binds each run's values where the compiled query wants them (${path})`, async () => {
      await within(async (db) => {
        expect(await insertProbe.first(db, [1, "one", 10])).toEqual({ n: 1, label: "one", amount: 10 });
        expect((await insertProbe.run(db, [2, "two", 5])).rows).toHaveLength(1);
        await insertProbe.run(db, [3, "one", 7]);
        // The guard holds: 4 of 10 moved; then it does not: 6 left, 8 asked, nothing changes.
        expect(await moveAmount.changes(db, { n: 1, amount: 4 })).toBe(1);
        expect(await moveAmount.changes(db, { n: 1, amount: 8 })).toBe(0);
        expect(await moveAmount.first(db, { n: 2, amount: 1 })).toBeUndefined();
        const rows = (await byLabel.run(db, ["one"])).rows;
        expect(rows.map((r) => [Number(r.n), Number(r.amount), r.tag])).toEqual([
          [1, 6, "moved"],
          [3, 7, null],
        ]);
        expect(await byLabel.first(db, ["none"])).toBeUndefined();
      });
      expect(await stored()).toEqual([
        [1, "one", 6, "moved"],
        [2, "two", 4, "moved"],
        [3, "one", 7, null],
      ]);
    });

    it(`rejects a statement that fails (${path})`, async () => {
      await insertProbe.run(opened.store.db, [1, "one", 1]);
      await expect(within((db) => insertProbe.run(db, [1, "again", 1]))).rejects.toThrow();
      expect(await stored()).toEqual([[1, "one", 1, null]]);
    });
  }

  it("rolls back what its statements wrote when the transaction fails", async () => {
    await expect(
      inTransaction(opened.store.db, async (trx) => {
        await insertProbe.run(trx, [2, "two", 1]);
        throw new Error("undo");
      }),
    ).rejects.toThrow("undo");
    expect(await stored()).toEqual([]);
  });

  it("writes 1,050 rows 100 per statement, then tags some with a shared value", async () => {
    const { db } = opened.store;
    const rows = Array.from({ length: 1_050 }, (_, n) => ({ n, label: `row ${n}` }));
    expect(await insertRows.runInChunks(db, rows, [], { maxRows: 100 })).toBe(1_050);
    const thirds = rows.filter((r) => r.n % 3 === 0);
    const tagged = await inTransaction(db, (trx) =>
      tagRows.runInChunks(trx, thirds, { tag: "third" }, { maxRows: 64 }),
    );
    expect(tagged).toBe(350);
    expect(await stored()).toEqual(rows.map((r) => [r.n, r.label, 0, r.n % 3 === 0 ? "third" : null]));
    expect(await insertRows.runInChunks(db, [], [], { maxRows: 100 })).toBe(0);
  });

  it("compiles the query builder's SQL, with the dialect's placeholders", () => {
    const { db } = opened.store;
    const text = byLabel.sqlFor(db);
    expect(text).toBe(
      probe(db)
        .selectFrom("probe")
        .select(["n", "amount", "tag"])
        .where("label", "=", "x")
        .orderBy("n")
        .compile().sql,
    );
    expect(text).toContain(backend === "postgres" ? "$1" : "?");
    expect(tagRows.sqlFor(db, 3)).toMatch(
      backend === "postgres" ? /in \(\$2, \$3, \$4\)/ : /in \(\?, \?, \?\)/,
    );
  });

  it("binds a list of plain values, in chunks, with shared values before them", async () => {
    const { db } = opened.store;
    const rows = Array.from({ length: 250 }, (_, n) => ({ n, label: `row ${n}` }));
    await insertRows.runInChunks(db, rows, [], { maxRows: 100 });
    const fifths = rows.filter((r) => r.n % 5 === 0).map((r) => r.n);
    const tagged = await inTransaction(db, (trx) =>
      tagKeys.runInChunks(trx, fifths, ["fifth"], { maxRows: 16 }),
    );
    expect(tagged).toBe(50);
    // Outside a transaction too; the tag already set keeps those rows out (a value bound twice).
    expect(await tagKeys.runInChunks(db, [0, 1, 2], ["fifth"], { maxRows: 16 })).toBe(2);
    expect(await stored()).toEqual(
      rows.map((r) => (r.n % 5 === 0 || r.n < 3 ? [r.n, r.label, 1, "fifth"] : [r.n, r.label, 0, null])),
    );
    expect(tagKeys.sqlFor(db, 2)).toMatch(
      backend === "postgres"
        ? /in \(\$2, \$3\) and \("tag" is null or "tag" <> \$4\)/
        : /in \(\?, \?\) and \("tag" is null or "tag" <> \?\)/,
    );
  });
});

describe("building a prepared statement", () => {
  let opened: TestStore;
  beforeAll(async () => {
    opened = await openTestStore("sqlite");
  });
  afterAll(() => opened.close());

  it("refuses a placeholder used as a JavaScript value, and a rest pattern over a tuple", async () => {
    const asText = prepare((_db, [label]: [string]) => sql`select ${sql.raw(`'${label}'`)} as label`);
    await expect(asText.run(opened.store.db, ["x"])).rejects.toThrow(/used as a value/);
    const rest = prepare((_db, [first, ...others]: [string, string]) => sql`select ${first}, ${others[0]}`);
    await expect(rest.run(opened.store.db, ["a", "b"])).rejects.toThrow(/no `...rest` pattern/);
  });

  it("checks at compile time that a column list names every column", () => {
    everyColumn<{ a: number; b: string }, ["a", "b"]>(true);
    // @ts-expect-error: "b" is missing
    everyColumn<{ a: number; b: string }, ["a"]>(true);
  });
});
