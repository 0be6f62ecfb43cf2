/**
 * Keeps the catalog's "as last seen" prices live: subscribes each venue's feed to its open markets
 * (the most traded first, up to a cap), folds book/quote/trade events into a QuoteBook (the prices
 * domain's quote math, so the catalog and the prices API agree), and writes the changed markets to
 * the store in batches, never once per message. Feed connection state goes to the venue's health.
 * Market data consumers (the price stream, candles, alerts) get every quote change, with the feed
 * event behind it, through `onQuote`.
 *
 * With several instances each venue's feed is a cluster job (app.ts): `produces(venue)` says
 * whether this instance produces the venue's market data (holds its feed job, or runs alone). The
 * producer subscribes the venue's feed, forwards every event on the bus (`FEED_CHANNEL`), writes
 * the live prices and tells its quote listeners the quotes are its own (`here`: candles, the price
 * stream's updates); the other instances fold the forwarded events into their own quotes and books
 * (answers, the sandbox's matching) without writing or publishing them again. Markets someone wants
 * on an instance that does not produce their venue are asked of the producer on the bus.
 */

import * as catalogRepo from "../catalog/repo";
import type { CatalogService } from "../catalog/service";
import type { Bus } from "../infra/bus/bus";
import { type Clock, isoNow } from "../infra/clock";
import type { Db } from "../infra/db/store";
import type { Logger } from "../infra/log";
import type { OrderBook, VenueId } from "../venues/model";
import { type FeedEvent, type FeedSubscription, type MarketDataVenue, parseMarketId } from "../venues/venue";
import { type Quote, QuoteBook } from "./quotes";

export interface LiveOptions {
  /** Most markets subscribed per venue. */
  maxMarketsPerVenue: number;
  /** How often changed prices are written to the store, ms. */
  flushIntervalMs: number;
}

/**
 * Called with every changed quote, the feed event that changed it, the venue it came from, and
 * whether this instance produced it (false: forwarded by the venue's producer over the bus).
 */
export type QuoteListener = (quote: Quote, cause: FeedEvent, venue: VenueId, here: boolean) => void;

/** Bus channel carrying the producer's feed events to the other instances. */
export const FEED_CHANNEL = "feed.events";
/** Bus channel asking a venue's producer to add markets to its feed. */
export const FEED_WANT_CHANNEL = "feed.want";
/** Bus channel saying an instance started producing a venue: the others ask it for their markets again. */
export const FEED_STARTED_CHANNEL = "feed.started";

interface ForwardedEvent {
  from: string;
  venue: VenueId;
  event: FeedEvent;
  /** Whether the producer's feed of the venue is connected (an instance that joins late learns it). */
  connected: boolean;
}

/** Who else is out there: the bus, this instance's name, and which venues it produces. */
export interface FeedCluster {
  bus: Bus;
  instanceId: string;
  produces(venue: VenueId): boolean;
}

function venueOf(marketId: string): VenueId | undefined {
  return parseMarketId(marketId)?.venue;
}

export class LiveMarkets {
  /** Latest quote per market; the same quote math the prices API uses. */
  readonly quotes = new QuoteBook();
  readonly #dirty = new Set<string>();
  readonly #subscriptions = new Map<VenueId, FeedSubscription>();
  /** What each venue's feed carries (the most traded markets plus the ones someone asked for). */
  readonly #fed = new Map<VenueId, Set<string>>();
  /** Markets asked for on demand (stream subscriptions, price requests), per venue. */
  readonly #wanted = new Map<VenueId, Set<string>>();
  readonly #connected = new Map<VenueId, boolean>();
  readonly #quoteListeners = new Set<QuoteListener>();
  readonly #eventListeners = new Set<(event: FeedEvent, venue: VenueId) => void>();
  /** The latest full book the feed published per market (books are immutable once published). */
  readonly #books = new Map<string, OrderBook>();
  /** When each of those books arrived here, ms (a REST book's own timestamp may be its last change). */
  readonly #bookArrivedAt = new Map<string, number>();
  readonly #feedOffLogged = new Set<VenueId>();
  #timer: NodeJS.Timeout | undefined;
  #cluster: FeedCluster | null = null;
  #unlisten: Array<() => Promise<void>> = [];

  constructor(
    private readonly db: Db,
    private readonly venues: ReadonlyMap<VenueId, MarketDataVenue>,
    private readonly catalog: CatalogService,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: LiveOptions,
  ) {}

  /**
   * Every quote change as it happens (the price stream, candles and alerts hang off this). Listeners
   * run synchronously on the feed's hot path: keep them O(1) and never throw.
   */
  onQuote(listener: QuoteListener): () => void {
    this.#quoteListeners.add(listener);
    return () => this.#quoteListeners.delete(listener);
  }

  /**
   * Every feed event (books, trades, status changes), whether or not it moved a quote: the sandbox
   * fills resting orders from trades and settles positions from status changes. Same rules as
   * `onQuote`: synchronous, O(1), never throws.
   */
  onFeedEvent(listener: (event: FeedEvent, venue: VenueId) => void): () => void {
    this.#eventListeners.add(listener);
    return () => this.#eventListeners.delete(listener);
  }

  /** The latest book a feed published (or a REST poll brought) for a market, if any. */
  book(marketId: string): OrderBook | undefined {
    return this.#books.get(marketId);
  }

  /** When `book(marketId)` arrived, ms; undefined when there is none. */
  bookArrivedAt(marketId: string): number | undefined {
    return this.#bookArrivedAt.get(marketId);
  }

  /** True when a connected venue feed carries the market (its quote is live, not polled). */
  isLive(marketId: string): boolean {
    const venue = venueOf(marketId);
    return (
      venue !== undefined &&
      this.#connected.get(venue) === true &&
      this.#fed.get(venue)?.has(marketId) === true
    );
  }

  /**
   * Adds markets someone is watching to their venue's feed, beyond the most traded ones, up to
   * `maxMarketsPerVenue` more per venue; markets past that are left to REST polling.
   */
  want(marketIds: readonly string[]): void {
    const byVenue = new Map<VenueId, string[]>();
    for (const id of marketIds) {
      const venue = venueOf(id);
      if (!venue || !this.venues.get(venue)?.capabilities.supports.feed) continue;
      const wanted = this.#wanted.get(venue) ?? new Set<string>();
      this.#wanted.set(venue, wanted);
      if (wanted.has(id) || wanted.size >= this.options.maxMarketsPerVenue) continue;
      wanted.add(id);
      if (this.#fed.get(venue)?.has(id)) continue;
      byVenue.set(venue, [...(byVenue.get(venue) ?? []), id]);
    }
    for (const [venue, ids] of byVenue) {
      if (!this.produces(venue)) {
        // The venue's producer feeds it: ask there (it answers through the forwarded events).
        void this.#cluster?.bus
          .publish(FEED_WANT_CHANNEL, { venue, ids })
          .catch((error) => this.log.warn({ err: error, venue }, "could not ask for markets to be fed"));
        continue;
      }
      const subscription = this.#subscriptions.get(venue);
      if (!subscription) continue; // the next refresh subscribes them with the rest
      const fed = this.#fed.get(venue)!;
      for (const id of ids) fed.add(id);
      subscription.add(ids).catch((error) => {
        for (const id of ids) fed.delete(id);
        this.log.warn({ err: error, venue }, "could not add markets to the live feed");
      });
    }
  }

  start(): void {
    this.#timer = setInterval(() => {
      this.flush().catch((error) => this.log.warn({ err: error }, "could not write live prices"));
    }, this.options.flushIntervalMs);
    this.#timer.unref();
  }

  /**
   * (Re)subscribes a venue's feed to its most-traded open markets. Safe to call after every sync. A
   * venue whose feed cannot run as configured (`feedUnavailable`) gets none; its prices come from
   * REST (the catalog syncs, and the prices service's polling of watched markets).
   */
  async refresh(venueId: VenueId): Promise<void> {
    const venue = this.venues.get(venueId);
    if (venue?.feedUnavailable && !this.#feedOffLogged.has(venueId)) {
      this.#feedOffLogged.add(venueId);
      this.log.warn({ venue: venueId, reason: venue.feedUnavailable }, "live feed not started");
    }
    if (!venue?.capabilities.supports.feed || !this.produces(venueId)) return;
    const mostTraded = await catalogRepo.mostTradedOpenMarketIds(
      this.db,
      venueId,
      this.options.maxMarketsPerVenue,
    );
    const ids = [...new Set([...mostTraded, ...(this.#wanted.get(venueId) ?? [])])];
    const fed = this.#fedOf(venueId);
    const existing = this.#subscriptions.get(venueId);
    if (existing) {
      const fresh = ids.filter((id) => !fed.has(id));
      await existing.add(fresh);
      for (const id of fresh) fed.add(id);
      return;
    }
    try {
      const subscription = await venue.subscribe(ids, (event) => this.#produce(venueId, event));
      this.#subscriptions.set(venueId, subscription);
      for (const id of ids) fed.add(id);
      this.log.info({ venue: venueId, markets: ids.length }, "live feed subscribed");
    } catch (error) {
      this.catalog.setFeedConnected(venueId, false);
      this.log.warn(
        { err: error, venue: venueId },
        "live feed could not start; will retry after the next sync",
      );
    }
  }

  /** Folds an event in as if a feed had sent it (the REST poller uses this for unfed markets). */
  ingest(venueId: VenueId, event: FeedEvent): void {
    this.#produce(venueId, event);
  }

  /**
   * Joins a cluster: forwards what this instance produces, folds in what others forward, and takes
   * their requests for markets. Without it (one process) every venue is produced here.
   */
  async join(cluster: FeedCluster): Promise<void> {
    this.#cluster = cluster;
    if (cluster.bus.kind !== "redis") return; // one process: nobody to forward to
    this.#unlisten.push(
      await cluster.bus.subscribe(FEED_CHANNEL, (message) => {
        const forwarded = message as ForwardedEvent;
        if (forwarded.from === cluster.instanceId || cluster.produces(forwarded.venue)) return;
        if (forwarded.event.kind !== "connection") this.#setConnected(forwarded.venue, forwarded.connected);
        this.#handle(forwarded.venue, forwarded.event, false);
      }),
      await cluster.bus.subscribe(FEED_WANT_CHANNEL, (message) => {
        const { venue, ids } = message as { venue: VenueId; ids: string[] };
        if (cluster.produces(venue)) this.want(ids.filter((id) => venueOf(id) === venue));
      }),
      // A new producer knows only what was wanted on its own instance: tell it ours again.
      await cluster.bus.subscribe(FEED_STARTED_CHANNEL, (message) => {
        const { venue, from } = message as { venue: VenueId; from: string };
        const ids = [...(this.#wanted.get(venue) ?? [])];
        if (from === cluster.instanceId || cluster.produces(venue) || ids.length === 0) return;
        void cluster.bus
          .publish(FEED_WANT_CHANNEL, { venue, ids })
          .catch((error) => this.log.warn({ err: error, venue }, "could not ask for markets to be fed"));
      }),
    );
  }

  /** Starts producing a venue's market data here (its feed job): subscribes its feed now. */
  async startFeed(venueId: VenueId): Promise<void> {
    await this.refresh(venueId);
    const cluster = this.#cluster;
    if (cluster?.bus.kind === "redis") {
      await cluster.bus
        .publish(FEED_STARTED_CHANNEL, { venue: venueId, from: cluster.instanceId })
        .catch((error) => this.log.warn({ err: error, venue: venueId }, "could not announce a feed"));
    }
  }

  /** Stops producing a venue's market data here: closes its feed (another instance takes it). */
  async stopFeed(venueId: VenueId): Promise<void> {
    const subscription = this.#subscriptions.get(venueId);
    this.#subscriptions.delete(venueId);
    this.#fed.delete(venueId);
    this.#setConnected(venueId, false);
    await subscription
      ?.close()
      .catch((error) => this.log.warn({ err: error, venue: venueId }, "could not close a feed"));
  }

  /** What the venue's feed carries (made empty on first use). */
  #fedOf(venueId: VenueId): Set<string> {
    let fed = this.#fed.get(venueId);
    if (!fed) {
      fed = new Set();
      this.#fed.set(venueId, fed);
    }
    return fed;
  }

  #setConnected(venueId: VenueId, connected: boolean): void {
    if (this.#connected.get(venueId) === connected) return;
    this.#connected.set(venueId, connected);
    this.catalog.setFeedConnected(venueId, connected);
  }

  /** Whether this instance produces the venue's market data (alone, every venue). */
  produces(venueId: VenueId): boolean {
    return this.#cluster?.produces(venueId) ?? true;
  }

  /** An event produced here (the venue's feed, or a REST poll): forwarded, then handled. */
  #produce(venueId: VenueId, event: FeedEvent): void {
    const cluster = this.#cluster;
    if (cluster && cluster.bus.kind === "redis" && this.produces(venueId)) {
      const connected =
        event.kind === "connection" ? event.state !== "disconnected" : this.#connected.get(venueId) === true;
      const forwarded: ForwardedEvent = { from: cluster.instanceId, venue: venueId, event, connected };
      cluster.bus.publish(FEED_CHANNEL, forwarded).catch((error) => {
        this.log.warn({ err: error, venue: venueId }, "could not forward a feed event");
      });
    }
    this.#handle(venueId, event, true);
  }

  /** `here`: produced on this instance (written and published here), else forwarded by the producer. */
  #handle(venueId: VenueId, event: FeedEvent, here: boolean): void {
    if (event.kind === "connection") {
      this.#setConnected(venueId, event.state !== "disconnected");
    } else {
      if (event.kind === "book") {
        this.#books.set(event.book.marketId, event.book);
        this.#bookArrivedAt.set(event.book.marketId, this.clock.now());
        // The producer's feed carries it: live here too, not to be polled.
        if (!here) this.#fedOf(venueId).add(event.book.marketId);
      }
      for (const listener of this.#eventListeners) {
        try {
          listener(event, venueId);
        } catch (error) {
          this.log.warn({ err: error, venue: venueId }, "feed listener failed");
        }
      }
      const quote = this.quotes.apply(event, this.clock.now());
      if (quote) {
        if (here) this.#dirty.add(quote.marketId);
        for (const listener of this.#quoteListeners) {
          try {
            listener(quote, event, venueId, here);
          } catch (error) {
            this.log.warn({ err: error, venue: venueId }, "quote listener failed");
          }
        }
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
        await catalogRepo.updateLivePrice(trx, id, quote, nowIso);
      }
    });
    return ids.length;
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    for (const unlisten of this.#unlisten.splice(0)) await unlisten().catch(() => {});
    await Promise.allSettled([...this.#subscriptions.values()].map((s) => s.close()));
    this.#subscriptions.clear();
    this.#fed.clear();
    this.#connected.clear();
    await this.flush().catch((error) => this.log.warn({ err: error }, "could not write live prices on stop"));
  }
}
