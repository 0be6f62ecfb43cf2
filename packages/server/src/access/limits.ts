/**
 * The limits of spec part 8, in one place. Ordinary keys get their account tier's request rate;
 * agent keys get their account plan's. Stream limits (connections per key, markets per
 * subscription) follow the plan for every key. "Custom" figures come from the account row, else
 * from config.
 */

import type { Config } from "../config";
import type { KeyType } from "./permissions";

export const TIERS = ["free", "pro", "enterprise"] as const;
export type Tier = (typeof TIERS)[number];
export const PLANS = ["standard", "agent", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

const TIER_RATE: Record<Exclude<Tier, "enterprise">, number> = { free: 60, pro: 300 };
const TIER_KEYS: Record<Tier, number | null> = { free: 2, pro: 10, enterprise: null };
/** Active price alerts per account (both environments together), by tier. */
const TIER_ALERTS: Record<Tier, number> = { free: 50, pro: 500, enterprise: 5_000 };
const PLAN_RATE: Record<Exclude<Plan, "enterprise">, number> = { standard: 1_000, agent: 10_000 };
const PLAN_STREAM: Record<Exclude<Plan, "enterprise">, { connections: number; markets: number }> = {
  standard: { connections: 2, markets: 50 },
  agent: { connections: 10, markets: 500 },
};
/** Enterprise stream limits when the account has no custom figure. */
const ENTERPRISE_STREAM_DEFAULT = { connections: 50, markets: 5_000 };

export interface AccountLimitsSource {
  tier: Tier;
  plan: Plan;
  rate_limit_per_minute: number | null;
  agent_rate_limit_per_minute: number | null;
  ws_connections: number | null;
  markets_per_subscription: number | null;
}

export interface KeyLimits {
  requests_per_minute: number;
  websocket_connections: number;
  markets_per_subscription: number;
  /** null = unlimited */
  keys_allowed: number | null;
}

export function limitsFor(account: AccountLimitsSource, keyType: KeyType | null, config: Config): KeyLimits {
  const requests =
    keyType === "agent"
      ? account.plan === "enterprise"
        ? (account.agent_rate_limit_per_minute ?? config.enterpriseAgentDefaultRateLimit)
        : PLAN_RATE[account.plan]
      : account.tier === "enterprise"
        ? (account.rate_limit_per_minute ?? config.enterpriseDefaultRateLimit)
        : TIER_RATE[account.tier];
  const stream =
    account.plan === "enterprise"
      ? {
          connections: account.ws_connections ?? ENTERPRISE_STREAM_DEFAULT.connections,
          markets: account.markets_per_subscription ?? ENTERPRISE_STREAM_DEFAULT.markets,
        }
      : PLAN_STREAM[account.plan];
  return {
    requests_per_minute: requests,
    websocket_connections: stream.connections,
    markets_per_subscription: stream.markets,
    keys_allowed: TIER_KEYS[account.tier],
  };
}

export function keysAllowed(tier: Tier): number | null {
  return TIER_KEYS[tier];
}

export function alertsAllowed(tier: Tier): number {
  return TIER_ALERTS[tier];
}
