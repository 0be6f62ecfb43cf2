/**
 * Local order books for the market WebSocket channel, with no I/O: `book` snapshots replace one
 * token's book, `price_change` sets the new aggregate size of a level (0 removes it), and every
 * change is turned into crossbook FeedEvents. Kept apart from the socket so each message type is
 * tested offline. The YES and NO legs are the two tokens' OWN books; a market's book is emitted only
 * once both tokens have a snapshot, so a missing leg is never filled with a copy of the other.
 * Wire format: VENUES.md §1.4 "Market channel".
 */
import { MICROS, type Micros } from "../decimal";
import type { BookLevel, OrderBook, Outcome, Resolution } from "../model";
import type { FeedEvent } from "../venue";
import {
  epochToIso,
  micros,
  normalizeLastTrade,
  normalizePriceChanges,
  normalizeTokenBook,
  PolymarketParseError,
  type Report,
  type TokenPair,
} from "./normalize";

interface Leg {
  bids: BookSide;
  asks: BookSide;
}

interface MarketState {
  pair: TokenPair;
  yes: Leg | null;
  no: Leg | null;
  lastPrice: Micros | null;
  tickSize: Micros | null;
  timestamp: string;
}

const KNOWN_EVENTS = new Set([
  "book",
  "price_change",
  "last_trade_price",
  "tick_size_change",
  "best_bid_ask",
  "new_market",
  "market_resolved",
]);

export class LocalBooks {
  readonly #markets = new Map<string, MarketState>();
  readonly #tokens = new Map<string, { marketId: string; outcome: Outcome }>();

  constructor(
    private readonly report: Report,
    private readonly nowIso: () => string,
  ) {}

  track(pair: TokenPair): void {
    if (this.#markets.has(pair.marketId)) return;
    this.#markets.set(pair.marketId, {
      pair,
      yes: null,
      no: null,
      lastPrice: null,
      tickSize: null,
      timestamp: this.nowIso(),
    });
    this.#tokens.set(pair.yes, { marketId: pair.marketId, outcome: "yes" });
    this.#tokens.set(pair.no, { marketId: pair.marketId, outcome: "no" });
  }

  untrack(marketId: string): void {
    const state = this.#markets.get(marketId);
    if (!state) return;
    this.#markets.delete(marketId);
    this.#tokens.delete(state.pair.yes);
    this.#tokens.delete(state.pair.no);
  }

  /** Forget every book (after a reconnect the venue sends fresh snapshots). */
  reset(): void {
    for (const state of this.#markets.values()) {
      state.yes = null;
      state.no = null;
    }
  }

  pairs(): TokenPair[] {
    return [...this.#markets.values()].map((s) => s.pair);
  }

  /** Current book of a market, or undefined until both legs have a snapshot. */
  book(marketId: string): OrderBook | undefined {
    const state = this.#markets.get(marketId);
    return state ? this.#book(state) : undefined;
  }

  /** Applies one decoded WS message; returns the FeedEvents it causes. */
  apply(msg: Record<string, unknown>): FeedEvent[] {
    const type = msg.event_type;
    if (typeof type !== "string" || !KNOWN_EVENTS.has(type)) {
      this.report("unknown_ws_event_type", String(type));
      return [];
    }
    switch (type) {
      case "book":
        return this.#onBook(msg);
      case "price_change":
        return this.#onPriceChange(msg);
      case "last_trade_price":
        return this.#onLastTrade(msg);
      case "tick_size_change":
        return this.#onTickSize(msg);
      case "best_bid_ask":
        return this.#onBestBidAsk(msg);
      case "market_resolved":
        return this.#onResolved(msg);
      default:
        return []; // new_market: discovery is the catalog's job
    }
  }

  #token(assetId: unknown): { state: MarketState; outcome: Outcome } | undefined {
    if (typeof assetId !== "string") return undefined;
    const ref = this.#tokens.get(assetId);
    const state = ref && this.#markets.get(ref.marketId);
    if (!ref || !state) {
      this.report("ws_unsubscribed_asset", assetId);
      return undefined;
    }
    return { state, outcome: ref.outcome };
  }

  #onBook(msg: Record<string, unknown>): FeedEvent[] {
    const found = this.#token(msg.asset_id);
    if (!found) return [];
    let parsed: ReturnType<typeof normalizeTokenBook>;
    try {
      parsed = normalizeTokenBook(msg, this.report);
    } catch (error) {
      if (error instanceof PolymarketParseError) {
        this.report("bad_ws_book", error.message);
        return [];
      }
      throw error;
    }
    const leg: Leg = {
      bids: new BookSide("bids", parsed.side.bids),
      asks: new BookSide("asks", parsed.side.asks),
    };
    const { state, outcome } = found;
    state[outcome] = leg;
    state.timestamp = epochToIso(msg.timestamp, "ms") ?? this.nowIso();
    if (outcome === "yes") {
      const last = micros(msg.last_trade_price);
      if (last !== undefined && last >= 0 && last <= MICROS) state.lastPrice = last;
    }
    return this.#changed(state);
  }

  #onPriceChange(msg: Record<string, unknown>): FeedEvent[] {
    const changes = normalizePriceChanges(msg, this.report);
    if (changes.length === 0) return [];
    const timestamp = epochToIso(msg.timestamp, "ms") ?? this.nowIso();
    let touched: MarketState | undefined;
    let more: Set<MarketState> | undefined;
    for (const change of changes) {
      const found = this.#token(change.assetId);
      if (!found) continue;
      const leg = found.state[found.outcome];
      if (!leg) {
        this.report("price_change_before_book", change.assetId);
        continue;
      }
      leg[change.side].set(change.price, change.size);
      found.state.timestamp = timestamp;
      if (touched === undefined) touched = found.state;
      else if (touched !== found.state) {
        more ??= new Set();
        more.add(found.state);
      }
    }
    if (touched === undefined) return [];
    const events = this.#changed(touched);
    if (more) for (const state of more) events.push(...this.#changed(state));
    return events;
  }

  #onLastTrade(msg: Record<string, unknown>): FeedEvent[] {
    const found = this.#token(msg.asset_id);
    if (!found) return [];
    const trade = normalizeLastTrade(
      msg,
      found.state.pair.marketId,
      found.outcome,
      this.report,
      this.nowIso(),
    );
    if (!trade) return [];
    const { state } = found;
    state.lastPrice = found.outcome === "yes" ? trade.price : MICROS - trade.price;
    state.timestamp = trade.timestamp;
    const events: FeedEvent[] = [{ kind: "trade", trade }];
    const quote = this.#quote(state);
    if (quote) events.push(quote);
    return events;
  }

  #onTickSize(msg: Record<string, unknown>): FeedEvent[] {
    const found = this.#token(msg.asset_id);
    if (!found) return [];
    const tick = micros(msg.new_tick_size);
    if (tick === undefined || tick <= 0) {
      this.report("bad_tick_size_change", JSON.stringify(msg).slice(0, 120));
      return [];
    }
    // Both tokens of a market announce the change; tell our side once.
    if (found.state.tickSize === tick) return [];
    found.state.tickSize = tick;
    return [{ kind: "tick_size", marketId: found.state.pair.marketId, tickSize: tick }];
  }

  #onBestBidAsk(msg: Record<string, unknown>): FeedEvent[] {
    const found = this.#token(msg.asset_id);
    // Our quote comes from the books; best_bid_ask only matters before a YES snapshot exists.
    if (found?.outcome !== "yes" || found.state.yes) return [];
    return [
      {
        kind: "quote",
        marketId: found.state.pair.marketId,
        bestBid: micros(msg.best_bid) ?? null,
        bestAsk: micros(msg.best_ask) ?? null,
        lastPrice: found.state.lastPrice,
        timestamp: epochToIso(msg.timestamp, "ms") ?? this.nowIso(),
      },
    ];
  }

  #onResolved(msg: Record<string, unknown>): FeedEvent[] {
    const market = typeof msg.market === "string" ? msg.market.toLowerCase() : undefined;
    const state = [...this.#markets.values()].find(
      (s) =>
        s.pair.conditionId === market ||
        (Array.isArray(msg.assets_ids) && msg.assets_ids.some((a) => a === s.pair.yes || a === s.pair.no)),
    );
    if (!state) return [];
    let resolution: Resolution | null = null;
    if (msg.winning_asset_id === state.pair.yes) resolution = "yes";
    else if (msg.winning_asset_id === state.pair.no) resolution = "no";
    else this.report("market_resolved_unknown_winner", String(msg.winning_asset_id));
    return [{ kind: "status", marketId: state.pair.marketId, status: "resolved", resolution }];
  }

  #changed(state: MarketState): FeedEvent[] {
    const events: FeedEvent[] = [];
    const book = this.#book(state);
    if (book) events.push({ kind: "book", book });
    const quote = this.#quote(state);
    if (quote) events.push(quote);
    return events;
  }

  #book(state: MarketState): OrderBook | undefined {
    if (!state.yes || !state.no) return undefined;
    return {
      marketId: state.pair.marketId,
      yes: { bids: state.yes.bids.snapshot(), asks: state.yes.asks.snapshot() },
      no: { bids: state.no.bids.snapshot(), asks: state.no.asks.snapshot() },
      timestamp: state.timestamp,
      sequence: null,
    };
  }

  #quote(state: MarketState): FeedEvent | undefined {
    if (!state.yes) return undefined;
    return {
      kind: "quote",
      marketId: state.pair.marketId,
      bestBid: state.yes.bids.best(),
      bestAsk: state.yes.asks.best(),
      lastPrice: state.lastPrice,
      timestamp: state.timestamp,
    };
  }
}

/**
 * One side of one token's book, kept sorted best-first so an update is a binary search and a splice,
 * and handed out as copy-on-write snapshots: an emitted book never changes under its reader, and a
 * side that did not change is not copied again.
 */
class BookSide {
  readonly #levels: BookLevel[];
  #snapshot: BookLevel[] | null = null;

  constructor(
    private readonly side: "bids" | "asks",
    levels: BookLevel[],
  ) {
    this.#levels = [...levels];
  }

  /** New aggregate size at `price`; 0 removes the level. */
  set(price: Micros, size: Micros): void {
    const levels = this.#levels;
    const bids = this.side === "bids";
    let lo = 0;
    let hi = levels.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = levels[mid]!.price;
      if (bids ? p > price : p < price) lo = mid + 1;
      else hi = mid;
    }
    const found = lo < levels.length && levels[lo]!.price === price;
    if (size === 0) {
      if (!found) return;
      levels.splice(lo, 1);
    } else if (found) {
      levels[lo] = { price, size };
    } else {
      levels.splice(lo, 0, { price, size });
    }
    this.#snapshot = null;
  }

  best(): Micros | null {
    return this.#levels[0]?.price ?? null;
  }

  snapshot(): BookLevel[] {
    this.#snapshot ??= this.#levels.slice();
    return this.#snapshot;
  }
}
