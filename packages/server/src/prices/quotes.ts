/**
 * The latest quote of every live market, in memory, updated from venue feed events. `price` is
 * defined as the midpoint of the best YES bid and ask when both exist, else the last trade price
 * (null until one is seen). 24-hour change and volume come from per-minute rings of the last
 * 1,440 minutes, allocated only for markets that actually tick, so an update is O(1) and memory
 * follows the number of live markets (a fixed-size ring each). A minute without an update keeps the
 * price in force, so the price 24 hours ago is known from a day after the first one seen; until
 * then the change is taken against the venue's own price 24 hours ago (`setVenueDayAgo`, from the
 * catalog).
 */
import type { Micros } from "../venues/decimal";
import type { FeedEvent } from "../venues/venue";

export interface Quote {
  marketId: string;
  price: Micros | null;
  bestBid: Micros | null;
  bestAsk: Micros | null;
  spread: Micros | null;
  /** price − price 24 h ago (null when either is unknown). */
  change24h: Micros | null;
  /** change24h as a percentage of the price 24 h ago. */
  changePct24h: number | null;
  volume24h: Micros;
  lastTradePrice: Micros | null;
  lastTradeAt: number | null;
  updatedAt: number;
}

const MINUTE = 60_000;
const RING = 1_440;
const DAY = RING * MINUTE;
const NO_PRICE = -1;

class MarketState {
  bestBid: Micros | null = null;
  bestAsk: Micros | null = null;
  lastTradePrice: Micros | null = null;
  lastTradeAt: number | null = null;
  updatedAt = 0;
  /** Price at the end of each minute, indexed by minute % RING; NO_PRICE where unknown. */
  readonly prices = new Int32Array(RING).fill(NO_PRICE);
  /** Traded contracts (micros) per minute. */
  readonly volumes = new Float64Array(RING);
  /** Minute numbers the slots currently hold. */
  readonly minutes = new Float64Array(RING).fill(-1);
  volumeSum = 0;
  lastMinute = -1;

  constructor(
    readonly marketId: string,
    /** When this book first heard of the market: its 24 h figures cover only the time since. */
    readonly observedSince: number,
  ) {}

  price(): Micros | null {
    if (this.bestBid !== null && this.bestAsk !== null) return Math.round((this.bestBid + this.bestAsk) / 2);
    return this.lastTradePrice;
  }

  /**
   * Moves the ring to `minute`, clearing the volume of slots that fell out of the 24-hour window;
   * the minutes in between keep the price in force at the end of the last one recorded.
   */
  advance(minute: number): void {
    if (minute <= this.lastMinute) return;
    const carried = this.lastMinute < 0 ? NO_PRICE : this.prices[this.lastMinute % RING]!;
    const from =
      this.lastMinute < 0 || minute - this.lastMinute > RING ? minute - RING + 1 : this.lastMinute + 1;
    for (let m = from; m <= minute; m++) {
      const slot = m % RING;
      if (this.minutes[slot] !== m) {
        this.volumeSum -= this.volumes[slot]!;
        this.volumes[slot] = 0;
        this.prices[slot] = carried;
        this.minutes[slot] = m;
      }
    }
    this.lastMinute = minute;
  }

  record(now: number, volume: Micros): void {
    const minute = Math.floor(now / MINUTE);
    this.advance(minute);
    const slot = minute % RING;
    if (volume > 0) {
      this.volumes[slot] = this.volumes[slot]! + volume;
      this.volumeSum += volume;
    }
    const price = this.price();
    if (price !== null) this.prices[slot] = price;
    this.updatedAt = now;
  }

  /** The price in force at the end of the minute 24 hours before `now`'s, if crossbook saw one by then. */
  priceDayAgo(now: number): Micros | null {
    const target = Math.floor(now / MINUTE) - RING + 1;
    const slot = ((target % RING) + RING) % RING;
    if (this.minutes[slot] === target && this.prices[slot] !== NO_PRICE) return this.prices[slot]!;
    return null;
  }
}

export class QuoteBook {
  readonly #markets = new Map<string, MarketState>();
  /** The venue's own price 24 h ago per market, and when it was read (the catalog's last listing). */
  readonly #venueDayAgo = new Map<string, { price: Micros; at: number }>();

  /**
   * The venue's price 24 hours before `at` (Kalshi `previous_price_dollars`, Polymarket's
   * `oneDayPriceChange`), for markets crossbook has not watched for a day yet; null forgets it. Used
   * for a day at most: a venue that has not been listed since then says nothing about now.
   */
  setVenueDayAgo(marketId: string, price: Micros | null, at: number): void {
    if (price === null) this.#venueDayAgo.delete(marketId);
    else this.#venueDayAgo.set(marketId, { price, at });
  }

  #state(marketId: string, now: number): MarketState {
    let state = this.#markets.get(marketId);
    if (!state) {
      state = new MarketState(marketId, now);
      this.#markets.set(marketId, state);
    }
    return state;
  }

  /** Folds one feed event in; returns the market's new quote, or undefined if nothing changed. */
  apply(event: FeedEvent, now: number): Quote | undefined {
    switch (event.kind) {
      case "book": {
        const state = this.#state(event.book.marketId, now);
        const bestBid = event.book.yes.bids[0]?.price ?? null;
        const bestAsk = event.book.yes.asks[0]?.price ?? null;
        // Most book updates change levels behind the best ones: no new quote, nothing to publish.
        if (bestBid === state.bestBid && bestAsk === state.bestAsk && state.updatedAt !== 0) return undefined;
        state.bestBid = bestBid;
        state.bestAsk = bestAsk;
        state.record(now, 0);
        return this.#quote(state, now);
      }
      case "quote": {
        const state = this.#state(event.marketId, now);
        const lastChanged = event.lastPrice !== null && event.lastPrice !== state.lastTradePrice;
        if (
          event.bestBid === state.bestBid &&
          event.bestAsk === state.bestAsk &&
          !lastChanged &&
          state.updatedAt !== 0
        ) {
          return undefined;
        }
        state.bestBid = event.bestBid;
        state.bestAsk = event.bestAsk;
        // A venue ticker's last price is the venue's latest trade price.
        if (lastChanged) state.lastTradePrice = event.lastPrice;
        state.record(now, 0);
        return this.#quote(state, now);
      }
      case "trade": {
        const state = this.#state(event.trade.marketId, now);
        // Quotes are of YES: a NO trade at p is a YES trade at 1 − p.
        state.lastTradePrice =
          event.trade.outcome === "yes" ? event.trade.price : 1_000_000 - event.trade.price;
        state.lastTradeAt = now;
        state.record(now, event.trade.size);
        return this.#quote(state, now);
      }
      default:
        return undefined;
    }
  }

  /** Seeds a price minute from history (backfill), e.g. the price 24 h ago from candles. */
  seedPrice(marketId: string, at: number, price: Micros, now: number): void {
    const state = this.#state(marketId, now);
    const minute = Math.floor(at / MINUTE);
    if (minute <= Math.floor(now / MINUTE) - RING) return;
    state.advance(Math.max(minute, state.lastMinute));
    const slot = minute % RING;
    if (state.minutes[slot] === minute) state.prices[slot] = price;
  }

  get(marketId: string, now: number): Quote | undefined {
    const state = this.#markets.get(marketId);
    return state ? this.#quote(state, now) : undefined;
  }

  /** When the book started following a market (undefined if it never has). */
  observedSince(marketId: string): number | undefined {
    return this.#markets.get(marketId)?.observedSince;
  }

  get size(): number {
    return this.#markets.size;
  }

  #quote(state: MarketState, now: number): Quote {
    state.advance(Math.floor(now / MINUTE));
    const price = state.price();
    let dayAgo = state.priceDayAgo(now);
    if (dayAgo === null) {
      const venue = this.#venueDayAgo.get(state.marketId);
      if (venue && now - venue.at < DAY) dayAgo = venue.price;
    }
    const change = price !== null && dayAgo !== null ? price - dayAgo : null;
    return {
      marketId: state.marketId,
      price,
      bestBid: state.bestBid,
      bestAsk: state.bestAsk,
      spread: state.bestBid !== null && state.bestAsk !== null ? state.bestAsk - state.bestBid : null,
      change24h: change,
      changePct24h: change !== null && dayAgo ? Math.round((change / dayAgo) * 1e6) / 1e4 : null,
      volume24h: Math.round(state.volumeSum),
      lastTradePrice: state.lastTradePrice,
      lastTradeAt: state.lastTradeAt,
      updatedAt: state.updatedAt,
    };
  }
}
