/**
 * The price stream's abuse limits: subscribe/unsubscribe messages spend the key's request budget
 * (the one REST spends), unknown market ids are remembered instead of looked up again, and
 * connections waiting for their `auth` message are capped per client address and in total.
 */
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, setAccount, signup, type TestApp } from "../support/app";
import { TestVenue, testMarket } from "../support/fake-venue";
import { StreamClient, UpgradeRefused } from "./client";

describe("price stream abuse limits", () => {
  let t: TestApp;
  let url: string;
  let session: string;
  let key: string;
  const kalshi = new TestVenue("kalshi");
  const clients: StreamClient[] = [];
  const open = async (k?: string, headers: Record<string, string> = {}) => {
    const client = await StreamClient.connect(url, k, headers);
    clients.push(client);
    return client;
  };
  /** Opens a connection without a key, as if from `address` (the app trusts one proxy's X-Forwarded-For). */
  const fromAddress = (address: string) => open(undefined, { "x-forwarded-for": address });
  const refusal = async (attempt: Promise<unknown>) => {
    try {
      await attempt;
    } catch (error) {
      if (error instanceof UpgradeRefused) return { status: error.status, body: JSON.parse(error.body) };
      throw error;
    }
    throw new Error("upgrade was accepted");
  };
  /** Moves the clock to the start of the next minute: a fresh rate-limit window. */
  const nextMinute = () => t.clock.set((Math.floor(t.clock.now() / 60_000) + 1) * 60_000);

  beforeAll(async () => {
    kalshi.set(...Array.from({ length: 5 }, (_, i) => testMarket("kalshi", `M${i}`)));
    t = await createTestApp({
      venues: new Map<VenueId, Venue>([["kalshi", kalshi]]),
      config: { trustProxy: 1, streamUnauthenticatedPerAddress: 2, streamUnauthenticatedMax: 3 },
      streamOptions: { authTimeoutMs: 60_000 },
    });
    await t.services.catalog.syncVenue("kalshi");
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    url = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/prices/stream`;
    const account = await signup(t.app);
    session = account.session;
    await setAccount(t.services, account.accountId, { tier: "pro" });
    key = (await createKey(t.app, session, { type: "read_only" })).key;
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) {
      c.ws.terminate();
      if (!c.closed) await c.closedWith().catch(() => {});
    }
    // The server sees the closes (and gives back the places) a moment after the client.
    await new Promise((resolve) => setTimeout(resolve, 50));
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await t.close();
  });

  it("spends a request of the key's budget on each subscribe and unsubscribe, as REST does", async () => {
    nextMinute();
    // A free-tier account: 60 requests a minute.
    const free = await signup(t.app);
    const limited = (await createKey(t.app, free.session, { type: "read_only" })).key;
    const client = await open(limited); // opening: 1
    client.send({ action: "subscribe", market_ids: ["kalshi:M1"] }); // 2
    await client.next((m) => m.type === "subscribed");
    client.send({ action: "unsubscribe", market_ids: ["kalshi:M1"] }); // 3
    await client.next((m) => m.type === "unsubscribed");
    const account = await t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(limited) }); // 4
    expect(account.headers["ratelimit-remaining"]).toBe("56");

    // Spend the rest over REST but one.
    for (let i = 0; i < 55; i++) {
      await t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(limited) });
    }
    client.send({ action: "subscribe", market_ids: ["kalshi:M2"] }); // 60: the last one
    expect(await client.next((m) => m.type === "subscribed", 2)).toMatchObject({ market_ids: ["kalshi:M2"] });
    const from = client.messages.length;
    client.send({ action: "subscribe", market_ids: ["kalshi:M3"] });
    expect(await client.next((m) => m.type === "error", from)).toEqual({
      type: "error",
      code: "RATE_LIMITED",
      message: expect.stringMatching(/^Rate limit of 60 requests per minute exceeded; retry in \d+ s$/),
    });
    const second = client.messages.length;
    client.send({ action: "unsubscribe", market_ids: ["kalshi:M2"] });
    expect(await client.next((m) => m.type === "error", second)).toMatchObject({ code: "RATE_LIMITED" });
    // Neither message was applied, and the connection stays open.
    client.send({ action: "ping" });
    await client.next((m) => m.type === "pong", from);
    const refused = client.messages.slice(from);
    expect(refused.filter((m) => m.type === "subscribed" || m.type === "unsubscribed")).toEqual([]);
    expect(client.closed).toBeUndefined();

    // The next minute, the budget is whole again: M2 was still subscribed.
    nextMinute();
    const at = client.messages.length;
    client.send({ action: "unsubscribe", market_ids: ["kalshi:M2", "kalshi:M3"] });
    expect(await client.next((m) => m.type === "unsubscribed", at)).toEqual({
      type: "unsubscribed",
      market_ids: ["kalshi:M2"],
      rejected: [{ market_id: "kalshi:M3", reason: "NOT_SUBSCRIBED" }],
    });
  });

  it("remembers unknown market ids for a minute instead of looking them up again", async () => {
    nextMinute();
    const resolve = vi.spyOn(t.services.prices, "resolve");
    const looked = () => resolve.mock.calls.flatMap(([ids]) => [...ids]);
    const client = await open(key);
    const subscribe = async (ids: string[]) => {
      const from = client.messages.length;
      client.send({ action: "subscribe", market_ids: ids });
      return client.next((m) => m.type === "subscribed", from);
    };
    expect(await subscribe(["kalshi:M0", "kalshi:NOPE"])).toMatchObject({
      market_ids: ["kalshi:M0"],
      rejected: [{ market_id: "kalshi:NOPE", reason: "MARKET_NOT_FOUND" }],
    });
    expect(looked()).toContain("kalshi:NOPE");
    resolve.mockClear();
    for (let i = 0; i < 5; i++) {
      expect(await subscribe(["kalshi:NOPE"])).toMatchObject({
        rejected: [{ market_id: "kalshi:NOPE", reason: "MARKET_NOT_FOUND" }],
      });
    }
    expect(looked()).toEqual([]);

    // A minute later it is looked up again.
    t.clock.advance(61_000);
    await subscribe(["kalshi:NOPE"]);
    expect(looked()).toEqual(["kalshi:NOPE"]);
  });

  it("takes a market the catalog sync adds at once, though it was remembered as unknown", async () => {
    const client = await open(key);
    client.send({ action: "subscribe", market_ids: ["kalshi:LATE"] });
    expect(await client.next((m) => m.type === "subscribed")).toMatchObject({
      rejected: [{ market_id: "kalshi:LATE", reason: "MARKET_NOT_FOUND" }],
    });
    kalshi.set(testMarket("kalshi", "LATE"));
    await t.services.catalog.syncVenue("kalshi");
    client.send({ action: "subscribe", market_ids: ["kalshi:LATE"] });
    expect(await client.next((m) => m.type === "subscribed", 1)).toEqual({
      type: "subscribed",
      market_ids: ["kalshi:LATE"],
      rejected: [],
    });
  });

  it("caps connections waiting for their auth message per address and in total, with 429", async () => {
    await fromAddress("198.51.100.1");
    const waiting = await fromAddress("198.51.100.1");
    expect(await refusal(fromAddress("198.51.100.1"))).toMatchObject({
      status: 429,
      body: {
        success: false,
        error: { code: "CONNECTION_LIMIT", message: expect.stringContaining("address") },
      },
    });
    // Another address still gets in, up to the total (3).
    await fromAddress("198.51.100.2");
    expect(await refusal(fromAddress("198.51.100.3"))).toMatchObject({
      status: 429,
      body: { error: { code: "CONNECTION_LIMIT", message: expect.stringContaining("waiting") } },
    });
    // A key in the Authorization header is not waiting: never counted.
    await open(key);

    // Once one authenticates, its place is free again.
    waiting.send({ action: "auth", api_key: key });
    await waiting.next((m) => m.type === "authenticated");
    await fromAddress("198.51.100.1");
    expect(await refusal(fromAddress("198.51.100.4"))).toMatchObject({ status: 429 });
  });

  it("gives a waiting connection's place back when it closes", async () => {
    const a = await fromAddress("198.51.100.9");
    await fromAddress("198.51.100.9");
    expect(await refusal(fromAddress("198.51.100.9"))).toMatchObject({ status: 429 });
    a.close();
    await a.closedWith();
    let again: StreamClient | undefined;
    for (let i = 0; i < 20 && !again; i++) {
      again = await fromAddress("198.51.100.9").catch(() => undefined);
      if (!again) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(again).toBeDefined();
  });
});
