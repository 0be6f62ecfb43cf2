/**
 * The portfolio reads cash and venue holdings through the `Execution` interface (orders/execution.ts)
 * of the key's environment, and nothing else: a live key's cash is the sum of each live venue's
 * execution, its venue holdings their answers; a sandbox key asks the sandbox execution only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Owner } from "../../src/access/owner";
import type { Cash, Execution, Executions } from "../../src/orders/execution";
import type { VenueSnapshot } from "../../src/portfolio/holdings";
import { PortfolioService } from "../../src/portfolio/service";
import { openTestStore, type TestStore } from "../support/store";

/** An execution that only reports: its cash and holdings are given, and it counts who asked. */
function reporting(cash: Cash, snapshots: VenueSnapshot[] = []) {
  const asked: string[] = [];
  const execution: Execution = {
    place: () => Promise.reject(new Error("not here")),
    cancel: () => Promise.reject(new Error("not here")),
    read: () => Promise.reject(new Error("not here")),
    fills: () => Promise.reject(new Error("not here")),
    balance: async (owner) => {
      asked.push(`balance:${owner.environment}`);
      return cash;
    },
    positions: async (owner) => {
      asked.push(`positions:${owner.environment}`);
      return snapshots;
    },
  };
  return { execution, asked };
}

describe("the portfolio reads each environment's executions", () => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore("sqlite");
  });
  afterAll(() => t.close());

  const live: Owner = { accountId: "acc_exec", environment: "live" };
  const sandbox: Owner = { accountId: "acc_exec", environment: "sandbox" };

  function setup() {
    const sim = reporting({ available: 7_000_000, locked: 1_000_000 });
    const kalshi = reporting({ available: 2_000_000, locked: 500_000 }, [
      {
        venue: "kalshi",
        status: "ok",
        reason: null,
        checkedAt: "2026-11-28T00:00:00.000Z",
        positions: [
          {
            venue: "kalshi",
            marketId: "kalshi:KX-1",
            outcome: "yes",
            size: 3_000_000,
            averagePrice: 400_000,
          },
        ],
      },
    ]);
    const polymarket = reporting({ available: 5_000_000, locked: 0 });
    const executions: Executions = {
      sandbox: sim.execution,
      live: new Map([
        ["kalshi", kalshi.execution],
        ["polymarket", polymarket.execution],
      ]),
    };
    return {
      sim,
      kalshi,
      polymarket,
      portfolio: new PortfolioService(t.store.db, executions, () => 500_000),
    };
  }

  it("a live balance sums every live venue's cash, and never asks the sandbox", async () => {
    const { sim, kalshi, polymarket, portfolio } = setup();
    const view = await portfolio.balance(live);
    expect(view).toMatchObject({
      environment: "live",
      available: 7_000_000,
      locked: 500_000,
      total: 7_500_000,
    });
    expect(kalshi.asked).toEqual(["balance:live"]);
    expect(polymarket.asked).toEqual(["balance:live"]);
    expect(sim.asked).toEqual([]);
  });

  it("a sandbox balance is the sandbox execution's cash, and never asks a venue", async () => {
    const { sim, kalshi, polymarket, portfolio } = setup();
    const view = await portfolio.balance(sandbox);
    expect(view).toMatchObject({ environment: "sandbox", available: 7_000_000, locked: 1_000_000 });
    expect(sim.asked).toEqual(["balance:sandbox"]);
    expect(kalshi.asked).toEqual([]);
    expect(polymarket.asked).toEqual([]);
  });

  it("a live key's positions list what the live executions report holding", async () => {
    const { sim, kalshi, portfolio } = setup();
    const page = await portfolio.list(live, {}, { limit: 10, offset: 0 });
    expect(page.positions).toHaveLength(1);
    expect(page.positions[0]).toMatchObject({
      source: "venue",
      row: { market_id: "kalshi:KX-1", size: 3_000_000 },
    });
    expect(page.venues?.map((v) => v.venue)).toEqual(["kalshi"]);
    expect(kalshi.asked).toEqual(["positions:live"]);
    expect(sim.asked).toEqual([]);
  });

  it("a sandbox key's positions are the ledger's alone", async () => {
    const { sim, kalshi, portfolio } = setup();
    const page = await portfolio.list(sandbox, {}, { limit: 10, offset: 0 });
    expect(page).toEqual({ positions: [], total: 0 });
    expect(sim.asked).toEqual([]);
    expect(kalshi.asked).toEqual([]);
  });
});
