/**
 * Background WAL checkpoints on a SQLite file (infra/db/checkpointer.ts): the worker thread copies
 * committed pages into the database while the store's own connection keeps only a larger backstop,
 * its checkpoints do not look like another process's writes, and closing the store stops it and
 * leaves no WAL behind.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { BACKSTOP_CHECKPOINT_PAGES } from "../../src/infra/db/checkpointer";
import { openStore, type Store } from "../../src/infra/db/store";
import { createMetrics } from "../../src/ops/metrics";

const dirs: string[] = [];
const stores: Store[] = [];

afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function fileStore(options: { backgroundCheckpoints?: boolean } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-ckpt-"));
  dirs.push(dir);
  const file = path.join(dir, "store.db");
  const store = await openStore({ kind: "sqlite", file }, options);
  stores.push(store);
  await sql`create table notes (id integer primary key, body text not null)`.execute(store.db);
  return { store, file };
}

/** `commits` transactions of one ~2 KB row each: about `commits` WAL frames, under the backstop. */
async function write(store: Store, commits: number) {
  for (let i = 0; i < commits; i++) {
    await sql`insert into notes (body) values (${"x".repeat(2_000)})`.execute(store.db);
  }
}

async function until(check: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A later turn of the event loop (the store reads data_version once per turn). */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("background checkpoints", () => {
  it("copy the WAL into the database while the store's own checkpoint waits for a larger WAL", async () => {
    const { store } = await fileStore();
    const own = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db);
    expect(own.rows[0]!.wal_autocheckpoint).toBe(BACKSTOP_CHECKPOINT_PAGES);

    await write(store, 300);
    // Fewer frames than the backstop: only the background thread can have checkpointed them.
    await until(() => {
      const stats = store.checkpointStats()!;
      return stats.walFrames >= 300 && stats.checkpointedFrames === stats.walFrames;
    });
    expect(store.checkpointStats()!.lastError).toBeUndefined();
    expect(store.checkpointStats()!.walFrames).toBeLessThan(BACKSTOP_CHECKPOINT_PAGES);
  });

  it("are not mistaken for another process's writes, which still are noticed", async () => {
    const { store, file } = await fileStore();
    await nextTurn();
    const before = store.externalChangeCounter();
    await write(store, 200);
    const runs = store.checkpointStats()!.runs;
    await until(() => {
      const stats = store.checkpointStats()!;
      return stats.runs > runs && stats.walFrames > 0 && stats.checkpointedFrames === stats.walFrames;
    });
    await nextTurn();
    expect(store.externalChangeCounter()).toBe(before);

    // The CLI writing the same file.
    const other = new BetterSqlite3(file);
    other.prepare("insert into notes (body) values ('from another process')").run();
    other.close();
    await nextTurn();
    expect(store.externalChangeCounter()).not.toBe(before);
  });

  it("stop with the store, which then removes the WAL as the last connection", async () => {
    const { store, file } = await fileStore();
    await write(store, 50);
    await store.close();
    stores.splice(stores.indexOf(store), 1);
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    const reopened = new BetterSqlite3(file, { readonly: true });
    expect(reopened.prepare("select count(*) as n from notes").get()).toEqual({ n: 50 });
    reopened.close();
  });

  it("show on /metrics: WAL frames, the backlog not yet copied, and failure", async () => {
    const { store } = await fileStore();
    await write(store, 100);
    await until(() => {
      const stats = store.checkpointStats()!;
      return stats.walFrames >= 100 && stats.checkpointedFrames === stats.walFrames;
    });
    const text = await createMetrics({ checkpoints: () => store.checkpointStats() }).registry.metrics();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
    expect(value("crossbook_sqlite_wal_frames")).toBeGreaterThanOrEqual(100);
    expect(value("crossbook_sqlite_wal_backlog_frames")).toBe(0);
    expect(value("crossbook_sqlite_checkpoint_failing")).toBe(0);
    // Without background checkpoints (PostgreSQL, in-memory SQLite) there is nothing to show.
    const none = await createMetrics({ checkpoints: () => undefined }).registry.metrics();
    expect(none).not.toContain("crossbook_sqlite_");
  });

  it("can be turned off: the store checkpoints on its own, as SQLite does by default", async () => {
    const { store } = await fileStore({ backgroundCheckpoints: false });
    expect(store.checkpointStats()).toBeUndefined();
    const own = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db);
    expect(own.rows[0]!.wal_autocheckpoint).toBe(1_000);
  });
});
