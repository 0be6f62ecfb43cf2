/**
 * Backtesting: replay candles through a strategy with the sandbox's fill rules, get trades, the
 * equity curve and metrics, and write an HTML report. See README.md in this folder.
 *
 * @example
 * import { backtest, fileSource, writeReport } from "@crossbook/agent";
 * const result = await backtest({ strategy, markets: ["kalshi:A"], interval: "1h", from: "2026-01-01",
 *   to: "2026-02-01", initialCash: 1000, fees: {}, slippage: 0.01, source: fileSource("candles.jsonl") });
 * await writeReport(result, "report.html");
 */
export { backtest } from "./engine.js";
export { kalshiFee, polymarketFee } from "./fees.js";
export {
  brierScore,
  DAYS_PER_YEAR,
  drawdownSeries,
  maxDrawdown,
  sharpeRatio,
  totalReturn,
  winRate,
} from "./metrics.js";
export { DEFAULT_MAX_SLIPPAGE } from "./orders.js";
export { type ReportOptions, renderReport, writeReport } from "./report.js";
export {
  fileSource,
  HISTORY_PAGE_LIMIT,
  type HistorySourceOptions,
  historySource,
  INTERVAL_MS,
  saveCandles,
} from "./sources.js";
export { CandleTape, type TapeColumns } from "./tape.js";
export type {
  ApiCandle,
  BacktestOptions,
  BacktestResult,
  CancelledOrder,
  CandleRequest,
  CandleSource,
  CandleView,
  EquityCurve,
  FeeConfig,
  FeeFunction,
  FeeInput,
  FetchHistory,
  HistoryPage,
  Interval,
  MarketCandle,
  MarketFees,
  Metrics,
  OpenOrder,
  OrderInput,
  OrderTicket,
  OrderType,
  Outcome,
  Portfolio,
  PositionView,
  Progress,
  RejectedOrder,
  RejectReason,
  Resolution,
  ResolutionEvent,
  Side,
  SlippageFunction,
  Strategy,
  StrategyContext,
  Trade,
} from "./types.js";
