/**
 * One connection's account events (stream/account-feed.ts) with a scripted store, tail and socket:
 * the switch from replay to live drops what was replayed and keeps what was not, whatever arrives
 * when; a client that does not read is closed with 4009 naming the last event sent, never sent a
 * partial view; a new resume stops the replay under way.
 */
import { describe, expect, it } from "vitest";
import type { Owner } from "../../src/access/owner";
import type { AccountEvents } from "../../src/events/account-events";
import type { AccountEventTail, TailedEvent, TailListener } from "../../src/events/live-tail";
import type { AccountEventRow } from "../../src/events/repo";
import { silentLogger } from "../../src/infra/log";
import { AccountFeed, type AccountFeedLimits, type FeedConnection } from "../../src/stream/account-feed";
import { framePayloads } from "./fake-connection";

const owner: Owner = { accountId: "acc_1", environment: "sandbox" };

const row = (seq: number, type = "order.filled"): AccountEventRow => ({
  seq,
  id: `evt_${seq}`,
  type,
  account_id: owner.accountId,
  environment: owner.environment,
  data: JSON.stringify({ n: seq }),
  created_at: "2026-11-28T00:00:00.000Z",
  tx: "0",
});
const tailed = (seq: number, type?: string): TailedEvent => {
  const r = row(seq, type);
  return { row: r, position: { tx: r.tx, seq: r.seq } };
};

/** Server frames back to messages. */
const decode = (bytes: Buffer) =>
  framePayloads(bytes).map((text) => JSON.parse(text) as Record<string, unknown>);

class FakeConnection implements FeedConnection {
  closed = false;
  bufferedBytes = 0;
  readonly messages: Array<Record<string, unknown>> = [];
  closedWith: { code: number; reason: string } | null = null;
  #drain: Array<() => void> = [];
  buffered() {
    return this.bufferedBytes;
  }
  write(frames: Buffer) {
    if (this.closed) throw new Error("written after close");
    this.messages.push(...decode(frames));
  }
  control(message: object) {
    if (this.closed) throw new Error("written after close");
    this.messages.push(message as Record<string, unknown>);
  }
  drained() {
    return new Promise<void>((resolve) => this.#drain.push(resolve));
  }
  drain() {
    this.bufferedBytes = 0;
    for (const resolve of this.#drain.splice(0)) resolve();
  }
  close(code: number, reason: string) {
    this.closedWith = { code, reason };
    this.closed = true;
  }
  eventSeqs() {
    return this.messages.filter((m) => m["type"] === "event").map((m) => m["seq"]);
  }
}

/** A store of rows, read in pages; `onRead` runs inside each read (to race live events against it). */
class FakeStore {
  rows: AccountEventRow[] = [];
  onRead: ((page: number) => void) | null = null;
  reads = 0;
  async latest() {
    const last = this.rows.at(-1);
    return { tx: "0", seq: last ? last.seq : 0 };
  }
  async position(_owner: Owner, after: string) {
    return { tx: "0", seq: Number(after) };
  }
  async read(_owner: Owner, cursor: { seq: number }, types: readonly string[], limit: number) {
    const page = this.reads++;
    await Promise.resolve();
    this.onRead?.(page);
    return this.rows
      .filter((r) => r.seq > cursor.seq && (types.length === 0 || types.includes(r.type)))
      .slice(0, limit);
  }
}

class FakeTail {
  listener: TailListener | null = null;
  async listen(_owner: Owner, listener: TailListener) {
    this.listener = listener;
    return () => {
      this.listener = null;
    };
  }
  /** Records `seqs` in the store and hands them to the listener, as the tail would. */
  record(store: FakeStore, ...seqs: number[]) {
    for (const seq of seqs) store.rows.push(row(seq));
    this.listener?.deliver(seqs.map((seq) => tailed(seq)));
  }
}

const limits: AccountFeedLimits = {
  softBufferBytes: 1_000,
  hardBufferBytes: 10_000,
  stallTimeoutMs: 30,
  maxPending: 50,
  replayPage: 3,
};

function setUp(overrides: Partial<AccountFeedLimits> = {}) {
  const store = new FakeStore();
  const tail = new FakeTail();
  const connection = new FakeConnection();
  const feed = new AccountFeed(
    {
      tail: tail as unknown as AccountEventTail,
      events: store as unknown as AccountEvents,
      log: silentLogger,
      limits: {},
    },
    { ...limits, ...overrides },
    owner,
    connection,
  );
  return { store, tail, connection, feed };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("account feed", () => {
  it("switches from replay to live with nothing lost and nothing repeated, whatever arrives when", async () => {
    const { store, tail, connection, feed } = setUp();
    for (let seq = 1; seq <= 7; seq++) store.rows.push(row(seq));
    // Live events arrive during every page of the replay: some the replay will also read, some not.
    store.onRead = (page) => {
      if (page === 0) tail.record(store, 8);
      if (page === 1) tail.record(store, 9, 10);
      if (page === 2) tail.record(store, 11);
    };
    await feed.resume("2", undefined);
    await settle();
    tail.record(store, 12);
    expect(connection.eventSeqs()).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const types = connection.messages.map((m) => m["type"]);
    expect(types[0]).toBe("resumed");
    expect(connection.messages[0]).toEqual({ type: "resumed", after: 2 });
    // caught_up after the events read from the store, before the live ones that were waiting.
    const caughtUp = connection.messages.find((m) => m["type"] === "caught_up")!;
    expect(caughtUp["replayed"]).toBeGreaterThanOrEqual(8);
  });

  it("sends live events of the types asked for only", async () => {
    const { store, tail, connection, feed } = setUp();
    store.rows.push(row(1));
    await feed.subscribe(["order.cancelled"]);
    await settle();
    store.rows.push(row(2), row(3, "order.cancelled"));
    tail.listener!.deliver([tailed(2), tailed(3, "order.cancelled")]);
    feed.subscribe(["*"]);
    tail.record(store, 4);
    expect(connection.messages).toEqual([
      // It starts after the account's last event, and says which.
      { type: "subscribed", types: ["order.cancelled"], after: 1 },
      expect.objectContaining({ type: "event", seq: 3, event_type: "order.cancelled", data: { n: 3 } }),
      { type: "subscribed", types: ["*"] },
      expect.objectContaining({ type: "event", seq: 4 }),
    ]);
  });

  it("starting from now misses nothing recorded while it starts", async () => {
    const { store, tail, connection, feed } = setUp();
    store.rows.push(row(1));
    // Committed after the account's last event was looked up, before the tail took its place: the
    // tail will not hand it on, the replay after the head finds it.
    const listen = tail.listen.bind(tail);
    tail.listen = async (o, l) => {
      store.rows.push(row(2));
      return listen(o, l);
    };
    await feed.subscribe(["*"]);
    await settle();
    tail.record(store, 3);
    expect(connection.eventSeqs()).toEqual([2, 3]);
    expect(connection.messages.some((m) => m["type"] === "caught_up")).toBe(false);
  });

  it("closes a client that stopped reading with 4009, naming the last event sent", async () => {
    const { store, tail, connection, feed } = setUp();
    await feed.subscribe(["*"]);
    await settle();
    tail.record(store, 1, 2);
    connection.bufferedBytes = 20_000; // past the hard bound
    tail.record(store, 3);
    expect(connection.eventSeqs()).toEqual([1, 2]);
    expect(connection.closedWith).toEqual({ code: 4009, reason: "slow consumer: resume after 2" });
    expect(connection.messages.at(-1)).toMatchObject({ type: "error", code: "SLOW_CONSUMER" });
    // Nothing more, and it no longer listens.
    expect(tail.listener).toBeNull();
  });

  it("closes a client whose replay waits on it past the stall timeout", async () => {
    const { store, connection, feed } = setUp();
    for (let seq = 1; seq <= 9; seq++) store.rows.push(row(seq));
    connection.bufferedBytes = 5_000; // above the soft bound: the replay waits for a drain
    await feed.resume("0", undefined);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(connection.eventSeqs()).toEqual([]);
    expect(connection.closedWith?.code).toBe(4009);
    expect(connection.closedWith?.reason).toBe("slow consumer");
  });

  it("waits for the socket to drain between replay pages", async () => {
    const { store, connection, feed } = setUp({ stallTimeoutMs: 5_000 });
    for (let seq = 1; seq <= 9; seq++) store.rows.push(row(seq));
    store.onRead = () => {
      connection.bufferedBytes = 5_000;
    };
    await feed.resume("0", undefined);
    await settle();
    expect(connection.eventSeqs()).toEqual([1, 2, 3]);
    connection.drain();
    await settle();
    expect(connection.eventSeqs()).toEqual([1, 2, 3, 4, 5, 6]);
    connection.drain();
    await settle();
    connection.drain();
    await settle();
    expect(connection.eventSeqs()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(connection.closedWith).toBeNull();
  });

  it("closes rather than hold more live events than its bound while a replay runs", async () => {
    const { store, tail, connection, feed } = setUp({ maxPending: 5 });
    for (let seq = 1; seq <= 3; seq++) store.rows.push(row(seq));
    store.onRead = (page) => {
      if (page === 0) tail.record(store, 4, 5, 6, 7, 8, 9);
    };
    await feed.resume("0", undefined);
    await settle();
    expect(connection.closedWith?.code).toBe(4009);
    expect(connection.eventSeqs()).toEqual([]);
  });

  it("a new resume stops the replay under way and starts from its own cursor", async () => {
    const { store, connection, feed } = setUp();
    for (let seq = 1; seq <= 9; seq++) store.rows.push(row(seq));
    let second: Promise<void> | undefined;
    store.onRead = (page) => {
      if (page === 0) second = feed.resume("6", undefined);
    };
    await feed.resume("0", undefined);
    await second;
    await settle();
    const resumed = connection.messages.filter((m) => m["type"] === "resumed");
    expect(resumed).toEqual([
      { type: "resumed", after: 0 },
      { type: "resumed", after: 6 },
    ]);
    // The first replay's page read when the second resume came is not sent.
    expect(connection.eventSeqs()).toEqual([7, 8, 9]);
  });
});
