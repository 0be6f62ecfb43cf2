/**
 * The fake Kalshi's historical tier (kalshi-typescript 3.30 `HistoricalApi`): past the cutoff, settled
 * markets, their candles, fills and closed orders leave the live endpoints for `/historical/*`.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type KalshiFake, startKalshiFake } from "../src/kalshi/index";
import { call, makeKey, type Wire } from "./kalshi-helpers";

const T = "KXFEDDECISION-26DEC-C25";
const SETTLED = "KXCPIYOY-26OCT-T3.0"; // resolved in the seed world, closed 2026-11-12
const key = makeKey("eeeeeeee-0000-4000-8000-000000000005");

describe("fake Kalshi historical tier", () => {
  let fake: KalshiFake;
  beforeEach(async () => {
    fake = await startKalshiFake({ seed: 3 });
    fake.script.addApiKey({ keyId: key.keyId, publicKeyPem: key.publicKeyPem });
  });
  afterEach(() => fake.close());
  const get = (path: string, signed = false) => call(fake.apiUrl, "GET", path, signed ? { key } : {});

  it("without a cutoff nothing is archived, and the cutoff reads as the epoch", async () => {
    expect((await get("/historical/cutoff")).body).toEqual({
      market_settled_ts: "1970-01-01T00:00:00Z",
      trades_created_ts: "1970-01-01T00:00:00Z",
      orders_updated_ts: "1970-01-01T00:00:00Z",
      market_positions_last_updated_ts: "1970-01-01T00:00:00Z",
    });
    expect((await get(`/markets/${SETTLED}`)).body.market).toMatchObject({
      status: "finalized",
      settlement_ts: "2026-11-12T14:30:00Z",
    });
    expect((await get(`/historical/markets/${SETTLED}`)).status).toBe(404);
  });

  it("a market settled before the cutoff: live endpoints 404 or leave it out, /historical/* serves it", async () => {
    fake.script.setHistoricalCutoff("2026-12-01T00:00:00Z");
    expect((await get("/historical/cutoff")).body.market_settled_ts).toBe("2026-12-01T00:00:00Z");
    expect((await get(`/markets/${SETTLED}`)).status).toBe(404);
    expect((await get(`/markets/${SETTLED}/orderbook`)).status).toBe(404);
    const [from, to] = ["2026-11-01T00:00:00Z", "2026-11-20T00:00:00Z"].map((t) => Date.parse(t) / 1000);
    const q = `start_ts=${from}&end_ts=${to}&period_interval=1440`;
    expect((await get(`/series/KXCPIYOY/markets/${SETTLED}/candlesticks?${q}`)).status).toBe(404);
    const listed = await get("/markets?status=settled&limit=1000");
    expect(listed.body.markets.map((m: Wire) => m.ticker)).not.toContain(SETTLED);
    const event = await get("/events/KXCPIYOY-26OCT?with_nested_markets=true");
    expect(event.status).toBe(200); // events stay
    expect(event.body.event.markets).toEqual([]);

    const one = await get(`/historical/markets/${SETTLED}`);
    expect(one.body.market).toMatchObject({ ticker: SETTLED, status: "finalized", result: "yes" });
    expect(one.body.market).not.toHaveProperty("fractional_trading_enabled");
    expect(one.body.market).not.toHaveProperty("response_price_units");
    const list = await get("/historical/markets?event_ticker=KXCPIYOY-26OCT");
    expect(list.body).toEqual({ markets: [expect.objectContaining({ ticker: SETTLED })], cursor: "" });
    expect((await get("/historical/markets?event_ticker=A&series_ticker=B")).status).toBe(400);

    const candles = await get(`/historical/markets/${SETTLED}/candlesticks?${q}`);
    expect(candles.body.ticker).toBe(SETTLED);
    const [first] = candles.body.candlesticks;
    expect(Object.keys(first).sort()).toEqual(
      ["end_period_ts", "open_interest", "price", "volume", "yes_ask", "yes_bid"].sort(),
    );
    expect(first.yes_bid).toEqual({
      open: expect.stringMatching(/^0\.\d{4}$/),
      low: expect.any(String),
      high: expect.any(String),
      close: expect.any(String),
    });
    expect(first.volume).toMatch(/^\d+\.\d{2}$/);
    // Nothing after it settled.
    const last = candles.body.candlesticks.at(-1);
    expect(last.end_period_ts * 1000).toBeLessThanOrEqual(Date.parse("2026-11-12T14:30:00Z"));
  });

  it("fills and closed orders before the cutoff move to /historical/fills and /historical/orders", async () => {
    fake.script.setBook(T, { yes: [[0.4, 10]], no: [[0.5, 10]] });
    const order = {
      ticker: T,
      side: "bid",
      price: "0.5000",
      count: "2.00",
      time_in_force: "immediate_or_cancel",
      self_trade_prevention_type: "taker_at_cross",
    };
    const placed = await call(fake.apiUrl, "POST", "/portfolio/events/orders", { key, body: order });
    const resting = await call(fake.apiUrl, "POST", "/portfolio/events/orders", {
      key,
      body: { ...order, price: "0.1000", time_in_force: "good_till_canceled" },
    });
    fake.script.setHistoricalCutoff(Date.now() + 60_000);
    expect((await get("/portfolio/fills", true)).body.fills).toEqual([]);
    expect((await get(`/portfolio/orders/${placed.body.order_id}`, true)).status).toBe(404);
    // A resting order always stays live.
    const live = await get("/portfolio/orders", true);
    expect(live.body.orders.map((o: Wire) => o.order_id)).toEqual([resting.body.order_id]);

    const fills = await get(`/historical/fills?ticker=${T}`, true);
    expect(fills.body.fills.map((f: Wire) => [f.order_id, f.count_fp])).toEqual([
      [placed.body.order_id, "2.00"],
    ]);
    const orders = await get("/historical/orders", true);
    expect(orders.body.orders.map((o: Wire) => [o.order_id, o.status])).toEqual([
      [placed.body.order_id, "executed"],
    ]);
    expect((await get("/historical/fills")).status).toBe(401);
    // An order on an archived market cannot be placed: the market is gone from the live tier.
    fake.script.resolveMarket(T, "no");
    fake.script.setHistoricalCutoff(Date.now() + 60_000);
    const late = await call(fake.apiUrl, "POST", "/portfolio/events/orders", { key, body: order });
    expect(late.status).toBe(404);
  });
});
