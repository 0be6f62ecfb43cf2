/**
 * Arbitrage from book depth after fees: hand-computed books (Kalshi's rounding per fill with the
 * order's fee accumulator, Polymarket's rate × p(1 − p)), identity and complement legs, no edge, an
 * edge that vanishes with depth, and a property check that the reported size maximises profit over
 * every size.
 */

import { seededRandom } from "@crossbook/fakes/random";
import { fillFee, kalshiSchedule, POLYMARKET_FREE, polymarketSchedule } from "@crossbook/fees";
import { describe, expect, it } from "vitest";
import { type FeeModel, notional } from "../../src/ledger/money";
import { type ArbitrageMarket, analyzeArbitrage, type DirectionResult } from "../../src/prices/arbitrage";
import { MICROS } from "../../src/venues/decimal";
import type { BookLevel, OrderBook } from "../../src/venues/model";

const C = MICROS; // one contract, or one dollar
const cents = (n: number) => n * 10_000;
/** [price in cents, contracts] -> a book level. */
const lv = ([price, size]: [number, number]): BookLevel => ({
  price: cents(price),
  size: Math.round(size * C),
});

function market(
  id: string,
  venue: "kalshi" | "polymarket",
  asks: { yes?: Array<[number, number]>; no?: Array<[number, number]> },
  fees: FeeModel = venue === "kalshi" ? kalshiSchedule("quadratic", 1) : POLYMARKET_FREE,
): ArbitrageMarket {
  const book: OrderBook = {
    marketId: id,
    yes: { bids: [], asks: (asks.yes ?? []).map(lv) },
    no: { bids: [], asks: (asks.no ?? []).map(lv) },
    timestamp: "2026-11-22T12:00:00.000Z",
    sequence: null,
  };
  return { marketId: id, venue, book, fees };
}

function analyze(input: Parameters<typeof analyzeArbitrage>[0]) {
  const result = analyzeArbitrage(input);
  if (!result.arbitrageable) throw new Error(`not arbitrageable: ${result.message}`);
  return result;
}

const legsOf = (d: DirectionResult) => d.legs.map((l) => `${l.marketId}:${l.outcome}`);

describe("analyzeArbitrage: identity pairs", () => {
  it("walks both books level by level, each level one fill of the leg's order with Kalshi's rounding", () => {
    const pm = market("polymarket:A", "polymarket", { yes: [[40, 100]], no: [[70, 100]] });
    const kx = market("kalshi:B", "kalshi", {
      yes: [[70, 100]],
      no: [
        [55, 50],
        [57, 100],
      ],
    });
    const { directions } = analyze({ a: pm, b: kx, relation: "identity", polarity: "same" });
    const [best, other] = directions;
    // YES on A at 0.40 + NO on B at 0.55: 0.05 a pair before fees.
    expect(legsOf(best)).toEqual(["polymarket:A:yes", "kalshi:B:no"]);
    expect(legsOf(other)).toEqual(["polymarket:A:no", "kalshi:B:yes"]);
    expect(best.depth).toBe(100 * C);
    // One contract: Kalshi's fee 0.07 × 0.55 × 0.45 = $0.017325, $0.0174 to the centicent, and the
    // balance change (−0.5674) floored to the cent: 2 cents.
    expect(best.first).toMatchObject({ size: C, cost: cents(95), fees: cents(2), profit: cents(3) });
    // 50 at 0.55 then 50 at 0.57 on Kalshi: trade fees 0.8663 and 0.8579, the balance changes floored
    // to the cent: 87 + 86 cents, the 0.58 cent of rounding the order overpaid short of a rebate (one
    // fill per level; a single fill of the whole order would cost 172).
    expect(best.best).toEqual({
      size: 100 * C,
      cost: 96 * C,
      fees: cents(173),
      payout: 100 * C,
      profit: cents(227),
      legs: [
        { cost: 40 * C, fees: 0, averagePrice: cents(40) },
        { cost: 56 * C, fees: cents(173), averagePrice: cents(56) },
      ],
    });
    expect(best.rows).toEqual([
      {
        prices: [cents(40), cents(55)],
        size: 50 * C,
        cumulativeSize: 50 * C,
        grossEdge: cents(5),
        fees: cents(87),
        profit: cents(163),
        cumulativeProfit: cents(163),
      },
      {
        prices: [cents(40), cents(57)],
        size: 50 * C,
        cumulativeSize: 100 * C,
        grossEdge: cents(3),
        fees: cents(86),
        profit: cents(64),
        cumulativeProfit: cents(227),
      },
    ]);
    expect(best.moreRows).toBe(false);
    // The other direction (NO at 0.70 + YES at 0.70) loses from the first contract.
    expect(other.first!.profit).toBeLessThan(0);
  });

  it("charges Polymarket's shares × rate × p(1 − p) (rate 0.05: not the 1000 bps cap)", () => {
    const pm = market(
      "polymarket:A",
      "polymarket",
      { yes: [[40, 100]] },
      polymarketSchedule({ rate: 0.05, exponent: 1, takerOnly: true, capBps: 1000 }),
    );
    const kx = market("kalshi:B", "kalshi", {
      no: [
        [55, 50],
        [57, 100],
      ],
    });
    const [best] = analyze({ a: pm, b: kx, relation: "identity" }).directions;
    // 0.05 × 0.40 × 0.60 = $0.012 a contract on Polymarket (5.00 at 0.50 with a 1000 bps "rate").
    expect(best.first).toMatchObject({ fees: cents(2) + 12_000, profit: cents(3) - 12_000 });
    // A pair at 0.57 still nets $0.000843 before rounding; the best size is 98 pairs, where Kalshi's
    // second fill (48 @ 0.57, trade fee 0.8236) gets back the cent its order overpaid: 0.87 + 0.82 on
    // Kalshi, 98 × 0.012 on Polymarket. 100 pairs make $1.07.
    expect(best.best).toMatchObject({ size: 98 * C, fees: cents(169) + 1_176_000, profit: 1_074_000 });
    expect(best.best!.legs[0]).toEqual({ cost: 39.2 * C, fees: 1_176_000, averagePrice: cents(40) });
  });

  it("stops where the edge vanishes with depth, and judges the minimum size on its own", () => {
    const pm = market("polymarket:A", "polymarket", {
      yes: [
        [40, 10],
        [47, 100],
      ],
    });
    const kx = market("kalshi:B", "kalshi", { no: [[55, 100]] });
    const result = analyze({ a: pm, b: kx, relation: "identity", minSize: 20 * C });
    const [best] = result.directions;
    // 10 pairs at 0.40 + 0.55: $0.50 − ceil(17.325) = 18 cents. The 11th pair (0.47 + 0.55) loses.
    expect(best.best).toMatchObject({ size: 10 * C, profit: cents(32), fees: cents(18) });
    expect(result.minSize).toBe(20 * C);
    // At 20 pairs: 20 − (4.00 + 4.70) − 11.00 − ceil(34.65) cents = −$0.05.
    expect(best.bestFromMin).toMatchObject({ size: 20 * C, profit: -cents(5) });
    expect(best.rows.map((r) => r.grossEdge)).toEqual([cents(5), -cents(2)]);
  });

  it("finds no edge when the asks add up to $1 or more", () => {
    const pm = market("polymarket:A", "polymarket", { yes: [[50, 100]], no: [[52, 100]] });
    const kx = market("kalshi:B", "kalshi", { yes: [[49, 100]], no: [[50, 100]] });
    const { directions } = analyze({ a: pm, b: kx, relation: "identity" });
    for (const d of directions) {
      expect(d.best!.profit).toBeLessThan(0);
      expect(d.first!.profit).toBeLessThan(0);
    }
    // NO on A at 0.52 + YES on B at 0.49 = 1.01; YES at 0.50 + NO at 0.50 = 1.00 plus 2 cents of fee.
    expect(directions[0].best).toMatchObject({ size: C, profit: -cents(2) });
    expect(legsOf(directions[0])).toEqual(["polymarket:A:yes", "kalshi:B:no"]);
  });

  it("sizes the pair by the thinner book: no position without both legs", () => {
    const pm = market("polymarket:A", "polymarket", { yes: [[30, 1000]] });
    const kx = market("kalshi:B", "kalshi", { no: [[60, 7.5]] });
    const [best] = analyze({ a: pm, b: kx, relation: "identity" }).directions;
    expect(best.depth).toBe(7 * C);
    expect(best.best!.size).toBe(7 * C);
    const empty = analyze({
      a: market("polymarket:A", "polymarket", { yes: [[30, 10]] }),
      b: market("kalshi:B", "kalshi", {}),
      relation: "identity",
    }).directions[0];
    expect(empty).toMatchObject({ depth: 0, first: null, best: null, bestFromMin: null, rows: [] });
  });

  it("puts the better direction first", () => {
    const pm = market("polymarket:A", "polymarket", { yes: [[70, 100]], no: [[20, 100]] });
    const kx = market("kalshi:B", "kalshi", { yes: [[60, 100]], no: [[45, 100]] });
    const [best, other] = analyze({ a: pm, b: kx, relation: "identity" }).directions;
    // NO on A at 0.20 + YES on B at 0.60.
    expect(legsOf(best)).toEqual(["polymarket:A:no", "kalshi:B:yes"]);
    expect(best.best!.profit).toBeGreaterThan(0);
    expect(other.best!.profit).toBeLessThan(0);
  });
});

describe("analyzeArbitrage: complement pairs and refusals", () => {
  it("buys YES on both (or NO on both) when one's YES is the other's NO", () => {
    const kx = market("kalshi:A", "kalshi", { yes: [[30, 20]], no: [[72, 20]] });
    const pm = market("polymarket:B", "polymarket", { yes: [[60, 20]], no: [[42, 20]] });
    const result = analyze({ a: kx, b: pm, relation: "complement", polarity: "inverted" });
    const [best, other] = result.directions;
    expect(result.relation).toBe("complement");
    expect(legsOf(best)).toEqual(["kalshi:A:yes", "polymarket:B:yes"]);
    expect(legsOf(other)).toEqual(["kalshi:A:no", "polymarket:B:no"]);
    // 0.30 + 0.60 = 0.90; Kalshi's fee at 0.30 is 1.47 cents a contract: 2 cents on one, 30 on 20.
    expect(best.first).toMatchObject({ profit: cents(8) });
    expect(best.best).toMatchObject({ size: 20 * C, fees: cents(30), profit: cents(170) });
    expect(other.best!.profit).toBeLessThan(0);
  });

  it("refuses subset, superset, overlap and disjoint pairs, and a polarity that contradicts the relation", () => {
    const a = market("polymarket:A", "polymarket", { yes: [[10, 100]] });
    const b = market("kalshi:B", "kalshi", { no: [[10, 100]] });
    for (const relation of ["subset", "superset", "overlap", "disjoint"] as const) {
      const result = analyzeArbitrage({ a, b, relation });
      expect(result).toMatchObject({ arbitrageable: false, reason: "relation_not_arbitrageable" });
    }
    expect(analyzeArbitrage({ a, b, relation: "identity", polarity: "inverted" })).toMatchObject({
      arbitrageable: false,
      reason: "polarity_mismatch",
    });
    expect(analyzeArbitrage({ a, b, relation: "complement", polarity: "same" })).toMatchObject({
      arbitrageable: false,
      reason: "polarity_mismatch",
    });
  });

  it("limits the breakdown to maxRows and says there is more", () => {
    const a = market("polymarket:A", "polymarket", {
      yes: Array.from({ length: 8 }, (_, i) => [20 + i, 5] as [number, number]),
    });
    const b = market("kalshi:B", "kalshi", { no: [[50, 100]] });
    const [best] = analyze({ a, b, relation: "identity", maxRows: 3 }).directions;
    expect(best.rows).toHaveLength(3);
    expect(best.moreRows).toBe(true);
    expect(best.rows[2]).toMatchObject({ cumulativeSize: 15 * C, prices: [cents(22), cents(50)] });
  });
});

// --- property: the reported size is the best of all sizes -----------------------------------------

/** An independent walk: what `size` contracts cost on these asks, one fill per level of one order. */
function naiveCost(asks: readonly BookLevel[], fees: FeeModel, size: number): number {
  let left = size;
  let total = 0;
  let carry = 0;
  for (const level of [...asks].sort((x, y) => x.price - y.price)) {
    if (left <= 0) break;
    const take = Math.min(left, level.size);
    const charged = fillFee(fees, { price: level.price, size: take, side: "buy", liquidity: "taker" }, carry);
    carry = charged.carry;
    total += notional(level.price, take) + charged.fee;
    left -= take;
  }
  if (left > 0) throw new Error("walk beyond the book");
  return total;
}

describe("analyzeArbitrage: property", () => {
  it("reports the size that maximises profit over every size (the largest on ties), on random books", () => {
    const random = seededRandom(20261122);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    let withEdge = 0;
    for (let round = 0; round < 400; round++) {
      const big = random() < 0.3;
      const levels = (center: number): BookLevel[] => {
        const n = 1 + Math.floor(random() * 5);
        const out: BookLevel[] = [];
        // Distinct prices: a level per price, as venues show them.
        const prices = new Set<number>();
        while (prices.size < n) {
          prices.add(Math.min(99, Math.max(1, center + Math.floor(random() * 9) - 2)));
        }
        for (const price of prices) {
          const contracts = 1 + Math.floor(random() * (big ? 3000 : 40));
          // Polymarket sizes may be fractional.
          const fraction = random() < 0.3 ? pick([0, 0.25, 0.5, 0.01]) : 0;
          out.push({ price: cents(price), size: Math.round((contracts + fraction) * C) });
        }
        return out;
      };
      const pa = 5 + Math.floor(random() * 85);
      // Around $1 in total, so edges appear, vanish and go negative.
      const pb = Math.max(1, Math.min(99, 100 - pa - 6 + Math.floor(random() * 9)));
      const kalshiFirst = random() < 0.5;
      const polyFee: FeeModel = pick([
        POLYMARKET_FREE,
        polymarketSchedule({ rate: 0.03, exponent: 1, capBps: 1000 }),
        polymarketSchedule({ rate: 0.07, exponent: 1, capBps: 1000 }),
        polymarketSchedule({ rate: 0.25, exponent: 2, capBps: 1000 }),
        polymarketSchedule({ rate: 0.05, exponent: 0.5 }),
      ]);
      const kalshiFee: FeeModel = pick([
        kalshiSchedule("quadratic", 1),
        kalshiSchedule("quadratic", 0.5),
        kalshiSchedule("quadratic_with_maker_fees", 1),
        kalshiSchedule("flat", 1),
      ]);
      const a: ArbitrageMarket = {
        marketId: "A",
        venue: kalshiFirst ? "kalshi" : "polymarket",
        book: {
          marketId: "A",
          yes: { bids: [], asks: levels(pa) },
          no: { bids: [], asks: levels(pb) },
          timestamp: "t",
          sequence: null,
        },
        fees: kalshiFirst ? kalshiFee : polyFee,
      };
      const b: ArbitrageMarket = {
        marketId: "B",
        venue: kalshiFirst ? "polymarket" : "kalshi",
        book: {
          marketId: "B",
          yes: { bids: [], asks: levels(pb) },
          no: { bids: [], asks: levels(pa) },
          timestamp: "t",
          sequence: null,
        },
        fees: kalshiFirst ? polyFee : kalshiFee,
      };
      const relation = pick(["identity", "complement"] as const);
      const minSize = pick([C, 5 * C, 10 * C, 25 * C]);
      const result = analyze({ a, b, relation, minSize });
      for (const d of result.directions) {
        const legBook = (m: ArbitrageMarket, outcome: "yes" | "no") =>
          outcome === "yes" ? m.book.yes.asks : m.book.no.asks;
        const asksA = legBook(a, d.legs[0].outcome);
        const asksB = legBook(b, d.legs[1].outcome);
        const total = (asks: BookLevel[]) => asks.reduce((s, l) => s + l.size, 0);
        const depth = Math.floor(Math.min(total(asksA), total(asksB)) / C) * C;
        expect(d.depth).toBe(depth);
        let best: { size: number; profit: number } | null = null;
        let fromMin: { size: number; profit: number } | null = null;
        for (let size = C; size <= depth; size += C) {
          const profit = size - naiveCost(asksA, a.fees, size) - naiveCost(asksB, b.fees, size);
          if (!best || profit >= best.profit) best = { size, profit };
          if (size >= minSize && (!fromMin || profit >= fromMin.profit)) fromMin = { size, profit };
        }
        expect(d.best && { size: d.best.size, profit: d.best.profit }).toEqual(best);
        expect(d.bestFromMin && { size: d.bestFromMin.size, profit: d.bestFromMin.profit }).toEqual(fromMin);
        if (best && best.profit > 0) withEdge++;
      }
    }
    // The books are drawn so that a fair share of directions pay: the check is not vacuous.
    expect(withEdge).toBeGreaterThan(50);
  });
});
