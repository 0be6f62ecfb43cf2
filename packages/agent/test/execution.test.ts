import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Crossbook, createRiskChain, Executor, liveRiskState, split } from "../src/index";
import { type Demo, startDemo } from "./support/demo";

describe("split", () => {
  it("slices an amount in cents with the remainder last", () => {
    expect(split(10, 3)).toEqual([3.33, 3.33, 3.34]);
    expect(split(5, 1)).toEqual([5]);
  });
});

describe("arbitrage executor with a scripted client", () => {
  /** A client whose compare shows a verified identity pair and whose second leg never fills. */
  function scripted(secondLegFills: boolean) {
    const placed: Array<Record<string, unknown>> = [];
    let n = 0;
    const client = {
      prices: {
        compare: async () => ({
          arbitrage: {
            match_id: "mat_1",
            status: "verified",
            size: 50,
            avg_edge: 0.03,
            edge_first_contract: 0.04,
            legs: [
              { platform: "kalshi", market_id: "kalshi:A", outcome: "yes", best_ask: 0.45 },
              { platform: "polymarket", market_id: "polymarket:B", outcome: "no", best_ask: 0.5 },
            ],
          },
        }),
      },
      orders: {
        place: async (order: Record<string, unknown>) => {
          placed.push(order);
          const id = `ord_${++n}`;
          const second = order.market_id === "polymarket:B";
          const filled = second && !secondLegFills ? 0 : (order.amount as number);
          return {
            id,
            market_id: order.market_id,
            side: order.side,
            outcome: order.outcome,
            amount: order.amount,
            price: order.price ?? 0.4,
            filled_amount: filled,
            average_fill_price: filled > 0 ? ((order.price as number) ?? 0.4) : null,
            status: filled > 0 ? "filled" : "cancelled",
          };
        },
      },
    } as unknown as Crossbook;
    return { client, placed };
  }

  it("places both legs when the second fills", async () => {
    const { client, placed } = scripted(true);
    const report = await new Executor(client).arbitrage("xev_1", 20, { minEdge: 0.01 });
    expect(report.status).toBe("done");
    expect(report.filled).toBe(20);
    expect(placed.map((o) => [o.market_id, o.side, o.outcome, o.time_in_force])).toEqual([
      ["kalshi:A", "buy", "yes", "IOC"],
      ["polymarket:B", "buy", "no", "IOC"],
    ]);
  });

  it("unwinds the first leg when the second does not fill", async () => {
    const { client, placed } = scripted(false);
    const report = await new Executor(client).arbitrage("xev_1", 20, { minEdge: 0.01 });
    expect(report.status).toBe("partial");
    expect(placed).toHaveLength(3);
    expect(placed[2]).toMatchObject({
      market_id: "kalshi:A",
      side: "sell",
      outcome: "yes",
      amount: 20,
      type: "market",
    });
    expect(report.steps.at(-1)?.reason).toMatch(/unwind/);
  });

  it("refuses an edge below the minimum without placing anything", async () => {
    const { client, placed } = scripted(true);
    const report = await new Executor(client).arbitrage("xev_1", 20, { minEdge: 0.05 });
    expect(report.status).toBe("failed");
    expect(report.steps[0]!.action).toBe("skipped");
    expect(placed).toHaveLength(0);
  });
});

describe("execution helpers against a running crossbook", () => {
  let demo: Demo;
  let client: Crossbook;
  let exec: Executor;
  let marketId: string;
  let ask: number;

  beforeAll(async () => {
    demo = await startDemo();
    client = new Crossbook({ apiKey: demo.sandboxKey, environment: "sandbox", baseUrl: demo.url });
    exec = new Executor(client, { pollMs: 50 });
    for (let i = 0; i < 100 && !marketId; i++) {
      const { data } = await client.markets.list({ venue: "kalshi", status: "open", limit: 50 });
      const m = data.find(
        (x) => x.best_ask !== null && x.best_ask < 0.9 && x.best_bid !== null && x.best_bid > 0.1,
      );
      if (m) {
        marketId = m.id;
        ask = m.best_ask!;
      } else await new Promise((r) => setTimeout(r, 200));
    }
    expect(marketId).toBeDefined();
  }, 90_000);
  afterAll(async () => {
    await demo?.close();
  });

  it("market order with the slippage guard fills and reports the fill", async () => {
    const report = await exec.market({ market_id: marketId, side: "buy", amount: 5, maxSlippage: 0.05 });
    expect(report.status).toBe("done");
    expect(report.filled).toBe(5);
    expect(report.average_price).toBeGreaterThan(0);
    expect(report.steps[0]).toMatchObject({ action: "filled", market_id: marketId, filled_amount: 5 });
  });

  it("twap places its slices and iceberg works slice after slice", async () => {
    const twap = await exec.twap({ market_id: marketId, side: "buy", amount: 6, slices: 3, intervalMs: 10 });
    expect(twap.steps.map((s) => s.amount)).toEqual([2, 2, 2]);
    expect(twap.filled).toBe(6);
    const iceberg = await exec.iceberg({
      market_id: marketId,
      side: "buy",
      price: Math.min(0.99, ask + 0.05),
      amount: 9,
      visible: 3,
      timeoutMs: 20_000,
    });
    expect(iceberg.status).toBe("done");
    expect(iceberg.filled).toBe(9);
    expect(
      iceberg.steps.filter((s) => s.action === "placed" || s.action === "filled").length,
    ).toBeGreaterThanOrEqual(3);
  });

  it("chase rests at the best bid under its cap and cancels at the timeout", async () => {
    const report = await exec.chase({
      market_id: marketId,
      side: "buy",
      amount: 5,
      priceCap: 0.05,
      timeoutMs: 400,
    });
    expect(report.steps[0]).toMatchObject({ action: "placed", price: 0.05 });
    expect(report.steps.at(-1)!.action).toBe("cancelled");
    const { data: open } = await client.orders.list({ market_id: marketId });
    expect(open).toHaveLength(0);
  });

  it("closes a position and cancels everything", async () => {
    const { data: positions } = await client.positions.list({ market_id: marketId });
    const position = positions.find((p) => p.size > 0)!;
    const closed = await exec.closePosition(position.id, { maxSlippage: 0.2 });
    expect(closed.steps[0]).toMatchObject({ side: "sell", market_id: marketId });
    await exec.limit({ market_id: marketId, side: "buy", price: 0.02, amount: 5 });
    await exec.limit({ market_id: marketId, side: "buy", price: 0.03, amount: 5 });
    const cancelled = await exec.cancelAll({ market_id: marketId });
    expect(cancelled.steps.filter((s) => s.action === "cancelled")).toHaveLength(2);
  });

  it("the risk chain on live state refuses an order over its notional limit, and the kill switch cancels", async () => {
    const chain = createRiskChain(
      { maxOrderNotional: 1 },
      { state: liveRiskState(client), cancelAll: () => client.orders.cancelAll() },
    );
    const guarded = new Executor(client, { check: (o) => chain.check(o) });
    const small = await guarded.limit({ market_id: marketId, side: "buy", price: 0.02, amount: 5 });
    expect(small.steps[0]!.action).toBe("placed");
    const big = await guarded.limit({ market_id: marketId, side: "buy", price: 0.5, amount: 5 });
    expect(big.steps[0]).toMatchObject({ action: "rejected" });
    expect(big.steps[0]!.reason).toMatch(/risk:/);
    const cancelled = await chain.kill("test");
    expect(cancelled?.cancelled_count).toBeGreaterThanOrEqual(1);
    const blocked = await guarded.limit({ market_id: marketId, side: "buy", price: 0.02, amount: 5 });
    expect(blocked.steps[0]!.action).toBe("rejected");
    expect(chain.status()).toMatchObject({ killed: true });
  });

  it("a pre-trade check can refuse an order before it is sent", async () => {
    const guarded = new Executor(client, {
      check: (o) => ({ allowed: o.amount <= 1, reason: "max order size 1" }),
    });
    const before = (await client.orders.list({ status: "all", limit: 1 })).meta.total;
    const report = await guarded.limit({ market_id: marketId, side: "buy", price: 0.02, amount: 5 });
    expect(report.status).toBe("failed");
    expect(report.steps[0]).toMatchObject({ action: "rejected", reason: "risk: max order size 1" });
    expect((await client.orders.list({ status: "all", limit: 1 })).meta.total).toBe(before);
  });
});
