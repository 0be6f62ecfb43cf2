/**
 * An instance whose bus is in-process hears of no revocation made by another process (the CLI),
 * so it watches the store for them (issue 25 part 8): each revocation is announced once to
 * `onRevoked` (the streams close on it) and the key leaves the authentication cache, on both stores.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CompiledQuery } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { revokedSinceQuery } from "../../src/apikeys/repo";
import { createServices } from "../../src/app";
import { createRuntime, type Runtime } from "../../src/runtime";
import { createKey, createTestApp, signup } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { openTestStore } from "../support/store";
import { until } from "../support/until";

describe.each(STORE_BACKENDS)("revocations by another process on %s", (store) => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("reach onRevoked once each and leave the auth cache, with no bus between the processes", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-revoke-watch-"));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const t = await createTestApp({
      store,
      ...(store === "sqlite"
        ? { config: { database: { kind: "sqlite" as const, file: path.join(dir, "crossbook.db") } } }
        : {}),
    });
    cleanups.push(() => t.close());
    expect(t.runtime.bus.kind).toBe("memory");
    // "The CLI": its own runtime on the same database, with its own in-process bus.
    const other: Runtime = await createRuntime(t.runtime.config, {
      clock: t.clock,
      ...(t.schema ? { store: { schema: t.schema } } : {}),
    });
    cleanups.push(() => other.close());
    const cli = createServices(other);

    const { session } = await signup(t.app);
    const first = await createKey(t.app, session, { type: "trading", environment: "sandbox" });
    const second = await createKey(t.app, session, { type: "read_only", environment: "sandbox" });
    // Cached on the serving instance (its clock stands still, so the cache never expires by itself).
    expect(await t.services.apiKeys.authenticate(first.key)).toBeDefined();
    const heard: string[] = [];
    t.services.apiKeys.onRevoked((id) => heard.push(id));

    await cli.apiKeys.revokeById(first.id);
    await until(() => heard.includes(first.id), { timeoutMs: 10_000, what: "the first revocation" });
    expect(t.services.apiKeys.authenticateCached(first.key)).toBeNull();
    expect(await t.services.apiKeys.authenticate(first.key)).toBeUndefined();

    // A later look reads the first revocation again (the overlap) but does not announce it again.
    await cli.apiKeys.revokeById(second.id);
    await until(() => heard.includes(second.id), { timeoutMs: 10_000, what: "the second revocation" });
    expect(heard).toEqual([first.id, second.id]);
  });
});

describe("the revocation watch's query", () => {
  it("searches the partial index of revoked keys on SQLite, not the table", async () => {
    const opened = await openTestStore("sqlite");
    try {
      const query = revokedSinceQuery(opened.store.db, "2026-11-24T00:00:00.000Z", 1000).compile();
      const plan = await opened.store.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
      );
      expect(plan.rows.map((row) => row.detail).join("\n")).toMatch(
        /SEARCH api_keys USING INDEX api_keys_revoked_idx/,
      );
    } finally {
      await opened.close();
    }
  });
});
