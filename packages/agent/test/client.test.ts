import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Crossbook,
  CrossbookApiError,
  CrossbookConfigError,
  CrossbookNetworkError,
  parseRetryAfter,
  Transport,
  writeReport,
} from "../src/index";
import { type Demo, startDemo } from "./support/demo";

describe("environment guard", () => {
  it("refuses a sandbox key in production (and the reverse) before sending anything", () => {
    let calls = 0;
    const fetch = (async () => {
      calls++;
      return new Response("{}");
    }) as typeof globalThis.fetch;
    expect(() => new Crossbook({ apiKey: "cb_test_abc", environment: "production", fetch })).toThrow(
      CrossbookConfigError,
    );
    expect(() => new Crossbook({ apiKey: "cb_live_abc", environment: "sandbox", fetch })).toThrow(
      /cannot be used/,
    );
    expect(() => new Crossbook({ apiKey: "sk_abc", environment: "sandbox", fetch })).toThrow(
      /not a crossbook key/,
    );
    expect(() => new Crossbook({ apiKey: "cb_live_abc", fetch })).toThrow(CrossbookConfigError); // default sandbox
    expect(calls).toBe(0);
    expect(new Crossbook({ apiKey: "cb_live_abc", environment: "production", fetch }).environment).toBe(
      "production",
    );
  });
});

describe("transport retries", () => {
  function scripted(answers: Array<Response | Error>) {
    const seen: Array<{ url: string; headers: Record<string, string> }> = [];
    const fetch = (async (url: string, init: RequestInit) => {
      seen.push({ url, headers: init.headers as Record<string, string> });
      const next = answers.shift();
      if (!next) throw new Error("no more answers");
      if (next instanceof Error) throw next;
      return next;
    }) as unknown as typeof globalThis.fetch;
    const slept: number[] = [];
    const transport = new Transport({
      baseUrl: "http://svc.test/",
      apiKey: "cb_test_x",
      fetch,
      random: () => 0.5,
      sleep: async (ms) => {
        slept.push(ms);
      },
    });
    return { transport, seen, slept };
  }
  const ok = () => new Response(JSON.stringify({ success: true, data: { id: "ord_1" } }), { status: 200 });
  const error = (status: number, code: string, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify({ success: false, error: { code, message: code.toLowerCase() } }), {
      status,
      headers: { "x-request-id": "req-9", ...headers },
    });

  it("retries 429 honouring Retry-After as a floor, and 503 with backoff", async () => {
    const { transport, slept, seen } = scripted([
      error(429, "RATE_LIMITED", { "retry-after": "2" }),
      error(503, "UNAVAILABLE"),
      ok(),
    ]);
    const body = await transport.request("get", "/v1/orders/{id}", { params: { id: "ord_1" } });
    expect(body).toEqual({ success: true, data: { id: "ord_1" } });
    expect(seen).toHaveLength(3);
    expect(seen[0]!.url).toBe("http://svc.test/v1/orders/ord_1");
    expect(seen[0]!.headers.authorization).toBe("Bearer cb_test_x");
    expect(slept[0]).toBe(2000); // Retry-After beats the 125 ms jittered step
    expect(slept[1]).toBe(250); // 0.5 × 500 ms (second step)
  });

  it("does not retry a client error, and carries the envelope", async () => {
    const { transport, seen } = scripted([error(400, "VALIDATION_ERROR")]);
    const failure = await transport.request("get", "/v1/orders").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CrossbookApiError);
    expect(failure).toMatchObject({
      status: 400,
      code: "VALIDATION_ERROR",
      requestId: "req-9",
      retryable: false,
    });
    expect(seen).toHaveLength(1);
  });

  it("gives up after maxRetries", async () => {
    const answers = Array.from({ length: 5 }, () => error(503, "UNAVAILABLE"));
    const { transport, seen } = scripted(answers);
    await expect(transport.request("get", "/v1/balance")).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(4); // 1 + 3 retries
  });

  it("repeats a lost POST only when it carries an idempotency key", async () => {
    const lost = () => new TypeError("fetch failed");
    const plain = scripted([lost(), ok()]);
    await expect(plain.transport.request("post", "/v1/sandbox/reset", {})).rejects.toBeInstanceOf(
      CrossbookNetworkError,
    );
    expect(plain.seen).toHaveLength(1);
    const keyed = scripted([lost(), ok()]);
    await keyed.transport.request("post", "/v1/orders", {
      body: { market_id: "kalshi:X", side: "buy", amount: 1, price: 0.5 },
      idempotencyKey: "k-1",
    });
    expect(keyed.seen).toHaveLength(2);
    expect(keyed.seen.map((s) => s.headers["idempotency-key"])).toEqual(["k-1", "k-1"]);
  });

  it("reads Retry-After as seconds or a date", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe("against a running crossbook with the fake venues", () => {
  let demo: Demo;
  let client: Crossbook;
  let marketId: string;

  beforeAll(async () => {
    demo = await startDemo();
    client = new Crossbook({ apiKey: demo.sandboxKey, environment: "sandbox", baseUrl: demo.url });
    // The catalog syncs at start; wait for an open Kalshi market with a book.
    for (let i = 0; i < 100; i++) {
      const { data } = await client.markets.list({ venue: "kalshi", status: "open", limit: 50 });
      const market = data.find((m) => m.best_bid !== null && m.best_ask !== null);
      if (market) {
        marketId = market.id;
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(marketId).toBeDefined();
  }, 90_000);

  afterAll(async () => {
    await demo?.close();
  });

  it("reads the account, balance, markets and prices", async () => {
    const balance = await client.balance();
    expect(balance.environment).toBe("sandbox");
    expect(balance.available).toBeGreaterThan(0);
    const market = await client.markets.get(marketId);
    expect(market.id).toBe(marketId);
    const prices = await client.prices.get([marketId], { orderbook: true });
    expect(prices[marketId]).toBeDefined();
    const all: string[] = [];
    for await (const m of client.paginate((q) => client.markets.list({ ...q, venue: "kalshi" }), 5))
      all.push(m.id);
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBeGreaterThan(5);
  });

  it("places, reads and cancels an order; a second cancel is a typed 409", async () => {
    const order = await client.orders.place({ market_id: marketId, side: "buy", price: 0.02, amount: 5 });
    expect(order.status).toBe("open");
    expect((await client.orders.get(order.id)).id).toBe(order.id);
    const { data: open } = await client.orders.list({ market_id: marketId });
    expect(open.map((o) => o.id)).toContain(order.id);
    const cancelled = await client.orders.cancel(order.id);
    expect(cancelled.status).toBe("cancelled");
    const again = await client.orders.cancel(order.id).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(CrossbookApiError);
    expect(again).toMatchObject({
      status: 409,
      code: "ORDER_NOT_CANCELLABLE",
      details: { order_id: order.id },
    });
    expect((again as CrossbookApiError).requestId).toBeTruthy();
  });

  it("adds an idempotency key to every placement, so a retry after a lost answer makes one order", async () => {
    let dropped = false;
    const lossy = (async (url: string, init: RequestInit) => {
      const response = await fetch(url, init);
      if (!dropped && init.method === "POST") {
        dropped = true;
        throw new TypeError("connection reset after the server answered");
      }
      return response;
    }) as unknown as typeof globalThis.fetch;
    const flaky = new Crossbook({
      apiKey: demo.sandboxKey,
      environment: "sandbox",
      baseUrl: demo.url,
      fetch: lossy,
    });
    const before = (await client.orders.list({ market_id: marketId, status: "all", limit: 100 })).meta.total;
    const order = await flaky.orders.place({ market_id: marketId, side: "buy", price: 0.03, amount: 5 });
    const after = (await client.orders.list({ market_id: marketId, status: "all", limit: 100 })).meta.total;
    expect(dropped).toBe(true);
    expect(after).toBe((before ?? 0) + 1);
    await client.orders.cancel(order.id);
  });

  it("turns a validation failure into a typed error with field details", async () => {
    const failure = await client.orders
      .place({ market_id: marketId, side: "buy", price: 1.5, amount: 5 })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CrossbookApiError);
    expect((failure as CrossbookApiError).status).toBe(400);
    expect((failure as CrossbookApiError).code).toBe("INVALID_PRICE");
  });

  it("backtests a strategy on the service's candles, deterministically, and writes a report", async () => {
    const to = new Date();
    const from = new Date(to.getTime() - 3 * 86_400_000);
    const run = () =>
      client.backtest({
        strategy: {
          onCandle(ctx) {
            if (ctx.portfolio.position(marketId, "yes") === 0 && ctx.openOrders.length === 0)
              ctx.order({ market_id: marketId, side: "buy", type: "market", amount: 10 });
          },
        },
        markets: [marketId],
        interval: "1h",
        from,
        to,
        initialCash: 1000,
        progressLog: false,
      });
    const first = await run();
    expect(first.equityCurve.time.length).toBeGreaterThan(10);
    expect(first.rejected, JSON.stringify(first.rejected.slice(0, 2))).toEqual([]);
    expect(first.trades.length).toBe(1);
    expect(JSON.stringify(await run())).toBe(JSON.stringify(first));
    const file = path.join(os.tmpdir(), `cb-backtest-${process.pid}.html`);
    await writeReport(first, file);
    expect(readFileSync(file, "utf8")).toContain("<svg");
  });

  it("lets a live key work in production", async () => {
    const live = new Crossbook({ apiKey: demo.liveKey, environment: "production", baseUrl: demo.url });
    const { data } = await live.markets.list({ limit: 1 });
    expect(data).toHaveLength(1);
  });
});
