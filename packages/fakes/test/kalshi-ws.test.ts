import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type KalshiFake, startKalshiFake } from "../src/kalshi/index";
import { call, makeKey, type TestKey, WsClient } from "./kalshi-helpers";

const T = "KXFEDDECISION-26DEC-C25";
const U = "KXGOVSHUT-26DEC31";
const key = makeKey("cccccccc-0000-4000-8000-000000000003");
/** Another member: the venue requires a signed upgrade from everyone (the fake too, by default). */
const watcher = makeKey("cccccccc-0000-4000-8000-000000000033");

describe("fake Kalshi WebSocket", () => {
  let fake: KalshiFake;
  let clients: WsClient[];
  const open = async (as: TestKey = watcher) => {
    const c = await WsClient.open(fake.wsUrl, as);
    clients.push(c);
    return c;
  };

  beforeEach(async () => {
    clients = [];
    fake = await startKalshiFake({ seed: 9 });
    fake.script.addApiKey({ keyId: key.keyId, publicKeyPem: key.publicKeyPem });
    fake.script.addApiKey({ keyId: watcher.keyId, publicKeyPem: watcher.publicKeyPem });
    fake.script.setBook(T, {
      yes: [
        [0.08, 300],
        [0.22, 333],
      ],
      no: [
        [0.54, 20],
        [0.56, 146],
      ],
    });
  });
  afterEach(async () => {
    for (const c of clients) c.close();
    await fake.close();
  });

  it("acks a subscription per channel and sends an orderbook_snapshot first (seq 1)", async () => {
    const ws = await open();
    ws.send({
      id: 1,
      cmd: "subscribe",
      params: { channels: ["orderbook_delta", "ticker"], market_tickers: [T] },
    });
    const acks = await ws.count((m) => m.type === "subscribed", 2);
    expect(acks.map((a) => [a.id, a.msg.channel])).toEqual([
      [1, "orderbook_delta"],
      [1, "ticker"],
    ]);
    const sid = acks[0].msg.sid;
    expect(acks[1].msg.sid).not.toBe(sid);
    const snap = await ws.next((m) => m.type === "orderbook_snapshot");
    expect(snap).toEqual({
      type: "orderbook_snapshot",
      sid,
      seq: 1,
      msg: {
        market_ticker: T,
        market_id: expect.any(String),
        yes_dollars_fp: [
          ["0.0800", "300.00"],
          ["0.2200", "333.00"],
        ],
        no_dollars_fp: [
          ["0.5400", "20.00"],
          ["0.5600", "146.00"],
        ],
      },
    });
  });

  it("streams orderbook_delta with consecutive per-sid seq, plus ticker and trade", async () => {
    const ws = await open();
    ws.send({ id: 1, cmd: "subscribe", params: { channels: ["orderbook_delta"], market_tickers: [T] } });
    ws.send({ id: 2, cmd: "subscribe", params: { channels: ["trade", "ticker"], market_ticker: T } });
    await ws.count((m) => m.type === "subscribed", 3);
    await ws.next((m) => m.type === "orderbook_snapshot");
    // A YES taker lifts 54 of the 0.44 implied ask (NO bid 0.56).
    fake.script.printTrade(T, { side: "yes", count: 54 });
    const delta = await ws.next((m) => m.type === "orderbook_delta");
    expect(delta).toEqual({
      type: "orderbook_delta",
      sid: 1,
      seq: 2,
      msg: {
        market_ticker: T,
        market_id: expect.any(String),
        price_dollars: "0.5600",
        delta_fp: "-54.00",
        side: "no",
        ts: expect.any(String),
        ts_ms: expect.any(Number),
      },
    });
    const trade = await ws.next((m) => m.type === "trade");
    expect(trade.msg).toMatchObject({
      market_ticker: T,
      yes_price_dollars: "0.4400",
      no_price_dollars: "0.5600",
      count_fp: "54.00",
      taker_side: "yes",
    });
    expect(trade).not.toHaveProperty("seq");
    const ticker = await ws.next((m) => m.type === "ticker");
    expect(ticker.msg).toMatchObject({
      market_ticker: T,
      price_dollars: "0.4400",
      yes_bid_dollars: "0.2200",
      yes_ask_dollars: "0.4400",
      yes_ask_size_fp: "92.00",
      last_trade_size_fp: "54.00",
    });
    expect(typeof ticker.msg.dollar_volume).toBe("number");
    fake.script.setBook(T, { yes: [[0.3, 10]], no: [] });
    const deltas = await ws.count((m) => m.type === "orderbook_delta", 6);
    expect(deltas.map((d) => d.seq)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it("skipSequenceNext makes the next delta jump by 2; resubscribing yields a fresh snapshot", async () => {
    const ws = await open();
    ws.send({ id: 1, cmd: "subscribe", params: { channels: ["orderbook_delta"], market_tickers: [T, U] } });
    await ws.count((m) => m.type === "orderbook_snapshot", 2);
    fake.script.skipSequenceNext(T);
    fake.script.printTrade(T, { side: "no", count: 1 });
    const d1 = await ws.next((m) => m.type === "orderbook_delta");
    expect(d1.seq).toBe(4);
    fake.script.printTrade(T, { side: "no", count: 1 });
    const [, d2] = await ws.count((m) => m.type === "orderbook_delta", 2);
    expect(d2.seq).toBe(5);
    // The client sees the gap and resnapshots.
    ws.send({ id: 2, cmd: "unsubscribe", params: { sids: [1] } });
    const unsub = await ws.next((m) => m.type === "unsubscribed");
    expect(unsub).toMatchObject({ id: 2, sid: 1 });
    ws.send({ id: 3, cmd: "subscribe", params: { channels: ["orderbook_delta"], market_tickers: [T] } });
    const ack = await ws.next((m) => m.type === "subscribed" && m.id === 3);
    const snap = await ws.next((m) => m.type === "orderbook_snapshot" && m.sid === ack.msg.sid);
    expect(snap.seq).toBe(1);
    const book = await call(fake.apiUrl, "GET", `/markets/${T}/orderbook`);
    expect(snap.msg.yes_dollars_fp).toEqual(book.body.orderbook_fp.yes_dollars);
    // The old sid is silent; the new one continues from its snapshot.
    const before = ws.messages.filter((m) => m.type === "orderbook_delta" && m.sid === 1).length;
    fake.script.printTrade(T, { side: "no", count: 1 });
    const next = await ws.next((m) => m.type === "orderbook_delta" && m.sid === ack.msg.sid);
    expect(next.seq).toBe(2);
    expect(ws.messages.filter((m) => m.type === "orderbook_delta" && m.sid === 1).length).toBe(before);
  });

  it("update_subscription adds markets with a snapshot and removes them", async () => {
    const ws = await open();
    ws.send({ id: 1, cmd: "subscribe", params: { channels: ["orderbook_delta"], market_tickers: [T] } });
    await ws.next((m) => m.type === "orderbook_snapshot");
    ws.send({
      id: 2,
      cmd: "update_subscription",
      params: { sids: [1], market_tickers: [U], action: "add_markets" },
    });
    const snap = await ws.next((m) => m.type === "orderbook_snapshot" && m.msg.market_ticker === U);
    expect(snap.seq).toBe(2);
    const ok = await ws.next((m) => m.type === "ok" && m.id === 2);
    expect(ok.msg.market_tickers.sort()).toEqual([T, U].sort());
    ws.send({
      id: 3,
      cmd: "update_subscription",
      params: { sids: [1], market_tickers: [T], action: "delete_markets" },
    });
    await ws.next((m) => m.type === "ok" && m.id === 3);
    fake.script.printTrade(T, { side: "yes", count: 1 });
    fake.script.printTrade(U, { side: "yes", count: 1 });
    const d = await ws.next((m) => m.type === "orderbook_delta");
    expect(d.msg.market_ticker).toBe(U);
    expect(ws.messages.some((m) => m.type === "orderbook_delta" && m.msg.market_ticker === T)).toBe(false);
  });

  it("sends fills to the authenticated owner, with client_order_id on the deltas they caused", async () => {
    const ws = await open(key);
    ws.send({ id: 1, cmd: "subscribe", params: { channels: ["fill"] } });
    ws.send({ id: 2, cmd: "subscribe", params: { channels: ["orderbook_delta"], market_tickers: [T] } });
    await ws.count((m) => m.type === "subscribed", 2);
    const spy = await open();
    spy.send({ id: 1, cmd: "subscribe", params: { channels: ["orderbook_delta"], market_tickers: [T] } });
    await spy.next((m) => m.type === "orderbook_snapshot");
    const res = await call(fake.apiUrl, "POST", "/portfolio/events/orders", {
      key,
      body: {
        ticker: T,
        side: "bid",
        price: "0.4400",
        count: "3.00",
        client_order_id: "mine-1",
        time_in_force: "good_till_canceled",
        self_trade_prevention_type: "taker_at_cross",
      },
    });
    expect(res.status).toBe(201);
    const fill = await ws.next((m) => m.type === "fill");
    expect(fill.msg).toMatchObject({
      trade_id: expect.any(String),
      order_id: res.body.order_id,
      client_order_id: "mine-1",
      market_ticker: T,
      is_taker: true,
      yes_price_dollars: "0.4400",
      count_fp: "3.00",
      fee_cost: "0.0600",
      outcome_side: "yes",
      book_side: "bid",
      post_position_fp: "3.00",
    });
    expect(fill.msg).not.toHaveProperty("fill_id");
    // Only outcome_side/book_side carry direction; the deprecated side/action/purchased_side are gone.
    for (const field of ["side", "action", "purchased_side"]) expect(fill.msg).not.toHaveProperty(field);
    const mine = await ws.next((m) => m.type === "orderbook_delta");
    expect(mine.msg.client_order_id).toBe("mine-1");
    const theirs = await spy.next((m) => m.type === "orderbook_delta");
    expect(theirs.msg).not.toHaveProperty("client_order_id");
    expect(spy.messages.some((m) => m.type === "fill")).toBe(false);
  });

  it("answers bad commands with the documented error codes", async () => {
    const ws = await open();
    const cases: [unknown, number][] = [
      [{ id: 1, cmd: "subscribe" }, 2],
      [{ id: 2, cmd: "subscribe", params: { channels: [] } }, 3],
      [{ id: 3, cmd: "subscribe", params: { channels: ["nope"] } }, 8],
      [{ id: 4, cmd: "subscribe", params: { channels: ["orderbook_delta"] } }, 14],
      [{ id: 5, cmd: "subscribe", params: { channels: ["ticker"], market_tickers: ["KXNOPE"] } }, 16],
      [{ id: 6, cmd: "unsubscribe", params: {} }, 4],
      [{ id: 7, cmd: "unsubscribe", params: { sids: [42] } }, 7],
      [{ id: 8, cmd: "dance" }, 5],
      [{ id: 9, cmd: "update_subscription", params: { sids: [1, 2], action: "add_markets" } }, 12],
    ];
    for (const [cmd, code] of cases) {
      ws.send(cmd);
      const id = (cmd as { id: number }).id;
      const err = await ws.next((m) => m.type === "error" && m.id === id);
      expect(err.msg.code).toBe(code);
      expect(typeof err.msg.msg).toBe("string");
    }
    ws.ws.send("not json");
    const err = await ws.next((m) => m.type === "error" && m.id === undefined);
    expect(err.msg.code).toBe(1);
  });
});
