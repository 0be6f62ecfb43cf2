/**
 * Every Kalshi field our normalizers read, per public endpoint, with the JSON type they accept:
 * the list `crossbook venues check` (venues/drift.ts) holds each live answer against. Whoever makes a
 * normalizer read a new field adds it here too: `test/venues/drift-fields.test.ts` runs the
 * normalizers over the fixtures and fails on any field they read that this list lacks.
 *
 * Grammar and types: venues/drift.ts (`a.b` a key, `a[]` every element; `decimal` is a string
 * holding a plain decimal, as "0.4200"; a trailing `?` means absent or null is fine). Required
 * fields are those the SDK marks required and we read, plus those without which a market is
 * skipped. `known` lists fields the venue sends that we do not read, so the check tells them from
 * fields the venue added.
 *
 * Sources: `kalshi-typescript` 3.30.0 `docs/Market.md`, `EventData.md`, `Series.md`,
 * `GetMarketCandlesticksResponse.md`, `MarketCandlestick.md`, `PriceDistribution.md`,
 * `BidAskDistribution.md`, `GetHistoricalCutoffResponse.md`, `OrderbookCountFp.md`; VENUES.md §2.2–§2.4
 * for the WebSocket messages (corrected by VENUES-AUDIT.md); see ./README.md.
 */
import { type EndpointFields, type FieldMap, under } from "../drift";

/** A Market (normalize.ts `normalizeMarket`, `isMveMarket`). */
export const KALSHI_MARKET: FieldMap = {
  ticker: "string",
  event_ticker: "string",
  title: "string",
  status: "string",
  result: "string",
  yes_sub_title: "string",
  no_sub_title: "string",
  rules_primary: "string",
  rules_secondary: "string",
  open_time: "string|number",
  close_time: "string|number",
  updated_time: "string|number",
  yes_bid_dollars: "decimal|number",
  yes_ask_dollars: "decimal|number",
  last_price_dollars: "decimal|number",
  previous_price_dollars: "decimal|number",
  yes_bid_size_fp: "decimal|number",
  yes_ask_size_fp: "decimal|number",
  volume_fp: "decimal|number",
  volume_24h_fp: "decimal|number",
  open_interest_fp: "decimal|number",
  price_level_structure: "string",
  price_ranges: "array",
  "price_ranges[].step": "decimal|number",
  // Deprecated, always "0.0000" (SDK), read as liquidity when present.
  liquidity_dollars: "decimal|number?",
  // Multivariate combo markets are dropped by these.
  mve_collection_ticker: "string?",
  mve_selected_legs: "array?",
};

/** Market fields of SDK 3.30 `Market` we do not read. */
const KALSHI_MARKET_KNOWN = [
  "market_type",
  "subtitle",
  "created_time",
  "expected_expiration_time",
  "expiration_time",
  "latest_expiration_time",
  "settlement_timer_seconds",
  "no_bid_dollars",
  "no_ask_dollars",
  "can_close_early",
  "notional_value_dollars",
  "previous_yes_bid_dollars",
  "previous_yes_ask_dollars",
  "settlement_value_dollars",
  "settlement_ts",
  "expiration_value",
  "occurrence_datetime",
  "fee_waiver_expiration_time",
  "early_close_condition",
  "strike_type",
  "floor_strike",
  "cap_strike",
  "functional_strike",
  "custom_strike",
  "primary_participant_key",
  "is_provisional",
  "exchange_index",
  "price_ranges[].start",
  "price_ranges[].end",
];

/** EventData (normalize.ts `eventInfo`, `normalizeEvent`). */
export const KALSHI_EVENT: FieldMap = {
  event_ticker: "string",
  series_ticker: "string",
  title: "string",
  mutually_exclusive: "boolean",
  settlement_sources: "array",
  "settlement_sources[].name": "string?",
  "settlement_sources[].url": "string?",
  category: "string?",
  strike_date: "string|number?",
  fee_type_override: "string?",
  fee_multiplier_override: "number?",
};

/** EventData fields of SDK 3.30 we do not read. */
const KALSHI_EVENT_KNOWN = [
  "sub_title",
  "collateral_return_type",
  "strike_period",
  "product_metadata",
  "last_updated_ts",
  "exchange_index",
];

/** WebSocket envelope fields every message's parse reads (messages.ts `parseWsMessage`). */
function wsMessage(type: string, required: boolean, msg: FieldMap): FieldMap {
  return {
    [type]: required ? "object" : "object?",
    [`${type}.type`]: "string",
    [`${type}.id`]: "number?",
    [`${type}.sid`]: "number?",
    [`${type}.seq`]: "number?",
    [`${type}.msg`]: "object",
    ...under(`${type}.msg`, msg),
  };
}

/** One side of a book: `[[price, count], …]` strings, best last (VENUES.md §2.3). */
const LEVELS = (path: string): FieldMap => ({
  [path]: "array?",
  [`${path}[]`]: "array",
  [`${path}[][]`]: "decimal",
});

/** Messages of the market-data channels (`orderbook_delta`, `ticker`, `trade`), keyed by `type`. */
export const KALSHI_WS_MESSAGES: FieldMap = {
  ...wsMessage("subscribed", true, { sid: "number", channel: "string" }),
  ...wsMessage("orderbook_snapshot", true, {
    market_ticker: "string",
    ...LEVELS("yes_dollars_fp"),
    ...LEVELS("no_dollars_fp"),
    // The REST names, read (and reported) when a side comes under them instead.
    ...LEVELS("yes_dollars"),
    ...LEVELS("no_dollars"),
  }),
  ...wsMessage("orderbook_delta", false, {
    market_ticker: "string",
    side: "string",
    price_dollars: "decimal|number",
    delta_fp: "decimal|number",
    ts_ms: "number?",
    ts: "string|number?",
  }),
  ...wsMessage("ticker", false, {
    market_ticker: "string",
    yes_bid_dollars: "decimal|number?",
    yes_ask_dollars: "decimal|number?",
    price_dollars: "decimal|number?",
    ts_ms: "number?",
    ts: "string|number?",
  }),
  ...wsMessage("trade", false, {
    market_ticker: "string",
    taker_outcome_side: "string?",
    taker_book_side: "string?",
    taker_side: "string?",
    yes_price_dollars: "decimal|number?",
    no_price_dollars: "decimal|number?",
    count_fp: "decimal|number",
    trade_id: "string?",
    ts_ms: "number?",
    ts: "string|number?",
    created_time: "string|number?",
  }),
  ...wsMessage("error", false, { code: "number?", msg: "string?" }),
};

const KALSHI_WS_KNOWN = [
  "orderbook_snapshot.msg.market_id",
  "orderbook_delta.msg.market_id",
  "orderbook_delta.msg.client_order_id",
  "ticker.msg.market_id",
  "ticker.msg.yes_bid_size_fp",
  "ticker.msg.yes_ask_size_fp",
  "ticker.msg.last_trade_size_fp",
  "ticker.msg.volume_fp",
  "ticker.msg.open_interest_fp",
  "ticker.msg.dollar_volume",
  "ticker.msg.dollar_open_interest",
];

/**
 * The public endpoints `crossbook venues check` asks, in order (drift.ts fetches them: markets first,
 * the others with a market picked from its answer). The WebSocket needs a key (KALSHI_FEED_KEY_ID).
 */
export const KALSHI_ENDPOINTS: readonly EndpointFields[] = [
  {
    id: "markets",
    request: "GET {api}/markets?limit=20&mve_filter=exclude&status=open",
    read: { markets: "array", cursor: "string", ...under("markets[]", KALSHI_MARKET) },
    known: KALSHI_MARKET_KNOWN.map((f) => `markets[].${f}`),
  },
  {
    id: "events",
    request: "GET {api}/events?limit=5&with_nested_markets=true&status=open",
    read: {
      events: "array",
      cursor: "string",
      ...under("events[]", KALSHI_EVENT),
      "events[].markets": "array",
      ...under("events[].markets[]", KALSHI_MARKET),
    },
    known: [
      "milestones",
      ...KALSHI_EVENT_KNOWN.map((f) => `events[].${f}`),
      ...KALSHI_MARKET_KNOWN.map((f) => `events[].markets[].${f}`),
    ],
  },
  {
    id: "event",
    request: "GET {api}/events/{event_ticker}",
    read: { event: "object", ...under("event", KALSHI_EVENT) },
    // The top-level `markets` is deprecated (SDK 3.30 `GetEventResponse`) and not read.
    known: ["markets", "event.markets", ...KALSHI_EVENT_KNOWN.map((f) => `event.${f}`)],
  },
  {
    // Fee type and multiplier of the event's series (adapter.ts `#seriesOf`, normalize.ts `seriesFees`).
    id: "series",
    request: "GET {api}/series/{series_ticker}",
    read: {
      series: "object",
      "series.ticker": "string",
      "series.fee_type": "string",
      "series.fee_multiplier": "number",
    },
    known: [
      "series.frequency",
      "series.title",
      "series.category",
      "series.categories",
      "series.tags",
      "series.settlement_sources",
      "series.contract_url",
      "series.contract_terms_url",
      "series.product_metadata",
      "series.additional_prohibitions",
      "series.volume_fp",
      "series.last_updated_ts",
      "series.exchange_index",
    ],
  },
  {
    id: "book",
    request: "GET {api}/markets/{ticker}/orderbook",
    read: {
      orderbook_fp: "object",
      ...LEVELS("orderbook_fp.yes_dollars"),
      ...LEVELS("orderbook_fp.no_dollars"),
    },
  },
  {
    id: "history",
    request:
      "GET {api}/series/{series}/markets/{ticker}/candlesticks?start_ts&end_ts (last 24 h)&period_interval=60",
    read: {
      ticker: "string?",
      candlesticks: "array",
      "candlesticks[].end_period_ts": "integer",
      "candlesticks[].volume_fp": "decimal|number",
      "candlesticks[].price": "object",
      "candlesticks[].price.open_dollars": "decimal|number?",
      "candlesticks[].price.high_dollars": "decimal|number?",
      "candlesticks[].price.low_dollars": "decimal|number?",
      "candlesticks[].price.close_dollars": "decimal|number?",
      "candlesticks[].price.previous_dollars": "decimal|number?",
      "candlesticks[].yes_bid": "object",
      "candlesticks[].yes_bid.close_dollars": "decimal|number",
      "candlesticks[].yes_ask": "object",
      "candlesticks[].yes_ask.close_dollars": "decimal|number",
    },
    known: [
      "candlesticks[].open_interest_fp",
      "candlesticks[].price.mean_dollars",
      "candlesticks[].price.min_dollars",
      "candlesticks[].price.max_dollars",
      ...["yes_bid", "yes_ask"].flatMap((q) =>
        ["open_dollars", "low_dollars", "high_dollars"].map((f) => `candlesticks[].${q}.${f}`),
      ),
    ],
  },
  {
    id: "cutoff",
    request: "GET {api}/historical/cutoff",
    read: {
      market_settled_ts: "string|number",
      trades_created_ts: "string|number",
      orders_updated_ts: "string|number",
    },
    known: ["market_positions_last_updated_ts"],
  },
  {
    id: "ws",
    request: "WS {ws} (signed): subscribe orderbook_delta, ticker, trade for one market until its snapshot",
    read: KALSHI_WS_MESSAGES,
    known: KALSHI_WS_KNOWN,
  },
];
