import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Crossbook,
  CrossbookApiError,
  CrossbookConfigError,
  CrossbookNetworkError,
  CrossbookRateLimitError,
  type LogLevel,
  parseRetryAfter,
  type RateLimitInfo,
  type RetryInfo,
  Transport,
  type TransportOptions,
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
  function scripted(answers: Array<Response | Error>, options: Partial<TransportOptions> = {}) {
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
      log: false,
      ...options,
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

  it("tells onRetry and the log about each retry before waiting", async () => {
    const told: string[] = [];
    const retries: RetryInfo[] = [];
    const { transport, slept } = scripted([error(503, "UNAVAILABLE"), error(502, "BAD_GATEWAY"), ok()], {
      onRetry: (info) => {
        retries.push(info);
        told.push(`retry ${info.attempt}`);
      },
      log: (level, message) => told.push(`${level}: ${message}`),
      sleep: async (ms) => {
        slept.push(ms);
        told.push(`sleep ${ms}`);
      },
    });
    await transport.request("get", "/v1/balance");
    expect(retries).toEqual([
      {
        method: "GET",
        url: "http://svc.test/v1/balance",
        attempt: 1,
        delayMs: 125,
        reason: "503 UNAVAILABLE",
      },
      {
        method: "GET",
        url: "http://svc.test/v1/balance",
        attempt: 2,
        delayMs: 250,
        reason: "502 BAD_GATEWAY",
      },
    ]);
    // Each retry is announced (log, then hook) before its wait; every answer is logged at debug.
    const order = told.filter((line) => !line.startsWith("debug"));
    expect(order).toEqual([
      "info: retrying GET http://svc.test/v1/balance in 125 ms (retry 1 of 3): 503 UNAVAILABLE",
      "retry 1",
      "sleep 125",
      "info: retrying GET http://svc.test/v1/balance in 250 ms (retry 2 of 3): 502 BAD_GATEWAY",
      "retry 2",
      "sleep 250",
    ]);
    expect(told.filter((line) => line.startsWith("debug"))).toHaveLength(3);
    expect(told).toContainEqual(
      expect.stringMatching(/^debug: GET http:\/\/svc\.test\/v1\/balance -> 200 \(/),
    );
  });

  it("waits out a short 429 after saying so (onRateLimit, a warn line), with the key's limit", async () => {
    const told: string[] = [];
    const limits: RateLimitInfo[] = [];
    const logger = {
      debug: () => {},
      info: () => {},
      warn: (message: string) => told.push(`warn: ${message}`),
    };
    const limited = error(429, "RATE_LIMITED", {
      "retry-after": "2",
      "ratelimit-limit": "60",
      "ratelimit-remaining": "0",
    });
    const { transport } = scripted([limited, ok()], {
      log: logger,
      onRateLimit: (info) => {
        limits.push(info);
        told.push("onRateLimit");
      },
      sleep: async (ms) => {
        told.push(`sleep ${ms}`);
      },
    });
    await transport.request("get", "/v1/markets", { query: { limit: 5 } });
    expect(limits).toEqual([
      {
        method: "GET",
        url: "http://svc.test/v1/markets?limit=5",
        waitMs: 2000,
        limit: 60,
        remaining: 0,
        retrying: true,
      },
    ]);
    expect(told).toEqual([
      "onRateLimit",
      "warn: rate limited: GET http://svc.test/v1/markets?limit=5: waiting 2 s (limit 60, 0 left)",
      "sleep 2000",
    ]);
  });

  it("throws CrossbookRateLimitError at once when a 429 asks for longer than maxRateLimitWaitMs", async () => {
    const limits: RateLimitInfo[] = [];
    const warnings: string[] = [];
    const long = () =>
      new Response(
        JSON.stringify({
          success: false,
          error: {
            code: "RATE_LIMITED",
            message: "Rate limit exceeded",
            details: { limit: 60, remaining: 0, reset_seconds: 34 },
          },
        }),
        { status: 429, headers: { "retry-after": "34" } },
      );
    const { transport, slept, seen } = scripted([long(), ok()], {
      onRateLimit: (info) => limits.push(info),
      log: (level: LogLevel, message: string) => {
        if (level === "warn") warnings.push(message);
      },
    });
    const failure = await transport.request("get", "/v1/balance").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CrossbookRateLimitError);
    expect(failure).toBeInstanceOf(CrossbookApiError); // code checks written for the API error still match
    expect(failure).toMatchObject({
      status: 429,
      code: "RATE_LIMITED",
      waitMs: 34_000,
      limit: 60,
      remaining: 0,
    });
    expect((failure as Error).message).toBe(
      "429 RATE_LIMITED: Rate limit exceeded (GET http://svc.test/v1/balance: asked to wait 34 s, " +
        "more than maxRateLimitWaitMs (10 s) (limit 60, 0 left))",
    );
    expect(seen).toHaveLength(1);
    expect(slept).toEqual([]);
    expect(limits).toEqual([
      {
        method: "GET",
        url: "http://svc.test/v1/balance",
        waitMs: 34_000,
        limit: 60,
        remaining: 0,
        retrying: false,
      },
    ]);
    expect(warnings).toEqual([
      expect.stringMatching(
        /^rate limited, not waiting: GET http:\/\/svc\.test\/v1\/balance: asked to wait 34 s/,
      ),
    ]);

    // A higher bound waits it out.
    const patient = scripted([long(), ok()], { maxRateLimitWaitMs: 60_000 });
    await patient.transport.request("get", "/v1/balance");
    expect(patient.slept).toEqual([34_000]);
  });

  it("throws CrossbookRateLimitError when the retries run out on 429s", async () => {
    const answers = Array.from({ length: 2 }, () => error(429, "RATE_LIMITED", { "retry-after": "1" }));
    const { transport, seen } = scripted(answers, { maxRetries: 1 });
    const failure = await transport.request("get", "/v1/balance").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CrossbookRateLimitError);
    expect((failure as Error).message).toMatch(/still limited after 2 attempts; wait 1 s\)$/);
    expect(seen).toHaveLength(2);
  });

  it("does not let a throwing hook fail the call", async () => {
    const warnings: string[] = [];
    const { transport } = scripted([error(503, "UNAVAILABLE"), ok()], {
      onRetry: () => {
        throw new Error("hook bug");
      },
      log: (level, message) => {
        if (level === "warn") warnings.push(message);
      },
    });
    await expect(transport.request("get", "/v1/balance")).resolves.toMatchObject({ success: true });
    expect(warnings).toEqual(["onRetry hook threw: hook bug"]);
  });

  it("names the method, URL and system error of a request that got no answer", async () => {
    const refused = (host: string) =>
      new TypeError("fetch failed", {
        cause: Object.assign(new Error(`connect ECONNREFUSED ${host}:8080`), { code: "ECONNREFUSED" }),
      });
    const unresolved = new TypeError("fetch failed", {
      cause: Object.assign(new Error("getaddrinfo ENOTFOUND crossbook.invalid"), { code: "ENOTFOUND" }),
    });
    const remote = new Transport({
      baseUrl: "http://10.1.2.3:8080",
      apiKey: "cb_test_x",
      maxRetries: 0,
      fetch: (async () => {
        throw refused("10.1.2.3");
      }) as unknown as typeof fetch,
    });
    const failure = await remote.request("get", "/v1/balance").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CrossbookNetworkError);
    // Not this machine: no "is crossbook running?" hint.
    expect((failure as Error).message).toBe(
      "GET http://10.1.2.3:8080/v1/balance failed: ECONNREFUSED 10.1.2.3:8080",
    );
    const dns = new Transport({
      baseUrl: "http://crossbook.invalid",
      apiKey: "cb_test_x",
      maxRetries: 0,
      fetch: (async () => {
        throw unresolved;
      }) as unknown as typeof fetch,
    });
    const dnsFailure = await dns
      .request("delete", "/v1/orders/{id}", { params: { id: "ord_1" } })
      .catch((e: unknown) => e);
    expect(dnsFailure).toMatchObject({
      message:
        "DELETE http://crossbook.invalid/v1/orders/ord_1 failed: ENOTFOUND crossbook.invalid — check the client's baseUrl (or CROSSBOOK_URL): crossbook.invalid does not resolve",
      method: "DELETE",
      url: "http://crossbook.invalid/v1/orders/ord_1",
      code: "ENOTFOUND",
      cause: unresolved,
    });
  });

  it("says a request timed out, after how long", async () => {
    const hang = (async (_url: string, init: RequestInit) =>
      new Promise((_resolve, reject) => {
        init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      })) as unknown as typeof fetch;
    const transport = new Transport({
      baseUrl: "http://127.0.0.1:9",
      apiKey: "cb_test_x",
      maxRetries: 0,
      timeoutMs: 50,
      fetch: hang,
    });
    const failure = await transport.request("get", "/v1/balance").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CrossbookNetworkError);
    expect(failure).toMatchObject({
      message: "GET http://127.0.0.1:9/v1/balance failed: no answer within 50 ms",
      code: "TIMEOUT",
    });
  });

  it("reads Retry-After as seconds or a date", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe("fills and arbitrage calls", () => {
  /** A client whose fetch answers from `answers` in turn and records the URLs asked for. */
  function scripted(answers: unknown[]) {
    const urls: URL[] = [];
    const fetch = (async (url: string) => {
      urls.push(new URL(url));
      const next = answers.shift();
      if (next === undefined) throw new Error("no more answers");
      return new Response(JSON.stringify(next), { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    const client = new Crossbook({ apiKey: "cb_test_x", baseUrl: "http://svc.test", fetch, log: false });
    return { client, urls };
  }
  const fill = (id: string) => ({
    id,
    order_id: "ord_1",
    market_id: "kalshi:A",
    market_title: "Will A happen?",
    side: "buy",
    outcome: "yes",
    price: 0.4,
    size: 5,
    fee: 0.02,
    liquidity: "taker",
    cause: {},
    created_at: "2026-11-01T00:00:00.000Z",
  });

  it("fills.all follows next_after page by page and stops when has_more is false", async () => {
    const { client, urls } = scripted([
      { success: true, data: [fill("fil_1"), fill("fil_2")], meta: { next_after: "fil_2", has_more: true } },
      { success: true, data: [fill("fil_3")], meta: { next_after: "fil_3", has_more: false } },
    ]);
    const seen: string[] = [];
    for await (const f of client.fills.all({
      since: "2026-11-01T00:00:00Z",
      market_id: "kalshi:A",
      pageSize: 2,
    }))
      seen.push(f.id);
    expect(seen).toEqual(["fil_1", "fil_2", "fil_3"]);
    expect(urls.map((u) => u.pathname)).toEqual(["/v1/fills", "/v1/fills"]);
    expect(Object.fromEntries(urls[0]!.searchParams)).toEqual({
      since: "2026-11-01T00:00:00Z",
      market_id: "kalshi:A",
      limit: "2",
    });
    expect(urls[1]!.searchParams.get("after")).toBe("fil_2");
    expect(urls[1]!.searchParams.get("market_id")).toBe("kalshi:A");
  });

  it("fills.list and arbitrage.list answer data and meta, without the envelope", async () => {
    const meta = { limit: 5, min_size: 10, pairs: 4, priced: 3, unpriced: 1, total: 0, pairs_loaded_at: "x" };
    const { client, urls } = scripted([
      { success: true, data: [fill("fil_9")], meta: { next_after: "fil_9", has_more: false } },
      { success: true, data: [], meta },
    ]);
    expect(await client.fills.list({ after: "fil_8", limit: 1 })).toEqual({
      data: [fill("fil_9")],
      meta: { next_after: "fil_9", has_more: false },
    });
    expect(await client.arbitrage.list({ min_profit: 1, venue: "kalshi", limit: 5 })).toEqual({
      data: [],
      meta,
    });
    expect(urls[1]!.pathname).toBe("/v1/arbitrage");
    expect(Object.fromEntries(urls[1]!.searchParams)).toEqual({
      min_profit: "1",
      venue: "kalshi",
      limit: "5",
    });
  });
});

describe("a crossbook that is not running", () => {
  it("is named with the method, URL and ECONNREFUSED, and a hint to start it; the cause is kept", async () => {
    // A port that was just free: nothing listens on it.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const retries: RetryInfo[] = [];
    const client = new Crossbook({
      apiKey: "cb_test_nobody",
      baseUrl: `http://127.0.0.1:${port}`,
      onRetry: (info) => retries.push(info),
    });
    const failure = await client.markets.list({ limit: 1 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CrossbookNetworkError);
    expect((failure as Error).message).toBe(
      `GET http://127.0.0.1:${port}/v1/markets?limit=1 failed: ECONNREFUSED 127.0.0.1:${port} (4 attempts)` +
        " — is crossbook running? (start it with `npx crossbook demo` or `npx crossbook serve`)",
    );
    expect(failure).toMatchObject({ method: "GET", code: "ECONNREFUSED" });
    const cause = (failure as CrossbookNetworkError).cause as Error & { cause?: { code?: string } };
    expect(cause).toBeInstanceOf(TypeError); // what fetch threw, with the system error under it
    expect(cause.cause?.code).toBe("ECONNREFUSED");
    // A GET is safe to repeat: three retries, each told to onRetry with the cause.
    expect(retries.map((r) => [r.attempt, r.reason])).toEqual([
      [1, `ECONNREFUSED 127.0.0.1:${port}`],
      [2, `ECONNREFUSED 127.0.0.1:${port}`],
      [3, `ECONNREFUSED 127.0.0.1:${port}`],
    ]);
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

  it("lists the account's fills with market titles, and reads them all on from a cursor", async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    const market = await client.markets.get(marketId);
    const orders: string[] = [];
    for (let i = 0; i < 2; i++) {
      const order = await client.orders.place({
        market_id: marketId,
        side: "buy",
        type: "market",
        amount: 5,
        max_slippage: 0.2,
      });
      orders.push(order.id);
    }
    const page = await client.fills.list({ market_id: marketId, since, limit: 100 });
    expect(page.meta.has_more).toBe(false);
    expect(new Set(page.data.map((f) => f.order_id))).toEqual(new Set(orders));
    for (const f of page.data) {
      expect(f.market_id).toBe(marketId);
      expect(f.market_title).toBe(market.title);
    }
    expect(page.meta.next_after).toBe(page.data.at(-1)!.id);
    // One fill per request: the iterator has to follow next_after to see them all, in the same order.
    const all: string[] = [];
    for await (const f of client.fills.all({ market_id: marketId, since, pageSize: 1 })) all.push(f.id);
    expect(all).toEqual(page.data.map((f) => f.id));
    // Nothing after the last one.
    expect((await client.fills.list({ after: page.meta.next_after!, market_id: marketId })).data).toEqual([]);
    // Sell back what was bought, so later tests start flat in this market.
    const held = page.data.reduce((n, f) => n + f.size, 0);
    await client.orders.place({
      market_id: marketId,
      side: "sell",
      type: "market",
      amount: held,
      max_slippage: 0.5,
    });
  });

  it("scans arbitrage: opportunities best first, the scan's meta, the filters sent", async () => {
    const { data, meta } = await client.arbitrage.list({ min_profit: 0, limit: 3 });
    expect(meta.limit).toBe(3);
    expect(meta.priced + meta.unpriced).toBeLessThanOrEqual(meta.pairs);
    expect(data.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < data.length; i++) expect(data[i]!.profit).toBeLessThanOrEqual(data[i - 1]!.profit);
    for (const o of data) {
      expect(o.legs).toHaveLength(2);
      expect(o.markets).toHaveLength(2);
      expect(o.profit).toBeGreaterThanOrEqual(0);
    }
    // The query reaches the service: a venue it does not know is a validation error.
    const refused = await client.arbitrage.list({ venue: "nowhere" as never }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CrossbookApiError);
    expect((refused as CrossbookApiError).status).toBe(400);
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
    // The markets' titles are read for the report.
    expect(first.titles).toEqual({ [marketId]: (await client.markets.get(marketId)).title });
    expect(first.equityCurve.time.length).toBeGreaterThan(10);
    expect(first.rejected, JSON.stringify(first.rejected.slice(0, 2))).toEqual([]);
    expect(first.trades.length).toBe(1);
    expect(JSON.stringify(await run())).toBe(JSON.stringify(first));
    const file = path.join(os.tmpdir(), `cb-backtest-${process.pid}.html`);
    await writeReport(first, file);
    const html = readFileSync(file, "utf8");
    expect(html).toContain("<svg");
    expect(html).toContain(`<span class="id">${marketId}</span>`);
  });

  it("lets a live key work in production", async () => {
    const live = new Crossbook({ apiKey: demo.liveKey, environment: "production", baseUrl: demo.url });
    const { data } = await live.markets.list({ limit: 1 });
    expect(data).toHaveLength(1);
  });
});
