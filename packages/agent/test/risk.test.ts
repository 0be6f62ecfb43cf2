/** Risk checks: every limit at its boundary, reducing orders, the kill switch, the circuit breaker, config files. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, expectTypeOf, it, vi } from "vitest";
import type { paths } from "../src/generated/api";
import {
  allow,
  createRiskChain,
  loadRiskConfig,
  type NormalizedOrderIntent,
  type OrderIntent,
  parseRiskConfig,
  RISK_DEFAULTS,
  type RiskCheck,
  type RiskConfig,
  RiskConfigError,
  type RiskContext,
  type RiskDecision,
  type RiskPosition,
  type RiskQuote,
  RiskRejectedError,
  type RiskState,
  reject,
} from "../src/risk";

const M = "kalshi:FED-26DEC-T4.00";
const OTHER = "polymarket:0xabc";

interface Fake {
  positions: RiskPosition[];
  realized: number;
  open: { count: number; notional: number };
  quotes: Record<string, RiskQuote | null>;
  calls: Record<keyof RiskState, number>;
}

function fakeState(init: Partial<Omit<Fake, "calls">> = {}): { fake: Fake; state: RiskState } {
  const fake: Fake = {
    positions: [],
    realized: 0,
    open: { count: 0, notional: 0 },
    quotes: { [M]: { mid: 0.5, best_bid: 0.49, best_ask: 0.51 } },
    ...init,
    calls: { positions: 0, realizedPnlToday: 0, openOrders: 0, quote: 0 },
  };
  const state: RiskState = {
    positions: async () => {
      fake.calls.positions++;
      return fake.positions;
    },
    realizedPnlToday: async () => {
      fake.calls.realizedPnlToday++;
      return fake.realized;
    },
    openOrders: async () => {
      fake.calls.openOrders++;
      return fake.open;
    },
    quote: async (id) => {
      fake.calls.quote++;
      return fake.quotes[id] ?? null;
    },
  };
  return { fake, state };
}

function pos(size: number, extra: Partial<RiskPosition> = {}): RiskPosition {
  return {
    market_id: M,
    outcome: "yes",
    size,
    average_price: 0.4,
    current_price: 0.5,
    unrealized_pnl: 0,
    ...extra,
  };
}

function buy(amount: number, price = 0.5, extra: Partial<OrderIntent> = {}): OrderIntent {
  return { market_id: M, side: "buy", outcome: "yes", type: "limit", price, amount, ...extra };
}

function sell(amount: number, price = 0.5, extra: Partial<OrderIntent> = {}): OrderIntent {
  return { market_id: M, side: "sell", outcome: "yes", type: "limit", price, amount, ...extra };
}

function chainWith(config: RiskConfig, init: Partial<Omit<Fake, "calls">> = {}) {
  const { fake, state } = fakeState(init);
  return { fake, chain: createRiskChain(config, { state }) };
}

function rejected(decision: RiskDecision, check: string): Extract<RiskDecision, { allowed: false }> {
  expect(decision).toMatchObject({ allowed: false, check });
  if (decision.allowed) throw new Error("unreachable");
  expect(decision.reason.length).toBeGreaterThan(10);
  return decision;
}

describe("OrderIntent", () => {
  it("is the body of POST /v1/orders", () => {
    type Body = paths["/v1/orders"]["post"]["requestBody"]["content"]["application/json"];
    expectTypeOf<OrderIntent>().toEqualTypeOf<Body>();
  });
});

describe("the chain with no limits", () => {
  it("allows a well-formed order and lists the always-on checks", async () => {
    const { chain } = chainWith({});
    expect(await chain.check(buy(1_000_000, 0.99))).toEqual({ allowed: true });
    expect(chain.status().checks).toEqual(["kill_switch", "intent"]);
  });

  it("rejects a malformed intent before any limit", async () => {
    const { chain, fake } = chainWith({ maxOrderNotional: 10 });
    const bad = [
      { ...buy(10), amount: -1 },
      { ...buy(10), amount: Number.NaN },
      { ...buy(10), price: undefined },
      { ...buy(10), price: 1 },
      { ...buy(10), side: "short" },
      { ...buy(10), outcome: "maybe" },
      { ...buy(10), market_id: "" },
      { ...buy(10, undefined, { type: "market", max_slippage: 2 }) },
    ];
    for (const intent of bad) rejected(await chain.check(intent as OrderIntent), "intent");
    const d = rejected(await chain.check(null as unknown as OrderIntent), "intent");
    expect(d.details.problems).toEqual(["the order intent must be an object"]);
    const missing = rejected(await chain.check({ ...buy(10), price: undefined }), "intent");
    expect(missing.reason).toContain("price is required for a limit order");
    expect(fake.calls.positions + fake.calls.quote).toBe(0);
    // A market order needs no price.
    expect(await chain.check({ market_id: M, side: "buy", type: "market", amount: 1 })).toEqual({
      allowed: true,
    });
  });
});

describe("max order notional", () => {
  it("allows exactly the limit (despite float noise) and rejects above it", async () => {
    const { chain } = chainWith({ maxOrderNotional: 30 });
    expect(await chain.check(buy(100, 0.3))).toEqual({ allowed: true }); // 30.000000000000004
    const d = rejected(await chain.check(buy(100, 0.31)), "max_order_notional");
    expect(d.details).toMatchObject({ notional: 31, limit: 30, amount: 100, price: 0.31 });
    expect(d.reason).toBe("Order notional 31 (100 × 0.31) is above the max order notional of 30");
  });

  it("applies to reducing orders too", async () => {
    const { chain } = chainWith({ maxOrderNotional: 30 }, { positions: [pos(1000)] });
    rejected(await chain.check(sell(100, 0.31)), "max_order_notional");
  });

  it("values a market buy at the worst fill its slippage allows", async () => {
    // ask 0.51 × 1.05 (server default slippage) = 0.5355 → 53.55 for 100
    const { chain, fake } = chainWith({ maxOrderNotional: 53.55 });
    const market = (extra: Partial<OrderIntent> = {}): OrderIntent => ({
      market_id: M,
      side: "buy",
      type: "market",
      amount: 100,
      ...extra,
    });
    expect(await chain.check(market())).toEqual({ allowed: true });
    rejected(await chain.check(market({ amount: 100.01 })), "max_order_notional");
    // A price bound caps the worst fill.
    expect(await chain.check(market({ amount: 200, max_slippage: 0.5, price: 0.26 }))).toEqual({
      allowed: true,
    });
    // A sell is valued at the best bid; the NO side's bid is 1 − YES ask.
    const noSell: OrderIntent = { market_id: M, side: "sell", outcome: "no", type: "market", amount: 109 };
    expect(await chain.check(noSell)).toEqual({ allowed: true }); // 109 × 0.49 = 53.41
    // Without a quote a contract is valued at 1.
    fake.quotes[M] = null;
    const none = rejected(await chain.check(market({ amount: 54 })), "max_order_notional");
    expect(none.details).toMatchObject({ price: 1, notional: 54 });
  });
});

describe("price band", () => {
  it("allows a limit price at the band's edge on either side and rejects past it", async () => {
    const { chain } = chainWith({ priceBand: { maxDistance: 0.1 } });
    expect(await chain.check(buy(10, 0.6))).toEqual({ allowed: true });
    expect(await chain.check(buy(10, 0.4))).toEqual({ allowed: true });
    const d = rejected(await chain.check(buy(10, 0.61)), "price_band");
    expect(d.details).toMatchObject({ price: 0.61, mid: 0.5, limit: 0.1 });
    expect(d.details.distance).toBeCloseTo(0.11);
    rejected(await chain.check(sell(10, 0.39)), "price_band");
  });

  it("measures a NO order against 1 − the YES mid", async () => {
    const { chain } = chainWith(
      { priceBand: { maxDistance: 0.1 } },
      { quotes: { [M]: { mid: 0.3, best_bid: 0.29, best_ask: 0.31 } } },
    );
    expect(await chain.check(buy(10, 0.8, { outcome: "no" }))).toEqual({ allowed: true });
    const d = rejected(await chain.check(buy(10, 0.81, { outcome: "no" })), "price_band");
    expect(d.details.mid).toBeCloseTo(0.7);
    rejected(await chain.check(buy(10, 0.8)), "price_band"); // YES at 0.8 is 0.5 from 0.3
  });

  it("uses the midpoint of bid and ask when the quote has no mid", async () => {
    const { chain } = chainWith(
      { priceBand: { maxDistance: 0.05 } },
      { quotes: { [M]: { mid: null, best_bid: 0.4, best_ask: 0.5 } } },
    );
    expect(await chain.check(buy(10, 0.5))).toEqual({ allowed: true });
    rejected(await chain.check(buy(10, 0.51)), "price_band");
  });

  it("checks a market order's worst fill from its max_slippage", async () => {
    // ask 0.5 → with slippage s the worst fill is 0.5 × (1 + s); the mid is 0.45.
    const { chain } = chainWith(
      { priceBand: { maxDistance: 0.1 } },
      { quotes: { [M]: { mid: 0.45, best_bid: 0.4, best_ask: 0.5 } } },
    );
    const m = (side: "buy" | "sell", max_slippage: number): OrderIntent => ({
      market_id: M,
      side,
      type: "market",
      amount: 10,
      max_slippage,
    });
    expect(await chain.check(m("buy", 0.1))).toEqual({ allowed: true }); // 0.55: 0.1 away
    const d = rejected(await chain.check(m("buy", 0.12)), "price_band"); // 0.56
    expect(d.details.worstPrice).toBeCloseTo(0.56);
    expect(d.reason).toContain("could fill at 0.56");
    expect(await chain.check(m("sell", 0.125))).toEqual({ allowed: true }); // 0.4 × 0.875 = 0.35
    rejected(await chain.check(m("sell", 0.15)), "price_band"); // 0.34
    // A price bound keeps the worst fill inside the band.
    expect(await chain.check({ ...m("buy", 0.5), price: 0.55 })).toEqual({ allowed: true });
    // The server's default slippage (0.05) applies when the order gives none: 0.525.
    expect(await chain.check({ market_id: M, side: "buy", type: "market", amount: 10 })).toEqual({
      allowed: true,
    });
  });

  it("caps a market order's max_slippage, the server default included", async () => {
    const { chain } = chainWith({ priceBand: { maxSlippage: 0.05 } });
    const m = (max_slippage?: number): OrderIntent => ({
      market_id: M,
      side: "buy",
      type: "market",
      amount: 10,
      ...(max_slippage === undefined ? {} : { max_slippage }),
    });
    expect(await chain.check(m(0.05))).toEqual({ allowed: true });
    expect(await chain.check(m())).toEqual({ allowed: true });
    const d = rejected(await chain.check(m(0.06)), "price_band");
    expect(d.details).toEqual({ maxSlippage: 0.06, limit: 0.05 });
    const strict = chainWith({ priceBand: { maxSlippage: 0.04 } }).chain;
    const dflt = rejected(await strict.check(m()), "price_band");
    expect(dflt.reason).toContain("the server's default");
    expect(RISK_DEFAULTS.marketOrderSlippage).toBe(0.05);
    // Limit orders have no slippage to cap.
    expect(await strict.check(buy(10, 0.99))).toEqual({ allowed: true });
  });

  it("rejects without a quote unless allowWithoutQuote", async () => {
    const noQuote = { quotes: {} };
    const strict = chainWith({ priceBand: { maxDistance: 0.1 } }, noQuote).chain;
    const d = rejected(await strict.check(buy(10, 0.5)), "price_band");
    expect(d.reason).toContain("has no current mid");
    const lax = chainWith({ priceBand: { maxDistance: 0.1, allowWithoutQuote: true } }, noQuote).chain;
    expect(await lax.check(buy(10, 0.5))).toEqual({ allowed: true });
    const empty = { quotes: { [M]: { mid: null, best_bid: null, best_ask: 0.5 } } };
    rejected(
      await chainWith({ priceBand: { maxDistance: 0.1 } }, empty).chain.check(buy(10, 0.5)),
      "price_band",
    );
  });
});

describe("max open orders", () => {
  it("allows the order that reaches the limit and rejects the one past it", async () => {
    const { chain, fake } = chainWith({ maxOpenOrders: 2 }, { open: { count: 1, notional: 5 } });
    expect(await chain.check(buy(10))).toEqual({ allowed: true });
    fake.open.count = 2;
    const d = rejected(await chain.check(buy(10)), "max_open_orders");
    expect(d.details).toEqual({ openOrders: 2, limit: 2 });
    // Reducing orders still add a resting order.
    fake.positions = [pos(100)];
    rejected(await chain.check(sell(10)), "max_open_orders");
  });

  it("lets orders that cannot rest through", async () => {
    const { chain } = chainWith({ maxOpenOrders: 2 }, { open: { count: 5, notional: 5 } });
    expect(await chain.check({ market_id: M, side: "buy", type: "market", amount: 1 })).toEqual({
      allowed: true,
    });
    expect(await chain.check(buy(10, 0.5, { time_in_force: "IOC" }))).toEqual({ allowed: true });
    expect(await chain.check(buy(10, 0.5, { time_in_force: "FOK" }))).toEqual({ allowed: true });
    rejected(await chain.check(buy(10, 0.5, { time_in_force: "GTD" })), "max_open_orders");
  });
});

describe("max position per market", () => {
  it("caps contracts after the order, over both outcomes", async () => {
    const { chain, fake } = chainWith({ maxPositionPerMarket: { contracts: 100 } }, { positions: [pos(60)] });
    expect(await chain.check(buy(40))).toEqual({ allowed: true });
    const d = rejected(await chain.check(buy(40.01)), "max_position");
    expect(d.details).toMatchObject({ marketId: M, contractsAfter: 100.01, limit: 100, unit: "contracts" });
    // Another market's position does not count; the other outcome of this market does.
    fake.positions = [pos(60), pos(500, { market_id: OTHER })];
    expect(await chain.check(buy(40))).toEqual({ allowed: true });
    fake.positions = [pos(60), pos(10, { outcome: "no", current_price: 0.5 })];
    rejected(await chain.check(buy(40)), "max_position");
    expect(await chain.check(buy(30))).toEqual({ allowed: true });
  });

  it("caps notional at the outcome's current mid", async () => {
    // mid 0.5: 100 contracts are worth 50
    const { chain, fake } = chainWith({ maxPositionPerMarket: { notional: 50 } }, { positions: [pos(60)] });
    expect(await chain.check(buy(40, 0.6))).toEqual({ allowed: true });
    const d = rejected(await chain.check(buy(41, 0.6)), "max_position");
    expect(d.details).toMatchObject({ notionalAfter: 50.5, limit: 50, unit: "notional" });
    // Without a quote: the position's current price, else the order's price.
    fake.quotes = {};
    fake.positions = [pos(60, { current_price: 0.25 })];
    expect(await chain.check(buy(140, 0.9))).toEqual({ allowed: true }); // 200 × 0.25
    fake.positions = [];
    expect(await chain.check(buy(125, 0.4))).toEqual({ allowed: true }); // 125 × 0.4
    rejected(await chain.check(buy(126, 0.4)), "max_position");
  });

  it("always allows an order that reduces the position, even above the limit", async () => {
    const { chain } = chainWith(
      { maxPositionPerMarket: { contracts: 100, notional: 10 } },
      { positions: [pos(500)] },
    );
    expect(await chain.check(sell(100))).toEqual({ allowed: true });
    expect(await chain.check(sell(500))).toEqual({ allowed: true });
    rejected(await chain.check(buy(1)), "max_position");
    // Selling past zero is not a reduction: the short that is left counts.
    rejected(await chain.check(sell(700)), "max_position");
  });

  it("treats buying back a short as reducing", async () => {
    const { chain } = chainWith({ maxPositionPerMarket: { contracts: 10 } }, { positions: [pos(-50)] });
    expect(await chain.check(buy(50))).toEqual({ allowed: true });
    rejected(await chain.check(sell(1)), "max_position");
  });
});

describe("max total exposure", () => {
  // positions 100 × 0.5 = 50, open orders 20: room for 30 more
  const init = () => ({
    positions: [pos(100), pos(0, { market_id: OTHER })],
    open: { count: 3, notional: 20 },
  });

  it("sums positions, open orders and this order", async () => {
    const { chain } = chainWith({ maxTotalExposure: 100 }, init());
    expect(await chain.check(buy(100, 0.3))).toEqual({ allowed: true });
    const d = rejected(await chain.check(buy(101, 0.3)), "max_exposure");
    expect(d.details).toMatchObject({ positions: 50, openOrders: 20, limit: 100 });
    expect(d.details.exposureAfter).toBeCloseTo(100.3);
  });

  it("values positions at their current price, else average price, else 1", async () => {
    const positions = [
      pos(10, { market_id: OTHER, current_price: null, average_price: 0.2 }), // 2
      pos(-10, { market_id: "kalshi:Y", current_price: null, average_price: null }), // 10
    ];
    const { chain } = chainWith({ maxTotalExposure: 13 }, { positions });
    expect(await chain.check(buy(2, 0.5))).toEqual({ allowed: true });
    rejected(await chain.check(buy(3, 0.5)), "max_exposure");
  });

  it("always allows a reducing order", async () => {
    const { chain } = chainWith({ maxTotalExposure: 10 }, init());
    expect(await chain.check(sell(100, 0.3))).toEqual({ allowed: true });
    rejected(await chain.check(buy(1, 0.3)), "max_exposure");
    rejected(await chain.check(sell(1, 0.3, { outcome: "no" })), "max_exposure"); // holds no NO
  });
});

describe("max daily loss", () => {
  it("allows at the limit, rejects risk past it, still allows reducing orders", async () => {
    const { chain, fake } = chainWith(
      { maxDailyLoss: 100 },
      { realized: -60, positions: [pos(100, { unrealized_pnl: -40 })] },
    );
    expect(await chain.check(buy(10))).toEqual({ allowed: true });
    fake.positions = [pos(100, { unrealized_pnl: -40.01 })];
    const d = rejected(await chain.check(buy(10)), "max_daily_loss");
    expect(d.details).toEqual({ loss: 100.01, realizedPnlToday: -60, unrealizedPnl: -40.01, limit: 100 });
    expect(d.reason).toContain("only orders that reduce a position are allowed");
    expect(await chain.check(sell(100))).toEqual({ allowed: true });
    rejected(await chain.check(sell(101)), "max_daily_loss");
    rejected(await chain.check({ ...buy(10), market_id: OTHER }), "max_daily_loss");
  });

  it("counts gains against losses and ignores unknown unrealized PnL", async () => {
    const { chain } = chainWith(
      { maxDailyLoss: 50 },
      {
        realized: -120,
        positions: [pos(10, { unrealized_pnl: 70 }), pos(5, { market_id: OTHER, unrealized_pnl: null })],
      },
    );
    expect(await chain.check(buy(10))).toEqual({ allowed: true });
  });
});

describe("state", () => {
  it("is read once per intent however many checks need it", async () => {
    const { chain, fake } = chainWith({
      maxPositionPerMarket: { contracts: 1e6, notional: 1e6 },
      maxTotalExposure: 1e6,
      maxOrderNotional: 1e6,
      maxDailyLoss: 1e6,
      maxOpenOrders: 1e6,
      priceBand: { maxDistance: 1 },
    });
    expect(await chain.check(buy(10))).toEqual({ allowed: true });
    expect(fake.calls).toEqual({ positions: 1, realizedPnlToday: 1, openOrders: 1, quote: 1 });
  });

  it("fails closed when the state cannot be read or is not a number", async () => {
    const { state } = fakeState();
    const chain = createRiskChain(
      { maxTotalExposure: 100 },
      { state: { ...state, positions: () => Promise.reject(new Error("HTTP 503")) } },
    );
    const d = rejected(await chain.check(buy(10)), "max_exposure");
    expect(d.reason).toBe("The max_exposure check could not run: HTTP 503");
    const nan = chainWith({ maxDailyLoss: 100 }, { realized: Number.NaN }).chain;
    rejected(await nan.check(buy(10)), "max_daily_loss");
  });

  it("needs a complete state provider", () => {
    const { state } = fakeState();
    expect(() =>
      createRiskChain({}, { state: { ...state, quote: undefined } as unknown as RiskState }),
    ).toThrow("deps.state.quote must be a function");
  });
});

describe("kill switch", () => {
  it("cancels everything, blocks every order (reducing ones too) until resumed", async () => {
    const { state } = fakeState({ positions: [pos(100)] });
    const cancelAll = vi.fn(async () => ({ cancelled_count: 2, cancelled_orders: [] }));
    const chain = createRiskChain({}, { state, cancelAll, now: () => 1_000 });
    await expect(chain.kill("manual stop")).resolves.toEqual({ cancelled_count: 2, cancelled_orders: [] });
    expect(cancelAll).toHaveBeenCalledTimes(1);
    for (const intent of [buy(1), sell(10)]) {
      const d = rejected(await chain.check(intent), "kill_switch");
      expect(d.reason).toBe("The kill switch is engaged: manual stop");
      expect(d.details).toEqual({ reason: "manual stop", killedAt: 1_000 });
    }
    expect(chain.status()).toMatchObject({ killed: true, killReason: "manual stop", killedAt: 1_000 });
    chain.resume();
    expect(await chain.check(buy(1))).toEqual({ allowed: true });
    expect(chain.status()).toMatchObject({ killed: false, killReason: null });
  });

  it("stays engaged when cancelAll fails, and works without one", async () => {
    const { state } = fakeState();
    const chain = createRiskChain({}, { state, cancelAll: () => Promise.reject(new Error("venue down")) });
    await expect(chain.kill("panic")).rejects.toThrow("venue down");
    rejected(await chain.check(buy(1)), "kill_switch");
    const bare = createRiskChain({}, { state });
    await expect(bare.kill("stop")).resolves.toBeUndefined();
    rejected(await bare.check(buy(1)), "kill_switch");
  });

  it("blocks an order whose check was under way when it was engaged", async () => {
    const { state } = fakeState();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: RiskState = {
      ...state,
      positions: async () => {
        await gate;
        return [];
      },
    };
    const chain = createRiskChain({ maxTotalExposure: 1_000 }, { state: slow });
    const pending = chain.check(buy(1));
    await chain.kill("now");
    release();
    rejected(await pending, "kill_switch");
  });
});

describe("circuit breaker", () => {
  function breakerChain() {
    let now = 1_000_000;
    const { state } = fakeState();
    const chain = createRiskChain(
      { circuitBreaker: { maxConsecutiveErrors: 3, cooldownMs: 10_000 } },
      { state, now: () => now },
    );
    return { chain, advance: (ms: number) => (now += ms), at: () => now };
  }

  it("opens after N consecutive errors, half-opens after the cool-down, closes on success", async () => {
    const { chain, advance } = breakerChain();
    chain.recordError(new Error("e1"));
    chain.recordError(new Error("e2"));
    expect(await chain.check(buy(1))).toEqual({ allowed: true });
    expect(chain.status().breaker).toMatchObject({ state: "closed", consecutiveErrors: 2 });
    chain.recordError(new Error("HTTP 500"));
    const d = rejected(await chain.check(buy(1)), "circuit_breaker");
    expect(d.reason).toBe(
      "The circuit breaker is open after 3 consecutive errors (last: HTTP 500); orders resume in 10 s",
    );
    expect(d.details).toEqual({
      consecutiveErrors: 3,
      lastError: "HTTP 500",
      openedAt: 1_000_000,
      halfOpensAt: 1_010_000,
    });
    expect(chain.status().breaker).toMatchObject({ enabled: true, state: "open", halfOpensAt: 1_010_000 });

    advance(9_999);
    rejected(await chain.check(buy(1)), "circuit_breaker");
    // A success while open does not cut the cool-down short.
    chain.recordSuccess();
    rejected(await chain.check(buy(1)), "circuit_breaker");
    advance(1);
    expect(chain.status().breaker.state).toBe("half_open");
    expect(await chain.check(buy(1))).toEqual({ allowed: true });
    expect(await chain.check(buy(1))).toEqual({ allowed: true });

    chain.recordSuccess();
    expect(chain.status().breaker).toMatchObject({ state: "closed", consecutiveErrors: 0, openedAt: null });
    chain.recordError("again");
    chain.recordError("again");
    expect(await chain.check(buy(1))).toEqual({ allowed: true });
  });

  it("reopens at the first error while half-open", async () => {
    const { chain, advance, at } = breakerChain();
    for (let i = 0; i < 3; i++) chain.recordError(new Error(`e${i}`));
    advance(10_000);
    expect(chain.status().breaker.state).toBe("half_open");
    chain.recordError(new Error("still failing"));
    const d = rejected(await chain.check(buy(1)), "circuit_breaker");
    expect(d.details).toMatchObject({ openedAt: at(), halfOpensAt: at() + 10_000 });
    advance(10_000);
    expect(await chain.check(buy(1))).toEqual({ allowed: true });
  });

  it("is reset by a success before it opens", async () => {
    const { chain } = breakerChain();
    chain.recordError(1);
    chain.recordError(2);
    chain.recordSuccess();
    chain.recordError(3);
    chain.recordError(4);
    expect(await chain.check(buy(1))).toEqual({ allowed: true });
  });

  it("uses the documented defaults and never opens when not configured", async () => {
    let now = 0;
    const { state } = fakeState();
    const chain = createRiskChain({ circuitBreaker: {} }, { state, now: () => now });
    for (let i = 0; i < RISK_DEFAULTS.circuitBreaker.maxConsecutiveErrors - 1; i++) chain.recordError("x");
    expect(await chain.check(buy(1))).toEqual({ allowed: true });
    chain.recordError("x");
    rejected(await chain.check(buy(1)), "circuit_breaker");
    now += RISK_DEFAULTS.circuitBreaker.cooldownMs;
    expect(await chain.check(buy(1))).toEqual({ allowed: true });

    const off = chainWith({}).chain;
    for (let i = 0; i < 100; i++) off.recordError(new Error("x"));
    expect(await off.check(buy(1))).toEqual({ allowed: true });
    expect(off.status().breaker).toMatchObject({ enabled: false, state: "closed", consecutiveErrors: 100 });
  });
});

describe("custom checks", () => {
  it("run after the built-in checks with the normalized intent and the context", async () => {
    const seen: Array<{ intent: NormalizedOrderIntent; size: number; mid: number | null }> = [];
    const kalshiOnly: RiskCheck = {
      name: "kalshi_only",
      async check(intent, ctx: RiskContext) {
        seen.push({ intent, size: await ctx.positionSize(), mid: (await ctx.quote())?.mid ?? null });
        return intent.market_id.startsWith("kalshi:")
          ? allow()
          : reject("kalshi only", { venue: "polymarket" });
      },
    };
    const { state } = fakeState({ positions: [pos(7)] });
    const chain = createRiskChain({ maxOrderNotional: 100 }, { state }).use(kalshiOnly);
    expect(await chain.check({ market_id: M, side: "buy", price: 0.5, amount: 10 })).toEqual({
      allowed: true,
    });
    expect(seen[0]).toMatchObject({ intent: { outcome: "yes", type: "limit" }, size: 7, mid: 0.5 });
    expect(await chain.check({ ...buy(10), market_id: OTHER })).toEqual({
      allowed: false,
      check: "kalshi_only",
      reason: "kalshi only",
      details: { venue: "polymarket" },
    });
    // The built-in check rejects first; the custom one is not run.
    const before = seen.length;
    rejected(await chain.check({ ...buy(1000), market_id: OTHER }), "max_order_notional");
    expect(seen.length).toBe(before);
    expect(chain.status().checks).toEqual(["kill_switch", "intent", "max_order_notional", "kalshi_only"]);
  });

  it("can be given up front, fail closed when they throw or answer nonsense, and need unique names", async () => {
    const { state } = fakeState();
    const chain = createRiskChain(
      {},
      {
        state,
        checks: [
          { name: "sync_ok", check: () => allow() },
          {
            name: "flaky",
            check: (i) => {
              if (i.amount === 13) throw new Error("unlucky");
              return i.amount === 14 ? (undefined as unknown as ReturnType<typeof allow>) : allow();
            },
          },
        ],
      },
    );
    expect(await chain.check(buy(1))).toEqual({ allowed: true });
    expect(rejected(await chain.check(buy(13)), "flaky").reason).toBe(
      "The flaky check could not run: unlucky",
    );
    expect(rejected(await chain.check(buy(14)), "flaky").reason).toBe(
      "The flaky check returned no valid result",
    );
    expect(() => chain.use({ name: "flaky", check: allow })).toThrow("already in the chain");
    expect(() => chain.use({ name: "max_exposure", check: allow })).toThrow("built-in check");
  });
});

describe("enforce", () => {
  it("throws a RiskRejectedError carrying the decision", async () => {
    const { chain } = chainWith({ maxOrderNotional: 1 });
    await expect(chain.enforce(buy(1))).resolves.toBeUndefined();
    const error = await chain.enforce(buy(10)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RiskRejectedError);
    expect(error).toMatchObject({ check: "max_order_notional", details: { limit: 1 }, intent: buy(10) });
    expect((error as Error).message).toMatch(/^Order rejected by the max_order_notional risk check: /);
  });
});

describe("config", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "crossbook-risk-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const full: RiskConfig = {
    maxPositionPerMarket: { contracts: 1000, notional: 500 },
    maxTotalExposure: 5000,
    maxOrderNotional: 250,
    maxDailyLoss: 200,
    maxOpenOrders: 20,
    priceBand: { maxDistance: 0.1, maxSlippage: 0.05, allowWithoutQuote: false },
    circuitBreaker: { maxConsecutiveErrors: 5, cooldownMs: 30000 },
  };

  it("loads a JSON file, dropping nulls", async () => {
    await expect(loadRiskConfig(file("full.json", JSON.stringify(full)))).resolves.toEqual(full);
    const sparse = file(
      "sparse.json",
      '{ "maxOrderNotional": 0, "maxDailyLoss": null, "priceBand": { "maxSlippage": null, "maxDistance": 0.2 } }',
    );
    await expect(loadRiskConfig(sparse)).resolves.toEqual({
      maxOrderNotional: 0,
      priceBand: { maxDistance: 0.2 },
    });
    await expect(loadRiskConfig(file("empty.json", "{}"))).resolves.toEqual({});
  });

  it("drives a chain", async () => {
    const config = await loadRiskConfig(file("chain.json", '{ "maxOrderNotional": 5 }'));
    const { chain } = chainWith(config);
    expect(await chain.check(buy(10))).toEqual({ allowed: true });
    rejected(await chain.check(buy(11)), "max_order_notional");
  });

  it("reports every bad field with its path", async () => {
    const bad = file(
      "bad.json",
      JSON.stringify({
        maxOrderNotional: "250",
        maxDailyLoss: -5,
        maxOpenOrders: 2.5,
        maxTotalExposure: true,
        maxPosition: 3,
        maxPositionPerMarket: { contracts: -1, shares: 2 },
        priceBand: { maxDistance: 1.5, allowWithoutQuote: "yes" },
        circuitBreaker: { maxConsecutiveErrors: 0, cooldownMs: [] },
      }),
    );
    const error = await loadRiskConfig(bad).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RiskConfigError);
    const e = error as RiskConfigError;
    expect(e.source).toBe(bad);
    expect(e.issues).toEqual([
      { path: "maxOrderNotional", message: 'must be a number ≥ 0, got the string "250"' },
      { path: "maxDailyLoss", message: "must not be negative, got -5" },
      { path: "maxOpenOrders", message: "must be an integer ≥ 0, got 2.5" },
      { path: "maxTotalExposure", message: "must be a number ≥ 0, got true" },
      {
        path: "maxPosition",
        message:
          'unknown key "maxPosition" (known: maxPositionPerMarket, maxTotalExposure, maxOrderNotional, maxDailyLoss, maxOpenOrders, priceBand, circuitBreaker)',
      },
      { path: "maxPositionPerMarket.contracts", message: "must not be negative, got -1" },
      { path: "maxPositionPerMarket.shares", message: 'unknown key "shares" (known: contracts, notional)' },
      { path: "priceBand.maxDistance", message: "must be a number between 0 and 1, got 1.5" },
      { path: "priceBand.allowWithoutQuote", message: 'must be true or false, got the string "yes"' },
      { path: "circuitBreaker.maxConsecutiveErrors", message: "must be an integer ≥ 1, got 0" },
      { path: "circuitBreaker.cooldownMs", message: "must be a number ≥ 0, got an array" },
    ]);
    expect(e.message).toContain(`Invalid risk config in ${bad}:\n  - maxOrderNotional: must be a number ≥ 0`);
  });

  it("rejects empty check objects, non-objects, invalid JSON and missing files", async () => {
    expect(() =>
      parseRiskConfig({ maxPositionPerMarket: {}, priceBand: { allowWithoutQuote: true } }),
    ).toThrow(RiskConfigError);
    const empty = (() => {
      try {
        parseRiskConfig({
          maxPositionPerMarket: {},
          priceBand: { allowWithoutQuote: true },
          maxOrderNotional: 1,
        });
      } catch (e) {
        return e;
      }
    })();
    expect(empty).toBeInstanceOf(RiskConfigError);
    expect((empty as RiskConfigError).issues).toEqual([
      {
        path: "maxPositionPerMarket",
        message: "set contracts and/or notional (or leave maxPositionPerMarket out)",
      },
      { path: "priceBand", message: "set maxDistance and/or maxSlippage (or leave priceBand out)" },
    ]);
    for (const value of [[], "x", null, 3]) {
      expect(() => parseRiskConfig(value)).toThrow(/\(root\): must be an object/);
    }
    expect(() => parseRiskConfig({ priceBand: 0.1 })).toThrow("priceBand: must be an object, got 0.1");
    await expect(loadRiskConfig(file("broken.json", "{ maxOrderNotional: 5 }"))).rejects.toMatchObject({
      name: "RiskConfigError",
      issues: [{ path: "(file)", message: expect.stringMatching(/^not valid JSON: /) }],
    });
    await expect(loadRiskConfig(path.join(dir, "nope.json"))).rejects.toMatchObject({
      issues: [{ path: "(file)", message: "file not found" }],
    });
  });

  it("validates a config written in code the same way", () => {
    const { state } = fakeState();
    expect(() => createRiskChain({ maxOrderNotional: -1 }, { state })).toThrow(
      "Invalid risk config:\n  - maxOrderNotional: must not be negative, got -1",
    );
    expect(() => createRiskChain({ maxOrderNotional: Number.POSITIVE_INFINITY }, { state })).toThrow(
      "must be a number ≥ 0, got Infinity",
    );
    expect(createRiskChain(full, { state }).config).toEqual(full);
  });
});
