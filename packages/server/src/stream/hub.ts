/**
 * The price stream's hub: the one object `server.ts` hands upgraded connections and bus updates to.
 * It exists to put the three parts together and to own what concerns every connection at once
 * (the heartbeat, revocation by key, shutdown): `session.ts` is one connection's side of the
 * protocol, `fanout.ts` gets each update to the sessions that follow its market, `writer.ts` puts
 * the bytes on the sockets and deals with the ones that do not drain. Its timing comes from an
 * injected clock (`timers.ts`), so its tests move time instead of waiting for it.
 */
import type { Duplex } from "node:stream";
import WebSocket from "ws";
import type { Clock } from "../infra/clock";
import type { Logger } from "../infra/log";
import type { ConnectionSlots } from "../infra/slots/slots";
import type { QuoteUpdate } from "../prices/service";
import type { AccountFeedDeps } from "./account-feed";
import { FanOut } from "./fanout";
import { CLOSE } from "./protocol";
import {
  type AuthOutcome,
  Session,
  type SessionHost,
  type SpendOutcome,
  type StreamKind,
  type StreamPrincipal,
} from "./session";
import { type Cancel, monotonicTimers, type Timers } from "./timers";
import { SocketWriter } from "./writer";

export interface HubDeps {
  /** Wall time: slot leases (shared with other instances) and the per-second message budget. */
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
  /** Account events (`resume`, `subscribe` with `types`); absent, connections are told they are not served. */
  accountFeed?: AccountFeedDeps;
  log: Logger;
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
  /** The clock of the hub's own timers (see timers.ts); tests pass a manual one. */
  timers: Timers;
}

export const DEFAULT_HUB_OPTIONS: HubOptions = {
  heartbeatMs: 20_000,
  authTimeoutMs: 5_000,
  softBufferBytes: 64 * 1024,
  hardBufferBytes: 1024 * 1024,
  stallTimeoutMs: 30_000,
  messagesPerSecond: 20,
  flushIntervalMs: 10,
  timers: monotonicTimers,
};

export interface HubStats {
  connections: number;
  authenticated: number;
  subscriptions: number;
  /** Connections receiving account events (the account stream, or the price stream's private actions). */
  accountFeeds: number;
  messagesSent: number;
  updatesConflated: number;
  slowConsumersDropped: number;
}

/** Connections pinged per turn of the event loop by the heartbeat. */
const HEARTBEAT_CHUNK = 256;

export class StreamHub {
  readonly #deps: HubDeps;
  readonly #options: HubOptions;
  readonly #writer: SocketWriter;
  readonly #fanOut: FanOut;
  readonly #host: SessionHost;
  readonly #sessions = new Set<Session>();
  readonly #stopHeartbeat: Cancel;
  #closing = false;

  constructor(deps: HubDeps, options: Partial<HubOptions> = {}) {
    this.#deps = deps;
    this.#options = { ...DEFAULT_HUB_OPTIONS, ...options };
    const { timers } = this.#options;
    this.#writer = new SocketWriter(this.#options, timers, deps.log, {
      drained: (session) => this.#fanOut.write(session),
      dropped: (session) => this.#cleanup(session),
    });
    this.#fanOut = new FanOut(this.#writer, timers, this.#options.flushIntervalMs, (id) => deps.snapshot(id));
    this.#host = { deps, options: this.#options, writer: this.#writer, fanOut: this.#fanOut };
    this.#stopHeartbeat = timers.every(this.#options.heartbeatMs, () => void this.#tick());
  }

  stats(): HubStats {
    let authenticated = 0;
    let subscriptions = 0;
    let accountFeeds = 0;
    for (const s of this.#sessions) {
      if (s.principal) authenticated++;
      subscriptions += s.sids.length;
      if (s.feed) accountFeeds++;
    }
    return {
      connections: this.#sessions.size,
      authenticated,
      subscriptions,
      accountFeeds,
      messagesSent: this.#fanOut.messagesSent,
      updatesConflated: this.#fanOut.updatesConflated,
      slowConsumersDropped: this.#writer.slowConsumersDropped,
    };
  }

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
    kind: StreamKind = "prices",
  ): void {
    const session = new Session(
      this.#host,
      ws,
      socket as Duplex & { writableLength: number },
      this.#fanOut.takeIndex(),
      kind,
    );
    this.#fanOut.register(session);
    this.#sessions.add(session);
    if (principal) {
      session.principal = principal;
      session.slotToken = slotToken;
    } else {
      session.awaitAuth(onAuthenticated ?? null, address);
    }
    ws.on("message", (data, isBinary) => session.receive(data, isBinary));
    ws.on("pong", () => {
      session.alive = true;
    });
    ws.on("close", () => this.#cleanup(session));
    ws.on("error", () => this.#cleanup(session));
    if (this.#closing) session.close(CLOSE.GOING_AWAY, "server shutting down");
  }

  /** One quote update (from the bus) to every subscribed connection. */
  publish(update: QuoteUpdate): void {
    this.#fanOut.publish(update);
  }

  /** Closes every connection of a key (revoked). */
  closeKey(keyId: string, reason: string): number {
    let closed = 0;
    for (const session of this.#sessions) {
      if (session.principal?.keyId !== keyId) continue;
      session.error("UNAUTHORIZED", reason);
      session.close(CLOSE.UNAUTHORIZED, reason);
      closed++;
    }
    return closed;
  }

  /** Key ids with open connections (for revocation checks). */
  keyIds(): string[] {
    const ids = new Set<string>();
    for (const session of this.#sessions) if (session.principal) ids.add(session.principal.keyId);
    return [...ids];
  }

  #cleanup(session: Session): void {
    if (!this.#sessions.delete(session)) return;
    session.closed = true;
    session.ended();
    session.feed?.close();
    this.#fanOut.drop(session);
    if (session.principal && session.slotToken) {
      this.#deps.slots.release(session.principal.keyId, session.slotToken).catch((err) => {
        this.#deps.log.warn({ err }, "could not release a stream connection slot");
      });
    }
  }

  /**
   * Heartbeat: ping everyone, cut peers that did not answer the last ping, keep slots alive. A ping
   * is a socket write: thousands at once would hold the event loop as long as a full pass of
   * updates, so they go out `HEARTBEAT_CHUNK` connections per turn.
   */
  async #tick(): Promise<void> {
    const sessions = [...this.#sessions];
    const held: Array<{ subject: string; token: string }> = [];
    for (let start = 0; start < sessions.length; start += HEARTBEAT_CHUNK) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      const end = Math.min(sessions.length, start + HEARTBEAT_CHUNK);
      for (let i = start; i < end; i++) {
        const session = sessions[i]!;
        if (session.closed) continue;
        if (!session.alive) {
          session.closed = true;
          session.ws.terminate();
          this.#cleanup(session);
          continue;
        }
        session.alive = false;
        try {
          session.ws.ping();
        } catch {
          // closing already
        }
        if (session.stalledSince !== 0) this.#fanOut.write(session);
        if (session.principal && session.slotToken)
          held.push({ subject: session.principal.keyId, token: session.slotToken });
      }
    }
    this.#deps.slots.refresh(held, this.#deps.clock.now()).catch((err) => {
      this.#deps.log.warn({ err }, "could not refresh stream connection slots");
    });
  }

  /** Runs the heartbeat now (tests drive it with a manual clock); resolves when every peer is visited. */
  heartbeat(): Promise<void> {
    return this.#tick();
  }

  /** Says goodbye to every client (1001) and stops the heartbeat. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#stopHeartbeat();
    const open = [...this.#sessions];
    const closed = open.map(
      (session) =>
        new Promise<void>((resolve) => {
          if (session.ws.readyState === WebSocket.CLOSED) resolve();
          else session.ws.once("close", () => resolve());
        }),
    );
    for (const session of open) session.close(CLOSE.GOING_AWAY, "server shutting down");
    let stopWaiting: Cancel = () => {};
    await Promise.race([
      Promise.all(closed),
      new Promise((resolve) => {
        stopWaiting = this.#options.timers.after(1_000, () => resolve(undefined));
      }),
    ]);
    stopWaiting();
    for (const session of open) {
      session.ws.terminate();
      this.#cleanup(session);
    }
  }
}
