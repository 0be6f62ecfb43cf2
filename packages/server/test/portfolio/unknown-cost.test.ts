/**
 * Contracts taken over from the venue at unknown cost: the mark covers every contract, but cost,
 * average price and unrealized PnL only those whose cost crossbook knows.
 */
import { describe, expect, it } from "vitest";
import type { PositionRow } from "../../src/ledger/positions-repo";
import { positionView } from "../../src/portfolio/routes";
import { PortfolioService } from "../../src/portfolio/service";

const row = (over: Partial<PositionRow>): PositionRow => ({
  id: "pos_1",
  account_id: "acc_1",
  environment: "live",
  market_id: "kalshi:T",
  outcome: "yes",
  size: 10_000_000,
  reserved: 0,
  cost_basis: 2_000_000,
  realized_pnl: 0,
  fees: 0,
  status: "open",
  resolution: null,
  payout: null,
  redeemable: 0,
  opened_at: "2026-11-27T00:00:00.000Z",
  updated_at: "2026-11-27T00:00:00.000Z",
  closed_at: null,
  resolved_at: null,
  unknown_cost_size: 0,
  ...over,
});

// The store and the executions are not touched by `mark`.
const portfolio = new PortfolioService(null as never, null as never, () => 600_000);

describe("positions with contracts of unknown cost", () => {
  it("values every contract, and measures cost and PnL over the known ones", () => {
    // 4 bought through crossbook for 2.00, 6 taken over from the venue.
    const view = positionView(portfolio.mark(row({ size: 10_000_000, unknown_cost_size: 6_000_000 })), null);
    expect(view).toMatchObject({
      size: 10,
      unknown_cost_size: 6,
      cost_basis: 2,
      average_price: 0.5,
      current_price: 0.6,
      market_value: 6,
      // 4 × 0.60 − 2.00
      unrealized_pnl: 0.4,
    });
  });

  it("has no average price or unrealized PnL when no contract's cost is known", () => {
    const view = positionView(
      portfolio.mark(row({ size: 5_000_000, unknown_cost_size: 5_000_000, cost_basis: 0 })),
      null,
    );
    expect(view).toMatchObject({ average_price: null, unrealized_pnl: null, market_value: 3 });
  });

  it("is unchanged for positions of known cost", () => {
    const view = positionView(portfolio.mark(row({ size: 4_000_000 })), null);
    expect(view).toMatchObject({
      average_price: 0.5,
      unrealized_pnl: 0.4,
      source: "crossbook",
      reconciliation: null,
    });
  });
});
