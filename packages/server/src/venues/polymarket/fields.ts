/**
 * Every Polymarket field our normalizers read, per public endpoint, with the JSON type they accept:
 * the list `crossbook venues check` (venues/drift.ts) holds each live answer against. Whoever makes a
 * normalizer read a new field adds it here too: `test/venues/drift-fields.test.ts` runs the
 * normalizers over the fixtures and fails on any field they read that this list lacks.
 *
 * Grammar (venues/drift.ts): `a.b` is a key, `a[]` every element of an array; a type is one of
 * string, number, integer, boolean, object, array, decimal (a string holding a plain decimal, as
 * "0.52"), json-array (a string holding a JSON array, as Gamma's `outcomes`), empty (""), joined with `|`; a
 * trailing `?` means the field may be absent or null. Required fields are those without which a
 * market is skipped or a value silently falls back to a default. `known` lists fields the venue
 * sends that we do not read, so the check tells them from fields the venue added.
 *
 * Sources: VENUES.md §1.2–§1.4 (corrected by VENUES-AUDIT.md), `@polymarket/clob-client-v2` 1.1.0
 * `dist/types/clob.d.ts` (`OrderBookSummary`, `MarketPrice`) and `dist/client.js`
 * (`getClobMarketInfo`), the fake venue's payloads; see ./README.md.
 */
import { type EndpointFields, type FieldMap, under } from "../drift";

/** A Gamma market (normalize.ts `normalizeGammaMarket`, fetcher.ts `getMarket`). */
export const GAMMA_MARKET: FieldMap = {
  id: "string|number",
  conditionId: "string",
  question: "string",
  slug: "string",
  outcomes: "json-array",
  outcomePrices: "json-array",
  clobTokenIds: "json-array",
  active: "boolean",
  closed: "boolean",
  orderPriceMinTickSize: "number|decimal",
  orderMinSize: "number|decimal",
  archived: "boolean?",
  umaResolutionStatus: "string?",
  description: "string?",
  resolutionSource: "string?",
  startDate: "string?",
  endDate: "string?",
  updatedAt: "string?",
  volume: "decimal|number?",
  volumeNum: "number|decimal?",
  volume24hr: "number|decimal?",
  liquidity: "decimal|number?",
  liquidityNum: "number|decimal?",
  bestBid: "number|decimal?",
  bestAsk: "number|decimal?",
  lastTradePrice: "number|decimal?",
  oneDayPriceChange: "number|decimal?",
  negRisk: "boolean?",
  feesEnabled: "boolean?",
  takerBaseFee: "number|decimal?",
  makerBaseFee: "number|decimal?",
  feeSchedule: "object?",
  "feeSchedule.rate": "number|decimal",
  "feeSchedule.exponent": "number|decimal",
  "feeSchedule.takerOnly": "boolean?",
  events: "array?",
  "events[].id": "string|number",
};

/** Market fields Gamma sends (VENUES.md §1.2, the fake) that we do not read. */
const GAMMA_MARKET_KNOWN = [
  "endDateIso",
  "startDateIso",
  "createdAt",
  "category",
  "questionID",
  "volume1wk",
  "volume1mo",
  "volume1yr",
  "volumeClob",
  "volume24hrClob",
  "volume1wkClob",
  "volume1moClob",
  "volume1yrClob",
  "liquidityClob",
  "new",
  "featured",
  "restricted",
  "marketMakerAddress",
  "groupItemTitle",
  "enableOrderBook",
  "acceptingOrders",
  "spread",
  "feeType",
  "feeSchedule.rebateRate",
  "negRiskMarketID",
  "image",
  "icon",
  "events[].ticker",
  "events[].slug",
  "events[].title",
  "events[].description",
  "events[].resolutionSource",
  "events[].startDate",
  "events[].creationDate",
  "events[].endDate",
  "events[].active",
  "events[].closed",
  "events[].archived",
  "events[].new",
  "events[].featured",
  "events[].restricted",
  "events[].liquidity",
  "events[].volume",
  "events[].openInterest",
  "events[].volume24hr",
  "events[].volume1wk",
  "events[].volume1mo",
  "events[].volume1yr",
  "events[].competitive",
  "events[].enableOrderBook",
  "events[].liquidityClob",
  "events[].negRisk",
  "events[].negRiskMarketID",
  "events[].commentCount",
  "events[].tags",
  "events[].series",
];

/** A Gamma event with its markets (normalize.ts `normalizeGammaEvent`). */
export const GAMMA_EVENT: FieldMap = {
  id: "string|number",
  title: "string",
  ticker: "string?",
  slug: "string?",
  category: "string?",
  endDate: "string?",
  negRisk: "boolean?",
  enableNegRisk: "boolean?",
  tags: "array?",
  "tags[].label": "string?",
  markets: "array",
  ...under("markets[]", GAMMA_MARKET),
};

const GAMMA_EVENT_KNOWN = [
  "description",
  "resolutionSource",
  "startDate",
  "creationDate",
  "active",
  "closed",
  "archived",
  "new",
  "featured",
  "restricted",
  "liquidity",
  "volume",
  "openInterest",
  "volume24hr",
  "volume1wk",
  "volume1mo",
  "volume1yr",
  "competitive",
  "enableOrderBook",
  "liquidityClob",
  "negRiskMarketID",
  "commentCount",
  "image",
  "icon",
  "series",
  "tags[].id",
  "tags[].slug",
  ...GAMMA_MARKET_KNOWN.map((f) => `markets[].${f}`),
];

/** One CLOB book, REST `/book` and the WS `book` message (normalize.ts `normalizeTokenBook`). */
export const CLOB_BOOK: FieldMap = {
  asset_id: "string",
  market: "string",
  timestamp: "decimal|number",
  hash: "string?",
  bids: "array",
  "bids[].price": "decimal|number",
  "bids[].size": "decimal|number",
  asks: "array",
  "asks[].price": "decimal|number",
  "asks[].size": "decimal|number",
  tick_size: "decimal|number?",
  // Absent, null or "" on a book without trades (VENUES.md §1.3).
  last_trade_price: "decimal|number|empty?",
};

const CLOB_BOOK_KNOWN = ["min_order_size", "neg_risk"];

/** WS market-channel messages (books.ts `LocalBooks.apply`), keyed by `event_type`. */
export const WS_MESSAGES: FieldMap = {
  book: "object",
  "book.event_type": "string",
  ...under("book", CLOB_BOOK),
  price_change: "object?",
  "price_change.event_type": "string",
  "price_change.timestamp": "decimal|number?",
  "price_change.price_changes": "array",
  "price_change.price_changes[].asset_id": "string",
  "price_change.price_changes[].price": "decimal|number",
  "price_change.price_changes[].size": "decimal|number",
  "price_change.price_changes[].side": "string",
  last_trade_price: "object?",
  "last_trade_price.event_type": "string",
  "last_trade_price.asset_id": "string",
  "last_trade_price.price": "decimal|number",
  "last_trade_price.size": "decimal|number",
  "last_trade_price.side": "string",
  "last_trade_price.timestamp": "decimal|number?",
  "last_trade_price.transaction_hash": "string?",
  tick_size_change: "object?",
  "tick_size_change.event_type": "string",
  "tick_size_change.asset_id": "string",
  "tick_size_change.new_tick_size": "decimal|number",
  best_bid_ask: "object?",
  "best_bid_ask.event_type": "string",
  "best_bid_ask.asset_id": "string",
  "best_bid_ask.best_bid": "decimal|number?",
  "best_bid_ask.best_ask": "decimal|number?",
  "best_bid_ask.timestamp": "decimal|number?",
  market_resolved: "object?",
  "market_resolved.event_type": "string",
  "market_resolved.market": "string?",
  "market_resolved.assets_ids": "array?",
  "market_resolved.winning_asset_id": "string",
};

const WS_KNOWN = [
  ...CLOB_BOOK_KNOWN.map((f) => `book.${f}`),
  "price_change.market",
  "price_change.price_changes[].hash",
  "price_change.price_changes[].best_bid",
  "price_change.price_changes[].best_ask",
  "last_trade_price.market",
  "last_trade_price.fee_rate_bps",
  "tick_size_change.market",
  "tick_size_change.old_tick_size",
  "tick_size_change.timestamp",
  "best_bid_ask.market",
  "best_bid_ask.spread",
  "market_resolved.id",
  "market_resolved.winning_outcome",
  "market_resolved.timestamp",
];

/**
 * The public endpoints `crossbook venues check` asks, in order (drift.ts fetches them: markets first,
 * the others with a market picked from its answer).
 */
export const POLYMARKET_ENDPOINTS: readonly EndpointFields[] = [
  {
    id: "markets",
    request: "GET {gamma}/markets/keyset?closed=false&limit=20",
    read: { markets: "array", next_cursor: "string?", ...under("markets[]", GAMMA_MARKET) },
    known: GAMMA_MARKET_KNOWN.map((f) => `markets[].${f}`),
  },
  {
    id: "events",
    request: "GET {gamma}/events/keyset?closed=false&limit=5",
    read: { events: "array", next_cursor: "string?", ...under("events[]", GAMMA_EVENT) },
    known: GAMMA_EVENT_KNOWN.map((f) => `events[].${f}`),
  },
  {
    id: "event",
    request: "GET {gamma}/events/{id}",
    read: GAMMA_EVENT,
    known: GAMMA_EVENT_KNOWN,
  },
  {
    // Tick and neg-risk before every order (adapter.ts `#clobMarketInfo`), fees when Gamma has none
    // (normalize.ts `clobFeeSchedule`).
    id: "clob-market",
    request: "GET {clob}/clob-markets/{condition_id}",
    read: {
      t: "array",
      mts: "number|decimal",
      nr: "boolean?",
      fd: "object?",
      "fd.r": "number|decimal?",
      "fd.e": "number|decimal?",
      "fd.to": "boolean?",
      tbf: "number|decimal?",
    },
    known: ["c", "t[].t", "t[].o", "mbf", "mos", "ao", "r"],
  },
  {
    id: "book",
    request: "GET {clob}/book?token_id={yes token}",
    read: CLOB_BOOK,
    known: CLOB_BOOK_KNOWN,
  },
  {
    id: "history",
    request: "GET {clob}/prices-history?market={yes token}&startTs&endTs (last 24 h)&fidelity=60",
    read: { history: "array", "history[].t": "number", "history[].p": "number|decimal" },
  },
  {
    id: "version",
    request: "GET {clob}/version",
    read: { version: "integer|decimal" },
  },
  {
    id: "ws",
    request: "WS {ws}/market: subscribe both tokens, first message of each event_type until a book",
    read: WS_MESSAGES,
    known: WS_KNOWN,
  },
];
