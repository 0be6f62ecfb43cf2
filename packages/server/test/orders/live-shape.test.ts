/**
 * How a venue's report of an order is matched to crossbook's order row (a pending order found by
 * its shape) when the venue keeps one direction bit (Kalshi: buy YES ≡ sell NO, sell YES ≡ buy NO,
 * at the YES price).
 */
import { describe, expect, it } from "vitest";
import type { OrderRow } from "../../src/ledger/orders-repo";
import { sameShape } from "../../src/orders/live-poller";

const row = (outcome: string, side: string, price: number) =>
  ({ market_id: "kalshi:T", outcome, side, price, amount: 5_000_000 }) as OrderRow;
// What Kalshi reports for an ask at YES 0.60, read on its YES book.
const venueAsk = {
  marketId: "kalshi:T",
  outcome: "yes",
  side: "sell",
  price: 600_000,
  size: 5_000_000,
} as const;

describe("matching a one-bit venue report to our order", () => {
  it("an ask at YES 0.60 is our sell YES @ 0.60 and our buy NO @ 0.40, nothing else", () => {
    expect(sameShape(venueAsk, row("yes", "sell", 600_000))).toBe(true);
    expect(sameShape(venueAsk, row("no", "buy", 400_000))).toBe(true);
    expect(sameShape(venueAsk, row("yes", "buy", 600_000))).toBe(false);
    expect(sameShape(venueAsk, row("no", "sell", 400_000))).toBe(false);
    expect(sameShape(venueAsk, row("no", "buy", 600_000))).toBe(false);
    expect(sameShape({ ...venueAsk, size: 4_000_000 }, row("yes", "sell", 600_000))).toBe(false);
  });
});
