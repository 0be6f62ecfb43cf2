/**
 * The venue interface every adapter implements: discovery, one market, books, history, a live
 * feed, and the account side. Adapters are a fetcher (I/O, pagination, retries, rate limits) plus a
 * pure normalizer (venue JSON -> model.ts), and publish a capability map so the rest of crossbook
 * asks "can this venue do X" instead of "is this Kalshi".
 */
import type { Micros } from "./decimal";
import type {
  Candle,
  CandleInterval,
  MarketStatus,
  OrderBook,
  Outcome,
  PricePoint,
  Resolution,
  Trade,
  VenueEvent,
  VenueHistory,
  VenueId,
  VenueMarket,
} from "./model";

export interface RateLimitSpec {
  /** Requests allowed per window. */
  requests: number;
  windowMs: number;
}

export interface VenueCapabilities {
  venue: VenueId;
  displayName: string;
  urls: {
    production: Record<string, string>;
    /** Kalshi's demo environment; Polymarket has no public sandbox (null). */
    sandbox: Record<string, string> | null;
  };
  supports: {
    events: boolean;
    orderBook: boolean;
    priceHistory: boolean;
    candles: CandleInterval[];
    feed: boolean;
    trading: boolean;
    orderTypes: Array<"limit" | "market">;
    timeInForce: Array<"GTC" | "GTD" | "IOC" | "FOK">;
    /** Venue keeps a NO book of its own (else NO is derived as the complement). */
    nativeNoBook: boolean;
  };
  /** Outbound budgets we keep to, per endpoint class. */
  rateLimits: { read: RateLimitSpec; trade: RateLimitSpec };
  /** How fees are charged: each market carries its own schedule (@crossbook/fees); this says whose rules. */
  fees: { model: "kalshi" | "polymarket"; description: string };
}

export interface MarketQuery {
  status?: MarketStatus | "all";
  /** Venue event id to restrict to. */
  venueEventId?: string;
}

/** Progress of a long enumeration, for logs. */
export type PageProgress = (info: { page: number; items: number }) => void;

export type FeedEvent =
  | { kind: "book"; book: OrderBook }
  | { kind: "trade"; trade: Trade }
  | {
      kind: "quote";
      marketId: string;
      bestBid: Micros | null;
      bestAsk: Micros | null;
      lastPrice: Micros | null;
      timestamp: string;
    }
  | { kind: "tick_size"; marketId: string; tickSize: Micros }
  | { kind: "status"; marketId: string; status: MarketStatus; resolution: Resolution | null }
  | { kind: "connection"; state: "connected" | "disconnected" | "resynced"; reason?: string };

export interface FeedSubscription {
  /** Adds markets to the live subscription. */
  add(marketIds: string[]): Promise<void>;
  remove(marketIds: string[]): Promise<void>;
  close(): Promise<void>;
}

/** What a user links to trade live; secrets are encrypted at rest by the caller. */
export type VenueCredentials =
  | {
      venue: "polymarket";
      /** EOA private key (0x…) used for L1 auth and order signing. */
      privateKey: string;
      /** L2 API credentials; derived from the private key when absent. */
      apiKey?: string;
      apiSecret?: string;
      apiPassphrase?: string;
      /** Proxy, Safe or deposit wallet that holds the funds (signature types 1, 2 and 3). */
      funder?: string;
      /** 0 EOA, 1 proxy, 2 Safe, 3 POLY_1271 deposit wallet. */
      signatureType: 0 | 1 | 2 | 3;
    }
  | { venue: "kalshi"; keyId: string; privateKeyPem: string };

export interface VenueOrderRequest {
  marketId: string;
  outcome: Outcome;
  side: "buy" | "sell";
  type: "limit" | "market";
  /** Limit price of `outcome`; for market orders the worst acceptable price. */
  price: Micros;
  size: Micros;
  timeInForce: "GTC" | "GTD" | "IOC" | "FOK";
  expiresAt?: string;
  clientOrderId?: string;
}

export interface VenueOrder {
  venueOrderId: string;
  marketId: string;
  outcome: Outcome;
  side: "buy" | "sell";
  price: Micros;
  size: Micros;
  filledSize: Micros;
  status: "open" | "pending" | "filled" | "cancelled";
  createdAt: string;
  clientOrderId: string | null;
  /**
   * Set by `placeOrder` when the venue's amount precision made the adapter place a buy for fewer
   * contracts than asked (`size` is what was placed): what was asked, and why, in words for the user.
   */
  sizeAdjustment?: { requested: Micros; reason: string };
}

export interface VenueFill {
  venueFillId: string;
  venueOrderId: string;
  marketId: string;
  outcome: Outcome;
  side: "buy" | "sell";
  price: Micros;
  size: Micros;
  /** What the venue charged, when its record says (Kalshi `fee_cost`); null: crossbook's fee model applies. */
  fee: Micros | null;
  /** Whether the fill took liquidity, when the venue's record says (Kalshi `is_taker`, Polymarket `trader_side`). */
  liquidity?: "taker" | "maker";
  timestamp: string;
}

export interface VenuePosition {
  marketId: string;
  outcome: Outcome;
  size: Micros;
  averagePrice: Micros | null;
}

/**
 * A venue's market data: its catalog, books, price history and live feed. This alone is enough for
 * aggregation (catalog, prices, candles, matching, the price stream): a new venue can be added for
 * data first and gain trading later.
 */
export interface MarketDataVenue {
  readonly id: VenueId;
  readonly capabilities: VenueCapabilities;
  /**
   * Why this venue's live feed cannot run as configured (then `capabilities.supports.feed` is false,
   * no feed is started and prices come from REST); absent when it can.
   */
  readonly feedUnavailable?: string;

  /** Every event (all pages) matching the query. */
  listEvents(query?: MarketQuery, progress?: PageProgress): Promise<VenueEvent[]>;
  /** Every market (all pages) matching the query. */
  listMarkets(query?: MarketQuery, progress?: PageProgress): Promise<VenueMarket[]>;
  getMarket(marketId: string): Promise<VenueMarket>;
  getOrderBook(marketId: string, depth?: number): Promise<OrderBook>;
  /** History for [start, end): the series, or a VenueHistory when the venue served it coarser. */
  getPriceHistory(
    marketId: string,
    options: { interval: CandleInterval; start: string; end: string },
  ): Promise<Candle[] | PricePoint[] | VenueHistory>;
  /** Live book/trade/quote updates; reconnects and resubscribes by itself. */
  subscribe(marketIds: string[], onEvent: (event: FeedEvent) => void): Promise<FeedSubscription>;
}

/**
 * A venue crossbook can trade on with an account's linked credentials: placing, cancelling and
 * reading orders, fills, positions and cash. Live routing and the venue holdings use these.
 */
export interface TradingVenue extends MarketDataVenue {
  placeOrder(credentials: VenueCredentials, order: VenueOrderRequest): Promise<VenueOrder>;
  cancelOrder(credentials: VenueCredentials, venueOrderId: string): Promise<VenueOrder>;
  /**
   * One order. `hint` (its market, and a time before it was placed) lets a venue that archives
   * closed orders find one the live endpoints no longer serve (Kalshi `/historical/orders`).
   */
  getOrder(
    credentials: VenueCredentials,
    venueOrderId: string,
    hint?: { marketId?: string; since?: string },
  ): Promise<VenueOrder>;
  listOrders(
    credentials: VenueCredentials,
    options?: { marketId?: string; openOnly?: boolean },
  ): Promise<VenueOrder[]>;
  listFills(
    credentials: VenueCredentials,
    options?: { since?: string; marketId?: string },
  ): Promise<VenueFill[]>;
  listPositions(credentials: VenueCredentials): Promise<VenuePosition[]>;
  /** Available cash in micro-USD. */
  getBalance(credentials: VenueCredentials): Promise<Micros>;
}

/** Both adapters (Polymarket, Kalshi) trade today. */
export type Venue = TradingVenue;

/** Whether a venue trades, or serves market data only. */
export function canTrade(venue: MarketDataVenue): venue is TradingVenue {
  return typeof (venue as Partial<TradingVenue>).placeOrder === "function";
}

/** The venue `id` if it is enabled and trades; undefined for a missing or data-only venue. */
export function tradingVenueOf(
  venues: ReadonlyMap<VenueId, MarketDataVenue>,
  id: VenueId,
): TradingVenue | undefined {
  const venue = venues.get(id);
  return venue && canTrade(venue) ? venue : undefined;
}

/** `polymarket:0xabc` -> { venue, venueMarketId }; undefined for anything else. */
export function parseMarketId(id: string): { venue: VenueId; venueMarketId: string } | undefined {
  const colon = id.indexOf(":");
  if (colon <= 0) return undefined;
  const venue = id.slice(0, colon);
  const venueMarketId = id.slice(colon + 1);
  if ((venue !== "polymarket" && venue !== "kalshi") || venueMarketId.length === 0) return undefined;
  return { venue, venueMarketId };
}

export function marketId(venue: VenueId, venueMarketId: string): string {
  return `${venue}:${venueMarketId}`;
}
