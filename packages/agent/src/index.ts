/**
 * @crossbook/agent: the client library for trading agents on crossbook.
 *
 * @example
 * import { Crossbook } from "@crossbook/agent";
 * const client = new Crossbook({ apiKey: "cb_test_…", environment: "sandbox", baseUrl: "http://127.0.0.1:8080" });
 * console.log(await client.balance());
 */

export { type AlertFired, AlertWatcher, type AlertWatcherOptions, type Comparison } from "./alerts/local";
export {
  type ReceiverOptions,
  type VerifyResult,
  verifyWebhook,
  type WebhookEvent,
  webhookReceiver,
} from "./alerts/webhooks";
export * from "./backtest/index";
export {
  Crossbook,
  type CrossbookOptions,
  type Environment,
  keyEnvironment,
  type OrderRequest,
  type PageMeta,
} from "./client";
export {
  type Dashboard,
  type DashboardOptions,
  type RiskStatusSource,
  startDashboard,
} from "./dashboard/server";
export { CrossbookApiError, CrossbookConfigError, CrossbookNetworkError } from "./errors";
export {
  type ExecutionReport,
  type ExecutionStep,
  Executor,
  type ExecutorOptions,
  type PreTradeCheck,
  split,
} from "./execution/index";
export type { components, paths } from "./generated/api";
export { parseRetryAfter, Transport, type TransportOptions } from "./http";
export * from "./risk/index";
export { type GapInfo, PriceStream, type PriceStreamOptions, type PriceUpdate } from "./stream";
