/**
 * The CLOB market-channel WebSocket client: subscribes by token id, keeps the connection alive
 * with text `PING` every 10 s, maintains local books through LocalBooks, and when the socket drops
 * (or goes silent) reconnects with exponential backoff and full jitter, resubscribes every token and
 * waits for fresh `book` snapshots before it reports `resynced`. VENUES.md §1.4 "Market channel".
 *
 * A subscription can stall while the socket still answers PING (VENUES-AUDIT #13: nautilus saw
 * connections with many assets go quiet): a token that gets no `book` snapshot within
 * `snapshotTimeoutMs` of being subscribed, or a connection that carries markets but gets no market
 * message at all for `dataSilenceMs`, is taken as stalled and the connection is replaced. A token
 * that still gets no snapshot on the next connection is left alone (the venue may send none for a
 * token without a book; unverified) and reported once. `ShardedMarketFeed` spreads the markets over
 * connections of at most 200 assets each, as nautilus does (Polymarket documents no cap).
 */
import WebSocket from "ws";
import { type Clock, isoFromMs } from "../../infra/clock";
import type { Logger } from "../../infra/log";
import type { FeedEvent, FeedSubscription } from "../venue";
import { LocalBooks } from "./books";
import { parseWsFrame, type Report, type TokenPair } from "./normalize";

export interface MarketFeedOptions {
  /** Full market-channel URL, e.g. wss://ws-subscriptions-clob.polymarket.com/ws/market. */
  url: string;
  clock: Clock;
  log: Logger;
  report: Report;
  /** VENUES.md: PING every 10 s. */
  pingIntervalMs?: number;
  /** Silence (no frame, not even PONG) after which the socket is presumed dead. */
  silenceTimeoutMs?: number;
  /** How long a subscribed token may wait for its `book` snapshot before the subscription is stalled. */
  snapshotTimeoutMs?: number;
  /** No market message for this long, on a connection that carries markets, is a stalled subscription. */
  dataSilenceMs?: number;
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
  /** When the last market message (not PONG) arrived. */
  #lastDataAt = 0;
  /** Subscribed tokens still waiting for their `book` snapshot, and until when. */
  readonly #awaiting = new Map<string, number>();
  /** Tokens whose missing snapshot already replaced a connection once. */
  readonly #stalled = new Set<string>();
  /** Tokens that got no snapshot on two connections: no longer waited for. */
  readonly #quiet = new Set<string>();
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
      const tokens = fresh.flatMap((p) => [p.yes, p.no]);
      this.#await(tokens);
      this.#send({ assets_ids: tokens, operation: "subscribe" });
    } else if (!this.#socket && !this.#reconnectTimer) {
      this.#connect();
    }
  }

  async remove(marketIds: string[]): Promise<void> {
    const gone = this.#books.pairs().filter((p) => marketIds.includes(p.marketId));
    for (const pair of gone) {
      this.#books.untrack(pair.marketId);
      for (const token of [pair.yes, pair.no]) {
        this.#awaiting.delete(token);
        this.#stalled.delete(token);
        this.#quiet.delete(token);
      }
    }
    if (gone.length > 0 && this.#socket?.readyState === WebSocket.OPEN)
      this.#send({ assets_ids: gone.flatMap((p) => [p.yes, p.no]), operation: "unsubscribe" });
  }

  /** Markets this connection carries. */
  get size(): number {
    return this.#books.pairs().length;
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
      this.options.log.warn({ err: error, venue: "polymarket" }, "polymarket feed: listener threw");
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
      this.#lastDataAt = this.#lastFrameAt;
      const tokens = this.#books.pairs().flatMap((p) => [p.yes, p.no]);
      this.#await(tokens);
      this.#send({ assets_ids: tokens, type: "market", custom_feature_enabled: true });
      this.#startPing();
      if (this.#everConnected) this.#awaitingResync = true;
      this.#everConnected = true;
      this.#told = "connected";
      this.#emit({ kind: "connection", state: "connected" });
    });
    socket.on("message", (data) => {
      const now = this.options.clock.now();
      this.#lastFrameAt = now;
      this.#attempt = 0;
      const text = data.toString();
      if (text === "PONG") return;
      this.#lastDataAt = now;
      for (const msg of parseWsFrame(text, this.options.report)) {
        if (msg.event_type === "book" && typeof msg.asset_id === "string") {
          this.#awaiting.delete(msg.asset_id);
          this.#stalled.delete(msg.asset_id);
        }
        for (const event of this.#books.apply(msg)) this.#emit(event);
      }
      if (this.#awaitingResync && this.#books.pairs().every((p) => this.#books.book(p.marketId))) {
        this.#awaitingResync = false;
        this.#emit({ kind: "connection", state: "resynced" });
      }
    });
    socket.on("error", (error) => {
      this.options.log.warn({ err: error, venue: "polymarket" }, "polymarket feed: socket error");
    });
    socket.on("close", (code, reason) => {
      if (this.#socket !== socket) return;
      this.#socket = null;
      this.#stopPing();
      this.#books.reset();
      this.#awaiting.clear();
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
      const now = this.options.clock.now();
      if (now - this.#lastFrameAt > silence) {
        this.options.log.warn({ venue: "polymarket" }, "polymarket feed: silent socket; reconnecting");
        socket.terminate();
        return;
      }
      const stall = this.#stall(now);
      if (stall) {
        this.options.log.warn(
          { venue: "polymarket", reason: stall },
          `polymarket feed: ${stall}; reconnecting`,
        );
        socket.terminate();
        return;
      }
      socket.send("PING");
    }, every);
    this.#pingTimer.unref?.();
  }

  /** Tokens just subscribed: each should get its `book` snapshot before the deadline. */
  #await(tokens: string[]): void {
    const deadline = this.options.clock.now() + (this.options.snapshotTimeoutMs ?? 15_000);
    for (const token of tokens) if (!this.#quiet.has(token)) this.#awaiting.set(token, deadline);
  }

  /** Why the subscription looks stalled, or undefined while it is healthy. */
  #stall(now: number): string | undefined {
    const overdue: string[] = [];
    for (const [token, deadline] of this.#awaiting) if (deadline <= now) overdue.push(token);
    let fresh = 0;
    for (const token of overdue) {
      this.#awaiting.delete(token);
      if (this.#stalled.has(token)) {
        // No snapshot on a second connection either: the venue sends none for it; stop waiting.
        this.#stalled.delete(token);
        this.#quiet.add(token);
        this.options.report("ws_no_book_snapshot", token);
      } else {
        this.#stalled.add(token);
        fresh++;
      }
    }
    if (fresh > 0) return `stalled subscription: no book for ${fresh} subscribed token(s)`;
    const dataSilence = this.options.dataSilenceMs ?? 300_000;
    if (this.#books.pairs().length > 0 && now - this.#lastDataAt > dataSilence) {
      return `stalled subscription: no market message for ${Math.round((now - this.#lastDataAt) / 1000)} s`;
    }
    return undefined;
  }

  #stopPing(): void {
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    this.#pingTimer = null;
  }
}

/** Most assets (two per market) one connection carries: nautilus's 200 (VENUES-AUDIT #13; unverified). */
export const MAX_ASSETS_PER_CONNECTION = 200;

interface Shard {
  feed: MarketFeed;
  markets: Set<string>;
  /** Last connection state it reported; "new" until its first. */
  state: "new" | "up" | "down";
}

/**
 * The market channel over as many connections as it takes to keep each at or under
 * `maxAssetsPerConnection` assets: markets fill the existing connections first, a connection whose
 * markets are all removed is closed. Its connection state is the venue's: `disconnected` as soon as
 * one connection is down (its markets are not live), `connected` again once all are up; `resynced`
 * passes through while all are up. Book, quote and trade events pass through as they come.
 */
export class ShardedMarketFeed implements FeedSubscription {
  readonly #shards: Shard[] = [];
  readonly #perShard: number;
  #told: "connected" | "disconnected" | null = null;
  #closed = false;

  constructor(
    private readonly options: MarketFeedOptions & { maxAssetsPerConnection?: number },
    private readonly resolve: (marketIds: string[]) => Promise<TokenPair[]>,
    private readonly onEvent: (event: FeedEvent) => void,
  ) {
    this.#perShard = Math.max(
      1,
      Math.floor((options.maxAssetsPerConnection ?? MAX_ASSETS_PER_CONNECTION) / 2),
    );
  }

  /** Connections open (or opening), and the markets each carries. */
  get connections(): number[] {
    return this.#shards.map((s) => s.markets.size);
  }

  async add(marketIds: string[]): Promise<void> {
    if (this.#closed) return;
    const fresh = [...new Set(marketIds)].filter((id) => !this.#shards.some((s) => s.markets.has(id)));
    const work = new Map<Shard, string[]>();
    let next = 0;
    for (const shard of this.#shards) {
      const room = this.#perShard - shard.markets.size;
      if (room <= 0 || next >= fresh.length) continue;
      work.set(shard, fresh.slice(next, next + room));
      next += room;
    }
    while (next < fresh.length) {
      work.set(this.#newShard(), fresh.slice(next, next + this.#perShard));
      next += this.#perShard;
    }
    await Promise.all(
      [...work].map(async ([shard, ids]) => {
        for (const id of ids) shard.markets.add(id);
        try {
          await shard.feed.add(ids);
        } catch (error) {
          for (const id of ids) shard.markets.delete(id);
          throw error;
        }
      }),
    );
  }

  async remove(marketIds: string[]): Promise<void> {
    const gone = new Set(marketIds);
    for (const shard of [...this.#shards]) {
      const mine = [...shard.markets].filter((id) => gone.has(id));
      if (mine.length === 0) continue;
      for (const id of mine) shard.markets.delete(id);
      if (shard.markets.size > 0) {
        await shard.feed.remove(mine);
      } else {
        this.#shards.splice(this.#shards.indexOf(shard), 1);
        await shard.feed.close();
        this.#aggregate();
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const shards = this.#shards.splice(0);
    await Promise.all(shards.map((s) => s.feed.close()));
  }

  #newShard(): Shard {
    const shard: Shard = { feed: undefined as unknown as MarketFeed, markets: new Set(), state: "new" };
    shard.feed = new MarketFeed(this.options, this.resolve, (event) => this.#onShardEvent(shard, event));
    this.#shards.push(shard);
    return shard;
  }

  #onShardEvent(shard: Shard, event: FeedEvent): void {
    if (event.kind !== "connection") {
      this.onEvent(event);
      return;
    }
    if (!this.#shards.includes(shard)) return;
    shard.state = event.state === "disconnected" ? "down" : "up";
    if (event.state === "disconnected") {
      if (this.#told !== "disconnected") {
        this.#told = "disconnected";
        const which =
          this.#shards.length > 1
            ? `connection ${this.#shards.indexOf(shard) + 1} of ${this.#shards.length}: `
            : "";
        this.onEvent({ ...event, reason: `${which}${event.reason ?? "closed"}` });
      }
      return;
    }
    const before = this.#told;
    this.#aggregate();
    if (event.state === "resynced" && before === "connected" && this.#told === "connected")
      this.onEvent(event);
  }

  /** Tells `connected` once every connection is up (or has not reported yet) after any was down. */
  #aggregate(): void {
    if (this.#shards.some((s) => s.state === "down")) return;
    if (this.#told !== "connected" && this.#shards.some((s) => s.state === "up")) {
      this.#told = "connected";
      this.onEvent({ kind: "connection", state: "connected" });
    }
  }
}
