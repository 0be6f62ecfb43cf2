/**
 * The hub's fan-out with sockets we control: frames as written, conflation of a slow client (latest
 * wins per market), the soft and hard buffer bounds, and a stalled client cut after its timeout,
 * while other clients keep getting every update.
 */
import { EventEmitter } from "node:events";
import type { Duplex } from "node:stream";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ManualClock } from "../../src/infra/clock";
import { MemoryConnectionSlots } from "../../src/infra/slots/memory";
import type { QuoteUpdate } from "../../src/prices/service";
import { type HubOptions, StreamHub, type StreamPrincipal } from "../../src/stream/hub";

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
  connectionsAllowed: 10,
  marketsPerSubscription: 50,
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

function setup(options: Partial<HubOptions> = {}) {
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
  const hub = new StreamHub(
    {
      clock,
      slots: new MemoryConnectionSlots(),
      authenticate: async () => ({ ok: true, principal }),
      resolveMarkets: async (ids) => ({ found: [...ids], missing: [] }),
      snapshot: () => undefined,
      watch: () => {},
      log: { info() {}, warn() {} },
    },
    { heartbeatMs: 3_600_000, flushIntervalMs: 0, ...options },
  );
  const connect = async (markets: string[]) => {
    const ws = new FakeWs();
    const socket = new FakeSocket();
    hub.attach(ws as unknown as WebSocket, socket as unknown as Duplex, principal, "slot");
    ws.say({ action: "subscribe", market_ids: markets });
    await new Promise((resolve) => setTimeout(resolve, 5));
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
    hub.heartbeat();
    expect(stalled.ws.terminated).toBe(true);
    expect(healthy.socket.messages()).toHaveLength(1);
    expect(hub.stats()).toMatchObject({ connections: 1, slowConsumersDropped: 2 });
    await hub.close();
  });
});
