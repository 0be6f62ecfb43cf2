/**
 * What the dashboard server works out for the page besides the raw data: a readable reason for a
 * failed refresh (a revoked key, a service that does not answer), and the risk chain's limits with
 * their current use, computed from the positions, orders and prices the dashboard already holds.
 */
import { CrossbookApiError, CrossbookNetworkError } from "../errors.js";
import { RISK_DEFAULTS, type RiskConfig } from "../risk/config.js";

/** Why the account's data could not be read: the page's red badge says `reason`. */
export interface FailureView {
  kind: "unauthorized" | "forbidden" | "unreachable" | "failed";
  /** One short line for the badge, e.g. `key revoked or invalid (401)`. */
  reason: string;
  /** The error's own message, for the badge's tooltip and logs. */
  detail: string;
}

/**
 * A failed refresh as the page shows it.
 *
 * @example
 * describeFailure(new CrossbookNetworkError("…", cause, { method: "GET", url, code: "ECONNREFUSED" })).reason;
 * // "crossbook unreachable: ECONNREFUSED"
 */
export function describeFailure(failure: unknown): FailureView {
  const detail = failure instanceof Error ? failure.message : String(failure);
  if (failure instanceof CrossbookApiError) {
    if (failure.status === 401)
      return { kind: "unauthorized", reason: "key revoked or invalid (401)", detail };
    if (failure.status === 403)
      return { kind: "forbidden", reason: `key not allowed (403 ${failure.code})`, detail };
    return { kind: "failed", reason: `crossbook answered ${failure.status} ${failure.code}`, detail };
  }
  if (failure instanceof CrossbookNetworkError)
    return { kind: "unreachable", reason: `crossbook unreachable: ${failure.code ?? "no answer"}`, detail };
  return { kind: "failed", reason: detail, detail };
}

/** A position as the dashboard holds it (a `GET /v1/positions` item). */
interface HeldPosition {
  market_id: string;
  market_title?: string | null;
  outcome: "yes" | "no";
  size: number;
  average_price?: number | null;
  current_price?: number | null;
  unrealized_pnl?: number | null;
}

/** An open order as the dashboard holds it (a `GET /v1/orders` item). */
interface HeldOrder {
  market_id: string;
  market_title?: string | null;
  price: number;
  amount: number;
  filled_amount: number;
}

/** One limit of the risk chain and how much of it is in use now. */
export interface RiskLimitView {
  /** The config key, e.g. `maxPositionPerMarket.notional`. */
  key: string;
  label: string;
  unit: "usd" | "contracts" | "orders" | "errors";
  limit: number;
  /** Current use in `unit`; null when the dashboard cannot know it. */
  used: number | null;
  /** What `used` is, e.g. the market it was measured on. */
  note?: string;
}

/** A setting of the chain with no use to measure (the price band), as one line. */
export interface RiskRuleView {
  key: string;
  label: string;
  value: string;
}

export interface RiskView {
  /** False when `status()` is not a risk chain's (then the page lists its fields as they are). */
  recognised: boolean;
  killed: boolean;
  killReason: string | null;
  breaker: { state: string; halfOpensAt: number | null; lastError: string | null } | null;
  limits: RiskLimitView[];
  rules: RiskRuleView[];
  checks: string[];
}

interface StatusShape {
  killed?: boolean;
  killReason?: string | null;
  breaker?: {
    enabled?: boolean;
    state?: string;
    consecutiveErrors?: number;
    lastError?: string | null;
    halfOpensAt?: number | null;
  };
  checks?: string[];
}

/**
 * The risk panel: kill switch and breaker from `status()`, each configured limit with its use.
 * Positions are valued at the live YES price when there is one (NO: 1 − it), as the checks do.
 *
 * @example
 * riskView(chain.config, chain.status(), positions, orders, (id) => latest.get(id)?.price ?? null);
 */
export function riskView(
  config: Readonly<RiskConfig> | undefined,
  status: unknown,
  positions: readonly HeldPosition[],
  orders: readonly HeldOrder[],
  livePrice: (marketId: string) => number | null,
): RiskView {
  const s = (status ?? {}) as StatusShape;
  const name = (id: string, title: string | null | undefined) => title || id;
  const mark = (p: HeldPosition) => {
    const yes = livePrice(p.market_id);
    if (yes !== null) return p.outcome === "no" ? 1 - yes : yes;
    return p.current_price ?? p.average_price ?? 1;
  };
  const perMarket = new Map<string, { title: string; contracts: number; notional: number }>();
  let exposure = 0;
  let unrealized = 0;
  for (const p of positions) {
    const m = perMarket.get(p.market_id) ?? {
      title: name(p.market_id, p.market_title),
      contracts: 0,
      notional: 0,
    };
    m.contracts += Math.abs(p.size);
    m.notional += Math.abs(p.size) * mark(p);
    perMarket.set(p.market_id, m);
    exposure += Math.abs(p.size) * mark(p);
    unrealized += p.unrealized_pnl ?? 0;
  }
  const resting = orders.map((o) => ({ o, notional: o.price * (o.amount - o.filled_amount) }));
  exposure += resting.reduce((sum, r) => sum + r.notional, 0);
  const largest = <T>(items: T[], by: (item: T) => number) =>
    items.reduce<T | undefined>(
      (best, item) => (best === undefined || by(item) > by(best) ? item : best),
      undefined,
    );

  const limits: RiskLimitView[] = [];
  const rules: RiskRuleView[] = [];
  const c: Readonly<RiskConfig> = config ?? {};
  const markets = [...perMarket.values()];
  if (c.maxPositionPerMarket?.contracts != null) {
    const top = largest(markets, (m) => m.contracts);
    limits.push({
      key: "maxPositionPerMarket.contracts",
      label: "position per market",
      unit: "contracts",
      limit: c.maxPositionPerMarket.contracts,
      used: top?.contracts ?? 0,
      ...(top ? { note: `largest: ${top.title}` } : {}),
    });
  }
  if (c.maxPositionPerMarket?.notional != null) {
    const top = largest(markets, (m) => m.notional);
    limits.push({
      key: "maxPositionPerMarket.notional",
      label: "position per market",
      unit: "usd",
      limit: c.maxPositionPerMarket.notional,
      used: top?.notional ?? 0,
      ...(top ? { note: `largest: ${top.title}` } : {}),
    });
  }
  if (c.maxTotalExposure != null)
    limits.push({
      key: "maxTotalExposure",
      label: "total exposure",
      unit: "usd",
      limit: c.maxTotalExposure,
      used: exposure,
      note: "positions at their marks + open orders",
    });
  if (c.maxOrderNotional != null) {
    const top = largest(
      orders.map((o) => ({ o, notional: o.price * o.amount })),
      (r) => r.notional,
    );
    limits.push({
      key: "maxOrderNotional",
      label: "order size",
      unit: "usd",
      limit: c.maxOrderNotional,
      used: top?.notional ?? 0,
      note: top ? `largest open order: ${name(top.o.market_id, top.o.market_title)}` : "per order",
    });
  }
  if (c.maxDailyLoss != null)
    limits.push({
      key: "maxDailyLoss",
      label: "daily loss",
      unit: "usd",
      limit: c.maxDailyLoss,
      // The chain adds today's realized PnL, which only it tracks: this is the open positions' part.
      used: Math.max(0, -unrealized),
      note: "unrealized loss of open positions (the check adds today's realized PnL)",
    });
  if (c.maxOpenOrders != null)
    limits.push({
      key: "maxOpenOrders",
      label: "open orders",
      unit: "orders",
      limit: c.maxOpenOrders,
      used: orders.length,
    });
  const breaker = s.breaker;
  if (c.circuitBreaker && breaker)
    limits.push({
      key: "circuitBreaker.maxConsecutiveErrors",
      label: "errors in a row",
      unit: "errors",
      limit: c.circuitBreaker.maxConsecutiveErrors ?? RISK_DEFAULTS.circuitBreaker.maxConsecutiveErrors,
      used: breaker.consecutiveErrors ?? 0,
      note: "the circuit breaker opens at the limit",
    });
  if (c.priceBand?.maxDistance != null)
    rules.push({
      key: "priceBand.maxDistance",
      label: "price band",
      value: `within ${c.priceBand.maxDistance} of the mid`,
    });
  if (c.priceBand?.maxSlippage != null)
    rules.push({
      key: "priceBand.maxSlippage",
      label: "market order slippage",
      value: `at most ${(c.priceBand.maxSlippage * 100).toFixed(1)} %`,
    });
  if (c.priceBand)
    rules.push({
      key: "priceBand.allowWithoutQuote",
      label: "without a quote",
      value:
        (c.priceBand.allowWithoutQuote ?? RISK_DEFAULTS.priceBand.allowWithoutQuote) ? "allowed" : "refused",
    });
  return {
    recognised: typeof s.killed === "boolean",
    killed: s.killed === true,
    killReason: s.killReason ?? null,
    breaker:
      breaker && breaker.enabled !== false
        ? {
            state: breaker.state ?? "closed",
            halfOpensAt: breaker.halfOpensAt ?? null,
            lastError: breaker.lastError ?? null,
          }
        : null,
    limits,
    rules,
    checks: Array.isArray(s.checks) ? s.checks : [],
  };
}
