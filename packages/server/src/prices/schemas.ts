/**
 * The prices routes' query and response schemas: the one declaration of these shapes, which the
 * serializer, the request validation and the OpenAPI document are built from. The bus's
 * QuoteUpdate and the stream's price_update reuse the entry's quote fields from here.
 */
import { Type } from "typebox";
import { Envelope, Nullable, StringEnum } from "../http/envelope";
import { VENUE_IDS } from "../venues/model";

/**
 * A `[price, size]` book level. TypeBox's Tuple emits the draft-07 form (`items` as an array), which
 * OpenAPI 3.1 (JSON Schema 2020-12) does not allow; this is the 2020-12 form. The redundant `items`
 * is what fast-json-stringify, which does not read `prefixItems`, serializes each number with.
 */
const BookLevel = Type.Unsafe<[number, number]>({
  type: "array",
  prefixItems: [Type.Number(), Type.Number()],
  items: Type.Number(),
  minItems: 2,
  maxItems: 2,
});

/**
 * Spec 2.3's price entry, with null where nothing is known yet: what the prices service computes
 * for a market (its `PriceEntry` type), without the optional book.
 */
export const PriceEntryFields = Type.Object({
  price: Nullable(
    Type.Number({ description: "Midpoint of best bid and ask when both exist, else the last trade (0-1)" }),
  ),
  best_bid: Nullable(Type.Number({ description: "Best YES bid (0-1)" })),
  best_ask: Nullable(Type.Number({ description: "Best YES ask (0-1)" })),
  spread: Nullable(Type.Number({ description: "best_ask - best_bid" })),
  change_24h: Nullable(Type.Number({ description: "price - the price 24 hours ago" })),
  change_pct_24h: Nullable(
    Type.Number({ description: "change_24h as a percentage of the price 24 hours ago" }),
  ),
  volume_24h: Type.Number({ description: "Contracts traded in the last 24 hours" }),
  last_trade: Nullable(Type.String({ description: "When the last trade crossbook saw happened" })),
  updated_at: Type.String({ description: "When this quote last changed" }),
});

/** One market's entry in GET /v1/prices: the fields above, and its book when asked for. */
export const PriceEntrySchema = Type.Object({
  ...PriceEntryFields.properties,
  orderbook: Type.Optional(
    Nullable(
      Type.Object(
        {
          bids: Type.Array(BookLevel, {
            description: "[price, size] levels of the YES book, best first",
          }),
          asks: Type.Array(BookLevel),
          timestamp: Type.String(),
        },
        { description: "With include_orderbook=true; null when the venue could not be reached" },
      ),
    ),
  ),
});

/**
 * One quote change as it travels on the bus (`prices.quote`) and, with `type` and `seq`, out to
 * stream clients as `price_update` (stream/schemas.ts). Its quote fields are the REST entry's.
 */
export const QuoteUpdateSchema = Type.Object({
  market_id: Type.String(),
  price: PriceEntryFields.properties.price,
  best_bid: PriceEntryFields.properties.best_bid,
  best_ask: PriceEntryFields.properties.best_ask,
  volume_24h: PriceEntryFields.properties.volume_24h,
  timestamp: Type.String({ description: "When crossbook ingested the change (ISO 8601, ms)" }),
});

export const MAX_MARKETS_PER_REQUEST = 100;
export const MAX_MARKET_IDS_LENGTH = 40_000;

export const PricesQuery = Type.Object(
  {
    // No minLength/maxLength here: Ajv counts characters one by one on every request; the route
    // checks the length itself.
    market_ids: Type.String({
      description: `Comma-separated market ids, at most ${MAX_MARKETS_PER_REQUEST} (and ${MAX_MARKET_IDS_LENGTH} characters)`,
    }),
    include_orderbook: Type.Optional(Type.Boolean({ default: false })),
    depth: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, default: 10, description: "Book levels per side" }),
    ),
  },
  { additionalProperties: false },
);

export const PricesResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Record(Type.String(), PriceEntrySchema, { description: "Keyed by market id" }),
  timestamp: Type.String(),
});

// --- GET /v1/prices/compare (spec 2.5) --------------------------------------------------------------

export const CompareQuery = Type.Object(
  {
    event_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 300,
        description: "A cross-venue event id (GET /v1/events), or a market id: the event it belongs to",
      }),
    ),
    market_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 300, description: "Alias of event_id, for a market id" }),
    ),
  },
  { additionalProperties: false },
);

const Platform = StringEnum(VENUE_IDS);
const OutcomeEnum = StringEnum(["yes", "no"] as const);

export const ComparePlatformSchema = Type.Object({
  market_id: Type.String(),
  yes_price: Nullable(
    Type.Number({ description: "The market's current YES price, as GET /v1/prices shows it (0-1)" }),
  ),
  no_price: Nullable(
    Type.Number({
      description: "Midpoint of the NO book's best bid and ask when both exist, else 1 - yes_price",
    }),
  ),
  volume_24h: Type.Number({ description: "Contracts traded in the last 24 hours, as GET /v1/prices" }),
  liquidity: Type.Number({
    description:
      "USD resting in the 10 best levels of each side of the YES book (price x size); the venue's own " +
      "figure from the catalog when the book cannot be had (liquidity_source)",
  }),
  title: Type.String(),
  status: Type.String({ description: "open | closed | resolved" }),
  best_bid: Nullable(Type.Number({ description: "Best YES bid (0-1)" })),
  best_ask: Nullable(Type.Number({ description: "Best YES ask (0-1)" })),
  event_yes_outcome: StringEnum(["yes", "no"] as const, {
    description:
      "Which of this market's outcomes is the YES of spread_analysis (reference_market_id's YES): no on " +
      "the other side of a complement pair",
  }),
  liquidity_source: StringEnum(["book", "catalog"] as const),
  book_timestamp: Nullable(Type.String({ description: "When the book used was taken; null without one" })),
});

const LegSchema = Type.Object({
  platform: Platform,
  market_id: Type.String(),
  outcome: OutcomeEnum,
  best_ask: Nullable(Type.Number({ description: "Cheapest ask of this outcome" })),
  cost: Type.Number({ description: "USD this leg costs at `size`, before fees" }),
  fees: Type.Number({ description: "The venue's taker fees on this leg at `size`" }),
});

export const ArbitrageSchema = Type.Object(
  {
    match_id: Type.String(),
    relation: StringEnum(["identity", "complement"] as const),
    polarity: StringEnum(["same", "inverted"] as const),
    status: StringEnum(["candidate", "verified"] as const, {
      description: "Only a verified pair can be an arbitrage_opportunity",
    }),
    confidence: Type.Number(),
    caveats: Type.Array(Type.String(), {
      description:
        "The pair's edge-clause differences: a settlement-strict arbitrage skips a pair that has any",
    }),
    min_size: Type.Number({
      description:
        "Contracts an opportunity must reach: ARBITRAGE_MIN_CONTRACTS or either venue's minimum order size",
    }),
    legs: Type.Array(LegSchema, { description: "Buy both: exactly one of them pays $1 at settlement" }),
    depth: Type.Number({ description: "Pairs both books can fill, whole contracts" }),
    edge_first_contract: Nullable(
      Type.Number({ description: "$1 - both best asks - both fees, for one contract (USD)" }),
    ),
    size: Type.Number({ description: "The most profitable number of pairs (0 when none pays)" }),
    cost: Type.Number({ description: "Both legs' cost at `size`, before fees (USD)" }),
    fees: Type.Number({ description: "Both venues' taker fees at `size` (USD)" }),
    payout: Type.Number({ description: "What the pairs pay at settlement: $1 each" }),
    profit: Type.Number({ description: "payout - cost - fees" }),
    avg_edge: Nullable(Type.Number({ description: "profit / size: USD per contract" })),
    best_at_min_size: Nullable(
      Type.Object(
        { size: Type.Number(), profit: Type.Number(), avg_edge: Type.Number() },
        { description: "The most profitable size of at least min_size; null when the books hold less" },
      ),
    ),
    levels: Type.Array(
      Type.Object({
        prices: Type.Array(Type.Number(), { description: "The two legs' ask prices on this stretch" }),
        size: Type.Number(),
        cumulative_size: Type.Number(),
        gross_edge: Type.Number({ description: "1 - both prices: per pair, before fees" }),
        fees: Type.Number(),
        profit: Type.Number({ description: "What this stretch adds to profit, after fees" }),
        cumulative_profit: Type.Number(),
      }),
      { description: "The walk through both books, one row per stretch where both legs keep their level" },
    ),
    more_levels: Type.Boolean(),
    other_direction: Type.Object({
      legs: Type.Array(Type.Object({ platform: Platform, market_id: Type.String(), outcome: OutcomeEnum })),
      edge_first_contract: Nullable(Type.Number()),
      size: Type.Number(),
      profit: Type.Number(),
    }),
  },
  { description: "The better direction of the compared pair, from both books' depth after fees" },
);

export const PairSchema = Type.Object({
  match_id: Type.String(),
  market_a: Type.String(),
  market_b: Type.String(),
  relation: Type.String({ description: "market_a is <relation> of market_b" }),
  polarity: Type.String(),
  status: Type.String(),
  confidence: Type.Number(),
  caveats: Type.Array(Type.String(), {
    description:
      "Edge-clause differences (tie, cancellation or postponement handling, close instant, a source or trigger named on one side only); empty when none",
  }),
  selected: Type.Boolean({ description: "The pair whose markets are compared" }),
});

export const ComparisonSchema = Type.Object({
  event_id: Type.String({ description: "The cross-venue event id; the market id for an unmatched market" }),
  title: Type.String(),
  platforms: Type.Record(Type.String(), ComparePlatformSchema, {
    description: "Keyed by platform name (polymarket, kalshi)",
  }),
  spread_analysis: Type.Object({
    yes_spread: Nullable(
      Type.Number({ description: "Highest minus lowest YES price over the platforms; null with one" }),
    ),
    yes_spread_pct: Nullable(Type.Number({ description: "yes_spread as a percentage of the lower price" })),
    best_yes_buy: Nullable(Type.String({ description: "Platform where the event's YES is cheapest to buy" })),
    best_yes_sell: Nullable(Type.String({ description: "Platform where the event's YES sells highest" })),
    arbitrage_opportunity: Type.Boolean({
      description: "A verified identity or complement pair pays after fees at min_size contracts or more",
    }),
  }),
  reference_market_id: Type.String({ description: "The market whose YES spread_analysis means" }),
  arbitrage: Nullable(ArbitrageSchema),
  arbitrage_reason: Nullable(
    Type.Object({
      code: StringEnum([
        "no_cross_event",
        "no_pair",
        "relation_not_arbitrageable",
        "polarity_mismatch",
        "book_unavailable",
        "no_edge",
        "below_min_size",
        "pair_not_verified",
      ] as const),
      message: Type.String(),
    }),
  ),
  pairs: Type.Array(PairSchema, { description: "Every pair of the event" }),
});

export const CompareResponse = Envelope(ComparisonSchema);
