import { Type } from "typebox";
import { PageMeta, StringEnum } from "../http/envelope";
import { VENUE_IDS } from "../venues/model";

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);
const Outcome = Type.Object({
  label: Type.String(),
  token_id: Type.String({ description: "Venue token id (Polymarket) or side name (Kalshi)" }),
});

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
  updated_at: Type.String(),
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
  },
  { additionalProperties: false },
);

export const MarketParams = Type.Object({ market_id: Type.String({ minLength: 1, maxLength: 300 }) });

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
  fees: Type.Object({ model: Type.String(), description: Type.String() }),
  health: Type.Object({
    status: StringEnum(["pending", "ok", "degraded", "unreachable"] as const),
    last_successful_sync_at: Nullable(Type.String()),
    last_sync_markets: Nullable(Type.Integer()),
    last_sync_duration_ms: Nullable(Type.Integer()),
    feed_connected: Type.Boolean(),
    last_error: Nullable(Type.String()),
    last_error_at: Nullable(Type.String()),
    consecutive_failures: Type.Integer(),
    next_sync_at: Nullable(Type.String()),
  }),
});

export { PageMeta };
