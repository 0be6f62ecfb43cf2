/** Quote math: the price definition, spread, 24-hour change and volume, with an injected clock. */
import { describe, expect, it } from "vitest";
import { QuoteBook } from "../../src/prices/quotes";
import type { FeedEvent } from "../../src/venues/venue";

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const MIN = 60_000;
const HOUR = 60 * MIN;

const book = (bid: number | null, ask: number | null): FeedEvent => ({
  kind: "book",
  book: {
    marketId: "m",
    yes: {
      bids: bid === null ? [] : [{ price: bid, size: 1 }],
      asks: ask === null ? [] : [{ price: ask, size: 1 }],
    },
    no: { bids: [], asks: [] },
    timestamp: "t",
    sequence: null,
  },
});
const trade = (price: number, size: number, outcome: "yes" | "no" = "yes"): FeedEvent => ({
  kind: "trade",
  trade: { marketId: "m", outcome, price, size, takerSide: "buy", timestamp: "t", venueTradeId: null },
});

describe("QuoteBook", () => {
  it("prices at the midpoint when both sides exist, else the last trade", () => {
    const quotes = new QuoteBook();
    expect(quotes.apply(book(400_000, null), T0)?.price).toBeNull();
    expect(quotes.apply(trade(410_000, 5_000_000), T0)?.price).toBe(410_000);
    const q = quotes.apply(book(400_000, 450_000), T0)!;
    expect(q).toMatchObject({
      price: 425_000,
      bestBid: 400_000,
      bestAsk: 450_000,
      spread: 50_000,
      lastTradePrice: 410_000,
    });
    expect(quotes.apply(book(null, 450_000), T0)?.price).toBe(410_000);
  });

  it("treats a NO trade at p as YES at 1 - p", () => {
    const quotes = new QuoteBook();
    expect(quotes.apply(trade(700_000, 1, "no"), T0)?.lastTradePrice).toBe(300_000);
  });

  it("measures the 24-hour change from the price in force a day ago", () => {
    const quotes = new QuoteBook();
    quotes.apply(trade(500_000, 1_000_000), T0);
    expect(quotes.get("m", T0)?.change24h).toBeNull();
    // Less than a day after the first price: nothing to compare with.
    expect(quotes.get("m", T0 + 11 * HOUR)?.change24h).toBeNull();
    quotes.apply(trade(550_000, 1_000_000), T0 + 12 * HOUR);
    // Exactly 24 hours on, the price of the minute a day earlier is the reference.
    const q = quotes.apply(trade(600_000, 1_000_000), T0 + 24 * HOUR - MIN)!;
    expect(q.change24h).toBe(100_000);
    expect(q.changePct24h).toBe(20);
    // A quiet minute keeps the price in force: a day after 01:00, 0.50 still held then.
    expect(quotes.get("m", T0 + 25 * HOUR)?.change24h).toBe(100_000);
    // And after the 12:00 trade, 0.55 is the reference.
    expect(quotes.get("m", T0 + 36 * HOUR + MIN)?.change24h).toBe(50_000);
  });

  it("takes the venue's price 24 hours ago until it has its own, for a day at most", () => {
    const quotes = new QuoteBook();
    quotes.setVenueDayAgo("m", 400_000, T0);
    const q = quotes.apply(trade(500_000, 1_000_000), T0)!;
    expect(q.change24h).toBe(100_000);
    expect(q.changePct24h).toBe(25);
    // Its own history takes over once it has a price from a day ago.
    quotes.setVenueDayAgo("m", 400_000, T0 + 24 * HOUR);
    expect(quotes.apply(trade(520_000, 1_000_000), T0 + 24 * HOUR + MIN)?.change24h).toBe(20_000);
    // A venue figure not refreshed for a day says nothing about now.
    const other = new QuoteBook();
    other.setVenueDayAgo("m", 400_000, T0);
    expect(other.apply(trade(500_000, 1_000_000), T0 + 24 * HOUR)?.change24h).toBeNull();
    other.setVenueDayAgo("m", null, T0 + 24 * HOUR);
    expect(other.get("m", T0 + 24 * HOUR)?.change24h).toBeNull();
  });

  it("sums traded volume over the last 24 hours only", () => {
    const quotes = new QuoteBook();
    quotes.apply(trade(500_000, 2_000_000), T0);
    quotes.apply(trade(500_000, 3_000_000), T0 + 6 * HOUR);
    expect(quotes.get("m", T0 + 6 * HOUR)?.volume24h).toBe(5_000_000);
    expect(quotes.get("m", T0 + 24 * HOUR)?.volume24h).toBe(3_000_000);
    expect(quotes.get("m", T0 + 31 * HOUR)?.volume24h).toBe(0);
    // A long silence (days) clears the ring without walking it minute by minute forever.
    expect(quotes.apply(trade(500_000, 1_000_000), T0 + 30 * 24 * HOUR)?.volume24h).toBe(1_000_000);
  });

  it("accepts a backfilled price for the minute a day ago", () => {
    const quotes = new QuoteBook();
    const now = T0 + 24 * HOUR;
    quotes.seedPrice("m", now - 24 * HOUR + MIN, 200_000, now);
    const q = quotes.apply(trade(300_000, 1), now)!;
    expect(q.change24h).toBe(100_000);
    expect(q.changePct24h).toBe(50);
  });

  it("ignores events that carry no price", () => {
    expect(new QuoteBook().apply({ kind: "connection", state: "connected" }, T0)).toBeUndefined();
  });
});

describe("QuoteBook publishing", () => {
  it("publishes a book update only when the best bid or ask moves", () => {
    const quotes = new QuoteBook();
    expect(quotes.apply(book(400_000, 450_000), T0)).toBeDefined();
    expect(quotes.apply(book(400_000, 450_000), T0 + 1)).toBeUndefined();
    expect(quotes.apply(book(410_000, 450_000), T0 + 2)?.bestBid).toBe(410_000);
  });
});

describe("QuoteBook as the catalog's last-seen prices", () => {
  it("takes best bid/ask from the YES book and the last price from trades, NO trades as 1 - p", () => {
    const quotes = new QuoteBook();
    const yesNo: FeedEvent = {
      kind: "book",
      book: {
        marketId: "m",
        yes: { bids: [{ price: 400_000, size: 1 }], asks: [{ price: 450_000, size: 1 }] },
        no: { bids: [{ price: 550_000, size: 1 }], asks: [{ price: 600_000, size: 1 }] },
        timestamp: "t",
        sequence: 1,
      },
    };
    expect(quotes.apply(yesNo, T0)).toMatchObject({
      bestBid: 400_000,
      bestAsk: 450_000,
      lastTradePrice: null,
    });
    expect(quotes.apply(trade(570_000, 1, "no"), T0)?.lastTradePrice).toBe(430_000);
    const q = quotes.apply(
      { kind: "quote", marketId: "m", bestBid: null, bestAsk: 460_000, lastPrice: null, timestamp: "t" },
      T0,
    );
    expect(q).toMatchObject({ bestBid: null, bestAsk: 460_000, lastTradePrice: 430_000 });
    expect(
      quotes.apply(
        { kind: "quote", marketId: "m", bestBid: null, bestAsk: 460_000, lastPrice: 440_000, timestamp: "t" },
        T0,
      )?.lastTradePrice,
    ).toBe(440_000);
    expect(quotes.apply({ kind: "connection", state: "connected" }, T0)).toBeUndefined();
  });
});
