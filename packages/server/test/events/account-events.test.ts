/**
 * `GET /v1/account/events` on both stores: the caller's events of the key's environment, oldest
 * first after a cursor (a seq or an id), filtered by type, paged with next_after / has_more; another
 * account's or environment's events never show; a cursor older than EVENT_RETENTION_DAYS is 410
 * CURSOR_EXPIRED with the oldest event kept; pruning deletes only what every outbox consumer read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Owner } from "../../src/access/owner";
import { START_CURSOR } from "../../src/events/outbox";
import { bearer, createKey, createTestApp, expectError, signup, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";

interface EventItem {
  id: string;
  seq: number;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

describe.each(STORE_BACKENDS)("account events on %s", (store) => {
  let t: TestApp;
  let key: string;
  let liveKey: string;
  let owner: Owner;
  let otherKey: string;

  const read = async (query: string, secret = key) => {
    const response = await t.app.inject({
      method: "GET",
      url: `/v1/account/events${query}`,
      headers: bearer(secret),
    });
    return response;
  };
  const page = async (query: string, secret = key) => {
    const response = await read(query, secret);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { data: EventItem[]; meta: { next_after: number | null; has_more: boolean } };
  };

  beforeAll(async () => {
    t = await createTestApp({ store, config: { eventRetentionDays: 30 } });
    const me = await signup(t.app);
    key = (await createKey(t.app, me.session, { name: "events", type: "read_only", environment: "sandbox" }))
      .key;
    liveKey = (await createKey(t.app, me.session, { name: "live", type: "read_only", environment: "live" }))
      .key;
    owner = { accountId: me.accountId, environment: "sandbox" };
    const other = await signup(t.app);
    otherKey = (
      await createKey(t.app, other.session, { name: "o", type: "read_only", environment: "sandbox" })
    ).key;
    // The first deposit funds the sandbox (10,000) first: then five deposits and a withdrawal of
    // ours, and the other account's funding and deposit in between.
    for (let i = 1; i <= 5; i++) await t.services.sandbox.deposit(owner, i * 1_000_000);
    await t.services.sandbox.deposit({ accountId: other.accountId, environment: "sandbox" }, 9_000_000);
    await t.services.sandbox.withdraw(owner, 2_000_000);
  });
  afterAll(() => t?.close());

  it("lists the account's events oldest first, with the webhook payload as data", async () => {
    const { data, meta } = await page("");
    expect(data.map((e) => e.type)).toEqual([...Array(6).fill("deposit.completed"), "withdrawal.completed"]);
    expect(data.map((e) => e.data["amount"])).toEqual([10_000, 1, 2, 3, 4, 5, 2]);
    expect(data[0]!.id).toMatch(/^evt_/);
    expect(new Set(data.map((e) => e.seq)).size).toBe(7);
    expect(meta).toEqual({ next_after: data[6]!.seq, has_more: false });
  });

  it("pages after a seq or an id, and says when there is more", async () => {
    const first = await page("?limit=2");
    expect(first.data).toHaveLength(2);
    expect(first.meta.has_more).toBe(true);
    const second = await page(`?limit=2&after=${first.meta.next_after}`);
    expect(second.data.map((e) => e.data["amount"])).toEqual([2, 3]);
    const byId = await page(`?limit=3&after=${second.data[1]!.id}`);
    expect(byId.data.map((e) => e.data["amount"])).toEqual([4, 5, 2]);
    expect(byId.meta.has_more).toBe(false);
    const end = await page(`?after=${byId.meta.next_after}`);
    expect(end).toEqual({
      success: true,
      data: [],
      meta: { next_after: byId.meta.next_after, has_more: false },
    });
    // after=0 is the start.
    expect((await page("?after=0")).data).toHaveLength(7);
  });

  it("filters by type", async () => {
    const { data } = await page("?types=withdrawal.completed, order.filled");
    expect(data.map((e) => e.type)).toEqual(["withdrawal.completed"]);
  });

  it("keeps accounts and environments apart", async () => {
    expect((await page("", liveKey)).data).toEqual([]);
    const theirs = await page("", otherKey);
    expect(theirs.data.map((e) => e.data["amount"])).toEqual([10_000, 9]);
    // Their event as our cursor: refused, and nothing of theirs is shown.
    const response = await read(`?after=${theirs.data[1]!.seq}`);
    expectError(response, 400, "VALIDATION_ERROR");
    expect(response.json().error.details.fields["query.after"]).toContain(
      "not one of this key's account events",
    );
    expectError(await read(`?after=${theirs.data[1]!.id}`), 400, "VALIDATION_ERROR");
  });

  it("refuses bad queries with a field-level 400", async () => {
    const unknown = await read("?types=order.filled,order.teleported");
    expectError(unknown, 400, "VALIDATION_ERROR");
    expect(unknown.json().error.details.fields["query.types"]).toContain("order.teleported");
    expectError(await read("?limit=1001"), 400, "VALIDATION_ERROR");
    expectError(await read("?limit=0"), 400, "VALIDATION_ERROR");
    expectError(await read("?after=not-a-cursor"), 400, "VALIDATION_ERROR");
    expectError(await read("?surprise=1"), 400, "VALIDATION_ERROR");
  });

  it("answers 410 CURSOR_EXPIRED past the retention, with the oldest event kept, and prunes read events", async () => {
    const before = await page("");
    const oldest = before.data[0]!;
    t.clock.advance(31 * 86_400_000);
    await t.services.sandbox.deposit(owner, 7_000_000);
    const expired = await read(`?after=${oldest.seq}`);
    expectError(expired, 410, "CURSOR_EXPIRED");
    const fresh = (await page("")).data;
    expect(fresh.map((e) => e.data["amount"])).toEqual([7]);
    expect(expired.json().error.details).toEqual({
      retention_days: 30,
      oldest_available: { seq: fresh[0]!.seq, id: fresh[0]!.id },
      restart_after: 0,
    });
    expectError(await read(`?after=${oldest.id}`), 410, "CURSOR_EXPIRED");

    // No outbox consumer has read anything yet: nothing is deleted.
    expect(await t.services.accountEvents.prune()).toBe(0);
    // Once the consumer has read past them, the old ones go and the new one stays.
    const all = await t.services.outbox.readAfter(t.runtime.store.db, START_CURSOR, 10_000);
    const last = all.at(-1)!.cursor;
    await t.runtime.store.db
      .insertInto("outbox_cursors")
      .values({ name: "test consumer", tx: last.tx, seq: last.seq, updated_at: new Date().toISOString() })
      .execute();
    expect(await t.services.accountEvents.prune()).toBe(9); // ours 7, theirs 2
    // A seq below every kept one is expired, even though its row is gone.
    expectError(await read(`?after=${oldest.seq}`), 410, "CURSOR_EXPIRED");
    expect((await page("")).data.map((e) => e.data["amount"])).toEqual([7]);
  });
});
