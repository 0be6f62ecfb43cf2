/**
 * A market's fee schedule in the catalog: the `markets.fee_*` columns (migration 014) to and from
 * @crossbook/fees' `FeeSchedule`, and the schedule fee math uses when the catalog does not know one.
 */
import { type FeeSchedule, type FeeVenue, scheduleOrDefault } from "@crossbook/fees";
import type { MarketsTable } from "../infra/db/schema";

type FeeColumns = Pick<
  MarketsTable,
  "fee_model" | "fee_rate" | "fee_exponent" | "fee_maker_rate" | "fee_cap_bps" | "fee_type" | "fee_multiplier"
>;

export function feeColumns(schedule: FeeSchedule | null): FeeColumns {
  return {
    fee_model: schedule?.venue ?? null,
    fee_rate: schedule?.rate ?? null,
    fee_exponent: schedule?.exponent ?? null,
    fee_maker_rate: schedule?.makerRate ?? null,
    fee_cap_bps: schedule?.capBps ?? null,
    fee_type: schedule?.feeType ?? null,
    fee_multiplier: schedule?.multiplier ?? null,
  };
}

/** The stored schedule, or null when the catalog does not know it. */
export function storedSchedule(row: FeeColumns): FeeSchedule | null {
  if (row.fee_model !== "polymarket" && row.fee_model !== "kalshi") return null;
  if (row.fee_rate === null || row.fee_exponent === null) return null;
  return {
    venue: row.fee_model,
    rate: Number(row.fee_rate),
    exponent: Number(row.fee_exponent),
    makerRate: Number(row.fee_maker_rate ?? 0),
    capBps: row.fee_cap_bps === null ? null : Number(row.fee_cap_bps),
    feeType: row.fee_type,
    multiplier: row.fee_multiplier === null ? null : Number(row.fee_multiplier),
  };
}

/** The schedule fees are charged by: the stored one, else the venue's default (see @crossbook/fees). */
export function chargedSchedule(venue: string, row: FeeColumns | undefined): FeeSchedule {
  return scheduleOrDefault(venue as FeeVenue, row ? storedSchedule(row) : null);
}
