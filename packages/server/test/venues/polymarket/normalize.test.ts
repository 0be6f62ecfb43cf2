/** Venue payload in, our object out: Gamma markets/events, CLOB books, prices-history (VENUES.md §1.2–1.3). */

import { POLYMARKET_FREE, polymarketSchedule } from "@crossbook/fees";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseMicros } from "../../../src/venues/decimal";
import {
  clobFeeSchedule,
  epochToIso,
  jsonStringArray,
  micros,
  normalizeGammaEvent,
  normalizeGammaMarket,
  normalizeOrderBook,
  normalizePriceHistory,
  PolymarketParseError,
} from "../../../src/venues/polymarket/normalize";
import { C1, C2, fixture, reports, T1N, T1Y, T2N, T2Y } from "./fixtures";

const NOW = "2026-11-22T12:00:00.000Z";

describe("Gamma market (VENUES.md §1.2)", () => {
  it("parses the JSON-string fields and maps every model field", () => {
    const r = reports();
    const market = normalizeGammaMarket(fixture("gamma-market.json"), { now: NOW, report: r.report });
    expect(market).toEqual({
      id: `polymarket:${C1}`,
      venue: "polymarket",
      venueMarketId: C1,
      eventId: "polymarket:16167",
      title: "New Rihanna Album before GTA VI?",
      question: "New Rihanna Album before GTA VI?",
      rules:
        'This market will resolve to "Yes" if Rihanna releases a new studio album before GTA VI is released.',
      settlementSource: "https://www.rihannanow.com",
      outcomes: { yes: { label: "Yes", venueTokenId: T1Y }, no: { label: "No", venueTokenId: T1N } },
      status: "open",
      resolution: null,
      openTime: "2025-05-02T15:48:00.000Z",
      closeTime: "2026-07-31T12:00:00.000Z",
      tickSize: 10_000,
      minSize: 5_000_000,
      volume: 832_995_125_818,
      volume24h: 2_502_286_549,
      liquidity: 13_563_972_600,
      url: "https://polymarket.com/market/new-rhianna-album-before-gta-vi-926",
      lastPrice: 510_000,
      bestBid: 500_000,
      bestAsk: 520_000,
      // 0.51 now, down 0.02 over the day: 0.53 a day ago.
      price24hAgo: 530_000,
      negRisk: false,
      fees: POLYMARKET_FREE,
      updatedAt: "2026-11-22T10:00:00.123Z",
    });
    expect(r.seen).toEqual([]);
  });

  it("maps YES by label when 'No' is listed first, and does not trust unlabelled quote fields", () => {
    const r = reports();
    const market = normalizeGammaMarket(fixture("gamma-market-no-first.json"), {
      now: NOW,
      report: r.report,
    });
    expect(market.outcomes).toEqual({
      yes: { label: "Yes", venueTokenId: T2Y },
      no: { label: "No", venueTokenId: T2N },
    });
    expect(market.id).toBe(`polymarket:${C2}`); // condition id lower-cased
    expect(market.lastPrice).toBe(630_000); // outcomePrices[index of "Yes"], not [0]
    expect(market.bestBid).toBeNull();
    expect(market.bestAsk).toBeNull();
    expect(market.tickSize).toBe(1_000);
    expect(market.negRisk).toBe(true);
    // feeSchedule is the rate; takerBaseFee (1000) is the cap, not a rate (VENUES-AUDIT #1)
    expect(market.fees).toEqual(
      polymarketSchedule({ rate: 0.05, exponent: 1, takerOnly: true, capBps: 1000 }),
    );
    expect(market.eventId).toBeNull();
    expect(market.updatedAt).toBe(NOW);
    expect(r.kinds()).toEqual(["yes_not_first"]);
  });

  it("treats the first-listed team as YES for team-name outcomes and keeps both labels", () => {
    const r = reports();
    const market = normalizeGammaMarket(fixture("gamma-market-sports.json"), { now: NOW, report: r.report });
    expect(market.outcomes.yes.label).toBe("Lakers");
    expect(market.outcomes.no.label).toBe("Celtics");
    expect(market.outcomes.yes.venueTokenId).not.toBe(market.outcomes.no.venueTokenId);
    expect(market.lastPrice).toBe(440_000);
    expect(market.volume).toBe(1_500_250_000);
    expect(r.kinds()).toEqual(["team_outcomes"]);
  });

  it("reads a closed market settled at 0/1 as resolved NO", () => {
    const market = normalizeGammaMarket(fixture("gamma-market-resolved-no.json"), {
      now: NOW,
      report: () => {},
    });
    expect(market.status).toBe("resolved");
    expect(market.resolution).toBe("no");
    expect(market.bestBid).toBeNull();
    expect(market.eventId).toBeNull();
  });

  it("tells closed-but-unresolved, void and inactive apart", () => {
    const base = fixture("gamma-market.json");
    const closed = normalizeGammaMarket(
      { ...base, closed: true, outcomePrices: '["0.9995","0.0005"]' },
      { now: NOW, report: () => {} },
    );
    expect([closed.status, closed.resolution]).toEqual(["closed", null]);
    const voided = normalizeGammaMarket(
      { ...base, closed: true, umaResolutionStatus: "resolved", outcomePrices: '["0.5","0.5"]' },
      { now: NOW, report: () => {} },
    );
    expect([voided.status, voided.resolution]).toEqual(["resolved", "void"]);
    const inactive = normalizeGammaMarket({ ...base, active: false }, { now: NOW, report: () => {} });
    expect(inactive.status).toBe("closed");
  });

  it("fills defaults for missing optional fields and reports each kind, incl. an unknown enum value", () => {
    const r = reports();
    const market = normalizeGammaMarket(fixture("gamma-market-minimal.json"), { now: NOW, report: r.report });
    expect(market).toMatchObject({
      rules: null,
      settlementSource: null,
      url: null,
      openTime: null,
      closeTime: null,
      tickSize: 10_000,
      minSize: 5_000_000,
      volume: 0,
      liquidity: 0,
      lastPrice: null,
      fees: null,
      status: "open",
    });
    expect(r.kinds()).toEqual(["missing_min_size", "missing_tick_size", "unknown_uma_resolution_status"]);
  });

  it("throws a typed parse error naming the market when it cannot be parsed", () => {
    const bad = fixture("gamma-market-malformed.json");
    expect(() => normalizeGammaMarket(bad, { now: NOW, report: () => {} })).toThrowError(
      PolymarketParseError,
    );
    try {
      normalizeGammaMarket(bad, { now: NOW, report: () => {} });
    } catch (error) {
      expect((error as PolymarketParseError).itemId).toBe(`market 0x${"f6".repeat(32)}`);
      expect((error as PolymarketParseError).kind).toBe("bad_response");
      expect((error as Error).message).toContain("clobTokenIds");
    }
    const base = fixture("gamma-market.json");
    const cases = [
      { ...base, conditionId: undefined },
      { ...base, outcomes: '["Yes","No","Maybe"]' },
      { ...base, outcomes: '["Yes","Maybe"]' },
      { ...base, clobTokenIds: JSON.stringify([T1Y, T1Y]) },
    ];
    for (const raw of cases) {
      expect(() => normalizeGammaMarket(raw, { now: NOW, report: () => {} })).toThrowError(
        PolymarketParseError,
      );
    }
  });

  it("decodes JSON-string arrays, and reports (but accepts) real arrays", () => {
    const r = reports();
    expect(jsonStringArray('["a","b"]', "outcomes", r.report)).toEqual(["a", "b"]);
    expect(jsonStringArray(["a", "b"], "outcomes", r.report)).toEqual(["a", "b"]);
    expect(jsonStringArray("nope", "outcomes", r.report)).toBeUndefined();
    expect(jsonStringArray('[{"x":1}]', "outcomes", r.report)).toBeUndefined();
    expect(r.kinds()).toEqual(["gamma_array_not_string"]);
  });
});

describe("fee schedules (docs.polymarket.com/trading/fees, clob-client-v2 getClobMarketInfo)", () => {
  const gamma = (fields: Record<string, unknown>) => ({ ...fixture("gamma-market.json"), ...fields });

  it("reads feeSchedule as the rate and exponent, takerBaseFee as the cap", () => {
    const r = reports();
    const market = normalizeGammaMarket(
      gamma({
        feesEnabled: true,
        feeSchedule: { exponent: 2, rate: 0.25, rebateRate: 0.2, takerOnly: true },
        takerBaseFee: 1000,
        makerBaseFee: 1000,
      }),
      { now: NOW, report: r.report },
    );
    expect(market.fees).toEqual({
      venue: "polymarket",
      rate: 0.25,
      exponent: 2,
      makerRate: 0,
      capBps: 1000,
      feeType: null,
      multiplier: null,
    });
  });

  it("says nothing it does not know: fees on without a schedule is unknown, a bad schedule is reported", () => {
    const r = reports();
    const unknown = normalizeGammaMarket(gamma({ feesEnabled: true, takerBaseFee: 1000 }), {
      now: NOW,
      report: r.report,
    });
    expect(unknown.fees).toBeNull();
    const bad = normalizeGammaMarket(
      gamma({ feesEnabled: true, feeSchedule: { rate: "x" }, takerBaseFee: 0 }),
      {
        now: NOW,
        report: r.report,
      },
    );
    expect(bad.fees).toEqual(POLYMARKET_FREE); // no schedule and a zero base fee: fee-free
    expect(r.kinds()).toContain("bad_fee_schedule");
  });

  it("reads the CLOB's compact market info: fd {r, e, to} and the cap tbf; no fd is fee-free", () => {
    const info = {
      c: C1,
      t: [
        { t: T1Y, o: "Yes" },
        { t: T1N, o: "No" },
      ],
      mts: 0.01,
      fd: { r: 0.05, e: 1, to: true },
      tbf: 1000,
    };
    expect(clobFeeSchedule(info)).toEqual(
      polymarketSchedule({ rate: 0.05, exponent: 1, takerOnly: true, capBps: 1000 }),
    );
    const { fd: _fd, ...free } = info;
    expect(clobFeeSchedule(free)).toEqual(polymarketSchedule({ rate: 0, exponent: 0, capBps: 1000 }));
    expect(clobFeeSchedule({ error: "not found" })).toBeNull();
  });
});

describe("Gamma event (VENUES.md §1.2)", () => {
  it("maps the event, its parsed markets, and skips the malformed one", () => {
    const [neg, snow] = fixture<unknown[]>("gamma-events.json");
    const r = reports();
    const result = normalizeGammaEvent(neg, { now: NOW, report: r.report });
    expect(result.event).toEqual({
      id: "polymarket:30001",
      venue: "polymarket",
      venueEventId: "30001",
      title: "Fed decision in December?",
      category: "Economy",
      marketIds: [`polymarket:0x${"01".repeat(32)}`, `polymarket:0x${"02".repeat(32)}`],
      closeTime: "2026-12-16T19:00:00.000Z",
      url: "https://polymarket.com/event/fed-decision-in-december",
      mutuallyExclusive: true,
    });
    expect(result.markets.map((m) => [m.eventId, m.negRisk])).toEqual([
      ["polymarket:30001", true],
      ["polymarket:30001", true],
    ]);
    expect(result.skipped).toHaveLength(1);
    expect(result.skipped[0]!.itemId).toBe(`market 0x${"03".repeat(32)}`);
    const other = normalizeGammaEvent(snow, { now: NOW, report: () => {} });
    expect(other.event).toMatchObject({ category: "Weather", mutuallyExclusive: false });
  });
});

describe("CLOB book (VENUES.md §1.3)", () => {
  const pair = { marketId: `polymarket:${C1}`, conditionId: C1, yes: T1Y, no: T1N };

  it("reverses both best-last wire sides to best-first, from each token's own book", () => {
    const r = reports();
    const book = normalizeOrderBook(pair, fixture("book-yes.json"), fixture("book-no.json"), r.report, {
      nowMs: 0,
    });
    expect(book.yes.bids).toEqual([
      { price: 500_000, size: 125_500_000 },
      { price: 480_000, size: 200_000_000 },
      { price: 10_000, size: 1_000_000_000 },
    ]);
    expect(book.yes.asks).toEqual([
      { price: 520_000, size: 705_000_000 },
      { price: 530_000, size: 300_000_000 },
      { price: 990_000, size: 5_000_000_000 },
    ]);
    expect(book.no).toEqual({
      bids: [
        { price: 480_000, size: 705_000_000 },
        { price: 470_000, size: 300_000_000 },
      ],
      asks: [],
    });
    expect(book.yes).not.toEqual(book.no);
    expect(book.timestamp).toBe("2026-08-13T06:54:32.230Z");
    expect(book.sequence).toBeNull();
    expect(r.seen).toEqual([]);
  });

  it("cuts to depth", () => {
    const book = normalizeOrderBook(pair, fixture("book-yes.json"), fixture("book-no.json"), () => {}, {
      nowMs: 0,
      depth: 1,
    });
    expect(book.yes.bids).toHaveLength(1);
    expect(book.yes.asks).toEqual([{ price: 520_000, size: 705_000_000 }]);
  });

  it("refuses a NO book that is really the YES token's book", () => {
    expect(() =>
      normalizeOrderBook(pair, fixture("book-yes.json"), fixture("book-yes.json"), () => {}, { nowMs: 0 }),
    ).toThrowError(/NO book is for token/);
  });

  it("sorts and reports a side that arrives best-first, and reports a missing side", () => {
    const r = reports();
    const yes = {
      ...fixture("book-yes.json"),
      bids: [
        { price: "0.5", size: "1" },
        { price: "0.4", size: "2" },
      ],
    };
    const no = { ...fixture("book-no.json"), asks: undefined };
    const book = normalizeOrderBook(pair, yes, no, r.report, { nowMs: 0 });
    expect(book.yes.bids.map((l) => l.price)).toEqual([500_000, 400_000]);
    expect(book.no.asks).toEqual([]);
    expect(r.kinds()).toEqual(["book_order_unexpected", "book_side_missing"]);
  });
});

describe("prices-history (VENUES.md §1.3)", () => {
  it("turns {t,p} into ordered points, skipping and reporting bad ones", () => {
    const r = reports();
    const points = normalizePriceHistory(fixture("prices-history.json"), T1Y, r.report);
    expect(points).toEqual([
      { timestamp: "2026-08-09T00:00:28.000Z", price: 235_000 },
      { timestamp: "2026-08-09T00:01:28.000Z", price: 240_000 },
      { timestamp: "2026-08-09T00:02:28.000Z", price: 250_000 },
    ]);
    expect(r.kinds()).toEqual(["bad_history_point"]);
    expect(() => normalizePriceHistory({}, T1Y, () => {})).toThrowError(PolymarketParseError);
  });
});

describe("hot-path helpers", () => {
  it("parses decimals exactly like the general parser (strings and numbers)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 999_999_999_999 }),
        fc.integer({ min: 0, max: 6 }),
        (n, places) => {
          const text = (n / 10 ** places).toFixed(places);
          expect(micros(text)).toBe(parseMicros(text));
        },
      ),
    );
    for (const odd of ["", ".5", "5.", "1e3", "-0.5", " 0.5", "0.1234567", "0.1234560", "abc", "1.2.3"]) {
      expect(micros(odd)).toBe(parseMicros(odd));
    }
    expect(micros(0.52)).toBe(520_000);
    expect(micros(null)).toBeUndefined();
  });

  it("formats epoch timestamps exactly like Date#toISOString", () => {
    expect(epochToIso("1786604072222", "ms")).toBe("2026-08-13T06:54:32.222Z");
    expect(epochToIso(1786600000, "s")).toBe("2026-08-13T05:46:40.000Z");
    expect(epochToIso("", "ms")).toBeUndefined();
    expect(epochToIso("soon", "ms")).toBeUndefined();
  });
});
