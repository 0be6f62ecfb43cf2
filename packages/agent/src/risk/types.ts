/**
 * The risk module's vocabulary: the order intent a check judges, the state it reads, and what a
 * check answers. Nothing here performs I/O.
 */
import type { OrderOutcome, OrderRequest, OrderType } from "../order-types.js";

/**
 * An order an agent means to place: the body of `POST /v1/orders` itself (the generated
 * {@link OrderRequest}), so the same object can be checked and then sent, and a change to the
 * server's order body changes what the checks accept. `outcome` defaults to `"yes"` and `type` to
 * `"limit"`, as on the server. Prices are the outcome's price, strictly between 0 and 1; `amount`
 * is in contracts.
 *
 * @example
 * const intent: OrderIntent = { market_id: "kalshi:FED-26DEC-T4.00", side: "buy", outcome: "yes", type: "limit", price: 0.42, amount: 100 };
 */
export type OrderIntent = OrderRequest;

/**
 * An {@link OrderIntent} with the server's defaults applied (`outcome: "yes"`, `type: "limit"`):
 * what checks receive.
 *
 * @example
 * const check: RiskCheck = { name: "no_no", check: (i: NormalizedOrderIntent) => i.outcome === "no" ? reject("no NO orders") : allow() };
 */
export interface NormalizedOrderIntent extends OrderIntent {
  outcome: OrderOutcome;
  type: OrderType;
}

/**
 * A position as the risk checks see it: a subset of the server's position object (`GET
 * /v1/positions` items are assignable as they are). `size` is in contracts; a negative size is a
 * short, which the backtester may model even though the server is long-only.
 *
 * @example
 * const p: RiskPosition = { market_id: "kalshi:X", outcome: "yes", size: 50, average_price: 0.4, current_price: 0.45, unrealized_pnl: 2.5 };
 */
export interface RiskPosition {
  market_id: string;
  outcome: "yes" | "no";
  /** Contracts held (negative: short). */
  size: number;
  /** Cost basis / size; null when nothing is held. */
  average_price?: number | null;
  /** The outcome's mark (YES: the market's price; NO: 1 − it); null without a quote. */
  current_price?: number | null;
  /** Mark-to-market PnL of what is held; null (taken as 0) without a quote. */
  unrealized_pnl?: number | null;
}

/**
 * A market's current quote in **YES** terms, as `GET /v1/prices` returns it (map its `price` to
 * `mid`). The checks derive the NO side themselves (NO bid = 1 − YES ask, NO mid = 1 − YES mid).
 * `mid` may be null when only a bid and an ask are known; it is then their midpoint.
 *
 * @example
 * const q: RiskQuote = { mid: 0.5, best_bid: 0.49, best_ask: 0.51 };
 */
export interface RiskQuote {
  mid: number | null;
  best_bid: number | null;
  best_ask: number | null;
}

/**
 * Totals over the account's open (resting) orders. `notional` is Σ price × (amount −
 * filled_amount), in the account's currency.
 *
 * @example
 * const open: RiskOpenOrders = { count: 3, notional: 120.5 };
 */
export interface RiskOpenOrders {
  count: number;
  notional: number;
}

/**
 * Where the checks read the account's state. The client plugs in live data, the backtester and
 * tests their own. Every method is async and called at most once per check of an intent.
 *
 * @example
 * const state: RiskState = {
 *   positions: async () => (await client.positions.list()).data,
 *   realizedPnlToday: async () => pnlSinceMidnight,
 *   openOrders: async () => ({ count: open.length, notional: open.reduce((s, o) => s + o.price * (o.amount - o.filled_amount), 0) }),
 *   quote: async (id) => { const q = (await client.prices.get([id]))[id]; return q ? { mid: q.price, best_bid: q.best_bid, best_ask: q.best_ask } : null; },
 * };
 */
export interface RiskState {
  /** Open positions (zero sizes are ignored). */
  positions(): Promise<readonly RiskPosition[]>;
  /** PnL realized since the start of the trading day (negative: a loss). */
  realizedPnlToday(): Promise<number>;
  /** Count and notional of the open orders. */
  openOrders(): Promise<RiskOpenOrders>;
  /** The market's current YES quote, or null when there is none. */
  quote(marketId: string): Promise<RiskQuote | null>;
}

/**
 * A market's quote in the terms of one outcome (what {@link RiskContext.quote} returns).
 *
 * @example
 * const q: OutcomeQuote = { mid: 0.5, bid: 0.49, ask: 0.51 };
 */
export interface OutcomeQuote {
  mid: number | null;
  bid: number | null;
  ask: number | null;
}

/**
 * What a check sees besides the intent: the state, read lazily and once per intent, and the
 * figures most checks need. Custom checks use it too.
 *
 * @example
 * const maxNo: RiskCheck = {
 *   name: "max_no_contracts",
 *   async check(intent, ctx) {
 *     const size = await ctx.positionSize();
 *     return intent.outcome === "no" && size + intent.amount > 500 ? reject("at most 500 NO contracts") : allow();
 *   },
 * };
 */
export interface RiskContext {
  /** The state provider (prefer the memoized readers below). */
  readonly state: RiskState;
  /** The chain's clock, in milliseconds since the epoch. */
  readonly now: number;
  /** All non-zero positions. */
  positions(): Promise<readonly RiskPosition[]>;
  /** Signed size held in the intent's market and outcome before the order. */
  positionSize(): Promise<number>;
  /** The intent's market quote in the intent's outcome terms, or null. */
  quote(): Promise<OutcomeQuote | null>;
  openOrders(): Promise<RiskOpenOrders>;
  realizedPnlToday(): Promise<number>;
  /** Σ unrealized PnL over the positions (nulls count as 0). */
  unrealizedPnl(): Promise<number>;
  /** True when the order only shrinks an existing position (never past zero). */
  isReducing(): Promise<boolean>;
  /**
   * The price the order is valued at: a limit's price; for a market buy the worst fill its
   * slippage allows (best ask × (1 + slippage), capped by its price and 1); for a market sell the
   * best bid. Without a quote, the most a contract can be worth (1).
   */
  orderPrice(): Promise<number>;
  /** amount × {@link RiskContext.orderPrice}. */
  orderNotional(): Promise<number>;
}

/**
 * A check's answer. Build it with {@link allow} and {@link reject}.
 *
 * @example
 * const result: RiskCheckResult = { allowed: false, reason: "too big", details: { limit: 10 } };
 */
export type RiskCheckResult =
  | { allowed: true }
  | { allowed: false; reason: string; details?: Record<string, unknown> };

/**
 * The chain's answer for an intent: allowed, or the first check that rejected it with a readable
 * reason and machine-readable details.
 *
 * @example
 * const decision: RiskDecision = await chain.check(intent);
 * if (!decision.allowed) console.warn(`${decision.check}: ${decision.reason}`, decision.details);
 */
export type RiskDecision =
  | { allowed: true }
  | { allowed: false; check: string; reason: string; details: Record<string, unknown> };

/**
 * One link of the chain. `name` identifies it in rejections (and must be unique in a chain).
 * A check that throws rejects the order (the chain fails closed).
 *
 * @example
 * const weekdaysOnly: RiskCheck = {
 *   name: "weekdays_only",
 *   check: (_intent, ctx) => [0, 6].includes(new Date(ctx.now).getUTCDay()) ? reject("no trading at weekends") : allow(),
 * };
 * chain.use(weekdaysOnly);
 */
export interface RiskCheck {
  readonly name: string;
  check(intent: NormalizedOrderIntent, ctx: RiskContext): RiskCheckResult | Promise<RiskCheckResult>;
}

/**
 * The allowing {@link RiskCheckResult}.
 *
 * @example
 * const ok = allow(); // { allowed: true }
 */
export function allow(): RiskCheckResult {
  return { allowed: true };
}

/**
 * A rejecting {@link RiskCheckResult}.
 *
 * @example
 * return reject("market closes in under 5 minutes", { closesAt });
 */
export function reject(reason: string, details?: Record<string, unknown>): RiskCheckResult {
  return details === undefined ? { allowed: false, reason } : { allowed: false, reason, details };
}
