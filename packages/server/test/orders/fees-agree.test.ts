/**
 * One fee for one fill, wherever crossbook prices it: the sandbox fill, the cash a buy holds back,
 * the arbitrage breakdown and the agent's backtester all charge the market's schedule through
 * @crossbook/fees. Each venue's market carries a schedule that is not the default, read by the
 * catalog from the venue and by the backtester from GET /v1/markets/{id}.
 */
import { kalshiSchedule, kalshiTradeFee, polymarketSchedule } from "@crossbook/fees";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backtest } from "../../../agent/src/backtest/index";
import { chargedSchedule } from "../../src/catalog/fees";
import { findMarket } from "../../src/catalog/repo";
import { analyzeArbitrage } from "../../src/prices/arbitrage";
import { MICROS } from "../../src/venues/decimal";
import type { OrderBook } from "../../src/venues/model";
import { testMarket } from "../support/fake-venue";
import { balance, book, get, placed, printTrade, setBook, type Trading, tradingApp } from "./setup";

const PRICE = 0.45;
const SIZE = 10;
const m = (x: number) => Math.round(x * MICROS);

const MARKETS = [
  {
    id: "polymarket:PF",
    schedule: polymarketSchedule({ rate: 0.07, exponent: 1, takerOnly: true, capBps: 1000 }),
    // 10 × 0.07 × 0.45 × 0.55 = 0.17325 (down to $0.00001)
    expected: 0.17325,
  },
  {
    id: "kalshi:KF",
    schedule: kalshiSchedule("quadratic", 0.5),
    // trade fee 0.035 × 10 × 0.2475 = 0.086625 -> 0.0867; −4.5867 floored to the cent: 0.09
    expected: 0.09,
  },
] as const;

describe("the same fee for the same fill", () => {
  let s: Trading;
  beforeAll(async () => {
    s = await tradingApp({}, [
      testMarket("polymarket", "PF", { fees: MARKETS[0].schedule }),
      testMarket("kalshi", "KF", { fees: MARKETS[1].schedule }),
      testMarket("kalshi", "KM", { fees: kalshiSchedule("quadratic_with_maker_fees", 1) }),
    ]);
  });
  afterAll(() => s.t.close());

  it.each(MARKETS)("on $id: sandbox fill, buy lock, arbitrage and backtester agree", async (market) => {
    const venue = market.id.startsWith("kalshi") ? s.kalshi : s.polymarket;

    // 1. The sandbox: a buy that takes one ask level of SIZE at PRICE.
    setBook(venue, book(market.id, { asks: [[PRICE, SIZE]] }));
    const filled = await placed(s.t.app, s.key, {
      market_id: market.id,
      side: "buy",
      price: PRICE,
      amount: SIZE,
      time_in_force: "IOC",
    });
    expect(filled.filled_amount).toBe(SIZE);
    const sandbox = filled.fees;

    // 2. The buy lock: the same order resting (nothing to take) holds back its cost and the fee.
    setBook(venue, book(market.id, { bids: [[0.4, 5]], asks: [[0.6, 5]] }));
    const before = await balance(s.t.app, s.key);
    const resting = await placed(s.t.app, s.key, {
      market_id: market.id,
      side: "buy",
      price: PRICE,
      amount: SIZE,
    });
    const lockFee = (await balance(s.t.app, s.key)).locked - before.locked - PRICE * SIZE;

    // 3. The arbitrage breakdown: the leg buying SIZE at PRICE, charged the catalog's schedule.
    const row = await findMarket(s.t.runtime.store.db, market.id);
    const legBook: OrderBook = book(market.id, { asks: [[PRICE, SIZE]] });
    const hedge: OrderBook = { ...book("X", {}), no: { bids: [], asks: [{ price: m(0.5), size: m(SIZE) }] } };
    const arbitrage = analyzeArbitrage({
      a: {
        marketId: market.id,
        venue: row!.venue as "kalshi",
        book: legBook,
        fees: chargedSchedule(row!.venue, row),
      },
      b: { marketId: "X", venue: "kalshi", book: hedge, fees: kalshiSchedule("quadratic", 0) },
      relation: "identity",
      minSize: m(SIZE),
    });
    if (!arbitrage.arbitrageable) throw new Error(arbitrage.message);
    const leg = arbitrage.directions.find((d) => d.legs[0].outcome === "yes")!.bestFromMin!.legs[0];

    // 4. The agent's backtester, with the schedule as the API publishes it on the market.
    const published = (await get(s.t.app, s.key, `/v1/markets/${market.id}`)).data.fees;
    const result = await backtest({
      strategy: {
        onStart: (ctx) => {
          ctx.order({ market_id: market.id, side: "buy", type: "market", amount: SIZE });
        },
        onCandle: () => {},
      },
      markets: [market.id],
      interval: "1h",
      from: "2026-01-01T00:00:00Z",
      to: "2026-01-01T02:00:00Z",
      initialCash: 1000,
      fees: { markets: { [market.id]: published } },
      slippage: 0,
      source: [
        {
          market_id: market.id,
          timestamp: "2026-01-01T00:00:00.000Z",
          open: PRICE,
          high: PRICE,
          low: PRICE,
          close: PRICE,
          volume: 100,
        },
      ],
      progressLog: false,
    });
    const backtested = result.trades[0]!.fee;

    expect(sandbox).toBeCloseTo(market.expected, 9);
    expect(leg.fees / MICROS).toBeCloseTo(market.expected, 9);
    expect(backtested).toBeCloseTo(market.expected, 9);
    if (market.id.startsWith("polymarket")) {
      // Polymarket's lock is the fee itself (at min(limit, 0.5)).
      expect(lockFee).toBeCloseTo(market.expected, 9);
    } else {
      // Kalshi's lock is the same trade fee plus the cent of rounding the order may still pay.
      const trade = kalshiTradeFee(market.schedule, m(PRICE), m(SIZE), "taker") / MICROS;
      expect(lockFee).toBeCloseTo(trade + 0.01, 9);
      expect(lockFee).toBeGreaterThanOrEqual(market.expected);
    }
    await s.t.app.inject({
      method: "DELETE",
      url: `/v1/orders/${resting.id}`,
      headers: { authorization: `Bearer ${s.key}` },
    });
  });

  it("a resting sandbox order pays the maker fee where the series charges makers, and nothing where not", async () => {
    const makerFill = async (id: string) => {
      setBook(s.kalshi, book(id, { bids: [[0.3, 5]], asks: [[0.6, 5]] }));
      const order = await placed(s.t.app, s.key, { market_id: id, side: "buy", price: 0.4, amount: 10 });
      expect(order.status).toBe("open");
      printTrade(s.kalshi, id, { price: 0.4, size: 10, side: "sell" });
      await s.t.services.exchange.idle();
      return (await get(s.t.app, s.key, `/v1/orders/${order.id}`)).data;
    };
    // quadratic_with_maker_fees: 0.0175 × 10 × 0.4 × 0.6 = 0.042, the balance change to the cent: 0.05
    expect(await makerFill("kalshi:KM")).toMatchObject({ status: "filled", fees: 0.05 });
    // quadratic: makers pay nothing (and 4.00 needs no rounding)
    expect(await makerFill("kalshi:KF")).toMatchObject({ status: "filled", fees: 0 });
  });
});
