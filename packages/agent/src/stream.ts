/**
 * The price stream as an agent wants it: one object that stays connected (reconnecting with backoff
 * and jitter), re-subscribes after every reconnect, notices lost messages from the per-connection
 * `seq` (a jump, or any reconnect) and then fetches current prices so nothing stale lingers, and
 * hands updates out by callback or by `for await`.
 */
import { EventEmitter } from "node:events";
import WebSocket from "ws";
import { connectionError } from "./network.js";
import { reconnectDelay } from "./reconnect.js";

/** A `price_update` message (spec 4.2, plus the connection's `seq`). */
export interface PriceUpdate {
  type: "price_update";
  market_id: string;
  price: number | null;
  best_bid: number | null;
  best_ask: number | null;
  volume_24h: number | null;
  timestamp: string;
  /** The connection's message number; absent on updates re-fetched after a gap. */
  seq?: number;
  /** `stream` for live messages, `refetch` for current prices fetched after a gap. */
  source: "stream" | "refetch";
}

export interface GapInfo {
  /** `reconnect` (a new connection: anything in between was missed) or `seq` (a jump). */
  reason: "reconnect" | "seq";
  expected?: number;
  received?: number;
}

export interface PriceStreamOptions {
  /** The service's base URL (`http://…` or `ws://…`). */
  baseUrl: string;
  apiKey: string;
  /** Markets to follow from the start. */
  marketIds?: readonly string[];
  /** Current prices of markets, used to catch up after a gap (the client passes `prices.get`). */
  fetchPrices?: (
    marketIds: string[],
  ) => Promise<Record<string, Omit<PriceUpdate, "type" | "source" | "market_id"> & object>>;
  /** First reconnect delay in ms (default 250), doubling up to `maxReconnectDelayMs` (default 10,000). */
  reconnectDelayMs?: number;
  maxReconnectDelayMs?: number;
  /** Close and reconnect when nothing (message or ping) arrived for this long (default 45,000 ms). */
  idleTimeoutMs?: number;
  /** Updates held for a slow `for await` consumer; past it the oldest are dropped (default 10,000). */
  bufferSize?: number;
}

/** Close codes after which reconnecting cannot help (bad key, missing permission). */
const FATAL_CLOSE_CODES = new Set([4001, 4003]);

/**
 * A self-healing subscription to `/v1/prices/stream`.
 *
 * Events: `update` (PriceUpdate), `gap` (GapInfo), `subscribed` ({market_ids, rejected}),
 * `open`, `close` ({code, reason}), `error` (Error).
 *
 * @example
 * const stream = client.prices.stream(["kalshi:KXFED-26DEC-T4.00"]);
 * stream.on("update", (u) => console.log(u.market_id, u.price));
 * stream.on("gap", (g) => console.warn("missed updates", g));
 * // or: for await (const u of stream) console.log(u.price);
 * stream.close();
 */
export class PriceStream extends EventEmitter implements AsyncIterable<PriceUpdate> {
  readonly #options: PriceStreamOptions;
  readonly #wanted = new Set<string>();
  #socket: WebSocket | undefined;
  #expectedSeq = 1;
  #connections = 0;
  #attempt = 0;
  #closed = false;
  #idleTimer: NodeJS.Timeout | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;
  readonly #buffer: PriceUpdate[] = [];
  #wake: (() => void) | undefined;

  constructor(options: PriceStreamOptions) {
    super();
    this.#options = options;
    for (const id of options.marketIds ?? []) this.#wanted.add(id);
    // An `error` event with no listener would throw; surface errors through iteration instead.
    this.on("error", () => {});
    this.#connect();
  }

  /** The markets this stream follows. */
  get marketIds(): string[] {
    return [...this.#wanted];
  }

  /** Whether a connection is open right now. */
  get connected(): boolean {
    return this.#socket?.readyState === WebSocket.OPEN;
  }

  /** Follows more markets (sent now if connected, and after every reconnect). */
  subscribe(marketIds: readonly string[]): void {
    const fresh = marketIds.filter((id) => !this.#wanted.has(id));
    for (const id of fresh) this.#wanted.add(id);
    if (fresh.length > 0) this.#send({ action: "subscribe", market_ids: fresh });
  }

  /** Stops following markets. */
  unsubscribe(marketIds: readonly string[]): void {
    const gone = marketIds.filter((id) => this.#wanted.delete(id));
    if (gone.length > 0) this.#send({ action: "unsubscribe", market_ids: gone });
  }

  /** Closes for good: no reconnect; a `for await` loop ends. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    clearTimeout(this.#idleTimer);
    this.#socket?.close(1000, "client closed");
    this.#wake?.();
  }

  /** Drops the current connection as if the network failed (tests, or to force a fresh one). */
  dropConnection(): void {
    this.#socket?.terminate();
  }

  /** Iterates updates until `close()`; leaving the loop early (break, throw) closes the stream. */
  async *[Symbol.asyncIterator](): AsyncIterator<PriceUpdate> {
    try {
      while (true) {
        const next = this.#buffer.shift();
        if (next) {
          yield next;
          continue;
        }
        if (this.#closed) return;
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
      }
    } finally {
      this.close();
    }
  }

  #send(message: object): void {
    if (this.#socket?.readyState === WebSocket.OPEN) this.#socket.send(JSON.stringify(message));
  }

  #url(): string {
    const base = this.#options.baseUrl.replace(/\/+$/, "").replace(/^http/, "ws");
    return `${base}/v1/prices/stream`;
  }

  #connect(): void {
    if (this.#closed) return;
    const socket = new WebSocket(this.#url(), {
      headers: { authorization: `Bearer ${this.#options.apiKey}` },
    });
    this.#socket = socket;
    socket.on("open", () => {
      this.#attempt = 0;
      this.#expectedSeq = 1;
      this.#connections++;
      this.#touch();
      this.emit("open");
      if (this.#wanted.size > 0) this.#send({ action: "subscribe", market_ids: [...this.#wanted] });
      // Whatever changed while we were away never reached us.
      if (this.#connections > 1) this.#gap({ reason: "reconnect" });
    });
    socket.on("ping", () => this.#touch());
    socket.on("message", (raw) => {
      this.#touch();
      let message: { type?: string; [key: string]: unknown };
      try {
        message = JSON.parse(String(raw));
      } catch {
        this.emit("error", new Error("stream: a message that is not JSON"));
        return;
      }
      this.#onMessage(message);
    });
    let refused = false;
    socket.on("unexpected-response", (_request, response) => {
      // The upgrade was refused with an HTTP error (401/403/429): say why, then treat as a close.
      refused = true;
      this.emit("error", new Error(`stream: upgrade refused with HTTP ${response.statusCode}`));
      if (response.statusCode === 401 || response.statusCode === 403) this.#closed = true;
      socket.terminate();
    });
    // After a refused upgrade ws reports its own abort: the refusal has said it all.
    socket.on("error", (error) => {
      if (refused) return;
      this.emit(
        "error",
        connectionError(
          "GET",
          this.#url(),
          error,
          this.#options.baseUrl,
          this.#closed ? "" : "; reconnecting",
        ),
      );
    });
    socket.on("close", (code, reason) => {
      clearTimeout(this.#idleTimer);
      this.emit("close", { code, reason: String(reason) });
      if (FATAL_CLOSE_CODES.has(code)) this.#closed = true;
      if (this.#closed) {
        this.#wake?.();
        return;
      }
      this.#scheduleReconnect(code === 4029);
    });
  }

  #scheduleReconnect(limited: boolean): void {
    const delay = reconnectDelay(this.#attempt++, this.#options, limited);
    this.#reconnectTimer = setTimeout(() => this.#connect(), delay);
  }

  #touch(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => this.#socket?.terminate(), this.#options.idleTimeoutMs ?? 45_000);
    this.#idleTimer.unref?.();
  }

  #onMessage(message: { type?: string; [key: string]: unknown }): void {
    switch (message.type) {
      case "price_update": {
        const seq = typeof message.seq === "number" ? message.seq : undefined;
        if (seq !== undefined) {
          if (seq > this.#expectedSeq)
            this.#gap({ reason: "seq", expected: this.#expectedSeq, received: seq });
          if (seq >= this.#expectedSeq) this.#expectedSeq = seq + 1;
        }
        this.#deliver({ ...(message as unknown as PriceUpdate), source: "stream" });
        break;
      }
      case "subscribed":
      case "unsubscribed":
        this.emit(message.type, message);
        break;
      case "error":
        this.emit("error", new Error(`stream: ${String(message.code)}: ${String(message.message)}`));
        break;
      default:
        break;
    }
  }

  #deliver(update: PriceUpdate): void {
    this.emit("update", update);
    this.#buffer.push(update);
    if (this.#buffer.length > (this.#options.bufferSize ?? 10_000)) this.#buffer.shift();
    this.#wake?.();
  }

  /** Missed messages: say so, then bring every followed market up to date from REST. */
  #gap(info: GapInfo): void {
    this.emit("gap", info);
    const fetchPrices = this.#options.fetchPrices;
    const ids = [...this.#wanted];
    if (!fetchPrices || ids.length === 0) return;
    (async () => {
      for (let i = 0; i < ids.length; i += 100) {
        const prices = await fetchPrices(ids.slice(i, i + 100));
        for (const [marketId, entry] of Object.entries(prices)) {
          const e = entry as Record<string, unknown>;
          this.#deliver({
            type: "price_update",
            market_id: marketId,
            price: (e.price as number | null) ?? null,
            best_bid: (e.best_bid as number | null) ?? null,
            best_ask: (e.best_ask as number | null) ?? null,
            volume_24h: (e.volume_24h as number | null) ?? null,
            timestamp: (e.updated_at as string | undefined) ?? new Date().toISOString(),
            source: "refetch",
          });
        }
      }
    })().catch((error: unknown) =>
      this.emit("error", error instanceof Error ? error : new Error(String(error))),
    );
  }
}
