/**
 * Keeps the catalog's "as last seen" prices live: subscribes each venue's feed to its open markets
 * (the most traded first, up to a cap), folds book/quote/trade/status events into an in-memory
 * latest-price map, and writes the changed markets to the store in batches, never once per
 * message. Feed connection state goes to the venue's health. Market data consumers that need every
 * tick (the price stream, candles) get the raw FeedEvents through `onEvent`.
 */
import type { Clock } from "../infra/clock";
import type { Db } from "../infra/db/store";
import type { Micros } from "../venues/decimal";
import type { VenueId } from "../venues/model";
import type { FeedEvent, FeedSubscription, Venue } from "../venues/venue";
import type { CatalogLogger, CatalogService } from "./service";

export interface LatestPrice {
  bestBid: Micros | null;
  bestAsk: Micros | null;
  lastPrice: Micros | null;
  updatedAt: number;
}

export interface LiveOptions {
  /** Most markets subscribed per venue. */
  maxMarketsPerVenue: number;
  /** How often changed prices are written to the store, ms. */
  flushIntervalMs: number;
}

/** Applies one feed event to the latest-price map; returns the market id it changed, if any. */
export function applyFeedEvent(
  latest: Map<string, LatestPrice>,
  event: FeedEvent,
  now: number,
): string | undefined {
  const entry = (id: string) => {
    let current = latest.get(id);
    if (!current) {
      current = { bestBid: null, bestAsk: null, lastPrice: null, updatedAt: now };
      latest.set(id, current);
    }
    current.updatedAt = now;
    return current;
  };
  switch (event.kind) {
    case "book": {
      const current = entry(event.book.marketId);
      current.bestBid = event.book.yes.bids[0]?.price ?? null;
      current.bestAsk = event.book.yes.asks[0]?.price ?? null;
      return event.book.marketId;
    }
    case "quote": {
      const current = entry(event.marketId);
      current.bestBid = event.bestBid;
      current.bestAsk = event.bestAsk;
      if (event.lastPrice !== null) current.lastPrice = event.lastPrice;
      return event.marketId;
    }
    case "trade": {
      // Our last price is YES's: a NO trade at p is a YES trade at 1 - p.
      const current = entry(event.trade.marketId);
      current.lastPrice = event.trade.outcome === "yes" ? event.trade.price : 1_000_000 - event.trade.price;
      return event.trade.marketId;
    }
    default:
      return undefined;
  }
}

export class LiveMarkets {
  readonly latest = new Map<string, LatestPrice>();
  readonly #dirty = new Set<string>();
  readonly #subscriptions = new Map<VenueId, FeedSubscription>();
  readonly #listeners = new Set<(venue: VenueId, event: FeedEvent) => void>();
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

  #handle(venueId: VenueId, event: FeedEvent): void {
    if (event.kind === "connection") {
      this.catalog.setFeedConnected(venueId, event.state !== "disconnected");
    } else {
      const changed = applyFeedEvent(this.latest, event, this.clock.now());
      if (changed) this.#dirty.add(changed);
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
    const nowIso = new Date(this.clock.now()).toISOString();
    await this.db.transaction().execute(async (trx) => {
      for (const id of ids) {
        const price = this.latest.get(id);
        if (!price) continue;
        await trx
          .updateTable("markets")
          .set({
            best_bid: price.bestBid,
            best_ask: price.bestAsk,
            ...(price.lastPrice !== null ? { last_price: price.lastPrice } : {}),
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
