/**
 * The `GET /v1/markets` answer cache, in one place. Every market of the catalog is held in memory,
 * per venue in the store's id order (the order the store pages in), indexed by status and by event,
 * each serialized once (market-json.ts). A page is cut from there, and its bytes are kept and sent
 * again until one of its markets changes.
 *
 * Nothing here is older than the store would answer:
 * - a venue's markets are reloaded from the store after each sync of its catalog, on this instance
 *   or another (`CatalogService.onChanged` is told on every instance); an answer waits for a reload
 *   under way;
 * - every live quote change, produced here or forwarded by the venue's producer, is applied at once
 *   (the store gets the same prices at the producer's next flush, up to two seconds later), unless
 *   the market's stored row was written after it (a later sync's listing);
 * - a status a venue's feed reports before the next sync (closed, resolved) is applied as the
 *   producer records it in the store (orders' `settleMarket` → `recordObservedStatus`).
 *
 * Memory: each market once, as its stored row until it is first shown, then as its JSON's UTF-8
 * bytes (rules included; ~1.6 KB for Kalshi-length rules, ~80 MB for 50,000); plus at most
 * MAX_KEPT_BYTES of kept pages. Text search (`q`) is not answered here: the store matches it
 * (routes.ts).
 */
import { type Clock, isoFromMs } from "../infra/clock";
import type { Db } from "../infra/db/store";
import type { FeedEvent } from "../venues/venue";
import { MarketJson, type MarketState, marketView, type Projection, stateOf, writePage } from "./market-json";
import * as repo from "./repo";

/** A live quote's fields (prices' Quote has them; structural, so catalog needs no prices import). */
export interface LiveQuote {
  marketId: string;
  bestBid: number | null;
  bestAsk: number | null;
  /** Null: no trade seen yet (the stored last price stands). */
  lastTradePrice: number | null;
  /** When the quote last changed, ms. */
  updatedAt: number;
}

/** Where live quotes and feed events come from: prices' LiveMarkets, on every instance. */
export interface LiveFeed {
  onQuote(listener: (quote: LiveQuote) => void): () => void;
  onFeedEvent(listener: (event: FeedEvent) => void): () => void;
}

/** A market's latest live prices (micro-units) and when they changed (ms). */
interface LiveFields {
  bestBid: number | null;
  bestAsk: number | null;
  lastPrice: number | null;
  at: number;
}

export interface ListingFilter {
  venue?: string;
  /** Absent: every status. */
  status?: string;
  eventId?: string;
}

/** A market as held: what filters read, its state, and its JSON. */
class Listed {
  readonly id: string;
  readonly venue: string;
  readonly eventId: string | null;
  readonly state: MarketState;
  /** When its stored row was last written, ms: a live quote from before then is in it, or older. */
  readonly storedAt: number;
  /** Bumped on every change of `state`: its JSON, and a kept page showing it, are written again. */
  version = 0;
  /** The stored row until the market is first written out. */
  #row: repo.MarketRow | null;
  #json: MarketJson | null = null;
  #jsonVersion = 0;

  constructor(row: repo.MarketRow) {
    this.id = row.id;
    this.venue = row.venue;
    this.eventId = row.event_id;
    this.state = stateOf(row);
    this.storedAt = Date.parse(row.updated_at);
    this.#row = row;
  }

  /**
   * Its JSON in its current state. Written on first use, not on load: a reload after each sync
   * costs little even for a large catalog, and markets nobody lists are never serialized.
   */
  json(): MarketJson {
    if (this.#json === null) {
      this.#json = MarketJson.of(marketView(this.#row!), this.state);
      this.#row = null;
    } else if (this.#jsonVersion !== this.version) {
      this.#json = this.#json.withState(this.state);
    }
    this.#jsonVersion = this.version;
    return this.#json;
  }
}

/** One venue's markets in the store's id order, and the same by status and by event. */
class VenueMarkets {
  readonly byStatus = new Map<string, Listed[]>();
  readonly byEvent = new Map<string, Listed[]>();
  /** False after a market's status changed: the status lists are rebuilt before the next use. */
  indexed = false;

  constructor(readonly all: readonly Listed[]) {}

  index(): void {
    if (this.indexed) return;
    this.byStatus.clear();
    this.byEvent.clear();
    for (const market of this.all) {
      push(this.byStatus, market.state.status, market);
      if (market.eventId) push(this.byEvent, market.eventId, market);
    }
    this.indexed = true;
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** A page's bytes, and what they were written from. */
interface KeptPage {
  generation: number;
  markets: readonly Listed[];
  versions: readonly number[];
  body: Buffer;
}

/** Bytes of kept pages at most (a full page of 100 markets with rules is ~150 KB); oldest go first. */
const MAX_KEPT_BYTES = 32 * 1024 * 1024;
const MAX_KEPT_PAGES = 10_000;

export class MarketListing {
  /** Each venue's markets; venues with none are absent. */
  readonly #venues = new Map<string, VenueMarkets>();
  /**
   * Venue names in order: a listing of every venue is theirs one after the other, as ids (which
   * begin with `<venue>:`, lowercase letters) sort in any collation.
   */
  #order: string[] = [];
  readonly #byId = new Map<string, Listed>();
  /** The latest live quote of every market that has one (kept for markets loaded later). */
  readonly #quotes = new Map<string, LiveFields>();
  /** Statuses the feeds reported since the markets were loaded (applied to a reload that predates them). */
  readonly #observed = new Map<string, { status: string; resolution: string | null; at: number }>();
  #loaded = false;
  /** Venues whose stored markets changed since they were loaded. */
  readonly #stale = new Set<string>();
  #refreshing: Promise<void> | null = null;
  /** Bumped whenever which markets a filter matches may have changed: every kept page is then stale. */
  #generation = 0;
  readonly #pages = new Map<string, KeptPage>();
  #keptBytes = 0;
  readonly #unsubscribe: Array<() => void>;

  constructor(
    private readonly db: Db,
    live: LiveFeed,
    private readonly clock: Clock,
  ) {
    this.#unsubscribe = [
      live.onQuote((quote) => this.#onQuote(quote)),
      live.onFeedEvent((event) => {
        // As app.ts settles (and records) it: a status other than open, on the venue's producer.
        if (event.kind === "status" && event.status !== "open") {
          this.#onStatus(event.marketId, event.status, event.resolution);
        }
      }),
    ];
  }

  close(): void {
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
  }

  /**
   * A venue's stored markets changed (its catalog was synced, here or elsewhere): the next answer
   * reloads them. Once the listing is in use the reload starts now; resolves when it is done.
   */
  changed(venue: string): Promise<void> {
    this.#stale.add(venue);
    return this.#loaded ? this.#fresh() : Promise.resolve();
  }

  /** `{"success":true,"data":[…],"meta":{…}}` of one page of the markets `filter` matches. */
  async page(
    filter: ListingFilter,
    page: { limit: number; offset: number },
    shown: Projection,
  ): Promise<Buffer> {
    await this.#fresh();
    // The event id goes last: it is the only part that may hold the separator.
    const key = `${filter.venue ?? ""}|${filter.status ?? ""}|${page.offset}|${page.limit}|${shown.key}|${filter.eventId ?? ""}`;
    const kept = this.#pages.get(key);
    if (kept && kept.generation === this.#generation && unchanged(kept)) return kept.body;

    const lists = this.#matching(filter);
    let total = 0;
    for (const list of lists) total += list.length;
    const markets: Listed[] = [];
    let skip = page.offset;
    for (const list of lists) {
      if (markets.length === page.limit) break;
      if (skip >= list.length) {
        skip -= list.length;
        continue;
      }
      const end = Math.min(list.length, skip + page.limit - markets.length);
      for (let i = skip; i < end; i++) markets.push(list[i]!);
      skip = 0;
    }
    const body = writePage(
      markets.map((market) => market.json()),
      shown,
      page,
      total,
    );
    this.#keep(key, {
      generation: this.#generation,
      markets,
      versions: markets.map((market) => market.version),
      body,
    });
    return body;
  }

  /** The lists (one per venue, each in id order) whose concatenation is what the filter matches. */
  #matching(filter: ListingFilter): Array<readonly Listed[]> {
    const venues = filter.venue
      ? [this.#venues.get(filter.venue)]
      : this.#order.map((v) => this.#venues.get(v));
    const lists: Array<readonly Listed[]> = [];
    for (const venue of venues) {
      if (!venue) continue;
      venue.index();
      if (filter.eventId !== undefined) {
        const ofEvent = venue.byEvent.get(filter.eventId) ?? [];
        const status = filter.status;
        lists.push(status === undefined ? ofEvent : ofEvent.filter((m) => m.state.status === status));
      } else {
        lists.push(filter.status === undefined ? venue.all : (venue.byStatus.get(filter.status) ?? []));
      }
    }
    return lists;
  }

  #keep(key: string, page: KeptPage): void {
    const previous = this.#pages.get(key);
    if (previous) {
      this.#keptBytes -= previous.body.length;
      this.#pages.delete(key);
    }
    this.#pages.set(key, page);
    this.#keptBytes += page.body.length;
    for (const [oldest, old] of this.#pages) {
      if (this.#keptBytes <= MAX_KEPT_BYTES && this.#pages.size <= MAX_KEPT_PAGES) break;
      this.#pages.delete(oldest);
      this.#keptBytes -= old.body.length;
    }
  }

  // --- loading -------------------------------------------------------------------------------------

  /** Resolves once every venue is loaded as the store holds it now (at once when nothing changed). */
  async #fresh(): Promise<void> {
    while (!this.#loaded || this.#stale.size > 0 || this.#refreshing !== null) {
      this.#refreshing ??= this.#refresh().finally(() => {
        this.#refreshing = null;
      });
      await this.#refreshing;
    }
  }

  async #refresh(): Promise<void> {
    // What changes while the store is read is read again next time round.
    const venues = this.#loaded ? [...this.#stale] : null;
    this.#stale.clear();
    try {
      if (venues === null) {
        const rows = await repo.allMarkets(this.db);
        const byVenue = new Map<string, repo.MarketRow[]>();
        for (const row of rows) push(byVenue, row.venue, row);
        this.#venues.clear();
        this.#byId.clear();
        for (const [venue, ofVenue] of byVenue) this.#install(venue, ofVenue);
        this.#loaded = true;
      } else {
        for (const venue of venues) this.#install(venue, await repo.allMarkets(this.db, venue));
      }
    } catch (error) {
      for (const venue of venues ?? []) this.#stale.add(venue);
      throw error;
    }
    this.#order = [...this.#venues.keys()].sort();
    this.#generation++;
    this.#pages.clear();
    this.#keptBytes = 0;
  }

  /** Replaces what is held of a venue with its stored rows (in id order). */
  #install(venue: string, rows: readonly repo.MarketRow[]): void {
    for (const market of this.#venues.get(venue)?.all ?? []) this.#byId.delete(market.id);
    const all = rows.map((row) => this.#listed(row));
    for (const market of all) this.#byId.set(market.id, market);
    if (all.length > 0) this.#venues.set(venue, new VenueMarkets(all));
    else this.#venues.delete(venue);
  }

  #listed(row: repo.MarketRow): Listed {
    const market = new Listed(row);
    const observed = this.#observed.get(row.id);
    if (observed) {
      // A status reported after the row was read is not in it yet; one from before, the row has (or
      // a later sync overruled).
      if (observed.at >= market.storedAt) this.#applyStatus(market, observed.status, observed.resolution);
      else this.#observed.delete(row.id);
    }
    const quote = this.#quotes.get(row.id);
    if (quote) this.#applyQuote(market, quote);
    return market;
  }

  // --- what changes between syncs ------------------------------------------------------------------

  #onQuote(quote: LiveQuote): void {
    let live = this.#quotes.get(quote.marketId);
    if (!live) {
      live = { bestBid: null, bestAsk: null, lastPrice: null, at: 0 };
      this.#quotes.set(quote.marketId, live);
    }
    live.bestBid = quote.bestBid;
    live.bestAsk = quote.bestAsk;
    // As the flush writes it (catalog repo's updateLivePrice): no trade yet keeps the stored last price.
    if (quote.lastTradePrice !== null) live.lastPrice = quote.lastTradePrice;
    live.at = quote.updatedAt;
    const market = this.#byId.get(quote.marketId);
    if (market) this.#applyQuote(market, live);
  }

  #applyQuote(market: Listed, live: LiveFields): void {
    // A row written after the quote (a sync's listing) is the newer word.
    if (live.at < market.storedAt) return;
    const { state } = market;
    state.bestBid = live.bestBid;
    state.bestAsk = live.bestAsk;
    if (live.lastPrice !== null) state.lastPrice = live.lastPrice;
    state.updatedAt = isoFromMs(live.at);
    market.version++;
  }

  #onStatus(marketId: string, status: string, resolution: string | null): void {
    this.#observed.set(marketId, { status, resolution, at: this.clock.now() });
    const market = this.#byId.get(marketId);
    if (market) this.#applyStatus(market, status, resolution);
  }

  /** As `recordObservedStatus` writes it: only a status that differs from the one held (with its resolution). */
  #applyStatus(market: Listed, status: string, resolution: string | null): void {
    if (market.state.status === status) return;
    market.state.status = status;
    market.state.resolution = resolution;
    market.version++;
    const venue = this.#venues.get(market.venue);
    if (venue) venue.indexed = false;
    this.#generation++;
  }
}

function unchanged(kept: KeptPage): boolean {
  const { markets, versions } = kept;
  for (let i = 0; i < markets.length; i++) if (markets[i]!.version !== versions[i]) return false;
  return true;
}
