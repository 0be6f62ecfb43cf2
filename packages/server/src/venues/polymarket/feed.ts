/**
 * The CLOB market-channel WebSocket client: subscribes by token id, keeps the connection alive
 * with text `PING` every 10 s, maintains local books through LocalBooks, and when the socket drops
 * (or goes silent) reconnects with exponential backoff and full jitter, resubscribes every token and
 * waits for fresh `book` snapshots before it reports `resynced`. VENUES.md §1.4 "Market channel".
 */
import WebSocket from "ws";
import { type Clock, isoFromMs } from "../../infra/clock";
import type { FeedEvent, FeedSubscription } from "../venue";
import { LocalBooks } from "./books";
import type { VenueLog } from "./fetcher";
import { parseWsFrame, type Report, type TokenPair } from "./normalize";

export interface MarketFeedOptions {
  /** Full market-channel URL, e.g. wss://ws-subscriptions-clob.polymarket.com/ws/market. */
  url: string;
  clock: Clock;
  log: VenueLog;
  report: Report;
  /** VENUES.md: PING every 10 s. */
  pingIntervalMs?: number;
  /** Silence (no frame, not even PONG) after which the socket is presumed dead. */
  silenceTimeoutMs?: number;
  backoffBaseMs?: number;
  backoffCapMs?: number;
  random?: () => number;
}

export class MarketFeed implements FeedSubscription {
  readonly #books: LocalBooks;
  #socket: WebSocket | null = null;
  #closed = false;
  #attempt = 0;
  #everConnected = false;
  #awaitingResync = false;
  #reconnectTimer: NodeJS.Timeout | null = null;
  #pingTimer: NodeJS.Timeout | null = null;
  #lastFrameAt = 0;
  /** Last connection state told to the listener, so failed retries do not repeat "disconnected". */
  #told: "connected" | "disconnected" | null = null;

  constructor(
    private readonly options: MarketFeedOptions,
    private readonly resolve: (marketIds: string[]) => Promise<TokenPair[]>,
    private readonly onEvent: (event: FeedEvent) => void,
  ) {
    this.#books = new LocalBooks(options.report, () => isoFromMs(options.clock.now()));
  }

  async add(marketIds: string[]): Promise<void> {
    if (this.#closed) return;
    const pairs = await this.resolve(marketIds);
    const fresh = pairs.filter((p) => !this.#books.pairs().some((q) => q.marketId === p.marketId));
    for (const pair of fresh) this.#books.track(pair);
    if (fresh.length === 0) return;
    if (this.#socket?.readyState === WebSocket.OPEN) {
      this.#send({ assets_ids: fresh.flatMap((p) => [p.yes, p.no]), operation: "subscribe" });
    } else if (!this.#socket && !this.#reconnectTimer) {
      this.#connect();
    }
  }

  async remove(marketIds: string[]): Promise<void> {
    const gone = this.#books.pairs().filter((p) => marketIds.includes(p.marketId));
    for (const pair of gone) this.#books.untrack(pair.marketId);
    if (gone.length > 0 && this.#socket?.readyState === WebSocket.OPEN)
      this.#send({ assets_ids: gone.flatMap((p) => [p.yes, p.no]), operation: "unsubscribe" });
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = null;
    this.#stopPing();
    const socket = this.#socket;
    this.#socket = null;
    if (socket && socket.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        socket.once("close", () => resolve());
        socket.close();
        setTimeout(() => {
          socket.terminate();
          resolve();
        }, 1_000).unref();
      });
    }
  }

  #send(message: unknown): void {
    this.#socket?.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  #emit(event: FeedEvent): void {
    try {
      this.onEvent(event);
    } catch (error) {
      this.options.log.warn({ venue: "polymarket", error: String(error) }, "polymarket feed: listener threw");
    }
  }

  #connect(): void {
    if (this.#closed) return;
    const socket = new WebSocket(this.options.url);
    this.#socket = socket;
    let opened = false;
    socket.on("open", () => {
      opened = true;
      this.#lastFrameAt = this.options.clock.now();
      const tokens = this.#books.pairs().flatMap((p) => [p.yes, p.no]);
      this.#send({ assets_ids: tokens, type: "market", custom_feature_enabled: true });
      this.#startPing();
      if (this.#everConnected) this.#awaitingResync = true;
      this.#everConnected = true;
      this.#told = "connected";
      this.#emit({ kind: "connection", state: "connected" });
    });
    socket.on("message", (data) => {
      this.#lastFrameAt = this.options.clock.now();
      this.#attempt = 0;
      for (const msg of parseWsFrame(data.toString(), this.options.report)) {
        for (const event of this.#books.apply(msg)) this.#emit(event);
      }
      if (this.#awaitingResync && this.#books.pairs().every((p) => this.#books.book(p.marketId))) {
        this.#awaitingResync = false;
        this.#emit({ kind: "connection", state: "resynced" });
      }
    });
    socket.on("error", (error) => {
      this.options.log.warn({ venue: "polymarket", error: error.message }, "polymarket feed: socket error");
    });
    socket.on("close", (code, reason) => {
      if (this.#socket !== socket) return;
      this.#socket = null;
      this.#stopPing();
      this.#books.reset();
      if (this.#told !== "disconnected") {
        this.#told = "disconnected";
        this.#emit({
          kind: "connection",
          state: "disconnected",
          reason: opened
            ? `closed ${code}${reason.length ? `: ${reason.toString()}` : ""}`
            : `could not connect to ${this.options.url}`,
        });
      }
      this.#scheduleReconnect();
    });
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#reconnectTimer) return;
    const base = this.options.backoffBaseMs ?? 500;
    const cap = this.options.backoffCapMs ?? 30_000;
    const random = this.options.random ?? Math.random;
    const delay = Math.min(cap, base * 2 ** this.#attempt) * (0.5 + random() / 2);
    this.#attempt++;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = null;
      this.#connect();
    }, delay);
    this.#reconnectTimer.unref?.();
  }

  #startPing(): void {
    this.#stopPing();
    const every = this.options.pingIntervalMs ?? 10_000;
    const silence = this.options.silenceTimeoutMs ?? every * 3;
    this.#pingTimer = setInterval(() => {
      const socket = this.#socket;
      if (!socket || socket.readyState !== WebSocket.OPEN) return;
      if (this.options.clock.now() - this.#lastFrameAt > silence) {
        this.options.log.warn({ venue: "polymarket" }, "polymarket feed: silent socket; reconnecting");
        socket.terminate();
        return;
      }
      socket.send("PING");
    }, every);
    this.#pingTimer.unref?.();
  }

  #stopPing(): void {
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    this.#pingTimer = null;
  }
}
