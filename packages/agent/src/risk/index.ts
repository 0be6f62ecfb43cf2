/**
 * Pre-trade risk checks for crossbook agents: a chain every order intent passes (position,
 * exposure, order size, daily loss, open orders, price band), a kill switch and a circuit
 * breaker. Pure: the account's state comes in through a {@link RiskState} you provide.
 *
 * @example
 * import { createRiskChain, loadRiskConfig } from "@crossbook/agent";
 * const chain = createRiskChain(await loadRiskConfig("risk.json"), { state, cancelAll: () => client.orders.cancelAll() });
 * const decision = await chain.check({ market_id: "kalshi:X", side: "buy", price: 0.42, amount: 100 });
 */
export {
  type BreakerState,
  createRiskChain,
  type RiskChain,
  type RiskChainDeps,
  RiskRejectedError,
  type RiskStatus,
} from "./chain.js";
export {
  loadRiskConfig,
  parseRiskConfig,
  RISK_DEFAULTS,
  type RiskConfig,
  RiskConfigError,
  type RiskConfigIssue,
} from "./config.js";
export { liveRiskState } from "./live.js";
export {
  allow,
  type NormalizedOrderIntent,
  type OrderIntent,
  type OutcomeQuote,
  type RiskCheck,
  type RiskCheckResult,
  type RiskContext,
  type RiskDecision,
  type RiskOpenOrders,
  type RiskPosition,
  type RiskQuote,
  type RiskState,
  reject,
} from "./types.js";
