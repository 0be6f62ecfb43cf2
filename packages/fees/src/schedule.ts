/**
 * A market's fee schedule, one shape for both venues: a fill of C contracts at price P pays
 * C × rate × (P × (1 − P))^exponent as taker (makerRate instead of rate as maker), then the venue's
 * own rounding (and Polymarket's cap). How each venue's published fields map onto it:
 *
 * - Polymarket: Gamma `feeSchedule {rate, exponent, takerOnly}` or the CLOB's `/clob-markets`
 *   `fd {r, e, to}`; `takerBaseFee` (or `tbf`, `base_fee`) is the cap in bps, not a rate.
 * - Kalshi: the series' `fee_type` and `fee_multiplier` (an event's `fee_type_override` /
 *   `fee_multiplier_override` take precedence): quadratic = 0.07 × multiplier, makers free;
 *   quadratic_with_maker_fees adds makers at a quarter of that, _combo_ at half; flat is a
 *   price-independent fee per contract (see `kalshiSchedule`).
 */

/** Micro-units per unit: money, prices and sizes are integers of 1e-6. */
export const MICROS = 1_000_000;

export type FeeVenue = "polymarket" | "kalshi";
export type Liquidity = "taker" | "maker";
export type KalshiFeeType =
  | "quadratic"
  | "quadratic_with_maker_fees"
  | "quadratic_with_combo_maker_fees"
  | "flat";

export const KALSHI_FEE_TYPES: readonly KalshiFeeType[] = [
  "quadratic",
  "quadratic_with_maker_fees",
  "quadratic_with_combo_maker_fees",
  "flat",
];

export interface FeeSchedule {
  venue: FeeVenue;
  /** Taker coefficient of C × rate × (P × (1 − P))^exponent. */
  rate: number;
  exponent: number;
  /** Makers' coefficient on the same curve; 0: makers pay nothing. */
  makerRate: number;
  /**
   * Polymarket: `takerBaseFee` in bps, the most a fill may be charged, as the exchange contract caps
   * it: capBps / 10,000 × min(P, 1 − P) × C. Null: no cap (Kalshi, or not published).
   */
  capBps: number | null;
  /** Kalshi: the fee type and multiplier this schedule came from (event override applied). */
  feeType: string | null;
  multiplier: number | null;
}

/** Kalshi's general taker coefficient (its fee schedule's "General Trading Fees"), times the multiplier. */
export const KALSHI_TAKER_RATE = 0.07;
/** Makers on quadratic_with_maker_fees pay a quarter of the taker coefficient; on _combo_, half. */
export const KALSHI_MAKER_SHARE = 0.25;
export const KALSHI_COMBO_MAKER_SHARE = 0.5;

/**
 * A Polymarket schedule. `takerOnly` false charges makers the taker curve too (the venue has never
 * been seen to; it is the safe reading). `capBps` 0 or null: no cap.
 */
export function polymarketSchedule(fields: {
  rate: number;
  exponent: number;
  takerOnly?: boolean;
  capBps?: number | null;
}): FeeSchedule {
  const rate = nonNegative(fields.rate);
  return {
    venue: "polymarket",
    rate,
    exponent: nonNegative(fields.exponent),
    makerRate: fields.takerOnly === false ? rate : 0,
    capBps: fields.capBps !== undefined && fields.capBps !== null && fields.capBps > 0 ? fields.capBps : null,
    feeType: null,
    multiplier: null,
  };
}

/** A Polymarket market that charges nothing (`feesEnabled: false`, or a zero rate). */
export const POLYMARKET_FREE: FeeSchedule = polymarketSchedule({ rate: 0, exponent: 1 });

/**
 * A Kalshi schedule from a fee type and multiplier.
 *
 * `flat` is "described by the Specific Trading Fees Table" of Kalshi's fee schedule, which we could
 * not read: we charge a fee per contract that does not depend on the price, equal to the general
 * formula's peak (0.07 × multiplier × 0.25 = 0.0175 × multiplier a contract), so a flat series is
 * never charged less than the general schedule would charge it; makers pay nothing. An unknown
 * fee type is charged as quadratic_with_maker_fees (makers pay too): the safer guess.
 */
export function kalshiSchedule(feeType: string, multiplier: number): FeeSchedule {
  const m = nonNegative(multiplier);
  const taker = KALSHI_TAKER_RATE * m;
  const base = { venue: "kalshi" as const, capBps: null, feeType, multiplier: m };
  switch (feeType) {
    case "quadratic":
      return { ...base, rate: taker, exponent: 1, makerRate: 0 };
    case "quadratic_with_combo_maker_fees":
      return { ...base, rate: taker, exponent: 1, makerRate: taker * KALSHI_COMBO_MAKER_SHARE };
    case "flat":
      return { ...base, rate: taker / 4, exponent: 0, makerRate: 0 };
    default:
      return { ...base, rate: taker, exponent: 1, makerRate: taker * KALSHI_MAKER_SHARE };
  }
}

/**
 * What to charge when a market's schedule is not known (not synced yet, or the venue did not say):
 * Kalshi's common case (quadratic, multiplier 1: 12,266 of 12,396 series in a 2026 survey), and for
 * Polymarket the highest published category rate (0.07, exponent 1), which is at least what any
 * published Polymarket schedule charges at every price.
 */
export function defaultSchedule(venue: FeeVenue): FeeSchedule {
  return venue === "kalshi"
    ? kalshiSchedule("quadratic", 1)
    : polymarketSchedule({ rate: 0.07, exponent: 1, takerOnly: true });
}

export function scheduleOrDefault(venue: FeeVenue, schedule: FeeSchedule | null | undefined): FeeSchedule {
  return schedule ?? defaultSchedule(venue);
}

/** A schedule as the HTTP API publishes it on a market (`fees`). */
export interface FeesView {
  /** Whose rules round and cap the fee. */
  model: FeeVenue;
  /** fee = C × rate × (P × (1 − P))^exponent for a taker fill of C contracts at price P. */
  rate: number;
  exponent: number;
  /** Makers pay nothing. */
  taker_only: boolean;
  /** The makers' coefficient on the same curve (0 when taker_only). */
  maker_rate: number;
  /** Kalshi: the series' fee type (an event override applied); Polymarket: null. */
  fee_type: string | null;
  /** Kalshi: the fee multiplier (1 = the general 0.07); Polymarket: null. */
  multiplier: number | null;
  /** Polymarket: the cap in bps (`takerBaseFee`): a fill pays at most cap_bps / 10,000 × min(P, 1 − P) × C. */
  cap_bps: number | null;
}

export function feesView(schedule: FeeSchedule): FeesView {
  return {
    model: schedule.venue,
    rate: schedule.rate,
    exponent: schedule.exponent,
    taker_only: schedule.makerRate === 0,
    maker_rate: schedule.makerRate,
    fee_type: schedule.feeType,
    multiplier: schedule.multiplier,
    cap_bps: schedule.capBps,
  };
}

/** The API's `fees` back to a schedule (the agent reads markets from the API). */
export function scheduleFromView(view: FeesView): FeeSchedule {
  return {
    venue: view.model,
    rate: nonNegative(view.rate),
    exponent: nonNegative(view.exponent),
    makerRate: view.taker_only ? 0 : nonNegative(view.maker_rate ?? view.rate),
    capBps: view.cap_bps ?? null,
    feeType: view.fee_type ?? null,
    multiplier: view.multiplier ?? null,
  };
}

function nonNegative(value: number): number {
  if (!Number.isFinite(value) || value < 0)
    throw new RangeError(`fee parameter ${value} is not a finite number ≥ 0`);
  return value;
}
