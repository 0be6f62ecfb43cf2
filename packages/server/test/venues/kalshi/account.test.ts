/** Offline fixture tests: Kalshi portfolio objects (VENUES.md §2.6) in, our model out. */
import { describe, expect, it } from "vitest";
import {
  normalizeBalance,
  normalizeFill,
  normalizeOrder,
  normalizePosition,
} from "../../../src/venues/kalshi/account";
import { fixture, recorder } from "./fixtures";

const NOW = "2026-11-22T12:30:00.000Z";

describe("portfolio objects", () => {
  const ctx = { report: () => {}, now: NOW };

  it("order: one direction bit read on the YES book (ask = sell YES at the YES price), counts", () => {
    const order = normalizeOrder(fixture<{ order: unknown }>("order.json").order, ctx);
    expect(order).toEqual({
      venueOrderId: "ee6d2c0e-7e0a-4d6b-9d1b-2f5a2e6b9c01",
      marketId: "kalshi:KXFEDDECISION-26DEC-H0",
      outcome: "yes",
      side: "sell",
      price: 420_000,
      size: 10_000_000,
      filledSize: 2_000_000,
      status: "open",
      createdAt: "2026-11-22T12:00:00.000Z",
      clientOrderId: "my-order-1",
    });
  });

  // docs.kalshi.com/getting_started/order_direction: buy YES and sell NO both give (yes, bid), buy NO
  // and sell YES both give (no, ask). The venue cannot tell the pairs apart, so each reads as the
  // YES-book order it is: a user's "sell YES @ 0.60" comes back as exactly that.
  it.each([
    ["(yes, bid), buy YES or sell NO,", "buy", { outcome_side: "yes", book_side: "bid" }],
    ["(no, ask), sell YES or buy NO,", "sell", { outcome_side: "no", book_side: "ask" }],
    ["book_side ask alone", "sell", { book_side: "ask" }],
    ["outcome_side yes alone", "buy", { outcome_side: "yes" }],
  ])("%s reads as %s YES at the YES price", (_name, side, direction) => {
    const raw = { order_id: "o", ticker: "T", status: "resting", ...direction };
    const order = normalizeOrder(
      { ...raw, yes_price_dollars: "0.6000", no_price_dollars: "0.4000", initial_count_fp: "1.00" },
      ctx,
    );
    expect([order.outcome, order.side, order.price]).toEqual(["yes", side, 600_000]);
  });

  it("a sell YES @ 0.60 at the venue comes back as sell YES @ 0.60 from orders and fills", () => {
    const wire = {
      outcome_side: "no",
      book_side: "ask",
      yes_price_dollars: "0.6000",
      no_price_dollars: "0.4000",
    };
    const order = normalizeOrder(
      { order_id: "o", ticker: "T", status: "resting", initial_count_fp: "5.00", ...wire },
      ctx,
    );
    const fill = normalizeFill(
      { fill_id: "f", order_id: "o", ticker: "T", count_fp: "5.00", fee_cost: "0.0000", ...wire },
      ctx,
    );
    for (const o of [order, fill]) expect([o.outcome, o.side, o.price]).toEqual(["yes", "sell", 600_000]);
  });

  it("combinations the venue never sends are reported; book_side decides", () => {
    const r = recorder();
    const order = normalizeOrder(
      {
        order_id: "o",
        ticker: "T",
        status: "resting",
        outcome_side: "yes",
        book_side: "ask",
        yes_price_dollars: "0.6000",
        initial_count_fp: "1.00",
      },
      { report: r.report, now: NOW },
    );
    expect([order.outcome, order.side, order.price]).toEqual(["yes", "sell", 600_000]);
    expect(r.kinds()).toEqual(["direction_fields_disagree"]);
  });

  it("order with only the deprecated side/action, no initial count: reported, still read", () => {
    const r = recorder();
    const order = normalizeOrder(fixture<{ order: unknown }>("order-legacy-only.json").order, {
      report: r.report,
      now: NOW,
    });
    expect(order).toMatchObject({
      outcome: "yes",
      side: "sell",
      price: 990_000,
      size: 3_000_000,
      status: "filled",
    });
    expect(r.kinds()).toEqual(["deprecated_side_action_only"]);
  });

  it("fills, positions (signed position_fp), balance (cents and balance_dollars)", () => {
    const fills = fixture<{ fills: unknown[] }>("fills.json").fills.map((f) => normalizeFill(f, ctx));
    expect(fills[0]).toEqual({
      venueFillId: "f-1",
      venueOrderId: "o-1",
      marketId: "kalshi:KXFEDDECISION-26DEC-H0",
      outcome: "yes",
      side: "buy",
      price: 420_000,
      size: 10_000_000,
      fee: 180_000,
      liquidity: "taker",
      timestamp: new Date(1795348800 * 1000).toISOString(),
    });
    // (no, ask) at YES 0.40: sell YES @ 0.40, the same order as buy NO @ 0.60.
    expect(fills[1]).toMatchObject({
      outcome: "yes",
      side: "sell",
      price: 400_000,
      size: 2_500_000,
      fee: 0,
      liquidity: "maker",
    });

    const positions = fixture<{ market_positions: unknown[] }>("positions.json").market_positions.map((p) =>
      normalizePosition(p, ctx),
    );
    expect(positions).toEqual([
      { marketId: "kalshi:KXFEDDECISION-26DEC-H0", outcome: "yes", size: 10_000_000, averagePrice: 420_000 },
      { marketId: "kalshi:KXCPI-26OCT-T0.3", outcome: "no", size: 3_000_000, averagePrice: 580_000 },
      null,
    ]);

    expect(normalizeBalance(fixture("balance.json"), ctx)).toBe(1_000_000_000);
    expect(normalizeBalance({ balance: 12345 }, ctx)).toBe(123_450_000);
    const r = recorder();
    expect(
      normalizeBalance({ balance: 100, balance_dollars: "2.0000" }, { report: r.report, now: NOW }),
    ).toBe(2_000_000);
    expect(r.kinds()).toEqual(["balance_fields_disagree"]);
  });
});
