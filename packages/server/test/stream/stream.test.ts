/**
 * The price stream over real sockets: both ways to authenticate, acks and rejections, the snapshot
 * on subscribe, updates in order with `seq`, plan limits, heartbeats, revocation, and errors. The
 * app's clock also runs the hub's timers: the auth deadline and the flush interval pass only when a
 * test moves it.
 */
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { createKey, createTestApp, setAccount, signup, type TestApp } from "../support/app";
import { TestVenue, testMarket } from "../support/fake-venue";
import { book, StreamClient, UpgradeRefused } from "./client";
import { ManualTimers } from "./manual-timers";

describe("price stream", () => {
  let t: TestApp;
  let url: string;
  let session: string;
  let key: string;
  const clock = new ManualTimers(Date.UTC(2026, 10, 22, 12, 0, 0));
  const kalshi = new TestVenue("kalshi");
  const clients: StreamClient[] = [];
  const open = async (k?: string) => {
    const client = await StreamClient.connect(url, k);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    const markets = Array.from({ length: 60 }, (_, i) => testMarket("kalshi", `M${i}`));
    kalshi.set(...markets);
    t = await createTestApp({
      clock,
      venues: new Map<VenueId, Venue>([["kalshi", kalshi]]),
      streamOptions: { authTimeoutMs: 300, timers: clock },
    });
    await t.services.catalog.syncVenue("kalshi");
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    url = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/prices/stream`;
    const account = await signup(t.app);
    session = account.session;
    // Pro tier for the key count; the plan (stream limits) stays standard.
    await setAccount(t.services, account.accountId, { tier: "pro" });
    key = (await createKey(t.app, session, { type: "read_only" })).key;
  });
  afterAll(async () => {
    for (const c of clients) c.ws.terminate();
    await t.close();
  });

  it("authenticates by header, acks a subscription, sends the current quote, then updates in order", async () => {
    const client = await open(key);
    client.send({ action: "subscribe", market_ids: ["kalshi:M1", "kalshi:M2"] });
    const ack = await client.next((m) => m.type === "subscribed");
    expect(ack).toEqual({ type: "subscribed", market_ids: ["kalshi:M1", "kalshi:M2"], rejected: [] });
    // Snapshots from the catalog's last-seen prices (bid 0.41, ask 0.43), numbered from 1.
    await client.next((m) => m.type === "price_update" && m["market_id"] === "kalshi:M2");
    expect(client.updates()).toEqual([
      {
        type: "price_update",
        market_id: "kalshi:M1",
        price: 0.42,
        best_bid: 0.41,
        best_ask: 0.43,
        volume_24h: 100,
        timestamp: "2026-11-22T12:00:00.000Z",
        seq: 1,
      },
      expect.objectContaining({ market_id: "kalshi:M2", seq: 2 }),
    ]);
    expect(client.messages.indexOf(ack)).toBe(0);

    for (let i = 1; i <= 5; i++) {
      t.clock.advance(1_000);
      kalshi.emit({ kind: "book", book: book("kalshi:M1", 400_000 + i * 10_000, 600_000) });
    }
    await client.next((m) => m.type === "price_update" && m["best_bid"] === 0.45);
    const m1 = client.updates("kalshi:M1").slice(1);
    expect(m1.map((u) => u["best_bid"])).toEqual([0.41, 0.42, 0.43, 0.44, 0.45].slice(5 - m1.length));
    const seqs = client.updates().map((u) => u["seq"]);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(m1.at(-1)).toMatchObject({ price: 0.525, best_ask: 0.6, timestamp: "2026-11-22T12:00:05.000Z" });
    client.close();
  });

  it("authenticates browsers with a first message, and only with a valid key", async () => {
    const client = await open();
    client.send({ action: "auth", api_key: key });
    expect(await client.next((m) => m.type === "authenticated")).toMatchObject({
      limits: { connections: 2, markets_per_subscription: 50 },
    });
    client.send({ action: "subscribe", market_ids: ["kalshi:M3"] });
    await client.next((m) => m.type === "price_update" && m["market_id"] === "kalshi:M3");
    client.close();

    const bad = await open();
    bad.send({ action: "auth", api_key: `cb_live_${"x".repeat(40)}` });
    expect(await bad.next((m) => m.type === "error")).toMatchObject({ code: "UNAUTHORIZED" });
    expect((await bad.closedWith()).code).toBe(4001);

    const early = await open();
    early.send({ action: "subscribe", market_ids: ["kalshi:M3"] });
    expect(await early.next((m) => m.type === "error")).toMatchObject({ code: "UNAUTHORIZED" });
    expect((await early.closedWith()).code).toBe(4001);

    const silent = await open();
    clock.advance(300); // its auth deadline
    expect(await silent.next((m) => m.type === "error")).toMatchObject({ code: "AUTH_TIMEOUT" });
    expect((await silent.closedWith()).code).toBe(4008);
  });

  it("refuses an upgrade with a bad key (401) or without read (403), with the envelope", async () => {
    const refused = async (k: string) => {
      try {
        await open(k);
      } catch (error) {
        if (error instanceof UpgradeRefused) return { status: error.status, body: JSON.parse(error.body) };
        throw error;
      }
      throw new Error("upgrade was accepted");
    };
    expect(await refused(`cb_live_${"y".repeat(40)}`)).toMatchObject({
      status: 401,
      body: { success: false, error: { code: "UNAUTHORIZED" } },
    });
    const tradeOnly = (await createKey(t.app, session, { type: "agent", permissions: ["trade"] })).key;
    expect(await refused(tradeOnly)).toMatchObject({ status: 403, body: { error: { code: "FORBIDDEN" } } });
  });

  it("rejects unknown markets and markets past the plan's subscription limit, by id and reason", async () => {
    const client = await open(key);
    client.send({ action: "subscribe", market_ids: ["kalshi:M0", "kalshi:NOPE"] });
    expect(await client.next((m) => m.type === "subscribed")).toEqual({
      type: "subscribed",
      market_ids: ["kalshi:M0"],
      rejected: [{ market_id: "kalshi:NOPE", reason: "MARKET_NOT_FOUND" }],
    });
    // Standard plan: 50 markets per subscription; M0 is already in.
    const many = Array.from({ length: 55 }, (_, i) => `kalshi:M${i}`);
    client.send({ action: "subscribe", market_ids: many });
    const ack = await client.next((m) => m.type === "subscribed", 1);
    expect((ack["market_ids"] as string[]).length).toBe(50);
    expect(ack["rejected"]).toEqual(
      many.slice(50).map((id) => ({ market_id: id, reason: "SUBSCRIPTION_LIMIT" })),
    );
    expect(ack["limit"]).toEqual({ markets_per_subscription: 50, subscribed: 50 });

    client.send({ action: "unsubscribe", market_ids: ["kalshi:M0", "kalshi:M59"] });
    expect(await client.next((m) => m.type === "unsubscribed")).toEqual({
      type: "unsubscribed",
      market_ids: ["kalshi:M0"],
      rejected: [{ market_id: "kalshi:M59", reason: "NOT_SUBSCRIBED" }],
    });
    const before = client.updates("kalshi:M0").length;
    // The connection was written (M0's snapshot) at this instant: what follows waits out its flush interval.
    clock.advance(1_000);
    kalshi.emit({ kind: "book", book: book("kalshi:M0", 100_000, 900_000) });
    kalshi.emit({ kind: "book", book: book("kalshi:M1", 110_000, 900_000) });
    await client.next((m) => m.type === "price_update" && m["best_bid"] === 0.11);
    expect(client.updates("kalshi:M0")).toHaveLength(before);
    client.close();
  });

  it("answers bad messages with an error and stays open", async () => {
    const client = await open(key);
    client.send("not json");
    expect(await client.next((m) => m.type === "error")).toMatchObject({ code: "VALIDATION_ERROR" });
    client.send({ action: "subscribe", market_ids: "kalshi:M1" });
    expect(await client.next((m) => m.type === "error", 1)).toMatchObject({
      code: "VALIDATION_ERROR",
      message: expect.stringContaining("market_ids"),
    });
    client.send({ action: "dance" });
    await client.next((m) => m.type === "error", 2);
    client.send({ action: "ping" });
    await client.next((m) => m.type === "pong");
    expect(client.closed).toBeUndefined();
    client.close();
  });

  it("limits connections per key to the plan's figure, on both ways in", async () => {
    const limited = (await createKey(t.app, session, { type: "read_only" })).key;
    const a = await open(limited);
    const b = await open(limited);
    await expect(open(limited)).rejects.toMatchObject({ status: 429 });
    const c = await open();
    c.send({ action: "auth", api_key: limited });
    expect(await c.next((m) => m.type === "error")).toMatchObject({ code: "CONNECTION_LIMIT" });
    expect((await c.closedWith()).code).toBe(4029);
    a.close();
    await a.closedWith();
    // The slot is free again once the server has seen the close.
    let d: StreamClient | undefined;
    for (let i = 0; i < 20 && !d; i++) {
      d = await open(limited).catch(() => undefined);
      if (!d) await new Promise((r) => setTimeout(r, 50));
    }
    expect(d).toBeDefined();
    b.close();
    d!.close();
  });

  it("cuts a peer that stops answering pings", async () => {
    const client = await open(key);
    await new Promise((r) => setTimeout(r, 50));
    await t.stream.hub.heartbeat(); // ping
    await new Promise((r) => setTimeout(r, 100)); // the client answers
    await t.stream.hub.heartbeat();
    expect(client.closed).toBeUndefined();
    // Stop reading: pings go unanswered.
    (client.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await t.stream.hub.heartbeat();
    await t.stream.hub.heartbeat();
    (client.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    expect((await client.closedWith()).code).toBe(1006);
  });

  it("closes the connections of a key when it is revoked", async () => {
    const created = await createKey(t.app, session, { type: "read_only" });
    const client = await open(created.key);
    await t.app.inject({
      method: "DELETE",
      url: `/v1/api-keys/${created.id}`,
      headers: { authorization: `Bearer ${session}` },
    });
    expect(await client.next((m) => m.type === "error")).toMatchObject({ code: "UNAUTHORIZED" });
    expect((await client.closedWith()).code).toBe(4001);
  });

  it("answers a plain GET with 426 and the envelope", async () => {
    const response = await t.app.inject({
      method: "GET",
      url: "/v1/prices/stream",
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.statusCode).toBe(426);
    expect(response.json().error.code).toBe("UPGRADE_REQUIRED");
  });
});
