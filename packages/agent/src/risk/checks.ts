/**
 * The built-in checks and the per-intent context they read the state through. Internal: the chain
 * (chain.ts) assembles them from a {@link RiskConfig}.
 */
import type { OrderOutcome, OrderSide, OrderType, TimeInForce } from "../order-types.js";
import { RISK_DEFAULTS, type RiskConfig } from "./config.js";
import {
  allow,
  type NormalizedOrderIntent,
  type OrderIntent,
  type OutcomeQuote,
  type RiskCheck,
  type RiskCheckResult,
  type RiskContext,
  type RiskOpenOrders,
  type RiskPosition,
  type RiskQuote,
  type RiskState,
  reject,
} from "./types.js";

/** Names of the built-in checks, in the order the chain runs them (reserved for custom checks). */
export const BUILTIN_CHECKS = [
  "kill_switch",
  "circuit_breaker",
  "intent",
  "max_order_notional",
  "price_band",
  "max_open_orders",
  "max_position",
  "max_exposure",
  "max_daily_loss",
] as const;

/** Relative tolerance so 100 × 0.3 (30.000000000000004) does not break a limit of 30. */
const EPSILON = 1e-9;

/** True when `value` is above `limit` by more than float noise. */
export function exceeds(value: number, limit: number): boolean {
  return value > limit + EPSILON * Math.max(1, Math.abs(limit));
}

/** A computed figure for `details`, without float noise (100.00999999999999 → 100.01). */
export function tidy(n: number): number {
  return Number(n.toPrecision(12));
}

/** A number for a readable reason: at most 6 decimals, no float noise. */
export function fmt(n: number): string {
  return String(Number(n.toFixed(6)));
}

function finiteOrNull(n: number | null | undefined): number | null {
  return typeof n === "number" && Number.isFinite(n) ? n : null;
}

/** The YES quote seen from one outcome: NO bid = 1 − YES ask, NO ask = 1 − YES bid, NO mid = 1 − YES mid. */
export function outcomeQuote(quote: RiskQuote, outcome: "yes" | "no"): OutcomeQuote {
  const bid = finiteOrNull(quote.best_bid);
  const ask = finiteOrNull(quote.best_ask);
  const mid = finiteOrNull(quote.mid) ?? (bid !== null && ask !== null ? (bid + ask) / 2 : null);
  if (outcome === "yes") return { mid, bid, ask };
  return {
    mid: mid === null ? null : 1 - mid,
    bid: ask === null ? null : 1 - ask,
    ask: bid === null ? null : 1 - bid,
  };
}

/** A position's price: its current price, else its average price, else 1 (the most a contract is worth). */
export function positionMark(p: RiskPosition): number {
  return finiteOrNull(p.current_price) ?? finiteOrNull(p.average_price) ?? 1;
}

/** Server defaults applied: outcome yes, type limit. */
export function normalizeIntent(intent: OrderIntent): NormalizedOrderIntent {
  return { ...intent, outcome: intent.outcome ?? "yes", type: intent.type ?? "limit" };
}

function slippageOf(intent: NormalizedOrderIntent): number {
  return intent.max_slippage ?? RISK_DEFAULTS.marketOrderSlippage;
}

function once<T>(read: () => Promise<T>): () => Promise<T> {
  let memo: Promise<T> | undefined;
  return () => {
    memo ??= read();
    return memo;
  };
}

function requireFinite(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new Error(`${what} is not a finite number (got ${String(value)})`);
  }
  return value;
}

/** The memoized view of the state one intent is checked against. */
export function createRiskContext(intent: NormalizedOrderIntent, state: RiskState, now: number): RiskContext {
  const positions = once(async () => {
    const list = await state.positions();
    if (!Array.isArray(list)) throw new Error("state.positions() did not return an array");
    for (const p of list) requireFinite(p.size, `state.positions(): the size of ${p.market_id}/${p.outcome}`);
    return list.filter((p) => p.size !== 0);
  });
  const positionSize = once(async () =>
    (await positions())
      .filter((p) => p.market_id === intent.market_id && p.outcome === intent.outcome)
      .reduce((sum, p) => sum + p.size, 0),
  );
  const quote = once(async () => {
    const q = await state.quote(intent.market_id);
    return q ? outcomeQuote(q, intent.outcome) : null;
  });
  const openOrders = once(async (): Promise<RiskOpenOrders> => {
    const open = await state.openOrders();
    return {
      count: requireFinite(open?.count, "state.openOrders().count"),
      notional: requireFinite(open?.notional, "state.openOrders().notional"),
    };
  });
  const realizedPnlToday = once(async () =>
    requireFinite(await state.realizedPnlToday(), "state.realizedPnlToday()"),
  );
  const unrealizedPnl = once(async () => {
    let sum = 0;
    for (const p of await positions()) {
      if (p.unrealized_pnl === null || p.unrealized_pnl === undefined) continue;
      sum += requireFinite(
        p.unrealized_pnl,
        `state.positions(): unrealized_pnl of ${p.market_id}/${p.outcome}`,
      );
    }
    return sum;
  });
  const isReducing = once(async () => {
    const size = await positionSize();
    if (intent.side === "sell") return size > 0 && !exceeds(intent.amount, size);
    return size < 0 && !exceeds(intent.amount, -size);
  });
  const orderPrice = once(async () => {
    if (intent.type === "limit") return intent.price ?? 1;
    const q = await quote();
    if (intent.side === "buy") {
      const ref = q?.ask ?? q?.mid ?? null;
      const worst = ref === null ? 1 : ref * (1 + slippageOf(intent));
      return Math.min(worst, intent.price ?? 1, 1);
    }
    const ref = q?.bid ?? q?.mid ?? null;
    return ref === null ? 1 : Math.max(ref, intent.price ?? 0);
  });
  const orderNotional = once(async () => intent.amount * (await orderPrice()));
  return {
    state,
    now,
    positions,
    positionSize,
    quote,
    openOrders,
    realizedPnlToday,
    unrealizedPnl,
    isReducing,
    orderPrice,
    orderNotional,
  };
}

// The values the order body accepts, each list spelled as a record over the generated union so a
// value added to or dropped from the server's schema is a type error here.
const valuesOf = <T extends string>(record: Record<T, true>) => Object.keys(record) as T[];
const SIDES: string[] = valuesOf<OrderSide>({ buy: true, sell: true });
const OUTCOMES: string[] = valuesOf<OrderOutcome>({ yes: true, no: true });
const TYPES: string[] = valuesOf<OrderType>({ limit: true, market: true });
const TIME_IN_FORCE: string[] = valuesOf<TimeInForce>({ GTC: true, GTD: true, IOC: true, FOK: true });

/**
 * The intent's own shape, checked before anything else so no limit is compared against NaN or a
 * missing price. Returns the problems, empty when there are none.
 */
export function intentProblems(intent: unknown): string[] {
  if (typeof intent !== "object" || intent === null) return ["the order intent must be an object"];
  const i = intent as Record<string, unknown>;
  const problems: string[] = [];
  const oneOf = (field: string, values: string[], required: boolean) => {
    const v = i[field];
    if (v === undefined && !required) return;
    if (typeof v !== "string" || !values.includes(v)) {
      problems.push(`${field} must be ${values.map((x) => `"${x}"`).join(" or ")}, got ${JSON.stringify(v)}`);
    }
  };
  if (typeof i.market_id !== "string" || i.market_id.length === 0) {
    problems.push("market_id must be a non-empty string");
  }
  oneOf("side", SIDES, true);
  oneOf("outcome", OUTCOMES, false);
  oneOf("type", TYPES, false);
  oneOf("time_in_force", TIME_IN_FORCE, false);
  if (typeof i.amount !== "number" || !Number.isFinite(i.amount) || i.amount <= 0) {
    problems.push(`amount must be a positive number of contracts, got ${JSON.stringify(i.amount)}`);
  }
  if (i.price !== undefined) {
    if (typeof i.price !== "number" || !Number.isFinite(i.price) || i.price <= 0 || i.price >= 1) {
      problems.push(`price must be strictly between 0 and 1, got ${JSON.stringify(i.price)}`);
    }
  } else if ((i.type ?? "limit") === "limit") {
    problems.push("price is required for a limit order");
  }
  if (i.max_slippage !== undefined) {
    const s = i.max_slippage;
    if (typeof s !== "number" || !Number.isFinite(s) || s < 0 || s > 1) {
      problems.push(`max_slippage must be between 0 and 1, got ${JSON.stringify(s)}`);
    }
  }
  return problems;
}

function maxOrderNotional(limit: number): RiskCheck {
  return {
    name: "max_order_notional",
    async check(intent, ctx) {
      const notional = await ctx.orderNotional();
      if (!exceeds(notional, limit)) return allow();
      const price = await ctx.orderPrice();
      return reject(
        `Order notional ${fmt(notional)} (${fmt(intent.amount)} × ${fmt(price)}) is above the max order notional of ${fmt(limit)}`,
        { notional: tidy(notional), amount: intent.amount, price: tidy(price), limit },
      );
    },
  };
}

function priceBand(band: NonNullable<RiskConfig["priceBand"]>): RiskCheck {
  const allowWithoutQuote = band.allowWithoutQuote ?? RISK_DEFAULTS.priceBand.allowWithoutQuote;
  return {
    name: "price_band",
    async check(intent, ctx) {
      const slippage = slippageOf(intent);
      if (intent.type === "market" && band.maxSlippage !== undefined && exceeds(slippage, band.maxSlippage)) {
        return reject(
          `Market order max_slippage ${fmt(slippage)} is above the allowed ${fmt(band.maxSlippage)}` +
            (intent.max_slippage === undefined ? " (the server's default applies when none is given)" : ""),
          { maxSlippage: slippage, limit: band.maxSlippage },
        );
      }
      if (band.maxDistance === undefined) return allow();
      const q = await ctx.quote();
      const mid = q?.mid ?? null;
      if (mid === null || q === null) {
        if (allowWithoutQuote) return allow();
        return reject(
          `${intent.market_id} has no current mid (${intent.outcome}) to check the order's price against`,
          { marketId: intent.market_id, outcome: intent.outcome },
        );
      }
      if (intent.type === "limit") {
        const price = intent.price!;
        const distance = Math.abs(price - mid);
        if (!exceeds(distance, band.maxDistance)) return allow();
        return reject(
          `Limit price ${fmt(price)} is ${fmt(distance)} from the ${intent.outcome} mid ${fmt(mid)}, beyond the price band of ${fmt(band.maxDistance)}`,
          { price, mid: tidy(mid), distance: tidy(distance), limit: band.maxDistance },
        );
      }
      let worst: number;
      if (intent.side === "buy") {
        worst = Math.min((q.ask ?? mid) * (1 + slippage), intent.price ?? 1, 1);
      } else {
        worst = Math.max((q.bid ?? mid) * (1 - slippage), intent.price ?? 0, 0);
      }
      const distance = Math.abs(worst - mid);
      if (!exceeds(distance, band.maxDistance)) return allow();
      return reject(
        `A market ${intent.side} with max_slippage ${fmt(slippage)} could fill at ${fmt(worst)}, ${fmt(distance)} from the ${intent.outcome} mid ${fmt(mid)}, beyond the price band of ${fmt(band.maxDistance)}`,
        {
          worstPrice: tidy(worst),
          mid: tidy(mid),
          distance: tidy(distance),
          maxSlippage: slippage,
          limit: band.maxDistance,
        },
      );
    },
  };
}

function maxOpenOrders(limit: number): RiskCheck {
  return {
    name: "max_open_orders",
    async check(intent, ctx) {
      const tif = intent.time_in_force;
      const rests = intent.type === "limit" && tif !== "IOC" && tif !== "FOK";
      if (!rests) return allow();
      const { count } = await ctx.openOrders();
      if (count + 1 <= limit) return allow();
      return reject(
        `${count} order${count === 1 ? " is" : "s are"} open; one more would pass the max open orders of ${limit}`,
        { openOrders: count, limit },
      );
    },
  };
}

function maxPosition(limits: NonNullable<RiskConfig["maxPositionPerMarket"]>): RiskCheck {
  return {
    name: "max_position",
    async check(intent, ctx) {
      if (await ctx.isReducing()) return allow();
      const inMarket = (await ctx.positions()).filter((p) => p.market_id === intent.market_id);
      const delta = intent.side === "buy" ? intent.amount : -intent.amount;
      const sizeAfter = (await ctx.positionSize()) + delta;
      const own = inMarket.find((p) => p.outcome === intent.outcome);
      const ownMark = (await ctx.quote())?.mid ?? (own ? positionMark(own) : await ctx.orderPrice());
      let contracts = Math.abs(sizeAfter);
      let notional = Math.abs(sizeAfter) * ownMark;
      for (const p of inMarket) {
        if (p.outcome === intent.outcome) continue;
        contracts += Math.abs(p.size);
        notional += Math.abs(p.size) * positionMark(p);
      }
      const details = {
        marketId: intent.market_id,
        contractsAfter: tidy(contracts),
        notionalAfter: tidy(notional),
      };
      if (limits.contracts !== undefined && exceeds(contracts, limits.contracts)) {
        return reject(
          `The position in ${intent.market_id} would be ${fmt(contracts)} contracts after this order, above the max of ${fmt(limits.contracts)} per market`,
          { ...details, limit: limits.contracts, unit: "contracts" },
        );
      }
      if (limits.notional !== undefined && exceeds(notional, limits.notional)) {
        return reject(
          `The position in ${intent.market_id} would be worth ${fmt(notional)} after this order, above the max notional of ${fmt(limits.notional)} per market`,
          { ...details, limit: limits.notional, unit: "notional" },
        );
      }
      return allow();
    },
  };
}

function maxExposure(limit: number): RiskCheck {
  return {
    name: "max_exposure",
    async check(_intent, ctx) {
      if (await ctx.isReducing()) return allow();
      const positions = (await ctx.positions()).reduce(
        (sum, p) => sum + Math.abs(p.size) * positionMark(p),
        0,
      );
      const open = (await ctx.openOrders()).notional;
      const order = await ctx.orderNotional();
      const total = positions + Math.abs(open) + order;
      if (!exceeds(total, limit)) return allow();
      return reject(
        `Total exposure would be ${fmt(total)} (positions ${fmt(positions)} + open orders ${fmt(open)} + this order ${fmt(order)}), above the max of ${fmt(limit)}`,
        {
          exposureAfter: tidy(total),
          positions: tidy(positions),
          openOrders: open,
          order: tidy(order),
          limit,
        },
      );
    },
  };
}

function maxDailyLoss(limit: number): RiskCheck {
  return {
    name: "max_daily_loss",
    async check(_intent, ctx) {
      const realized = await ctx.realizedPnlToday();
      const unrealized = await ctx.unrealizedPnl();
      const loss = -(realized + unrealized);
      if (!exceeds(loss, limit)) return allow();
      if (await ctx.isReducing()) return allow();
      return reject(
        `Today's loss of ${fmt(loss)} (realized ${fmt(realized)}, unrealized ${fmt(unrealized)}) is above the max daily loss of ${fmt(limit)}; only orders that reduce a position are allowed`,
        { loss: tidy(loss), realizedPnlToday: realized, unrealizedPnl: tidy(unrealized), limit },
      );
    },
  };
}

/** The configured built-in checks (after `intent`), in chain order. */
export function builtinChecks(config: RiskConfig): RiskCheck[] {
  const checks: RiskCheck[] = [];
  if (config.maxOrderNotional !== undefined) checks.push(maxOrderNotional(config.maxOrderNotional));
  if (config.priceBand !== undefined) checks.push(priceBand(config.priceBand));
  if (config.maxOpenOrders !== undefined) checks.push(maxOpenOrders(config.maxOpenOrders));
  if (config.maxPositionPerMarket !== undefined) checks.push(maxPosition(config.maxPositionPerMarket));
  if (config.maxTotalExposure !== undefined) checks.push(maxExposure(config.maxTotalExposure));
  if (config.maxDailyLoss !== undefined) checks.push(maxDailyLoss(config.maxDailyLoss));
  return checks;
}

/** Guards against a custom check returning something that is not a {@link RiskCheckResult}. */
export function isCheckResult(value: unknown): value is RiskCheckResult {
  if (typeof value !== "object" || value === null) return false;
  const v = value as { allowed?: unknown; reason?: unknown };
  return v.allowed === true || (v.allowed === false && typeof v.reason === "string");
}
