import { Type } from "typebox";
import { ENVIRONMENTS } from "../apikeys/permissions";
import { StringEnum } from "../http/envelope";

const Timestamp = Type.String({ format: "date-time" });
const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const POSITION_STATUSES = ["open", "closed", "resolved"] as const;

export const PositionSchema = Type.Object({
  id: Type.String({ description: "pos_…" }),
  market_id: Type.String(),
  platform: Type.String(),
  outcome: StringEnum(["yes", "no"] as const),
  status: StringEnum(POSITION_STATUSES, {
    description:
      "open: contracts held; closed: all sold (kept for its realized PnL); resolved: settled at the market's resolution",
  }),
  size: Type.Number({ description: "Contracts held" }),
  reserved: Type.Number({ description: "Contracts promised to open sell orders" }),
  average_price: NullableNumber("Cost basis / size; null when nothing is held"),
  cost_basis: Type.Number({ description: "What the contracts held cost, fees excluded" }),
  current_price: NullableNumber(
    "The outcome's mark: the market's price for YES, 1 − it for NO; null without a quote",
  ),
  market_value: NullableNumber("size × current_price"),
  unrealized_pnl: NullableNumber("market_value − cost_basis"),
  realized_pnl: Type.Number({
    description: "Sold or settled for, minus what those contracts cost; fees excluded",
  }),
  fees: Type.Number({ description: "Fees paid on this position's fills" }),
  resolution: Type.Union([StringEnum(["yes", "no", "void"] as const), Type.Null()]),
  payout: NullableNumber("Paid at resolution (1 per winning contract; cost back when void)"),
  redeemable: Type.Boolean({ description: "A settled position whose payout is > 0" }),
  environment: StringEnum(ENVIRONMENTS),
  opened_at: Timestamp,
  updated_at: Timestamp,
  closed_at: Type.Union([Timestamp, Type.Null()]),
  resolved_at: Type.Union([Timestamp, Type.Null()]),
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
