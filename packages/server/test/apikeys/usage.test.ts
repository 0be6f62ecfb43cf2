/**
 * Request counts per key and minute (apikeys/usage.ts) on every store backend: counted in memory,
 * written with an additive upsert (two instances add to one row), read back as stored plus not yet
 * written, old rows pruned, and the auth plugin's counting written when the app closes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { KeyUsage } from "../../src/apikeys/usage";
import { addUsage } from "../../src/apikeys/usage-repo";
import { testConfig } from "../../src/config";
import { ManualClock } from "../../src/infra/clock";
import { dropSchema } from "../../src/infra/db/store";
import { bearer, createKey, createTestApp, setAccount, signup } from "../support/app";
import { POSTGRES_URL, STORE_BACKENDS } from "../support/backends";
import { openTestStore, type TestStore } from "../support/store";

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0); // on a slot boundary
const M0 = T0 / MINUTE;

describe.each(STORE_BACKENDS)("key usage counts on %s", (backend) => {
  let opened: TestStore;
  let clock: ManualClock;
  const usage = () => new KeyUsage(opened.store.db, clock, testConfig());
  const rows = () =>
    opened.store.db.selectFrom("key_usage").selectAll().orderBy("key_id").orderBy("minute").execute();

  beforeAll(async () => {
    opened = await openTestStore(backend);
  });
  afterAll(() => opened.close());
  beforeEach(async () => {
    await opened.store.db.deleteFrom("key_usage").execute();
    clock = new ManualClock(T0 + 5_000);
  });

  it("adds each flush to the stored minute, and reads stored plus not yet written", async () => {
    const a = usage();
    for (let i = 0; i < 3; i++) a.record("key_a", true, clock.now());
    a.record("key_a", false, clock.now());
    a.record("key_b", true, clock.now());
    await a.flush();
    expect((await rows()).map((r) => ({ ...r }))).toEqual([
      { key_id: "key_a", minute: M0, requests: 3, limited: 1 },
      { key_id: "key_b", minute: M0, requests: 1, limited: 0 },
    ]);

    // A second instance adds to the same row; this one's new counts are not written yet.
    const b = usage();
    b.record("key_a", true, clock.now());
    await b.flush();
    a.record("key_a", true, clock.now());
    a.record("key_a", false, clock.now());
    const report = (await a.report(["key_a", "key_b", "key_c"])).get("key_a")!;
    expect(report.thisMinute).toEqual({ requests: 5, limited: 2 });
    expect(report.totals).toEqual({ requests: 5, limited: 2, peak: 7, limitedMinutes: 1 });
    expect(report.slots).toHaveLength(96);
    expect(report.slots.at(-1)).toMatchObject({ start: T0, requests: 5, limited: 2, peak: 7 });

    await a.flush();
    expect((await rows())[0]).toEqual({ key_id: "key_a", minute: M0, requests: 5, limited: 2 });
    // Nothing left in memory: the same figures, from the store alone.
    expect((await a.report(["key_a"])).get("key_a")!.thisMinute).toEqual({ requests: 5, limited: 2 });
  });

  it("keeps each minute apart and sums them into slots, this minute only the current one", async () => {
    const u = usage();
    u.record("key_a", true, T0 - 20 * MINUTE); // the previous slot
    u.record("key_a", false, T0 - 20 * MINUTE);
    u.record("key_a", true, T0 + 1 * MINUTE);
    u.record("key_a", true, T0 + 1 * MINUTE);
    await u.flush();
    u.record("key_a", true, T0 + 2 * MINUTE);
    u.record("key_a", false, T0 + 2 * MINUTE);
    u.record("key_a", true, T0 + 3 * MINUTE); // the minute changes before the next flush
    u.record("key_a", true, T0 + 3 * MINUTE);
    u.record("key_a", true, T0 + 3 * MINUTE);
    clock.set(T0 + 3 * MINUTE + 30_000);
    const report = (await u.report(["key_a"])).get("key_a")!;
    expect(report.thisMinute).toEqual({ requests: 3, limited: 0 });
    expect(report.slots.at(-1)).toEqual({ start: T0, requests: 6, limited: 1, peak: 3, limitedMinutes: 1 });
    expect(report.slots.at(-2)!.requests).toBe(0);
    expect(report.slots.at(-3)).toEqual({
      start: T0 - 30 * MINUTE,
      requests: 1,
      limited: 1,
      peak: 2,
      limitedMinutes: 1,
    });
    expect(report.totals).toEqual({ requests: 7, limited: 2, peak: 3, limitedMinutes: 2 });
    await u.flush();
    expect(await rows()).toHaveLength(4);
    expect((await u.report(["key_a"])).get("key_a")).toEqual(report);
    // An hour-wide slot sums the same minutes.
    const hourly = (await u.report(["key_a"], { hours: 2, slotMinutes: 60 })).get("key_a")!;
    expect(hourly.slots.map((s) => s.requests + s.limited)).toEqual([2, 7]);
  });

  it("keeps the counts of a failed write for the next flush", async () => {
    const u = usage();
    u.record("key_a", true, clock.now());
    u.record("key_a", false, clock.now());
    await opened.store.db.schema.alterTable("key_usage").renameTo("key_usage_away").execute();
    try {
      await expect(u.flush()).rejects.toThrow();
      u.record("key_a", true, clock.now());
    } finally {
      await opened.store.db.schema.alterTable("key_usage_away").renameTo("key_usage").execute();
    }
    await u.flush();
    expect((await rows()).map((r) => ({ ...r }))).toEqual([
      { key_id: "key_a", minute: M0, requests: 2, limited: 1 },
    ]);
  });

  it("shows nothing older than the window and prunes rows past 48 hours", async () => {
    await addUsage(opened.store.db, [
      { key_id: "key_a", minute: M0 - 49 * 60, requests: 9, limited: 9 },
      { key_id: "key_a", minute: M0 - 30 * 60, requests: 4, limited: 0 },
    ]);
    const u = usage();
    expect((await u.report(["key_a"])).get("key_a")!.totals.requests).toBe(0);
    u.record("key_a", true, clock.now());
    await u.flush();
    expect((await rows()).map((r) => r.minute)).toEqual([M0 - 30 * 60, M0]);
  });
});

describe.each(STORE_BACKENDS)("the auth plugin's counts on %s", (store) => {
  it("counts admitted requests and 429s per key, written when the app closes", async () => {
    const t = await createTestApp({ store });
    let closed = false;
    try {
      const { session, accountId } = await signup(t.app);
      await setAccount(t.services, accountId, { tier: "enterprise", rate_limit_per_minute: 3 });
      const { key, id } = await createKey(t.app, session, { type: "read_only" });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push(
          (await t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(key) })).statusCode,
        );
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      // Session-token requests (key management) are not a key's.
      expect((await t.services.keyUsage.report([id])).get(id)!.thisMinute).toEqual({
        requests: 3,
        limited: 2,
      });
      await t.app.close();
      closed = true;
      const stored = await t.runtime.store.db.selectFrom("key_usage").selectAll().execute();
      expect(stored.map((r) => ({ ...r }))).toEqual([
        { key_id: id, minute: Math.floor(t.clock.now() / MINUTE), requests: 3, limited: 2 },
      ]);
    } finally {
      if (closed) {
        // app.close() already ran: close the rest without closing the app twice.
        await t.runtime.close();
        if (t.schema) await dropSchema(POSTGRES_URL!, t.schema);
      } else await t.close();
    }
  });
});
