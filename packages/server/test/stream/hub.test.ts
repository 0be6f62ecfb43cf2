/**
 * The hub's fan-out with sockets we control: frames as written, conflation of a slow client (latest
 * wins per market), the soft and hard buffer bounds, and a stalled client cut after its timeout,
 * while other clients keep getting every update. The hub's timers run on a manual clock: time moves
 * only when a test moves it.
 */
import { EventEmitter } from "node:events";
import type { Duplex } from "node:stream";
import { seededRandom } from "@crossbook/fakes/random";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { silentLogger } from "../../src/infra/log";
import { MemoryConnectionSlots } from "../../src/infra/slots/memory";
import type { QuoteUpdate } from "../../src/prices/service";
import { type HubOptions, StreamHub } from "../../src/stream/hub";
import type { StreamPrincipal } from "../../src/stream/session";
import { ManualTimers } from "./manual-timers";

/** Decodes unmasked server text frames (RFC 6455 §5.2). */
function decodeFrames(buffer: Buffer): unknown[] {
  const out: unknown[] = [];
  let offset = 0;
  while (offset < buffer.length) {
    expect(buffer[offset]).toBe(0x81);
    let length = buffer[offset + 1]!;
    let start = offset + 2;
    if (length === 126) {
      length = buffer.readUInt16BE(offset + 2);
      start = offset + 4;
    } else if (length === 127) {
      length = Number(buffer.readBigUInt64BE(offset + 2));
      start = offset + 10;
    }
    out.push(JSON.parse(buffer.subarray(start, start + length).toString()));
    offset = start + length;
  }
  return out;
}

class FakeSocket extends EventEmitter {
  writableLength = 0;
  readonly written: Buffer[] = [];
  write(chunk: Buffer): boolean {
    this.written.push(chunk);
    return true;
  }
  messages(): Array<Record<string, unknown>> {
    return decodeFrames(Buffer.concat(this.written)) as Array<Record<string, unknown>>;
  }
}

class FakeWs extends EventEmitter {
  readyState: number = WebSocket.OPEN;
  closedWith: number | undefined;
  terminated = false;
  close(code: number): void {
    this.closedWith = code;
    this.readyState = WebSocket.CLOSED;
    this.emit("close");
  }
  terminate(): void {
    this.terminated = true;
    this.readyState = WebSocket.CLOSED;
    this.emit("close");
  }
  ping(): void {}
  /** A client message, as ws would deliver it. */
  say(message: unknown): void {
    this.emit("message", Buffer.from(JSON.stringify(message)), false);
  }
}

const principal: StreamPrincipal = {
  keyId: "key_1",
  accountId: "acc_1",
  environment: "sandbox",
  connectionsAllowed: 10,
  marketsPerSubscription: 50,
  requestsPerMinute: 1_000,
};

const update = (marketId: string, price: number, t = 0): QuoteUpdate => ({
  market_id: marketId,
  price,
  best_bid: price - 0.01,
  best_ask: price + 0.01,
  volume_24h: 10,
  timestamp: new Date(Date.UTC(2026, 10, 22, 12, 0, t)).toISOString(),
});

const turn = () => new Promise((resolve) => setImmediate(resolve));
/** Lets client messages be handled (their promises) and the flush they queue run. */
const settle = async () => {
  for (let i = 0; i < 3; i++) await turn();
};

function setup(options: Partial<HubOptions> = {}) {
  const clock = new ManualTimers(Date.UTC(2026, 10, 22, 12));
  const hub = new StreamHub(
    {
      clock,
      slots: new MemoryConnectionSlots(),
      authenticate: async () => ({ ok: true, principal }),
      spend: () => ({ allowed: true }),
      resolveMarkets: async (ids) => ({ found: [...ids], missing: [] }),
      snapshot: () => undefined,
      watch: () => {},
      log: silentLogger,
    },
    { heartbeatMs: 3_600_000, flushIntervalMs: 0, timers: clock, ...options },
  );
  const connect = async (markets: string[]) => {
    const ws = new FakeWs();
    const socket = new FakeSocket();
    hub.attach(ws as unknown as WebSocket, socket as unknown as Duplex, principal, "slot");
    ws.say({ action: "subscribe", market_ids: markets });
    await settle();
    socket.written.length = 0; // drop the ack
    return { ws, socket };
  };
  return { hub, clock, connect };
}

describe("stream hub", () => {
  it("writes each turn's updates as one buffer of frames, numbered per connection", async () => {
    const { hub, connect } = setup();
    const a = await connect(["m1", "m2"]);
    const b = await connect(["m2"]);
    hub.publish(update("m1", 0.5));
    hub.publish(update("m2", 0.6));
    await turn();
    expect(a.socket.written).toHaveLength(1);
    expect(a.socket.messages()).toEqual([
      { type: "price_update", ...update("m1", 0.5), seq: 1 },
      { type: "price_update", ...update("m2", 0.6), seq: 2 },
    ]);
    expect(b.socket.messages()).toEqual([{ type: "price_update", ...update("m2", 0.6), seq: 1 }]);
    hub.publish(update("m2", 0.61));
    await turn();
    expect(b.socket.messages().at(-1)).toMatchObject({ price: 0.61, seq: 2 });
    await hub.close();
  });

  it("drops an update identical to the last one of its market (the same tick from another instance)", async () => {
    const { hub, connect } = setup();
    const a = await connect(["m1"]);
    hub.publish(update("m1", 0.5, 1));
    await turn();
    hub.publish(update("m1", 0.5, 2));
    await turn();
    expect(a.socket.messages()).toHaveLength(1);
    await hub.close();
  });

  it("conflates a slow client's updates per market while others get every one, then catches it up", async () => {
    const { hub, connect } = setup({ softBufferBytes: 1_000, hardBufferBytes: 100_000 });
    const slow = await connect(["m1", "m2"]);
    const fast = await connect(["m1", "m2"]);
    slow.socket.writableLength = 5_000; // its socket has not drained
    for (let i = 1; i <= 10; i++) {
      hub.publish(update("m1", i / 100));
      hub.publish(update("m2", 0.5 + i / 100));
      await turn();
    }
    expect(fast.socket.messages()).toHaveLength(20);
    expect(slow.socket.written).toHaveLength(0);
    expect(hub.stats().updatesConflated).toBeGreaterThanOrEqual(18);
    slow.socket.writableLength = 0;
    slow.socket.emit("drain");
    // Only the latest of each market, numbered without gaps.
    expect(slow.socket.messages()).toEqual([
      { type: "price_update", ...update("m1", 0.1), seq: 1 },
      { type: "price_update", ...update("m2", 0.6), seq: 2 },
    ]);
    await hub.close();
  });

  it("disconnects a client past the hard buffer bound, and one stalled past its timeout", async () => {
    const { hub, clock, connect } = setup({
      softBufferBytes: 1_000,
      hardBufferBytes: 10_000,
      stallTimeoutMs: 30_000,
    });
    const flooded = await connect(["m1"]);
    const stalled = await connect(["m1"]);
    const healthy = await connect(["m1"]);
    flooded.socket.writableLength = 20_000;
    stalled.socket.writableLength = 5_000;
    hub.publish(update("m1", 0.3));
    await turn();
    expect(flooded.ws.terminated).toBe(true);
    expect(stalled.ws.terminated).toBe(false);
    clock.advance(31_000);
    await hub.heartbeat();
    expect(stalled.ws.terminated).toBe(true);
    expect(healthy.socket.messages()).toHaveLength(1);
    expect(hub.stats()).toMatchObject({ connections: 1, slowConsumersDropped: 2 });
    await hub.close();
  });
});

describe("stream hub pacing", () => {
  it("writes a connection at most once per flush interval; a quiet one at once", async () => {
    const { hub, clock, connect } = setup({ flushIntervalMs: 60 });
    const a = await connect(["m1"]);
    hub.publish(update("m1", 0.5));
    await turn();
    expect(a.socket.written).toHaveLength(1); // quiet until now: no wait
    hub.publish(update("m1", 0.51));
    await turn();
    hub.publish(update("m1", 0.52));
    await turn();
    clock.advance(59);
    expect(a.socket.written).toHaveLength(1); // within its interval
    clock.advance(1);
    expect(a.socket.written).toHaveLength(2);
    expect(a.socket.messages().map((m) => m["price"])).toEqual([0.5, 0.52]); // latest wins
    await hub.close();
  });

  it("works a long queue in slices, and an update arriving between slices joins the pass under way", async () => {
    const { hub, clock } = setup();
    /** A socket whose write takes 0.25 ms, as a busy kernel's would: 120 of them outlast a slice. */
    class SlowSocket extends FakeSocket {
      override write(chunk: Buffer): boolean {
        clock.advance(0.25);
        return super.write(chunk);
      }
    }
    const conns: Array<{ socket: FakeSocket }> = [];
    for (let i = 0; i < 120; i++) {
      const ws = new FakeWs();
      const socket = new SlowSocket();
      hub.attach(ws as unknown as WebSocket, socket as unknown as Duplex, principal, "slot");
      ws.say({ action: "subscribe", market_ids: ["m1"] });
      conns.push({ socket });
    }
    await settle();
    for (const c of conns) c.socket.written.length = 0;

    hub.publish(update("m1", 0.5));
    await turn();
    const writtenFirst = conns.filter((c) => c.socket.written.length > 0).length;
    // One slice wrote some, not all: the event loop got a turn in between.
    expect(writtenFirst).toBeGreaterThan(0);
    expect(writtenFirst).toBeLessThan(conns.length);
    hub.publish(update("m1", 0.6));
    for (let i = 0; i < 50 && conns.some((c) => c.socket.messages().at(-1)?.["price"] !== 0.6); i++)
      await turn();
    for (const [index, c] of conns.entries()) {
      const prices = c.socket.messages().map((m) => m["price"]);
      // Written before the newer update: both, in order. Not yet written: only the newer one, in
      // the same pass (latest wins), not after a pass of its own.
      expect(prices).toEqual(index < writtenFirst ? [0.5, 0.6] : [0.6]);
      expect(c.socket.messages().map((m) => m["seq"])).toEqual(prices.map((_, i) => i + 1));
    }
    await hub.close();
  });
});

describe("stream hub heartbeat", () => {
  it("pings thousands of peers a chunk per turn, not all in one", async () => {
    const { hub } = setup();
    let pinged = 0;
    for (let i = 0; i < 600; i++) {
      const ws = new FakeWs();
      ws.ping = () => {
        pinged++;
      };
      hub.attach(ws as unknown as WebSocket, new FakeSocket() as unknown as Duplex, principal, "slot");
    }
    const done = hub.heartbeat();
    expect(pinged).toBe(256); // the first chunk, then the event loop gets a turn
    await done;
    expect(pinged).toBe(600);
    await hub.close();
  });
});

describe("stream hub timers", () => {
  const anonymous = (hub: StreamHub) => {
    const ws = new FakeWs();
    const socket = new FakeSocket();
    hub.attach(ws as unknown as WebSocket, socket as unknown as Duplex, null, null);
    return { ws, socket };
  };

  it("closes a connection that sends no auth message by the deadline (4008), not before", async () => {
    const { hub, clock } = setup({ authTimeoutMs: 5_000 });
    const { ws, socket } = anonymous(hub);
    clock.advance(4_999);
    expect(ws.closedWith).toBeUndefined();
    clock.advance(1);
    expect(socket.messages()).toEqual([
      { type: "error", code: "AUTH_TIMEOUT", message: 'send {"action":"auth","api_key":…} within 5000 ms' },
    ]);
    expect(ws.closedWith).toBe(4008);
    await hub.close();
  });

  it("forgets the deadline of a connection that authenticates in time", async () => {
    const { hub, clock } = setup({ authTimeoutMs: 5_000 });
    const { ws, socket } = anonymous(hub);
    ws.say({ action: "auth", api_key: "cb_live_key" });
    await settle();
    clock.advance(60_000);
    expect(ws.closedWith).toBeUndefined();
    expect(socket.messages()).toEqual([
      {
        type: "authenticated",
        key_id: "key_1",
        environment: "sandbox",
        limits: { connections: 10, markets_per_subscription: 50 },
      },
    ]);
    await hub.close();
  });

  it("cuts a peer that does not answer the close handshake 2 s after the close frame", async () => {
    const { hub, clock, connect } = setup();
    const { ws } = await connect(["m1"]);
    // The close frame goes out, the peer never answers it.
    ws.close = (code: number) => {
      ws.closedWith = code;
      ws.readyState = WebSocket.CLOSING;
    };
    expect(hub.closeKey("key_1", "API key revoked")).toBe(1);
    expect(ws.closedWith).toBe(4001);
    clock.advance(1_999);
    expect(ws.terminated).toBe(false);
    clock.advance(1);
    expect(ws.terminated).toBe(true);
    expect(hub.stats().connections).toBe(0);
    await hub.close();
  });

  it("pings on the heartbeat interval and cuts a peer that missed the last ping", async () => {
    const { hub, clock, connect } = setup({ heartbeatMs: 20_000 });
    const answering = await connect(["m1"]);
    const silent = await connect(["m1"]);
    let pings = 0;
    answering.ws.ping = () => {
      pings++;
      answering.ws.emit("pong");
    };
    clock.advance(19_999);
    expect(pings).toBe(0);
    clock.advance(1);
    expect(pings).toBe(1);
    clock.advance(20_000);
    expect(pings).toBe(2);
    expect(silent.ws.terminated).toBe(true);
    expect(answering.ws.terminated).toBe(false);
    expect(hub.stats().connections).toBe(1);
    await hub.close();
  });
});

describe("stream hub under random traffic", () => {
  it.each(Array.from({ length: 25 }, (_, i) => i + 1))(
    "keeps seq, order, subscriptions and latest-wins right (seed %i)",
    async (seed) => {
      const rnd = seededRandom(seed); // deterministic: a failing seed can be replayed
      const pick = <T>(items: readonly T[]) => items[Math.floor(rnd() * items.length)]!;
      const markets = Array.from({ length: 8 }, (_, i) => `m${i}`);
      const clock = new ManualTimers(Date.UTC(2026, 10, 22, 12));
      const hub = new StreamHub(
        {
          clock,
          slots: new MemoryConnectionSlots(),
          authenticate: async () => ({ ok: true, principal: { ...principal, marketsPerSubscription: 6 } }),
          spend: () => ({ allowed: true }),
          resolveMarkets: async (ids) => ({ found: [...ids], missing: [] }),
          // Markets nobody has published yet start at price 0.
          snapshot: (id) => update(id, 0),
          watch: () => {},
          log: silentLogger,
        },
        {
          heartbeatMs: 3_600_000,
          flushIntervalMs: 0,
          softBufferBytes: 1_000,
          hardBufferBytes: 1e9,
          stallTimeoutMs: 1e9,
          messagesPerSecond: 1e9,
          timers: clock,
        },
      );
      const latest = new Map<string, number>();
      /** Latest prices as of the last flush: whatever is written after it is at least as new. */
      let settled = new Map<string, number>();
      const flush = async () => {
        settled = new Map(latest);
        await turn();
      };
      class CheckedSocket extends FakeSocket {
        override write(chunk: Buffer): boolean {
          for (const m of decodeFrames(chunk) as Array<Record<string, unknown>>) {
            if (m["type"] !== "price_update") continue;
            expect(m["price"] as number).toBeGreaterThanOrEqual(settled.get(m["market_id"] as string) ?? 0);
          }
          return super.write(chunk);
        }
      }
      const conns: Array<{ ws: FakeWs; socket: FakeSocket; open: boolean }> = [];
      const open = () => {
        const ws = new FakeWs();
        const socket = new CheckedSocket();
        hub.attach(
          ws as unknown as WebSocket,
          socket as unknown as Duplex,
          { ...principal, marketsPerSubscription: 6 },
          "slot",
        );
        conns.push({ ws, socket, open: true });
      };
      let tick = 0;
      for (let i = 0; i < 4; i++) open();
      for (let step = 0; step < 300; step++) {
        const live = conns.filter((c) => c.open);
        const r = rnd();
        if (r < 0.45) {
          // Some markets busy, some rarely updated (so snapshots and slow clients meet updates).
          const id = markets[Math.floor(rnd() ** 3 * markets.length)]!;
          const price = ++tick / 10_000;
          latest.set(id, price);
          hub.publish(update(id, price));
        } else if (r < 0.6 && live.length > 0) {
          const ids = markets.filter(() => rnd() < 0.4);
          if (ids.length > 0) pick(live).ws.say({ action: "subscribe", market_ids: ids });
        } else if (r < 0.7 && live.length > 0) {
          const ids = markets.filter(() => rnd() < 0.3);
          if (ids.length > 0) pick(live).ws.say({ action: "unsubscribe", market_ids: ids });
        } else if (r < 0.8 && live.length > 0) {
          const c = pick(live);
          if (c.socket.writableLength > 0) {
            c.socket.writableLength = 0;
            c.socket.emit("drain");
          } else {
            c.socket.writableLength = 5_000; // backed up: updates conflate until it drains
          }
        } else if (r < 0.83 && live.length > 1) {
          const c = pick(live);
          c.open = false;
          c.ws.terminate();
        } else if (r < 0.86) {
          open();
        } else {
          await flush();
        }
      }
      // Everyone drains; what is pending goes out.
      await flush();
      for (const c of conns) {
        if (!c.open || c.socket.writableLength === 0) continue;
        c.socket.writableLength = 0;
        c.socket.emit("drain");
      }
      await flush();
      await flush();

      for (const c of conns) {
        const subscribed = new Set<string>();
        const lastPrice = new Map<string, number>();
        let seq = 0;
        for (const m of c.socket.messages()) {
          if (m["type"] === "subscribed") for (const id of m["market_ids"] as string[]) subscribed.add(id);
          if (m["type"] === "unsubscribed")
            for (const id of m["market_ids"] as string[]) subscribed.delete(id);
          if (m["type"] !== "price_update") continue;
          const id = m["market_id"] as string;
          // Numbered without gaps, only for markets it is subscribed to, never older than before.
          expect(m["seq"]).toBe(++seq);
          expect(subscribed.has(id)).toBe(true);
          expect(m["price"] as number).toBeGreaterThanOrEqual(lastPrice.get(id) ?? 0);
          lastPrice.set(id, m["price"] as number);
        }
        if (!c.open) continue;
        // In the end, the latest price of every market it follows.
        for (const id of subscribed) expect(lastPrice.get(id)).toBe(latest.get(id) ?? 0);
      }
      expect(hub.stats().connections).toBe(conns.filter((c) => c.open).length);
      expect(hub.stats().messagesSent).toBeGreaterThan(50);
      await hub.close();
    },
  );
});
