import { describe, expect, it } from "vitest";
import {
  buyLockFee,
  defaultSchedule,
  type FeeSchedule,
  feesView,
  fillFee,
  kalshiSchedule,
  polymarketSchedule,
  scheduleFromView,
  takerFee,
} from "../src/index";

const usd = (dollars: number) => Math.round(dollars * 1_000_000);
const c = (contracts: number) => Math.round(contracts * 1_000_000);
const p = (price: number) => Math.round(price * 1_000_000);

/** An order's fills one after another, its accumulator threaded through: each fill's net fee. */
function orderFees(
  schedule: FeeSchedule,
  fills: Array<{ price: number; size: number; side?: "buy" | "sell"; liquidity?: "taker" | "maker" }>,
  balancePrecision?: number,
): number[] {
  let carry = 0;
  return fills.map((f) => {
    const result = fillFee(
      schedule,
      { price: p(f.price), size: c(f.size), side: f.side ?? "buy", liquidity: f.liquidity ?? "taker" },
      carry,
      balancePrecision === undefined ? {} : { balancePrecision },
    );
    carry = result.carry;
    return result.fee;
  });
}

describe("Polymarket: shares × rate × (p(1 − p))^exponent", () => {
  const sports = polymarketSchedule({ rate: 0.05, exponent: 1, takerOnly: true, capBps: 1000 });

  it("charges $1.25 for 100 shares at 0.50 with rate 0.05 (not the 5.00 a 1000 bps rate would)", () => {
    expect(takerFee(sports, p(0.5), c(100))).toBe(usd(1.25));
    expect(takerFee(sports, p(0.1), c(100))).toBe(usd(0.45)); // 100 × 0.05 × 0.09
  });

  it("charges makers nothing on a taker-only schedule", () => {
    const maker = fillFee(sports, { price: p(0.5), size: c(100), side: "buy", liquidity: "maker" });
    expect(maker.fee).toBe(0);
  });

  it("applies the exponent: 0.25 × (p(1 − p))² on the short crypto markets", () => {
    const crypto = polymarketSchedule({ rate: 0.25, exponent: 2, takerOnly: true });
    expect(takerFee(crypto, p(0.5), c(100))).toBe(usd(1.5625));
  });

  it("computes half-whole exponents exactly and rounds down to $0.00001", () => {
    const s = polymarketSchedule({ rate: 0.05, exponent: 0.5 });
    // 100 × 0.05 × √0.21 = 2.2912878… -> 2.29128
    expect(takerFee(s, p(0.3), c(100))).toBe(usd(2.29128));
    // 7 × 0.07 × 0.533 × 0.467 = 0.12196… -> 0.12196 (down, never up)
    const seven = polymarketSchedule({ rate: 0.07, exponent: 1 });
    expect(takerFee(seven, p(0.533), c(7))).toBe(usd(0.12196));
  });

  it("never charges more than the base fee cap (takerBaseFee bps × min(p, 1 − p) × C)", () => {
    const steep = polymarketSchedule({ rate: 0.25, exponent: 1, capBps: 1000 });
    // curve 100 × 0.25 × 0.25 = 6.25; cap 0.10 × 0.5 × 100 = 5.00
    expect(takerFee(steep, p(0.5), c(100))).toBe(usd(5));
    expect(takerFee({ ...steep, capBps: null }, p(0.5), c(100))).toBe(usd(6.25));
  });

  it("charges a market with fees off nothing, and has no accumulator", () => {
    const free = polymarketSchedule({ rate: 0, exponent: 1 });
    expect(takerFee(free, p(0.5), c(100))).toBe(0);
    expect(fillFee(sports, { price: p(0.5), size: c(1), side: "buy", liquidity: "taker" }, 123).carry).toBe(
      123,
    );
  });
});

describe("Kalshi: the series' fee type and multiplier, with the documented rounding", () => {
  const general = kalshiSchedule("quadratic", 1);

  it("charges 0.07 × C × P × (1 − P) on a quadratic series, scaled by the multiplier", () => {
    expect(takerFee(general, p(0.5), c(100))).toBe(usd(1.75));
    // multiplier 0.5: 0.875 trade fee; the balance change floors to the cent -> 0.88
    expect(takerFee(kalshiSchedule("quadratic", 0.5), p(0.5), c(100))).toBe(usd(0.88));
    // at $0.0001 balance precision the same fill pays the trade fee alone
    expect(orderFees(kalshiSchedule("quadratic", 0.5), [{ price: 0.5, size: 100 }], 100)).toEqual([
      usd(0.875),
    ]);
  });

  it("rounds the trade fee up to $0.0001, then brings the balance to the cent (not ceil per fill to the cent)", () => {
    // 10 @ 0.45: 0.17325 -> trade fee 0.1733; buy: -4.5 - 0.1733 floors to -4.68 -> net 0.18
    expect(takerFee(general, p(0.45), c(10))).toBe(usd(0.18));
    // a sell floors the proceeds the same way: 4.5 - 0.1733 = 4.3267 -> 4.32, net 0.18
    expect(orderFees(general, [{ price: 0.45, size: 10, side: "sell" }])).toEqual([usd(0.18)]);
  });

  it("rebates the rounding an order overpaid across its fills: four 1-lots cost what one 4-lot costs", () => {
    const fills = orderFees(
      general,
      [1, 1, 1, 1].map((size) => ({ price: 0.5, size })),
    );
    expect(fills).toEqual([usd(0.02), usd(0.02), usd(0.02), usd(0.01)]);
    expect(fills.reduce((a, b) => a + b, 0)).toBe(takerFee(general, p(0.5), c(4)));
  });

  it("keeps the accumulator across taker and maker fills and sub-penny prices", () => {
    const three = orderFees(general, [
      { price: 0.055, size: 1 },
      { price: 0.055, size: 1, liquidity: "maker" },
      { price: 0.055, size: 1, liquidity: "maker" },
    ]);
    // taker: 0.0037 trade + 0.0013 rounding; makers on a quadratic series pay only the rounding, and
    // the third fill gets the cent the order overpaid back: the order pays what its total rounds to
    // (0.165 + 0.0037 -> 0.17)
    expect(three).toEqual([usd(0.005), usd(0.005), usd(-0.005)]);
    // ten maker fills of 1 @ 0.055 with no trade fee: 0.5c rounding each, a cent back every second,
    // so the order pays what one 10-lot pays (nothing)
    const makers = orderFees(
      general,
      Array.from({ length: 10 }, () => ({ price: 0.055, size: 1, liquidity: "maker" as const })),
    );
    expect(makers.reduce((a, b) => a + b, 0)).toBe(0);
    expect(makers.slice(0, 2)).toEqual([usd(0.005), usd(-0.005)]);
  });

  it("charges makers on quadratic_with_maker_fees (a quarter) and _combo_ (a half), not on quadratic", () => {
    const maker = { price: 0.5, size: 100, liquidity: "maker" as const };
    expect(orderFees(kalshiSchedule("quadratic_with_maker_fees", 1), [maker])).toEqual([usd(0.44)]);
    expect(orderFees(kalshiSchedule("quadratic_with_combo_maker_fees", 1), [maker])).toEqual([usd(0.88)]);
    expect(orderFees(general, [maker])).toEqual([0]);
    expect(takerFee(kalshiSchedule("quadratic_with_maker_fees", 1), p(0.5), c(100))).toBe(usd(1.75));
  });

  it("charges a flat series the same per contract at every price", () => {
    const flat = kalshiSchedule("flat", 1);
    expect(takerFee(flat, p(0.5), c(10))).toBe(usd(0.18)); // 0.175 -> balance to the cent
    expect(takerFee(flat, p(0.05), c(10))).toBe(usd(0.18));
    expect(takerFee(flat, p(0.05), c(100))).toBe(usd(1.75));
    expect(orderFees(flat, [{ price: 0.5, size: 100, liquidity: "maker" }])).toEqual([0]);
  });

  it("charges nothing for a multiplier of 0 beyond the balance rounding", () => {
    expect(takerFee(kalshiSchedule("quadratic", 0), p(0.5), c(100))).toBe(0);
  });
});

describe("the cash a buy holds back", () => {
  it("covers any fill at or better than the limit: the fee at min(limit, 0.5), plus Kalshi's rounding", () => {
    const pm = polymarketSchedule({ rate: 0.05, exponent: 1 });
    expect(buyLockFee(pm, p(0.8), c(100))).toBe(takerFee(pm, p(0.5), c(100)));
    expect(buyLockFee(pm, p(0.3), c(100))).toBe(takerFee(pm, p(0.3), c(100)));
    const k = kalshiSchedule("quadratic_with_maker_fees", 1);
    // trade fee at 0.5 (1.75) plus one cent of rounding not yet overpaid
    expect(buyLockFee(k, p(0.7), c(100))).toBe(usd(1.76));
    expect(buyLockFee(k, p(0.7), c(100), 4_000)).toBe(usd(1.756));
    expect(buyLockFee(k, p(0.7), 0)).toBe(0);
  });
});

describe("the API's view of a schedule", () => {
  it("round-trips, and says what users need: rate, exponent, taker_only", () => {
    const pm = polymarketSchedule({ rate: 0.05, exponent: 1, takerOnly: true, capBps: 1000 });
    expect(feesView(pm)).toMatchObject({ model: "polymarket", rate: 0.05, exponent: 1, taker_only: true });
    expect(scheduleFromView(feesView(pm))).toEqual(pm);
    const k = kalshiSchedule("quadratic_with_maker_fees", 0.5);
    expect(feesView(k)).toMatchObject({
      model: "kalshi",
      fee_type: "quadratic_with_maker_fees",
      multiplier: 0.5,
    });
    expect(scheduleFromView(feesView(k))).toEqual(k);
  });

  it("charges an unknown Kalshi market quadratic × 1", () => {
    expect(defaultSchedule("kalshi")).toEqual(kalshiSchedule("quadratic", 1));
  });
});
