/** GET /v1/prices: the keyed map of spec 4.2, live quotes vs last-seen listing prices, books, errors. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUOTE_CHANNEL, type QuoteUpdate } from "../../src/prices/service";
import type { OrderBook, VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, expectError, signup, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";

const book = (marketId: string, bid: number, ask: number): OrderBook => ({
  marketId,
  yes: {
    bids: [
      { price: bid, size: 100_000_000 },
      { price: bid - 10_000, size: 250_000_000 },
    ],
    asks: [
      { price: ask, size: 50_000_000 },
      { price: ask + 10_000, size: 75_000_000 },
    ],
  },
  no: { bids: [], asks: [] },
  timestamp: "2026-11-22T12:00:00.000Z",
  sequence: null,
});

describe.each(STORE_BACKENDS)("GET /v1/prices on %s", (store) => {
  let t: TestApp;
  let key: string;
  const kalshi = new TestVenue("kalshi");
  const poly = new TestVenue("polymarket");
  const published: QuoteUpdate[] = [];

  beforeAll(async () => {
    kalshi.set(
      testMarket("kalshi", "LIVE", { volume24h: 900_000_000 }),
      testMarket("kalshi", "QUIET", { volume24h: 1_000_000, bestBid: 200_000, bestAsk: 260_000 }),
      testMarket("kalshi", "DAYAGO", { bestBid: 200_000, bestAsk: 260_000, price24hAgo: 200_000 }),
    );
    poly.set(testMarket("polymarket", "0xabc", { bestBid: null, bestAsk: null, lastPrice: 730_000 }));
    t = await createTestApp({
      store,
      venues: new Map<VenueId, Venue>([
        ["kalshi", kalshi],
        ["polymarket", poly],
      ]),
      config: { feedMaxMarketsPerVenue: 1 },
    });
    key = (await createKey(t.app, (await signup(t.app)).session, { type: "read_only" })).key;
    await t.services.catalog.syncVenue("kalshi");
    await t.services.catalog.syncVenue("polymarket");
    await t.runtime.bus.subscribe(QUOTE_CHANNEL, (m) => published.push(m as QuoteUpdate));
  });
  afterAll(() => t.close());

  const get = (url: string) => t.app.inject({ method: "GET", url, headers: bearer(key) });

  it("answers the spec's keyed map with a top-level timestamp, from the listing before any feed data", async () => {
    const response = await get("/v1/prices?market_ids=kalshi:QUIET,polymarket:0xabc");
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    const body = response.json();
    expect(body.success).toBe(true);
    expect(body.timestamp).toBe("2026-11-22T12:00:00.000Z");
    expect(Object.keys(body.data)).toEqual(["kalshi:QUIET", "polymarket:0xabc"]);
    expect(body.data["kalshi:QUIET"]).toEqual({
      price: 0.23,
      best_bid: 0.2,
      best_ask: 0.26,
      spread: 0.06,
      change_24h: null,
      change_pct_24h: null,
      volume_24h: 1,
      last_trade: null,
      updated_at: expect.any(String),
    });
    // One-sided or empty book: the last trade is the price.
    expect(body.data["polymarket:0xabc"]).toMatchObject({ price: 0.73, best_bid: null, spread: null });
  });

  it("serves live quotes from the feed and publishes each change on the bus", async () => {
    expect(kalshi.subscribed.has("kalshi:LIVE")).toBe(true);
    t.clock.advance(1_000);
    kalshi.emit({ kind: "book", book: book("kalshi:LIVE", 480_000, 520_000) });
    t.clock.advance(1_000);
    kalshi.emit({
      kind: "trade",
      trade: {
        marketId: "kalshi:LIVE",
        outcome: "yes",
        price: 510_000,
        size: 7_000_000,
        takerSide: "buy",
        timestamp: "t",
        venueTradeId: "1",
      },
    });
    const entry = (await get("/v1/prices?market_ids=kalshi:LIVE")).json().data["kalshi:LIVE"];
    expect(entry).toEqual({
      price: 0.5,
      best_bid: 0.48,
      best_ask: 0.52,
      spread: 0.04,
      change_24h: null,
      change_pct_24h: null,
      // Watched for less than a day: the venue's own 24-hour figure.
      volume_24h: 900,
      last_trade: "2026-11-22T12:00:02.000Z",
      updated_at: "2026-11-22T12:00:02.000Z",
    });
    expect(published.filter((u) => u.market_id === "kalshi:LIVE").at(-1)).toEqual({
      market_id: "kalshi:LIVE",
      price: 0.5,
      best_bid: 0.48,
      best_ask: 0.52,
      volume_24h: 900,
      timestamp: "2026-11-22T12:00:02.000Z",
    });
    // A change after a cached answer is seen at once.
    kalshi.emit({ kind: "book", book: book("kalshi:LIVE", 500_000, 540_000) });
    expect((await get("/v1/prices?market_ids=kalshi:LIVE")).json().data["kalshi:LIVE"].price).toBe(0.52);
    // Within one millisecond the same answer is sent again; the next millisecond shows its own time.
    const again = (await get("/v1/prices?market_ids=kalshi:LIVE")).json();
    expect(again.data["kalshi:LIVE"].price).toBe(0.52);
    t.clock.advance(1);
    const later = (await get("/v1/prices?market_ids=kalshi:LIVE")).json();
    expect(Date.parse(later.timestamp) - Date.parse(again.timestamp)).toBe(1);
    expect(later.data).toEqual(again.data);
  });

  it("adds books with include_orderbook: the live feed's, else the venue's REST book", async () => {
    const body = (
      await get("/v1/prices?market_ids=kalshi:LIVE,kalshi:QUIET&include_orderbook=true&depth=1")
    ).json();
    expect(body.data["kalshi:LIVE"].orderbook).toEqual({
      bids: [[0.5, 100]],
      asks: [[0.54, 50]],
      timestamp: "2026-11-22T12:00:00.000Z",
    });
    // TestVenue's REST book is empty; it was asked for it.
    expect(body.data["kalshi:QUIET"].orderbook).toEqual({
      bids: [],
      asks: [],
      timestamp: expect.any(String),
    });
    expect(kalshi.calls).toContain("getOrderBook kalshi:QUIET");
    const full = (await get("/v1/prices?market_ids=kalshi:LIVE&include_orderbook=true")).json();
    expect(full.data["kalshi:LIVE"].orderbook.bids).toHaveLength(2);
    const plain = (await get("/v1/prices?market_ids=kalshi:LIVE")).json();
    expect(plain.data["kalshi:LIVE"].orderbook).toBeUndefined();
  });

  it("answers 404 MARKET_NOT_FOUND listing every unknown id", async () => {
    const error = expectError(
      await get("/v1/prices?market_ids=kalshi:LIVE,kalshi:NOPE,polymarket:0xnope"),
      404,
      "MARKET_NOT_FOUND",
    );
    expect(error.details).toEqual({ market_ids: ["kalshi:NOPE", "polymarket:0xnope"] });
  });

  it("refuses a missing, empty or oversized id list and bad options with field-level 400s", async () => {
    const fields = async (url: string) =>
      expectError(await get(url), 400, "VALIDATION_ERROR").details?.["fields"];
    expect(await fields("/v1/prices")).toHaveProperty(["query.market_ids"]);
    expect(await fields("/v1/prices?market_ids=,,")).toHaveProperty(["query.market_ids"]);
    const many = Array.from({ length: 101 }, (_, i) => `kalshi:M${i}`).join(",");
    expect(await fields(`/v1/prices?market_ids=${many}`)).toEqual({
      "query.market_ids": "must name at most 100 market ids (got 101)",
    });
    expect(await fields("/v1/prices?market_ids=kalshi:LIVE&depth=0")).toHaveProperty(["query.depth"]);
    expect(await fields("/v1/prices?market_ids=kalshi:LIVE&include_orderbook=maybe")).toHaveProperty([
      "query.include_orderbook",
    ]);
    expect(await fields("/v1/prices?market_ids=kalshi:LIVE&extra=1")).toHaveProperty(["query.extra"]);
    // Duplicates count once; exactly 100 distinct ids is fine (they are unknown here, hence 404).
    const hundred = Array.from({ length: 100 }, (_, i) => `kalshi:M${i}`).join(",");
    expect((await get(`/v1/prices?market_ids=${hundred},kalshi:M0`)).statusCode).toBe(404);
  });

  it("polls watched markets that no live feed carries", async () => {
    kalshi.calls.length = 0;
    await get("/v1/prices?market_ids=kalshi:QUIET,kalshi:LIVE");
    // The feed cap is 1, taken by LIVE; asking for QUIET added it to the feed's on-demand set.
    expect(kalshi.subscribed.has("kalshi:QUIET")).toBe(true);
    // The feed disconnects: both markets fall back to REST polling.
    kalshi.emit({ kind: "connection", state: "disconnected", reason: "test" });
    expect(await t.services.prices.pollOnce()).toBe(2);
    expect(kalshi.calls.filter((c) => c.startsWith("getOrderBook")).sort()).toEqual([
      "getOrderBook kalshi:LIVE",
      "getOrderBook kalshi:QUIET",
    ]);
    kalshi.emit({ kind: "connection", state: "connected" });
    expect(await t.services.prices.pollOnce()).toBe(0);
  });

  it("knows the 24-hour change from the venue's price a day ago, from the first listing on", async () => {
    const listed = (await get("/v1/prices?market_ids=kalshi:DAYAGO")).json().data["kalshi:DAYAGO"];
    // The listing's price (0.23) against the venue's price 24 hours before it (0.20).
    expect(listed).toMatchObject({ price: 0.23, change_24h: 0.03, change_pct_24h: 15 });
    // Once the feed carries it, the live price against the same figure, until crossbook has a day of its own.
    kalshi.emit({ kind: "book", book: book("kalshi:DAYAGO", 240_000, 260_000) });
    const live = (await get("/v1/prices?market_ids=kalshi:DAYAGO")).json().data["kalshi:DAYAGO"];
    expect(live).toMatchObject({ price: 0.25, change_24h: 0.05, change_pct_24h: 25 });
  });

  it("needs a key with read", async () => {
    expect((await t.app.inject({ method: "GET", url: "/v1/prices?market_ids=kalshi:LIVE" })).statusCode).toBe(
      401,
    );
  });
});

describe("quote updates from a feed's first messages", () => {
  it("carry the venue's 24-hour volume: market summaries load before the feed starts", async () => {
    // A venue whose feed sends a book the moment it is subscribed, as real feeds do.
    class EagerVenue extends TestVenue {
      override async subscribe(...args: Parameters<TestVenue["subscribe"]>) {
        const subscription = await super.subscribe(...args);
        this.emit({ kind: "book", book: book("kalshi:EAGER", 450_000, 470_000) });
        return subscription;
      }
    }
    const venue = new EagerVenue("kalshi").set(testMarket("kalshi", "EAGER", { volume24h: 777_000_000 }));
    const t = await createTestApp({ venues: new Map<VenueId, Venue>([["kalshi", venue]]) });
    const published: QuoteUpdate[] = [];
    await t.runtime.bus.subscribe(QUOTE_CHANNEL, (m) => published.push(m as QuoteUpdate));
    await t.services.catalog.syncVenue("kalshi");
    expect(published.find((u) => u.market_id === "kalshi:EAGER")).toMatchObject({
      price: 0.46,
      volume_24h: 777,
    });
    await t.close();
  });
});
