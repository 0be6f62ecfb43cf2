/**
 * `AccountStream` against a scripted `/v1/account/stream`: a small WebSocket server that speaks the
 * protocol (resume / subscribe / ping; resumed, subscribed, event, caught_up, error) from an
 * in-memory list of events, and can be told to misbehave per connection (drop mid-burst, close with
 * a code, repeat events). The events' seqs are deliberately not increasing in delivery order, as on
 * PostgreSQL, so a client that compared seqs would lose or repeat some.
 */
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import {
  type AccountEvent,
  AccountStream,
  type AccountStreamClose,
  AccountStreamError,
  type AccountStreamExpired,
  type AccountStreamOptions,
  Crossbook,
  MemoryCursorStore,
} from "../src/index";
import { waitFor } from "./support/wait";

interface StoredEvent {
  seq: number;
  id: string;
  event_type: string;
  timestamp: string;
  data: { n: number };
}

/** What one connection does besides following the protocol. */
interface ConnectionScript {
  /** Close with this code right after the upgrade. */
  closeAtOnce?: number;
  /** After this many events were sent on the connection, terminate it (as a network failure). */
  terminateAfter?: number;
  /** After this many events were sent, close with `code`. */
  closeAfter?: { events: number; code: number; reason?: string };
  /** Send every event twice. */
  repeat?: boolean;
}

interface Connection {
  socket: WebSocket;
  request: IncomingMessage;
  received: Array<Record<string, unknown>>;
  /** Index in the event list of the next event to send; undefined until the flow started. */
  position?: number;
  types?: Set<string>;
  sent: number;
  replaying: boolean;
  replayed: number;
  pumping: boolean;
  clientCloseCode?: number;
}

/** A memory cursor that records every save. */
class RecordingCursor extends MemoryCursorStore {
  readonly saved: number[] = [];
  override async save(seq: number) {
    this.saved.push(seq);
    await super.save(seq);
  }
}

const TYPES = ["order.created", "order.filled", "deposit.completed"];

/** `count` events whose seqs go up overall but not one by one in delivery order (pairs swapped). */
function makeEvents(count: number, firstSeq = 1): StoredEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const seq = firstSeq + (i % 2 === 0 ? i + 1 : i - 1);
    return {
      seq,
      id: `evt_${seq}`,
      event_type: TYPES[i % TYPES.length]!,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      data: { n: i },
    };
  });
}

class ScriptedServer {
  readonly wss: WebSocketServer;
  readonly connections: Connection[] = [];
  /** Per connection number (0 = the first), what it does besides the protocol. */
  scripts: ConnectionScript[] = [];
  url = "";

  constructor(readonly events: StoredEvent[]) {
    this.wss = new WebSocketServer({
      port: 0,
      host: "127.0.0.1",
      verifyClient: (info, done) => {
        if (info.req.headers.authorization === "Bearer cb_test_wrong") done(false, 401, "Unauthorized");
        else done(true);
      },
    });
    this.wss.on("connection", (socket, request) => this.#accept(socket, request));
  }

  async start(): Promise<this> {
    await new Promise((resolve) => this.wss.once("listening", resolve));
    this.url = `http://127.0.0.1:${(this.wss.address() as AddressInfo).port}`;
    return this;
  }

  /** Records new events and sends them to every connection whose flow is live. */
  append(events: StoredEvent[]): void {
    this.events.push(...events);
    for (const connection of this.connections) void this.#pump(connection);
  }

  async close(): Promise<void> {
    for (const socket of this.wss.clients) socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  #accept(socket: WebSocket, request: IncomingMessage): void {
    const script = this.scripts[this.connections.length] ?? {};
    const connection: Connection = {
      socket,
      request,
      received: [],
      sent: 0,
      replaying: false,
      replayed: 0,
      pumping: false,
    };
    this.connections.push(connection);
    socket.on("close", (code) => {
      connection.clientCloseCode = code;
    });
    if (script.closeAtOnce) {
      socket.close(script.closeAtOnce, "scripted");
      return;
    }
    socket.on("message", (raw) => {
      const message = JSON.parse(String(raw)) as Record<string, unknown>;
      connection.received.push(message);
      const types = Array.isArray(message.types) ? (message.types as string[]) : undefined;
      if (message.action === "ping") socket.send(JSON.stringify({ type: "pong" }));
      if (message.action === "subscribe") {
        connection.types = types!.includes("*") ? undefined : new Set(types);
        // As the service does: the first subscribe starts after the account's last event, and says which.
        const starts = connection.position === undefined;
        if (starts) connection.position = this.events.length;
        const head = this.events.at(-1)?.seq ?? 0;
        socket.send(JSON.stringify({ type: "subscribed", types, ...(starts ? { after: head } : {}) }));
        void this.#pump(connection, script);
      }
      if (message.action === "resume") {
        const after = message.after;
        let position = 0;
        if (after !== 0) {
          const index = this.events.findIndex((e) => e.seq === after || e.id === after);
          if (index < 0) {
            const oldest = this.events[0];
            socket.send(
              JSON.stringify({
                type: "error",
                code: "CURSOR_EXPIRED",
                message: "the cursor is older than the events kept",
                details: {
                  retention_days: 30,
                  oldest_available: oldest ? { seq: oldest.seq, id: oldest.id } : null,
                  restart_after: 0,
                },
              }),
            );
            connection.position = undefined;
            return;
          }
          position = index + 1;
        }
        connection.types = types ? new Set(types) : undefined;
        connection.position = position;
        connection.replaying = true;
        connection.replayed = 0;
        socket.send(JSON.stringify({ type: "resumed", after }));
        void this.#pump(connection, script);
      }
    });
  }

  /** Sends what the connection has not had yet, one event per turn of the event loop. */
  async #pump(connection: Connection, script: ConnectionScript = {}): Promise<void> {
    if (connection.pumping) return;
    connection.pumping = true;
    const { socket } = connection;
    try {
      while (connection.position !== undefined && connection.position < this.events.length) {
        if (socket.readyState !== socket.OPEN) return;
        const event = this.events[connection.position++]!;
        if (connection.types && !connection.types.has(event.event_type)) continue;
        const text = JSON.stringify({ type: "event", ...event });
        socket.send(text);
        if (script.repeat) socket.send(text);
        connection.sent++;
        if (connection.replaying) connection.replayed++;
        if (connection.sent === script.terminateAfter) {
          socket.terminate();
          return;
        }
        if (connection.sent === script.closeAfter?.events) {
          socket.close(script.closeAfter.code, script.closeAfter.reason ?? "");
          return;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (connection.replaying && socket.readyState === socket.OPEN) {
        connection.replaying = false;
        socket.send(JSON.stringify({ type: "caught_up", replayed: connection.replayed }));
      }
    } finally {
      connection.pumping = false;
    }
  }
}

const servers: ScriptedServer[] = [];
const streams: AccountStream[] = [];

afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  for (const server of servers.splice(0)) await server.close();
});

async function serve(events: StoredEvent[], scripts: ConnectionScript[] = []) {
  const server = await new ScriptedServer(events).start();
  server.scripts = scripts;
  servers.push(server);
  return server;
}

function open(server: ScriptedServer, options: Partial<AccountStreamOptions> = {}) {
  const stream = new AccountStream({
    baseUrl: server.url,
    apiKey: "cb_test_k",
    reconnectDelayMs: 10,
    maxReconnectDelayMs: 40,
    ...options,
  });
  streams.push(stream);
  return stream;
}

async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Reads `count` events with `for await`, then leaves the loop. */
async function take(stream: AccountStream, count: number, each?: (e: AccountEvent) => Promise<void>) {
  const seen: AccountEvent[] = [];
  for await (const event of stream) {
    seen.push(event);
    await each?.(event);
    if (seen.length === count) break;
  }
  return seen;
}

const ids = (events: Array<{ id: string }>) => events.map((e) => e.id);
const firstMessages = (server: ScriptedServer) => server.connections.map((c) => c.received[0]);

describe("AccountStream against a scripted server", () => {
  it("resumes after a dropped connection from the last event received: nothing lost, nothing twice", async () => {
    const events = makeEvents(60);
    const server = await serve(events, [{ terminateAfter: 18 }]);
    const stream = open(server, { after: 0 });
    const seen = await take(stream, 60);
    expect(ids(seen)).toEqual(ids(events));
    expect(seen[0]).toEqual({
      seq: events[0]!.seq,
      id: events[0]!.id,
      type: events[0]!.event_type,
      timestamp: events[0]!.timestamp,
      data: events[0]!.data,
    });
    expect(server.connections[0]!.request.headers.authorization).toBe("Bearer cb_test_k");
    // The 18th event delivered has seq 17, after seq 18: the resume names the last one, not the largest.
    expect(firstMessages(server)).toEqual([
      { action: "resume", after: 0 },
      { action: "resume", after: 17 },
    ]);
    expect(Math.max(...events.slice(0, 18).map((e) => e.seq))).toBe(18);
  });

  it("reconnects and resumes after a slow-consumer close (4009), and after dropConnection()", async () => {
    const events = makeEvents(30);
    const server = await serve(events, [{ closeAfter: { events: 10, code: 4009, reason: "SLOW_CONSUMER" } }]);
    const stream = open(server, { after: 0 });
    const closed = waitFor<AccountStreamClose>(stream, "close");
    const seen = await (async () => {
      const seen: AccountEvent[] = [];
      stream.on("event", (e: AccountEvent) => seen.push(e));
      await until(() => seen.length === 30);
      return seen;
    })();
    expect(await closed).toEqual({ code: 4009, reason: "SLOW_CONSUMER" });
    expect(ids(seen)).toEqual(ids(events));
    expect(server.connections[1]!.received[0]).toEqual({ action: "resume", after: events[9]!.seq });
    expect(stream.lastSeq).toBe(events[29]!.seq);

    // A connection lost for no reason (network) resumes just the same; live events keep coming.
    await until(() => stream.connected);
    stream.dropConnection();
    await waitFor(stream, "open");
    server.append(makeEvents(4, 1_000));
    await until(() => seen.length === 34);
    expect(server.connections[2]!.received[0]).toEqual({ action: "resume", after: events[29]!.seq });
    expect(ids(seen.slice(30))).toEqual(["evt_1001", "evt_1000", "evt_1003", "evt_1002"]);
  });

  it("stops for good on close 4001 and a for-await loop throws instead of ending", async () => {
    const server = await serve(makeEvents(3), [{ closeAtOnce: 4001 }, { closeAtOnce: 4001 }]);
    const stream = open(server, { after: 0 });
    const loop = take(stream, 3);
    await expect(loop).rejects.toThrow(/4001/);
    await expect(loop).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.connections).toHaveLength(1);
    expect(stream.connected).toBe(false);
  });

  it("stops for good on an HTTP 401 upgrade refusal", async () => {
    const server = await serve(makeEvents(3));
    const stream = open(server, { apiKey: "cb_test_wrong" });
    const errors: Error[] = [];
    stream.on("error", (e: Error) => errors.push(e));
    const loop = take(stream, 1);
    await expect(loop).rejects.toThrow(/HTTP 401/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(AccountStreamError);
  });

  it("on CURSOR_EXPIRED emits expired and restarts from the oldest event kept", async () => {
    const events = makeEvents(10, 100);
    const server = await serve(events);
    const stream = open(server, { after: 7 });
    const expired = waitFor<AccountStreamExpired>(stream, "expired");
    const seen = await take(stream, 10);
    expect(await expired).toEqual({
      after: 7,
      retention_days: 30,
      oldest_available: { seq: events[0]!.seq, id: events[0]!.id },
      restart_after: 0,
    });
    expect(ids(seen)).toEqual(ids(events));
    expect(server.connections).toHaveLength(1);
    expect(server.connections[0]!.received).toEqual([
      { action: "resume", after: 7 },
      { action: "resume", after: 0 },
    ]);
  });

  it("with onExpired stop, a for-await loop throws CURSOR_EXPIRED", async () => {
    const server = await serve(makeEvents(3, 100));
    const stream = open(server, { after: "evt_7", onExpired: "stop" });
    await expect(take(stream, 1)).rejects.toMatchObject({ code: "CURSOR_EXPIRED" });
    expect(server.connections[0]!.received).toEqual([{ action: "resume", after: "evt_7" }]);
  });

  it("loads the cursor store at start and saves each handled event (for await: when the next is asked for)", async () => {
    const events = makeEvents(12);
    const server = await serve(events);
    const cursor = new RecordingCursor(events[3]!.seq);
    const seen = await take(open(server, { cursor }), 5);
    expect(firstMessages(server)).toEqual([{ action: "resume", after: events[3]!.seq }]);
    expect(ids(seen)).toEqual(ids(events.slice(4, 9)));
    // The fifth was handed out but the loop left before asking for more: it is not saved.
    expect(cursor.saved).toEqual(events.slice(4, 8).map((e) => e.seq));
    expect(await cursor.load()).toBe(events[7]!.seq);

    // A restart reads on from the saved cursor, the unfinished fifth event first.
    const again = open(server, { cursor });
    const rest = await take(again, 4);
    expect(ids(rest)).toEqual(ids(events.slice(8, 12)));
  });

  it("with event listeners, saves the cursor once the listeners returned", async () => {
    const events = makeEvents(8);
    const server = await serve(events);
    const cursor = new RecordingCursor(0);
    const stream = open(server, { cursor });
    const seen: AccountEvent[] = [];
    stream.on("event", (e: AccountEvent) => {
      // Saved after the listener: while it runs, the cursor still names the event before.
      expect(cursor.saved.at(-1)).not.toBe(e.seq);
      seen.push(e);
    });
    await until(() => cursor.saved.at(-1) === events[7]!.seq);
    expect(ids(seen)).toEqual(ids(events));
    expect(stream.lastSeq).toBe(events[7]!.seq);
    expect(await cursor.load()).toBe(events[7]!.seq);
  });

  it("sends the types in resume, and subscribe with them when there is no cursor", async () => {
    const events = makeEvents(9);
    const server = await serve(events);
    const filled = await take(open(server, { after: 0, types: ["order.filled"] }), 3);
    expect(filled.map((e) => e.type)).toEqual(["order.filled", "order.filled", "order.filled"]);
    expect(firstMessages(server)).toEqual([{ action: "resume", after: 0, types: ["order.filled"] }]);

    const live = open(server, { types: ["deposit.completed"] });
    await waitFor(live, "subscribed");
    expect(server.connections[1]!.received[0]).toEqual({ action: "subscribe", types: ["deposit.completed"] });
  });

  it("started from now and dropped before its first event, resumes after the event the service named", async () => {
    const before = makeEvents(4);
    const server = await serve(before);
    const stream = open(server);
    const seen: AccountEvent[] = [];
    stream.on("event", (e: AccountEvent) => seen.push(e));
    await waitFor(stream, "subscribed");
    stream.dropConnection();
    // Recorded while it was away: a new "from now" would miss them.
    const meanwhile = makeEvents(2, 70);
    server.append(meanwhile);
    await until(() => seen.length === 2);
    expect(server.connections[1]!.received[0]).toEqual({ action: "resume", after: before[3]!.seq });
    expect(ids(seen)).toEqual(ids(meanwhile));
    stream.close();
  });

  it("with no cursor and no types subscribes to every type from now, then resumes after the first event", async () => {
    const server = await serve(makeEvents(5));
    const stream = open(server);
    const seen: AccountEvent[] = [];
    stream.on("event", (e: AccountEvent) => seen.push(e));
    const caughtUp: unknown[] = [];
    stream.on("caught_up", (c) => caughtUp.push(c));
    await waitFor(stream, "subscribed");
    expect(firstMessages(server)).toEqual([{ action: "subscribe", types: ["*"] }]);
    const fresh = makeEvents(3, 50);
    server.append(fresh);
    await until(() => seen.length === 3);
    expect(ids(seen)).toEqual(ids(fresh)); // only what happened after it started
    stream.dropConnection();
    await until(() => caughtUp.length === 1);
    expect(server.connections[1]!.received[0]).toEqual({ action: "resume", after: fresh[2]!.seq });
    expect(caughtUp).toEqual([{ replayed: 0 }]);
  });

  it("a slow for-await consumer with a tiny buffer loses nothing: the stream pauses and resumes", async () => {
    const events = makeEvents(200);
    const server = await serve(events);
    const stream = open(server, { after: 0, bufferSize: 5 });
    let largest = 0;
    const seen = await take(stream, 200, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      largest = Math.max(largest, server.connections.length);
    });
    expect(ids(seen)).toEqual(ids(events));
    expect(new Set(ids(seen)).size).toBe(200);
    // It paused at least once: closed its connection (4000) and resumed where it was.
    expect(largest).toBeGreaterThan(1);
    expect(server.connections[0]!.clientCloseCode).toBe(4000);
    const resumes = server.connections.slice(1).map((c) => c.received[0] as { after: number });
    for (const resume of resumes) expect(resume.after).not.toBe(0);
  });

  it("ignores a repeated event id", async () => {
    const events = makeEvents(6);
    const server = await serve(events, [{ repeat: true }]);
    const stream = open(server, { after: 0 });
    const seen: AccountEvent[] = [];
    stream.on("event", (e: AccountEvent) => seen.push(e));
    await waitFor(stream, "caught_up");
    expect(ids(seen)).toEqual(ids(events));
  });

  it("reconnects when the connection goes silent", async () => {
    const server = await serve(makeEvents(2));
    const stream = open(server, { after: 0, idleTimeoutMs: 50 });
    await waitFor(stream, "caught_up");
    await waitFor<AccountStreamClose>(stream, "close");
    await waitFor(stream, "caught_up");
    expect(server.connections.length).toBeGreaterThanOrEqual(2);
    expect(server.connections[1]!.received[0]).toEqual({ action: "resume", after: 1 });
  });

  it("client.accountStream() connects with the client's base URL and key", async () => {
    const events = makeEvents(3);
    const server = await serve(events);
    const client = new Crossbook({ apiKey: "cb_test_k", environment: "sandbox", baseUrl: server.url });
    const stream = client.accountStream({ after: 0, reconnectDelayMs: 10 });
    streams.push(stream);
    expect(ids(await take(stream, 3))).toEqual(ids(events));
    expect(server.connections[0]!.request.headers.authorization).toBe("Bearer cb_test_k");
  });
});
