/** Kalshi taker fee ceil(0.07 × C × P × (1 − P)) to the cent, against hand-computed values. */
import { describe, expect, it } from "vitest";
import { kalshiTakerFee } from "../../../src/venues/kalshi/fees";

const c = (n: number) => n * 1_000_000;

describe("kalshiTakerFee", () => {
  it.each([
    // contracts, price, fee in dollars (hand-computed)
    [100, 500_000, 1.75], // 0.07 × 100 × 0.5 × 0.5 = 1.75 exactly
    [100, 200_000, 1.12], // 0.07 × 100 × 0.2 × 0.8 = 1.12 exactly: no rounding up of an exact cent
    [1, 500_000, 0.02], // 0.0175 -> 0.02
    [10, 420_000, 0.18], // 0.17052 -> 0.18
    [1, 990_000, 0.01], // 0.000693 -> 0.01
    [1, 10_000, 0.01], // 0.000693 -> 0.01
    [1000, 350_000, 15.93], // 0.07 × 1000 × 0.35 × 0.65 = 15.925 -> 15.93
    [0.5, 500_000, 0.01], // fractional contracts: 0.00875 -> 0.01
  ])("%d contracts at %d micros -> $%d", (contracts, price, dollars) => {
    expect(kalshiTakerFee(c(contracts), price)).toBe(Math.round(dollars * 1_000_000));
  });

  it("is zero for nothing traded or a price at the bounds, and honours a fee multiplier", () => {
    expect(kalshiTakerFee(0, 500_000)).toBe(0);
    expect(kalshiTakerFee(c(10), 0)).toBe(0);
    expect(kalshiTakerFee(c(10), 1_000_000)).toBe(0);
    // 0.0175 × 100 × 0.25 = 0.4375 -> 0.44
    expect(kalshiTakerFee(c(100), 500_000, 175)).toBe(440_000);
  });

  it("is symmetric in P and 1 − P (YES and NO legs of one trade pay alike)", () => {
    for (const p of [10_000, 130_000, 420_000, 770_000]) {
      expect(kalshiTakerFee(c(37), p)).toBe(kalshiTakerFee(c(37), 1_000_000 - p));
    }
  });
});
