/**
 * The price stream's fan-out. Quote updates arrive from the bus (so an update ingested by any
 * instance reaches the clients of every instance); each is serialized once, and each subscribed
 * connection gets it with its own `seq`.
 *
 * Why it is built this way:
 * - Per connection, pending updates are kept per market, latest wins (conflation), and written
 *   every `flushIntervalMs` as one buffer of complete frames: one socket write per connection per
 *   interval instead of one per message (syscalls, not bytes, are what a busy stream runs out of).
 * - A connection whose socket has not drained past `softBufferBytes` gets nothing more written; its
 *   pending updates keep conflating (bounded by its subscriptions), so a slow client never slows the
 *   others. Past `hardBufferBytes`, or stalled longer than `stallTimeoutMs`, it is disconnected.
 * - Updates identical to the last one seen for a market (same price, bid, ask and volume, e.g. the
 *   same venue tick ingested by two instances) are dropped.
 * - Control messages (acks, errors) are written at once, in order with the updates.
 */
import type { Duplex } from "node:stream";
import WebSocket from "ws";
import type { Clock } from "../infra/clock";
import type { ConnectionSlots } from "../infra/slots/slots";
import type { QuoteUpdate } from "../prices/service";
import { digits, headerLength, textFrame, writeHeader } from "./frames";
import { CLOSE, type ClientMessage, ProtocolError, parseClientMessage, type RejectReason } from "./protocol";

/** Who a connection belongs to and what its plan allows. */
export interface StreamPrincipal {
  keyId: string;
  accountId: string;
  connectionsAllowed: number;
  marketsPerSubscription: number;
}

export type AuthOutcome =
  | { ok: true; principal: StreamPrincipal }
  | { ok: false; code: "UNAUTHORIZED" | "FORBIDDEN" | "RATE_LIMITED"; message: string };

export interface HubDeps {
  clock: Clock;
  slots: ConnectionSlots;
  authenticate(apiKey: string): Promise<AuthOutcome>;
  /** Which of `ids` exist. */
  resolveMarkets(ids: readonly string[]): Promise<{ found: string[]; missing: string[] }>;
  /** The current quote of a market, for the snapshot sent on subscribe. */
  snapshot(marketId: string): QuoteUpdate | undefined;
  /** Markets clients now watch (the prices service keeps them live). */
  watch(marketIds: readonly string[]): void;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export interface HubOptions {
  heartbeatMs: number;
  authTimeoutMs: number;
  softBufferBytes: number;
  hardBufferBytes: number;
  stallTimeoutMs: number;
  /** Client messages allowed per connection per second. */
  messagesPerSecond: number;
  /**
   * Updates are gathered for up to this long and written to each connection in one go: one socket
   * write per connection per interval, whatever the update rate. 0 writes on the next turn of the
   * event loop (lowest latency, one write per connection per burst).
   */
  flushIntervalMs: number;
}

export const DEFAULT_HUB_OPTIONS: HubOptions = {
  heartbeatMs: 20_000,
  authTimeoutMs: 5_000,
  softBufferBytes: 64 * 1024,
  hardBufferBytes: 1024 * 1024,
  stallTimeoutMs: 30_000,
  messagesPerSecond: 20,
  flushIntervalMs: 10,
};

export interface HubStats {
  connections: number;
  authenticated: number;
  subscriptions: number;
  messagesSent: number;
  updatesConflated: number;
  slowConsumersDropped: number;
}

/** One market's subscribers and its latest serialized update. */
interface Channel {
  id: string;
  /** The latest update up to `"seq":`; what every queued subscription writes (latest wins). */
  head: Buffer | null;
  subs: Subscription[];
}

/**
 * A connection's subscription to a channel. Kept small (there is one per connection and market):
 * its flags share one number, and a snapshot to send lives on the connection, not here.
 */
interface Subscription {
  conn: Connection;
  channel: Channel;
  /** Position in channel.subs (swap-removal). */
  index: number;
  /** Position in conn.subs (swap-removal). */
  slot: number;
  /** QUEUED | REMOVED bits. */
  flags: number;
}

/** It has an unwritten update in its connection's pending list. */
const QUEUED = 1;
/** Unsubscribed or closed: skipped if still pending. */
const REMOVED = 2;

class Connection {
  principal: StreamPrincipal | null = null;
  slotToken: string | null = null;
  /** An array, not a Map: subscriptions are looked up by id only on (rare) control messages. */
  subs: Subscription[] | null = null;
  /** Subscriptions with an update to write, in the order they were queued. */
  pending: Subscription[] = [];
  /** Snapshots (sent on subscribe) to write instead of the channel's head; usually null. */
  snapshots: Map<Subscription, Buffer> | null = null;
  queued = false;
  waitingDrain = false;
  stalledSince = 0;
  seq = 0;
  alive = true;
  closed = false;
  authTimer: NodeJS.Timeout | null = null;
  /** Client messages are handled one at a time, in order. */
  chain: Promise<void> = Promise.resolve();
  rateWindow = 0;
  rateCount = 0;

  constructor(
    readonly ws: WebSocket,
    readonly socket: Duplex & { writableLength: number },
  ) {}
}

const CLOSE_BRACE = 0x7d; // "}" ends every update after its seq

function updateHead(update: QuoteUpdate): Buffer {
  return Buffer.from(
    `{"type":"price_update","market_id":${JSON.stringify(update.market_id)},"price":${update.price},` +
      `"best_bid":${update.best_bid},"best_ask":${update.best_ask},"volume_24h":${update.volume_24h},` +
      `"timestamp":${JSON.stringify(update.timestamp)},"seq":`,
    "utf8",
  );
}

export class StreamHub {
  readonly #deps: HubDeps;
  readonly #options: HubOptions;
  readonly #connections = new Set<Connection>();
  readonly #channels = new Map<string, Channel>();
  readonly #latest = new Map<string, QuoteUpdate>();
  #dirty: Connection[] = [];
  #flushScheduled = false;
  #heartbeat: NodeJS.Timeout | undefined;
  #closing = false;
  readonly #stats = { messagesSent: 0, updatesConflated: 0, slowConsumersDropped: 0 };

  constructor(deps: HubDeps, options: Partial<HubOptions> = {}) {
    this.#deps = deps;
    this.#options = { ...DEFAULT_HUB_OPTIONS, ...options };
    this.#heartbeat = setInterval(() => this.#tick(), this.#options.heartbeatMs);
    this.#heartbeat.unref();
  }

  stats(): HubStats {
    let authenticated = 0;
    let subscriptions = 0;
    for (const c of this.#connections) {
      if (c.principal) authenticated++;
      subscriptions += c.subs?.length ?? 0;
    }
    return { connections: this.#connections.size, authenticated, subscriptions, ...this.#stats };
  }

  // --- connections -------------------------------------------------------------------------------

  /**
   * Takes over an upgraded connection. `principal` is set when the upgrade carried a valid key
   * (its slot already taken as `slotToken`); otherwise the first message must authenticate.
   */
  attach(ws: WebSocket, socket: Duplex, principal: StreamPrincipal | null, slotToken: string | null): void {
    const conn = new Connection(ws, socket as Duplex & { writableLength: number });
    this.#connections.add(conn);
    if (principal) {
      conn.principal = principal;
      conn.slotToken = slotToken;
    } else {
      conn.authTimer = setTimeout(() => {
        if (conn.principal || conn.closed) return;
        this.#error(
          conn,
          "AUTH_TIMEOUT",
          `send {"action":"auth","api_key":…} within ${this.#options.authTimeoutMs} ms`,
        );
        this.#close(conn, CLOSE.AUTH_TIMEOUT, "authentication timeout");
      }, this.#options.authTimeoutMs);
      conn.authTimer.unref();
    }
    ws.on("message", (data, isBinary) => this.#onMessage(conn, data, isBinary));
    ws.on("pong", () => {
      conn.alive = true;
    });
    ws.on("close", () => this.#cleanup(conn));
    ws.on("error", () => this.#cleanup(conn));
    if (this.#closing) this.#close(conn, CLOSE.GOING_AWAY, "server shutting down");
  }

  /** Closes every connection of a key (revoked). */
  closeKey(keyId: string, reason: string): number {
    let closed = 0;
    for (const conn of this.#connections) {
      if (conn.principal?.keyId !== keyId) continue;
      this.#error(conn, "UNAUTHORIZED", reason);
      this.#close(conn, CLOSE.UNAUTHORIZED, reason);
      closed++;
    }
    return closed;
  }

  /** Key ids with open connections (for revocation checks). */
  keyIds(): string[] {
    const ids = new Set<string>();
    for (const conn of this.#connections) if (conn.principal) ids.add(conn.principal.keyId);
    return [...ids];
  }

  #onMessage(conn: Connection, data: WebSocket.RawData, isBinary: boolean): void {
    conn.alive = true;
    if (conn.closed) return;
    const second = Math.floor(this.#deps.clock.now() / 1000);
    if (second !== conn.rateWindow) {
      conn.rateWindow = second;
      conn.rateCount = 0;
    }
    if (++conn.rateCount > this.#options.messagesPerSecond) {
      this.#error(conn, "RATE_LIMITED", `at most ${this.#options.messagesPerSecond} messages per second`);
      return;
    }
    if (isBinary) {
      this.#error(conn, "VALIDATION_ERROR", "send text messages (JSON)");
      return;
    }
    let message: ClientMessage;
    try {
      message = parseClientMessage(data.toString());
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      this.#error(conn, error.code, error.message);
      return;
    }
    conn.chain = conn.chain
      .then(() => this.#handle(conn, message))
      .catch((error) => {
        this.#deps.log.warn({ error: String(error) }, "stream message failed");
        this.#error(conn, "INTERNAL_ERROR", "could not handle the message; try again");
      });
  }

  async #handle(conn: Connection, message: ClientMessage): Promise<void> {
    if (conn.closed) return;
    if (!conn.principal) {
      if (message.action !== "auth") {
        this.#error(conn, "UNAUTHORIZED", 'authenticate first: {"action":"auth","api_key":…}');
        this.#close(conn, CLOSE.UNAUTHORIZED, "not authenticated");
        return;
      }
      await this.#authenticate(conn, message.api_key);
      return;
    }
    switch (message.action) {
      case "auth":
        this.#error(conn, "VALIDATION_ERROR", "this connection is already authenticated");
        return;
      case "ping":
        this.#control(conn, { type: "pong" });
        return;
      case "subscribe":
        await this.#subscribe(conn, message.market_ids);
        return;
      case "unsubscribe":
        this.#unsubscribe(conn, message.market_ids);
        return;
    }
  }

  async #authenticate(conn: Connection, apiKey: string): Promise<void> {
    const outcome = await this.#deps.authenticate(apiKey);
    if (conn.closed) return;
    if (!outcome.ok) {
      this.#error(conn, outcome.code, outcome.message);
      if (outcome.code === "RATE_LIMITED") return;
      this.#close(conn, outcome.code === "FORBIDDEN" ? CLOSE.FORBIDDEN : CLOSE.UNAUTHORIZED, outcome.message);
      return;
    }
    const { principal } = outcome;
    const token = await this.#deps.slots.acquire(
      principal.keyId,
      principal.connectionsAllowed,
      this.#deps.clock.now(),
    );
    if (conn.closed) {
      if (token) await this.#deps.slots.release(principal.keyId, token);
      return;
    }
    if (!token) {
      const message = `this key already holds its plan's ${principal.connectionsAllowed} stream connections`;
      this.#error(conn, "CONNECTION_LIMIT", message);
      this.#close(conn, CLOSE.CONNECTION_LIMIT, "connection limit");
      return;
    }
    if (conn.authTimer) clearTimeout(conn.authTimer);
    conn.principal = principal;
    conn.slotToken = token;
    this.#control(conn, {
      type: "authenticated",
      key_id: principal.keyId,
      limits: {
        connections: principal.connectionsAllowed,
        markets_per_subscription: principal.marketsPerSubscription,
      },
    });
  }

  async #subscribe(conn: Connection, ids: string[]): Promise<void> {
    const principal = conn.principal!;
    conn.subs ??= [];
    const subs = conn.subs;
    const byId = new Map(subs.map((sub) => [sub.channel.id, sub]));
    const fresh = ids.filter((id) => !byId.has(id));
    const { missing } = fresh.length > 0 ? await this.#deps.resolveMarkets(fresh) : { missing: [] };
    if (conn.closed) return;
    const unknown = new Set(missing);
    const rejected: Array<{ market_id: string; reason: RejectReason }> = [];
    const accepted: string[] = [];
    for (const id of ids) {
      if (byId.has(id)) {
        accepted.push(id);
      } else if (unknown.has(id)) {
        rejected.push({ market_id: id, reason: "MARKET_NOT_FOUND" });
      } else if (subs.length >= principal.marketsPerSubscription) {
        rejected.push({ market_id: id, reason: "SUBSCRIPTION_LIMIT" });
      } else {
        let channel = this.#channels.get(id);
        if (!channel) {
          channel = { id, head: null, subs: [] };
          this.#channels.set(id, channel);
        }
        const sub: Subscription = { conn, channel, index: channel.subs.length, slot: subs.length, flags: 0 };
        channel.subs.push(sub);
        subs.push(sub);
        byId.set(id, sub);
        accepted.push(id);
      }
    }
    this.#control(conn, {
      type: "subscribed",
      market_ids: accepted,
      rejected,
      ...(rejected.some((r) => r.reason === "SUBSCRIPTION_LIMIT")
        ? { limit: { markets_per_subscription: principal.marketsPerSubscription, subscribed: subs.length } }
        : {}),
    });
    // The current quote of every accepted market, at once, through the same path as updates.
    for (const id of accepted) {
      const sub = byId.get(id)!;
      const latest = this.#latest.get(id);
      if (latest) {
        sub.channel.head ??= updateHead(latest);
      } else {
        const current = this.#deps.snapshot(id);
        if (!current) continue;
        conn.snapshots ??= new Map();
        conn.snapshots.set(sub, updateHead(current));
      }
      this.#enqueue(sub);
    }
    if (accepted.length > 0) this.#deps.watch(accepted);
  }

  #unsubscribe(conn: Connection, ids: string[]): void {
    const removed: string[] = [];
    const rejected: Array<{ market_id: string; reason: RejectReason }> = [];
    const subs = conn.subs ?? [];
    const byId = new Map(subs.map((sub) => [sub.channel.id, sub]));
    for (const id of ids) {
      const sub = byId.get(id);
      if (!sub) {
        rejected.push({ market_id: id, reason: "NOT_SUBSCRIBED" });
        continue;
      }
      byId.delete(id);
      const last = subs.pop()!;
      if (last !== sub) {
        subs[sub.slot] = last;
        last.slot = sub.slot;
      }
      this.#detach(sub);
      removed.push(id);
    }
    this.#control(conn, { type: "unsubscribed", market_ids: removed, rejected });
  }

  #cleanup(conn: Connection): void {
    if (!this.#connections.delete(conn)) return;
    conn.closed = true;
    if (conn.authTimer) clearTimeout(conn.authTimer);
    for (const sub of conn.subs ?? []) this.#detach(sub);
    conn.subs = null;
    conn.pending = [];
    if (conn.principal && conn.slotToken) {
      this.#deps.slots.release(conn.principal.keyId, conn.slotToken).catch((error) => {
        this.#deps.log.warn({ error: String(error) }, "could not release a stream connection slot");
      });
    }
  }

  /** Takes a subscription out of its channel (swap-remove); a queued write of it is skipped. */
  #detach(sub: Subscription): void {
    if (sub.flags & REMOVED) return;
    sub.flags |= REMOVED;
    const subs = sub.channel.subs;
    const last = subs.pop()!;
    if (last !== sub) {
      subs[sub.index] = last;
      last.index = sub.index;
    }
    if (subs.length === 0) this.#channels.delete(sub.channel.id);
  }

  #close(conn: Connection, code: number, reason: string): void {
    if (conn.closed) return;
    conn.closed = true;
    conn.ws.close(code, reason);
    // A peer that never answers the close handshake is cut off.
    setTimeout(() => conn.ws.terminate(), 2_000).unref();
  }

  // --- fan-out -----------------------------------------------------------------------------------

  /** One quote update (from the bus) to every subscribed connection. */
  publish(update: QuoteUpdate): void {
    const id = update.market_id;
    const last = this.#latest.get(id);
    if (
      last &&
      last.price === update.price &&
      last.best_bid === update.best_bid &&
      last.best_ask === update.best_ask &&
      last.volume_24h === update.volume_24h
    ) {
      return;
    }
    this.#latest.set(id, update);
    const channel = this.#channels.get(id);
    if (!channel) return;
    channel.head = updateHead(update);
    const subs = channel.subs;
    for (let i = 0; i < subs.length; i++) {
      const sub = subs[i]!;
      // A newer update replaces a snapshot still waiting to be written.
      if (sub.conn.snapshots !== null) sub.conn.snapshots.delete(sub);
      this.#enqueue(sub);
    }
  }

  /** Queues a subscription's update for its connection's next write (at most once: latest wins). */
  #enqueue(sub: Subscription): void {
    if (sub.flags & QUEUED) {
      this.#stats.updatesConflated++;
      return;
    }
    sub.flags |= QUEUED;
    const conn = sub.conn;
    conn.pending.push(sub);
    if (!conn.queued) {
      conn.queued = true;
      this.#dirty.push(conn);
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        if (this.#options.flushIntervalMs > 0) setTimeout(() => this.#flush(), this.#options.flushIntervalMs);
        else setImmediate(() => this.#flush());
      }
    }
  }

  #flush(): void {
    this.#flushScheduled = false;
    const dirty = this.#dirty;
    this.#dirty = [];
    for (const conn of dirty) {
      conn.queued = false;
      this.#write(conn);
    }
  }

  /** Writes a connection's pending updates as one buffer of frames, unless its socket is backed up. */
  #write(conn: Connection): void {
    const pending = conn.pending;
    if (conn.closed || pending.length === 0) return;
    if (conn.ws.readyState !== WebSocket.OPEN) return;
    const buffered = conn.socket.writableLength;
    if (buffered > this.#options.softBufferBytes) {
      this.#stall(conn, buffered);
      return;
    }
    conn.stalledSince = 0;
    let total = 0;
    let seq = conn.seq;
    let count = 0;
    const snapshots = conn.snapshots;
    for (const sub of pending) {
      const head = snapshots?.get(sub) ?? sub.channel.head;
      if (sub.flags & REMOVED || !head) continue;
      const length = head.length + digits(++seq) + 1;
      total += headerLength(length) + length;
    }
    const out = Buffer.allocUnsafe(total);
    let offset = 0;
    seq = conn.seq;
    for (const sub of pending) {
      sub.flags &= ~QUEUED;
      const head = snapshots?.get(sub) ?? sub.channel.head;
      if (sub.flags & REMOVED || !head) continue;
      const seqText = String(++seq);
      const length = head.length + seqText.length + 1;
      offset = writeHeader(out, offset, length);
      offset += head.copy(out, offset);
      offset += out.write(seqText, offset, "latin1");
      out[offset++] = CLOSE_BRACE;
      count++;
    }
    pending.length = 0;
    conn.snapshots = null;
    conn.seq = seq;
    this.#stats.messagesSent += count;
    if (count > 0) conn.socket.write(out);
  }

  #stall(conn: Connection, buffered: number): void {
    const now = this.#deps.clock.now();
    if (conn.stalledSince === 0) conn.stalledSince = now;
    if (buffered > this.#options.hardBufferBytes || now - conn.stalledSince > this.#options.stallTimeoutMs) {
      this.#dropSlow(conn, buffered);
      return;
    }
    if (!conn.waitingDrain) {
      conn.waitingDrain = true;
      conn.socket.once("drain", () => {
        conn.waitingDrain = false;
        this.#write(conn);
      });
    }
  }

  #dropSlow(conn: Connection, buffered: number): void {
    this.#stats.slowConsumersDropped++;
    this.#deps.log.warn(
      { key_id: conn.principal?.keyId, buffered_bytes: buffered },
      "stream client too slow: disconnected",
    );
    // Its buffer is full: a close frame would wait behind it. Cut the connection.
    conn.closed = true;
    conn.ws.terminate();
    this.#cleanup(conn);
  }

  #control(conn: Connection, message: object): void {
    if (conn.closed || conn.ws.readyState !== WebSocket.OPEN) return;
    const buffered = conn.socket.writableLength;
    if (buffered > this.#options.hardBufferBytes) {
      this.#dropSlow(conn, buffered);
      return;
    }
    conn.socket.write(textFrame(JSON.stringify(message)));
  }

  #error(conn: Connection, code: string, message: string): void {
    this.#control(conn, { type: "error", code, message });
  }

  /** Heartbeat: ping everyone, cut peers that did not answer the last ping, keep slots alive. */
  #tick(): void {
    const held: Array<{ subject: string; token: string }> = [];
    for (const conn of this.#connections) {
      if (conn.closed) continue;
      if (!conn.alive) {
        conn.closed = true;
        conn.ws.terminate();
        this.#cleanup(conn);
        continue;
      }
      conn.alive = false;
      try {
        conn.ws.ping();
      } catch {
        // closing already
      }
      if (conn.stalledSince !== 0) this.#write(conn);
      if (conn.principal && conn.slotToken)
        held.push({ subject: conn.principal.keyId, token: conn.slotToken });
    }
    this.#deps.slots.refresh(held, this.#deps.clock.now()).catch((error) => {
      this.#deps.log.warn({ error: String(error) }, "could not refresh stream connection slots");
    });
  }

  /** Runs the heartbeat now (tests drive it with a manual clock). */
  heartbeat(): void {
    this.#tick();
  }

  /** Says goodbye to every client (1001) and stops the heartbeat. */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    const open = [...this.#connections];
    const closed = open.map(
      (conn) =>
        new Promise<void>((resolve) => {
          if (conn.ws.readyState === WebSocket.CLOSED) resolve();
          else conn.ws.once("close", () => resolve());
        }),
    );
    for (const conn of open) this.#close(conn, CLOSE.GOING_AWAY, "server shutting down");
    await Promise.race([Promise.all(closed), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
    for (const conn of open) {
      conn.ws.terminate();
      this.#cleanup(conn);
    }
  }
}
