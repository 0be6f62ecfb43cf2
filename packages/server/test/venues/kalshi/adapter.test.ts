/**
 * The adapter's I/O against a tiny local HTTP server speaking Kalshi's documented formats: cursor
 * pagination to the end, every endpoint it reads, RSA-PSS on portfolio calls, both order-entry
 * shapes, and error mapping (429 + Retry-After and 5xx retried, 400 not, the venue's message kept).
 */
import { constants, generateKeyPairSync, verify } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/infra/log";
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
    log: { ...silentLogger, warn: (obj, msg) => warnings.push({ obj, msg }) },
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

  it("learns each market's fees from its series (one GET /series, then only what changed) and event overrides", async () => {
    const events = fixture<{ events: Array<Record<string, unknown>> }>("events-page.json").events;
    // The second event overrides its series' fee (SDK 3.30 EventData.fee_type_override).
    const withOverride = [events[0], { ...events[1], fee_type_override: "flat", fee_multiplier_override: 2 }];
    routes["GET /events"] = () => ({ body: { events: withOverride, cursor: "" } });
    routes["GET /series"] = () => ({
      body: {
        series: [
          { ticker: "KXFEDDECISION", fee_type: "quadratic_with_maker_fees", fee_multiplier: 1 },
          { ticker: "KXHIGHNY", fee_type: "quadratic", fee_multiplier: 0.5 },
        ],
      },
    });
    routes["GET /markets"] = () => ({
      body: {
        markets: [marketsPage()[0], { ...marketsPage()[4], event_ticker: "KXHIGHNY-26NOV23" }],
        cursor: "",
      },
    });
    let now = Date.parse("2026-11-22T12:00:00Z");
    const v = venue({ clock: { now: () => now } });
    await v.listEvents({ status: "open" });
    const markets = await v.listMarkets({ status: "open" });
    expect(markets[0]?.fees).toMatchObject({
      feeType: "quadratic_with_maker_fees",
      multiplier: 1,
      rate: 0.07,
    });
    expect(markets[1]?.fees).toMatchObject({ feeType: "flat", multiplier: 2 });
    // The next sync asks only for the series updated since (min_updated_ts, unix seconds).
    now += 5 * 60_000;
    await v.listEvents({ status: "open" });
    expect(calls("/series").map((c) => c.query)).toEqual([
      {},
      { min_updated_ts: String(Date.parse("2026-11-22T12:00:00Z") / 1000 - 60) },
    ]);
    // A market whose series no listing showed: that one series is read.
    routes["GET /markets/KXNEW-1"] = () => ({
      body: { market: { ...marketsPage()[0], ticker: "KXNEW-1", event_ticker: "KXNEW-E" } },
    });
    routes["GET /events/KXNEW-E"] = () => ({
      body: { event: { event_ticker: "KXNEW-E", series_ticker: "KXNEW" } },
    });
    routes["GET /series/KXNEW"] = () => ({
      body: { series: { ticker: "KXNEW", fee_type: "quadratic_with_combo_maker_fees", fee_multiplier: 1 } },
    });
    const single = await v.getMarket("kalshi:KXNEW-1");
    expect(single.fees).toMatchObject({ feeType: "quadratic_with_combo_maker_fees", makerRate: 0.035 });
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

  it("order entry is V2 only: a 404 from create is the venue's refusal, never a switch to /portfolio/orders", async () => {
    routes["POST /portfolio/events/orders"] = () => ({
      status: 404,
      body: { error: { code: "market_not_found", message: "market not found" } },
    });
    routes["POST /portfolio/orders"] = () => ({ status: 201, body: fixture("order.json") });
    const v = venue();
    await expect(v.placeOrder(credentials, order)).rejects.toMatchObject({ kind: "not_found" });
    await expect(v.placeOrder(credentials, order)).rejects.toMatchObject({ kind: "not_found" });
    expect(calls("/portfolio/events/orders")).toHaveLength(2);
    expect(calls("/portfolio/orders")).toHaveLength(0);
  });

  it("a cancel that raced a fill (DELETE 404) is 'no longer resting', and every later order still goes to V2", async () => {
    const id = "ee6d2c0e-7e0a-4d6b-9d1b-2f5a2e6b9c01";
    routes[`GET /portfolio/orders/${id}`] = () => ({ body: fixture("order.json") }); // still resting
    routes[`DELETE /portfolio/events/orders/${id}`] = () => ({
      status: 404,
      body: { error: { code: "not_found", message: "order not found" } },
    });
    routes["POST /portfolio/events/orders"] = () => ({
      status: 201,
      body: fixture("v2-create-response.json"),
    });
    const v = venue();
    await expect(v.cancelOrder(credentials, id)).rejects.toMatchObject({
      kind: "not_found",
      message: expect.stringContaining("no longer resting"),
    });
    // Another user's order, after that 404: still the V2 endpoint, nothing to the dead legacy one.
    const other: VenueCredentials = { ...credentials };
    const placed = await v.placeOrder(other, { ...order, clientOrderId: "cid-2" });
    expect(placed.venueOrderId).toBe("v2-order-1");
    expect(calls("/portfolio/events/orders")).toHaveLength(1);
    expect(seen.filter((c) => c.path === `${PREFIX}/portfolio/orders` || c.method === "DELETE")).toEqual([
      expect.objectContaining({ method: "DELETE", path: `${PREFIX}/portfolio/events/orders/${id}` }),
    ]);
  });

  it("an order the venue already closed is not sent a cancel: refused as no longer resting", async () => {
    const id = "o-legacy";
    routes[`GET /portfolio/orders/${id}`] = () => ({ body: fixture("order-legacy-only.json") }); // executed
    await expect(venue().cancelOrder(credentials, id)).rejects.toMatchObject({
      kind: "not_found",
      message: expect.stringContaining("(filled)"),
    });
    expect(seen.filter((c) => c.method === "DELETE")).toHaveLength(0);
  });

  it("cancels on the V2 endpoint with the order's market read first", async () => {
    const id = "ee6d2c0e-7e0a-4d6b-9d1b-2f5a2e6b9c01";
    routes[`GET /portfolio/orders/${id}`] = () => ({ body: fixture("order.json") });
    routes[`DELETE /portfolio/events/orders/${id}`] = () => ({ body: fixture("v2-cancel-response.json") });
    const cancelled = await venue().cancelOrder(credentials, id);
    expect(cancelled).toMatchObject({ venueOrderId: id, status: "cancelled", filledSize: 2_000_000 });
    expect(calls(`/portfolio/events/orders/${id}`)[0]?.query).toEqual({
      market_ticker: "KXFEDDECISION-26DEC-H0",
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
    // Every account call is signed (the public historical cutoff needs no key).
    for (const s of seen.filter((c) => !c.path.endsWith("/historical/cutoff")))
      expect(s.headers["kalshi-access-key"]).toBe("key-123");
  });
});

describe("historical tier (past Kalshi's cutoff)", () => {
  const archived = () => ({ ...marketsPage()[2], ticker: "KXOLD-25JAN-T1", event_ticker: "KXOLD-25JAN" });

  it("a market the live endpoint no longer has is read from /historical/markets/{ticker}", async () => {
    routes["GET /historical/markets/KXOLD-25JAN-T1"] = () => ({ body: { market: archived() } });
    routes["GET /events/KXOLD-25JAN"] = () => ({
      body: { event: { event_ticker: "KXOLD-25JAN", series_ticker: "KXOLD" } },
    });
    const market = await venue().getMarket("kalshi:KXOLD-25JAN-T1");
    expect(market).toMatchObject({ id: "kalshi:KXOLD-25JAN-T1", status: "resolved", resolution: "no" });
    expect(calls("/markets/KXOLD-25JAN-T1")).toHaveLength(1); // tried live first
    // Unknown in both tiers: the live 404.
    await expect(venue().getMarket("kalshi:NOPE")).rejects.toMatchObject({ kind: "not_found" });
  });

  it("an old settled market's candles come from /historical/markets/{ticker}/candlesticks", async () => {
    routes["GET /historical/markets/KXOLD-25JAN-T1/candlesticks"] = () => ({
      body: fixture("candlesticks-historical.json"),
    });
    const options = { interval: "1d" as const, start: "2025-01-20T00:00:00Z", end: "2025-01-23T00:00:00Z" };
    const candles = await venue().getPriceHistory("kalshi:KXOLD-25JAN-T1", options);
    expect(candles.map((c) => [c.close, c.volume])).toEqual([
      [340_000, 420_000_000],
      [340_000, 0],
    ]);
    expect(calls("/historical/markets/KXOLD-25JAN-T1/candlesticks")[0]?.query).toEqual({
      start_ts: String(Date.parse(options.start) / 1000),
      end_ts: String(Date.parse(options.end) / 1000),
      period_interval: "1440",
    });

    // A market archived after we learned its series: the live candles 404, the historical ones answer.
    routes["GET /markets/KXFEDDECISION-26DEC-H0"] = () => ({ body: { market: marketsPage()[0] } });
    routes["GET /events/KXFEDDECISION-26DEC"] = () => ({ body: fixture("event.json") });
    routes["GET /historical/markets/KXFEDDECISION-26DEC-H0/candlesticks"] = () => ({
      body: fixture("candlesticks-historical.json"),
    });
    const late = await venue().getPriceHistory("kalshi:KXFEDDECISION-26DEC-H0", options);
    expect(late).toHaveLength(2);
    expect(calls("/series/KXFEDDECISION/markets/KXFEDDECISION-26DEC-H0/candlesticks")).toHaveLength(1);
  });

  it("fills from before the cutoff come from /historical/fills, only when asked for that far back", async () => {
    const cutoff = "2026-09-01T00:00:00Z";
    routes["GET /historical/cutoff"] = () => ({
      body: { market_settled_ts: cutoff, trades_created_ts: cutoff, orders_updated_ts: cutoff },
    });
    const [f1, f2] = fixture<{ fills: Array<Record<string, unknown>> }>("fills.json").fills;
    routes["GET /portfolio/fills"] = () => ({ body: { fills: [f2], cursor: "" } });
    routes["GET /historical/fills"] = () => ({ body: { fills: [f1, f2], cursor: "" } });
    const v = venue();
    const old = await v.listFills(credentials, {
      since: "2026-08-01T00:00:00Z",
      marketId: "kalshi:KXFEDDECISION-26DEC-H0",
    });
    expect(old.map((f) => f.venueFillId).sort()).toEqual(["f-1", "f-2"]); // once each
    expect(calls("/historical/fills")[0]?.query).toMatchObject({
      ticker: "KXFEDDECISION-26DEC-H0",
      min_ts: String(Date.parse("2026-08-01T00:00:00Z") / 1000),
    });
    expect(calls("/historical/fills")[0]?.headers["kalshi-access-key"]).toBe("key-123");
    const recent = await v.listFills(credentials, { since: "2026-11-01T00:00:00Z" });
    expect(recent.map((f) => f.venueFillId)).toEqual(["f-2"]);
    expect(calls("/historical/fills")).toHaveLength(1);
    expect(calls("/historical/cutoff")).toHaveLength(1); // kept for a while
  });

  it("an order archived at the venue is found in /historical/orders by its market", async () => {
    const o = fixture<{ order: Record<string, unknown> }>("order.json").order;
    routes["GET /historical/orders"] = () => ({
      body: {
        orders: [
          { ...o, order_id: "other" },
          { ...o, order_id: "old-1", status: "executed" },
        ],
        cursor: "",
      },
    });
    const v = venue();
    await expect(v.getOrder(credentials, "old-1")).rejects.toMatchObject({ kind: "not_found" });
    expect(calls("/historical/orders")).toHaveLength(0); // no market, no search
    const found = await v.getOrder(credentials, "old-1", {
      marketId: "kalshi:KXFEDDECISION-26DEC-H0",
      since: "2026-06-01T00:00:00Z",
    });
    expect(found).toMatchObject({ venueOrderId: "old-1", status: "filled", filledSize: 2_000_000 });
    expect(calls("/historical/orders")[0]?.query).toMatchObject({
      ticker: "KXFEDDECISION-26DEC-H0",
      min_ts: String(Date.parse("2026-06-01T00:00:00Z") / 1000 - 60),
    });
    await expect(
      v.getOrder(credentials, "missing", { marketId: "kalshi:KXFEDDECISION-26DEC-H0" }),
    ).rejects.toMatchObject({ kind: "not_found" });
  });
});

describe("market-data feed key", () => {
  it("without a feed key there is no feed: capability off, the reason said, no socket opened", async () => {
    const v = venue();
    expect(v.capabilities.supports.feed).toBe(false);
    expect(v.feedUnavailable).toMatch(/KALSHI_FEED_KEY_ID/);
    await expect(v.subscribe(["kalshi:KXFEDDECISION-26DEC-H0"], () => {})).rejects.toMatchObject({
      kind: "auth_failed",
    });
    const keyed = venue({ feedKey: { keyId: "k", privateKeyPem: credentials.privateKeyPem } });
    expect(keyed.capabilities.supports.feed).toBe(true);
    expect(keyed.feedUnavailable).toBeUndefined();
  });
});
