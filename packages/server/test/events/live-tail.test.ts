/**
 * The account events' live tail on both stores: a listener gets every event of its account and
 * environment committed after `listen` resolved, in order, and nothing from before or of others;
 * nobody listening, it reads nothing, and a later listener starts from the end again; an event
 * written on the instance (the outbox's hint) is read without waiting for the poll.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Owner } from "../../src/access/owner";
import { AccountEventTail, type TailedEvent } from "../../src/events/live-tail";
import { silentLogger } from "../../src/infra/log";
import { createTestApp, signup, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { until } from "../support/until";

describe.each(STORE_BACKENDS)("account event tail on %s", (store) => {
  let t: TestApp;
  let tail: AccountEventTail;
  let ours: Owner;
  let theirs: Owner;

  beforeAll(async () => {
    t = await createTestApp({ store });
    tail = new AccountEventTail(t.runtime.store.db, t.runtime.store.dialect, silentLogger, { pollMs: 5 });
    ours = { accountId: (await signup(t.app)).accountId, environment: "sandbox" };
    theirs = { accountId: (await signup(t.app)).accountId, environment: "sandbox" };
  });
  afterAll(async () => {
    tail.close();
    await t?.close();
  });

  it("hands a listener its owner's events committed after it listened, in order", async () => {
    await t.services.sandbox.deposit(ours, 1_000_000); // before: funding 10,000 and 1
    const got: TailedEvent[] = [];
    const stop = await tail.listen(ours, { deliver: (events) => got.push(...events) });
    for (let i = 2; i <= 4; i++) {
      await t.services.sandbox.deposit(theirs, i * 1_000_000);
      await t.services.sandbox.deposit(ours, i * 1_000_000);
    }
    await until(() => got.length >= 3, { timeoutMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(got.map((e) => JSON.parse(e.row.data).amount)).toEqual([2, 3, 4]);
    expect(got.every((e) => e.row.account_id === ours.accountId && e.row.environment === "sandbox")).toBe(
      true,
    );
    expect(got.map((e) => e.position.seq)).toEqual(got.map((e) => e.row.seq));
    stop();
    expect(tail.listeners).toBe(0);

    // Nobody listens: what is recorded now is not handed to a later listener (it replays from the store).
    await t.services.sandbox.deposit(ours, 5_000_000);
    const later: TailedEvent[] = [];
    const stopLater = await tail.listen(ours, { deliver: (events) => later.push(...events) });
    await t.services.sandbox.deposit(ours, 6_000_000);
    await until(() => later.length >= 1, { timeoutMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(later.map((e) => JSON.parse(e.row.data).amount)).toEqual([6]);
    stopLater();
  });

  // On SQLite the recording transaction has committed before the hint's timer can fire (its
  // statements run synchronously); on PostgreSQL a hinted read may come before the commit and the
  // poll picks the event up, so there the poll cannot be ten minutes long.
  it.runIf(store === "sqlite")(
    "reads soon after an account event is written on this instance, without waiting for its poll",
    async () => {
      const slow = new AccountEventTail(t.runtime.store.db, t.runtime.store.dialect, silentLogger, {
        pollMs: 600_000,
      });
      const stopHints = t.services.outbox.onAccountEvent(() => slow.hint());
      try {
        const got: TailedEvent[] = [];
        const stop = await slow.listen(ours, { deliver: (events) => got.push(...events) });
        for (let i = 7; i <= 9; i++) await t.services.sandbox.deposit(ours, i * 1_000_000);
        // The poll is ten minutes away: only the hints can have brought these.
        await until(() => got.length >= 3, { timeoutMs: 5_000 });
        expect(got.map((e) => JSON.parse(e.row.data).amount)).toEqual([7, 8, 9]);
        stop();
      } finally {
        stopHints();
        slow.close();
      }
    },
  );
});
