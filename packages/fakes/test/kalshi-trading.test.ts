import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type KalshiFake, startKalshiFake } from "../src/kalshi/index";
import { netFeeMicro, tradeFeeMicro } from "../src/kalshi/units";
import { call, makeKey, signHeaders, type TestKey, type Wire } from "./kalshi-helpers";

const T = "KXFEDDECISION-26DEC-C25";
const LEGACY_ORDER_FIELDS = [
  "yes_price",
  "no_price",
  "fill_count",
  "remaining_count",
  "initial_count",
  "taker_fees",
];

const keyA = makeKey("aaaaaaaa-0000-4000-8000-000000000001");
const keyB = makeKey("bbbbbbbb-0000-4000-8000-000000000002");

function v2(ticker: string, side: "bid" | "ask", price: string, count: string, extra: object = {}) {
  return {
    ticker,
    side,
    price,
    count,
    time_in_force: "good_till_canceled",
    self_trade_prevention_type: "taker_at_cross",
    ...extra,
  };
}

describe("Kalshi fees (docs.kalshi.com fee_rounding, SDK 3.30 Series.fee_type)", () => {
  const quadratic = { feeType: "quadratic", feeMultiplier: 1 };
  it("trade fee: 0.07 × m × C × P × (1 − P) for takers, rounded up to $0.0001", () => {
    expect(tradeFeeMicro(quadratic, true, 100 * 100, 5000)).toBe(1_750_000);
    expect(tradeFeeMicro(quadratic, true, 1 * 100, 5000)).toBe(17_500);
    expect(tradeFeeMicro(quadratic, true, 10 * 100, 4400)).toBe(172_500); // 0.17248 -> 0.1725
    expect(tradeFeeMicro(quadratic, true, 1_000_000 * 100, 3300)).toBe(15_477_000_000);
    expect(tradeFeeMicro({ feeType: "quadratic", feeMultiplier: 0.5 }, true, 100 * 100, 5000)).toBe(875_000);
  });
  it("makers: nothing on quadratic, a quarter on quadratic_with_maker_fees, half on the combo type", () => {
    expect(tradeFeeMicro(quadratic, false, 100 * 100, 5000)).toBe(0);
    const maker = (feeType: string) => tradeFeeMicro({ feeType, feeMultiplier: 1 }, false, 100 * 100, 5000);
    expect(maker("quadratic_with_maker_fees")).toBe(437_500);
    expect(maker("quadratic_with_combo_maker_fees")).toBe(875_000);
  });
  it("flat: the same per contract at every price", () => {
    const flat = { feeType: "flat", feeMultiplier: 1 };
    expect(tradeFeeMicro(flat, true, 10 * 100, 5000)).toBe(175_000);
    expect(tradeFeeMicro(flat, true, 10 * 100, 500)).toBe(175_000);
    expect(tradeFeeMicro(flat, false, 10 * 100, 500)).toBe(0);
  });
  it("net fee: the balance change floored to the cent, the order's overpaid rounding rebated in whole cents", () => {
    // four 1-lots at 0.50: 0.0175 each -> 0.02, 0.02, 0.02, then a cent back: 0.07 = one 4-lot
    let carry = 0;
    const fees: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = netFeeMicro(500_000, 17_500, carry);
      fees.push(r.fee);
      carry = r.carry;
    }
    expect(fees).toEqual([20_000, 20_000, 20_000, 10_000]);
  });
});

describe("fake Kalshi trading", () => {
  let fake: KalshiFake;
  let api: string;
  const post = (key: TestKey, path: string, body: unknown) => call(api, "POST", path, { key, body });
  const get = (key: TestKey, path: string) => call(api, "GET", path, { key });

  beforeEach(async () => {
    fake = await startKalshiFake({ seed: 2 });
    api = fake.apiUrl;
    fake.script.addApiKey({ keyId: keyA.keyId, publicKeyPem: keyA.publicKeyPem, balanceCents: 100_000 });
    fake.script.addApiKey({ keyId: keyB.keyId, publicKeyPem: keyB.publicKeyPem, balanceCents: 100_000 });
    fake.script.setBook(T, {
      yes: [[0.4, 100]],
      no: [
        [0.56, 10],
        [0.55, 20],
      ],
    });
  });
  afterEach(() => fake.close());

  it("V2: a crossing bid sweeps implied YES asks price-time, pays taker fees and books the position", async () => {
    const res = await post(
      keyA,
      "/portfolio/events/orders",
      v2(T, "bid", "0.4500", "15.00", { client_order_id: "c1" }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      order_id: expect.any(String),
      client_order_id: "c1",
      fill_count: "15.00",
      remaining_count: "0.00",
      average_fill_price: "0.4433",
      average_fee_paid: "0.0173",
      ts_ms: expect.any(Number),
    });
    // 10 @ 0.44: trade fee 0.17248 -> 0.1725, the balance change to the cent: 0.18. 5 @ 0.45: 0.0867,
    // 0.09 to the cent, less the cent of rounding the order has now overpaid: 0.08. 6.65 + 0.26 out of
    // 1000.00, what one 15-lot would cost (6.65 + 0.2592 -> 6.91).
    const bal = await get(keyA, "/portfolio/balance");
    expect(bal.body.balance).toBe(99_309);
    expect(bal.body.balance_dollars).toBe("993.0900");
    const book = await call(api, "GET", `/markets/${T}/orderbook`);
    expect(book.body.orderbook_fp.no_dollars).toEqual([["0.5500", "15.00"]]);
    const pos = await get(keyA, "/portfolio/positions");
    expect(pos.body.market_positions).toEqual([
      {
        ticker: T,
        position_fp: "15.00",
        total_traded_dollars: "6.6500",
        market_exposure_dollars: "6.6500",
        realized_pnl_dollars: "0.0000",
        fees_paid_dollars: "0.2600",
        last_updated_ts: expect.any(String),
        exchange_index: 0,
      },
    ]);
    expect(pos.body.event_positions[0].event_ticker).toBe("KXFEDDECISION-26DEC");
    const fills = await get(keyA, "/portfolio/fills");
    expect(fills.body.fills).toHaveLength(2);
    const [last, first] = fills.body.fills;
    expect(first).toMatchObject({
      ticker: T,
      market_ticker: T,
      outcome_side: "yes",
      book_side: "bid",
      count_fp: "10.00",
      yes_price_dollars: "0.4400",
      no_price_dollars: "0.5600",
      is_taker: true,
      fee_cost: "0.1800",
    });
    expect(first.trade_id).toBe(first.fill_id);
    expect(last.yes_price_dollars).toBe("0.4500");
    const order = await get(keyA, `/portfolio/orders/${res.body.order_id}`);
    expect(order.body.order).toMatchObject({
      status: "executed",
      fill_count_fp: "15.00",
      remaining_count_fp: "0.00",
      initial_count_fp: "15.00",
      taker_fees_dollars: "0.2600",
      taker_fill_cost_dollars: "6.6500",
      type: "limit",
    });
    for (const f of LEGACY_ORDER_FIELDS) expect(order.body.order).not.toHaveProperty(f);
    const trades = await call(api, "GET", `/markets/trades?ticker=${T}`);
    expect(trades.body.trades.map((t: Wire) => [t.yes_price_dollars, t.count_fp, t.taker_side])).toEqual([
      ["0.4500", "5.00", "yes"],
      ["0.4400", "10.00", "yes"],
    ]);
  });

  it("the legacy order endpoints answer 410 deprecated_v1_order_endpoint, whatever the body", async () => {
    const legacy = { ticker: T, side: "no", action: "buy", count: 10, no_price: 60, client_order_id: "l-1" };
    const create = await post(keyB, "/portfolio/orders", legacy);
    expect(create.status).toBe(410);
    expect(create.body.error).toMatchObject({ code: "deprecated_v1_order_endpoint", service: "exchange" });
    const placed = await post(keyA, "/portfolio/events/orders", v2(T, "bid", "0.3000", "1.00"));
    const cancel = await call(api, "DELETE", `/portfolio/orders/${placed.body.order_id}`, { key: keyA });
    expect(cancel.status).toBe(410);
    expect(cancel.body.error.code).toBe("deprecated_v1_order_endpoint");
    // Nothing happened: no order from the legacy create, and the V2 order still rests.
    expect((await get(keyB, "/portfolio/orders")).body.orders).toHaveLength(0);
    expect((await get(keyA, `/portfolio/orders/${placed.body.order_id}`)).body.order.status).toBe("resting");
    // Unsigned, it is the usual 401.
    expect((await call(api, "POST", "/portfolio/orders", { body: legacy })).status).toBe(401);
  });

  it("a V2 ask (buy NO ≡ sell YES at 1 − p) crosses the YES bid; direction is one bit, (no, ask)", async () => {
    const res = await post(keyB, "/portfolio/events/orders", v2(T, "ask", "0.4000", "10.00"));
    expect(res.status).toBe(201);
    const order = await get(keyB, `/portfolio/orders/${res.body.order_id}`);
    expect(order.body.order).not.toHaveProperty("side");
    expect(order.body.order).not.toHaveProperty("action");
    expect(order.body.order).toMatchObject({
      ticker: T,
      outcome_side: "no",
      book_side: "ask",
      status: "executed",
      yes_price_dollars: "0.4000",
      no_price_dollars: "0.6000",
      fill_count_fp: "10.00",
      taker_fees_dollars: "0.1700",
    });
    const bal = await get(keyB, "/portfolio/balance");
    expect(bal.body.balance).toBe(100_000 - 600 - 17);
    const pos = await get(keyB, `/portfolio/positions?ticker=${T}`);
    expect(pos.body.market_positions[0].position_fp).toBe("-10.00");
  });

  it("a resting V2 ask is filled by another member's V2 bid", async () => {
    const rest = await post(keyA, "/portfolio/events/orders", v2(T, "ask", "0.7000", "5.00"));
    expect(rest.body.remaining_count).toBe("5.00");
    // Resting ask at YES 0.70 is a NO bid at 0.30 on the wire.
    const book = await call(api, "GET", `/markets/${T}/orderbook`);
    expect(book.body.orderbook_fp.no_dollars[0]).toEqual(["0.3000", "5.00"]);
    // A's 5 × 0.30 is reserved while the order rests.
    expect((await get(keyA, "/portfolio/balance")).body.balance).toBe(100_000 - 150);
    fake.script.setBook(T, { yes: [[0.4, 100]], no: [] });
    const take = await post(keyB, "/portfolio/events/orders", v2(T, "bid", "0.7000", "5.00"));
    const taken = await get(keyB, `/portfolio/orders/${take.body.order_id}`);
    expect(taken.body.order).toMatchObject({ status: "executed", taker_fees_dollars: "0.0800" });
    const a = await get(keyA, `/portfolio/orders/${rest.body.order_id}`);
    // KXFEDDECISION charges makers (quadratic_with_maker_fees): 0.0175 × 5 × 0.7 × 0.3 = 0.018375,
    // 0.0184 to the centicent, 0.02 with the balance to the cent.
    expect(a.body.order).toMatchObject({
      status: "executed",
      book_side: "ask",
      maker_fill_cost_dollars: "1.5000",
      maker_fees_dollars: "0.0200",
    });
    expect((await get(keyA, "/portfolio/balance")).body.balance).toBe(100_000 - 150 - 2);
    expect((await get(keyB, "/portfolio/balance")).body.balance).toBe(100_000 - 350 - 8);
    const fillsA = await get(keyA, "/portfolio/fills");
    expect(fillsA.body.fills[0]).toMatchObject({ is_taker: false, fee_cost: "0.0200", count_fp: "5.00" });
    // Only the two combinations the venue sends: (no, ask) for A's ask, (yes, bid) for B's bid.
    expect(fillsA.body.fills[0]).toMatchObject({ outcome_side: "no", book_side: "ask" });
    const fillsB = await get(keyB, "/portfolio/fills");
    expect(fillsB.body.fills[0]).toMatchObject({ outcome_side: "yes", book_side: "bid" });
  });

  it("nets YES against NO and settles on resolution", async () => {
    await post(keyA, "/portfolio/events/orders", v2(T, "bid", "0.4400", "10.00"));
    // Selling YES into the 0.40 bid closes the position: 10 × (1 − 0.40) paid, 10 × $1 back.
    const sell = await post(keyA, "/portfolio/events/orders", v2(T, "ask", "0.4000", "4.00"));
    expect(sell.body.fill_count).toBe("4.00");
    const pos = await get(keyA, "/portfolio/positions");
    expect(pos.body.market_positions[0].position_fp).toBe("6.00");
    // Realized: 4 × (1 − 0.44 − 0.60) = −0.16.
    expect(pos.body.market_positions[0].realized_pnl_dollars).toBe("-0.1600");
    const before = (await get(keyA, "/portfolio/balance")).body.balance;
    fake.script.resolveMarket(T, "yes");
    const after = (await get(keyA, "/portfolio/balance")).body.balance;
    expect(after - before).toBe(600);
    const m = await call(api, "GET", `/markets/${T}`);
    expect(m.body.market).toMatchObject({ status: "finalized", result: "yes" });
    const late = await post(keyA, "/portfolio/events/orders", v2(T, "bid", "0.4400", "1.00"));
    expect(late.status).toBe(400);
    expect(late.body.error.code).toBe("market_closed");
  });

  it("closing a held position needs no collateral", async () => {
    await post(keyA, "/portfolio/events/orders", v2(T, "bid", "0.4400", "10.00"));
    fake.script.setBalance(keyA.keyId, 0);
    const open = await post(keyA, "/portfolio/events/orders", v2(T, "bid", "0.3000", "1.00"));
    expect(open.body.error.code).toBe("insufficient_balance");
    // Resting sell of the 10 YES at 0.50: nothing reserved, proceeds arrive when it fills.
    fake.script.setBook(T, { yes: [], no: [] });
    const rest = await post(keyA, "/portfolio/events/orders", v2(T, "ask", "0.5000", "10.00"));
    expect(rest.status).toBe(201);
    expect((await get(keyA, "/portfolio/balance")).body.balance).toBe(0);
    await post(keyB, "/portfolio/events/orders", v2(T, "bid", "0.5000", "10.00"));
    // 10 × (1 − 0.50) paid, $10 back, and the maker fee this series charges (0.04375 -> 0.05).
    expect((await get(keyA, "/portfolio/balance")).body.balance).toBe(500 - 5);
    const pos = await get(keyA, "/portfolio/positions?count_filter=position");
    expect(pos.body.market_positions).toEqual([]);
  });

  it("cancels and releases the reservation; an order no longer resting answers 404", async () => {
    const a = await post(
      keyA,
      "/portfolio/events/orders",
      v2(T, "bid", "0.3000", "5.00", { client_order_id: "x" }),
    );
    expect((await get(keyA, "/portfolio/balance")).body.balance).toBe(100_000 - 150);
    const c = await call(api, "DELETE", `/portfolio/events/orders/${a.body.order_id}`, { key: keyA });
    expect(c.body).toEqual({
      order_id: a.body.order_id,
      client_order_id: "x",
      reduced_by: "5.00",
      ts_ms: expect.any(Number),
    });
    expect((await get(keyA, "/portfolio/balance")).body.balance).toBe(100_000);
    // Cancelled already, or filled: 404, as the V2 cancel documents.
    const again = await call(api, "DELETE", `/portfolio/events/orders/${a.body.order_id}`, { key: keyA });
    expect([again.status, again.body.error.code]).toEqual([404, "not_found"]);
    const filled = await post(keyA, "/portfolio/events/orders", v2(T, "bid", "0.4400", "1.00"));
    expect(filled.body.remaining_count).toBe("0.00");
    const late = await call(api, "DELETE", `/portfolio/events/orders/${filled.body.order_id}`, { key: keyA });
    expect(late.status).toBe(404);
    const b = await post(keyA, "/portfolio/events/orders", v2(T, "bid", "0.3000", "3.00"));
    const other = await call(api, "DELETE", `/portfolio/events/orders/${b.body.order_id}`, { key: keyB });
    expect(other.status).toBe(404);
    const d = await call(api, "DELETE", `/portfolio/events/orders/${b.body.order_id}`, { key: keyA });
    expect(d.body.reduced_by).toBe("3.00");
    const book = await call(api, "GET", `/markets/${T}/orderbook`);
    expect(book.body.orderbook_fp.yes_dollars).toEqual([["0.4000", "100.00"]]);
  });

  it("pages through orders with a cursor and filters by status", async () => {
    for (let i = 0; i < 5; i++)
      await post(keyA, "/portfolio/events/orders", v2(T, "bid", `0.${20 + i}00`, "1.00"));
    const ids: string[] = [];
    let cursor = "";
    let pages = 0;
    do {
      const res = await get(keyA, `/portfolio/orders?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      ids.push(...res.body.orders.map((o: Wire) => o.order_id));
      cursor = res.body.cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(ids).size).toBe(5);
    const resting = await get(keyA, "/portfolio/orders?status=resting");
    expect(resting.body.orders).toHaveLength(5);
    expect((await get(keyA, "/portfolio/orders?status=executed")).body.orders).toHaveLength(0);
    expect((await get(keyB, "/portfolio/orders")).body.orders).toHaveLength(0);
  });

  it("honours IOC, FOK, post-only and self-trade prevention", async () => {
    const ioc = await post(
      keyA,
      "/portfolio/events/orders",
      v2(T, "bid", "0.4400", "25.00", { time_in_force: "immediate_or_cancel" }),
    );
    expect(ioc.body).toMatchObject({ fill_count: "10.00", remaining_count: "0.00" });
    const ord = await get(keyA, `/portfolio/orders/${ioc.body.order_id}`);
    expect(ord.body.order.status).toBe("canceled");
    const fok = await post(
      keyA,
      "/portfolio/events/orders",
      v2(T, "bid", "0.4500", "50.00", { time_in_force: "fill_or_kill" }),
    );
    expect(fok.status).toBe(400);
    const po = await post(
      keyA,
      "/portfolio/events/orders",
      v2(T, "bid", "0.4500", "1.00", { post_only: true }),
    );
    expect(po.status).toBe(400);
    // A resting ask at 0.60 from A; A's own bid at 0.60 cancels itself (taker_at_cross).
    fake.script.setBook(T, { yes: [], no: [] });
    await post(keyA, "/portfolio/events/orders", v2(T, "ask", "0.6000", "2.00"));
    const self = await post(keyA, "/portfolio/events/orders", v2(T, "bid", "0.6000", "2.00"));
    expect(self.body).toMatchObject({ fill_count: "0.00", remaining_count: "0.00" });
  });

  it("rejects invalid orders with the venue's error body", async () => {
    const cases: [unknown, number, string][] = [
      [v2(T, "bid", "0.425", "1.00"), 400, "invalid_price"],
      [v2(T, "bid", "1.0000", "1.00"), 400, "invalid_price"],
      [v2(T, "bid", "42", "1.00"), 400, "invalid_price"],
      [v2(T, "bid", "0.42", "1.5"), 400, "invalid_parameters"],
      [v2(T, "buy" as "bid", "0.42", "1.00"), 400, "invalid_parameters"],
      [{ ticker: T, side: "bid", price: "0.42", count: "1.00" }, 400, "invalid_parameters"],
      [v2("KXNOPE-1", "bid", "0.42", "1.00"), 404, "market_not_found"],
      [v2("KXCPIYOY-26OCT-T3.0", "bid", "0.42", "1.00"), 400, "market_closed"],
      [v2(T, "bid", "0.42", "1000000.00"), 400, "insufficient_balance"],
    ];
    for (const [body, status, code] of cases) {
      const res = await post(keyA, "/portfolio/events/orders", body);
      expect([res.status, res.body.error?.code]).toEqual([status, code]);
      expect(res.body.error.service).toBe("exchange");
    }
    const fractional = await post(keyA, "/portfolio/events/orders", v2(T, "bid", "0.3000", "1.50"));
    expect([fractional.status, fractional.body.error.code]).toEqual([400, "invalid_parameters"]);
    fake.script.setFractional(T, true);
    const half = await post(keyA, "/portfolio/events/orders", v2(T, "bid", "0.3000", "1.50"));
    expect(half.body.remaining_count).toBe("1.50");
    const garbage = await fetch(`${api}/portfolio/events/orders`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...signHeaders(keyA, "POST", "/trade-api/v2/portfolio/events/orders"),
      },
      body: "{not json",
    });
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as Wire).error.code).toBe("invalid_parameters");
    await post(keyA, "/portfolio/events/orders", v2(T, "bid", "0.3000", "1.00", { client_order_id: "dup" }));
    const dup = await post(
      keyA,
      "/portfolio/events/orders",
      v2(T, "bid", "0.3000", "1.00", { client_order_id: "dup" }),
    );
    expect(dup.status).toBe(409);
    expect(fake.script.tradingRequestCount()).toBeGreaterThan(0);
  });
});
