import { Type } from "typebox";
import { ENVIRONMENTS } from "../access/permissions";
import { MarketTitle } from "../catalog/schemas";
import { PageMeta, StringEnum } from "../http/envelope";

const Timestamp = Type.String({ format: "date-time" });
const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const POSITION_STATUSES = ["open", "closed", "resolved"] as const;

export const RECONCILIATION_STATUSES = [
  "match",
  "mismatch",
  "venue_only",
  "unavailable",
  "not_linked",
] as const;

export const ReconciliationSchema = Type.Object(
  {
    status: StringEnum(RECONCILIATION_STATUSES, {
      description:
        "match: the venue holds what crossbook shows; mismatch: it holds another size (reported, not corrected); " +
        "venue_only: held at the venue, not through crossbook; unavailable: the venue could not be read " +
        "(crossbook's own figures are shown); not_linked: no linked account for the market's venue",
    }),
    venue_size: NullableNumber(
      "Contracts of this outcome the venue holds for the linked account; null when unknown. On Kalshi, which nets YES against NO in a market, crossbook's YES and NO are netted before comparing",
    ),
    venue_average_price: NullableNumber("The venue's own average entry price, when it reports one"),
    checked_at: Type.Union([Timestamp, Type.Null()], {
      description: "When the venue's positions were read (kept up to VENUE_POSITIONS_MAX_AGE_SECONDS)",
    }),
  },
  { description: "Live keys, open positions: the venue's holding beside crossbook's" },
);

export const PositionSchema = Type.Object({
  id: Type.String({ description: "pos_… (crossbook) or vpos_… (held at the venue only)" }),
  market_id: Type.String(),
  market_title: MarketTitle,
  platform: Type.String(),
  source: StringEnum(["crossbook", "venue"] as const, {
    description:
      "crossbook: a position crossbook keeps (orders placed through it); venue: held by the linked venue account " +
      "outside crossbook (live keys), sellable through crossbook",
  }),
  outcome: StringEnum(["yes", "no"] as const),
  status: StringEnum(POSITION_STATUSES, {
    description:
      "open: contracts held; closed: all sold (kept for its realized PnL); resolved: settled at the market's resolution",
  }),
  size: Type.Number({ description: "Contracts held" }),
  reserved: Type.Number({ description: "Contracts promised to open sell orders" }),
  unknown_cost_size: Type.Number({
    description:
      "Contracts (within size) bought outside crossbook, whose cost crossbook does not know; cost_basis, " +
      "average_price, unrealized_pnl and realized_pnl cover the others",
  }),
  average_price: NullableNumber(
    "Cost basis / contracts of known cost; null when nothing of known cost is held (see reconciliation.venue_average_price)",
  ),
  cost_basis: Type.Number({ description: "What the contracts of known cost held cost, fees excluded" }),
  current_price: NullableNumber(
    "The outcome's mark: the market's price for YES, 1 − it for NO; null without a quote",
  ),
  market_value: NullableNumber("size × current_price"),
  unrealized_pnl: NullableNumber(
    "market_value − cost_basis, over the contracts of known cost; null when none has a known cost",
  ),
  realized_pnl: Type.Number({
    description: "Sold or settled for, minus what those contracts cost; fees excluded",
  }),
  fees: Type.Number({ description: "Fees paid on this position's fills" }),
  resolution: Type.Union([StringEnum(["yes", "no", "void"] as const), Type.Null()]),
  payout: NullableNumber("Paid at resolution (1 per winning contract; cost back when void)"),
  redeemable: Type.Boolean({ description: "A settled position whose payout is > 0" }),
  environment: StringEnum(ENVIRONMENTS),
  opened_at: Type.Union([Timestamp, Type.Null()], {
    description: "null for a venue-held position (the venue does not say)",
  }),
  updated_at: Timestamp,
  closed_at: Type.Union([Timestamp, Type.Null()]),
  resolved_at: Type.Union([Timestamp, Type.Null()]),
  reconciliation: Type.Union([ReconciliationSchema, Type.Null()]),
});

export const VenueReadSchema = Type.Object({
  venue: Type.String(),
  status: StringEnum(["ok", "unavailable"] as const),
  reason: Type.Union([Type.String(), Type.Null()], {
    description: "Why unavailable: the venue error kind (unavailable, timeout, rate_limited, auth_failed…)",
  }),
  checked_at: Type.Union([Timestamp, Type.Null()], {
    description: "When the venue's positions were last read successfully",
  }),
});

export const PositionListMeta = Type.Object({
  ...PageMeta.properties,
  venues: Type.Optional(
    Type.Array(VenueReadSchema, {
      description: "Live keys: how each linked venue's positions were read for this answer",
    }),
  ),
});

export const PositionListQuery = Type.Object(
  {
    status: Type.Optional(StringEnum([...POSITION_STATUSES, "all"] as const, { default: "open" })),
    market_id: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    outcome: Type.Optional(StringEnum(["yes", "no"] as const)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
  },
  { additionalProperties: false },
);

export const PositionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const BalanceSchema = Type.Object({
  environment: StringEnum(ENVIRONMENTS),
  currency: Type.String(),
  available: Type.Number({ description: "Free to use for new orders or withdrawals" }),
  locked: Type.Number({ description: "Held back by open buy orders (cost plus the largest possible fee)" }),
  positions_cost: Type.Number({ description: "Open positions at cost" }),
  total: Type.Number({ description: "available + locked + positions_cost" }),
  deposits: Type.Number(),
  withdrawals: Type.Number(),
  fees: Type.Number({ description: "Fees paid, all time" }),
  realized_pnl: Type.Number({ description: "Realized PnL before fees, all time" }),
  updated_at: Type.Union([Timestamp, Type.Null()]),
});
