/** Every market-channel message type in, FeedEvents out, through the local books (VENUES.md §1.4). */
import { describe, expect, it } from "vitest";
import type { OrderBook } from "../../../src/venues/model";
import { LocalBooks } from "../../../src/venues/polymarket/books";
import { parseWsFrame } from "../../../src/venues/polymarket/normalize";
import type { FeedEvent } from "../../../src/venues/venue";
import { C1, fixtureText, reports, T1N, T1Y } from "./fixtures";

const MARKET = `polymarket:${C1}`;
const NOW = "2026-11-22T12:00:00.000Z";

function setup() {
  const r = reports();
  const books = new LocalBooks(r.report, () => NOW);
  books.track({ marketId: MARKET, conditionId: C1, yes: T1Y, no: T1N });
  const feed = (name: string): FeedEvent[] =>
    parseWsFrame(fixtureText(name), r.report).flatMap((m) => books.apply(m));
  return { r, books, feed };
}

const bookOf = (events: FeedEvent[]): OrderBook | undefined =>
  events.filter((e): e is Extract<FeedEvent, { kind: "book" }> => e.kind === "book").at(-1)?.book;

describe("market channel", () => {
  it("parses single-object and array frames and ignores PONG", () => {
    const r = reports();
    expect(parseWsFrame("PONG", r.report)).toEqual([]);
    expect(parseWsFrame('{"event_type":"book"}', r.report)).toHaveLength(1);
    expect(parseWsFrame('[{"event_type":"book"},{"event_type":"book"}]', r.report)).toHaveLength(2);
    expect(parseWsFrame("garbage", r.report)).toEqual([]);
    expect(parseWsFrame("[1]", r.report)).toEqual([]);
    expect(r.kinds()).toEqual(["ws_non_json", "ws_non_object"]);
  });

  it("emits a book only when both tokens have their own snapshot, best first", () => {
    const { books, r } = setup();
    const [yesMsg, noMsg] = parseWsFrame(fixtureText("ws-book.json"), r.report);
    const first = books.apply(yesMsg!);
    expect(first.map((e) => e.kind)).toEqual(["quote"]); // no NO book yet: no book event
    expect(first[0]).toEqual({
      kind: "quote",
      marketId: MARKET,
      bestBid: 500_000,
      bestAsk: 520_000,
      lastPrice: 510_000,
      timestamp: "2026-08-13T06:54:32.222Z",
    });
    const second = books.apply(noMsg!);
    const book = bookOf(second)!;
    expect(book.yes).toEqual({
      bids: [
        { price: 500_000, size: 20_000_000 },
        { price: 490_000, size: 100_000_000 },
      ],
      asks: [
        { price: 520_000, size: 10_000_000 },
        { price: 530_000, size: 40_000_000 },
      ],
    });
    expect(book.no).toEqual({
      bids: [
        { price: 480_000, size: 10_000_000 },
        { price: 470_000, size: 40_000_000 },
      ],
      asks: [
        { price: 500_000, size: 20_000_000 },
        { price: 510_000, size: 100_000_000 },
      ],
    });
    expect(r.seen).toEqual([]);
  });

  it("applies price_change as the new aggregate size per level (0 removes) on the right token", () => {
    const { feed, r } = setup();
    feed("ws-book.json");
    const events = feed("ws-price-change.json");
    const book = bookOf(events)!;
    expect(book.yes.bids[0]).toEqual({ price: 510_000, size: 75_000_000 });
    expect(book.yes.asks[0]).toEqual({ price: 530_000, size: 40_000_000 });
    expect(book.no.bids).toEqual([{ price: 470_000, size: 40_000_000 }]);
    expect(book.timestamp).toBe("2026-08-13T06:54:40.000Z");
    expect(events.filter((e) => e.kind === "book")).toHaveLength(1); // one market touched: one book
    expect(events.find((e) => e.kind === "quote")).toMatchObject({ bestBid: 510_000, bestAsk: 530_000 });
    expect(r.kinds()).toEqual(["unknown_side"]); // the "HOLD" change
  });

  it("ignores a price_change for a token without a snapshot (reported)", () => {
    const { feed, r } = setup();
    expect(feed("ws-price-change.json")).toEqual([]);
    expect(r.kinds()).toContain("price_change_before_book");
  });

  it("turns last_trade_price on the NO token into a NO trade and a YES last price of 1 - p", () => {
    const { feed } = setup();
    feed("ws-book.json");
    const events = feed("ws-last-trade-price.json");
    expect(events[0]).toEqual({
      kind: "trade",
      trade: {
        marketId: MARKET,
        outcome: "no",
        price: 480_000,
        size: 219_217_767,
        takerSide: "sell",
        timestamp: "2026-08-13T06:54:50.000Z",
        venueTradeId: "0xeeefff",
      },
    });
    expect(events[1]).toMatchObject({ kind: "quote", lastPrice: 520_000 });
  });

  it("emits tick_size once per market although both tokens announce it", () => {
    const { feed } = setup();
    expect(feed("ws-tick-size-change.json")).toEqual([
      { kind: "tick_size", marketId: MARKET, tickSize: 1_000 },
    ]);
  });

  it("maps market_resolved by winning token", () => {
    const { feed } = setup();
    expect(feed("ws-market-resolved.json")).toEqual([
      { kind: "status", marketId: MARKET, status: "resolved", resolution: "no" },
    ]);
  });

  it("reports an unknown event type and messages for tokens we do not follow", () => {
    const { books, feed, r } = setup();
    expect(feed("ws-unknown.json")).toEqual([]);
    expect(books.apply({ event_type: "last_trade_price", asset_id: "999", price: "0.5", size: "1" })).toEqual(
      [],
    );
    expect(r.kinds()).toEqual(["unknown_ws_event_type", "ws_unsubscribed_asset"]);
  });

  it("forgets books on reset so a reconnect waits for fresh snapshots", () => {
    const { books, feed } = setup();
    feed("ws-book.json");
    expect(books.book(MARKET)).toBeDefined();
    books.reset();
    expect(books.book(MARKET)).toBeUndefined();
  });

  it("uses best_bid_ask only until the YES book exists, and ignores new_market silently", () => {
    const { books, feed, r } = setup();
    const bba = {
      event_type: "best_bid_ask",
      market: C1,
      asset_id: T1Y,
      best_bid: "0.73",
      best_ask: "0.77",
      spread: "0.04",
      timestamp: "1766789469958",
    };
    expect(books.apply(bba)).toEqual([
      {
        kind: "quote",
        marketId: MARKET,
        bestBid: 730_000,
        bestAsk: 770_000,
        lastPrice: null,
        timestamp: "2025-12-26T22:51:09.958Z",
      },
    ]);
    feed("ws-book.json");
    expect(books.apply(bba)).toEqual([]);
    expect(books.apply({ event_type: "new_market", id: "1", market: "0x1", assets_ids: ["7", "8"] })).toEqual(
      [],
    );
    expect(r.seen).toEqual([]);
  });

  it("stops following a market once untracked", () => {
    const { books, feed, r } = setup();
    books.untrack(MARKET);
    expect(feed("ws-book.json")).toEqual([]);
    expect(r.kinds()).toEqual(["ws_unsubscribed_asset"]);
  });
});
