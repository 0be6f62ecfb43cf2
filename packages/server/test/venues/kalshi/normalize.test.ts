/** Offline fixture tests: Kalshi market data (VENUES.md §2, fixed-point era) in, our model out. */
import { kalshiSchedule } from "@crossbook/fees";
import { describe, expect, it } from "vitest";
import {
  eventInfo,
  isMveMarket,
  KalshiParseError,
  normalizeCandles,
  normalizeCutoff,
  normalizeEvent,
  normalizeMarket,
  normalizeMarkets,
  normalizeOrderBook,
  normalizeTrade,
  seriesFees,
} from "../../../src/venues/kalshi/normalize";
import { fixture, recorder } from "./fixtures";

const NOW = "2026-11-22T12:30:00.000Z";
type Page = { markets: Array<Record<string, unknown>> };
const page = () => fixture<Page>("markets-page.json");
const LEGACY_FIELDS = [
  "yes_bid",
  "yes_ask",
  "last_price",
  "volume",
  "volume_24h",
  "open_interest",
  "liquidity",
];

describe("markets (GET /markets)", () => {
  it("fixtures carry no legacy integer-cents fields", () => {
    for (const m of page().markets) for (const f of LEGACY_FIELDS) expect(m).not.toHaveProperty(f);
  });

  it("maps a full active market from the fixed-point fields", () => {
    const r = recorder();
    const m = normalizeMarket(
      page().markets[0],
      { report: r.report, now: NOW },
      {
        eventTicker: "KXFEDDECISION-26DEC",
        seriesTicker: "KXFEDDECISION",
        title: "Fed decision in December 2026",
        settlementSource: "Federal Reserve (https://www.federalreserve.gov/)",
        feeTypeOverride: null,
        feeMultiplierOverride: null,
        seriesFees: { feeType: "quadratic_with_maker_fees", multiplier: 1 },
      },
    );
    expect(m).toEqual({
      id: "kalshi:KXFEDDECISION-26DEC-H0",
      venue: "kalshi",
      venueMarketId: "KXFEDDECISION-26DEC-H0",
      eventId: "kalshi:KXFEDDECISION-26DEC",
      title: "Fed decision in December 2026?",
      question: "Fed decision in December 2026? (Hold rates)",
      rules:
        "If the FOMC holds the target range at its December 2026 meeting, the market resolves to Yes.\n\n" +
        "The upper bound of the target range as published by the Federal Reserve is used.",
      settlementSource: "Federal Reserve (https://www.federalreserve.gov/)",
      outcomes: {
        yes: { label: "Hold rates", venueTokenId: "yes" },
        no: { label: "Not hold", venueTokenId: "no" },
      },
      status: "open",
      resolution: null,
      openTime: "2026-09-01T14:00:00.000Z",
      closeTime: "2026-12-16T18:55:00.000Z",
      tickSize: 10_000,
      minSize: 1_000_000,
      volume: 125_000_000_000,
      volume24h: 3_100_000_000,
      liquidity: 0,
      url: "https://kalshi.com/markets/kxfeddecision-26dec",
      lastPrice: 430_000,
      bestBid: 420_000,
      bestAsk: 450_000,
      price24hAgo: 400_000, // previous_price_dollars
      negRisk: false,
      fees: kalshiSchedule("quadratic_with_maker_fees", 1),
      updatedAt: "2026-11-22T12:00:00.000Z",
    });
    expect(r.reports).toEqual([]);
  });

  it("takes its fee schedule from the event's override, else its series; none without either", () => {
    const event = {
      eventTicker: "E",
      seriesTicker: "S",
      title: "E",
      settlementSource: null,
      feeTypeOverride: null,
      feeMultiplierOverride: null,
    };
    const raw = page().markets[0];
    const ctx = { report: () => {}, now: NOW };
    const withSeries = { ...event, seriesFees: { feeType: "quadratic", multiplier: 0.5 } };
    expect(normalizeMarket(raw, ctx, withSeries).fees).toEqual(kalshiSchedule("quadratic", 0.5));
    // The event's override wins; a type alone keeps the series' multiplier, and the other way round.
    expect(
      normalizeMarket(raw, ctx, { ...withSeries, feeTypeOverride: "flat", feeMultiplierOverride: 2 }).fees,
    ).toEqual(kalshiSchedule("flat", 2));
    expect(normalizeMarket(raw, ctx, { ...withSeries, feeTypeOverride: "flat" }).fees).toEqual(
      kalshiSchedule("flat", 0.5),
    );
    expect(normalizeMarket(raw, ctx, { ...withSeries, feeMultiplierOverride: 0 }).fees).toEqual(
      kalshiSchedule("quadratic", 0),
    );
    expect(normalizeMarket(raw, ctx, event).fees).toBeNull();
    expect(normalizeMarket(raw, ctx).fees).toBeNull();
    // An unknown fee type is reported, and charged makers and takers (kalshiSchedule's safe reading).
    const r = recorder();
    const odd = normalizeMarket(raw, { report: r.report, now: NOW }, { ...event, feeTypeOverride: "tiered" });
    expect(odd.fees).toMatchObject({ feeType: "tiered", rate: 0.07, makerRate: 0.0175 });
    expect(r.kinds()).toEqual(["unknown_fee_type"]);
  });

  it("reads the event's fee overrides and a series' fee type and multiplier", () => {
    expect(
      eventInfo({
        event_ticker: "E",
        series_ticker: "S",
        fee_type_override: "quadratic",
        fee_multiplier_override: 0.5,
      }),
    ).toMatchObject({ feeTypeOverride: "quadratic", feeMultiplierOverride: 0.5 });
    expect(eventInfo({ event_ticker: "E", series_ticker: "S" })).toMatchObject({
      feeTypeOverride: null,
      feeMultiplierOverride: null,
    });
    expect(seriesFees({ ticker: "KXNBA", fee_type: "quadratic_with_maker_fees", fee_multiplier: 1 })).toEqual(
      {
        ticker: "KXNBA",
        fees: { feeType: "quadratic_with_maker_fees", multiplier: 1 },
      },
    );
    expect(seriesFees({ ticker: "KXNBA", fee_type: "quadratic" })).toBeUndefined();
  });

  it("treats bid 0 / ask 1 / last 0 as nothing there, and reads the finest tick of tapered ranges", () => {
    const m = normalizeMarket(page().markets[1], { report: () => {}, now: NOW });
    expect([m.bestBid, m.bestAsk, m.lastPrice]).toEqual([null, null, null]);
    expect(m.tickSize).toBe(1_000);
    expect(m.minSize).toBe(10_000); // 12.50 contracts open: it trades fractions
    expect(m.rules).toBe("Resolves Yes if the CF Benchmarks BRTI is above 150,000.00 at 5pm ET.");
  });

  it("minimum size from the count fields that exist now, not the removed fractional_trading_enabled", () => {
    const base = { ...page().markets[0] };
    // The removed flag (VENUES-AUDIT #14) is ignored wherever it still shows up.
    const flagged = normalizeMarket(
      { ...base, fractional_trading_enabled: true },
      { report: () => {}, now: NOW },
    );
    expect(flagged.minSize).toBe(1_000_000);
    // Fractions in volume, open interest or top-of-book size prove the market takes them.
    for (const key of [
      "volume_fp",
      "volume_24h_fp",
      "open_interest_fp",
      "yes_bid_size_fp",
      "yes_ask_size_fp",
    ]) {
      const m = normalizeMarket({ ...base, [key]: "7.25" }, { report: () => {}, now: NOW });
      expect([key, m.minSize]).toEqual([key, 10_000]);
    }
    // An unreadable size proves nothing and fails nothing.
    const odd = normalizeMarket({ ...base, yes_ask_size_fp: "n/a" }, { report: () => {}, now: NOW });
    expect(odd.minSize).toBe(1_000_000);
  });

  it("finalized with a result is resolved with that result", () => {
    const m = normalizeMarket(page().markets[2], { report: () => {}, now: NOW });
    expect(m.status).toBe("resolved");
    expect(m.resolution).toBe("no");
    expect(m.outcomes.yes.label).toBe("Yes"); // no subtitles -> plain labels
  });

  it("maps every documented status, and a resolved status without a result stays closed", () => {
    const cases: Array<[string, string, string, string | null]> = [
      ["initialized", "", "closed", null],
      ["inactive", "", "closed", null],
      ["active", "", "open", null],
      ["closed", "", "closed", null],
      ["determined", "yes", "resolved", "yes"],
      ["disputed", "yes", "closed", null],
      ["amended", "no", "resolved", "no"],
      ["finalized", "yes", "resolved", "yes"],
      ["settled", "no", "resolved", "no"],
      ["finalized", "", "closed", null],
    ];
    for (const [status, result, ours, resolution] of cases) {
      const r = recorder();
      const m = normalizeMarket({ ...page().markets[0], status, result }, { report: r.report, now: NOW });
      expect([status, m.status, m.resolution]).toEqual([status, ours, resolution]);
      if (status === "finalized" && result === "") expect(r.kinds()).toEqual(["resolved_without_result"]);
    }
  });

  it("an unknown status is reported and treated as closed", () => {
    const r = recorder();
    const m = normalizeMarket(page().markets[3], { report: r.report, now: NOW });
    expect(m.status).toBe("closed");
    expect(r.reports).toContainEqual({
      kind: "unknown_market_status",
      detail: { ticker: "KXNBA-26NOV23-BOS", status: "frozen_for_review" },
    });
  });

  it("missing optional fields are reported by kind, not fatal", () => {
    const r = recorder();
    const m = normalizeMarket(page().markets[4], { report: r.report, now: NOW });
    expect(m).toMatchObject({ rules: null, openTime: null, closeTime: null, volume: 0, updatedAt: NOW });
    expect(m.tickSize).toBe(10_000);
    expect(r.kinds().sort()).toEqual([
      "missing_field:price_level_structure",
      "missing_field:volume_24h_fp",
      "missing_field:volume_fp",
    ]);
  });

  it("a malformed market throws a parse error naming its ticker", () => {
    expect(() => normalizeMarket(page().markets[5], { report: () => {}, now: NOW })).toThrowError(
      expect.objectContaining({ name: "KalshiParseError", ticker: "KXBAD-26NOV23-X", kind: "bad_response" }),
    );
    const e = (() => {
      try {
        normalizeMarket({ title: "no ticker" }, { report: () => {}, now: NOW });
      } catch (error) {
        return error;
      }
    })();
    expect(e).toBeInstanceOf(KalshiParseError);
  });

  it("a page skips the malformed market, drops the MVE combo, keeps the rest", () => {
    const r = recorder();
    const out = normalizeMarkets(page().markets, { report: r.report, now: NOW });
    expect(out.markets.map((m) => m.venueMarketId)).toEqual([
      "KXFEDDECISION-26DEC-H0",
      "KXBTC-26DEC31-T150000",
      "KXCPI-26OCT-T0.3",
      "KXNBA-26NOV23-BOS",
      "KXHIGHNY-26NOV23-B60",
    ]);
    expect(out.skipped).toEqual(["KXBAD-26NOV23-X"]);
    expect(out.mveDropped).toBe(1);
    expect(r.kinds()).toContain("market_parse_failed");
  });

  it("recognises combo markets by collection ticker, legs or KXMVE prefix", () => {
    expect(isMveMarket({ ticker: "A", mve_collection_ticker: "KXMVEX" })).toBe(true);
    expect(isMveMarket({ ticker: "A", mve_selected_legs: [{}] })).toBe(true);
    expect(isMveMarket({ ticker: "KXMVECROSS-1" })).toBe(true);
    expect(isMveMarket({ ticker: "KXFED-1", mve_selected_legs: [] })).toBe(false);
  });
});

describe("events (GET /events?with_nested_markets=true)", () => {
  it("maps events with their markets, settlement sources and close time", () => {
    const body = fixture<{ events: unknown[] }>("events-page.json");
    const ctx = { report: () => {}, now: NOW };
    const fed = normalizeEvent(body.events[0], ctx);
    expect(fed.event).toEqual({
      id: "kalshi:KXFEDDECISION-26DEC",
      venue: "kalshi",
      venueEventId: "KXFEDDECISION-26DEC",
      title: "Fed decision in December 2026",
      category: "Economics",
      marketIds: ["kalshi:KXFEDDECISION-26DEC-H0", "kalshi:KXFEDDECISION-26DEC-C25"],
      closeTime: "2026-12-16T18:56:00.000Z",
      url: "https://kalshi.com/markets/kxfeddecision-26dec",
      mutuallyExclusive: true,
    });
    expect(fed.info.seriesTicker).toBe("KXFEDDECISION");
    expect(fed.markets[1]?.settlementSource).toBe("Federal Reserve (https://www.federalreserve.gov/)");
    expect(fed.markets[1]?.question).toBe("Fed decision in December 2026? (Cut 25bps)");
    const weather = normalizeEvent(body.events[1], ctx);
    expect(weather.event.marketIds).toEqual([]);
    expect(weather.event.category).toBeNull();
    expect(weather.event.closeTime).toBe("2026-11-24T05:00:00.000Z"); // strike date when no markets
    expect(weather.info.settlementSource).toBe(
      "National Weather Service (https://www.weather.gov/); NWS Climatological Report (Daily)",
    );
  });
});

describe("order book (orderbook_fp)", () => {
  it("YES bids from yes_dollars, NO bids from no_dollars, asks implied at 1 − p, best first", () => {
    const book = normalizeOrderBook(fixture("orderbook.json"), "KXFEDDECISION-26DEC-H0", NOW);
    expect(book.marketId).toBe("kalshi:KXFEDDECISION-26DEC-H0");
    expect(book.yes.bids).toEqual([
      { price: 420_000, size: 13_000_000 },
      { price: 350_000, size: 200_000_000 },
    ]);
    expect(book.yes.asks).toEqual([
      { price: 440_000, size: 17_000_000 },
      { price: 460_000, size: 400_000_000 },
    ]);
    expect(book.no.bids).toEqual([
      { price: 560_000, size: 17_000_000 },
      { price: 540_000, size: 400_000_000 },
    ]);
    expect(book.no.asks).toEqual([
      { price: 580_000, size: 13_000_000 },
      { price: 650_000, size: 200_000_000 },
    ]);
    expect(book.yes).not.toEqual(book.no);
  });

  it("an empty NO side leaves NO bids and YES asks empty, nothing invented", () => {
    const book = normalizeOrderBook(fixture("orderbook-empty-side.json"), "KXBTC-26DEC31-T150000", NOW);
    expect(book.yes.bids).toEqual([
      { price: 35_000, size: 5_500_000 },
      { price: 10_000, size: 1_000_000_000 },
    ]);
    expect(book.yes.asks).toEqual([]);
    expect(book.no.bids).toEqual([]);
    expect(book.no.asks.map((l) => l.price)).toEqual([965_000, 990_000]);
  });

  it("a side given as null is empty; a book without orderbook_fp (legacy `orderbook`) is a parse error", () => {
    const book = normalizeOrderBook({ orderbook_fp: { yes_dollars: null, no_dollars: null } }, "T", NOW);
    expect(book.yes).toEqual({ bids: [], asks: [] });
    expect(() => normalizeOrderBook({ orderbook: { yes: [[42, 13]], no: null } }, "T", NOW)).toThrow(
      KalshiParseError,
    );
    expect(() =>
      normalizeOrderBook({ orderbook_fp: { yes_dollars: [["1.2000", "1.00"]] } }, "T", NOW),
    ).toThrow(/malformed level/);
  });
});

describe("candlesticks", () => {
  it("stamps candles at the period start, uses trade prices, flat at the previous close without trades", () => {
    const candles = normalizeCandles(fixture("candlesticks-1h.json"), 60, { report: () => {}, now: NOW });
    expect(candles).toEqual([
      {
        timestamp: new Date((1795359600 - 3600) * 1000).toISOString(),
        open: 410_000,
        high: 450_000,
        low: 390_000,
        close: 420_000,
        volume: 1_250_000_000,
      },
      {
        timestamp: new Date((1795363200 - 3600) * 1000).toISOString(),
        open: 420_000,
        high: 420_000,
        low: 420_000,
        close: 420_000,
        volume: 0,
      },
    ]);
  });

  it("with no trades at all, falls back to the YES bid/ask mid; 1-minute and daily periods", () => {
    const body = fixture("candlesticks-no-trades.json");
    const [c] = normalizeCandles(body, 1440, { report: () => {}, now: NOW });
    expect(c).toMatchObject({ open: 230_000, close: 230_000, volume: 0 });
    expect(c?.timestamp).toBe(new Date((1795305600 - 86400) * 1000).toISOString());
    const [m] = normalizeCandles(body, 1, { report: () => {}, now: NOW });
    expect(m?.timestamp).toBe(new Date((1795305600 - 60) * 1000).toISOString());
  });

  it("reads the historical shape (plain `open`, `volume`; null prices without trades)", () => {
    const body = fixture("candlesticks-historical.json");
    const candles = normalizeCandles(body, 1440, { report: () => {}, now: NOW }, "historical");
    expect(candles).toEqual([
      {
        timestamp: new Date((1737504000 - 86400) * 1000).toISOString(),
        open: 320_000,
        high: 360_000,
        low: 310_000,
        close: 340_000,
        volume: 420_000_000,
      },
      {
        timestamp: new Date((1737590400 - 86400) * 1000).toISOString(),
        open: 340_000,
        high: 340_000,
        low: 340_000,
        close: 340_000,
        volume: 0,
      },
    ]);
  });
});

describe("historical cutoff (GET /historical/cutoff)", () => {
  it("reads ISO times and unix seconds or milliseconds; an unreadable field is null and reported", () => {
    const r = recorder();
    expect(
      normalizeCutoff(
        {
          market_settled_ts: "2025-11-01T00:00:00Z",
          trades_created_ts: "1761955200",
          orders_updated_ts: 1761955200000,
        },
        { report: r.report, now: NOW },
      ),
    ).toEqual({
      marketSettledMs: Date.parse("2025-11-01T00:00:00Z"),
      tradesCreatedMs: 1761955200000,
      ordersUpdatedMs: 1761955200000,
    });
    expect(normalizeCutoff({ market_settled_ts: "soon" }, { report: r.report, now: NOW })).toEqual({
      marketSettledMs: null,
      tradesCreatedMs: null,
      ordersUpdatedMs: null,
    });
    expect(r.kinds()).toContain("unreadable_cutoff:market_settled_ts");
  });
});
describe("public trades (GET /markets/trades)", () => {
  it("reads the REST trade shape (ticker, created_time, legacy taker_side only)", () => {
    const r = recorder();
    const { trades } = fixture<{ trades: unknown[] }>("trades.json");
    const out = trades.map((t) => normalizeTrade(t, { report: r.report, now: NOW }));
    expect(out).toEqual([
      {
        marketId: "kalshi:KXFEDDECISION-26DEC-H0",
        outcome: "yes",
        price: 430_000,
        size: 5_000_000,
        takerSide: "buy",
        timestamp: "2026-11-22T11:59:00.000Z",
        venueTradeId: "tr-1",
      },
      {
        marketId: "kalshi:KXFEDDECISION-26DEC-H0",
        outcome: "yes",
        price: 420_000,
        size: 1_500_000,
        takerSide: null,
        timestamp: "2026-11-22T11:58:00.000Z",
        venueTradeId: "tr-2",
      },
    ]);
    expect(r.kinds()).toEqual(["missing_field:taker_outcome_side"]);
  });
});
