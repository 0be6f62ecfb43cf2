/**
 * The adapter against the fake Polymarket (packages/fakes): discovery across several pages (offset
 * and keyset), books, history, the feed across a dropped socket, trading with auth verified by the
 * fake (L1 derive, L2 HMAC, EIP-712 V2 orders), and the fake's failure modes (429, down, garbage,
 * a malformed market).
 */
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import { DEFAULT_WORLD, type SeedMarket } from "@crossbook/fakes/world";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../../../src/infra/clock";
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
  fake = await startPolymarketFake({ world: [...DEFAULT_WORLD, ...EXTRA] });
});
afterAll(() => fake.close());
beforeEach(() => {
  logs.length = 0;
});

function venue() {
  return new PolymarketVenue({
    gammaUrl: fake.gammaUrl,
    clobUrl: fake.clobUrl,
    dataUrl: fake.dataUrl,
    wsUrl: fake.wsUrl,
    clock: systemClock,
    log: { info: (_o, msg) => logs.push(msg), warn: (_o, msg) => logs.push(msg) },
    http: { backoffBaseMs: 5, backoffCapMs: 20 },
    feed: { pingIntervalMs: 100, backoffBaseMs: 20, backoffCapMs: 100 },
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
  it("lists every open market across offset pages, YES by label, none twice", async () => {
    fake.script.resetRequests();
    const markets = await venue().listMarkets({ status: "open" });
    const expected = openMarkets();
    expect(markets.length).toBe(expected.length);
    expect(markets.length).toBeGreaterThan(500);
    expect(fake.script.requestCount("GET /gamma/markets")).toBeGreaterThan(5);
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

  it("finds closed and resolved markets by id", async () => {
    const v = venue();
    const target = openMarkets().find((m) => m.key === "bulk-market-7")!;
    fake.script.resolveMarket(target.key, "no");
    const market = await v.getMarket(`polymarket:${target.conditionId}`);
    expect([market.status, market.resolution]).toEqual(["resolved", "no"]);
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

  it("returns price history of the YES token", async () => {
    const info = openMarkets()[0]!;
    const now = Date.now();
    const points = await venue().getPriceHistory(`polymarket:${info.conditionId}`, {
      interval: "1h",
      start: new Date(now - 3 * 86_400_000).toISOString(),
      end: new Date(now).toISOString(),
    });
    expect(points.length).toBeGreaterThan(0);
    for (const p of points) expect(p.price).toBeGreaterThanOrEqual(0);
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
