/**
 * The adapter's I/O against a tiny local HTTP server speaking Kalshi's documented formats: cursor
 * pagination to the end, every endpoint it reads, RSA-PSS on portfolio calls, both order-entry
 * shapes, and error mapping (429 + Retry-After and 5xx retried, 400 not, the venue's message kept).
 */
import { constants, generateKeyPairSync, verify } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createKalshiVenue, type KalshiVenueConfig } from "../../../src/venues/kalshi/adapter";
import type { VenueCredentials, VenueOrderRequest } from "../../../src/venues/venue";
import { fixture } from "./fixtures";

type Reply = { status?: number; body?: unknown; headers?: Record<string, string> };
type Route = (url: URL, req: http.IncomingMessage, body: string) => Reply;
interface Seen {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const PREFIX = "/trade-api/v2";
let routes: Record<string, Route> = {};
const seen: Seen[] = [];
let server: http.Server;
let apiUrl: string;

const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
const credentials: VenueCredentials = {
  venue: "kalshi",
  keyId: "key-123",
  privateKeyPem: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
};

/** What the real venue does: verify timestamp + METHOD + path (no query) with PSS-SHA256. */
function signatureValid(req: http.IncomingMessage, path: string): boolean {
  const ts = req.headers["kalshi-access-timestamp"];
  const sig = req.headers["kalshi-access-signature"];
  if (typeof ts !== "string" || typeof sig !== "string" || req.headers["kalshi-access-key"] !== "key-123")
    return false;
  return verify(
    "sha256",
    Buffer.from(`${ts}${req.method}${path}`),
    {
      key: pair.publicKey,
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength: constants.RSA_PSS_SALTLEN_AUTO,
    },
    Buffer.from(sig, "base64"),
  );
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      seen.push({
        method: req.method ?? "",
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
      });
      const key = `${req.method} ${url.pathname.slice(PREFIX.length)}`;
      const route = routes[key];
      let reply: Reply;
      if (!route) reply = { status: 404, body: { error: { code: "not_found", message: "not found" } } };
      else if (url.pathname.includes("/portfolio/") && !signatureValid(req, url.pathname))
        reply = { status: 401, body: { error: { code: "unauthorized", message: "bad signature" } } };
      else reply = route(url, req, body);
      res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
      res.end(reply.body === undefined ? "" : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${PREFIX}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  routes = {};
  seen.length = 0;
});

const sleeps: number[] = [];
const warnings: Array<{ obj: object; msg: string }> = [];
function venue(overrides: Partial<KalshiVenueConfig> = {}) {
  sleeps.length = 0;
  warnings.length = 0;
  return createKalshiVenue({
    apiUrl,
    wsUrl: "ws://127.0.0.1:1/trade-api/ws/v2",
    log: { info: () => {}, warn: (obj, msg) => warnings.push({ obj, msg }) },
    http: {
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 1,
      rateLimit: { requests: 10_000, windowMs: 1000 },
    },
    ...overrides,
  });
}

const marketsPage = () => fixture<{ markets: Array<Record<string, unknown>> }>("markets-page.json").markets;
const calls = (path: string) => seen.filter((s) => s.path === PREFIX + path);

describe("discovery", () => {
  it("follows the cursor through every page until it comes back empty, with mve_filter=exclude", async () => {
    const all = marketsPage();
    const pages: Record<string, Reply> = {
      "": { body: { markets: all.slice(0, 2), cursor: "c-2" } },
      "c-2": { body: { markets: all.slice(2, 5), cursor: "c-3" } },
      "c-3": { body: { markets: all.slice(5), cursor: "" } },
    };
    routes["GET /markets"] = (url) => pages[url.searchParams.get("cursor") ?? ""] ?? { status: 400 };
    const progress: Array<{ page: number; items: number }> = [];
    const markets = await venue().listMarkets({ status: "open" }, (p) => progress.push(p));
    expect(calls("/markets").map((c) => c.query)).toEqual([
      { limit: "1000", mve_filter: "exclude", status: "open" },
      { limit: "1000", mve_filter: "exclude", status: "open", cursor: "c-2" },
      { limit: "1000", mve_filter: "exclude", status: "open", cursor: "c-3" },
    ]);
    expect(progress).toEqual([
      { page: 1, items: 2 },
      { page: 2, items: 5 },
      { page: 3, items: 7 },
    ]);
    // 7 listed, the malformed one skipped and logged once, the combo dropped.
    expect(markets.map((m) => m.venueMarketId)).toEqual([
      "KXFEDDECISION-26DEC-H0",
      "KXBTC-26DEC31-T150000",
      "KXCPI-26OCT-T0.3",
      "KXNBA-26NOV23-BOS",
      "KXHIGHNY-26NOV23-B60",
    ]);
    expect(warnings.some((w) => (w.obj as { ticker?: string }).ticker === "KXBAD-26NOV23-X")).toBe(true);
  });

  it("a page without a cursor fails the walk rather than stop early; so does a repeating cursor", async () => {
    routes["GET /markets"] = () => ({ body: { markets: marketsPage().slice(0, 1) } });
    await expect(venue().listMarkets()).rejects.toMatchObject({ kind: "bad_response" });
    routes["GET /markets"] = () => ({ body: { markets: [], cursor: "same" } });
    const v = venue();
    await expect(v.listMarkets()).rejects.toMatchObject({ kind: "bad_response" });
    expect(calls("/markets")).toHaveLength(3); // 1 + first page + its repeat
    expect(v.reporter.counts()).toEqual({ cursor_repeated: 1 });
  });

  it("maps our status filter to Kalshi's vocabulary", async () => {
    routes["GET /markets"] = () => ({ body: { markets: [], cursor: "" } });
    await venue().listMarkets({ status: "resolved", venueEventId: "KXCPI-26OCT" });
    await venue().listMarkets({ status: "all" });
    expect(calls("/markets").map((c) => [c.query["status"], c.query["event_ticker"]])).toEqual([
      ["settled", "KXCPI-26OCT"],
      [undefined, undefined],
    ]);
  });

  it("lists events over pages with nested markets; markets listed afterwards borrow settlement sources", async () => {
    const events = fixture<{ events: unknown[] }>("events-page.json").events;
    routes["GET /events"] = (url) =>
      url.searchParams.get("cursor") === "e-2"
        ? { body: { events: events.slice(1), cursor: "", milestones: [] } }
        : { body: { events: events.slice(0, 1), cursor: "e-2", milestones: [] } };
    routes["GET /markets"] = () => ({ body: { markets: marketsPage().slice(0, 1), cursor: "" } });
    const v = venue();
    const listed = await v.listEvents({ status: "open" });
    expect(listed.map((e) => [e.venueEventId, e.marketIds.length])).toEqual([
      ["KXFEDDECISION-26DEC", 2],
      ["KXHIGHNY-26NOV23", 0],
    ]);
    expect(calls("/events")[0]?.query).toEqual({ limit: "200", with_nested_markets: "true", status: "open" });
    const [market] = await v.listMarkets({ status: "open" });
    expect(market?.settlementSource).toBe("Federal Reserve (https://www.federalreserve.gov/)");
  });

  it("gets one market by our id or ticker, with its event's settlement source", async () => {
    routes["GET /markets/KXFEDDECISION-26DEC-H0"] = () => ({ body: { market: marketsPage()[0] } });
    routes["GET /events/KXFEDDECISION-26DEC"] = () => ({ body: fixture("event.json") });
    const v = venue();
    const market = await v.getMarket("kalshi:KXFEDDECISION-26DEC-H0");
    expect(market).toMatchObject({ id: "kalshi:KXFEDDECISION-26DEC-H0", bestBid: 420_000 });
    expect(market.settlementSource).toBe("Federal Reserve (https://www.federalreserve.gov/)");
    await v.getMarket("KXFEDDECISION-26DEC-H0");
    expect(calls("/events/KXFEDDECISION-26DEC")).toHaveLength(1); // cached
    await expect(v.getMarket("kalshi:NOPE")).rejects.toMatchObject({ kind: "not_found", retryable: false });
  });

  it("reads the order book (depth passed through) and the candlesticks under the event's series", async () => {
    routes["GET /markets/KXFEDDECISION-26DEC-H0/orderbook"] = () => ({ body: fixture("orderbook.json") });
    routes["GET /markets/KXFEDDECISION-26DEC-H0"] = () => ({ body: { market: marketsPage()[0] } });
    routes["GET /events/KXFEDDECISION-26DEC"] = () => ({ body: fixture("event.json") });
    routes["GET /series/KXFEDDECISION/markets/KXFEDDECISION-26DEC-H0/candlesticks"] = () => ({
      body: fixture("candlesticks-1h.json"),
    });
    const v = venue();
    const book = await v.getOrderBook("kalshi:KXFEDDECISION-26DEC-H0", 10);
    expect(book.yes.bids[0]).toEqual({ price: 420_000, size: 13_000_000 });
    expect(book.yes.asks[0]).toEqual({ price: 440_000, size: 17_000_000 });
    expect(calls("/markets/KXFEDDECISION-26DEC-H0/orderbook")[0]?.query).toEqual({ depth: "10" });
    const deep = await v.getOrderBook("kalshi:KXFEDDECISION-26DEC-H0", 1);
    expect(deep.yes.bids).toHaveLength(2); // the server decides depth; we pass it through
    await v.getOrderBook("kalshi:KXFEDDECISION-26DEC-H0", 500);
    await v.getOrderBook("kalshi:KXFEDDECISION-26DEC-H0");
    expect(calls("/markets/KXFEDDECISION-26DEC-H0/orderbook").map((c) => c.query)).toEqual([
      { depth: "10" },
      { depth: "1" },
      { depth: "0" }, // beyond the venue's 100: all levels
      {},
    ]);
    const candles = await v.getPriceHistory("kalshi:KXFEDDECISION-26DEC-H0", {
      interval: "1h",
      start: "2026-11-22T00:00:00Z",
      end: "2026-11-23T00:00:00Z",
    });
    expect(candles).toHaveLength(2);
    expect(calls("/series/KXFEDDECISION/markets/KXFEDDECISION-26DEC-H0/candlesticks")[0]?.query).toEqual({
      start_ts: String(Date.parse("2026-11-22T00:00:00Z") / 1000),
      end_ts: String(Date.parse("2026-11-23T00:00:00Z") / 1000),
      period_interval: "60",
    });
    // The market's event (and so its series) is remembered: a second history call reads candles only.
    await v.getPriceHistory("KXFEDDECISION-26DEC-H0", {
      interval: "1d",
      start: "2026-11-01T00:00:00Z",
      end: "2026-11-23T00:00:00Z",
    });
    expect(calls("/markets/KXFEDDECISION-26DEC-H0")).toHaveLength(1);
    expect(calls("/events/KXFEDDECISION-26DEC")).toHaveLength(1);
    expect(
      calls("/series/KXFEDDECISION/markets/KXFEDDECISION-26DEC-H0/candlesticks")[1]?.query["period_interval"],
    ).toBe("1440");
  });
});

describe("errors", () => {
  it("429 with Retry-After is retried no sooner than asked", async () => {
    let n = 0;
    routes["GET /markets"] = () =>
      ++n === 1
        ? {
            status: 429,
            headers: { "retry-after": "3" },
            body: { error: { code: "too_many_requests", message: "slow down" } },
          }
        : { body: { markets: [], cursor: "" } };
    await venue().listMarkets();
    expect(n).toBe(2);
    expect(sleeps[0]).toBeGreaterThanOrEqual(3000);
  });

  it("5xx is retried with backoff", async () => {
    let n = 0;
    routes["GET /markets/T"] = () =>
      ++n < 3 ? { status: 503, body: "upstream" } : { body: { market: marketsPage()[0] } };
    await venue().getMarket("kalshi:T");
    expect(n).toBe(3);
    expect(sleeps).toHaveLength(2);
  });

  it("400 is not retried and keeps the venue's message and code", async () => {
    routes["POST /portfolio/events/orders"] = () => ({ status: 400, body: fixture("error-400.json") });
    const error = await venue()
      .placeOrder(credentials, order)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: "rejected",
      retryable: false,
      details: { status: 400, venueCode: "invalid_price", venueMessage: "invalid price" },
    });
    expect(calls("/portfolio/events/orders")).toHaveLength(1);
  });

  it("a bad signature is auth_failed; credentials for another venue are refused before sending", async () => {
    routes["GET /portfolio/balance"] = () => ({ body: fixture("balance.json") });
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    const wrong = {
      ...credentials,
      privateKeyPem: other.export({ type: "pkcs8", format: "pem" }).toString(),
    };
    await expect(venue().getBalance(wrong)).rejects.toMatchObject({ kind: "auth_failed" });
    await expect(
      venue().getBalance({ venue: "polymarket", privateKey: "0x1", signatureType: 0 }),
    ).rejects.toMatchObject({ kind: "auth_failed" });
  });
});

const order: VenueOrderRequest = {
  marketId: "kalshi:KXFEDDECISION-26DEC-H0",
  outcome: "no",
  side: "buy",
  type: "limit",
  price: 580_000,
  size: 10_000_000,
  timeInForce: "GTC",
  clientOrderId: "cid-1",
};

describe("account", () => {
  it("places on the current shape, signed; a NO buy is a YES ask at 1 − p", async () => {
    routes["POST /portfolio/events/orders"] = () => ({
      status: 201,
      body: fixture("v2-create-response.json"),
    });
    const placed = await venue().placeOrder(credentials, order);
    const [sent] = calls("/portfolio/events/orders");
    expect(JSON.parse(sent!.body)).toMatchObject({
      side: "ask",
      price: "0.4200",
      count: "10.00",
      ticker: "KXFEDDECISION-26DEC-H0",
    });
    expect(placed).toMatchObject({
      venueOrderId: "v2-order-1",
      outcome: "no",
      side: "buy",
      price: 580_000,
      filledSize: 4_000_000,
    });
  });

  it("auto mode falls back to the legacy shape when the current endpoint is missing, and remembers", async () => {
    routes["POST /portfolio/orders"] = () => ({ status: 201, body: fixture("order.json") });
    const v = venue();
    const placed = await v.placeOrder(credentials, order);
    expect(placed).toMatchObject({
      venueOrderId: "ee6d2c0e-7e0a-4d6b-9d1b-2f5a2e6b9c01",
      outcome: "no",
      side: "buy",
    });
    expect(JSON.parse(calls("/portfolio/orders")[0]!.body)).toMatchObject({
      side: "no",
      action: "buy",
      no_price_dollars: "0.5800",
      count: 10,
      count_fp: "10.00",
    });
    await v.placeOrder(credentials, order);
    expect(calls("/portfolio/events/orders")).toHaveLength(1);
    expect(calls("/portfolio/orders")).toHaveLength(2);
  });

  it("orderApi: legacy goes straight to /portfolio/orders; current never falls back", async () => {
    routes["POST /portfolio/orders"] = () => ({ status: 201, body: fixture("order.json") });
    await venue({ orderApi: "legacy" }).placeOrder(credentials, order);
    expect(calls("/portfolio/events/orders")).toHaveLength(0);
    await expect(venue({ orderApi: "current" }).placeOrder(credentials, order)).rejects.toMatchObject({
      kind: "not_found",
    });
  });

  it("cancels (current shape reads the order for its market first; legacy returns the order)", async () => {
    const id = "ee6d2c0e-7e0a-4d6b-9d1b-2f5a2e6b9c01";
    routes[`GET /portfolio/orders/${id}`] = () => ({ body: fixture("order.json") });
    routes[`DELETE /portfolio/events/orders/${id}`] = () => ({ body: fixture("v2-cancel-response.json") });
    const cancelled = await venue().cancelOrder(credentials, id);
    expect(cancelled).toMatchObject({ venueOrderId: id, status: "cancelled", filledSize: 2_000_000 });
    expect(calls(`/portfolio/events/orders/${id}`)[0]?.query).toEqual({
      market_ticker: "KXFEDDECISION-26DEC-H0",
    });

    const legacyOrder = fixture<{ order: Record<string, unknown> }>("order.json").order;
    routes[`DELETE /portfolio/orders/${id}`] = () => ({
      body: { order: { ...legacyOrder, status: "canceled" }, reduced_by_fp: "8.00" },
    });
    expect(await venue({ orderApi: "legacy" }).cancelOrder(credentials, id)).toMatchObject({
      status: "cancelled",
    });
  });

  it("lists orders and fills over pages with filters, positions and balance, all signed", async () => {
    const o = fixture<{ order: Record<string, unknown> }>("order.json").order;
    routes["GET /portfolio/orders"] = (url) =>
      url.searchParams.get("cursor")
        ? { body: { orders: [{ ...o, order_id: "second" }, { junk: true }], cursor: "" } }
        : { body: { orders: [o], cursor: "p2" } };
    routes["GET /portfolio/fills"] = () => ({ body: fixture("fills.json") });
    routes["GET /portfolio/positions"] = () => ({ body: fixture("positions.json") });
    routes["GET /portfolio/balance"] = () => ({ body: fixture("balance.json") });
    const v = venue();
    const orders = await v.listOrders(credentials, {
      marketId: "kalshi:KXFEDDECISION-26DEC-H0",
      openOnly: true,
    });
    expect(orders.map((x) => x.venueOrderId)).toEqual(["ee6d2c0e-7e0a-4d6b-9d1b-2f5a2e6b9c01", "second"]);
    expect(calls("/portfolio/orders")[0]?.query).toEqual({
      limit: "200",
      ticker: "KXFEDDECISION-26DEC-H0",
      status: "resting",
    });
    expect(v.reporter.counts()).toEqual({ order_parse_failed: 1 });
    const fills = await v.listFills(credentials, { since: "2026-11-22T00:00:00Z" });
    expect(fills.map((f) => f.venueFillId)).toEqual(["f-1", "f-2"]);
    expect(calls("/portfolio/fills")[0]?.query["min_ts"]).toBe(
      String(Date.parse("2026-11-22T00:00:00Z") / 1000),
    );
    const positions = await v.listPositions(credentials);
    expect(positions.map((p) => [p.marketId, p.outcome, p.size])).toEqual([
      ["kalshi:KXFEDDECISION-26DEC-H0", "yes", 10_000_000],
      ["kalshi:KXCPI-26OCT-T0.3", "no", 3_000_000],
    ]);
    expect(await v.getBalance(credentials)).toBe(1_000_000_000);
    for (const s of seen) expect(s.headers["kalshi-access-key"]).toBe("key-123");
  });
});
