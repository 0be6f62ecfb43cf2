/**
 * Keeps the catalog's "as last seen" prices live: subscribes each venue's feed to its open markets
 * (the most traded first, up to a cap), folds book/quote/trade events into a QuoteBook (the
 * prices domain's quote math, so the catalog and the prices API agree), and writes the changed markets to the store in batches, never once per
 * message. Feed connection state goes to the venue's health. Market data consumers that need every
 * tick (the price stream, candles) get the raw FeedEvents through `onEvent`.
 */
import { type Clock, isoNow } from "../infra/clock";
import type { Db } from "../infra/db/store";
import { type Quote, QuoteBook } from "../prices/quotes";
import type { OrderBook, VenueId } from "../venues/model";
import type { FeedEvent, FeedSubscription, Venue } from "../venues/venue";
import type { CatalogLogger, CatalogService } from "./service";

export interface LiveOptions {
  /** Most markets subscribed per venue. */
  maxMarketsPerVenue: number;
  /** How often changed prices are written to the store, ms. */
  flushIntervalMs: number;
}

/** Called with every changed quote, the feed event that changed it, and the venue it came from. */
export type QuoteListener = (quote: Quote, cause: FeedEvent, venue: VenueId) => void;

export class LiveMarkets {
  /** Latest quote per market; the same quote math the prices API uses. */
  readonly quotes = new QuoteBook();
  readonly #dirty = new Set<string>();
  readonly #subscriptions = new Map<VenueId, FeedSubscription>();
  readonly #listeners = new Set<(venue: VenueId, event: FeedEvent) => void>();
  readonly #quoteListeners = new Set<QuoteListener>();
  /** The latest full book the feed published per market (books are immutable once published). */
  readonly #books = new Map<string, OrderBook>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly venues: ReadonlyMap<VenueId, Venue>,
    private readonly catalog: CatalogService,
    private readonly clock: Clock,
    private readonly log: CatalogLogger,
    private readonly options: LiveOptions,
  ) {}

  onEvent(listener: (venue: VenueId, event: FeedEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Every quote change as it happens (the price stream, candles and alerts hang off this). Listeners
   * run synchronously on the feed's hot path: keep them O(1) and never throw.
   */
  onQuote(listener: QuoteListener): () => void {
    this.#quoteListeners.add(listener);
    return () => this.#quoteListeners.delete(listener);
  }

  /** The latest book a feed published for a market, if it is live. */
  book(marketId: string): OrderBook | undefined {
    return this.#books.get(marketId);
  }

  start(): void {
    this.#timer = setInterval(() => {
      this.flush().catch((error) => this.log.warn({ error: String(error) }, "could not write live prices"));
    }, this.options.flushIntervalMs);
    this.#timer.unref();
  }

  /** (Re)subscribes a venue's feed to its most-traded open markets. Safe to call after every sync. */
  async refresh(venueId: VenueId): Promise<void> {
    const venue = this.venues.get(venueId);
    if (!venue?.capabilities.supports.feed) return;
    const rows = await this.db
      .selectFrom("markets")
      .select("id")
      .where("venue", "=", venueId)
      .where("status", "=", "open")
      .orderBy("volume_24h", "desc")
      .orderBy("id")
      .limit(this.options.maxMarketsPerVenue)
      .execute();
    const ids = rows.map((r) => r.id);
    const existing = this.#subscriptions.get(venueId);
    if (existing) {
      await existing.add(ids);
      return;
    }
    try {
      const subscription = await venue.subscribe(ids, (event) => this.#handle(venueId, event));
      this.#subscriptions.set(venueId, subscription);
      this.log.info({ venue: venueId, markets: ids.length }, "live feed subscribed");
    } catch (error) {
      this.catalog.setFeedConnected(venueId, false);
      this.log.warn(
        { venue: venueId, error: String(error) },
        "live feed could not start; will retry after the next sync",
      );
    }
  }

  /** Folds an event in as if a feed had sent it (the REST poller uses this for unfed markets). */
  ingest(venueId: VenueId, event: FeedEvent): void {
    this.#handle(venueId, event);
  }

  #handle(venueId: VenueId, event: FeedEvent): void {
    if (event.kind === "connection") {
      this.catalog.setFeedConnected(venueId, event.state !== "disconnected");
    } else {
      if (event.kind === "book") this.#books.set(event.book.marketId, event.book);
      const quote = this.quotes.apply(event, this.clock.now());
      if (quote) {
        this.#dirty.add(quote.marketId);
        for (const listener of this.#quoteListeners) {
          try {
            listener(quote, event, venueId);
          } catch (error) {
            this.log.warn({ venue: venueId, error: String(error) }, "quote listener failed");
          }
        }
      }
    }
    for (const listener of this.#listeners) {
      try {
        listener(venueId, event);
      } catch (error) {
        this.log.warn({ venue: venueId, error: String(error) }, "live event listener failed");
      }
    }
  }

  /** Writes every market whose price changed since the last flush, in one transaction. */
  async flush(): Promise<number> {
    if (this.#dirty.size === 0) return 0;
    const ids = [...this.#dirty];
    this.#dirty.clear();
    const now = this.clock.now();
    const nowIso = isoNow(this.clock);
    await this.db.transaction().execute(async (trx) => {
      for (const id of ids) {
        const quote = this.quotes.get(id, now);
        if (!quote) continue;
        await trx
          .updateTable("markets")
          .set({
            best_bid: quote.bestBid,
            best_ask: quote.bestAsk,
            ...(quote.lastTradePrice !== null ? { last_price: quote.lastTradePrice } : {}),
            updated_at: nowIso,
          })
          .where("id", "=", id)
          .execute();
      }
    });
    return ids.length;
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await Promise.allSettled([...this.#subscriptions.values()].map((s) => s.close()));
    this.#subscriptions.clear();
    await this.flush().catch(() => {});
  }
}
