/**
 * Venue fees, as the crossbook sandbox charges them: the same module (@crossbook/fees) and the same
 * per-market schedules, in exact integer arithmetic on micro-units (1e-6), so a backtest fill costs
 * what the sandbox charges for that fill.
 */
import {
  defaultSchedule,
  type FeeSchedule,
  type FeesView,
  fillFee,
  kalshiSchedule,
  polymarketSchedule,
  scheduleFromView,
} from "@crossbook/fees";
import type { FeeConfig, FeeFunction, FeeInput } from "./types.js";

/**
 * Micro-units per unit (USD, contract, price).
 *
 * @example
 * toMicros(0.45) === 0.45 * MICROS; // 450000
 */
export const MICROS = 1_000_000;

/**
 * A price or amount in micro-units, rounded to the nearest.
 *
 * @example
 * toMicros(0.123456789); // 123457
 */
export function toMicros(value: number): number {
  return Math.round(value * MICROS);
}

/**
 * Kalshi's fee in USD for one fill of `amount` contracts at `price` (the first of its order):
 * C × 0.07 × multiplier × P × (1 − P) for a taker on a quadratic series, rounded up to $0.0001, the
 * balance change then to the cent. Makers pay a quarter of it on `quadratic_with_maker_fees`
 * series, half on `quadratic_with_combo_maker_fees`, nothing on `quadratic`.
 *
 * @example
 * kalshiFee(0.5, 100); // 1.75 (0.07 × 100 × 0.25)
 * kalshiFee(0.45, 10); // 0.18 (0.17325 -> 0.1733, the balance change to the cent)
 * kalshiFee(0.5, 100, { feeType: "quadratic_with_maker_fees", liquidity: "maker" }); // 0.44
 */
export function kalshiFee(
  price: number,
  amount: number,
  options: {
    feeType?: string;
    feeMultiplier?: number;
    liquidity?: "taker" | "maker";
    side?: "buy" | "sell";
  } = {},
): number {
  if (typeof options !== "object" || options === null)
    throw new TypeError(
      "kalshiFee(price, amount, { feeType, feeMultiplier }): the third argument is an object",
    );
  const schedule = kalshiSchedule(options.feeType ?? "quadratic", options.feeMultiplier ?? 1);
  return feeOf(schedule, price, amount, options.liquidity ?? "taker", options.side ?? "buy");
}

/**
 * Polymarket's fee in USD for one fill: shares × rate × (P × (1 − P))^exponent for a taker, rounded
 * down to $0.00001, never more than `capBps` / 10,000 × min(P, 1 − P) × shares (the market's
 * `takerBaseFee`); makers pay nothing when `takerOnly` (the default).
 *
 * @example
 * polymarketFee(0.5, 100, { rate: 0.05, exponent: 1 }); // 1.25
 * polymarketFee(0.5, 100, { rate: 0.25, exponent: 2 }); // 1.5625
 */
export function polymarketFee(
  price: number,
  amount: number,
  schedule: { rate: number; exponent: number; takerOnly?: boolean; capBps?: number | null },
  liquidity: "taker" | "maker" = "taker",
): number {
  if (typeof schedule !== "object" || schedule === null)
    throw new TypeError(
      "polymarketFee(price, amount, { rate, exponent }): the third argument is the market's fee schedule, " +
        "not a bps rate (takerBaseFee is a cap)",
    );
  return feeOf(polymarketSchedule(schedule), price, amount, liquidity, "buy");
}

function feeOf(
  schedule: FeeSchedule,
  price: number,
  amount: number,
  liquidity: "taker" | "maker",
  side: "buy" | "sell",
): number {
  return fillFee(schedule, { price: toMicros(price), size: toMicros(amount), side, liquidity }).fee / MICROS;
}

/**
 * The venue a market id belongs to, from its prefix.
 *
 * @example
 * venueOf("kalshi:FED-26DEC-T4.00"); // "kalshi"
 */
export function venueOf(marketId: string): FeeInput["venue"] {
  if (marketId.startsWith("kalshi:")) return "kalshi";
  if (marketId.startsWith("polymarket:")) return "polymarket";
  return "other";
}

/**
 * A fee rule resolved for the run: micro-USD for one fill.
 *
 * @example
 * const micros: number = feeRule({})(input, sizeMicros, priceMicros);
 */
export type FeeRule = (input: FeeInput, sizeMicros: number, priceMicros: number) => number;

/** Options of earlier versions whose meaning changed: refused loudly rather than misread. */
const RETIRED: Record<string, string> = {
  multiplier: "kalshi.feeMultiplier (1 = the general 0.07)",
  defaultBps: "polymarket.rate and polymarket.exponent (the market's feeSchedule)",
  rateBps: "markets: { [id]: market.fees } from GET /v1/markets",
};

/**
 * Builds the run's fee rule from the `fees` option: a market's own schedule when `fees.markets` has
 * it (as `GET /v1/markets/{id}` publishes it in `fees`), else the venue's settings here, else what
 * the crossbook server charges a market whose schedule it does not know (Kalshi quadratic × 1;
 * Polymarket rate 0.07, exponent 1).
 *
 * @example
 * const fee = feeRule({ polymarket: { rate: 0.05, exponent: 1 } });
 * fee({ market_id: "polymarket:0xabc", venue: "polymarket", side: "buy", outcome: "yes", price: 0.5, amount: 100, liquidity: "taker" }, 100_000_000, 500_000); // 1_250_000
 */
export function feeRule(fees: FeeConfig | FeeFunction | undefined): FeeRule {
  if (typeof fees === "function") {
    return (input) => {
      const fee = fees(input);
      if (!Number.isFinite(fee) || fee < 0) throw new RangeError(`fee function returned ${fee}`);
      return toMicros(fee);
    };
  }
  const config = fees ?? {};
  for (const venue of ["kalshi", "polymarket"] as const) {
    const settings = config[venue];
    if (!settings) continue;
    for (const key of Object.keys(settings)) {
      if (RETIRED[key]) throw new TypeError(`fees.${venue}.${key} is no longer read: use ${RETIRED[key]}`);
    }
  }
  const byMarket = new Map<string, FeeSchedule>();
  for (const [id, view] of Object.entries(config.markets ?? {})) {
    if (view) byMarket.set(id, scheduleFromView(view as FeesView));
  }
  const kalshi =
    config.kalshi === false
      ? null
      : config.kalshi
        ? kalshiSchedule(config.kalshi.feeType ?? "quadratic", config.kalshi.feeMultiplier ?? 1)
        : defaultSchedule("kalshi");
  const polymarket =
    config.polymarket === false
      ? null
      : config.polymarket &&
          (config.polymarket.rate !== undefined || config.polymarket.exponent !== undefined)
        ? polymarketSchedule({
            rate: config.polymarket.rate ?? 0,
            exponent: config.polymarket.exponent ?? 1,
            takerOnly: config.polymarket.takerOnly ?? true,
            capBps: config.polymarket.capBps ?? null,
          })
        : defaultSchedule("polymarket");
  const makersPay = config.makersPay === true;
  return (input, sizeMicros, priceMicros) => {
    const schedule =
      byMarket.get(input.market_id) ??
      (input.venue === "kalshi" ? kalshi : input.venue === "polymarket" ? polymarket : null);
    if (!schedule) return 0;
    const liquidity = makersPay ? "taker" : input.liquidity;
    return fillFee(schedule, { price: priceMicros, size: sizeMicros, side: input.side, liquidity }).fee;
  };
}
