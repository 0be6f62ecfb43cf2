import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { Crossbook, type GapInfo, PriceStream, type PriceUpdate } from "../src/index";
import { type Demo, startDemo } from "./support/demo";
import { waitFor as waitForEvent } from "./support/wait";

const waitFor = <T>(stream: PriceStream, event: string, test?: (value: T) => boolean, ms = 15_000) =>
  waitForEvent<T>(stream, event, test, ms);

describe("PriceStream against a scripted server", () => {
  let server: WebSocketServer;
  let url: string;
  beforeAll(async () => {
    server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise((resolve) => server.once("listening", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.on("connection", (socket, request) => {
      expect(request.headers.authorization).toBe("Bearer cb_test_k");
      socket.on("message", (raw) => {
        const message = JSON.parse(String(raw));
        if (message.action !== "subscribe") return;
        socket.send(JSON.stringify({ type: "subscribed", market_ids: message.market_ids, rejected: [] }));
        const update = (seq: number, price: number) =>
          JSON.stringify({
            type: "price_update",
            market_id: "m1",
            price,
            best_bid: null,
            best_ask: null,
            volume_24h: 0,
            timestamp: new Date().toISOString(),
            seq,
          });
        socket.send(update(1, 0.5));
        socket.send(update(3, 0.6)); // seq 2 never arrives
      });
    });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("notices a jump in seq and fetches current prices", async () => {
    const fetched: string[][] = [];
    const stream = new PriceStream({
      baseUrl: url,
      apiKey: "cb_test_k",
      marketIds: ["m1"],
      fetchPrices: async (ids) => {
        fetched.push(ids);
        return { m1: { price: 0.61, best_bid: 0.6, best_ask: 0.62, volume_24h: 5, timestamp: "t" } };
      },
    });
    const gap = await waitFor<GapInfo>(stream, "gap");
    expect(gap).toEqual({ reason: "seq", expected: 2, received: 3 });
    const refetched = await waitFor<PriceUpdate>(stream, "update", (u) => u.source === "refetch");
    expect(refetched).toMatchObject({ market_id: "m1", price: 0.61, source: "refetch" });
    expect(fetched).toEqual([["m1"]]);
    stream.close();
  });
});

describe("PriceStream against a running crossbook", () => {
  let demo: Demo;
  let client: Crossbook;
  let marketIds: string[];

  beforeAll(async () => {
    demo = await startDemo({ tickMs: 100 });
    client = new Crossbook({ apiKey: demo.sandboxKey, environment: "sandbox", baseUrl: demo.url });
    for (let i = 0; i < 100 && !marketIds?.length; i++) {
      const { data } = await client.markets.list({ status: "open", limit: 20 });
      marketIds = data.map((m) => m.id);
      if (!marketIds.length) await new Promise((r) => setTimeout(r, 200));
    }
  }, 90_000);
  afterAll(async () => {
    await demo?.close();
  });

  it("streams updates by async iteration, with seq from 1", async () => {
    const stream = client.prices.stream(marketIds);
    const seen: PriceUpdate[] = [];
    for await (const update of stream) {
      seen.push(update);
      if (seen.length >= 3) break;
    }
    stream.close();
    expect(seen[0]!.seq).toBe(1);
    expect(seen.map((u) => u.seq)).toEqual([1, 2, 3]);
    expect(marketIds).toContain(seen[0]!.market_id);
  });

  it("reconnects, re-subscribes and catches up after the connection drops", async () => {
    const stream = client.prices.stream(marketIds.slice(0, 5), { reconnectDelayMs: 50 });
    await waitFor(stream, "subscribed");
    const gap = waitFor<GapInfo>(stream, "gap");
    const resubscribed = waitFor<{ market_ids: string[] }>(stream, "subscribed");
    const refetched = waitFor<PriceUpdate>(stream, "update", (u) => u.source === "refetch");
    stream.dropConnection();
    expect(await gap).toEqual({ reason: "reconnect" });
    expect((await resubscribed).market_ids.sort()).toEqual(marketIds.slice(0, 5).sort());
    expect(marketIds.slice(0, 5)).toContain((await refetched).market_id);
    // The new connection numbers its messages from 1 again.
    const fresh = await waitFor<PriceUpdate>(stream, "update", (u) => u.source === "stream");
    expect(fresh.seq).toBeGreaterThanOrEqual(1);
    expect(stream.connected).toBe(true);
    stream.close();
  });

  it("stops for good on a bad key instead of hammering the server", async () => {
    const stream = new PriceStream({
      baseUrl: demo.url,
      apiKey: "cb_test_not_a_real_key",
      reconnectDelayMs: 10,
    });
    let attempts = 0;
    stream.on("error", (e: Error) => {
      if (/upgrade refused/.test(e.message)) attempts++;
    });
    const error = await waitFor<Error>(stream, "error");
    expect(error.message).toMatch(/401/);
    // With a 10 ms reconnect delay a retrying client would have tried dozens of times by now.
    await new Promise((r) => setTimeout(r, 500));
    expect(stream.connected).toBe(false);
    expect(attempts).toBe(1);
    stream.close();
  });
});
