/**
 * Request and response schemas of `GET /v1/arbitrage` (the scanner, scanner.ts). The arbitrage
 * figures reuse `GET /v1/prices/compare`'s fields (ArbitrageSchema) and names, so one opportunity
 * reads like compare's `arbitrage` of the same pair.
 */
import { type Static, Type } from "typebox";
import { Nullable, PagedEnvelope, StringEnum } from "../http/envelope";
import { VENUE_IDS } from "../venues/model";
import { ArbitrageSchema } from "./schemas";

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

export const ArbitrageQuery = Type.Object(
  {
    min_profit: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1_000_000_000,
        description:
          "Only opportunities whose `profit` (USD, at `size`) is at least this. Default 0: any that pays",
      }),
    ),
    min_edge: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description:
          "Only opportunities whose `avg_edge` (profit per contract, USD) is at least this. Default 0",
      }),
    ),
    venue: Type.Optional(StringEnum(VENUE_IDS, { description: "Only pairs with a market on this venue" })),
    category: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: "Only events of this category (the event's `category` in GET /v1/events; any case)",
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LIMIT,
        default: DEFAULT_LIMIT,
        description: "Most opportunities returned, best first",
      }),
    ),
    min_size: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description:
          "Smallest number of hedged pairs an opportunity must pay at, contracts; default " +
          "ARBITRAGE_MIN_CONTRACTS (10). Either market's own minimum order size applies when larger",
      }),
    ),
  },
  { additionalProperties: false },
);

const Arb = ArbitrageSchema.properties;

const ScanMarket = Type.Object({
  market_id: Type.String(),
  platform: StringEnum(VENUE_IDS),
  title: Type.String(),
  book_timestamp: Type.String({
    description: "The time stamp of the book the figures come from (live feed or REST poll)",
  }),
});

export const OpportunitySchema = Type.Object(
  {
    event: Type.Object({
      id: Type.String({ description: "The cross-venue event (xev_…)" }),
      title: Type.String(),
      category: Nullable(Type.String()),
    }),
    match_id: Arb.match_id,
    relation: Arb.relation,
    polarity: Arb.polarity,
    confidence: Arb.confidence,
    caveats: Arb.caveats,
    markets: Type.Array(ScanMarket, { description: "The pair's market A then market B" }),
    legs: Type.Array(Arb.legs.items, {
      description:
        "The direction: buy both legs (exactly one pays $1 at settlement); cost and fees are at `size`",
    }),
    min_size: Arb.min_size,
    depth: Arb.depth,
    edge_first_contract: Arb.edge_first_contract,
    size: Type.Number({ description: "The most profitable number of pairs of at least min_size" }),
    cost: Type.Number({ description: "Both legs' cost at `size`, before fees (USD)" }),
    fees: Type.Number({ description: "Both venues' taker fees at `size` (USD)" }),
    payout: Type.Number({ description: "What the pairs pay at settlement: $1 each" }),
    profit: Type.Number({ description: "payout - cost - fees: what opportunities are ranked by" }),
    avg_edge: Type.Number({ description: "profit / size: USD per contract" }),
  },
  {
    description:
      "A verified pair that pays after fees: compare's arbitrage of the pair at its best size of at least min_size",
  },
);

export const ScanMeta = Type.Object({
  pairs: Type.Integer({
    description:
      "Verified identity or complement pairs across two venues, both markets open, within venue and category",
  }),
  priced: Type.Integer({
    description: "Of those, pairs with both markets' books at hand (live, or polled at most 30 s ago)",
  }),
  unpriced: Type.Integer({
    description:
      "Pairs without such a book for a market: not priced (its markets are asked of the feed or polled)",
  }),
  total: Type.Integer({ description: "Opportunities passing every filter, before `limit`" }),
  limit: Type.Integer(),
  min_size: Type.Integer({ description: "The min_size asked for (or the default)" }),
  pairs_loaded_at: Type.String({ description: "When the list of verified pairs was last read" }),
});

export const ArbitrageResponse = PagedEnvelope(OpportunitySchema, ScanMeta);

export type Opportunity = Static<typeof OpportunitySchema>;
export type ScanMetaView = Static<typeof ScanMeta>;
