/**
 * The market-channel client against a local ws server: the documented subscribe message, text PING
 * keep-alives, books from snapshots and deltas, and after a dropped socket a reconnect that
 * resubscribes every token and reports `resynced` once fresh snapshots arrive (VENUES.md §1.4).
 */
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { systemClock } from "../../../src/infra/clock";
import { PolymarketVenue } from "../../../src/venues/polymarket/adapter";
import type { FeedEvent } from "../../../src/venues/venue";
import { C1, C2, fixture, fixtureText, T1N, T1Y, T2N, T2Y } from "./fixtures";
import { startScriptedServer } from "./server";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function waitFor<T>(check: () => T | undefined, ms = 5_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - start > ms) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("market feed", () => {
  it("subscribes, pings, keeps books, reconnects and resubscribes", async () => {
    const http = await startScriptedServer();
    cleanups.push(http.close);
    http.on("GET", "/gamma/markets/keyset", () => ({ body: { markets: [fixture("gamma-market.json")] } }));

    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1", path: "/ws/market" });
    cleanups.push(() => new Promise((r) => wss.close(() => r())));
    const received: string[][] = [];
    const sockets: WebSocket[] = [];
    wss.on("connection", (socket) => {
      const mine: string[] = [];
      received.push(mine);
      sockets.push(socket);
      socket.on("message", (data) => {
        const text = data.toString();
        mine.push(text);
        if (text === "PING") socket.send("PONG");
        else if (JSON.parse(text).type === "market") socket.send(fixtureText("ws-book.json"));
      });
    });
    await new Promise((r) => wss.once("listening", r));
    const port = (wss.address() as AddressInfo).port;

    const venue = new PolymarketVenue({
      gammaUrl: `${http.url}/gamma`,
      clobUrl: `${http.url}/clob`,
      wsUrl: `ws://127.0.0.1:${port}/ws`,
      clock: systemClock,
      feed: { pingIntervalMs: 50, backoffBaseMs: 20, backoffCapMs: 50 },
    });
    const events: FeedEvent[] = [];
    const sub = await venue.subscribe([`polymarket:${C1}`], (e) => events.push(e));
    cleanups.push(() => sub.close());

    await waitFor(() => events.find((e) => e.kind === "book"));
    expect(JSON.parse(received[0]![0]!)).toEqual({
      assets_ids: [T1Y, T1N],
      type: "market",
      custom_feature_enabled: true,
    });
    expect(events[0]).toEqual({ kind: "connection", state: "connected" });
    await waitFor(() => received[0]!.includes("PING"));

    sockets[0]!.send(fixtureText("ws-price-change.json"));
    const changed = await waitFor(() =>
      events.findLast(
        (e): e is Extract<FeedEvent, { kind: "book" }> =>
          e.kind === "book" && e.book.yes.bids[0]?.price === 510_000,
      ),
    );
    expect(changed.book.no.bids).toEqual([{ price: 470_000, size: 40_000_000 }]);

    // Drop the socket: expect disconnected, a reconnect with the full subscription, and resynced.
    sockets[0]!.terminate();
    await waitFor(() => events.find((e) => e.kind === "connection" && e.state === "disconnected"));
    await waitFor(() => events.find((e) => e.kind === "connection" && e.state === "resynced"));
    expect(JSON.parse(received[1]![0]!).assets_ids).toEqual([T1Y, T1N]);
    const states = events.filter((e) => e.kind === "connection").map((e) => (e as { state: string }).state);
    expect(states).toEqual(["connected", "disconnected", "connected", "resynced"]);

    // Adding and removing markets on a live socket uses the documented operation messages.
    http.on("GET", "/gamma/markets/keyset", () => ({
      body: { markets: [fixture("gamma-market-no-first.json")] },
    }));
    await sub.add([`polymarket:${C2}`]);
    await waitFor(() => received[1]!.some((m) => m.includes('"operation":"subscribe"')));
    const added = JSON.parse(received[1]!.find((m) => m.includes('"operation"'))!);
    expect(added).toEqual({ assets_ids: [T2Y, T2N], operation: "subscribe" });
    await sub.remove([`polymarket:${C2}`]);
    await waitFor(() => received[1]!.some((m) => m.includes('"operation":"unsubscribe"')));
  });

  it("says 'disconnected' once while the venue is unreachable, then connects when it comes up", async () => {
    const http = await startScriptedServer();
    cleanups.push(http.close);
    http.on("GET", "/gamma/markets/keyset", () => ({ body: { markets: [fixture("gamma-market.json")] } }));
    // Find a free port, then leave it closed for a while.
    const probe = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise((r) => probe.once("listening", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));

    const venue = new PolymarketVenue({
      gammaUrl: `${http.url}/gamma`,
      clobUrl: `${http.url}/clob`,
      wsUrl: `ws://127.0.0.1:${port}/ws/market`,
      clock: systemClock,
      feed: { pingIntervalMs: 50, backoffBaseMs: 10, backoffCapMs: 30 },
    });
    const events: FeedEvent[] = [];
    const sub = await venue.subscribe([`polymarket:${C1}`], (e) => events.push(e));
    cleanups.push(() => sub.close());
    await waitFor(() => events.find((e) => e.kind === "connection"));
    await new Promise((r) => setTimeout(r, 150)); // several failed attempts
    expect(events).toEqual([
      {
        kind: "connection",
        state: "disconnected",
        reason: `could not connect to ws://127.0.0.1:${port}/ws/market`,
      },
    ]);

    const wss = new WebSocketServer({ port, host: "127.0.0.1", path: "/ws/market" });
    cleanups.push(() => new Promise((r) => wss.close(() => r())));
    wss.on("connection", (socket) => socket.send(fixtureText("ws-book.json")));
    await waitFor(() => events.find((e) => e.kind === "book"));
    expect(events[1]).toEqual({ kind: "connection", state: "connected" });
  });
});
