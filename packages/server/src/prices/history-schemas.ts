/** Request and response schemas of `GET /v1/prices/history` (spec 2.4, 4.2). */
import { Type } from "typebox";
import { Nullable, PagedEnvelope, StringEnum } from "../http/envelope";
import { INTERVALS } from "./candles";

export const DEFAULT_INTERVAL = "1h";
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1_000;

const ISO_EXAMPLE = "2026-11-22T12:00:00Z";

export const HistoryQuerySchema = Type.Object(
  {
    market_id: Type.String({
      minLength: 1,
      maxLength: 300,
      description: "polymarket:<conditionId> or kalshi:<ticker>",
    }),
    interval: Type.Optional(
      StringEnum(INTERVALS, {
        default: DEFAULT_INTERVAL,
        description: "Candle length; periods are aligned in UTC, weeks start on Monday 00:00 UTC",
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LIMIT,
        default: DEFAULT_LIMIT,
        description: "Most candles returned",
      }),
    ),
    start: Type.Optional(
      Type.String({
        maxLength: 40,
        description: `ISO 8601 (${ISO_EXAMPLE}); candles starting at or after it, the first \`limit\` of them`,
      }),
    ),
    end: Type.Optional(
      Type.String({
        maxLength: 40,
        description: `ISO 8601; candles starting before it. Default: the end of the period under way`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const CandleSchema = Type.Object({
  timestamp: Type.String({ description: "Start of the period, ISO 8601 UTC" }),
  open: Type.Number({ description: "YES price, 0-1" }),
  high: Type.Number(),
  low: Type.Number(),
  close: Type.Number(),
  volume: Type.Number({ description: "Contracts traded in the period (0 where the venue gives none)" }),
});

export const COVERAGE_REASONS = [
  "venue_unavailable",
  "coarser_at_venue",
  "no_venue_data",
  "before_market_open",
] as const;

export const CoverageSchema = Type.Object(
  {
    from: Nullable(
      Type.String({ description: "Start of the first candle returned (ISO 8601); null when there is none" }),
    ),
    to: Nullable(
      Type.String({ description: "End of the last candle returned (ISO 8601); null when there is none" }),
    ),
    resolution: Type.String({
      description:
        "Spacing of the prices behind the candles: the interval asked, or the venue's coarser spacing (e.g. 12h)",
    }),
    source: StringEnum(["crossbook", "venue", "crossbook+venue", "none"] as const, {
      description: "Prices crossbook saw itself, the venue's history, both, or none",
    }),
    complete: Type.Boolean({
      description:
        "Every period of the range that has begun since the market opened has a candle at the interval asked",
    }),
    reason: Nullable(
      StringEnum(COVERAGE_REASONS, {
        description:
          "Why not complete: the venue failed, serves this market only coarser, has no prices for the start of the range, or the range begins before the market opened",
      }),
    ),
  },
  { description: "What the candles rest on, and what is missing" },
);

export const HistoryMeta = Type.Object({
  market_id: Type.String(),
  interval: StringEnum(INTERVALS),
  start: Type.String({ description: "Start of the range covered (ISO 8601), inclusive" }),
  end: Type.String({ description: "End of the range covered (ISO 8601), exclusive: the next page's start" }),
  coverage: CoverageSchema,
});

export const HistoryResponse = PagedEnvelope(CandleSchema, HistoryMeta);

const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?))?$/i;

/**
 * An ISO 8601 date ("2026-11-22", midnight UTC) or date-time with a zone ("Z" or an offset) -> ms.
 * Undefined for anything else, including impossible dates (Date.parse would roll 02-30 over).
 */
export function parseIsoTimestamp(text: string): number | undefined {
  const m = ISO_8601.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = "0", mi = "0", s = "0", fraction = "", zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59)
    return undefined;
  const ms = Number(fraction.slice(0, 3).padEnd(3, "0"));
  const base = Date.UTC(year, month - 1, day, Number(h), Number(mi), Number(s), ms);
  if (new Date(base).getUTCDate() !== day) return undefined;
  let offset = 0;
  if (zone && zone.toUpperCase() !== "Z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || "0");
    if (oh > 23 || om > 59) return undefined;
    offset = sign * (oh * 60 + om) * 60_000;
  }
  const value = base - offset;
  return value >= 0 && value < 253_402_300_800_000 ? value : undefined;
}
