import { Type } from "typebox";

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

/** Spec 2.3, with null where nothing is known yet. */
export const PriceEntrySchema = Type.Object({
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
  orderbook: Type.Optional(
    Nullable(
      Type.Object(
        {
          bids: Type.Array(Type.Tuple([Type.Number(), Type.Number()]), {
            description: "[price, size] levels of the YES book, best first",
          }),
          asks: Type.Array(Type.Tuple([Type.Number(), Type.Number()])),
          timestamp: Type.String(),
        },
        { description: "With include_orderbook=true; null when the venue could not be reached" },
      ),
    ),
  ),
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
