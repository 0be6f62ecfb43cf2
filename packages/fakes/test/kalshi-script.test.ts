import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type KalshiFake, startKalshiFake } from "../src/kalshi/index";
import { call, makeKey, type Wire, WsClient } from "./kalshi-helpers";

const T = "KXFEDDECISION-26DEC-C25";
const key = makeKey("dddddddd-0000-4000-8000-000000000004");

describe("fake Kalshi scripted failures", () => {
  let fake: KalshiFake;
  beforeEach(async () => {
    fake = await startKalshiFake({ seed: 4 });
    fake.script.addApiKey({ keyId: key.keyId, publicKeyPem: key.publicKeyPem });
  });
  afterEach(() => fake.close());

  it("goDown answers 503 everywhere (REST and WS upgrade) until brought back", async () => {
    const live = await WsClient.open(fake.wsUrl, key);
    const dropped = new Promise<void>((resolve) => live.ws.once("close", () => resolve()));
    fake.script.goDown(true);
    await dropped;
    const res = await call(fake.apiUrl, "GET", "/markets");
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("service_unavailable");
    expect((await call(fake.apiUrl, "GET", "/portfolio/balance", { key })).status).toBe(503);
    await expect(WsClient.open(fake.wsUrl, key)).rejects.toThrow(/503/);
    fake.script.goDown(false);
    expect((await call(fake.apiUrl, "GET", "/markets")).status).toBe(200);
  });

  it("rateLimitNext answers 429 with Retry-After for exactly n requests", async () => {
    fake.script.rateLimitNext(2, 3);
    for (let i = 0; i < 2; i++) {
      const res = await call(fake.apiUrl, "GET", "/events");
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("3");
      expect(res.body.error.code).toBe("too_many_requests");
    }
    expect((await call(fake.apiUrl, "GET", "/events")).status).toBe(200);
  });

  it("injectUnexpectedFields adds unknown fields to REST payloads and WS messages", async () => {
    fake.script.injectUnexpectedFields(true);
    const res = await call(fake.apiUrl, "GET", `/markets/${T}`);
    expect(res.body.x_fake_unknown).toBeDefined();
    expect(res.body.market.x_fake_unknown).toBeDefined();
    expect(res.body.market.yes_bid_dollars).toMatch(/^0\.\d{4}$/);
    const ws = await WsClient.open(fake.wsUrl, key);
    ws.send({ id: 1, cmd: "subscribe", params: { channels: ["orderbook_delta"], market_tickers: [T] } });
    const snap = await ws.next((m) => m.type === "orderbook_snapshot");
    expect(snap.msg.x_fake_extra_field).toBe(1);
    ws.close();
    fake.script.injectUnexpectedFields(false);
    expect((await call(fake.apiUrl, "GET", `/markets/${T}`)).body.market).not.toHaveProperty(
      "x_fake_unknown",
    );
  });

  it("malformNext tampers with the next matching response only", async () => {
    fake.script.malformNext("garbage");
    const g = await fetch(`${fake.apiUrl}/markets`);
    expect(g.status).toBe(200);
    await expect(g.json()).rejects.toThrow();
    expect((await call(fake.apiUrl, "GET", "/markets")).body.markets.length).toBeGreaterThan(0);

    fake.script.malformNext("missing_fields", { path: "/orderbook" });
    const untouched = await call(fake.apiUrl, "GET", `/markets/${T}`);
    expect(untouched.body.market.yes_bid_dollars).toBeDefined();
    const ob = await call(fake.apiUrl, "GET", `/markets/${T}/orderbook`);
    expect(ob.body.orderbook_fp).not.toHaveProperty("no_dollars");
    expect(ob.body.orderbook_fp.yes_dollars.length).toBeGreaterThan(0);

    fake.script.malformNext("missing_fields");
    const page = await call(fake.apiUrl, "GET", "/markets");
    expect(page.body).not.toHaveProperty("cursor");
    expect(page.body.markets[0]).not.toHaveProperty("close_time");

    fake.script.malformNext("unknown_enum", { count: 2 });
    for (let i = 0; i < 2; i++)
      expect((await call(fake.apiUrl, "GET", `/markets/${T}`)).body.market.status).toBe("x_unknown_status");
    expect((await call(fake.apiUrl, "GET", `/markets/${T}`)).body.market.status).toBe("active");
  });

  it("pings open sockets with a heartbeat", async () => {
    const quick = await startKalshiFake({ wsPingIntervalMs: 30 });
    try {
      quick.script.addApiKey({ keyId: key.keyId, publicKeyPem: key.publicKeyPem });
      const ws = await WsClient.open(quick.wsUrl, key);
      const body = await new Promise<string>((resolve) =>
        ws.ws.once("ping", (data) => resolve(data.toString())),
      );
      expect(body).toBe("heartbeat");
      ws.close();
    } finally {
      await quick.close();
    }
  });

  it("setLatency delays responses", async () => {
    fake.script.setLatency(150);
    const t0 = Date.now();
    expect((await call(fake.apiUrl, "GET", "/exchange/status")).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    fake.script.setLatency(0);
  });

  it("dropWebSockets closes every connection; clients can reconnect", async () => {
    const ws = await WsClient.open(fake.wsUrl, key);
    const closed = new Promise<void>((resolve) => ws.ws.once("close", () => resolve()));
    fake.script.dropWebSockets();
    await closed;
    expect(ws.closed).toBe(true);
    const again = await WsClient.open(fake.wsUrl, key);
    again.send({ id: 1, cmd: "subscribe", params: { channels: ["ticker"] } });
    expect((await again.next((m) => m.type === "subscribed")).msg.sid).toBe(1);
    again.close();
  });

  it("counts requests per endpoint so a test can prove trading was never called", async () => {
    await call(fake.apiUrl, "GET", "/markets");
    await call(fake.apiUrl, "GET", "/markets");
    await call(fake.apiUrl, "GET", `/markets/${T}/orderbook`);
    expect(fake.script.requestCount("GET /markets")).toBe(2);
    expect(fake.script.requestCount("GET /markets/:ticker/orderbook")).toBe(1);
    expect(fake.script.tradingRequestCount()).toBe(0);
    await call(fake.apiUrl, "POST", "/portfolio/events/orders", { key, body: {} });
    expect(fake.script.requestCount("POST /portfolio/events/orders")).toBe(1);
    expect(fake.script.tradingRequestCount()).toBe(1);
    fake.script.resetRequestCounts();
    expect(fake.script.requestCounts()).toEqual({});
  });

  it("closeMarket stops trading and shows status closed", async () => {
    fake.script.closeMarket(T);
    expect(fake.script.market(T)["status"]).toBe("closed");
    const res = await call(fake.apiUrl, "GET", "/markets?status=closed");
    expect(res.body.markets.map((m: Wire) => m.ticker)).toContain(T);
  });
});

describe("fake Kalshi simulation", () => {
  const books = async (f: KalshiFake) => {
    const out: unknown[] = [];
    for (const t of f.script.tickers({ openOnly: true }))
      out.push((await call(f.apiUrl, "GET", `/markets/${t}/orderbook`)).body);
    return out;
  };

  it("tick moves books with trades, deterministically per seed", async () => {
    const a = await startKalshiFake({ seed: 42 });
    const b = await startKalshiFake({ seed: 42 });
    const c = await startKalshiFake({ seed: 43 });
    try {
      const start = await books(a);
      for (const f of [a, b, c]) f.script.tick(20);
      const [ba, bb, bc] = [await books(a), await books(b), await books(c)];
      expect(ba).toEqual(bb);
      expect(ba).not.toEqual(start);
      expect(ba).not.toEqual(bc);
      const trades = await call(a.apiUrl, "GET", "/markets/trades?limit=1000");
      expect(trades.body.trades.length).toBeGreaterThan(10);
      const tb = await call(b.apiUrl, "GET", "/markets/trades?limit=1000");
      expect(
        tb.body.trades.map((t: Wire) => [t.trade_id, t.ticker, t.yes_price_dollars, t.count_fp]),
      ).toEqual(trades.body.trades.map((t: Wire) => [t.trade_id, t.ticker, t.yes_price_dollars, t.count_fp]));
      // Books never cross after simulation.
      for (const ob of ba as Wire[]) {
        const y = ob.orderbook_fp.yes_dollars.at(-1);
        const n = ob.orderbook_fp.no_dollars.at(-1);
        if (y && n) expect(Number(y[0]) + Number(n[0])).toBeLessThan(1);
      }
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it("autoplay ticks on an interval and streams to subscribers", async () => {
    const f = await startKalshiFake({ seed: 1, autoplay: { intervalMs: 20 } });
    try {
      f.script.addApiKey({ keyId: key.keyId, publicKeyPem: key.publicKeyPem });
      const ws = await WsClient.open(f.wsUrl, key);
      ws.send({ id: 1, cmd: "subscribe", params: { channels: ["trade"] } });
      const trade = await ws.next((m) => m.type === "trade", 5000);
      expect(trade.msg.count_fp).toMatch(/^\d+\.00$/);
      ws.close();
    } finally {
      await f.close();
    }
  });
});
