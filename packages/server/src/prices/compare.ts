/**
 * Price comparison of one event across venues (spec 2.5, `GET /v1/prices/compare`), with the
 * arbitrage figure of its matched pair from real book depth after fees (arbitrage.ts).
 *
 * The event comes from matching (a CrossEventLookup: an event id, or a market id of the event). Of
 * its pairs, the one compared is a non-rejected cross-venue pair, preferring in turn: identity or
 * complement relations, a pair holding the market asked for, verified over candidate, the higher
 * confidence. Its two markets are the two `platforms`. A market that belongs to no cross-venue
 * event is compared alone.
 *
 * "YES" in `spread_analysis` is the YES of the reference market (the one asked for when it is in
 * the pair, else the pair's market A). On a complement pair the other market's YES is the event's
 * NO, so its event-YES is bought through its NO asks (price 1 − its YES bid) and sold through its NO
 * bids. Books come from the live feed or the venue's REST endpoint; when one cannot be had the
 * comparison still answers from quotes, with `arbitrage: null` and a reason. Nothing here is cached
 * beyond what PricesService caches: this is not a hot path.
 */

import type { Static } from "typebox";
import { chargedSchedule } from "../catalog/fees";
import * as catalogRepo from "../catalog/repo";
import { AppError } from "../http/errors";
import type { Db } from "../infra/db/store";
import type { Logger } from "../infra/log";
import type { FeeModel } from "../ledger/money";
import type { CrossEvent, CrossEventLookup, CrossEventPair } from "../matching/types";
import { MICROS, type Micros, microsToNumber } from "../venues/decimal";
import type { BookLevel, OrderBook, Outcome, VenueId } from "../venues/model";
import { type ArbitrageResult, analyzeArbitrage, type DirectionResult, type SizeResult } from "./arbitrage";
import type { ArbitrageSchema, ComparePlatformSchema, ComparisonSchema } from "./schemas";
import type { MarketSummary, PricesService } from "./service";

export interface CompareOptions {
  /** Smallest hedged size, in contracts, at which an edge counts as an opportunity. */
  minContracts: number;
  /** Book levels a side counted in a platform's `liquidity`. Default 10. */
  liquidityLevels?: number;
  /** Rows of the arbitrage's per-level breakdown. Default 5. */
  maxLevels?: number;
}

export type Comparison = Static<typeof ComparisonSchema>;
export type PlatformView = Static<typeof ComparePlatformSchema>;
export type ArbitrageView = Static<typeof ArbitrageSchema>;
export type LegView = ArbitrageView["legs"][number];

/** One market of a priced pair: its summary, catalog row (fee schedule, minimum size) and book. */
export interface ArbitrageSide {
  market: MarketSummary;
  row: catalogRepo.MarketRow | undefined;
  /** Null when no book could be had. */
  book: OrderBook | null;
}

/** One market as compared: an arbitrage side and which of its outcomes is the event's YES. */
interface Side extends ArbitrageSide {
  eventYes: Outcome;
}

/** The better direction's figures at its most profitable size of at least `min_size`. */
export interface MinSizeFigures {
  /** The legs, with each one's cost and fees at `size`. */
  legs: LegView[];
  size: number;
  cost: number;
  fees: number;
  payout: number;
  profit: number;
  avg_edge: number;
}

/** What compare says of one pair's arbitrage, from two sides' books. */
export interface PairArbitrage {
  arbitrage: ArbitrageView | null;
  reason: Comparison["arbitrage_reason"];
  /** A verified pair that pays after fees at `min_size` contracts or more (`arbitrage_opportunity`). */
  opportunity: boolean;
  /** The figures `best_at_min_size` summarises, when that size pays (whatever the pair's status). */
  atMinSize: MinSizeFigures | null;
}

const num = (v: Micros | null | undefined) => (v === null || v === undefined ? null : microsToNumber(v));
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
/** Profit per contract in dollars: micro-USD over micro-contracts. */
const perContract = (r: SizeResult) => round6(r.profit / r.size);

function venueOfId(id: string): VenueId | undefined {
  const prefix = id.slice(0, id.indexOf(":"));
  return prefix === "polymarket" || prefix === "kalshi" ? prefix : undefined;
}

const complementOf = (p: Micros | null) => (p === null ? null : MICROS - p);

export class CompareService {
  #lookup: CrossEventLookup | undefined;
  readonly #options: Required<CompareOptions>;

  constructor(
    private readonly db: Db,
    private readonly prices: PricesService,
    lookup: CrossEventLookup | undefined,
    private readonly log: Logger,
    options: CompareOptions,
  ) {
    this.#lookup = lookup;
    this.#options = { liquidityLevels: 10, maxLevels: 5, ...options };
  }

  /** ARBITRAGE_MIN_CONTRACTS: the smallest hedged size, in contracts, an opportunity must pay at. */
  get minContracts(): number {
    return this.#options.minContracts;
  }

  /** Wires the matched-markets lookup after construction (the composition root's order). */
  setLookup(lookup: CrossEventLookup): void {
    this.#lookup = lookup;
  }

  async compare(id: string): Promise<Comparison> {
    const event = this.#lookup ? await this.#lookup.resolve(id) : null;
    if (!event) return this.#single(id);

    const pair = choosePair(event, id);
    const pairs = event.pairs.map((p) => ({ ...p, selected: p.match_id === pair?.match_id }));
    const ids = pair ? [pair.market_a, pair.market_b] : fallbackMarkets(event, id);
    const sides = await this.#sides(ids);
    if (sides.length === 0) {
      throw new AppError("EVENT_NOT_FOUND", `No markets of event ${event.id} are in the catalog`, {
        event_id: id,
      });
    }
    const referenceId = ids.includes(id) && sides.some((s) => s.market.id === id) ? id : sides[0]!.market.id;
    if (pair?.relation === "complement") {
      for (const side of sides) side.eventYes = side.market.id === referenceId ? "yes" : "no";
    }

    const base = this.#base(event.id, event.title, sides, referenceId);
    base.pairs = pairs;
    if (!pair) {
      base.arbitrage_reason = {
        code: "no_pair",
        message: "The event has no non-rejected pair of markets on two venues to compare",
      };
      return base;
    }
    if (sides.length < 2) {
      base.arbitrage_reason = {
        code: "book_unavailable",
        message: "One market of the pair is not in the catalog",
      };
      return base;
    }
    this.#arbitrage(base, pair, sides[0]!, sides[1]!);
    return base;
  }

  /** A market that is in no cross-venue event: its own figures, nothing to compare with. */
  async #single(id: string): Promise<Comparison> {
    const sides = venueOfId(id) ? await this.#sides([id]) : [];
    const side = sides[0];
    if (!side) {
      throw new AppError("EVENT_NOT_FOUND", `No event or market ${id}`, { event_id: id });
    }
    const title =
      (side.market.eventId
        ? (await catalogRepo.findEvent(this.db, side.market.eventId))?.title
        : undefined) ?? side.market.title;
    const base = this.#base(id, title, sides, id);
    base.arbitrage_reason = {
      code: "no_cross_event",
      message: "This market is not matched with a market of another venue",
    };
    return base;
  }

  async #sides(ids: readonly string[]): Promise<Side[]> {
    const { markets } = await this.prices.resolve(ids);
    if (markets.length === 0) return [];
    // Asking to compare is interest: the markets join their feeds so the next answer is live.
    this.prices.watch(markets);
    const [rows, books] = await Promise.all([
      catalogRepo.findMarkets(
        this.db,
        markets.map((m) => m.id),
      ),
      Promise.all(markets.map((m) => this.#book(m))),
    ]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return markets.map((market, i) => ({
      market,
      row: byId.get(market.id),
      book: books[i]!,
      eventYes: "yes" as Outcome,
    }));
  }

  async #book(market: MarketSummary): Promise<OrderBook | null> {
    try {
      return await this.prices.orderBook(market);
    } catch (error) {
      this.log.warn({ err: error, market_id: market.id }, "no order book for a comparison");
      return null;
    }
  }

  /** Platforms and spread analysis; arbitrage left empty for the caller. */
  #base(eventId: string, title: string, sides: Side[], referenceId: string): Comparison {
    const platforms: Record<string, PlatformView> = {};
    const evYes: Array<{ platform: string; price: Micros | null; bid: Micros | null; ask: Micros | null }> =
      [];
    for (const side of sides) {
      const key = platforms[side.market.venue] ? side.market.id : side.market.venue;
      const view = this.#platform(side);
      platforms[key] = view;
      const top = (levels: readonly BookLevel[] | undefined) => levels?.[0]?.price ?? null;
      const entry = this.prices.entry(side.market);
      const yesBid = side.book ? top(side.book.yes.bids) : toMicros(entry.best_bid);
      const yesAsk = side.book ? top(side.book.yes.asks) : toMicros(entry.best_ask);
      if (side.eventYes === "yes") {
        evYes.push({ platform: key, price: toMicros(view.yes_price), bid: yesBid, ask: yesAsk });
      } else {
        // The event's YES is this market's NO: bought at its NO ask, sold at its NO bid.
        evYes.push({
          platform: key,
          price: toMicros(view.no_price),
          bid: side.book ? top(side.book.no.bids) : complementOf(yesAsk),
          ask: side.book ? top(side.book.no.asks) : complementOf(yesBid),
        });
      }
    }
    const priced = evYes.filter((e) => e.price !== null).map((e) => e.price!);
    const low = priced.length >= 2 ? Math.min(...priced) : null;
    const spread = low === null ? null : Math.max(...priced) - low;
    let buy: (typeof evYes)[number] | undefined;
    let sell: (typeof evYes)[number] | undefined;
    for (const e of evYes) {
      if (e.ask !== null && (!buy || e.ask < buy.ask!)) buy = e;
      if (e.bid !== null && (!sell || e.bid > sell.bid!)) sell = e;
    }
    return {
      event_id: eventId,
      title,
      platforms,
      spread_analysis: {
        yes_spread: num(spread),
        yes_spread_pct:
          spread === null || low === null || low === 0 ? null : Math.round((spread / low) * 1e6) / 1e4,
        best_yes_buy: buy?.platform ?? null,
        best_yes_sell: sell?.platform ?? null,
        arbitrage_opportunity: false,
      },
      reference_market_id: referenceId,
      arbitrage: null,
      arbitrage_reason: null,
      pairs: [],
    };
  }

  #platform(side: Side): PlatformView {
    const { market, row, book } = side;
    const entry = this.prices.entry(market);
    const yes = toMicros(entry.price);
    let no: Micros | null = null;
    const noBid = book?.no.bids[0]?.price;
    const noAsk = book?.no.asks[0]?.price;
    if (noBid !== undefined && noAsk !== undefined) no = Math.round((noBid + noAsk) / 2);
    else if (yes !== null) no = MICROS - yes;
    const depth = this.#options.liquidityLevels;
    const bookLiquidity = book
      ? notionalOf(book.yes.bids.slice(0, depth)) + notionalOf(book.yes.asks.slice(0, depth))
      : null;
    return {
      market_id: market.id,
      yes_price: num(yes),
      no_price: num(no),
      volume_24h: entry.volume_24h,
      liquidity: microsToNumber(bookLiquidity ?? row?.liquidity ?? 0),
      title: market.title,
      status: market.status,
      best_bid: book ? num(book.yes.bids[0]?.price) : entry.best_bid,
      best_ask: book ? num(book.yes.asks[0]?.price) : entry.best_ask,
      event_yes_outcome: side.eventYes,
      liquidity_source: bookLiquidity === null ? "catalog" : "book",
      book_timestamp: book?.timestamp ?? null,
    };
  }

  #arbitrage(out: Comparison, pair: CrossEventPair, a: Side, b: Side): void {
    const priced = this.pairArbitrage(pair, a, b);
    out.arbitrage = priced.arbitrage;
    out.arbitrage_reason = priced.reason;
    out.spread_analysis.arbitrage_opportunity = priced.opportunity;
  }

  /**
   * A pair's arbitrage from its two markets' books (A then B, as the pair reads), as this comparison
   * shows it: the one code path the arbitrage scanner (scanner.ts) shares, so both always agree.
   * `minContracts` replaces ARBITRAGE_MIN_CONTRACTS (either market's own minimum still applies).
   */
  pairArbitrage(
    pair: CrossEventPair,
    a: ArbitrageSide,
    b: ArbitrageSide,
    minContracts: number = this.#options.minContracts,
  ): PairArbitrage {
    const none = { arbitrage: null, opportunity: false, atMinSize: null };
    if (!a.book || !b.book) {
      const missing = [a, b].filter((s) => !s.book).map((s) => s.market.id);
      return {
        ...none,
        reason: {
          code: "book_unavailable",
          message: `No order book could be had for ${missing.join(" and ")}; prices are from quotes`,
        },
      };
    }
    const minSize = Math.max(minContracts * MICROS, a.row?.min_size ?? MICROS, b.row?.min_size ?? MICROS);
    const result: ArbitrageResult = analyzeArbitrage({
      a: { marketId: a.market.id, venue: a.market.venue, book: a.book, fees: feeModel(a) },
      b: { marketId: b.market.id, venue: b.market.venue, book: b.book, fees: feeModel(b) },
      relation: pair.relation,
      polarity: pair.polarity,
      minSize,
      maxRows: this.#options.maxLevels,
    });
    if (!result.arbitrageable) return { ...none, reason: { code: result.reason, message: result.message } };
    const [best, other] = result.directions;
    const arbitrage = arbitrageView(pair, result.relation, result.minSize, best, other, [a, b]);
    const atMin = best.bestFromMin;
    const minSizeContracts = microsToNumber(result.minSize);
    if (!atMin || atMin.profit <= 0) {
      return {
        arbitrage,
        opportunity: false,
        atMinSize: null,
        reason:
          best.best && best.best.profit > 0
            ? {
                code: "below_min_size",
                message: `The edge pays only below the minimum size of ${minSizeContracts} contracts`,
              }
            : {
                code: "no_edge",
                message: `No hedged size of at least ${minSizeContracts} contracts pays after both venues' fees`,
              },
      };
    }
    const atMinSize: MinSizeFigures = {
      legs: legViews(best, [a, b], atMin),
      size: microsToNumber(atMin.size),
      cost: microsToNumber(atMin.cost),
      fees: microsToNumber(atMin.fees),
      payout: microsToNumber(atMin.payout),
      profit: microsToNumber(atMin.profit),
      avg_edge: perContract(atMin),
    };
    if (pair.status !== "verified") {
      return {
        arbitrage,
        opportunity: false,
        atMinSize,
        reason: {
          code: "pair_not_verified",
          message: `The pair is ${pair.status}, not verified: the markets may not settle together`,
        },
      };
    }
    return { arbitrage, opportunity: true, atMinSize, reason: null };
  }
}

function toMicros(value: number | null): Micros | null {
  return value === null ? null : Math.round(value * MICROS);
}

function notionalOf(levels: readonly BookLevel[]): Micros {
  let total = 0;
  for (const l of levels) total += Math.round((l.price * l.size) / MICROS);
  return total;
}

/** The schedule the sandbox would charge this market's fills: its own, else the venue's default. */
function feeModel(side: ArbitrageSide): FeeModel {
  return chargedSchedule(side.market.venue, side.row);
}

/**
 * The pair to compare: non-rejected and across two venues; identity or complement first, then one
 * holding the market asked for, verified before candidate, higher confidence, then the lower id.
 */
function choosePair(event: CrossEvent, askedId: string): CrossEventPair | undefined {
  const venue = (id: string) => event.markets.find((m) => m.market_id === id)?.venue ?? venueOfId(id);
  const eligible = event.pairs.filter(
    (p) => p.status !== "rejected" && venue(p.market_a) !== venue(p.market_b),
  );
  const score = (p: CrossEventPair) => [
    p.relation === "identity" || p.relation === "complement" ? 1 : 0,
    p.market_a === askedId || p.market_b === askedId ? 1 : 0,
    p.status === "verified" ? 1 : 0,
    p.confidence,
  ];
  return eligible.sort((x, y) => {
    const sx = score(x);
    const sy = score(y);
    for (let i = 0; i < sx.length; i++) if (sx[i] !== sy[i]) return sy[i]! - sx[i]!;
    return x.match_id < y.match_id ? -1 : x.match_id > y.match_id ? 1 : 0;
  })[0];
}

/** Without a usable pair: the market asked for (if in the event), else the event's first market. */
function fallbackMarkets(event: CrossEvent, askedId: string): string[] {
  const asked = event.markets.find((m) => m.market_id === askedId);
  const first = asked ?? event.markets[0];
  return first ? [first.market_id] : [];
}

function legViews(
  direction: DirectionResult,
  sides: [ArbitrageSide, ArbitrageSide],
  at: SizeResult | null,
): LegView[] {
  return direction.legs.map((leg, i) => {
    const book = sides[i]!.book!;
    const asks = leg.outcome === "yes" ? book.yes.asks : book.no.asks;
    const best = asks.reduce<Micros | null>(
      (min, l) => (l.size > 0 && (min === null || l.price < min) ? l.price : min),
      null,
    );
    return {
      platform: leg.venue,
      market_id: leg.marketId,
      outcome: leg.outcome,
      best_ask: num(best),
      cost: microsToNumber(at?.legs[i]?.cost ?? 0),
      fees: microsToNumber(at?.legs[i]?.fees ?? 0),
    };
  });
}

function arbitrageView(
  pair: CrossEventPair,
  relation: "identity" | "complement",
  minSize: Micros,
  best: DirectionResult,
  other: DirectionResult,
  sides: [ArbitrageSide, ArbitrageSide],
): ArbitrageView {
  // The reported size is the most profitable one; when nothing pays, none (size 0).
  const at = best.best && best.best.profit > 0 ? best.best : null;
  const otherAt = other.best && other.best.profit > 0 ? other.best : null;
  const atMin = best.bestFromMin;
  return {
    match_id: pair.match_id,
    relation,
    polarity: relation === "identity" ? "same" : "inverted",
    // A rejected pair is never compared (choosePair).
    status: pair.status === "verified" ? "verified" : "candidate",
    confidence: pair.confidence,
    caveats: pair.caveats,
    min_size: microsToNumber(minSize),
    legs: legViews(best, sides, at),
    depth: microsToNumber(best.depth),
    edge_first_contract: best.first ? perContract(best.first) : null,
    size: microsToNumber(at?.size ?? 0),
    cost: microsToNumber(at?.cost ?? 0),
    fees: microsToNumber(at?.fees ?? 0),
    payout: microsToNumber(at?.payout ?? 0),
    profit: microsToNumber(at?.profit ?? 0),
    avg_edge: at ? perContract(at) : null,
    best_at_min_size: atMin
      ? {
          size: microsToNumber(atMin.size),
          profit: microsToNumber(atMin.profit),
          avg_edge: perContract(atMin),
        }
      : null,
    levels: best.rows.map((r) => ({
      prices: r.prices.map(microsToNumber),
      size: microsToNumber(r.size),
      cumulative_size: microsToNumber(r.cumulativeSize),
      gross_edge: microsToNumber(r.grossEdge),
      fees: microsToNumber(r.fees),
      profit: microsToNumber(r.profit),
      cumulative_profit: microsToNumber(r.cumulativeProfit),
    })),
    more_levels: best.moreRows,
    other_direction: {
      legs: other.legs.map((l) => ({ platform: l.venue, market_id: l.marketId, outcome: l.outcome })),
      edge_first_contract: other.first ? perContract(other.first) : null,
      size: microsToNumber(otherAt?.size ?? 0),
      profit: microsToNumber(otherAt?.profit ?? 0),
    },
  };
}
