/**
 * Current prices: the latest quote of each market (live from the venue feeds through LiveMarkets'
 * QuoteBook, else the catalog's last-seen listing prices), served from memory so `GET /v1/prices`
 * never touches the store on its hot path. Every quote change is published on the bus as a
 * `QuoteUpdate` (in-process by default, Redis when configured) for the price stream of every
 * instance. Order books come from the feed's latest book, else from the venue's REST endpoint
 * (briefly cached). Markets that someone watches but no feed carries are polled over REST, by the
 * instance producing their venue's market data: an instance that does not produce it tells the
 * producer what it watches (`WATCHED_CHANNEL`), and tells a new producer again when one starts.
 */

import type { Static } from "typebox";
import * as catalogRepo from "../catalog/repo";
import type { Bus } from "../infra/bus/bus";
import type { Clock } from "../infra/clock";
import { isoFromMs } from "../infra/clock";
import type { Db } from "../infra/db/store";
import type { Logger } from "../infra/log";
import { type Micros, microsToNumber } from "../venues/decimal";
import type { BookLevel, OrderBook, VenueId } from "../venues/model";
import type { FeedEvent, MarketDataVenue } from "../venues/venue";
import { FEED_STARTED_CHANNEL, type LiveMarkets } from "./ingest";
import type { Quote } from "./quotes";
import type { PriceEntryFields, QuoteUpdateSchema } from "./schemas";

/** Bus channel carrying QuoteUpdate messages. */
export const QUOTE_CHANNEL = "prices.quote";
/** Markets watched on an instance that does not produce their venue, with when each watch ends (ms). */
export const WATCHED_CHANNEL = "prices.watched";

interface WatchedMessage {
  watched: Array<[marketId: string, until: number]>;
}

/**
 * One quote change as it travels on the bus and out to stream clients (numbers at the edge). The
 * shape is declared once, by QuoteUpdateSchema (schemas.ts), whose descriptions explain the fields.
 */
export type QuoteUpdate = Static<typeof QuoteUpdateSchema>;

/**
 * The current-price entry of spec 2.3; null where nothing is known yet. Declared by PriceEntryFields
 * (schemas.ts), which the prices response is built from.
 */
export type PriceEntry = Static<typeof PriceEntryFields>;

/** What the service keeps of each catalog market, loaded once and refreshed after every sync. */
export interface MarketSummary {
  id: string;
  venue: VenueId;
  title: string;
  eventId: string | null;
  status: string;
  lastPrice: Micros | null;
  bestBid: Micros | null;
  bestAsk: Micros | null;
  /** The venue's YES price 24 h before its last listing (see VenueMarket.price24hAgo). */
  price24hAgo: Micros | null;
  volume24h: Micros;
  updatedAt: string;
  /** Until when someone watches it (a stream subscription or a prices request), ms; 0 = never. */
  watchedUntil: number;
  /** Bumped on every quote change: lets callers tell whether what they built from it is stale. */
  quoteVersion: number;
  /** `"<id>":{entry}` as last serialized, and the minute it was made in (24 h change moves). */
  fragment: string | null;
  fragmentMinute: number;
}

export interface BookView {
  bids: Array<[number, number]>;
  asks: Array<[number, number]>;
  timestamp: string;
}

export interface PricesOptions {
  /** How long a REST order book is reused, ms. */
  bookCacheMs?: number;
  /** How often watched markets without a live feed are polled over REST, ms. */
  pollIntervalMs?: number;
  /** A market is watched for this long after the last request that named it, ms. */
  watchTtlMs?: number;
}

const DAY_MS = 86_400_000;
const num = (v: Micros | null) => (v === null ? null : microsToNumber(v));

function summaryOf(row: catalogRepo.MarketRow): MarketSummary {
  return {
    id: row.id,
    venue: row.venue as VenueId,
    title: row.title,
    eventId: row.event_id,
    status: row.status,
    lastPrice: row.last_price === null ? null : Number(row.last_price),
    bestBid: row.best_bid === null ? null : Number(row.best_bid),
    bestAsk: row.best_ask === null ? null : Number(row.best_ask),
    price24hAgo: row.price_24h_ago === null ? null : Number(row.price_24h_ago),
    volume24h: Number(row.volume_24h),
    updatedAt: row.updated_at,
    watchedUntil: 0,
    quoteVersion: 0,
    fragment: null,
    fragmentMinute: -1,
  };
}

function levels(side: readonly BookLevel[], depth: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const n = Math.min(depth, side.length);
  for (let i = 0; i < n; i++) out.push([microsToNumber(side[i]!.price), microsToNumber(side[i]!.size)]);
  return out;
}

export class PricesService {
  readonly #markets = new Map<string, MarketSummary>();
  readonly #restBooks = new Map<string, { at: number; book: Promise<OrderBook> }>();
  readonly #polling = new Set<string>();
  readonly #options: Required<PricesOptions>;
  readonly #unsubscribe: () => void;
  readonly #unlisten: Array<() => Promise<void>> = [];
  #loaded: Promise<void> | undefined;
  /** Bumped whenever a MarketSummary object is replaced, so resolved lists can be cached safely. */
  #version = 0;
  #pollTimer: NodeJS.Timeout | undefined;
  readonly #publish: (update: QuoteUpdate) => void;

  constructor(
    private readonly db: Db,
    private readonly live: LiveMarkets,
    private readonly venues: ReadonlyMap<VenueId, MarketDataVenue>,
    private readonly clock: Clock,
    private readonly bus: Bus,
    private readonly log: Logger,
    options: PricesOptions = {},
  ) {
    this.#options = {
      bookCacheMs: options.bookCacheMs ?? 2_000,
      pollIntervalMs: options.pollIntervalMs ?? 10_000,
      watchTtlMs: options.watchTtlMs ?? 10 * 60_000,
    };
    // The in-process bus delivers synchronously without a promise per message: the feed rate path.
    const publishSync = bus.publishSync?.bind(bus);
    this.#publish = publishSync
      ? (update) => publishSync(QUOTE_CHANNEL, update)
      : (update) => {
          bus.publish(QUOTE_CHANNEL, update).catch((error) => {
            this.log.warn({ err: error, channel: QUOTE_CHANNEL }, "could not publish a quote update");
          });
        };
    this.#unsubscribe = live.onQuote((quote, _cause, _venue, here) => this.#onQuote(quote, here));
  }

  // --- markets ---------------------------------------------------------------------------------

  /** Loads every catalog market into memory (once; `reload` after a sync). */
  ensureLoaded(): Promise<void> {
    this.#loaded ??= this.reload().catch((error) => {
      this.#loaded = undefined;
      throw error;
    });
    return this.#loaded;
  }

  async reload(venue?: VenueId): Promise<void> {
    const rows = await catalogRepo.allMarkets(this.db, venue);
    const now = this.clock.now();
    for (const row of rows) {
      const fresh = summaryOf(row);
      fresh.watchedUntil = this.#markets.get(row.id)?.watchedUntil ?? 0;
      this.#markets.set(row.id, fresh);
      // Live quotes measure their 24 h change against the venue's figure until they have their own.
      this.live.quotes.setVenueDayAgo(row.id, fresh.price24hAgo, now);
    }
    this.#version++;
  }

  /** Changes whenever `resolve` could answer differently for the same ids. */
  get version(): number {
    return this.#version;
  }

  /**
   * The markets of `ids`, in the same order, and the ids that name no market. Memory first; ids it
   * does not know are looked up in the store (another instance's sync may have added them).
   */
  async resolve(ids: readonly string[]): Promise<{ markets: MarketSummary[]; missing: string[] }> {
    await this.ensureLoaded();
    const markets: MarketSummary[] = new Array(ids.length);
    let unknown = 0;
    for (let i = 0; i < ids.length; i++) {
      const market = this.#markets.get(ids[i]!);
      if (market) markets[i] = market;
      else unknown++;
    }
    if (unknown === 0) return { markets, missing: [] };
    const wanted = ids.filter((id) => !this.#markets.has(id));
    for (const row of await catalogRepo.findMarkets(this.db, wanted)) {
      const fresh = summaryOf(row);
      this.#markets.set(row.id, fresh);
      this.live.quotes.setVenueDayAgo(row.id, fresh.price24hAgo, this.clock.now());
      this.#version++;
    }
    const missing: string[] = [];
    const found: MarketSummary[] = [];
    for (const id of ids) {
      const market = this.#markets.get(id);
      if (market) found.push(market);
      else missing.push(id);
    }
    return { markets: found, missing };
  }

  market(id: string): MarketSummary | undefined {
    return this.#markets.get(id);
  }

  // --- quotes ----------------------------------------------------------------------------------

  /** A market's current YES price in micro-units (the same `price` GET /v1/prices shows), or null. */
  priceMicros(id: string): number | null {
    const market = this.#markets.get(id);
    const quote = this.live.quotes.get(id, this.clock.now());
    if (quote) return quote.price ?? market?.lastPrice ?? null;
    if (!market) return null;
    if (market.bestBid !== null && market.bestAsk !== null)
      return Math.round((market.bestBid + market.bestAsk) / 2);
    return market.lastPrice;
  }

  /** The current-price entry of a known market. */
  entry(market: MarketSummary): PriceEntry {
    const now = this.clock.now();
    const quote = this.live.quotes.get(market.id, now);
    if (!quote) {
      const bothSides = market.bestBid !== null && market.bestAsk !== null;
      const price = bothSides ? Math.round((market.bestBid! + market.bestAsk!) / 2) : market.lastPrice;
      // The listing's price against the venue's price 24 hours before that listing.
      const dayAgo = market.price24hAgo;
      const change = price !== null && dayAgo !== null ? price - dayAgo : null;
      return {
        price: num(price),
        best_bid: num(market.bestBid),
        best_ask: num(market.bestAsk),
        spread: bothSides ? microsToNumber(market.bestAsk! - market.bestBid!) : null,
        change_24h: num(change),
        change_pct_24h: change !== null && dayAgo ? Math.round((change / dayAgo) * 1e6) / 1e4 : null,
        volume_24h: microsToNumber(market.volume24h),
        last_trade: null,
        updated_at: market.updatedAt,
      };
    }
    return {
      price: num(quote.price ?? market.lastPrice),
      best_bid: num(quote.bestBid),
      best_ask: num(quote.bestAsk),
      spread: num(quote.spread),
      change_24h: num(quote.change24h),
      change_pct_24h: quote.changePct24h,
      volume_24h: microsToNumber(this.#volume24h(quote, market, now)),
      last_trade: quote.lastTradeAt === null ? null : isoFromMs(quote.lastTradeAt),
      updated_at: isoFromMs(quote.updatedAt),
    };
  }

  /**
   * `"<id>":{entry}` for the prices response, cached on the market until its quote changes or the
   * minute turns (the 24-hour change window moves by the minute). `minute` = floor(now / 60 s).
   */
  entryJson(market: MarketSummary, minute: number): string {
    if (market.fragment !== null && market.fragmentMinute === minute) return market.fragment;
    const json = `${JSON.stringify(market.id)}:${JSON.stringify(this.entry(market))}`;
    market.fragment = json;
    market.fragmentMinute = minute;
    return json;
  }

  /** The current quote as a stream message body (for the snapshot sent on subscribe). */
  update(market: MarketSummary): QuoteUpdate {
    const entry = this.entry(market);
    return {
      market_id: market.id,
      price: entry.price,
      best_bid: entry.best_bid,
      best_ask: entry.best_ask,
      volume_24h: entry.volume_24h,
      timestamp: entry.updated_at,
    };
  }

  /**
   * crossbook counts traded volume itself once it has watched a market for a full day; before that
   * the venue's own 24-hour figure from the last catalog sync is the better number.
   */
  #volume24h(quote: Quote, market: MarketSummary, now: number): Micros {
    const since = this.live.quotes.observedSince(quote.marketId);
    return since !== undefined && now - since >= DAY_MS ? quote.volume24h : market.volume24h;
  }

  /** `here`: produced on this instance; a forwarded quote was published on the bus by its producer. */
  #onQuote(quote: Quote, here: boolean): void {
    const market = this.#markets.get(quote.marketId);
    if (market) {
      market.fragment = null;
      market.quoteVersion++;
    }
    if (!here) return;
    const now = this.clock.now();
    this.#publish({
      market_id: quote.marketId,
      price: num(quote.price ?? market?.lastPrice ?? null),
      best_bid: num(quote.bestBid),
      best_ask: num(quote.bestAsk),
      volume_24h: microsToNumber(market ? this.#volume24h(quote, market, now) : quote.volume24h),
      timestamp: isoFromMs(quote.updatedAt),
    });
  }

  // --- books -----------------------------------------------------------------------------------

  /**
   * A market's YES book, best level first, `depth` levels a side: the feed's latest book when the
   * market is live, else the venue's REST book (cached for a moment). Null when the venue cannot
   * be reached.
   */
  async book(market: MarketSummary, depth: number): Promise<BookView | null> {
    const book = await this.orderBook(market);
    if (!book) return null;
    return {
      bids: levels(book.yes.bids, depth),
      asks: levels(book.yes.asks, depth),
      timestamp: book.timestamp,
    };
  }

  /** A market's full book (both outcomes, micro-units): the feed's when live, else the REST one. */
  async orderBook(market: Pick<MarketSummary, "id" | "venue">): Promise<OrderBook | null> {
    const live = this.live.isLive(market.id) ? this.live.book(market.id) : undefined;
    return live ?? (await this.#restBook(market)) ?? null;
  }

  async #restBook(market: Pick<MarketSummary, "id" | "venue">): Promise<OrderBook | undefined> {
    const venue = this.venues.get(market.venue);
    if (!venue) return undefined;
    const now = this.clock.now();
    let cached = this.#restBooks.get(market.id);
    if (!cached || now - cached.at > this.#options.bookCacheMs) {
      cached = { at: now, book: venue.getOrderBook(market.id) };
      this.#restBooks.set(market.id, cached);
      if (this.#restBooks.size > 10_000) this.#restBooks.delete(this.#restBooks.keys().next().value!);
    }
    try {
      return await cached.book;
    } catch (error) {
      this.#restBooks.delete(market.id);
      this.log.warn({ err: error, market_id: market.id }, "could not fetch an order book");
      return undefined;
    }
  }

  // --- watching and polling ----------------------------------------------------------------------

  /**
   * Marks markets as wanted (a stream subscription or a prices request): they join their venue's
   * live feed, and while no feed carries them they are polled over REST.
   */
  watch(markets: readonly MarketSummary[]): void {
    const now = this.clock.now();
    const until = now + this.#options.watchTtlMs;
    let fresh: string[] | undefined;
    let elsewhere: WatchedMessage["watched"] | undefined;
    for (const market of markets) {
      if (market.watchedUntil < now) {
        fresh ??= [];
        fresh.push(market.id);
        if (!this.live.produces(market.venue)) {
          elsewhere ??= [];
          elsewhere.push([market.id, until]);
        }
      }
      market.watchedUntil = until;
    }
    if (fresh) this.live.want(fresh);
    if (elsewhere) this.#tellProducer(elsewhere);
  }

  /** Another instance polls these (it produces their venue): say they are watched here. */
  #tellProducer(watched: WatchedMessage["watched"]): void {
    if (this.bus.kind !== "redis") return;
    this.bus.publish(WATCHED_CHANNEL, { watched } satisfies WatchedMessage).catch((error) => {
      this.log.warn({ err: error, channel: WATCHED_CHANNEL }, "could not tell the producer what is watched");
    });
  }

  /**
   * Joins the other instances (a Redis bus): watches they report of venues produced here are polled
   * here, and a new producer of a venue is told what is watched here.
   */
  async listen(): Promise<void> {
    if (this.bus.kind !== "redis") return;
    this.#unlisten.push(
      await this.bus.subscribe(WATCHED_CHANNEL, (message) => {
        for (const [id, until] of (message as WatchedMessage).watched) {
          const market = this.#markets.get(id);
          if (market && this.live.produces(market.venue) && market.watchedUntil < until)
            market.watchedUntil = until;
        }
      }),
      await this.bus.subscribe(FEED_STARTED_CHANNEL, (message) => {
        const { venue } = message as { venue: VenueId };
        if (this.live.produces(venue)) return;
        const now = this.clock.now();
        const watched: WatchedMessage["watched"] = [];
        for (const market of this.#markets.values()) {
          if (market.venue === venue && market.watchedUntil >= now)
            watched.push([market.id, market.watchedUntil]);
        }
        if (watched.length > 0) this.#tellProducer(watched);
      }),
    );
  }

  start(): void {
    this.#pollTimer = setInterval(() => {
      this.pollOnce().catch((error) => this.log.warn({ err: error }, "price polling failed"));
    }, this.#options.pollIntervalMs);
    this.#pollTimer.unref();
  }

  /** One polling round: every watched market no live feed carries gets a fresh REST book. */
  async pollOnce(): Promise<number> {
    const now = this.clock.now();
    const due: MarketSummary[] = [];
    for (const market of this.#markets.values()) {
      if (market.watchedUntil < now || market.status !== "open") continue;
      if (this.live.isLive(market.id) || this.#polling.has(market.id)) continue;
      // Another instance produces this venue's market data (and polls what its feed lacks).
      if (!this.live.produces(market.venue)) continue;
      due.push(market);
    }
    const concurrency = 4;
    let polled = 0;
    for (let i = 0; i < due.length; i += concurrency) {
      await Promise.all(
        due.slice(i, i + concurrency).map(async (market) => {
          const venue = this.venues.get(market.venue);
          if (!venue?.capabilities.supports.orderBook) return;
          this.#polling.add(market.id);
          try {
            const book = await venue.getOrderBook(market.id);
            const event: FeedEvent = { kind: "book", book };
            this.live.ingest(market.venue, event);
            polled++;
          } catch (error) {
            this.log.warn({ err: error, market_id: market.id }, "could not poll a market's book");
          } finally {
            this.#polling.delete(market.id);
          }
        }),
      );
    }
    return polled;
  }

  async stop(): Promise<void> {
    if (this.#pollTimer) clearInterval(this.#pollTimer);
    this.#unsubscribe();
    await Promise.all(this.#unlisten.splice(0).map((unlisten) => unlisten()));
  }
}
