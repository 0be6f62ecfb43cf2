/**
 * The private account stream as an agent wants it: one object that stays connected to
 * `/v1/account/stream` (reconnecting with backoff and jitter) and, after every reconnect, resumes
 * from the last event it received, so the agent sees each of its account's events once, in order,
 * none missed. Events are handed out by callback or by `for await`, and the seq of each handled
 * event can be kept in a `CursorStore` so that a restarted agent reads on from there.
 *
 * Unlike the price stream, nothing is ever dropped: a `for await` consumer that falls behind makes
 * the stream pause (close the connection, keep what it holds) and resume once it caught up; and a
 * refused key ends a `for await` loop with an error, never as if the stream had simply ended.
 */
import { EventEmitter } from "node:events";
import WebSocket from "ws";
import type { AccountEvent } from "./client.js";
import type { CursorStore } from "./cursor-store.js";
import { connectionError } from "./network.js";
import { reconnectDelay } from "./reconnect.js";

export interface AccountStreamOptions {
  /** The service's base URL (`http://…` or `ws://…`). */
  baseUrl: string;
  apiKey: string;
  /**
   * Start after this event (its `seq` or `evt_…` id; 0 = the oldest event kept). Default: the
   * cursor store's saved seq; with neither, the stream starts live, from now.
   */
  after?: number | string;
  /** Only these event types (default: every type). */
  types?: readonly string[];
  /**
   * Supplies the start (when `after` is not given) and keeps the seq of each handled event: with
   * `for await`, an event is saved when the loop asks for the next one; with `on("event")`
   * listeners (and no loop), right after the listeners returned.
   */
  cursor?: CursorStore;
  /** What to do when the service no longer keeps the start cursor: `restart` (default) or `stop`. */
  onExpired?: "restart" | "stop";
  /** First reconnect delay in ms (default 250), doubling up to `maxReconnectDelayMs` (default 10,000). */
  reconnectDelayMs?: number;
  maxReconnectDelayMs?: number;
  /** Close and reconnect when nothing (message or ping) arrived for this long (default 45,000 ms). */
  idleTimeoutMs?: number;
  /**
   * Events held for a `for await` consumer (default 10,000). When it is full the stream pauses (the
   * connection is closed, nothing is dropped) and resumes once the consumer has taken half.
   */
  bufferSize?: number;
}

/** `caught_up`: the replay part of a resume has ended; live from now on. */
export interface AccountStreamCaughtUp {
  replayed: number;
}

/** `close`: one connection closed (the stream itself may reconnect). */
export interface AccountStreamClose {
  code: number;
  reason: string;
}

/** `expired`: the service no longer keeps events as old as the cursor (CURSOR_EXPIRED). */
export interface AccountStreamExpired {
  /** The cursor that was refused. */
  after: number | string | undefined;
  retention_days?: number;
  /** The oldest event still kept (null when none is). */
  oldest_available?: { seq: number; id: string } | null;
  restart_after?: number;
  [key: string]: unknown;
}

/**
 * An error of the account stream. `code` is the service's code (`CURSOR_EXPIRED`…) or one of
 * `UNAUTHORIZED` / `FORBIDDEN` (the key was refused: the stream stopped), `UPGRADE_REFUSED`,
 * `CURSOR_LOAD_FAILED`, `CURSOR_SAVE_FAILED`, `BAD_MESSAGE`.
 */
export class AccountStreamError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "AccountStreamError";
  }
}

/** Close codes the client sends when it pauses, and the ones that end the stream for good. */
const PAUSE_CLOSE_CODE = 4000;
const FATAL_CLOSE_CODES: Record<number, [code: string, why: string]> = {
  4001: ["UNAUTHORIZED", "the API key was refused (bad or revoked)"],
  4003: ["FORBIDDEN", "the API key lacks the read permission"],
};
const CONNECTION_LIMIT_CLOSE_CODE = 4029;
/** How many recent event ids are remembered to drop a repeated one. */
const RECENT_IDS = 1_000;

type Message = { type?: string; [key: string]: unknown };

/**
 * A self-healing subscription to `/v1/account/stream`.
 *
 * Events: `event` (AccountEvent), `caught_up` ({replayed}), `expired` (AccountStreamExpired),
 * `resumed` ({after}), `subscribed` ({types}), `open`, `close` ({code, reason}),
 * `error` (AccountStreamError or Error).
 *
 * @example
 * const stream = client.accountStream({ cursor: new FileCursorStore("./state/events.json") });
 * for await (const event of stream) console.log(event.seq, event.type, event.data);
 * // or: stream.on("event", (event) => …); later stream.close();
 */
export class AccountStream extends EventEmitter implements AsyncIterable<AccountEvent> {
  readonly #options: AccountStreamOptions;
  readonly #types: string[] | undefined;
  #socket: WebSocket | undefined;
  /** Where the next resume starts: the last event received, else the start cursor. */
  #after: number | string | undefined;
  #lastSeq: number | undefined;
  #attempt = 0;
  #closed = false;
  /** Why the stream stopped on its own (a refused key…): a `for await` loop throws it. */
  #fatal: Error | undefined;
  /** The consumer fell behind: the connection was closed on purpose and reopens once it caught up. */
  #paused = false;
  #iterating = false;
  #idleTimer: NodeJS.Timeout | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;
  readonly #buffer: AccountEvent[] = [];
  #wake: (() => void) | undefined;
  readonly #recentIds = new Set<string>();
  readonly #recentOrder: string[] = [];
  #saving: Promise<void> = Promise.resolve();
  #pendingSave: number | undefined;

  constructor(options: AccountStreamOptions) {
    super();
    this.#options = options;
    this.#types = options.types && options.types.length > 0 ? [...options.types] : undefined;
    // An `error` event with no listener would throw; surface errors through iteration instead.
    this.on("error", () => {});
    // Events that arrived before anyone listened wait in the buffer; a late first `event` listener gets them.
    this.on("newListener", (name) => {
      if (name === "event") queueMicrotask(() => this.#flushToListeners());
    });
    void this.#start();
  }

  /** Whether a connection is open right now. */
  get connected(): boolean {
    return this.#socket?.readyState === WebSocket.OPEN;
  }

  /** The seq of the last event received (where a reconnect resumes from); undefined before the first. */
  get lastSeq(): number | undefined {
    return this.#lastSeq;
  }

  /** Closes for good: no reconnect; a `for await` loop ends (events still buffered are not handed out). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopTimers();
    this.#shut("client closed");
    this.#wake?.();
  }

  /** Drops the current connection as if the network failed (tests, or to force a fresh one). */
  dropConnection(): void {
    this.#socket?.terminate();
  }

  /**
   * Iterates events until `close()`; leaving the loop early (break, throw) closes the stream. When
   * the stream stops on its own (refused key, expired cursor with `onExpired: "stop"`) the loop
   * hands out what it already received, then throws why.
   */
  async *[Symbol.asyncIterator](): AsyncIterator<AccountEvent> {
    if (this.#iterating) throw new Error("account stream: already iterated by another for-await loop");
    this.#iterating = true;
    try {
      while (true) {
        if (this.#closed && !this.#fatal) return;
        const next = this.#buffer.shift();
        if (next) {
          this.#maybeUnpause();
          yield next;
          // Reached only when the loop asks for the next event: this one was handled.
          await this.#save(next.seq);
          continue;
        }
        if (this.#fatal) throw this.#fatal;
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
      }
    } finally {
      this.#iterating = false;
      this.close();
    }
  }

  async #start(): Promise<void> {
    try {
      this.#after = this.#options.after ?? (await this.#options.cursor?.load());
    } catch (error) {
      this.#fail(new AccountStreamError("CURSOR_LOAD_FAILED", `account stream: ${describe(error)}`));
      return;
    }
    this.#connect();
  }

  #url(): string {
    const base = this.#options.baseUrl.replace(/\/+$/, "").replace(/^http/, "ws");
    return `${base}/v1/account/stream`;
  }

  #connect(): void {
    if (this.#closed || this.#paused) return;
    const socket = new WebSocket(this.#url(), {
      headers: { authorization: `Bearer ${this.#options.apiKey}` },
    });
    this.#socket = socket;
    let refused = false;
    let limited = false;
    socket.on("open", () => {
      this.#touch(socket);
      // Resume from the last event received (or the start cursor); with neither, start live.
      if (this.#after !== undefined)
        this.#send(socket, {
          action: "resume",
          after: this.#after,
          ...(this.#types ? { types: this.#types } : {}),
        });
      else this.#send(socket, { action: "subscribe", types: this.#types ?? ["*"] });
      this.emit("open");
    });
    socket.on("ping", () => this.#touch(socket));
    socket.on("message", (raw) => {
      if (this.#closed) return;
      this.#touch(socket);
      let message: Message;
      try {
        message = JSON.parse(String(raw));
      } catch {
        this.emit(
          "error",
          new AccountStreamError("BAD_MESSAGE", "account stream: a message that is not JSON"),
        );
        return;
      }
      this.#onMessage(socket, message);
    });
    socket.on("unexpected-response", (_request, response) => {
      // The upgrade was refused with an HTTP error: say why, then treat as a close.
      refused = true;
      const status = response.statusCode ?? 0;
      const message = `account stream: upgrade refused with HTTP ${status}`;
      if (status === 401 || status === 403)
        this.#fail(
          new AccountStreamError(status === 401 ? "UNAUTHORIZED" : "FORBIDDEN", message, { status }),
        );
      else {
        limited = status === 429;
        this.emit("error", new AccountStreamError("UPGRADE_REFUSED", message, { status }));
      }
      socket.terminate();
    });
    socket.on("error", (error) => {
      // After a refused upgrade ws reports its own abort; after close() nothing matters any more.
      if (!refused && !this.#closed)
        this.emit(
          "error",
          connectionError("GET", this.#url(), error, this.#options.baseUrl, "; reconnecting"),
        );
    });
    socket.on("close", (code, rawReason) => {
      clearTimeout(this.#idleTimer);
      if (this.#socket === socket) this.#socket = undefined;
      const reason = String(rawReason);
      this.emit("close", { code, reason } satisfies AccountStreamClose);
      if (this.#closed) {
        this.#wake?.();
        return;
      }
      const fatal = FATAL_CLOSE_CODES[code];
      if (fatal) {
        const [errorCode, why] = fatal;
        const message = `account stream: ${why} (close ${code}${reason ? ` ${reason}` : ""})`;
        this.#fail(new AccountStreamError(errorCode, message, { close_code: code }));
        return;
      }
      if (this.#paused) {
        this.#maybeUnpause();
        return;
      }
      this.#scheduleReconnect(limited || code === CONNECTION_LIMIT_CLOSE_CODE);
    });
  }

  #onMessage(socket: WebSocket, message: Message): void {
    switch (message.type) {
      case "event": {
        const { seq, id } = message;
        if (typeof seq !== "number" || typeof id !== "string") {
          this.emit(
            "error",
            new AccountStreamError("BAD_MESSAGE", "account stream: an event without seq or id"),
          );
          return;
        }
        // The service never repeats an event; this is cheap insurance.
        if (this.#recentIds.has(id)) return;
        this.#remember(id);
        this.#attempt = 0;
        // Not compared with earlier seqs: delivery order is not seq order. The last one is the cursor.
        this.#after = seq;
        this.#lastSeq = seq;
        this.#deliver({
          seq,
          id,
          type: String(message.event_type),
          timestamp: String(message.timestamp),
          data: message.data,
        });
        return;
      }
      case "resumed":
      case "subscribed":
        // The connection works: the next drop starts the backoff from the beginning again.
        this.#attempt = 0;
        // Started "from now": the service names the event it starts after, so a drop before the
        // first event resumes from there instead of from a later "now".
        if (message.type === "subscribed" && this.#after === undefined && typeof message.after === "number")
          this.#after = message.after;
        this.emit(message.type, message);
        return;
      case "caught_up":
        this.emit("caught_up", { replayed: Number(message.replayed ?? 0) } satisfies AccountStreamCaughtUp);
        return;
      case "error":
        this.#onServerError(socket, message);
        return;
      default:
        return; // authenticated, pong, and whatever a newer service adds
    }
  }

  #onServerError(socket: WebSocket, message: Message): void {
    const code = String(message.code ?? "ERROR");
    const details = (message.details ?? undefined) as Record<string, unknown> | undefined;
    const error = new AccountStreamError(
      code,
      `account stream: ${code}: ${String(message.message)}`,
      details,
    );
    if (code !== "CURSOR_EXPIRED") {
      this.emit("error", error);
      return;
    }
    this.emit("expired", { ...details, after: this.#after } satisfies AccountStreamExpired);
    if ((this.#options.onExpired ?? "restart") === "stop") {
      this.#fail(error);
      return;
    }
    // Start again from the oldest event the service keeps (what was older is gone for good).
    this.#after = 0;
    this.#send(socket, { action: "resume", after: 0, ...(this.#types ? { types: this.#types } : {}) });
  }

  #deliver(event: AccountEvent): void {
    const toListeners = !this.#iterating && this.listenerCount("event") > 0;
    this.emit("event", event);
    if (toListeners) {
      // Reached only when every listener returned: the event was handled.
      void this.#save(event.seq);
      return;
    }
    // Held for a `for await` loop (running, or yet to start). Never dropped: when full, pause.
    this.#buffer.push(event);
    this.#wake?.();
    if (this.#buffer.length >= this.#bufferSize() && !this.#paused) this.#pause();
  }

  #flushToListeners(): void {
    while (!this.#iterating && !this.#closed && this.listenerCount("event") > 0) {
      const event = this.#buffer.shift();
      if (!event) break;
      this.emit("event", event);
      void this.#save(event.seq);
    }
    this.#maybeUnpause();
  }

  #bufferSize(): number {
    return Math.max(1, this.#options.bufferSize ?? 10_000);
  }

  /** The consumer is behind: close this connection (what is in flight still arrives and is kept). */
  #pause(): void {
    this.#paused = true;
    clearTimeout(this.#reconnectTimer);
    const socket = this.#socket;
    if (socket?.readyState === WebSocket.OPEN) socket.close(PAUSE_CLOSE_CODE, "client buffer full");
    else if (socket?.readyState === WebSocket.CONNECTING) socket.terminate();
  }

  /** Once the buffer is below half and the old connection is gone, connect again and resume. */
  #maybeUnpause(): void {
    if (!this.#paused || this.#closed || this.#socket) return;
    if (this.#buffer.length >= this.#bufferSize() / 2) return;
    this.#paused = false;
    this.#connect();
  }

  /** Stops for good with an error: no reconnect, and a `for await` loop throws it. */
  #fail(error: Error): void {
    if (this.#closed) return;
    this.#fatal = error;
    this.#closed = true;
    this.#stopTimers();
    this.emit("error", error);
    this.#shut("client stopped");
    this.#wake?.();
  }

  #shut(reason: string): void {
    const socket = this.#socket;
    if (socket?.readyState === WebSocket.OPEN) socket.close(1000, reason);
    else if (socket?.readyState === WebSocket.CONNECTING) socket.terminate();
  }

  #stopTimers(): void {
    clearTimeout(this.#reconnectTimer);
    clearTimeout(this.#idleTimer);
  }

  #scheduleReconnect(limited: boolean): void {
    const delay = reconnectDelay(this.#attempt++, this.#options, limited);
    this.#reconnectTimer = setTimeout(() => this.#connect(), delay);
  }

  #touch(socket: WebSocket): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => socket.terminate(), this.#options.idleTimeoutMs ?? 45_000);
    this.#idleTimer.unref?.();
  }

  #send(socket: WebSocket, message: object): void {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }

  #remember(id: string): void {
    this.#recentIds.add(id);
    this.#recentOrder.push(id);
    if (this.#recentOrder.length > RECENT_IDS) this.#recentIds.delete(this.#recentOrder.shift()!);
  }

  /** Saves the cursor; saves never overlap, and a burst collapses into a save of its last seq. */
  #save(seq: number): Promise<void> {
    const cursor = this.#options.cursor;
    if (!cursor) return Promise.resolve();
    const queued = this.#pendingSave !== undefined;
    this.#pendingSave = seq;
    if (!queued)
      this.#saving = this.#saving
        .then(async () => {
          const latest = this.#pendingSave!;
          this.#pendingSave = undefined;
          await cursor.save(latest);
        })
        .catch((error: unknown) => {
          this.emit(
            "error",
            new AccountStreamError("CURSOR_SAVE_FAILED", `account stream: ${describe(error)}`),
          );
        });
    return this.#saving;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
