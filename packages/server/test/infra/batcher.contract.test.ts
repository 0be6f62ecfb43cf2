/**
 * Group commit (infra/db/batcher.ts) on both stores, with savepoints per unit and in the
 * `rerunnable` mode (no savepoints, the batch run again if a unit throws): units submitted in one
 * turn share a transaction, a unit that throws (in JavaScript, or on a constraint) is left out
 * alone with its writes undone, and every other unit's writes land exactly once.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TransactionBatcher } from "../../src/infra/db/batcher";
import { prepare } from "../../src/infra/db/prepared";
import type { Trx } from "../../src/infra/db/store";
import { STORE_BACKENDS } from "../support/backends";
import { openTestStore, type TestStore } from "../support/store";

const insert = prepare(
  (_db, [n, label]: [number, string]) => sql`insert into batch_probe (n, label) values (${n}, ${label})`,
);

describe.each(STORE_BACKENDS)("the transaction batcher on %s", (backend) => {
  let opened: TestStore;
  beforeAll(async () => {
    opened = await openTestStore(backend);
    await sql`create table batch_probe (n integer primary key, label text not null unique)`.execute(
      opened.store.db,
    );
  });
  afterAll(() => opened.close());
  beforeEach(async () => {
    await sql`delete from batch_probe`.execute(opened.store.db);
  });

  const stored = async () =>
    (await sql<{ n: number }>`select n from batch_probe order by n`.execute(opened.store.db)).rows.map((r) =>
      Number(r.n),
    );

  /** Ten units in one turn: unit 3 throws after writing, unit 6 breaks the unique label. */
  function submitTen(batcher: TransactionBatcher, base: number) {
    return Array.from({ length: 10 }, (_, i) =>
      batcher.run(async (trx: Trx) => {
        const n = base + i;
        await insert.run(trx, [n, i === 6 ? `label ${base}` : `label ${n}`]);
        if (i === 3) throw new Error(`unit ${n} refused`);
        return n;
      }),
    );
  }

  for (const rerunnable of [false, true]) {
    it(`leaves out only the units that fail (${rerunnable ? "rerunnable" : "savepoints"})`, async () => {
      const batcher = new TransactionBatcher(opened.store.db, { rerunnable });
      const outcomes = await Promise.allSettled(submitTen(batcher, 100));
      expect(outcomes.map((o) => o.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
        "fulfilled",
      ]);
      expect((outcomes[3] as PromiseRejectedResult).reason.message).toBe("unit 103 refused");
      expect(outcomes.filter((o) => o.status === "fulfilled").map((o) => o.value)).toEqual([
        100, 101, 102, 104, 105, 107, 108, 109,
      ]);
      expect(await stored()).toEqual([100, 101, 102, 104, 105, 107, 108, 109]);
      expect(batcher.stats()).toEqual({ batches: 1, units: 10, reruns: rerunnable ? 1 : 0 });

      // Right after a failure a rerunnable batcher uses savepoints at once: no second rerun.
      const again = await Promise.allSettled(submitTen(batcher, 200));
      expect(again.filter((o) => o.status === "rejected")).toHaveLength(2);
      expect(batcher.stats()).toEqual({ batches: 2, units: 20, reruns: rerunnable ? 1 : 0 });
      expect(await stored()).toHaveLength(16);
    });
  }

  it("commits a batch that fails nowhere once, without running any unit twice", async () => {
    const batcher = new TransactionBatcher(opened.store.db, { rerunnable: true });
    let runs = 0;
    const values = await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        batcher.run(async (trx: Trx) => {
          runs++;
          await insert.run(trx, [n, `label ${n}`]);
          return n * 2;
        }),
      ),
    );
    expect(values).toEqual(Array.from({ length: 50 }, (_, n) => n * 2));
    expect(runs).toBe(50);
    expect(await stored()).toHaveLength(50);
    expect(batcher.stats()).toEqual({ batches: 1, units: 50, reruns: 0 });
  });

  it("undoes a lone unit's writes when it throws", async () => {
    const batcher = new TransactionBatcher(opened.store.db, { rerunnable: true });
    await expect(
      batcher.run(async (trx: Trx) => {
        await insert.run(trx, [1, "lone"]);
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    expect(await stored()).toEqual([]);
    const ok = await batcher.run(async (trx: Trx) => {
      await insert.run(trx, [2, "lone"]);
      return "ok";
    });
    expect(ok).toBe("ok");
    expect(await stored()).toEqual([2]);
  });
});
