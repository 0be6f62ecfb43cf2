import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KalshiFake, startKalshiFake } from "../src/kalshi/index";
import { call, type Wire } from "./kalshi-helpers";

const T = "KXFEDDECISION-26DEC-C25";

describe("fake Kalshi orderbook_fp", () => {
  let fake: KalshiFake;
  beforeAll(async () => {
    fake = await startKalshiFake({ seed: 11 });
  });
  afterAll(() => fake.close());

  it("returns bids on both sides, ascending, best last, with strings only", async () => {
    const res = await call(fake.apiUrl, "GET", `/markets/${T}/orderbook`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["orderbook_fp"]);
    const { yes_dollars, no_dollars } = res.body.orderbook_fp;
    for (const side of [yes_dollars, no_dollars]) {
      expect(side.length).toBeGreaterThan(0);
      for (const [p, n] of side) {
        expect(p).toMatch(/^0\.\d{4}$/);
        expect(n).toMatch(/^\d+\.\d{2}$/);
      }
      const prices = side.map((l: string[]) => Number(l[0]));
      expect(prices).toEqual([...prices].sort((a, b) => a - b));
    }
    // The two ladders are complements, never copies: best YES bid + best NO bid < 1 (no crossed book).
    const bestYes = Number(yes_dollars.at(-1)[0]);
    const bestNo = Number(no_dollars.at(-1)[0]);
    expect(bestYes + bestNo).toBeLessThan(1);
    // Implied asks match what the market object says.
    const m = (await call(fake.apiUrl, "GET", `/markets/${T}`)).body.market;
    expect(m.yes_bid_dollars).toBe(yes_dollars.at(-1)[0]);
    expect(Number(m.yes_ask_dollars)).toBeCloseTo(1 - bestNo, 10);
    expect(Number(m.no_ask_dollars)).toBeCloseTo(1 - bestYes, 10);
    expect(m.yes_ask_size_fp).toBe(no_dollars.at(-1)[1]);
  });

  it("follows setBook exactly, implied asks at 1 − p, and honours depth", async () => {
    fake.script.setBook(T, {
      yes: [
        [0.35, 200],
        [0.42, 13],
        [0.4, 5],
      ],
      no: [
        [0.54, 400],
        [0.56, 17],
      ],
    });
    const res = await call(fake.apiUrl, "GET", `/markets/${T}/orderbook`);
    expect(res.body.orderbook_fp).toEqual({
      yes_dollars: [
        ["0.3500", "200.00"],
        ["0.4000", "5.00"],
        ["0.4200", "13.00"],
      ],
      no_dollars: [
        ["0.5400", "400.00"],
        ["0.5600", "17.00"],
      ],
    });
    const m = fake.script.market(T);
    expect(m["yes_ask_dollars"]).toBe("0.4400");
    expect(m["no_ask_dollars"]).toBe("0.5800");
    const d1 = await call(fake.apiUrl, "GET", `/markets/${T}/orderbook?depth=1`);
    expect(d1.body.orderbook_fp).toEqual({
      yes_dollars: [["0.4200", "13.00"]],
      no_dollars: [["0.5600", "17.00"]],
    });
    const bad = await call(fake.apiUrl, "GET", `/markets/${T}/orderbook?depth=101`);
    expect(bad.status).toBe(400);
    const many = await call(fake.apiUrl, "GET", `/markets/orderbooks?tickers=${T},KXGOVSHUT-26DEC31`);
    expect(many.body.orderbooks.map((o: Wire) => o.ticker)).toEqual([T, "KXGOVSHUT-26DEC31"]);
    expect(many.body.orderbooks[0].orderbook_fp.yes_dollars).toHaveLength(3);
  });

  it("shows an empty side as an empty array (and a settled market's book empty)", async () => {
    fake.script.setBook("KXGOVSHUT-26DEC31", { yes: [[0.2, 10]], no: [] });
    const res = await call(fake.apiUrl, "GET", "/markets/KXGOVSHUT-26DEC31/orderbook");
    expect(res.body.orderbook_fp.no_dollars).toEqual([]);
    expect(fake.script.market("KXGOVSHUT-26DEC31")["yes_ask_dollars"]).toBe("1.0000");
    const settled = await call(fake.apiUrl, "GET", "/markets/KXCPIYOY-26OCT-T3.0/orderbook");
    expect(settled.body.orderbook_fp).toEqual({ yes_dollars: [], no_dollars: [] });
  });
});

describe("fake Kalshi candlesticks", () => {
  let fake: KalshiFake;
  beforeAll(async () => {
    fake = await startKalshiFake({ seed: 5 });
  });
  afterAll(() => fake.close());
  const now = Math.floor(Date.now() / 1000);
  const path = (period: number, start: number, end: number) =>
    `/series/KXFEDDECISION/markets/${T}/candlesticks?start_ts=${start}&end_ts=${end}&period_interval=${period}`;

  it.each([
    [1, 3 * 3600],
    [60, 3 * 86_400],
    [1440, 30 * 86_400],
  ])("period_interval=%i gives aligned candles in the documented shape", async (period, span) => {
    const res = await call(fake.apiUrl, "GET", path(period, now - span, now));
    expect(res.status).toBe(200);
    expect(res.body.ticker).toBe(T);
    const cs = res.body.candlesticks;
    expect(cs.length).toBeGreaterThanOrEqual(Math.floor(span / (period * 60)) - 1);
    expect(cs.length).toBeLessThanOrEqual(Math.ceil(span / (period * 60)));
    for (const c of cs) {
      expect(c.end_period_ts % (period * 60)).toBe(0);
      expect(c.end_period_ts).toBeLessThanOrEqual(now);
      for (const k of ["open_dollars", "low_dollars", "high_dollars", "close_dollars"]) {
        expect(c.yes_bid[k]).toMatch(/^0\.\d{4}$/);
        expect(c.yes_ask[k]).toMatch(/^\d\.\d{4}$/);
      }
      expect(Number(c.yes_bid.low_dollars)).toBeLessThanOrEqual(Number(c.yes_bid.high_dollars));
      expect(c.volume_fp).toMatch(/^\d+\.\d{2}$/);
      expect(c.open_interest_fp).toMatch(/^\d+\.\d{2}$/);
      expect(c.price.previous_dollars).toMatch(/^0\.\d{4}$/);
      if (c.volume_fp === "0.00") expect(c.price).not.toHaveProperty("close_dollars");
      else expect(c.price.close_dollars).toMatch(/^0\.\d{4}$/);
    }
    const stamps = cs.map((c: Wire) => c.end_period_ts);
    expect(stamps).toEqual([...stamps].sort((a: number, b: number) => a - b));
  });

  it("is deterministic for a given seed", async () => {
    const a = await call(fake.apiUrl, "GET", path(60, now - 86_400, now - 3600));
    const b = await call(fake.apiUrl, "GET", path(60, now - 86_400, now - 3600));
    expect(a.body).toEqual(b.body);
    const other = await startKalshiFake({ seed: 5 });
    try {
      const c = await call(other.apiUrl, "GET", path(60, now - 86_400, now - 3600));
      expect(c.body).toEqual(a.body);
    } finally {
      await other.close();
    }
  });

  it("rejects bad intervals and wrong series; serves the batch endpoint", async () => {
    const bad = await call(fake.apiUrl, "GET", path(5, now - 3600, now));
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_parameters");
    const missing = await call(fake.apiUrl, "GET", `/series/KXFEDDECISION/markets/${T}/candlesticks`);
    expect(missing.status).toBe(400);
    const wrongSeries = await call(
      fake.apiUrl,
      "GET",
      `/series/KXCPIYOY/markets/${T}/candlesticks?start_ts=${now - 3600}&end_ts=${now}&period_interval=1`,
    );
    expect(wrongSeries.status).toBe(404);
    const batch = await call(
      fake.apiUrl,
      "GET",
      `/markets/candlesticks?market_tickers=${T},KXGOVSHUT-26DEC31&start_ts=${now - 7200}&end_ts=${now}&period_interval=60`,
    );
    expect(batch.body.markets.map((m: Wire) => m.market_ticker)).toEqual([T, "KXGOVSHUT-26DEC31"]);
  });
});
