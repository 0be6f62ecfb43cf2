/**
 * One stream connection from the client's side of the protocol: who it is (a key from the upgrade,
 * or an `auth` message before a deadline), its client messages handled one at a time and within a
 * per-second budget, subscribe and unsubscribe spending the key's request budget, and their acks.
 * Kept apart from the fan-out so the per-update path carries none of this; the fields the fan-out
 * and the writer read on that path (subscriptions, `seq`, socket state) live here too, one object
 * per connection.
 */
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import WebSocket from "ws";
import type { KeyEnvironment } from "../access/permissions";
import { AccountFeed, DEFAULT_FEED_LIMITS, type FeedConnection } from "./account-feed";
import type { Channel, FanOut } from "./fanout";
import { textFrame } from "./frames";
import type { HubDeps, HubOptions } from "./hub";
import { CLOSE, type ClientMessage, ProtocolError, parseClientMessage, type RejectReason } from "./protocol";
import type { Cancel } from "./timers";
import type { SocketWriter } from "./writer";

/** Who a connection belongs to and what its plan allows. */
export interface StreamPrincipal {
  keyId: string;
  accountId: string;
  /** The key's environment: the account events a connection receives are of it. */
  environment: KeyEnvironment;
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

/**
 * Which stream a connection opened: the price stream (market prices, and account events on request)
 * or the account stream (account events only).
 */
export type StreamKind = "prices" | "account";

/** What every session shares: the hub's dependencies and options, the writer and the fan-out. */
export interface SessionHost {
  readonly deps: HubDeps;
  readonly options: HubOptions;
  readonly writer: SocketWriter;
  readonly fanOut: FanOut;
}

const ACCOUNT_STREAM_ONLY =
  "the account stream carries account events only (resume, subscribe with types); markets' prices are on /v1/prices/stream";

export class Session {
  principal: StreamPrincipal | null = null;
  slotToken: string | null = null;
  /** Its subscriptions by slot: the channel, and the subscription id (sid); kept by the fan-out. */
  channels: Channel[] = [];
  sids: number[] = [];
  /** Snapshots (sent on subscribe) to write instead of the channel's head, by sid; usually null. */
  snapshots: Map<number, Buffer> | null = null;
  /** Its account events, once it asked for them (`resume`, or `subscribe` with `types`). */
  feed: AccountFeed | null = null;
  /** Closed and cleaned up; its number goes back to the pool once no flush holds it. */
  released = false;
  waitingDrain = false;
  stalledSince = 0;
  seq = 0;
  /** When it was last written (the hub's clock): at most one write per flush interval. */
  lastWrite = Number.NEGATIVE_INFINITY;
  alive = true;
  closed = false;
  /**
   * A TCP socket (net or TLS): a write it reports done (nothing queued after it) has left the
   * process's buffers, so the writer may reuse the memory it came from.
   */
  readonly kernelWrites: boolean;
  #authDeadline: Cancel | null = null;
  /** Told once when a connection opened without a key authenticates (it stops waiting). */
  #onAuthenticated: (() => void) | null = null;
  /** The client address of a connection that must authenticate by message (its failures count there). */
  #address = "";
  /** Client messages are handled one at a time, in order. */
  #chain: Promise<void> = Promise.resolve();
  #rateWindow = 0;
  #rateCount = 0;

  constructor(
    readonly host: SessionHost,
    readonly ws: WebSocket,
    readonly socket: Duplex & { writableLength: number },
    /** Its number: indexes the fan-out's per-session tables. */
    readonly index: number,
    readonly kind: StreamKind = "prices",
  ) {
    this.kernelWrites = socket instanceof Socket;
  }

  /** A connection opened without a key: its first message must authenticate, within the deadline. */
  awaitAuth(onAuthenticated: (() => void) | null, address: string): void {
    const timeoutMs = this.host.options.authTimeoutMs;
    this.#onAuthenticated = onAuthenticated;
    this.#address = address;
    this.#authDeadline = this.host.options.timers.after(timeoutMs, () => {
      if (this.principal || this.closed) return;
      this.error("AUTH_TIMEOUT", `send {"action":"auth","api_key":…} within ${timeoutMs} ms`);
      this.close(CLOSE.AUTH_TIMEOUT, "authentication timeout");
    });
  }

  /** The connection is gone: nothing of it may fire any more. */
  ended(): void {
    this.#authDeadline?.();
  }

  receive(data: WebSocket.RawData, isBinary: boolean): void {
    this.alive = true;
    if (this.closed) return;
    const { deps, options } = this.host;
    const second = Math.floor(deps.clock.now() / 1000);
    if (second !== this.#rateWindow) {
      this.#rateWindow = second;
      this.#rateCount = 0;
    }
    if (++this.#rateCount > options.messagesPerSecond) {
      this.error("RATE_LIMITED", `at most ${options.messagesPerSecond} messages per second`);
      return;
    }
    if (isBinary) {
      this.error("VALIDATION_ERROR", "send text messages (JSON)");
      return;
    }
    let message: ClientMessage;
    try {
      message = parseClientMessage(data.toString());
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      this.error(error.code, error.message);
      return;
    }
    this.#chain = this.#chain
      .then(() => this.#handle(message))
      .catch((err) => {
        deps.log.warn({ err }, "stream message failed");
        this.error("INTERNAL_ERROR", "could not handle the message; try again");
      });
  }

  error(code: string, message: string): void {
    this.host.writer.control(this, { type: "error", code, message });
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.close(code, reason);
    // A peer that never answers the close handshake is cut off.
    this.host.options.timers.after(2_000, () => this.ws.terminate());
  }

  async #handle(message: ClientMessage): Promise<void> {
    if (this.closed) return;
    if (!this.principal) {
      if (message.action !== "auth") {
        this.error("UNAUTHORIZED", 'authenticate first: {"action":"auth","api_key":…}');
        this.close(CLOSE.UNAUTHORIZED, "not authenticated");
        return;
      }
      await this.#authenticate(message.api_key);
      return;
    }
    switch (message.action) {
      case "auth":
        this.error("VALIDATION_ERROR", "this connection is already authenticated");
        return;
      case "ping":
        this.host.writer.control(this, { type: "pong" });
        return;
      case "subscribe":
        if (message.market_ids && this.kind === "account") {
          this.error("VALIDATION_ERROR", ACCOUNT_STREAM_ONLY);
          return;
        }
        if (!(await this.#spend())) return;
        if (message.market_ids) await this.#subscribe(message.market_ids);
        if (message.types && !this.closed) await this.#accountFeed()?.subscribe(message.types);
        return;
      case "unsubscribe":
        if (this.kind === "account") {
          this.error("VALIDATION_ERROR", ACCOUNT_STREAM_ONLY);
          return;
        }
        if (await this.#spend()) this.#unsubscribe(message.market_ids);
        return;
      case "resume": {
        if (!(await this.#spend())) return;
        await this.#accountFeed()?.resume(String(message.after), message.types);
        return;
      }
    }
  }

  /** The connection's account events, made on first use; null (and an error sent) when not served. */
  #accountFeed(): AccountFeed | null {
    if (this.feed) return this.feed;
    const deps = this.host.deps.accountFeed;
    if (!deps) {
      this.error("VALIDATION_ERROR", "account events are not served on this connection");
      return null;
    }
    const { options } = this.host;
    const principal = this.principal!;
    this.feed = new AccountFeed(
      deps,
      {
        softBufferBytes: options.softBufferBytes,
        hardBufferBytes: options.hardBufferBytes,
        stallTimeoutMs: options.stallTimeoutMs,
        ...DEFAULT_FEED_LIMITS,
        ...deps.limits,
      },
      { accountId: principal.accountId, environment: principal.environment },
      this.#feedConnection(),
    );
    return this.feed;
  }

  /**
   * The socket as the account feed writes it. Unlike price updates, nothing here is dropped or cut
   * at the hard bound: the feed decides, and closes with 4009 after what it already wrote.
   */
  #feedConnection(): FeedConnection {
    const open = () => !this.closed && this.ws.readyState === WebSocket.OPEN;
    return {
      get closed() {
        return !open();
      },
      buffered: () => this.socket.writableLength,
      write: (frames) => {
        if (open()) this.socket.write(frames);
      },
      control: (message) => {
        if (open()) this.socket.write(textFrame(JSON.stringify(message)));
      },
      drained: () =>
        new Promise<void>((resolve) => {
          if (!open()) {
            resolve();
            return;
          }
          const done = () => {
            this.socket.off("drain", done);
            this.ws.off("close", done);
            resolve();
          };
          this.socket.on("drain", done);
          this.ws.on("close", done);
        }),
      close: (code, reason) => this.close(code, reason),
    };
  }

  /** One request off the key's budget; false (and an error sent) when it is spent. */
  async #spend(): Promise<boolean> {
    const outcome = await this.host.deps.spend(this.principal!);
    if (this.closed) return false;
    if (outcome.allowed) return true;
    this.error("RATE_LIMITED", outcome.message);
    return false;
  }

  async #authenticate(apiKey: string): Promise<void> {
    const { deps } = this.host;
    const outcome = await deps.authenticate(apiKey, this.#address);
    if (this.closed) return;
    if (!outcome.ok) {
      this.error(outcome.code, outcome.message);
      if (outcome.code === "RATE_LIMITED") return;
      this.close(outcome.code === "FORBIDDEN" ? CLOSE.FORBIDDEN : CLOSE.UNAUTHORIZED, outcome.message);
      return;
    }
    const { principal } = outcome;
    const token = await deps.slots.acquire(principal.keyId, principal.connectionsAllowed, deps.clock.now());
    if (this.closed) {
      if (token) await deps.slots.release(principal.keyId, token);
      return;
    }
    if (!token) {
      const message = `this key already holds its plan's ${principal.connectionsAllowed} stream connections`;
      this.error("CONNECTION_LIMIT", message);
      this.close(CLOSE.CONNECTION_LIMIT, "connection limit");
      return;
    }
    this.#authDeadline?.();
    this.principal = principal;
    this.slotToken = token;
    const authenticated = this.#onAuthenticated;
    this.#onAuthenticated = null;
    authenticated?.();
    this.host.writer.control(this, {
      type: "authenticated",
      key_id: principal.keyId,
      environment: principal.environment,
      limits: {
        connections: principal.connectionsAllowed,
        markets_per_subscription: principal.marketsPerSubscription,
      },
    });
  }

  async #subscribe(ids: string[]): Promise<void> {
    const principal = this.principal!;
    const { deps, fanOut } = this.host;
    // A connection's messages are handled one at a time: nothing else changes its subscriptions
    // while this one waits (a close sets `closed`).
    const slots = fanOut.slots(this);
    const fresh = ids.filter((id) => !slots.has(id));
    const { missing } = fresh.length > 0 ? await deps.resolveMarkets(fresh) : { missing: [] };
    if (this.closed) return;
    const unknown = new Set(missing);
    const rejected: Array<{ market_id: string; reason: RejectReason }> = [];
    const accepted: string[] = [];
    for (const id of ids) {
      if (slots.has(id)) {
        accepted.push(id);
      } else if (unknown.has(id)) {
        rejected.push({ market_id: id, reason: "MARKET_NOT_FOUND" });
      } else if (this.sids.length >= principal.marketsPerSubscription) {
        rejected.push({ market_id: id, reason: "SUBSCRIPTION_LIMIT" });
      } else {
        slots.set(id, fanOut.add(this, id));
        accepted.push(id);
      }
    }
    this.host.writer.control(this, {
      type: "subscribed",
      market_ids: accepted,
      rejected,
      ...(rejected.some((r) => r.reason === "SUBSCRIPTION_LIMIT")
        ? {
            limit: {
              markets_per_subscription: principal.marketsPerSubscription,
              subscribed: this.sids.length,
            },
          }
        : {}),
    });
    // The current quote of every accepted market, at once, through the same path as updates.
    fanOut.queueCurrent(this, slots, accepted);
    if (accepted.length > 0) deps.watch(accepted);
  }

  #unsubscribe(ids: string[]): void {
    const { fanOut } = this.host;
    const removed: string[] = [];
    const rejected: Array<{ market_id: string; reason: RejectReason }> = [];
    const slots = fanOut.slots(this);
    for (const id of ids) {
      const slot = slots.get(id);
      if (slot === undefined) {
        rejected.push({ market_id: id, reason: "NOT_SUBSCRIBED" });
        continue;
      }
      slots.delete(id);
      const moved = fanOut.remove(this, slot);
      if (moved !== undefined) slots.set(moved, slot);
      removed.push(id);
    }
    this.host.writer.control(this, { type: "unsubscribed", market_ids: removed, rejected });
  }
}
