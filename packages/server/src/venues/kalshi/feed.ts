/**
 * Kalshi's market WebSocket (VENUES.md §2.4) as a FeedSubscription that keeps itself correct:
 *
 * - the upgrade is signed like a REST call over `GET /trade-api/ws/v2` (current docs require auth
 *   on every connection: the adapter starts no feed without a key, see `feedUnavailable`);
 * - commands follow the documented format `{id, cmd: "subscribe", params: {channels, market_tickers}}`;
 * - each market's book is kept locally from `orderbook_snapshot` + `orderbook_delta`; `seq` is
 *   checked per subscription (sid), and a gap — or a delta that makes no sense — unsubscribes that
 *   sid and subscribes again, which makes the venue send fresh snapshots; once they are in, a
 *   `connection: resynced` event is emitted. Books are never published between the gap and the
 *   fresh snapshot;
 * - on a dropped connection it reconnects with exponential backoff and full jitter and resubscribes
 *   every market; dead connections are found with ping/pong.
 */
import WebSocket from "ws";
import { type Clock, isoNow } from "../../infra/clock";
import type { FeedEvent, FeedSubscription, VenueFill } from "../venue";
import { type KalshiKey, kalshiAuthHeaders } from "./auth";
import { LocalBook } from "./book";
import { parseWsMessage } from "./messages";
import { type NormalizeContext, type Report, tickerFromMarketId } from "./normalize";

export const MARKET_CHANNELS = ["orderbook_delta", "ticker", "trade"] as const;

export interface KalshiFeedOptions {
  wsUrl: string;
  clock: Clock;
  onEvent: (event: FeedEvent) => void;
  report: Report;
  /** Signs the upgrade when present. */
  key?: KalshiKey;
  /** Own fills (private `fill` channel; needs `key`). */
  onFill?: (fill: VenueFill) => void;
  backoffBaseMs?: number;
  backoffCapMs?: number;
  pingIntervalMs?: number;
  random?: () => number;
}

interface Subscription {
  channel: string;
  tickers: string[];
  lastSeq: number | null;
}

interface Resync {
  waiting: Set<string>;
  reason: string;
}

export class KalshiFeed implements FeedSubscription {
  readonly #options: KalshiFeedOptions;
  readonly #tickers = new Set<string>();
  readonly #subs = new Map<number, Subscription>();
  /** Command id -> the tickers it subscribed (acks carry the id). */
  readonly #pending = new Map<number, string[]>();
  readonly #books = new Map<string, LocalBook>();
  /** Tickers whose book is waiting for a fresh snapshot after a gap. */
  readonly #resyncs: Resync[] = [];
  #ws: WebSocket | null = null;
  #nextId = 1;
  #attempt = 0;
  #closed = false;
  #reconnectTimer: NodeJS.Timeout | null = null;
  #pingTimer: NodeJS.Timeout | null = null;
  #alive = true;

  /** `now` is only a fallback for messages without a time: computed when asked, not per frame. */
  readonly #ctx: NormalizeContext;

  constructor(options: KalshiFeedOptions) {
    this.#options = options;
    const clock = options.clock;
    this.#ctx = {
      report: options.report,
      get now() {
        return isoNow(clock);
      },
    };
  }

  /** Opens the connection; resolves on the first open or the first failure (it keeps retrying). */
  start(marketIds: string[]): Promise<void> {
    for (const id of marketIds) this.#tickers.add(tickerFromMarketId(id));
    return new Promise((resolve) => this.#connect(resolve));
  }

  async add(marketIds: string[]): Promise<void> {
    const fresh = marketIds.map(tickerFromMarketId).filter((t) => !this.#tickers.has(t));
    for (const t of fresh) this.#tickers.add(t);
    if (fresh.length > 0 && this.#isOpen()) this.#subscribe([...this.#channels()], fresh);
  }

  async remove(marketIds: string[]): Promise<void> {
    const gone = new Set(marketIds.map(tickerFromMarketId).filter((t) => this.#tickers.has(t)));
    if (gone.size === 0) return;
    for (const t of gone) {
      this.#tickers.delete(t);
      this.#books.delete(t);
      for (const resync of this.#resyncs) resync.waiting.delete(t);
    }
    this.#resyncs.splice(0, this.#resyncs.length, ...this.#resyncs.filter((r) => r.waiting.size > 0));
    for (const [sid, sub] of this.#subs) {
      const removed = sub.tickers.filter((t) => gone.has(t));
      if (removed.length === 0) continue;
      sub.tickers = sub.tickers.filter((t) => !gone.has(t));
      if (sub.tickers.length === 0) {
        this.#subs.delete(sid);
        this.#send({ id: this.#nextId++, cmd: "unsubscribe", params: { sids: [sid] } });
      } else {
        this.#send({
          id: this.#nextId++,
          cmd: "update_subscription",
          params: { sids: [sid], market_tickers: removed, action: "delete_markets" },
        });
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
    this.#stopPing();
    const ws = this.#ws;
    this.#ws = null;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        ws.once("close", () => resolve());
        ws.close();
        setTimeout(() => {
          ws.terminate();
          resolve();
        }, 1000).unref();
      });
    }
  }

  // -------------------------------------------------------------------------------------------

  *#channels(): Iterable<string> {
    yield* MARKET_CHANNELS;
    if (this.#options.onFill && this.#options.key) yield "fill";
  }

  #isOpen(): boolean {
    return this.#ws !== null && this.#ws.readyState === WebSocket.OPEN;
  }

  #emit(event: FeedEvent): void {
    try {
      this.#options.onEvent(event);
    } catch (error) {
      this.#options.report("feed_listener_threw", { err: error });
    }
  }

  #connect(settled?: () => void): void {
    if (this.#closed) return;
    const { wsUrl, key, clock } = this.#options;
    const headers = key ? kalshiAuthHeaders(key, "GET", new URL(wsUrl).pathname, clock.now()) : {};
    const ws = new WebSocket(wsUrl, { headers, handshakeTimeout: 10_000 });
    this.#ws = ws;
    let opened = false;
    ws.on("open", () => {
      opened = true;
      this.#attempt = 0;
      this.#subs.clear();
      this.#pending.clear();
      this.#books.clear();
      this.#resyncs.length = 0;
      this.#startPing(ws);
      this.#emit({ kind: "connection", state: "connected" });
      if (this.#tickers.size > 0) this.#subscribe([...this.#channels()], [...this.#tickers]);
      settled?.();
    });
    ws.on("message", (data) => {
      this.#alive = true;
      this.#onFrame(data.toString());
    });
    ws.on("pong", () => {
      this.#alive = true;
    });
    ws.on("error", () => {
      // 'close' follows; the reason is reported there.
    });
    ws.on("unexpected-response", (_req, res) => {
      this.#options.report("ws_upgrade_refused", { status: res.statusCode });
      ws.terminate();
    });
    ws.on("close", (code, reason) => {
      if (this.#ws !== ws) return;
      this.#stopPing();
      this.#ws = null;
      if (this.#closed) return;
      this.#emit({
        kind: "connection",
        state: "disconnected",
        reason: opened ? `closed (${code}${reason.length ? ` ${reason.toString()}` : ""})` : "connect failed",
      });
      if (!opened) settled?.();
      this.#scheduleReconnect();
    });
  }

  #scheduleReconnect(): void {
    const base = this.#options.backoffBaseMs ?? 500;
    const cap = this.#options.backoffCapMs ?? 30_000;
    const random = this.#options.random ?? Math.random;
    const delay = Math.min(cap, base * 2 ** this.#attempt) * (0.5 + random() / 2);
    this.#attempt += 1;
    this.#reconnectTimer = setTimeout(() => this.#connect(), delay);
    this.#reconnectTimer.unref();
  }

  #startPing(ws: WebSocket): void {
    this.#alive = true;
    const interval = this.#options.pingIntervalMs ?? 20_000;
    this.#pingTimer = setInterval(() => {
      if (!this.#alive) {
        ws.terminate();
        return;
      }
      this.#alive = false;
      ws.ping();
    }, interval);
    this.#pingTimer.unref();
  }

  #stopPing(): void {
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    this.#pingTimer = null;
  }

  #send(command: object): void {
    if (this.#isOpen()) this.#ws!.send(JSON.stringify(command));
  }

  #subscribe(channels: string[], tickers: string[]): void {
    const id = this.#nextId++;
    this.#pending.set(id, tickers);
    this.#send({ id, cmd: "subscribe", params: { channels, market_tickers: tickers } });
  }

  /**
   * Feeds one raw frame through exactly the path a socket frame takes (parse, seq checks, local
   * book, events). For replaying recorded traffic and for bench/ingest.
   */
  ingestFrame(text: string): void {
    this.#onFrame(text);
  }

  #onFrame(text: string): void {
    let message: ReturnType<typeof parseWsMessage>;
    try {
      message = parseWsMessage(JSON.parse(text), this.#ctx);
    } catch (error) {
      this.#options.report("ws_frame_unreadable", { err: error });
      return;
    }
    switch (message.type) {
      case "subscribed": {
        const tickers = message.id === null ? undefined : this.#pending.get(message.id);
        this.#subs.set(message.sid, {
          channel: message.channel,
          tickers: tickers ? tickers.filter((t) => this.#tickers.has(t)) : [...this.#tickers],
          lastSeq: null,
        });
        return;
      }
      case "unsubscribed":
        this.#subs.delete(message.sid);
        return;
      case "ok":
        return;
      case "error":
        this.#options.report("ws_command_error", {
          id: message.id,
          code: message.code,
          message: message.message,
        });
        return;
      case "ignored":
        if (message.kind !== "") this.#options.report("ws_unknown_message_type", { type: message.kind });
        return;
    }
    const sub = this.#subs.get(message.sid);
    if (!sub) return; // a sid we dropped (e.g. during a resync) or never asked for
    if (message.seq !== null) {
      const expected = sub.lastSeq === null ? null : sub.lastSeq + 1;
      if (expected !== null && message.seq !== expected) {
        if (sub.channel === "orderbook_delta") {
          this.#resync(
            message.sid,
            sub,
            `seq gap on sid ${message.sid}: expected ${expected}, got ${message.seq}`,
          );
          return;
        }
        this.#options.report("ws_seq_gap", { channel: sub.channel, expected, got: message.seq });
      }
      sub.lastSeq = message.seq;
    }
    switch (message.type) {
      case "orderbook_snapshot": {
        if (!this.#tickers.has(message.ticker)) return;
        let book = this.#books.get(message.ticker);
        if (!book) {
          book = new LocalBook(message.ticker);
          this.#books.set(message.ticker, book);
        }
        book.reset(message.yes, message.no, message.seq);
        this.#emit({ kind: "book", book: book.toOrderBook(isoNow(this.#options.clock)) });
        this.#snapshotArrived(message.ticker);
        return;
      }
      case "orderbook_delta": {
        const book = this.#books.get(message.ticker);
        if (!book || this.#isResyncing(message.ticker)) return;
        if (!book.apply(message.outcome, message.price, message.delta, message.seq)) {
          this.#resync(message.sid, sub, `delta for ${message.ticker} leaves a negative size`);
          return;
        }
        this.#emit({ kind: "book", book: book.toOrderBook(message.timestamp) });
        return;
      }
      case "ticker":
        this.#emit(message.quote);
        return;
      case "trade":
        this.#emit({ kind: "trade", trade: message.trade });
        return;
      case "fill":
        this.#options.onFill?.(message.fill);
        return;
    }
  }

  /** Drops the sid and subscribes its markets again: the venue answers with fresh snapshots. */
  #resync(sid: number, sub: Subscription, reason: string): void {
    this.#subs.delete(sid);
    const tickers = sub.tickers.filter((t) => this.#tickers.has(t));
    for (const t of tickers) this.#books.delete(t);
    if (tickers.length === 0) return;
    this.#resyncs.push({ waiting: new Set(tickers), reason });
    this.#send({ id: this.#nextId++, cmd: "unsubscribe", params: { sids: [sid] } });
    this.#subscribe([sub.channel], tickers);
  }

  #isResyncing(ticker: string): boolean {
    return this.#resyncs.some((r) => r.waiting.has(ticker));
  }

  #snapshotArrived(ticker: string): void {
    for (let i = this.#resyncs.length - 1; i >= 0; i--) {
      const resync = this.#resyncs[i]!;
      if (!resync.waiting.delete(ticker) || resync.waiting.size > 0) continue;
      this.#resyncs.splice(i, 1);
      this.#emit({ kind: "connection", state: "resynced", reason: resync.reason });
    }
  }
}
