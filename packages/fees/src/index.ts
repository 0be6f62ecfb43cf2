/**
 * @crossbook/fees: what Polymarket and Kalshi charge for a fill, one model per venue, shared by
 * the crossbook server (sandbox fills, buy locks, arbitrage, live bookkeeping) and the agent
 * library's backtester, so they all charge the same fee for the same fill. Integer micro-units in
 * and out; no dependencies.
 */
export type { FeeFill, FeeOptions, FillFee } from "./fill.js";
export { buyLockFee, fillFee, kalshiTradeFee, takerFee } from "./fill.js";
export { curveUnits, notional } from "./math.js";
export type { FeeSchedule, FeesView, FeeVenue, KalshiFeeType, Liquidity } from "./schedule.js";
export {
  defaultSchedule,
  feesView,
  KALSHI_COMBO_MAKER_SHARE,
  KALSHI_FEE_TYPES,
  KALSHI_MAKER_SHARE,
  KALSHI_TAKER_RATE,
  kalshiSchedule,
  MICROS,
  POLYMARKET_FREE,
  polymarketSchedule,
  scheduleFromView,
  scheduleOrDefault,
} from "./schedule.js";
