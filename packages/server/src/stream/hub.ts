/**
 * The price stream's fan-out. Quote updates arrive from the bus (so an update ingested by any
 * instance reaches the clients of every instance); each is serialized once, and each subscribed
 * connection gets it with its own `seq`.
 *
 * Why it is built this way (bench/stream: the socket writes, one syscall per connection per flush,
 * are most of the cost; everything else is kept small beside them):
 * - An update marks its market's channel changed; the channel is serialized and fanned out at the
 *   next flush, once however many updates it had meanwhile (latest wins). So the busier the stream,
 *   the less work per update.
 * - Per connection, pending updates are kept per market, latest wins (conflation), and written as
 *   one buffer of complete frames: one socket write per connection per turn instead of one per
 *   message (syscalls, not bytes, are what a busy stream runs out of), and at most one write per
 *   connection per `flushIntervalMs`.
 * - Connections with something to write wait in one first-in first-out queue, worked through in
 *   slices of about `SLICE_MS`, yielding to the event loop in between. Each slice first fans out
 *   what changed since the last one, so an update reaches every queued subscriber in the pass
 *   under way, and a connection just written rejoins the back of the queue. Under load an update
 *   therefore waits at most about one pass over the queue (a flush of every connection at once
 *   made it wait for the rest of the flush under way and then its own place in the next: up to two
 *   passes), and ingest, HTTP and new subscriptions are never blocked longer than a slice.
 * - Subscriptions are small integers (ids) in packed tables, not objects: a flag byte per id says
 *   what is queued, so the fan-out and the writes touch little memory.
 * - Frames are built in a slab; a TCP socket that takes a write at once (the usual case) gives its
 *   room back for the next connection, so the frames of a flush are built in the same warm bytes.
 * - A connection whose socket has not drained past `softBufferBytes` gets nothing more written; its
 *   pending updates keep conflating (bounded by its subscriptions), so a slow client never slows the
 *   others. Past `hardBufferBytes`, or stalled longer than `stallTimeoutMs`, it is disconnected.
 * - Updates identical to the last one seen for a market (same price, bid, ask and volume, e.g. the
 *   same venue tick ingested by two instances) are dropped.
 * - Control messages (acks, errors) are written at once, in order with the updates.
 */
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import WebSocket from "ws";
import type { Clock } from "../infra/clock";
import type { ConnectionSlots } from "../infra/slots/slots";
import type { QuoteUpdate } from "../prices/service";
import { SEQ_FRAME_SLACK, textFrame, writeSeqFrame } from "./frames";
import { CLOSE, type ClientMessage, ProtocolError, parseClientMessage, type RejectReason } from "./protocol";

/** Who a connection belongs to and what its plan allows. */
export interface StreamPrincipal {
  keyId: string;
  accountId: string;
  connectionsAllowed: number;
  marketsPerSubscription: number;
  /** The key's request budget per minute, which subscribe and unsubscribe messages spend from. */
  requestsPerMinute: number;
}

/** Whether a subscribe/unsubscribe message may spend a request of its key's budget. */
export type SpendOutcome = { allowed: true } | { allowed: false; message: string };

export type AuthOutcome =
  | { ok: true; principal: StreamPrincipal }
  | { ok: false; code: "UNAUTHORIZED" | "FORBIDDEN" | "RATE_LIMITED"; message: string };

export interface HubDeps {
  clock: Clock;
  slots: ConnectionSlots;
  /** `address`: the client address of the connection sending the key (failed keys count against it). */
  authenticate(apiKey: string, address: string): Promise<AuthOutcome>;
  /**
   * Spends one request of the key's budget (the one REST requests spend) for a subscribe or
   * unsubscribe message; refused, the message is not applied.
   */
  spend(principal: StreamPrincipal): SpendOutcome | Promise<SpendOutcome>;
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
   * Least time between two writes to one connection, whatever the update rate. An update to a
   * connection not written for this long goes out on the next turn of the event loop (a quiet
   * stream is not delayed), else when its interval is up; when a pass over every busy connection
   * takes longer than the interval (overload), writes run back to back. 0: every turn.
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
  /** An update newer than `head`, not yet fanned out (the channel waits in the next flush). */
  next: QuoteUpdate | null;
  /**
   * Its subscribers as pairs (subscription id, connection number), packed: the fan-out walks small
   * integers instead of an object per subscription.
   */
  subs: number[];
}

/** The subscription has an update to write (a channel's head, or a snapshot). */
const QUEUED = 1;
/** What it has to write is a snapshot from its connection's `snapshots`, not the channel's head. */
const SNAPSHOT = 2;

class Connection {
  principal: StreamPrincipal | null = null;
  slotToken: string | null = null;
  /** Its subscriptions by slot: the channel, and the subscription id (sid) in `sids`. */
  channels: Channel[] = [];
  sids: number[] = [];
  /** Snapshots (sent on subscribe) to write instead of the channel's head, by sid; usually null. */
  snapshots: Map<number, Buffer> | null = null;
  /** Closed and cleaned up; its number goes back to the pool once no flush holds it. */
  released = false;
  waitingDrain = false;
  stalledSince = 0;
  seq = 0;
  /** When it was last written (performance.now()): at most one write per flush interval. */
  lastWrite = Number.NEGATIVE_INFINITY;
  alive = true;
  closed = false;
  authTimer: NodeJS.Timeout | null = null;
  /** Told once when a connection opened without a key authenticates (it stops waiting). */
  onAuthenticated: (() => void) | null = null;
  /** The client address of a connection that must authenticate by message (its failures count there). */
  address = "";
  /** Client messages are handled one at a time, in order. */
  chain: Promise<void> = Promise.resolve();
  rateWindow = 0;
  rateCount = 0;

  constructor(
    readonly ws: WebSocket,
    readonly socket: Duplex & { writableLength: number },
    /** Its number: indexes the hub's per-connection tables. */
    readonly index: number,
  ) {
    this.kernelWrites = socket instanceof Socket;
  }

  /**
   * A TCP socket (net or TLS): a write it reports done (nothing queued after it) has left the
   * process's buffers, so the hub may reuse the memory it came from.
   */
  readonly kernelWrites: boolean;
}

/**
 * Frames are built in slabs of this size, each connection's write a slice of one. A slice a socket
 * still holds (queued, not yet taken by the kernel) is never written again; a slice it has taken is
 * reused (see #write).
 */
const SLAB_BYTES = 64 * 1024;

/** Connections pinged per turn of the event loop by the heartbeat. */
const HEARTBEAT_CHUNK = 256;

/**
 * About how long one flush slice writes before yielding to the event loop (ms). Measured on
 * bench/stream (2,000 clients on 2 cores): 10 ms keeps ingest lag p99 near 15 ms (a whole-queue
 * flush let it reach 60-100 ms) with latency no worse than that flush; 2 ms slices cost latency
 * (p99 about 10 ms worse), the extra turns of the event loop adding up.
 */
const SLICE_MS = 10;

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
  /** Connections with pending updates, first in first out, from `#dirtyHead`. */
  #dirty: Connection[] = [];
  #dirtyHead = 0;
  /** Connections by number; a number is reused once its connection is gone. */
  readonly #byIndex: Array<Connection | undefined> = [];
  readonly #freeIndexes: number[] = [];
  /** Per connection number: 1 while it is in `#dirty`. */
  #inDirty = new Uint8Array(1024);
  /** Per subscription id: QUEUED | SNAPSHOT. */
  #flags = new Uint8Array(16 * 1024);
  /** Per subscription id: its pair's position in `channel.subs`. */
  readonly #positions: number[] = [];
  #nextSid = 0;
  readonly #freeSids: number[] = [];
  /** Channels with an update not yet fanned out, for the next flush. */
  #changed: Channel[] = [];
  #flushScheduled = false;
  #slab: Buffer = Buffer.allocUnsafeSlow(SLAB_BYTES);
  #slabOffset = 0;
  /** The longest head built so far (bytes): sizes a connection's frames before writing them. */
  #longestHead = 0;
  #heartbeat: NodeJS.Timeout | undefined;
  #closing = false;
  readonly #stats = { messagesSent: 0, updatesConflated: 0, slowConsumersDropped: 0 };

  constructor(deps: HubDeps, options: Partial<HubOptions> = {}) {
    this.#deps = deps;
    this.#options = { ...DEFAULT_HUB_OPTIONS, ...options };
    this.#heartbeat = setInterval(() => void this.#tick(), this.#options.heartbeatMs);
    this.#heartbeat.unref();
  }

  stats(): HubStats {
    let authenticated = 0;
    let subscriptions = 0;
    for (const c of this.#connections) {
      if (c.principal) authenticated++;
      subscriptions += c.sids.length;
    }
    return { connections: this.#connections.size, authenticated, subscriptions, ...this.#stats };
  }

  // --- connections -------------------------------------------------------------------------------

  /**
   * Takes over an upgraded connection. `principal` is set when the upgrade carried a valid key
   * (its slot already taken as `slotToken`); otherwise the first message must authenticate, and
   * `onAuthenticated` is called once when it does.
   */
  attach(
    ws: WebSocket,
    socket: Duplex,
    principal: StreamPrincipal | null,
    slotToken: string | null,
    onAuthenticated?: () => void,
    address = "",
  ): void {
    const conn = new Connection(ws, socket as Duplex & { writableLength: number }, this.#takeIndex());
    this.#byIndex[conn.index] = conn;
    this.#connections.add(conn);
    if (principal) {
      conn.principal = principal;
      conn.slotToken = slotToken;
    } else {
      conn.onAuthenticated = onAuthenticated ?? null;
      conn.address = address;
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
        if (await this.#spend(conn)) await this.#subscribe(conn, message.market_ids);
        return;
      case "unsubscribe":
        if (await this.#spend(conn)) this.#unsubscribe(conn, message.market_ids);
        return;
    }
  }

  /** One request off the key's budget; false (and an error sent) when it is spent. */
  async #spend(conn: Connection): Promise<boolean> {
    const outcome = await this.#deps.spend(conn.principal!);
    if (conn.closed) return false;
    if (outcome.allowed) return true;
    this.#error(conn, "RATE_LIMITED", outcome.message);
    return false;
  }

  async #authenticate(conn: Connection, apiKey: string): Promise<void> {
    const outcome = await this.#deps.authenticate(apiKey, conn.address);
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
    const authenticated = conn.onAuthenticated;
    conn.onAuthenticated = null;
    authenticated?.();
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
    // A connection's messages are handled one at a time: nothing else changes its subscriptions
    // while this one waits (a close sets `closed`).
    const slots = this.#slots(conn);
    const fresh = ids.filter((id) => !slots.has(id));
    const { missing } = fresh.length > 0 ? await this.#deps.resolveMarkets(fresh) : { missing: [] };
    if (conn.closed) return;
    const unknown = new Set(missing);
    const rejected: Array<{ market_id: string; reason: RejectReason }> = [];
    const accepted: string[] = [];
    for (const id of ids) {
      if (slots.has(id)) {
        accepted.push(id);
      } else if (unknown.has(id)) {
        rejected.push({ market_id: id, reason: "MARKET_NOT_FOUND" });
      } else if (conn.sids.length >= principal.marketsPerSubscription) {
        rejected.push({ market_id: id, reason: "SUBSCRIPTION_LIMIT" });
      } else {
        let channel = this.#channels.get(id);
        if (!channel) {
          channel = { id, head: null, next: null, subs: [] };
          this.#channels.set(id, channel);
        }
        const sid = this.#takeSid();
        this.#positions[sid] = channel.subs.length;
        channel.subs.push(sid, conn.index);
        slots.set(id, conn.sids.length);
        conn.channels.push(channel);
        conn.sids.push(sid);
        accepted.push(id);
      }
    }
    this.#control(conn, {
      type: "subscribed",
      market_ids: accepted,
      rejected,
      ...(rejected.some((r) => r.reason === "SUBSCRIPTION_LIMIT")
        ? {
            limit: {
              markets_per_subscription: principal.marketsPerSubscription,
              subscribed: conn.sids.length,
            },
          }
        : {}),
    });
    // The current quote of every accepted market, at once, through the same path as updates.
    for (const id of accepted) {
      const slot = slots.get(id)!;
      const sid = conn.sids[slot]!;
      const latest = this.#latest.get(id);
      if (latest) {
        conn.channels[slot]!.head ??= this.#head(latest);
      } else {
        const current = this.#deps.snapshot(id);
        if (!current) continue;
        conn.snapshots ??= new Map();
        conn.snapshots.set(sid, this.#head(current));
        this.#flags[sid] = this.#flags[sid]! | SNAPSHOT;
      }
      this.#enqueue(conn, sid);
    }
    if (accepted.length > 0) this.#deps.watch(accepted);
  }

  /** A connection's subscriptions: market id -> slot. */
  #slots(conn: Connection): Map<string, number> {
    const slots = new Map<string, number>();
    for (let slot = 0; slot < conn.channels.length; slot++) slots.set(conn.channels[slot]!.id, slot);
    return slots;
  }

  #unsubscribe(conn: Connection, ids: string[]): void {
    const removed: string[] = [];
    const rejected: Array<{ market_id: string; reason: RejectReason }> = [];
    const slots = this.#slots(conn);
    for (const id of ids) {
      const slot = slots.get(id);
      if (slot === undefined) {
        rejected.push({ market_id: id, reason: "NOT_SUBSCRIBED" });
        continue;
      }
      slots.delete(id);
      const sid = conn.sids[slot]!;
      const channel = conn.channels[slot]!;
      // Swap-remove: the last slot moves into this one.
      const lastSid = conn.sids.pop()!;
      const lastChannel = conn.channels.pop()!;
      if (lastSid !== sid) {
        conn.sids[slot] = lastSid;
        conn.channels[slot] = lastChannel;
        slots.set(lastChannel.id, slot);
      }
      this.#detach(conn, sid, channel);
      removed.push(id);
    }
    this.#control(conn, { type: "unsubscribed", market_ids: removed, rejected });
  }

  #cleanup(conn: Connection): void {
    if (!this.#connections.delete(conn)) return;
    conn.closed = true;
    if (conn.authTimer) clearTimeout(conn.authTimer);
    for (let slot = 0; slot < conn.sids.length; slot++)
      this.#detach(conn, conn.sids[slot]!, conn.channels[slot]!);
    conn.sids = [];
    conn.channels = [];
    conn.snapshots = null;
    conn.released = true;
    // Still listed for the next flush: that flush gives the number back.
    if (this.#inDirty[conn.index] === 0) this.#releaseIndex(conn);
    if (conn.principal && conn.slotToken) {
      this.#deps.slots.release(conn.principal.keyId, conn.slotToken).catch((error) => {
        this.#deps.log.warn({ error: String(error) }, "could not release a stream connection slot");
      });
    }
  }

  /** Takes a subscription out of its channel (swap-remove) and frees its id; nothing of it is written. */
  #detach(conn: Connection, sid: number, channel: Channel): void {
    const subs = channel.subs;
    const at = this.#positions[sid]!;
    const lastConn = subs.pop()!;
    const lastSid = subs.pop()!;
    if (lastSid !== sid) {
      subs[at] = lastSid;
      subs[at + 1] = lastConn;
      this.#positions[lastSid] = at;
    }
    if (subs.length === 0 && this.#channels.get(channel.id) === channel) this.#channels.delete(channel.id);
    if (this.#flags[sid]! & SNAPSHOT) conn.snapshots?.delete(sid);
    this.#flags[sid] = 0;
    this.#freeSids.push(sid);
  }

  #takeSid(): number {
    const free = this.#freeSids.pop();
    if (free !== undefined) return free;
    const sid = this.#nextSid++;
    if (sid >= this.#flags.length) {
      const grown = new Uint8Array(this.#flags.length * 2);
      grown.set(this.#flags);
      this.#flags = grown;
    }
    return sid;
  }

  #takeIndex(): number {
    const free = this.#freeIndexes.pop();
    if (free !== undefined) return free;
    const index = this.#byIndex.length;
    this.#byIndex.push(undefined);
    if (index >= this.#inDirty.length) {
      const grown = new Uint8Array(this.#inDirty.length * 2);
      grown.set(this.#inDirty);
      this.#inDirty = grown;
    }
    return index;
  }

  #releaseIndex(conn: Connection): void {
    if (this.#byIndex[conn.index] !== conn) return;
    this.#byIndex[conn.index] = undefined;
    this.#freeIndexes.push(conn.index);
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
    // Fanned out at the next flush, once per channel however many updates came before it: the
    // busier the stream, the less work per update.
    if (channel.next !== null) {
      this.#stats.updatesConflated += channel.subs.length >> 1;
    } else {
      this.#changed.push(channel);
      if (!this.#flushScheduled) this.#scheduleFlush();
    }
    channel.next = update;
  }

  /** An update serialized up to its seq (see Channel.head). */
  #head(update: QuoteUpdate): Buffer {
    const head = updateHead(update);
    if (head.length > this.#longestHead) this.#longestHead = head.length;
    return head;
  }

  /** Serializes a changed channel's update once and queues it for every subscriber. */
  #fanOut(channel: Channel): void {
    const update = channel.next;
    if (update === null) return;
    channel.next = null;
    channel.head = this.#head(update);
    const subs = channel.subs;
    const flags = this.#flags;
    const inDirty = this.#inDirty;
    let conflated = 0;
    for (let i = 0; i < subs.length; i += 2) {
      const sid = subs[i]!;
      const f = flags[sid]!;
      if (f & QUEUED) {
        // Still waiting (a backed-up socket, or a snapshot just queued): the newer head replaces it.
        conflated++;
        if (f & SNAPSHOT) {
          flags[sid] = QUEUED;
          this.#byIndex[subs[i + 1]!]!.snapshots?.delete(sid);
        }
        continue;
      }
      flags[sid] = QUEUED;
      const index = subs[i + 1]!;
      if (inDirty[index] === 0) {
        inDirty[index] = 1;
        this.#dirty.push(this.#byIndex[index]!);
      }
    }
    this.#stats.updatesConflated += conflated;
  }

  /** Queues a subscription's update for its connection's next write (at most once: latest wins). */
  #enqueue(conn: Connection, sid: number): void {
    const f = this.#flags[sid]!;
    if (f & QUEUED) {
      this.#stats.updatesConflated++;
      return;
    }
    this.#flags[sid] = f | QUEUED;
    if (this.#inDirty[conn.index] === 0) {
      this.#inDirty[conn.index] = 1;
      this.#dirty.push(conn);
      if (!this.#flushScheduled) this.#scheduleFlush();
    }
  }

  /** The next slice, on the next turn of the event loop. */
  #scheduleFlush(): void {
    this.#flushScheduled = true;
    setImmediate(this.#flushNow);
  }

  readonly #flushNow = () => this.#flush();

  /**
   * One slice: fans out what changed, then writes queued connections in order for about `SLICE_MS`.
   * A connection written less than `flushIntervalMs` ago stops the slice at the head of the queue
   * until its interval is up (so a quiet stream writes an update at once, and a busy one at most
   * once per interval per connection; under overload a pass outlasts the interval and slices run
   * back to back).
   */
  #flush(): void {
    this.#flushScheduled = false;
    const changed = this.#changed;
    this.#changed = [];
    for (let i = 0; i < changed.length; i++) this.#fanOut(changed[i]!);
    const queue = this.#dirty;
    const interval = this.#options.flushIntervalMs;
    const started = performance.now();
    let head = this.#dirtyHead;
    let waitUntil = 0;
    while (head < queue.length) {
      const conn = queue[head]!;
      if (!conn.released && started - conn.lastWrite < interval) {
        waitUntil = conn.lastWrite + interval;
        break;
      }
      head++;
      this.#inDirty[conn.index] = 0;
      if (conn.released) this.#releaseIndex(conn);
      else {
        conn.lastWrite = started;
        this.#write(conn);
      }
      if ((head & 15) === 0 && performance.now() - started >= SLICE_MS) break;
    }
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
    } else if (head >= 1024 && head * 2 >= queue.length) {
      queue.splice(0, head);
      head = 0;
    }
    this.#dirtyHead = head;
    if (head < queue.length || this.#changed.length > 0) {
      this.#flushScheduled = true;
      if (waitUntil > 0) setTimeout(this.#flushNow, Math.max(1, waitUntil - performance.now()));
      else setImmediate(this.#flushNow);
    }
  }

  /** Writes a connection's queued updates as one buffer of frames, unless its socket is backed up. */
  #write(conn: Connection): void {
    if (conn.closed || conn.ws.readyState !== WebSocket.OPEN) return;
    const buffered = conn.socket.writableLength;
    if (buffered > this.#options.softBufferBytes) {
      this.#stall(conn, buffered);
      return;
    }
    conn.stalledSince = 0;
    const sids = conn.sids;
    const flags = this.#flags;
    let queued = 0;
    for (let slot = 0; slot < sids.length; slot++) queued += flags[sids[slot]!]! & QUEUED;
    if (queued === 0) return;
    // Room for every frame: a bound from the longest head seen, so the frames take one pass.
    const slab = this.#room(queued * (this.#longestHead + SEQ_FRAME_SLACK));
    const start = this.#slabOffset;
    const channels = conn.channels;
    const snapshots = conn.snapshots;
    let offset = start;
    let seq = conn.seq;
    for (let slot = 0; slot < sids.length; slot++) {
      const sid = sids[slot]!;
      const f = flags[sid]!;
      if ((f & QUEUED) === 0) continue;
      flags[sid] = 0;
      const head = f & SNAPSHOT ? snapshots?.get(sid) : channels[slot]!.head;
      if (head) offset = writeSeqFrame(slab, offset, head, ++seq);
    }
    // Every queued subscription was written, snapshots included.
    conn.snapshots = null;
    const count = seq - conn.seq;
    conn.seq = seq;
    if (count === 0) return;
    this.#stats.messagesSent += count;
    if (buffered > 0) {
      // Queued behind earlier bytes: a copy of its own, so the queue holds only its bytes.
      conn.socket.write(Buffer.from(slab.subarray(start, offset)));
      return;
    }
    const end = (offset + 7) & ~7;
    this.#slabOffset = end;
    conn.socket.write(slab.subarray(start, offset));
    // A TCP socket with nothing left queued has handed every byte to the kernel and holds no
    // reference to them: the room is reused for the next connection (hot in cache, no allocation).
    // Otherwise the bytes wait in the socket's queue and the room stays theirs; a slow client's
    // later writes are copies (above), so it never pins more than this one slab.
    if (conn.kernelWrites && conn.socket.writableLength === 0 && this.#slabOffset === end) {
      this.#slabOffset = start;
    }
  }

  /** The current slab with at least `bytes` free from `#slabOffset` (a fresh one if needed). */
  #room(bytes: number): Buffer {
    if (this.#slab.length - this.#slabOffset < bytes) {
      this.#slab = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, bytes));
      this.#slabOffset = 0;
    }
    return this.#slab;
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

  /**
   * Heartbeat: ping everyone, cut peers that did not answer the last ping, keep slots alive. A ping
   * is a socket write: thousands at once would hold the event loop as long as a full pass of
   * updates, so they go out `HEARTBEAT_CHUNK` connections per turn.
   */
  async #tick(): Promise<void> {
    const conns = [...this.#connections];
    const held: Array<{ subject: string; token: string }> = [];
    for (let start = 0; start < conns.length; start += HEARTBEAT_CHUNK) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      const end = Math.min(conns.length, start + HEARTBEAT_CHUNK);
      for (let i = start; i < end; i++) {
        const conn = conns[i]!;
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
    }
    this.#deps.slots.refresh(held, this.#deps.clock.now()).catch((error) => {
      this.#deps.log.warn({ error: String(error) }, "could not refresh stream connection slots");
    });
  }

  /** Runs the heartbeat now (tests drive it with a manual clock); resolves when every peer is visited. */
  heartbeat(): Promise<void> {
    return this.#tick();
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
