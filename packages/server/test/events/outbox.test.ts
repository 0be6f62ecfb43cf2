/**
 * The outbox: events exist exactly when their transaction commits, payloads match their declared
 * schemas, and readers see events in recording order and never skip one, even on PostgreSQL with
 * transactions that commit out of sequence order.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidEventError, Outbox, START_CURSOR } from "../../src/events/outbox";
import { EVENT_SCHEMAS, SUBSCRIBABLE_EVENT_TYPES } from "../../src/events/types";
import { ManualClock } from "../../src/infra/clock";
import type { Store } from "../../src/infra/db/store";
import { STORE_BACKENDS } from "../support/backends";
import { priceAlert } from "../support/events";
import { openTestStore, type TestStore } from "../support/store";

describe("event catalog", () => {
  it("declares the spec's eleven event types, subscribable, plus webhook.test", () => {
    expect([...SUBSCRIBABLE_EVENT_TYPES].sort()).toEqual(
      [
        "order.created",
        "order.filled",
        "order.partially_filled",
        "order.cancelled",
        "position.opened",
        "position.closed",
        "position.resolved",
        "market.matched",
        "price.alert",
        "deposit.completed",
        "withdrawal.completed",
      ].sort(),
    );
    expect(Object.keys(EVENT_SCHEMAS)).toContain("webhook.test");
  });

  it("uses exactly the spec's fields for the payloads it shows", () => {
    const fields = (type: keyof typeof EVENT_SCHEMAS) => Object.keys(EVENT_SCHEMAS[type].properties).sort();
    expect(fields("order.filled")).toEqual(
      [
        "order_id",
        "market_id",
        "platform",
        "side",
        "type",
        "amount",
        "price",
        "filled_amount",
        "average_fill_price",
        "fees",
        "position_id",
      ].sort(),
    );
    expect(fields("position.resolved")).toEqual(
      [
        "position_id",
        "market_id",
        "event_title",
        "outcome",
        "resolution",
        "won",
        "size",
        "cost_basis",
        "payout",
        "realized_pnl",
        "redeemable",
      ].sort(),
    );
    expect(fields("market.matched")).toEqual(
      ["match_id", "confidence", "platforms", "spread", "spread_pct"].sort(),
    );
    expect(fields("price.alert")).toEqual(
      ["alert_id", "market_id", "event_title", "condition", "threshold", "current_price", "platform"].sort(),
    );
  });
});

describe.each(STORE_BACKENDS)("outbox on %s", (backend) => {
  let store: Store;
  let opened: TestStore;
  let outbox: Outbox;
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
  beforeAll(async () => {
    opened = await openTestStore(backend, { poolSize: 6 });
    store = opened.store;
    outbox = new Outbox(store.dialect, clock);
  });
  afterAll(() => opened.close());

  let cursor = START_CURSOR;

  it("records inside the caller's transaction and reads it back in order", async () => {
    await store.db.transaction().execute(async (trx) => {
      await outbox.record(trx, {
        type: "price.alert",
        data: priceAlert(1),
        accountId: "acc_1",
        environment: "live",
      });
      await outbox.record(trx, { type: "price.alert", data: priceAlert(2), accountId: "acc_1" });
    });
    const events = await outbox.readAfter(store.db, cursor);
    expect(events.map((e) => e.data)).toEqual([priceAlert(1), priceAlert(2)]);
    expect(events[0]).toMatchObject({
      type: "price.alert",
      account_id: "acc_1",
      environment: "live",
      created_at: "2026-11-22T12:00:00.000Z",
    });
    expect(events[0]!.id).toMatch(/^evt_/);
    cursor = events.at(-1)!.cursor;
    expect(await outbox.readAfter(store.db, cursor)).toEqual([]);
  });

  it("loses the event when the transaction rolls back", async () => {
    await expect(
      store.db.transaction().execute(async (trx) => {
        await outbox.record(trx, { type: "price.alert", data: priceAlert(3), accountId: null });
        throw new Error("state change failed");
      }),
    ).rejects.toThrow();
    expect(await outbox.readAfter(store.db, cursor)).toEqual([]);
  });

  it("refuses a payload that does not match its schema", async () => {
    await expect(
      outbox.record(store.db, {
        type: "price.alert",
        data: { ...priceAlert(4), threshold: "high" } as unknown as ReturnType<typeof priceAlert>,
        accountId: null,
      }),
    ).rejects.toBeInstanceOf(InvalidEventError);
  });

  it("pages with a limit", async () => {
    for (let i = 10; i < 15; i++)
      await outbox.record(store.db, { type: "price.alert", data: priceAlert(i), accountId: null });
    const first = await outbox.readAfter(store.db, cursor, 2);
    const rest = await outbox.readAfter(store.db, first.at(-1)!.cursor, 10);
    expect([...first, ...rest].map((e) => (e.data as { alert_id: string }).alert_id)).toEqual([
      "alt_10",
      "alt_11",
      "alt_12",
      "alt_13",
      "alt_14",
    ]);
    cursor = rest.at(-1)!.cursor;
  });

  it("records many events with one call, in the order given, across statement chunks", async () => {
    // 230 events: more than one multi-row statement's worth (100).
    const inputs = Array.from({ length: 230 }, (_, i) => ({
      type: "price.alert" as const,
      data: priceAlert(1000 + i),
      accountId: "acc_2",
      environment: "sandbox" as const,
    }));
    const ids = await store.db.transaction().execute((trx) => outbox.recordMany(trx, inputs));
    expect(new Set(ids).size).toBe(230);
    const events = await outbox.readAfter(store.db, cursor, 1000);
    expect(events.map((e) => e.id)).toEqual(ids);
    expect(events.map((e) => e.data)).toEqual(inputs.map((input) => input.data));
    expect(events[0]).toMatchObject({ account_id: "acc_2", environment: "sandbox", type: "price.alert" });
    cursor = events.at(-1)!.cursor;
  });

  it("writes none of a batch when one payload is invalid", async () => {
    const bad = { ...priceAlert(2000), threshold: "high" } as unknown as ReturnType<typeof priceAlert>;
    await expect(
      outbox.recordMany(store.db, [
        { type: "price.alert", data: priceAlert(1999), accountId: null },
        ...Array.from({ length: 120 }, (_, i) => ({
          type: "price.alert" as const,
          data: priceAlert(3000 + i),
          accountId: null,
        })),
        { type: "price.alert", data: bad, accountId: null },
      ]),
    ).rejects.toBeInstanceOf(InvalidEventError);
    expect(await outbox.readAfter(store.db, cursor)).toEqual([]);
  });

  if (backend === "postgres") {
    it("never lets a reader pass an event whose transaction commits late", async () => {
      let releaseSlow!: () => void;
      const slowMayCommit = new Promise<void>((resolve) => {
        releaseSlow = resolve;
      });
      let slowRecorded!: () => void;
      const slowHasRecorded = new Promise<void>((resolve) => {
        slowRecorded = resolve;
      });
      // The slow transaction takes the lower sequence number but commits last.
      const slow = store.db.transaction().execute(async (trx) => {
        await outbox.record(trx, { type: "price.alert", data: priceAlert(100), accountId: null });
        slowRecorded();
        await slowMayCommit;
      });
      await slowHasRecorded;
      await outbox.record(store.db, { type: "price.alert", data: priceAlert(101), accountId: null });

      // While the slow one is open, the fast one must not be handed out past it.
      expect(await outbox.readAfter(store.db, cursor)).toEqual([]);
      releaseSlow();
      await slow;
      const events = await outbox.readAfter(store.db, cursor);
      expect(events.map((e) => (e.data as { alert_id: string }).alert_id)).toEqual(["alt_100", "alt_101"]);
    });
  }
});
