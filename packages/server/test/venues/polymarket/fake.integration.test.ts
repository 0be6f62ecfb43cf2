/**
 * The adapter against the fake Polymarket (packages/fakes): discovery across keyset pages (never the
 * deprecated offset lists, whose cap here is lower than a full listing), books, history in 15-day
 * windows and a resolved market's coarse history, the feed across a dropped socket, sharded at 200
 * assets a connection, and across a stalled subscription, trading with auth verified by the fake
 * (L1 derive, L2 HMAC, EIP-712 V2 orders), and the fake's failure modes (429, down, garbage, a
 * malformed market).
 */
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import { DEFAULT_WORLD, type SeedMarket } from "@crossbook/fakes/world";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../../../src/infra/clock";
import { silentLogger } from "../../../src/infra/log";
import type { PricePoint } from "../../../src/venues/model";
import { PolymarketVenue } from "../../../src/venues/polymarket/adapter";
import type { FeedEvent, VenueCredentials } from "../../../src/venues/venue";

const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" as const; // Hardhat #1
const ADDRESS = privateKeyToAccount(KEY).address;

/** 520 extra single-market events: more than one keyset page (500) and six /markets pages (100). */
const EXTRA: SeedMarket[] = Array.from({ length: 520 }, (_, i) => ({
  venue: "polymarket",
  key: `bulk-market-${i}`,
  eventKey: `bulk-event-${i}`,
  eventTitle: `Bulk event ${i}`,
  category: "weather",
  question: `Will bulk thing ${i} happen?`,
  rules: `Resolves Yes if bulk thing ${i} happens.`,
  settlementSource: "NOAA",
  closeTime: "2026-12-31T23:59:59Z",
  yesPrice: 0.3,
  tickSize: 0.01,
}));

let fake: PolymarketFake;
const logs: string[] = [];

beforeAll(async () => {
  // The deprecated offset lists answer 422 past offset 300 here: a listing that used them would fail.
  fake = await startPolymarketFake({ world: [...DEFAULT_WORLD, ...EXTRA], gammaMaxOffset: 300 });
});
afterAll(() => fake.close());
beforeEach(() => {
  logs.length = 0;
});

function venue(feed: NonNullable<ConstructorParameters<typeof PolymarketVenue>[0]["feed"]> = {}) {
  return new PolymarketVenue({
    gammaUrl: fake.gammaUrl,
    clobUrl: fake.clobUrl,
    dataUrl: fake.dataUrl,
    wsUrl: fake.wsUrl,
    clock: systemClock,
    log: { ...silentLogger, info: (_o, msg) => logs.push(msg), warn: (_o, msg) => logs.push(msg) },
    http: { backoffBaseMs: 5, backoffCapMs: 20 },
    feed: { pingIntervalMs: 100, backoffBaseMs: 20, backoffCapMs: 100, ...feed },
  });
}

const openMarkets = () => fake.script.markets().filter((m) => m.status === "open");

async function waitFor<T>(check: () => T | undefined, ms = 8_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - start > ms) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("discovery against the fake", () => {
  it("lists every open market across keyset pages, YES by label, none twice, never the offset list", async () => {
    fake.script.resetRequests();
    const markets = await venue().listMarkets({ status: "open" });
    const expected = openMarkets();
    expect(markets.length).toBe(expected.length);
    expect(markets.length).toBeGreaterThan(500);
    expect(fake.script.requestCount("GET /gamma/markets/keyset")).toBeGreaterThan(5);
    expect(fake.script.requestCount("GET /gamma/markets")).toBe(0);
    for (const info of expected) {
      const m = markets.find((x) => x.venueMarketId === info.conditionId.toLowerCase());
      expect(m, info.key).toBeDefined();
      expect(m!.outcomes.yes.venueTokenId).toBe(info.yesTokenId);
      expect(m!.outcomes.no.venueTokenId).toBe(info.noTokenId);
    }
  });

  it("lists every open event across keyset pages", async () => {
    fake.script.resetRequests();
    const events = await venue().listEvents({ status: "open" });
    expect(events.length).toBeGreaterThan(520);
    expect(fake.script.requestCount("GET /gamma/events/keyset")).toBeGreaterThanOrEqual(2);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it("finds closed and resolved markets by id through keyset", async () => {
    const v = venue();
    const target = openMarkets().find((m) => m.key === "bulk-market-7")!;
    fake.script.resolveMarket(target.key, "no");
    fake.script.resetRequests();
    const market = await v.getMarket(`polymarket:${target.conditionId}`);
    expect([market.status, market.resolution]).toEqual(["resolved", "no"]);
    expect(fake.script.requestCount("GET /gamma/markets/keyset")).toBe(2);
    expect(fake.script.requestCount("GET /gamma/markets")).toBe(0);
  });
});

describe("books and history against the fake", () => {
  it("serves each leg from its own token book, best first", async () => {
    const info = openMarkets().find((m) => m.key === "bulk-market-1")!;
    fake.script.setBook(info.yesTokenId, {
      bids: [
        { price: "0.28", size: "100" },
        { price: "0.29", size: "50" },
      ],
      asks: [{ price: "0.31", size: "70" }],
    });
    const book = await venue().getOrderBook(`polymarket:${info.conditionId}`);
    expect(book.yes.bids[0]?.price).toBe(290_000);
    expect(book.yes.asks[0]?.price).toBe(310_000);
    expect(book.no).not.toEqual(book.yes);
    const prices = (side: { price: number }[]) => side.map((l) => l.price);
    expect([...prices(book.yes.bids)].sort((a, b) => b - a)).toEqual(prices(book.yes.bids));
    expect([...prices(book.no.asks)].sort((a, b) => a - b)).toEqual(prices(book.no.asks));
  });

  it("returns price history of the YES token, a long range in windows the fake accepts", async () => {
    const info = openMarkets()[0]!;
    const now = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    fake.script.resetRequests();
    const answer = await venue().getPriceHistory(`polymarket:${info.conditionId}`, {
      interval: "1h",
      start: new Date(now - 40 * 86_400_000).toISOString(),
      end: new Date(now).toISOString(),
    });
    expect(answer).not.toHaveProperty("coarserMinutes");
    const points = (answer as { series: PricePoint[] }).series;
    // One point an hour over 40 days (the fake refuses more than 15 days in one request).
    expect(points).toHaveLength(40 * 24);
    expect(fake.script.requestCount("GET /clob/prices-history")).toBe(3);
    for (const p of points) expect(p.price).toBeGreaterThan(0);
  });

  it("gets a resolved market's history at the fidelity the venue serves it, and says it is coarser", async () => {
    const info = openMarkets().find((m) => m.key === "bulk-market-8")!;
    fake.script.resolveMarket(info.key, "yes");
    const v = venue();
    const id = `polymarket:${info.conditionId}`;
    await v.getMarket(id);
    const now = Date.now();
    const answer = await v.getPriceHistory(id, {
      interval: "1h",
      start: new Date(now - 3 * 86_400_000).toISOString(),
      end: new Date(now - 86_400_000).toISOString(),
    });
    expect(answer).toMatchObject({ coarserMinutes: 720 });
    const points = (answer as { series: PricePoint[] }).series;
    expect(points.length).toBeGreaterThanOrEqual(4);
    expect(points.length).toBeLessThanOrEqual(5);
    for (const p of points) expect(p.price).toBeGreaterThan(0);
  });
});

describe("feed against the fake", () => {
  it("gets books and trades, and resubscribes after the fake drops the socket", async () => {
    const info = openMarkets().find((m) => m.key === "bulk-market-2")!;
    const id = `polymarket:${info.conditionId}`;
    const events: FeedEvent[] = [];
    const sub = await venue().subscribe([id], (e) => events.push(e));
    try {
      await waitFor(() => events.find((e) => e.kind === "book"));
      fake.script.dropWebSockets();
      await waitFor(() => events.find((e) => e.kind === "connection" && e.state === "resynced"));
      // Malformed frames are reported and skipped; the feed keeps going.
      fake.script.malformNextWs(2, "garbage");
      fake.script.printTrade(info.yesTokenId, { price: "0.3", size: "5", side: "BUY" });
      fake.script.printTrade(info.yesTokenId, { price: "0.3", size: "5", side: "BUY" });
      fake.script.printTrade(info.yesTokenId, { price: "0.3", size: "5", side: "BUY" });
      const trade = await waitFor(() => events.find((e) => e.kind === "trade"));
      expect(trade).toMatchObject({ kind: "trade", trade: { marketId: id } });
    } finally {
      await sub.close();
    }
  });

  it("spreads 150 markets over connections of at most 200 assets, with books on all of them", async () => {
    const ids = openMarkets()
      .filter((m) => /^bulk-market-\d+$/.test(m.key) && Number(m.key.slice(12)) >= 200)
      .slice(0, 150)
      .map((m) => `polymarket:${m.conditionId}`);
    expect(ids).toHaveLength(150);
    const books = new Set<string>();
    const events: FeedEvent[] = [];
    const sub = await venue().subscribe(ids, (e) => {
      events.push(e);
      if (e.kind === "book") books.add(e.book.marketId);
    });
    try {
      await waitFor(() => books.size === 150);
      expect(fake.script.marketSubscriptions().sort((a, b) => b - a)).toEqual([200, 100]);
      // One venue-wide state: connected once, not once per connection.
      expect(events.filter((e) => e.kind === "connection")).toEqual([
        { kind: "connection", state: "connected" },
      ]);
    } finally {
      await sub.close();
    }
  });

  it("replaces a connection whose subscription stalls though it still answers PING", async () => {
    const info = openMarkets().find((m) => m.key === "bulk-market-4")!;
    const id = `polymarket:${info.conditionId}`;
    const events: FeedEvent[] = [];
    const sub = await venue({ dataSilenceMs: 500 }).subscribe([id], (e) => events.push(e));
    try {
      await waitFor(() => events.find((e) => e.kind === "book"));
      const connections = fake.script.requestCount("WS /clob/ws/market");
      expect(fake.script.stallMarketSockets()).toBeGreaterThan(0);
      fake.script.printTrade(info.yesTokenId, { price: "0.3", size: "5", side: "BUY" });
      await waitFor(() => events.find((e) => e.kind === "connection" && e.state === "resynced"));
      expect(fake.script.requestCount("WS /clob/ws/market")).toBe(connections + 1);
      expect(logs.some((l) => /stalled subscription/.test(l))).toBe(true);
      const before = events.length;
      fake.script.printTrade(info.yesTokenId, { price: "0.3", size: "5", side: "BUY" });
      await waitFor(() => events.slice(before).find((e) => e.kind === "trade"));
    } finally {
      await sub.close();
    }
  });

  it("replaces a connection when a market added to it never gets its book", async () => {
    const [a, b] = openMarkets().filter((m) => m.key === "bulk-market-5" || m.key === "bulk-market-6");
    const events: FeedEvent[] = [];
    const sub = await venue({ snapshotTimeoutMs: 400 }).subscribe([`polymarket:${a!.conditionId}`], (e) =>
      events.push(e),
    );
    try {
      await waitFor(() => events.find((e) => e.kind === "book"));
      fake.script.stallMarketSockets();
      await sub.add([`polymarket:${b!.conditionId}`]);
      const book = await waitFor(() =>
        events.find((e) => e.kind === "book" && e.book.marketId === `polymarket:${b!.conditionId}`),
      );
      expect(book).toBeDefined();
      expect(events.some((e) => e.kind === "connection" && e.state === "disconnected")).toBe(true);
    } finally {
      await sub.close();
    }
  });
});

describe("trading against the fake", () => {
  const creds: VenueCredentials = { venue: "polymarket", privateKey: KEY, signatureType: 0 };

  it("derives keys, places, reads, lists and cancels an order; balance and positions", async () => {
    fake.script.registerWallet({ address: ADDRESS, collateral: 1000 });
    const v = venue();
    const info = openMarkets().find((m) => m.key === "bulk-market-3")!;
    const id = `polymarket:${info.conditionId}`;
    const balance = await v.getBalance(creds);
    expect(balance).toBe(1_000_000_000);
    const placed = await v.placeOrder(creds, {
      marketId: id,
      outcome: "yes",
      side: "buy",
      type: "limit",
      price: 50_000,
      size: 10_000_000,
      timeInForce: "GTC",
    });
    expect(placed.status).toBe("open");
    const fetched = await v.getOrder(creds, placed.venueOrderId);
    expect(fetched).toMatchObject({
      marketId: id,
      outcome: "yes",
      side: "buy",
      price: 50_000,
      size: 10_000_000,
    });
    const listed = await v.listOrders(creds, { marketId: id });
    expect(listed.map((o) => o.venueOrderId)).toContain(placed.venueOrderId);
    const cancelled = await v.cancelOrder(creds, placed.venueOrderId);
    expect(cancelled.status).toBe("cancelled");
    expect(await v.listFills(creds)).toBeInstanceOf(Array);
    expect(await v.listPositions(creds)).toBeInstanceOf(Array);
  });

  it("signs for the neg-risk exchange, for a Safe funder, and for exchange V3, all accepted by the fake", async () => {
    const FUNDER = "0x00000000000000000000000000000000000a11ce";
    fake.script.registerWallet({ address: ADDRESS, funder: FUNDER, signatureType: 2, collateral: 500 });
    const negRisk = openMarkets().find((m) => m.negRisk)!;
    const safe: VenueCredentials = { venue: "polymarket", privateKey: KEY, signatureType: 2, funder: FUNDER };
    const request = {
      marketId: `polymarket:${negRisk.conditionId}`,
      outcome: "no" as const,
      side: "buy" as const,
      type: "limit" as const,
      price: 100_000,
      size: 5_000_000,
      timeInForce: "GTC" as const,
    };
    const placed = await venue().placeOrder(safe, request);
    expect(placed.status).toBe("open");
    await venue().cancelOrder(safe, placed.venueOrderId);

    // An adapter that cached version 2 meets exchange V3: the fake answers order_version_mismatch,
    // the adapter re-reads GET /version and signs again for the V3 domain.
    const v = venue();
    await v.cancelOrder(creds, (await v.placeOrder(creds, request)).venueOrderId);
    fake.script.setExchangeVersion(3);
    fake.script.resetRequests();
    try {
      const v3 = await v.placeOrder(creds, request);
      expect(v3.status).toBe("open");
      expect(fake.script.requestCount("POST /clob/order")).toBe(2);
      expect(fake.script.requestCount("GET /clob/version")).toBe(1);
      await v.cancelOrder(creds, v3.venueOrderId);
    } finally {
      fake.script.setExchangeVersion(2);
    }
  });

  it("trades from a deposit wallet (type 3): the fake checks the wrapped signature against the wallet's owner", async () => {
    const WALLET = "0x00000000000000000000000000000000000d3905";
    fake.script.registerWallet({ address: ADDRESS, funder: WALLET, signatureType: 3, collateral: 300 });
    const deposit: VenueCredentials = {
      venue: "polymarket",
      privateKey: KEY,
      signatureType: 3,
      funder: WALLET,
    };
    const info = openMarkets().find((m) => m.key === "bulk-market-10")!;
    const v = venue();
    expect(await v.getBalance(deposit)).toBe(300_000_000);
    const placed = await v.placeOrder(deposit, {
      marketId: `polymarket:${info.conditionId}`,
      outcome: "yes",
      side: "buy",
      type: "limit",
      price: 50_000,
      size: 10_000_000,
      timeInForce: "GTC",
    });
    expect(placed.status).toBe("open");
    expect((await v.listOrders(deposit)).map((o) => o.venueOrderId)).toContain(placed.venueOrderId);
    expect((await v.cancelOrder(deposit, placed.venueOrderId)).status).toBe("cancelled");
    // A key that does not own the wallet is refused by the venue.
    const stranger: VenueCredentials = {
      ...deposit,
      privateKey: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a", // Hardhat #2
    };
    await expect(
      v.placeOrder(stranger, {
        marketId: `polymarket:${info.conditionId}`,
        outcome: "yes",
        side: "buy",
        type: "limit",
        price: 50_000,
        size: 10_000_000,
        timeInForce: "GTC",
      }),
    ).rejects.toMatchObject({ kind: "auth_failed" });
  });

  it("signs with the CLOB's current tick after it changed, though Gamma still shows the old one", async () => {
    fake.script.registerWallet({ address: ADDRESS, collateral: 1000 });
    const info = openMarkets().find((m) => m.key === "bulk-market-11")!;
    fake.script.setTickSize(info.key, 0.001);
    try {
      const placed = await venue().placeOrder(creds, {
        marketId: `polymarket:${info.conditionId}`,
        outcome: "yes",
        side: "buy",
        type: "limit",
        price: 105_000, // on the new 0.001 tick, not on Gamma's 0.01
        size: 10_000_000,
        timeInForce: "GTC",
      });
      expect(placed.status).toBe("open");
      await venue().cancelOrder(creds, placed.venueOrderId);
    } finally {
      fake.script.setTickSize(info.key, 0.01);
    }
  });

  it("rounds 7 @ 0.533 IOC to the venue's FAK precision and the fake takes it", async () => {
    fake.script.registerWallet({ address: ADDRESS, collateral: 1000 });
    const info = fake.script.market("fed-chair-announces-resignation-by-december-31-2026");
    expect(info.tickSize).toBe(0.001);
    fake.script.setBook(info.yesTokenId, {
      bids: [{ price: "0.5", size: "100" }],
      asks: [{ price: "0.533", size: "100" }],
    });
    const placed = await venue().placeOrder(creds, {
      marketId: `polymarket:${info.conditionId}`,
      outcome: "yes",
      side: "buy",
      type: "limit",
      price: 533_000,
      size: 7_000_000,
      timeInForce: "IOC",
    });
    expect(placed).toMatchObject({ status: "filled", size: 6_998_100, filledSize: 6_998_100 });
    expect(placed.sizeAdjustment).toMatchObject({ requested: 7_000_000 });
  });

  it("reports a partly matched IOC as partly filled and closed, at once", async () => {
    fake.script.registerWallet({ address: ADDRESS, collateral: 1000 });
    const info = openMarkets().find((m) => m.key === "bulk-market-12")!;
    fake.script.setBook(info.yesTokenId, {
      bids: [{ price: "0.2", size: "100" }],
      asks: [{ price: "0.55", size: "4" }],
    });
    const placed = await venue().placeOrder(creds, {
      marketId: `polymarket:${info.conditionId}`,
      outcome: "yes",
      side: "buy",
      type: "limit",
      price: 550_000,
      size: 10_000_000,
      timeInForce: "IOC",
    });
    expect(placed).toMatchObject({ status: "cancelled", filledSize: 4_000_000, size: 10_000_000 });
    const fills = (await venue().listFills(creds, { marketId: `polymarket:${info.conditionId}` })).filter(
      (f) => f.venueOrderId === placed.venueOrderId,
    );
    expect(fills.reduce((sum, f) => sum + f.size, 0)).toBe(4_000_000);
  });

  it("signs for Amoy's own ExchangeV3 on chain 80002", async () => {
    const amoy = await startPolymarketFake({ chainId: 80002, exchangeVersion: 3 });
    try {
      amoy.script.registerWallet({ address: ADDRESS, collateral: 100 });
      const v = new PolymarketVenue({
        gammaUrl: amoy.gammaUrl,
        clobUrl: amoy.clobUrl,
        dataUrl: amoy.dataUrl,
        wsUrl: amoy.wsUrl,
        chainId: 80002,
        http: { backoffBaseMs: 5, backoffCapMs: 20 },
      });
      const info = amoy.script.markets().find((m) => m.status === "open" && m.tickSize === 0.01)!;
      const placed = await v.placeOrder(creds, {
        marketId: `polymarket:${info.conditionId}`,
        outcome: "yes",
        side: "buy",
        type: "limit",
        price: 50_000,
        size: 10_000_000,
        timeInForce: "GTC",
      });
      expect(placed.status).toBe("open");
    } finally {
      await amoy.close();
    }
  });

  it("has its off-tick order refused locally, with no trading call made", async () => {
    const info = openMarkets().find((m) => m.key === "bulk-market-4")!;
    fake.script.resetRequests();
    await expect(
      venue().placeOrder(
        { ...creds, apiKey: "k", apiSecret: "AAAA", apiPassphrase: "p" },
        {
          marketId: `polymarket:${info.conditionId}`,
          outcome: "yes",
          side: "buy",
          type: "limit",
          price: 55_500,
          size: 10_000_000,
          timeInForce: "GTC",
        },
      ),
    ).rejects.toMatchObject({ kind: "rejected" });
    expect(fake.script.tradingRequestCount()).toBe(0);
  });
});

describe("failure modes of the fake", () => {
  it("retries 429 with Retry-After and survives it", async () => {
    const info = openMarkets()[0]!;
    fake.script.rateLimitNext(1, 0);
    const market = await venue().getMarket(`polymarket:${info.conditionId}`);
    expect(market.venueMarketId).toBe(info.conditionId.toLowerCase());
  });

  it("reports a down venue as unavailable and garbage as bad_response", async () => {
    const v = new PolymarketVenue({
      gammaUrl: fake.gammaUrl,
      clobUrl: fake.clobUrl,
      wsUrl: fake.wsUrl,
      http: { maxRetries: 0 },
    });
    fake.script.goDown(true);
    try {
      await expect(v.listMarkets()).rejects.toMatchObject({ kind: "unavailable" });
    } finally {
      fake.script.goDown(false);
    }
    fake.script.malformNext(1, "garbage", "GET /gamma/markets");
    await expect(v.listMarkets()).rejects.toMatchObject({ kind: "bad_response" });
  });

  it("skips a malformed market with a log line naming it, and keeps the rest", async () => {
    fake.script.malformNext(1, "missing-fields", "GET /gamma/markets");
    const markets = await venue().listMarkets();
    expect(markets.length).toBeGreaterThan(openMarkets().length - 101);
    expect(logs.some((l) => /skipped market/.test(l))).toBe(true);
  });

  it("parses numbers-for-strings and unexpected fields without losing a market", async () => {
    const expected = openMarkets().length;
    fake.script.malformNext(100, "wrong-types", "GET /gamma/markets");
    const typed = await venue().listMarkets();
    fake.script.malformNext(0, "wrong-types");
    expect(typed.length).toBe(expected);
    fake.script.injectUnexpectedFields(true);
    try {
      const info = openMarkets()[0]!;
      const v = venue();
      expect((await v.listMarkets()).length).toBe(expected);
      const book = await v.getOrderBook(`polymarket:${info.conditionId}`);
      expect(book.yes.bids.length + book.yes.asks.length).toBeGreaterThan(0);
    } finally {
      fake.script.injectUnexpectedFields(false);
    }
  });
});
