/**
 * @crossbook/agent: the client library for trading agents on crossbook.
 *
 * @example
 * import { Crossbook, type Market } from "@crossbook/agent";
 * const client = new Crossbook({ apiKey: "cb_test_…", environment: "sandbox", baseUrl: "http://127.0.0.1:8080" });
 * const market: Market = await client.markets.get("kalshi:KXFED-26DEC-T4.00");
 * console.log(await client.balance());
 */

export {
  AccountStream,
  type AccountStreamCaughtUp,
  type AccountStreamClose,
  AccountStreamError,
  type AccountStreamExpired,
  type AccountStreamOptions,
} from "./account-stream.js";
export {
  type AlertComparison,
  type AlertFired,
  AlertWatcher,
  type AlertWatcherOptions,
} from "./alerts/local.js";
export {
  type ReceiverOptions,
  type VerifyResult,
  verifyWebhook,
  type WebhookEvent,
  webhookReceiver,
} from "./alerts/webhooks.js";
export * from "./backtest/index.js";
export {
  type AccountEventsOptions,
  Crossbook,
  type CrossbookOptions,
  type Environment,
  type FillsAllOptions,
  keyEnvironment,
} from "./client.js";
export { type CursorStore, FileCursorStore, MemoryCursorStore } from "./cursor-store.js";
export {
  type Dashboard,
  type DashboardOptions,
  type RiskStatusSource,
  startDashboard,
} from "./dashboard/server.js";
export {
  CrossbookApiError,
  CrossbookConfigError,
  CrossbookNetworkError,
  CrossbookRateLimitError,
  type NetworkErrorContext,
} from "./errors.js";
export {
  type ExecutionReport,
  type ExecutionStep,
  Executor,
  type ExecutorOptions,
  ORDER_EVENT_TYPES,
  OrderWatcher,
  type OrderWatcherOptions,
  type PreTradeCheck,
  split,
} from "./execution/index.js";
export type { components, paths } from "./generated/api.js";
export {
  type Logger,
  type LogLevel,
  type LogOption,
  parseRetryAfter,
  type RateLimitInfo,
  type RetryInfo,
  Transport,
  type TransportOptions,
} from "./http.js";
export type {
  Order,
  OrderRequest,
  OrderStatus,
  OrderSummary,
  PlacedOrder,
  TimeInForce,
} from "./order-types.js";
export * from "./risk/index.js";
export { type GapInfo, PriceStream, type PriceStreamOptions, type PriceUpdate } from "./stream.js";
export type {
  Account,
  AccountEvent,
  Alert,
  Arbitrage,
  ArbitrageList,
  ArbitrageMeta,
  ArbitrageOpportunity,
  Balance,
  Candle,
  Comparison,
  Event,
  Fill,
  FillPage,
  FillPageMeta,
  Market,
  MarketListItem,
  Match,
  Page,
  PageMeta,
  Position,
  Price,
  Venue,
  Webhook,
  WebhookDelivery,
} from "./types.js";
