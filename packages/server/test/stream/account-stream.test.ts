/**
 * The account stream over real sockets, on both stores: a resume replays from the store and goes
 * live with nothing lost or repeated (also across a forced disconnect in the middle of a burst of
 * fills, checked against the events API); types; accounts and environments kept apart; the price
 * stream taking the same actions; CURSOR_EXPIRED; and two instances on PostgreSQL + Redis each
 * delivering an event recorded on the other, once.
 */
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Owner } from "../../src/access/owner";
import { book, setBook, type Trading, tradingApp } from "../orders/setup";
import { bearer, createKey, createTestApp, setAccount, signup, type TestApp } from "../support/app";
import { INFRA_BACKENDS, STORE_BACKENDS } from "../support/backends";
import { StreamClient, type StreamMessage } from "./client";

interface ApiEvent {
  id: string;
  seq: number;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** Every event of the key's account and environment, as the events API lists them. */
async function allEvents(t: TestApp, key: string): Promise<ApiEvent[]> {
  const response = await t.app.inject({
    method: "GET",
    url: "/v1/account/events?limit=1000",
    headers: bearer(key),
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

const events = (client: StreamClient) => client.messages.filter((m) => m.type === "event");

/** Waits until `client` has received the event with this id. */
async function received(client: StreamClient, id: string, timeoutMs = 10_000): Promise<void> {
  await client.next((m) => m.type === "event" && m["id"] === id, 0, timeoutMs);
}

const streamUrl = (t: TestApp, path = "/v1/account/stream") =>
  `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}${path}`;

describe.each(STORE_BACKENDS)("account stream on %s", (store) => {
  let s: Trading;
  let owner: Owner;
  const clients: StreamClient[] = [];
  const open = async (key = s.key, path?: string) => {
    const client = await StreamClient.connect(streamUrl(s.t, path), key);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    s = await tradingApp({ store });
    await s.t.app.listen({ host: "127.0.0.1", port: 0 });
    owner = { accountId: s.accountId, environment: "sandbox" };
    await setAccount(s.t.services, s.accountId, { plan: "enterprise", ws_connections: 50 });
    // The first deposit funds the sandbox (10,000) first, then 1, 2, 3.
    for (let i = 1; i <= 3; i++) await s.t.services.sandbox.deposit(owner, i * 1_000_000);
  });
  afterAll(async () => {
    for (const c of clients) c.ws.terminate();
    await s.t.close();
  });

  it("replays from the store after a cursor, says when it caught up, then sends live events", async () => {
    const client = await open();
    client.send({ action: "resume", after: 0 });
    expect(await client.next((m) => m.type === "resumed")).toEqual({ type: "resumed", after: 0 });
    const caughtUp = await client.next((m) => m.type === "caught_up");
    expect(caughtUp).toEqual({ type: "caught_up", replayed: 4 });
    const api = await allEvents(s.t, s.key);
    // The same events as the API, in the same order, with the webhook payload as data.
    expect(events(client)).toEqual(
      api.map((e) => ({
        type: "event",
        seq: e.seq,
        id: e.id,
        event_type: e.type,
        timestamp: e.timestamp,
        data: e.data,
      })),
    );
    const caughtUpAt = client.messages.indexOf(caughtUp);
    expect(client.messages.slice(caughtUpAt + 1).filter((m) => m.type === "event")).toEqual([]);

    await s.t.services.sandbox.withdraw(owner, 500_000);
    const live = await client.next((m) => m.type === "event" && m["event_type"] === "withdrawal.completed");
    expect(live["data"]).toMatchObject({ amount: 0.5, environment: "sandbox" });
    expect(client.messages.indexOf(live)).toBeGreaterThan(caughtUpAt);

    // Resuming from the middle (by id this time) sends what follows it only.
    const again = await open();
    again.send({ action: "resume", after: api[2]!.id });
    expect(await again.next((m) => m.type === "resumed")).toEqual({ type: "resumed", after: api[2]!.seq });
    await again.next((m) => m.type === "caught_up");
    expect(events(again).map((m) => m["id"])).toEqual([api[3]!.id, live["id"]]);
  });

  it("authenticates by a first auth message too, and says the key's environment", async () => {
    const client = await StreamClient.connect(streamUrl(s.t));
    clients.push(client);
    client.send({ action: "resume", after: 0 });
    expect(await client.next((m) => m.type === "error")).toMatchObject({ code: "UNAUTHORIZED" });
    expect((await client.closedWith()).code).toBe(4001);
    const browser = await StreamClient.connect(streamUrl(s.t));
    clients.push(browser);
    browser.send({ action: "auth", api_key: s.key });
    expect(await browser.next((m) => m.type === "authenticated")).toMatchObject({ environment: "sandbox" });
    browser.send({ action: "resume", after: 0 });
    await browser.next((m) => m.type === "caught_up");
    expect(events(browser).length).toBeGreaterThan(0);
  });

  it("subscribe alone starts live from now, with only the types asked for", async () => {
    const client = await open();
    const head = (await allEvents(s.t, s.key)).at(-1)!;
    client.send({ action: "subscribe", types: ["withdrawal.completed"] });
    expect(await client.next((m) => m.type === "subscribed")).toEqual({
      type: "subscribed",
      types: ["withdrawal.completed"],
      after: head.seq,
    });
    await s.t.services.sandbox.deposit(owner, 1_000_000);
    await s.t.services.sandbox.withdraw(owner, 250_000);
    await client.next((m) => m.type === "event");
    // Changing the types applies from then on.
    client.send({ action: "subscribe", types: ["*"] });
    await client.next((m) => m.type === "subscribed" && (m["types"] as string[])[0] === "*");
    await s.t.services.sandbox.deposit(owner, 2_000_000);
    await client.next((m) => m.type === "event" && m["event_type"] === "deposit.completed");
    expect(events(client).map((m) => [m["event_type"], (m["data"] as { amount: number }).amount])).toEqual([
      ["withdrawal.completed", 0.25],
      ["deposit.completed", 2],
    ]);
  });

  it("never shows another account's or environment's events", async () => {
    const other = await signup(s.t.app);
    const theirKey = (await createKey(s.t.app, other.session, { type: "read_only", environment: "sandbox" }))
      .key;
    const ours = await open();
    const liveEnv = await open(s.liveKey);
    const theirs = await open(theirKey);
    for (const c of [ours, liveEnv, theirs]) c.send({ action: "subscribe", types: ["*"] });
    for (const c of [ours, liveEnv, theirs]) await c.next((m) => m.type === "subscribed");
    await s.t.services.sandbox.deposit({ accountId: other.accountId, environment: "sandbox" }, 7_000_000);
    await s.t.services.sandbox.deposit(owner, 3_000_000);
    const mine = await ours.next((m) => m.type === "event");
    expect(mine["data"]).toMatchObject({ amount: 3 });
    await theirs.next((m) => m.type === "event" && (m["data"] as { amount: number }).amount === 7);
    // Ours arrived after theirs was recorded: had either crossed over, it would be here by now.
    expect(events(ours)).toHaveLength(1);
    expect(events(theirs).map((m) => (m["data"] as { amount: number }).amount)).toEqual([10_000, 7]);
    expect(events(liveEnv)).toEqual([]);
    // Their event as our cursor is refused.
    ours.send({ action: "resume", after: events(theirs)[0]!["seq"] });
    const refusal = await ours.next((m) => m.type === "error");
    expect(refusal).toMatchObject({ code: "VALIDATION_ERROR" });
    expect(refusal["message"]).toContain("not one of this key's account events");
  });

  it("resumes across a forced disconnect in the middle of a burst of fills, losing and repeating nothing", async () => {
    setBook(s.kalshi, book("kalshi:K", { bids: [[0.4, 100_000]], asks: [[0.42, 100_000]] }));
    const before = await allEvents(s.t, s.key);
    const first = await open();
    first.send({ action: "resume", after: before.at(-1)!.seq });
    await first.next((m) => m.type === "caught_up");

    const orders = 30;
    const burst = (async () => {
      for (let i = 0; i < orders; i++) {
        const response = await s.t.app.inject({
          method: "POST",
          url: "/v1/orders",
          headers: bearer(s.key),
          payload: { market_id: "kalshi:K", side: "buy", price: 0.42, amount: 1 },
        });
        expect(response.statusCode, response.body).toBe(201);
      }
    })();
    // Cut the connection (no close handshake) once part of the burst has arrived.
    await first.next((m) => m.type === "event" && events(first).length >= 12, 0, 15_000);
    first.ws.terminate();
    const got = events(first);
    const second = await open();
    second.send({ action: "resume", after: got.at(-1)!["seq"] });
    await burst;
    const after = (await allEvents(s.t, s.key)).slice(before.length);
    expect(after.filter((e) => e.type === "order.filled")).toHaveLength(orders);
    await received(second, after.at(-1)!.id);
    const sequence = [...got, ...events(second)].map((m) => m["id"]);
    expect(sequence).toEqual(after.map((e) => e.id));
  });

  it("the price stream takes the same actions on its one connection", async () => {
    const client = await open(s.key, "/v1/prices/stream");
    const api = await allEvents(s.t, s.key);
    client.send({ action: "subscribe", market_ids: ["kalshi:K"], types: ["deposit.completed"] });
    await client.next((m) => m.type === "subscribed" && Array.isArray(m["market_ids"]));
    await client.next((m) => m.type === "subscribed" && Array.isArray(m["types"]));
    await client.next((m) => m.type === "price_update");
    client.send({ action: "resume", after: api.at(-2)!.seq });
    await client.next((m) => m.type === "caught_up");
    const replayed = events(client);
    const last = api.at(-1)!;
    expect(replayed.map((m) => m["id"])).toEqual(last.type === "deposit.completed" ? [last.id] : []);
    await s.t.services.sandbox.deposit(owner, 4_000_000);
    const live = await client.next(
      (m) => m.type === "event" && (m["data"] as { amount: number }).amount === 4,
    );
    expect(live["event_type"]).toBe("deposit.completed");
  });

  it("answers mistakes with an error and keeps the connection", async () => {
    const client = await open();
    const errorAfter = async (message: unknown) => {
      const from = client.messages.length;
      client.send(message);
      return (await client.next((m: StreamMessage) => m.type === "error", from)) as StreamMessage;
    };
    expect(await errorAfter({ action: "subscribe", market_ids: ["kalshi:K"] })).toMatchObject({
      code: "VALIDATION_ERROR",
      message: expect.stringContaining("/v1/prices/stream"),
    });
    expect(await errorAfter({ action: "subscribe", types: ["order.teleported"] })).toMatchObject({
      code: "VALIDATION_ERROR",
      message: expect.stringContaining("order.teleported"),
    });
    expect(await errorAfter({ action: "resume", after: "yesterday" })).toMatchObject({
      code: "VALIDATION_ERROR",
    });
    expect(await errorAfter({ action: "resume", after: 999_999_999 })).toMatchObject({
      code: "VALIDATION_ERROR",
      message: expect.stringContaining("not one of this key's account events"),
    });
    client.send({ action: "ping" });
    await client.next((m) => m.type === "pong");
    expect(client.closed).toBeUndefined();
  });

  it("answers a cursor older than the retention with CURSOR_EXPIRED and the oldest kept", async () => {
    const old = (await allEvents(s.t, s.key))[0]!;
    s.t.clock.advance(31 * 86_400_000);
    await s.t.services.sandbox.deposit(owner, 5_000_000);
    const client = await open();
    client.send({ action: "resume", after: old.seq });
    const expired = await client.next((m) => m.type === "error");
    const kept = await allEvents(s.t, s.key);
    expect(kept).toHaveLength(1);
    expect(expired).toMatchObject({
      code: "CURSOR_EXPIRED",
      details: {
        retention_days: 30,
        oldest_available: { seq: kept[0]!.seq, id: kept[0]!.id },
        restart_after: 0,
      },
    });
    // Nothing flows until a new resume; after 0 starts at the oldest kept.
    expect(events(client)).toEqual([]);
    client.send({ action: "resume", after: 0 });
    await client.next((m) => m.type === "caught_up");
    expect(events(client).map((m) => m["id"])).toEqual([kept[0]!.id]);
  });
});

const scaledOut = INFRA_BACKENDS.includes("redis") && STORE_BACKENDS.includes("postgres");

describe.runIf(scaledOut)("account stream across instances (PostgreSQL + Redis)", () => {
  let one: TestApp & { schema?: string; redisPrefix: string };
  let two: TestApp;
  let key: string;
  let owner: Owner;
  const clients: StreamClient[] = [];

  beforeAll(async () => {
    one = await createTestApp({ store: "postgres", infra: "redis" });
    two = await createTestApp({
      store: "postgres",
      infra: "redis",
      shareWith: { schema: one.schema!, redisPrefix: one.redisPrefix },
    });
    for (const t of [one, two]) await t.app.listen({ host: "127.0.0.1", port: 0 });
    const account = await signup(one.app);
    key = (await createKey(one.app, account.session, { type: "read_only", environment: "sandbox" })).key;
    owner = { accountId: account.accountId, environment: "sandbox" };
  });
  afterAll(async () => {
    for (const c of clients) c.ws.terminate();
    await two?.close();
    await one?.close();
  });

  it("delivers each event recorded on either instance once to streams on both", async () => {
    const onOne = await StreamClient.connect(streamUrl(one), key);
    const onTwo = await StreamClient.connect(streamUrl(two), key);
    clients.push(onOne, onTwo);
    for (const c of [onOne, onTwo]) c.send({ action: "resume", after: 0 });
    for (const c of [onOne, onTwo]) await c.next((m) => m.type === "caught_up");
    // Recorded on both instances, interleaved and concurrently.
    await Promise.all([
      (async () => {
        for (let i = 1; i <= 10; i++) await one.services.sandbox.deposit(owner, i * 1_000_000);
      })(),
      (async () => {
        for (let i = 1; i <= 10; i++) await two.services.sandbox.withdraw(owner, i * 10_000);
      })(),
    ]);
    const api = await allEvents(one, key);
    expect(api).toHaveLength(21); // the funding deposit, 10 deposits, 10 withdrawals
    for (const c of [onOne, onTwo]) {
      await received(c, api.at(-1)!.id);
      expect(events(c).map((m) => m["id"])).toEqual(api.map((e) => e.id));
    }
  });
});
