import { Type } from "typebox";
import { ENVIRONMENTS } from "../access/permissions";
import { MarketTitle } from "../catalog/schemas";
import { Nullable, StringEnum } from "../http/envelope";
import { ORDER_STATUSES } from "../ledger/orders-repo";

const Timestamp = Type.String({ format: "date-time" });
const Side = StringEnum(["buy", "sell"] as const);
const Outcome = StringEnum(["yes", "no"] as const, {
  description: "The outcome bought or sold; default yes",
});
const TimeInForce = StringEnum(["GTC", "GTD", "IOC", "FOK"] as const);

export const PlaceOrderBody = Type.Object(
  {
    market_id: Type.String({ minLength: 1, maxLength: 300, description: "e.g. kalshi:FED-26DEC-T4.00" }),
    side: Side,
    outcome: Type.Optional(Outcome),
    type: Type.Optional(StringEnum(["limit", "market"] as const, { description: "Default limit" })),
    price: Type.Optional(
      Type.Number({
        description:
          "Limit price of the outcome, strictly between 0 and 1, on the market's tick. Required for limit " +
          "orders. On a market order it is an extra bound the fill price never passes",
      }),
    ),
    amount: Type.Number({ description: "Contracts, at most 2 decimals, at least the market's minimum size" }),
    max_slippage: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description:
          "Market orders only: how far (a fraction of the best price, 0.02 = 2 %) the fill price may move " +
          "from the best level. Default 0.05",
      }),
    ),
    time_in_force: Type.Optional(TimeInForce),
    expires_at: Type.Optional(
      Type.String({ description: "ISO 8601; required with GTD and only used with it" }),
    ),
    client_order_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: "^[A-Za-z0-9._:-]+$",
        description: "Your id for the order; also an idempotency key when no Idempotency-Key header is sent",
      }),
    ),
  },
  { additionalProperties: false },
);

const OrderBase = {
  id: Type.String({ description: "ord_…" }),
  market_id: Type.String(),
  market_title: MarketTitle,
  platform: Type.String({ description: "The venue: polymarket or kalshi" }),
  side: Side,
  outcome: Outcome,
  type: StringEnum(["limit", "market"] as const),
  time_in_force: TimeInForce,
  status: StringEnum(ORDER_STATUSES, {
    description:
      "open (resting; partly filled orders stay open), pending (sent to the venue, not yet acknowledged), filled, cancelled",
  }),
  amount: Type.Number(),
  price: Type.Number({ description: "Limit price; for a market order the worst price it accepted" }),
  filled_amount: Type.Number(),
  client_order_id: Nullable(Type.String()),
  expires_at: Nullable(Timestamp),
  created_at: Timestamp,
};

/** List form: spec 2.2 omits average_fill_price, fees and updated_at. */
export const OrderListItem = Type.Object(OrderBase);

/** Full form (spec 2.2, plus our extras). */
export const OrderSchema = Type.Object({
  ...OrderBase,
  average_fill_price: Nullable(Type.Number({ description: "null when nothing is filled" })),
  fees: Type.Number(),
  position_id: Type.String({ description: "The position this order's fills go to" }),
  cancel_reason: Nullable(
    Type.String({
      description:
        "user, bulk_cancel, expired, unfilled_ioc, unfilled_fok, market_closed, market_resolved, venue",
    }),
  ),
  environment: StringEnum(ENVIRONMENTS),
  requested_amount: Nullable(
    Type.Number({
      description:
        "Live: the amount asked for when the venue's amount precision made crossbook place less (then " +
        "`amount` is what was placed); null otherwise",
    }),
  ),
  amount_note: Nullable(
    Type.String({ description: "Why `amount` differs from `requested_amount`; null when it does not" }),
  ),
  updated_at: Timestamp,
});

/** Cancel response: exactly spec 4.1. */
export const CancelledOrderSchema = Type.Object({
  id: Type.String(),
  market_id: Type.String(),
  status: Type.Literal("cancelled"),
  amount: Type.Number(),
  filled_amount: Type.Number(),
  cancelled_at: Timestamp,
});

export const BulkCancelSchema = Type.Object({
  cancelled_count: Type.Integer(),
  cancelled_orders: Type.Array(Type.Object({ id: Type.String(), market_id: Type.String() })),
});

export const OrderListQuery = Type.Object(
  {
    status: Type.Optional(StringEnum([...ORDER_STATUSES, "all"] as const, { default: "open" })),
    market_id: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    side: Type.Optional(Side),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
  },
  { additionalProperties: false },
);

export const BulkCancelQuery = Type.Object(
  {
    market_id: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    side: Type.Optional(Side),
  },
  { additionalProperties: false },
);

export const OrderParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const RefreshQuery = Type.Object(
  {
    refresh: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "true: bring the order up to date where it executes first. Live: its venue is asked now (one or two reads of your venue rate limit) instead of at the next poll, within 5 s; a venue that cannot be asked is a 503 and nothing changes. Sandbox: no difference (fills are written as they happen).",
      }),
    ),
  },
  { additionalProperties: false },
);

export const REFRESH_DESCRIPTION =
  "A live order's fills and state reach crossbook from its venue within about 5 s (the poller); `refresh=true` asks the venue now.";

export const FillSchema = Type.Object({
  id: Type.String({ description: "fil_…" }),
  order_id: Type.String(),
  market_id: Type.String(),
  market_title: MarketTitle,
  side: Side,
  outcome: Outcome,
  price: Type.Number(),
  size: Type.Number(),
  fee: Type.Number(),
  liquidity: StringEnum(["taker", "maker"] as const, {
    description: "taker: took a real book level at placement; maker: a real trade reached the resting order",
  }),
  cause: Type.Object(
    {},
    { additionalProperties: true, description: "The real book level or trade behind the fill" },
  ),
  created_at: Timestamp,
});

/** `GET /v1/fills` pages: the orders list's limits (spec 8). */
export const DEFAULT_FILLS_LIMIT = 50;
export const MAX_FILLS_LIMIT = 100;

export const FillListQuery = Type.Object(
  {
    market_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 300, description: "Only this market's fills" }),
    ),
    order_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: "Only this order's fills (none when it is not one of the key's orders)",
      }),
    ),
    since: Type.Optional(
      Type.String({
        format: "date-time",
        maxLength: 40,
        description: "ISO 8601 date-time with a zone: only fills recorded at or after it",
      }),
    ),
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          "A fill's id (fil_…) from an earlier answer, usually meta.next_after: the fills after it",
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_FILLS_LIMIT, default: DEFAULT_FILLS_LIMIT }),
    ),
  },
  { additionalProperties: false },
);

export const FillListMeta = Type.Object({
  next_after: Nullable(
    Type.String({
      description:
        "Pass as `after` for the next page: the last fill's id, or the `after` given when no fill came (null: none yet)",
    }),
  ),
  has_more: Type.Boolean({ description: "More fills match right now" }),
});

export const IdempotencyHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: "Retries with the same key and body return the first response (24 h)",
    }),
  ),
});
