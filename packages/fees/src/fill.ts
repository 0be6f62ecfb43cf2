/**
 * What one fill costs in fees, by each venue's rules, in integer micro-USD.
 *
 * Polymarket (docs.polymarket.com/trading/fees; clob-client-v2 `dist/fees`): a taker pays
 * C × rate × (P × (1 − P))^exponent, never more than the market's cap (`takerBaseFee` bps ×
 * min(P, 1 − P) × C: the CTF exchange refunds anything above the fee rate signed into an order),
 * rounded down to $0.00001; makers pay nothing on taker-only schedules.
 *
 * Kalshi (docs.kalshi.com/getting_started/fee_rounding): the trade fee from the schedule is rounded
 * up to $0.0001; the balance change (revenue − trade fee) is then floored to the account's balance
 * precision ($0.01 unless it settles to $0.0001), the difference being a rounding fee; the rounding
 * an order overpaid accumulates across its fills (taker and maker alike), and each whole cent of it
 * comes back as a rebate. The accumulator is the `carry` threaded through an order's fills.
 */
import { capUnits, curveUnits, notional } from "./math.js";
import type { FeeSchedule, Liquidity } from "./schedule.js";
import { MICROS } from "./schedule.js";

/** One fill: price of the outcome bought or sold and contracts, in micro-units. */
export interface FeeFill {
  price: number;
  size: number;
  side: "buy" | "sell";
  liquidity: Liquidity;
}

export interface FeeOptions {
  /**
   * Kalshi: the precision the account's balance settles to, micro-USD: 10,000 ($0.01, the default:
   * accounts that are not direct members of the exchange) or 100 ($0.0001).
   */
  balancePrecision?: number;
}

export interface FillFee {
  /** The fill's net fee, micro-USD (Kalshi: trade fee + rounding fee − rebate). */
  fee: number;
  /** Kalshi: the order's fee accumulator after this fill (rounding overpaid, not yet rebated). */
  carry: number;
}

/** Polymarket rounds a fee down to $0.00001. */
const POLYMARKET_UNIT = 10;
/** Kalshi rounds a trade fee up to $0.0001 and rebates rounding in whole cents. */
const KALSHI_UNIT = 100;
const CENT = 10_000;

/** The fee of one fill of an order whose fee accumulator is `carry` (0 for the order's first fill). */
export function fillFee(schedule: FeeSchedule, fill: FeeFill, carry = 0, options: FeeOptions = {}): FillFee {
  if (schedule.venue === "polymarket") return { fee: polymarketFee(schedule, fill), carry };
  return kalshiFee(schedule, fill, carry, options.balancePrecision ?? CENT);
}

/** A taker's fee for buying `size` at `price` in one fill, as the first fill of an order. */
export function takerFee(schedule: FeeSchedule, price: number, size: number): number {
  return fillFee(schedule, { price, size, side: "buy", liquidity: "taker" }).fee;
}

/**
 * The most fee `remaining` contracts of a buy limited at `limit` can still cost, for the cash it
 * holds back: fees peak at P = 0.5 on every schedule, so a fill at or better than the limit pays
 * at most the fee at min(limit, 0.5); Kalshi adds the rounding the order may still pay before its
 * accumulator rebates it (one cent less what it has already overpaid).
 */
export function buyLockFee(schedule: FeeSchedule, limit: number, remaining: number, carry = 0): number {
  if (remaining <= 0) return 0;
  const price = Math.min(limit, MICROS / 2);
  const rate = Math.max(schedule.rate, schedule.makerRate);
  if (schedule.venue === "polymarket") {
    return POLYMARKET_UNIT * polymarketUnits(schedule, rate, price, remaining);
  }
  const trade = KALSHI_UNIT * curveUnits(rate, schedule.exponent, price, remaining, KALSHI_UNIT, true);
  return trade + Math.max(0, CENT - carry);
}

function polymarketFee(schedule: FeeSchedule, fill: FeeFill): number {
  const rate = fill.liquidity === "taker" ? schedule.rate : schedule.makerRate;
  return POLYMARKET_UNIT * polymarketUnits(schedule, rate, fill.price, fill.size);
}

function polymarketUnits(schedule: FeeSchedule, rate: number, price: number, size: number): number {
  const curve = curveUnits(rate, schedule.exponent, price, size, POLYMARKET_UNIT, false);
  if (schedule.capBps === null) return curve;
  return Math.min(curve, capUnits(schedule.capBps, price, size, POLYMARKET_UNIT));
}

/** Kalshi's trade fee alone: the schedule's fee rounded up to $0.0001. */
export function kalshiTradeFee(
  schedule: FeeSchedule,
  price: number,
  size: number,
  liquidity: Liquidity,
): number {
  const rate = liquidity === "taker" ? schedule.rate : schedule.makerRate;
  return KALSHI_UNIT * curveUnits(rate, schedule.exponent, price, size, KALSHI_UNIT, true);
}

function kalshiFee(schedule: FeeSchedule, fill: FeeFill, carry: number, precision: number): FillFee {
  if (fill.size <= 0) return { fee: 0, carry };
  const trade = kalshiTradeFee(schedule, fill.price, fill.size, fill.liquidity);
  const value = notional(fill.price, fill.size);
  const change = (fill.side === "buy" ? -value : value) - trade;
  const rounding = change - Math.floor(change / precision) * precision;
  // Each whole cent of accumulated rounding comes back. The docs also say a fill's net fee is never
  // negative, which cannot hold together with whole-cent rebates and cent-aligned balances when a
  // fill pays (almost) no trade fee: there the rebate shows as a negative fee on that fill.
  const accumulated = carry + rounding;
  const rebate = CENT * Math.floor(accumulated / CENT);
  return { fee: trade + rounding - rebate, carry: accumulated - rebate };
}
