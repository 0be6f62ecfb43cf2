import { Type } from "typebox";
import { Nullable, PageMeta, StringEnum } from "../http/envelope";
import { VENUE_IDS } from "../venues/model";

/** Beside `market_id` on orders, fills and positions: an extension of the spec's fields. */
export const MarketTitle = Nullable(
  Type.String({
    description: "The market's title as the catalog has it; null when the catalog does not know it",
  }),
);

const Outcome = Type.Object({
  label: Type.String(),
  token_id: Type.String({ description: "Venue token id (Polymarket) or side name (Kalshi)" }),
});

/** A market's fee schedule (@crossbook/fees `FeesView`). */
export const MarketFeesSchema = Type.Object(
  {
    model: StringEnum(["polymarket", "kalshi"] as const, {
      description: "Whose rounding (and cap) applies: Polymarket's or Kalshi's",
    }),
    rate: Type.Number({
      description: "A taker fill of C contracts at price P pays C × rate × (P × (1 − P))^exponent",
    }),
    exponent: Type.Number(),
    taker_only: Type.Boolean({ description: "Makers pay nothing" }),
    maker_rate: Type.Number({ description: "The makers' coefficient on the same curve (0 when taker_only)" }),
    fee_type: Nullable(
      Type.String({
        description:
          "Kalshi: the series' fee type (quadratic, quadratic_with_maker_fees, quadratic_with_combo_maker_fees, " +
          "flat), an event override applied; Polymarket: null",
      }),
    ),
    multiplier: Nullable(Type.Number({ description: "Kalshi: the fee multiplier (1: the general 0.07)" })),
    cap_bps: Nullable(
      Type.Number({
        description:
          "Polymarket: takerBaseFee, a cap: a fill pays at most cap_bps / 10,000 × min(P, 1 − P) × C",
      }),
    ),
  },
  {
    description:
      "The market's fee schedule; null when the venue has not said (the venue's default is charged, see the README)",
  },
);

export const MarketSchema = Type.Object({
  id: Type.String({ description: "polymarket:<conditionId> or kalshi:<ticker>" }),
  venue: StringEnum(VENUE_IDS),
  venue_market_id: Type.String(),
  event_id: Nullable(Type.String()),
  title: Type.String(),
  question: Type.String(),
  rules: Nullable(Type.String({ description: "Resolution rules as the venue states them" })),
  settlement_source: Nullable(Type.String()),
  outcomes: Type.Object({ yes: Outcome, no: Outcome }),
  status: StringEnum(["open", "closed", "resolved"] as const),
  resolution: Nullable(StringEnum(["yes", "no", "void"] as const)),
  open_time: Nullable(Type.String()),
  close_time: Nullable(Type.String()),
  tick_size: Type.Number(),
  min_size: Type.Number(),
  volume: Type.Number(),
  volume_24h: Type.Number(),
  liquidity: Type.Number(),
  url: Nullable(Type.String()),
  last_price: Nullable(Type.Number({ description: "Latest YES price as last seen (0-1)" })),
  best_bid: Nullable(Type.Number()),
  best_ask: Nullable(Type.Number()),
  fees: Nullable(MarketFeesSchema),
  updated_at: Type.String(),
});

/** A market with `fields=`: the named properties only. */
export const MarketFieldsSchema = Type.Partial(MarketSchema, {
  description:
    "A market as `fields=` asked for it: only the named properties, in the order of the full market",
});

/** What `GET /v1/markets` lists: full markets, or with `fields=` the named properties of each. */
export const MarketListItem = Type.Union([MarketSchema, MarketFieldsSchema]);

const FieldsParam = Type.String({
  maxLength: 500,
  description:
    "Comma-separated market properties to return, e.g. `id,title,status,best_bid,best_ask,last_price` " +
    "(a light listing without the rules text); an unknown name is a 400. Absent: every property",
});

export const MarketListQuery = Type.Object(
  {
    venue: Type.Optional(StringEnum(VENUE_IDS)),
    status: Type.Optional(StringEnum(["open", "closed", "resolved", "all"] as const, { default: "open" })),
    event_id: Type.Optional(Type.String({ maxLength: 200 })),
    q: Type.Optional(
      Type.String({ maxLength: 200, description: "Words that must all appear in the title or question" }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
    fields: Type.Optional(FieldsParam),
  },
  { additionalProperties: false },
);

export const MarketParams = Type.Object({ market_id: Type.String({ minLength: 1, maxLength: 300 }) });

export const MarketQuery = Type.Object({ fields: Type.Optional(FieldsParam) });

export const VenueSchema = Type.Object({
  id: StringEnum(VENUE_IDS),
  name: Type.String(),
  capabilities: Type.Object({
    events: Type.Boolean(),
    order_book: Type.Boolean(),
    price_history: Type.Boolean(),
    candles: Type.Array(Type.String()),
    feed: Type.Boolean(),
    trading: Type.Boolean(),
    order_types: Type.Array(Type.String()),
    time_in_force: Type.Array(Type.String()),
    native_no_book: Type.Boolean(),
  }),
  urls: Type.Object({
    production: Type.Record(Type.String(), Type.String()),
    sandbox: Nullable(Type.Record(Type.String(), Type.String())),
    in_use: Type.Record(Type.String(), Type.String()),
  }),
  rate_limits: Type.Object({
    read: Type.Object({ requests: Type.Integer(), window_ms: Type.Integer() }),
    trade: Type.Object({ requests: Type.Integer(), window_ms: Type.Integer() }),
  }),
  fees: Type.Object({
    model: StringEnum(["polymarket", "kalshi"] as const),
    description: Type.String({
      description: "How the venue charges; each market's `fees` gives its schedule",
    }),
  }),
  health: Type.Object({
    status: StringEnum(["pending", "ok", "degraded", "unreachable"] as const),
    last_successful_sync_at: Nullable(Type.String()),
    last_sync_markets: Nullable(Type.Integer()),
    last_sync_duration_ms: Nullable(Type.Integer()),
    feed_connected: Type.Boolean(),
    feed_disabled_reason: Nullable(Type.String()),
    last_error: Nullable(Type.String()),
    last_error_at: Nullable(Type.String()),
    consecutive_failures: Type.Integer(),
    next_sync_at: Nullable(Type.String()),
  }),
});

export { PageMeta };
