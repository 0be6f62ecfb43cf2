/**
 * crossbook's own model of venue data. Adapters turn each venue's wire format into these shapes
 * (and nothing venue-specific leaks past them). Ids stay venue-readable: `polymarket:<conditionId>`,
 * `kalshi:<ticker>`. Prices are probabilities of YES in micro-units (0..1,000,000) and sizes are
 * contracts in micro-units, exact; the API converts to numbers at the edge.
 */
import type { FeeSchedule } from "@crossbook/fees";
import type { Micros } from "./decimal";

export const VENUE_IDS = ["polymarket", "kalshi"] as const;
export type VenueId = (typeof VENUE_IDS)[number];

export type MarketStatus = "open" | "closed" | "resolved";
export type Resolution = "yes" | "no" | "void";
export type Outcome = "yes" | "no";

export interface VenueEvent {
  /** `polymarket:<event id or slug>` / `kalshi:<event_ticker>` */
  id: string;
  venue: VenueId;
  venueEventId: string;
  title: string;
  category: string | null;
  /** Our market ids, in the venue's order. */
  marketIds: string[];
  closeTime: string | null;
  url: string | null;
  /** True for Polymarket neg-risk (mutually exclusive outcomes) events. */
  mutuallyExclusive: boolean;
}

/** How one of our two legs is named and addressed on the venue. */
export interface OutcomeRef {
  /** The venue's label ("Yes", "No", or a team name). */
  label: string;
  /** Polymarket CLOB token id; Kalshi uses the side name ("yes"/"no"). */
  venueTokenId: string;
}

export interface VenueMarket {
  id: string;
  venue: VenueId;
  /** conditionId (Polymarket) or ticker (Kalshi). */
  venueMarketId: string;
  eventId: string | null;
  title: string;
  question: string;
  /** Full resolution rules as the venue states them; null when the venue gives none. */
  rules: string | null;
  settlementSource: string | null;
  outcomes: { yes: OutcomeRef; no: OutcomeRef };
  status: MarketStatus;
  resolution: Resolution | null;
  openTime: string | null;
  closeTime: string | null;
  tickSize: Micros;
  /** Smallest order size in contracts. */
  minSize: Micros;
  volume: Micros;
  volume24h: Micros;
  liquidity: Micros;
  url: string | null;
  /** Latest YES price, best bid and best ask as last seen (listing or feed). */
  lastPrice: Micros | null;
  bestBid: Micros | null;
  bestAsk: Micros | null;
  /**
   * The YES price 24 hours before this listing as the venue states it (Kalshi
   * `previous_price_dollars`; Polymarket the YES price − `oneDayPriceChange`); null when it gives none.
   * 24-hour changes use it until crossbook has a day of its own prices.
   */
  price24hAgo: Micros | null;
  /** Polymarket: market is part of a neg-risk event (orders go to the neg-risk exchange). */
  negRisk: boolean;
  /**
   * The market's fee schedule (@crossbook/fees): Polymarket's `feeSchedule` and cap, Kalshi's series
   * fee type and multiplier (an event override applied); null when the venue did not say.
   */
  fees: FeeSchedule | null;
  updatedAt: string;
}

export interface BookLevel {
  price: Micros;
  size: Micros;
}

/** One outcome's book, best level first on both sides. */
export interface OrderBookSide {
  bids: BookLevel[];
  asks: BookLevel[];
}

/** Both outcomes' books. The NO book is the venue's own when it has one, else the complement. */
export interface OrderBook {
  marketId: string;
  yes: OrderBookSide;
  no: OrderBookSide;
  timestamp: string;
  /** Venue sequence number or hash, when it gives one. */
  sequence: number | null;
}

export interface Trade {
  marketId: string;
  /** Price of the outcome traded. */
  outcome: Outcome;
  price: Micros;
  size: Micros;
  /** Taker side: buy or sell of `outcome`. */
  takerSide: "buy" | "sell" | null;
  timestamp: string;
  venueTradeId: string | null;
}

export type CandleInterval = "1m" | "1h" | "1d";

export interface Candle {
  /** Start of the period. */
  timestamp: string;
  open: Micros;
  high: Micros;
  low: Micros;
  close: Micros;
  volume: Micros;
}

export interface PricePoint {
  timestamp: string;
  price: Micros;
}

/**
 * Price history with what the venue said about it beyond the series: the spacing it actually served
 * when coarser than the interval asked for (Polymarket serves closed and resolved markets at 12 hours
 * or coarser, VENUES-AUDIT #6).
 */
export interface VenueHistory {
  series: Candle[] | PricePoint[];
  /** Minutes between the venue's points when coarser than the interval asked for; absent otherwise. */
  coarserMinutes?: number;
}
