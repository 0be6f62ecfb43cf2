import { Type } from "typebox";
import { ENVIRONMENTS } from "../access/permissions";
import { PageMeta, StringEnum } from "../http/envelope";
import { CONDITIONS } from "./triggers";

export const ALERT_STATUSES = ["active", "triggered"] as const;

const Timestamp = Type.String({ format: "date-time" });

export const AlertSchema = Type.Object({
  id: Type.String({ description: "alt_…" }),
  market_id: Type.String(),
  condition: StringEnum(CONDITIONS),
  threshold: Type.Number({
    description: "A price (0-1) for price_* conditions; percent (5 = 5 %) for change_pct_24h_*",
  }),
  repeat: Type.Boolean({ description: "Re-arms after the value crosses back, and can fire again" }),
  status: StringEnum(ALERT_STATUSES, {
    description: "active: watching; triggered: a one-shot alert that fired (it never fires again)",
  }),
  armed: Type.Boolean({
    description: "Fires on the next update that meets the condition; false after firing until re-armed",
  }),
  trigger_count: Type.Integer({ minimum: 0 }),
  last_triggered_at: Type.Union([Timestamp, Type.Null()]),
  environment: StringEnum(ENVIRONMENTS, { description: "The environment of the key that created it" }),
  created_at: Timestamp,
});

export const CreateAlertBody = Type.Object(
  {
    market_id: Type.String({ minLength: 1, maxLength: 300 }),
    condition: StringEnum(CONDITIONS),
    threshold: Type.Number({
      description:
        "price_above/price_below: a price strictly between 0 and 1. change_pct_24h_above/below: the " +
        "24-hour change in percent (5 = +5 %, -10 = -10 %), strictly between -100 and 10000. Rounded to six decimals.",
    }),
    repeat: Type.Optional(
      Type.Boolean({
        default: false,
        description: "false: fire once, then the alert is triggered for good. true: re-arm on crossing back",
      }),
    ),
  },
  { additionalProperties: false },
);

export const AlertListQuery = Type.Object(
  {
    market_id: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    status: Type.Optional(StringEnum(ALERT_STATUSES)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
  },
  { additionalProperties: false },
);

export const AlertParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export { PageMeta };
