/**
 * The WebSocket feed against a scripted local server: the documented subscribe command, a signed
 * upgrade, a local book from snapshot + deltas, a seq gap -> resubscribe -> fresh snapshot ->
 * `resynced`, and reconnect with resubscribe after a drop.
 */
import { constants, generateKeyPairSync, verify } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { systemClock } from "../../../src/infra/clock";
import { KalshiFeed } from "../../../src/venues/kalshi/feed";
import type { FeedEvent } from "../../../src/venues/venue";

interface Conn {
  ws: WebSocket;
  req: IncomingMessage;
  commands: Array<{ id: number; cmd: string; params: Record<string, unknown> }>;
}

let wss: WebSocketServer;
let url: string;
let conns: Conn[];
let nextSid: number;
/** How the scripted server answers a subscribe; default: ack each channel, snapshot each book. */
let onSubscribe: (conn: Conn, command: Conn["commands"][number]) => void;

const send = (ws: WebSocket, frame: unknown) => ws.send(JSON.stringify(frame));
const snapshot = (sid: number, seq: number, ticker: string, yes: string[][], no: string[][]) => ({
  type: "orderbook_snapshot",
  sid,
  seq,
  msg: { market_ticker: ticker, market_id: "m", yes_dollars_fp: yes, no_dollars_fp: no },
});
const delta = (sid: number, seq: number, ticker: string, side: string, price: string, d: string) => ({
  type: "orderbook_delta",
  sid,
  seq,
  msg: { market_ticker: ticker, price_dollars: price, delta_fp: d, side, ts_ms: 1795348800000 },
});

/** sid of each channel in the latest subscription acks, per connection. */
const sids: Array<Record<string, number>> = [];

function defaultSubscribe(conn: Conn, command: Conn["commands"][number]) {
  const channels = command.params["channels"] as string[];
  const tickers = command.params["market_tickers"] as string[];
  const index = conns.indexOf(conn);
  sids[index] ??= {};
  for (const channel of channels) {
    const sid = nextSid++;
    sids[index]![channel] = sid;
    send(conn.ws, { id: command.id, type: "subscribed", msg: { channel, sid } });
    if (channel === "orderbook_delta") {
      tickers.forEach((t, i) => {
        send(conn.ws, snapshot(sid, i + 1, t, [["0.4000", "10.00"]], [["0.5500", "5.00"]]));
      });
    }
  }
}

beforeEach(async () => {
  conns = [];
  sids.length = 0;
  nextSid = 1;
  onSubscribe = defaultSubscribe;
  wss = new WebSocketServer({ port: 0, host: "127.0.0.1", path: "/trade-api/ws/v2" });
  wss.on("connection", (ws, req) => {
    const conn: Conn = { ws, req, commands: [] };
    conns.push(conn);
    ws.on("message", (data) => {
      const command = JSON.parse(data.toString());
      conn.commands.push(command);
      if (command.cmd === "subscribe") onSubscribe(conn, command);
      if (command.cmd === "unsubscribe")
        send(ws, { id: command.id, type: "unsubscribed", sid: command.params.sids[0] });
    });
  });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/trade-api/ws/v2`;
});

const feeds: KalshiFeed[] = [];
afterEach(async () => {
  for (const f of feeds.splice(0)) await f.close();
  for (const c of wss.clients) c.terminate();
  await new Promise<void>((resolve) => wss.close(() => resolve()));
});

function start(marketIds: string[], extra: Partial<ConstructorParameters<typeof KalshiFeed>[0]> = {}) {
  const events: FeedEvent[] = [];
  const reports: string[] = [];
  const feed = new KalshiFeed({
    wsUrl: url,
    clock: systemClock,
    onEvent: (e) => events.push(e),
    report: (kind) => reports.push(kind),
    backoffBaseMs: 10,
    backoffCapMs: 50,
    ...extra,
  });
  feeds.push(feed);
  return { feed, events, reports, started: feed.start(marketIds) };
}

async function until(check: () => boolean, what: string) {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
const books = (events: FeedEvent[]) =>
  events.filter((e): e is Extract<FeedEvent, { kind: "book" }> => e.kind === "book").map((e) => e.book);

describe("KalshiFeed", () => {
  it("signs the upgrade and subscribes with the documented command format", async () => {
    const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const { started, events } = start(["kalshi:FED-1", "FED-2"], {
      key: { keyId: "kid", privateKeyPem: pem },
    });
    await started;
    await until(() => conns[0]?.commands.length === 1, "subscribe");
    expect(conns[0]!.commands[0]).toEqual({
      id: 1,
      cmd: "subscribe",
      params: { channels: ["orderbook_delta", "ticker", "trade"], market_tickers: ["FED-1", "FED-2"] },
    });
    const h = conns[0]!.req.headers;
    expect(h["kalshi-access-key"]).toBe("kid");
    const ok = verify(
      "sha256",
      Buffer.from(`${h["kalshi-access-timestamp"]}GET/trade-api/ws/v2`),
      { key: pair.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
      Buffer.from(String(h["kalshi-access-signature"]), "base64"),
    );
    expect(ok).toBe(true);
    expect(events[0]).toEqual({ kind: "connection", state: "connected" });
  });

  it("keeps the book from snapshot + deltas and emits quotes and trades", async () => {
    const { started, events } = start(["FED-1"]);
    await started;
    await until(() => books(events).length === 1, "snapshot");
    expect(books(events)[0]).toMatchObject({
      marketId: "kalshi:FED-1",
      yes: { bids: [{ price: 400_000, size: 10_000_000 }], asks: [{ price: 450_000, size: 5_000_000 }] },
      no: { bids: [{ price: 550_000, size: 5_000_000 }], asks: [{ price: 600_000, size: 10_000_000 }] },
      sequence: 1,
    });
    const sid = sids[0]!["orderbook_delta"]!;
    const ws = conns[0]!.ws;
    send(ws, delta(sid, 2, "FED-1", "yes", "0.4100", "7.00"));
    send(ws, delta(sid, 3, "FED-1", "yes", "0.4000", "-10.00"));
    send(ws, delta(sid, 4, "FED-1", "no", "0.5500", "-2.00"));
    send(ws, {
      type: "ticker",
      sid: sids[0]!["ticker"],
      msg: {
        market_ticker: "FED-1",
        price_dollars: "0.4100",
        yes_bid_dollars: "0.4100",
        yes_ask_dollars: "0.4500",
        ts_ms: 1,
      },
    });
    send(ws, {
      type: "trade",
      sid: sids[0]!["trade"],
      msg: {
        trade_id: "t1",
        market_ticker: "FED-1",
        yes_price_dollars: "0.4100",
        no_price_dollars: "0.5900",
        count_fp: "3.00",
        taker_outcome_side: "yes",
        ts_ms: 2,
      },
    });
    await until(() => events.some((e) => e.kind === "trade"), "trade");
    const last = books(events).at(-1)!;
    expect(last.yes.bids).toEqual([{ price: 410_000, size: 7_000_000 }]);
    expect(last.no.bids).toEqual([{ price: 550_000, size: 3_000_000 }]);
    expect(last.yes.asks).toEqual([{ price: 450_000, size: 3_000_000 }]);
    expect(last.sequence).toBe(4);
    expect(events.find((e) => e.kind === "quote")).toMatchObject({
      bestBid: 410_000,
      bestAsk: 450_000,
      lastPrice: 410_000,
    });
    expect(events.find((e) => e.kind === "trade")).toMatchObject({
      trade: { outcome: "yes", price: 410_000, size: 3_000_000 },
    });
  });

  it("a seq gap drops the book, resubscribes for a fresh snapshot and emits resynced", async () => {
    const { started, events } = start(["FED-1"]);
    await started;
    await until(() => books(events).length === 1, "snapshot");
    const oldSid = sids[0]!["orderbook_delta"]!;
    const ws = conns[0]!.ws;
    onSubscribe = (conn, command) => {
      const sid = nextSid++;
      send(conn.ws, { id: command.id, type: "subscribed", msg: { channel: "orderbook_delta", sid } });
      // A late delta from the old sid must be ignored; the new snapshot is the truth.
      send(conn.ws, delta(oldSid, 4, "FED-1", "yes", "0.3000", "99.00"));
      send(conn.ws, snapshot(sid, 1, "FED-1", [["0.4300", "8.00"]], []));
    };
    send(ws, delta(oldSid, 3, "FED-1", "yes", "0.4100", "1.00")); // seq 2 skipped
    await until(() => events.some((e) => e.kind === "connection" && e.state === "resynced"), "resynced");
    const commands = conns[0]!.commands.slice(1);
    expect(commands).toEqual([
      { id: 2, cmd: "unsubscribe", params: { sids: [oldSid] } },
      { id: 3, cmd: "subscribe", params: { channels: ["orderbook_delta"], market_tickers: ["FED-1"] } },
    ]);
    const after = books(events);
    expect(after).toHaveLength(2); // the gapped delta was never published
    expect(after[1]).toMatchObject({
      yes: { bids: [{ price: 430_000, size: 8_000_000 }], asks: [] },
      no: { bids: [] },
    });
    expect(events.at(-1)).toMatchObject({
      kind: "connection",
      state: "resynced",
      reason: expect.stringMatching(/expected 2, got 3/),
    });
    // Deltas on the new sid apply on top of the fresh snapshot.
    send(ws, delta(nextSid - 1, 2, "FED-1", "no", "0.5000", "4.00"));
    await until(() => books(events).length === 3, "delta after resync");
    expect(books(events)[2]?.no.bids).toEqual([{ price: 500_000, size: 4_000_000 }]);
  });

  it("a delta that would go negative is treated like a gap", async () => {
    const { started, events } = start(["FED-1"]);
    await started;
    await until(() => books(events).length === 1, "snapshot");
    send(conns[0]!.ws, delta(sids[0]!["orderbook_delta"]!, 2, "FED-1", "yes", "0.4000", "-11.00"));
    await until(() => events.some((e) => e.kind === "connection" && e.state === "resynced"), "resynced");
    expect(books(events)).toHaveLength(2);
  });

  it("reconnects after a drop and resubscribes every market, including ones added later", async () => {
    const { started, events, feed } = start(["FED-1"]);
    await started;
    await until(() => books(events).length === 1, "snapshot");
    await feed.add(["kalshi:FED-2"]);
    await until(() => books(events).length === 2, "snapshot of the added market");
    expect(conns[0]!.commands[1]).toMatchObject({ cmd: "subscribe", params: { market_tickers: ["FED-2"] } });
    conns[0]!.ws.terminate();
    await until(() => conns.length === 2 && conns[1]!.commands.length === 1, "resubscribe after reconnect");
    expect(conns[1]!.commands[0]).toMatchObject({
      cmd: "subscribe",
      params: { market_tickers: ["FED-1", "FED-2"] },
    });
    await until(() => books(events).length === 4, "fresh snapshots");
    const states = events.filter((e) => e.kind === "connection").map((e) => (e as { state: string }).state);
    expect(states).toEqual(["connected", "disconnected", "connected"]);
  });

  it("remove() unsubscribes a sid it empties and narrows one it does not", async () => {
    const { started, events, feed } = start(["FED-1", "FED-2"]);
    await started;
    await until(() => books(events).length === 2, "snapshots");
    await feed.remove(["FED-2"]);
    await until(() => conns[0]!.commands.length === 4, "update commands");
    expect(
      conns[0]!.commands.slice(1).map((c) => [c.cmd, c.params["action"], c.params["market_tickers"]]),
    ).toEqual([
      ["update_subscription", "delete_markets", ["FED-2"]],
      ["update_subscription", "delete_markets", ["FED-2"]],
      ["update_subscription", "delete_markets", ["FED-2"]],
    ]);
    await feed.remove(["FED-1"]);
    await until(() => conns[0]!.commands.length === 7, "unsubscribes");
    expect(conns[0]!.commands.slice(4).map((c) => c.cmd)).toEqual([
      "unsubscribe",
      "unsubscribe",
      "unsubscribe",
    ]);
  });

  it("with a key and onFill, also subscribes the private fill channel and hands fills over", async () => {
    const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const fills: unknown[] = [];
    const { started } = start(["FED-1"], {
      key: { keyId: "kid", privateKeyPem: pem },
      onFill: (f) => fills.push(f),
    });
    await started;
    await until(() => sids[0]?.["fill"] !== undefined, "fill subscription");
    expect(conns[0]!.commands[0]?.params["channels"]).toEqual(["orderbook_delta", "ticker", "trade", "fill"]);
    send(conns[0]!.ws, {
      type: "fill",
      sid: sids[0]!["fill"],
      msg: {
        trade_id: "t-1",
        order_id: "o-1",
        market_ticker: "FED-1",
        yes_price_dollars: "0.4000",
        count_fp: "2.00",
        fee_cost: "0.0200",
        outcome_side: "no",
        book_side: "ask",
        ts_ms: 1700000000000,
      },
    });
    await until(() => fills.length === 1, "fill");
    // (no, ask) at YES 0.40, read on the YES book: sell YES @ 0.40 (the same order as buy NO @ 0.60).
    expect(fills[0]).toMatchObject({
      venueFillId: "t-1",
      outcome: "yes",
      side: "sell",
      price: 400_000,
      size: 2_000_000,
      fee: 20_000,
    });
  });

  it("start() settles even when the venue is down, and keeps retrying", async () => {
    const port = (wss.address() as AddressInfo).port;
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    const { started, events } = start(["FED-1"], { wsUrl: `ws://127.0.0.1:${port}/trade-api/ws/v2` });
    await started;
    expect(events[0]).toMatchObject({ kind: "connection", state: "disconnected", reason: "connect failed" });
    await until(() => events.filter((e) => e.kind === "connection").length >= 2, "a retry");
    wss = new WebSocketServer({ port: 0, host: "127.0.0.1" }); // for afterEach
  });
});
