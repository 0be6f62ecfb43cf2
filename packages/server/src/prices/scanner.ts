/**
 * The arbitrage scanner (`GET /v1/arbitrage`): every verified identity or complement pair across two
 * venues, priced from the live books this instance already holds, the ones that pay listed best first.
 *
 * - **Pairs** come from matching (`VerifiedEventSource`: the events holding a verified pair) with
 *   both markets' catalog rows (fee schedule, minimum size). They change when an operator curates or
 *   the matcher runs after a sync, rarely next to scans, so the list is read once and reused for
 *   `pairsTtlMs` (5 s), and read again after any catalog sync: a scan runs no SQL. A pair curated in
 *   the meantime shows (or goes) within that time.
 * - **Books** are the ones this instance holds (`LiveMarkets.book`): a scan never calls a venue. A
 *   market the live feed carries is priced on the feed's book. One it does not carry (a venue
 *   without a feed, such as Kalshi without a feed key, or a market past the feed's cap) is watched
 *   (`PricesService.watch`: asked of the feed, and polled over REST every 10 s while no feed
 *   carries it), at most `maxPolledPerVenue` of them per venue so scans cannot spend a venue's rate
 *   limit, and priced on its polled book while that is at most `maxPolledAgeMs` old. A pair with a
 *   market that has no such book is not priced and is counted in `unpriced`.
 * - **Figures** are `CompareService.pairArbitrage`'s, the code path of `GET /v1/prices/compare`, so an
 *   opportunity is compare's arbitrage of the same pair on the same books: listed when compare would
 *   say `arbitrage_opportunity`, with the figures of its best size of at least `min_size`. Books are
 *   immutable once published, so a pair's figures are kept until either book object, either market's
 *   summary or the minimum size changes; a scan then reprices only the pairs whose books moved.
 * - **Best first**: the highest profit at that size, then the highest profit per contract, then the
 *   match id.
 */
import * as catalogRepo from "../catalog/repo";
import type { CatalogService } from "../catalog/service";
import { type Clock, isoFromMs } from "../infra/clock";
import type { Db } from "../infra/db/store";
import type { Logger } from "../infra/log";
import type { CategorizedCrossEvent, CrossEventPair, VerifiedEventSource } from "../matching/types";
import type { OrderBook, VenueId } from "../venues/model";
import type { ArbitrageSide, CompareService } from "./compare";
import type { LiveMarkets } from "./ingest";
import type { Opportunity, ScanMetaView } from "./scanner-schemas";
import type { MarketSummary, PricesService } from "./service";

export interface ScannerDeps {
  db: Db;
  events: VerifiedEventSource;
  prices: PricesService;
  live: LiveMarkets;
  compare: CompareService;
  catalog: Pick<CatalogService, "onChanged">;
  clock: Clock;
  log: Logger;
}

export interface ScannerOptions {
  /** How long the list of verified pairs is reused before it is read again, ms. Default 5 s. */
  pairsTtlMs?: number;
  /** Markets without a live feed watched (polled over REST) for scans, per venue. Default 50. */
  maxPolledPerVenue?: number;
  /** A polled book older than this is not priced, ms. Default 30 s (three polls). */
  maxPolledAgeMs?: number;
}

export interface ScanQuery {
  /** USD; an opportunity's profit must be at least this. */
  minProfit: number;
  /** USD per contract; its avg_edge must be at least this. */
  minEdge: number;
  venue: VenueId | undefined;
  category: string | undefined;
  limit: number;
  /** Contracts; undefined: ARBITRAGE_MIN_CONTRACTS, as compare. */
  minContracts: number | undefined;
}

export interface ScanResult {
  items: Opportunity[];
  meta: ScanMetaView;
}

interface PairMarket {
  id: string;
  venue: VenueId;
  row: catalogRepo.MarketRow | undefined;
}

/** What a pair was last priced on, and what came of it (null: not an opportunity). */
interface Priced {
  bookA: OrderBook;
  bookB: OrderBook;
  marketA: MarketSummary;
  marketB: MarketSummary;
  minContracts: number;
  opportunity: Opportunity | null;
}

interface ScanPair {
  event: Opportunity["event"];
  /** The category lower-cased, for the filter. */
  categoryKey: string | null;
  pair: CrossEventPair;
  a: PairMarket;
  b: PairMarket;
  last: Priced | undefined;
}

interface PairList {
  pairs: ScanPair[];
  loadedAt: number;
  /** The invalidation count when the load began: a sync during the load makes it stale at once. */
  generation: number;
}

/** The markets one scan found without a live feed and watches: at most `limit` a venue. */
export class PollAllowance {
  readonly markets: MarketSummary[] = [];
  readonly #perVenue = new Map<string, number>();
  readonly #seen = new Set<string>();

  constructor(private readonly limit: number) {}

  /** False when the venue's allowance is spent: the market is neither watched nor priced. */
  add(market: MarketSummary): boolean {
    if (this.#seen.has(market.id)) return true;
    const count = this.#perVenue.get(market.venue) ?? 0;
    if (count >= this.limit) return false;
    this.#perVenue.set(market.venue, count + 1);
    this.#seen.add(market.id);
    this.markets.push(market);
    return true;
  }
}

/** `IN (…)` lists are cut into chunks this long (SQLite's bound-parameter limit). */
const CHUNK = 500;

export class ArbitrageScanner {
  readonly #ttlMs: number;
  readonly #maxPolledPerVenue: number;
  readonly #maxPolledAgeMs: number;
  #list: PairList | undefined;
  #loading: Promise<PairList> | undefined;
  #generation = 0;

  constructor(
    private readonly deps: ScannerDeps,
    options: ScannerOptions = {},
  ) {
    this.#ttlMs = options.pairsTtlMs ?? 5_000;
    this.#maxPolledPerVenue = options.maxPolledPerVenue ?? 50;
    this.#maxPolledAgeMs = options.maxPolledAgeMs ?? 30_000;
    // A sync may change the markets' fee schedules, minimum sizes and status, and the pairs after it.
    deps.catalog.onChanged(() => this.invalidate());
  }

  /** The next scan reads the list of verified pairs again. */
  invalidate(): void {
    this.#generation++;
  }

  async scan(query: ScanQuery): Promise<ScanResult> {
    const list = await this.#pairs();
    const minContracts = query.minContracts ?? this.deps.compare.minContracts;
    const category = query.category?.toLowerCase();
    const items: Opportunity[] = [];
    const unfed = new PollAllowance(this.#maxPolledPerVenue);
    const now = this.deps.clock.now();
    let scanned = 0;
    let priced = 0;
    for (const entry of list.pairs) {
      if (query.venue !== undefined && entry.a.venue !== query.venue && entry.b.venue !== query.venue)
        continue;
      if (category !== undefined && entry.categoryKey !== category) continue;
      const marketA = this.deps.prices.market(entry.a.id);
      const marketB = this.deps.prices.market(entry.b.id);
      // A market no longer open cannot be traded: the pair is not a current opportunity.
      if (marketA?.status !== "open" || marketB?.status !== "open") continue;
      scanned++;
      const bookA = this.#book(marketA, unfed, now);
      const bookB = this.#book(marketB, unfed, now);
      if (!bookA || !bookB) continue;
      priced++;
      const opportunity = this.#price(entry, marketA, marketB, bookA, bookB, minContracts);
      if (opportunity && opportunity.profit >= query.minProfit && opportunity.avg_edge >= query.minEdge) {
        items.push(opportunity);
      }
    }
    if (unfed.markets.length > 0) this.deps.prices.watch(unfed.markets);
    items.sort(
      (x, y) =>
        y.profit - x.profit ||
        y.avg_edge - x.avg_edge ||
        (x.match_id < y.match_id ? -1 : x.match_id > y.match_id ? 1 : 0),
    );
    return {
      items: items.slice(0, query.limit),
      meta: {
        pairs: scanned,
        priced,
        unpriced: scanned - priced,
        total: items.length,
        limit: query.limit,
        min_size: minContracts,
        pairs_loaded_at: isoFromMs(list.loadedAt),
      },
    };
  }

  /**
   * The feed's book of a market it carries (none yet: it is coming). Else the market is watched,
   * within the venue's allowance, and its polled book served while it is recent enough.
   */
  #book(market: MarketSummary, unfed: PollAllowance, now: number): OrderBook | undefined {
    const { live } = this.deps;
    if (live.isLive(market.id)) return live.book(market.id);
    if (!unfed.add(market)) return undefined;
    const arrived = live.bookArrivedAt(market.id);
    return arrived !== undefined && now - arrived <= this.#maxPolledAgeMs ? live.book(market.id) : undefined;
  }

  #price(
    entry: ScanPair,
    marketA: MarketSummary,
    marketB: MarketSummary,
    bookA: OrderBook,
    bookB: OrderBook,
    minContracts: number,
  ): Opportunity | null {
    const last = entry.last;
    if (
      last &&
      last.bookA === bookA &&
      last.bookB === bookB &&
      last.marketA === marketA &&
      last.marketB === marketB &&
      last.minContracts === minContracts
    ) {
      return last.opportunity;
    }
    const a: ArbitrageSide = { market: marketA, row: entry.a.row, book: bookA };
    const b: ArbitrageSide = { market: marketB, row: entry.b.row, book: bookB };
    const priced = this.deps.compare.pairArbitrage(entry.pair, a, b, minContracts);
    const opportunity =
      priced.opportunity && priced.arbitrage && priced.atMinSize
        ? {
            event: entry.event,
            match_id: priced.arbitrage.match_id,
            relation: priced.arbitrage.relation,
            polarity: priced.arbitrage.polarity,
            confidence: priced.arbitrage.confidence,
            caveats: priced.arbitrage.caveats,
            markets: [
              {
                market_id: marketA.id,
                platform: marketA.venue,
                title: marketA.title,
                book_timestamp: bookA.timestamp,
              },
              {
                market_id: marketB.id,
                platform: marketB.venue,
                title: marketB.title,
                book_timestamp: bookB.timestamp,
              },
            ],
            legs: priced.atMinSize.legs,
            min_size: priced.arbitrage.min_size,
            depth: priced.arbitrage.depth,
            edge_first_contract: priced.arbitrage.edge_first_contract,
            size: priced.atMinSize.size,
            cost: priced.atMinSize.cost,
            fees: priced.atMinSize.fees,
            payout: priced.atMinSize.payout,
            profit: priced.atMinSize.profit,
            avg_edge: priced.atMinSize.avg_edge,
          }
        : null;
    entry.last = { bookA, bookB, marketA, marketB, minContracts, opportunity };
    return opportunity;
  }

  /** The list of verified pairs, read again when older than the TTL or a sync happened since. */
  async #pairs(): Promise<PairList> {
    const list = this.#list;
    if (list && list.generation === this.#generation && this.deps.clock.now() - list.loadedAt < this.#ttlMs) {
      return list;
    }
    // One read at a time, whoever asks meanwhile waits for it.
    this.#loading ??= this.#load().finally(() => {
      this.#loading = undefined;
    });
    try {
      return await this.#loading;
    } catch (error) {
      // The store is down: the last list is better than no answer (its age is in the meta).
      if (!list) throw error;
      this.deps.log.warn({ err: error }, "could not read the verified pairs; scanning the last list");
      return list;
    }
  }

  async #load(): Promise<PairList> {
    const generation = this.#generation;
    const loadedAt = this.deps.clock.now();
    const events = await this.deps.events.eventsWithVerifiedPairs();
    const found: Array<{
      event: CategorizedCrossEvent;
      pair: CrossEventPair;
      venueA: VenueId;
      venueB: VenueId;
    }> = [];
    for (const event of events) {
      const venueOf = new Map(event.markets.map((m) => [m.market_id, m.venue]));
      for (const pair of event.pairs) {
        if (pair.status !== "verified") continue;
        if (pair.relation !== "identity" && pair.relation !== "complement") continue;
        const venueA = venueOf.get(pair.market_a);
        const venueB = venueOf.get(pair.market_b);
        // Compare prices only pairs across two venues: the scanner lists what compare would.
        if (venueA === undefined || venueB === undefined || venueA === venueB) continue;
        found.push({ event, pair, venueA, venueB });
      }
    }
    const ids = [...new Set(found.flatMap(({ pair }) => [pair.market_a, pair.market_b]))];
    // Loads the summaries of markets this instance has not seen yet (another instance's sync).
    await this.deps.prices.resolve(ids);
    const rows = new Map<string, catalogRepo.MarketRow>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      for (const row of await catalogRepo.findMarkets(this.deps.db, ids.slice(i, i + CHUNK)))
        rows.set(row.id, row);
    }
    const pairs = found.map(
      ({ event, pair, venueA, venueB }): ScanPair => ({
        event: { id: event.id, title: event.title, category: event.category },
        categoryKey: event.category?.toLowerCase() ?? null,
        pair,
        a: { id: pair.market_a, venue: venueA, row: rows.get(pair.market_a) },
        b: { id: pair.market_b, venue: venueB, row: rows.get(pair.market_b) },
        last: undefined,
      }),
    );
    const list: PairList = { pairs, loadedAt, generation };
    this.#list = list;
    return list;
  }
}
