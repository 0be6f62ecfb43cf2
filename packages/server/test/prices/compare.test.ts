/**
 * GET /v1/prices/compare against the fake venues through the real adapters: the spec 2.5 shape,
 * the arbitrage of an identity pair from both books after fees (hand-computed), complement legs
 * flipped, an unverified pair never called an opportunity, single-market comparisons, a venue that
 * is down (answered from quotes), and the errors.
 */
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Config, testConfig } from "../../src/config";
import { fakeVenueUrls } from "../../src/demo";
import { ManualClock, systemClock } from "../../src/infra/clock";
import { silentLogger } from "../../src/infra/log";
import type { CrossEvent, CrossEventLookup, CrossEventPair } from "../../src/matching/types";
import type { VenueId } from "../../src/venues/model";
import { createVenues } from "../../src/venues/registry";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, expectError, signup, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";

const FED_PM = "fed-decision-december-2026-25-bps-cut";
const FED_KX = "kalshi:KXFEDDECISION-26DEC-C25";
const HOLD_KX = "kalshi:KXFEDDECISION-26DEC-H0";
const CUTS_PM = "2-or-fewer-fed-rate-cuts-in-2027";
const CUTS_KX = "kalshi:KXRATECUTCOUNT-27-T2";

let polymarket: PolymarketFake;
let kalshi: KalshiFake;
let config: Config;
let venues: Map<VenueId, Venue>;
const pmId = (slug: string) => `polymarket:${polymarket.script.market(slug).conditionId}`;

/** A lookup that knows the events it is given, by event id or by any of their markets. */
class StubLookup implements CrossEventLookup {
  events: CrossEvent[] = [];
  async resolve(id: string): Promise<CrossEvent | null> {
    return this.events.find((e) => e.id === id || e.markets.some((m) => m.market_id === id)) ?? null;
  }
}

function pair(market_a: string, market_b: string, overrides: Partial<CrossEventPair> = {}): CrossEventPair {
  return {
    match_id: `mat_${market_b.slice(-6)}`,
    market_a,
    market_b,
    relation: "identity",
    polarity: "same",
    status: "verified",
    confidence: 0.97,
    caveats: [],
    ...overrides,
  };
}

function event(id: string, title: string, pairs: CrossEventPair[]): CrossEvent {
  const ids = [...new Set(pairs.flatMap((p) => [p.market_a, p.market_b]))];
  return {
    id,
    title,
    markets: ids.map((m) => ({ market_id: m, venue: m.split(":")[0] as VenueId })),
    pairs,
  };
}

beforeAll(async () => {
  polymarket = await startPolymarketFake();
  kalshi = await startKalshiFake();
  // Fee-free on Polymarket (as markets created before its 2026 fee rollout are): the hand-computed
  // figures below are Kalshi's fees alone; the last test charges a Polymarket fee schedule.
  polymarket.script.setFees(FED_PM, false);
  polymarket.script.setFees(CUTS_PM, false);
  config = testConfig({ venues: ["polymarket", "kalshi"], venueUrls: fakeVenueUrls(polymarket, kalshi) });
  venues = createVenues(config, systemClock, silentLogger);
});

afterAll(async () => {
  await Promise.all([polymarket?.close(), kalshi?.close()]);
});

describe.each(STORE_BACKENDS)("GET /v1/prices/compare on %s", (backend) => {
  let t: TestApp;
  let key: string;
  const lookup = new StubLookup();

  const get = (query: string) =>
    t.app.inject({ method: "GET", url: `/v1/prices/compare?${query}`, headers: bearer(key) });
  /** The books are REST books reused for 2 s: move the clock so the next request fetches them. */
  const compare = async (query: string) => {
    t.clock.advance(5_000);
    const response = await get(query);
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body.success).toBe(true);
    return body.data;
  };

  /** YES on Polymarket from 0.55 (40) then 0.58 (200); NO on Kalshi at 0.42 (60). */
  function fedBooks() {
    polymarket.script.setBook(FED_PM, {
      bids: [[0.53, 100]],
      asks: [
        [0.55, 40],
        [0.58, 200],
      ],
    });
    // Kalshi's book is YES bids and NO bids: NO asks at 1 − YES bids, YES asks at 1 − NO bids.
    kalshi.script.setBook("KXFEDDECISION-26DEC-C25", {
      yes: [[0.58, 60]],
      no: [
        [0.4, 30],
        [0.38, 50],
      ],
    });
  }

  beforeAll(async () => {
    // No venue feeds: books come from REST (reused for 2 s), so a test's book is the one compared.
    t = await createTestApp({
      store: backend,
      venues,
      config: { ...config, feedMaxMarketsPerVenue: 0 },
      clock: new ManualClock(Date.now()),
    });
    key = (await createKey(t.app, (await signup(t.app)).session, { type: "read_only" })).key;
    fedBooks();
    await t.services.catalog.syncVenue("polymarket");
    await t.services.catalog.syncVenue("kalshi");
    t.services.compare.setLookup(lookup);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    fedBooks();
    lookup.events = [event("xev_fed", "Fed decision in December 2026", [pair(pmId(FED_PM), FED_KX)])];
  });

  it("compares a verified identity pair and finds the arbitrage in the books, after fees", async () => {
    const data = await compare("event_id=xev_fed");
    expect(data.event_id).toBe("xev_fed");
    expect(data.title).toBe("Fed decision in December 2026");
    expect(Object.keys(data.platforms).sort()).toEqual(["kalshi", "polymarket"]);
    const pm = data.platforms.polymarket;
    const kx = data.platforms.kalshi;
    expect(pm).toMatchObject({
      market_id: pmId(FED_PM),
      best_bid: 0.53,
      best_ask: 0.55,
      event_yes_outcome: "yes",
      liquidity_source: "book",
    });
    for (const p of [pm, kx]) {
      for (const field of ["yes_price", "no_price", "volume_24h", "liquidity"]) {
        expect(typeof p[field], field).toBe("number");
      }
    }
    // The NO book's midpoint: NO bid 1 − 0.55 = 0.45, NO ask 1 − 0.53 = 0.47.
    expect(pm.no_price).toBe(0.46);
    // 0.53 × 100 + 0.55 × 40 + 0.58 × 200.
    expect(pm.liquidity).toBe(53 + 22 + 116);
    expect(kx).toMatchObject({ market_id: FED_KX, best_bid: 0.58, best_ask: 0.6, event_yes_outcome: "yes" });
    expect(kx.no_price).toBe(0.41);
    expect(kx.liquidity).toBeCloseTo(0.58 * 60 + 0.6 * 30 + 0.62 * 50, 6);

    expect(data.spread_analysis).toEqual({
      yes_spread: expect.any(Number),
      yes_spread_pct: expect.any(Number),
      best_yes_buy: "polymarket",
      best_yes_sell: "kalshi",
      arbitrage_opportunity: true,
    });
    const low = Math.min(pm.yes_price, kx.yes_price);
    expect(data.spread_analysis.yes_spread).toBeCloseTo(Math.abs(pm.yes_price - kx.yes_price), 6);
    expect(data.spread_analysis.yes_spread_pct).toBeCloseTo((data.spread_analysis.yes_spread / low) * 100, 3);
    expect(data.arbitrage_reason).toBeNull();
    expect(data.reference_market_id).toBe(pmId(FED_PM));

    // YES on Polymarket at 0.55 + NO on Kalshi at 0.42 = 0.97; Kalshi's fee at 0.42 is $0.017052 a
    // contract, 2 cents on one. 40 pairs: $1.20 − ceil(68.208) = 69 cents = $0.51. Past 40 the YES ask
    // is 0.58: 0.58 + 0.42 = $1, and each pair only adds fees.
    const arb = data.arbitrage;
    expect(arb).toMatchObject({
      match_id: "mat_EC-C25",
      relation: "identity",
      polarity: "same",
      status: "verified",
      confidence: 0.97,
      min_size: 10,
      depth: 60,
      edge_first_contract: 0.01,
      size: 40,
      cost: 38.8,
      fees: 0.69,
      payout: 40,
      profit: 0.51,
      avg_edge: 0.01275,
      best_at_min_size: { size: 40, profit: 0.51, avg_edge: 0.01275 },
      more_levels: false,
    });
    expect(arb.legs).toEqual([
      { platform: "polymarket", market_id: pmId(FED_PM), outcome: "yes", best_ask: 0.55, cost: 22, fees: 0 },
      { platform: "kalshi", market_id: FED_KX, outcome: "no", best_ask: 0.42, cost: 16.8, fees: 0.69 },
    ]);
    expect(arb.levels).toEqual([
      {
        prices: [0.55, 0.42],
        size: 40,
        cumulative_size: 40,
        gross_edge: 0.03,
        fees: 0.69,
        profit: 0.51,
        cumulative_profit: 0.51,
      },
      {
        prices: [0.58, 0.42],
        size: 20,
        cumulative_size: 60,
        gross_edge: 0,
        // ceil(102.312) − 69 cents.
        fees: 0.34,
        profit: -0.34,
        cumulative_profit: 0.17,
      },
    ]);
    // NO on Polymarket at 0.47 + YES on Kalshi at 0.60: $1.07.
    expect(arb.other_direction).toEqual({
      legs: [
        { platform: "polymarket", market_id: pmId(FED_PM), outcome: "no" },
        { platform: "kalshi", market_id: FED_KX, outcome: "yes" },
      ],
      edge_first_contract: -0.09,
      size: 0,
      profit: 0,
    });
    expect(data.pairs).toEqual([{ ...pair(pmId(FED_PM), FED_KX), selected: true }]);
  });

  it("takes a market id (also as market_id) and reads YES as that market's", async () => {
    const byMarket = await compare(`event_id=${encodeURIComponent(FED_KX)}`);
    expect(byMarket.event_id).toBe("xev_fed");
    expect(byMarket.reference_market_id).toBe(FED_KX);
    expect(byMarket.arbitrage.size).toBe(40);
    const alias = await compare(`market_id=${encodeURIComponent(FED_KX)}`);
    expect(alias.reference_market_id).toBe(FED_KX);
    expect(alias.spread_analysis.arbitrage_opportunity).toBe(true);
  });

  it("never calls a candidate pair an opportunity, however large the edge", async () => {
    lookup.events = [
      event("xev_fed", "Fed decision in December 2026", [
        pair(pmId(FED_PM), FED_KX, { status: "candidate", confidence: 0.99 }),
      ]),
    ];
    const data = await compare("event_id=xev_fed");
    expect(data.spread_analysis.arbitrage_opportunity).toBe(false);
    expect(data.arbitrage).toMatchObject({ status: "candidate", size: 40, profit: 0.51 });
    expect(data.arbitrage_reason.code).toBe("pair_not_verified");
  });

  it("shows a pair's caveats on the pair and on its arbitrage, so a strict arbitrage can skip it", async () => {
    const caveats = ["cancelled handling differs: 50-50 vs fair-price"];
    lookup.events = [
      event("xev_fed", "Fed decision in December 2026", [pair(pmId(FED_PM), FED_KX, { caveats })]),
    ];
    const data = await compare("event_id=xev_fed");
    expect(data.pairs[0].caveats).toEqual(caveats);
    expect(data.arbitrage.caveats).toEqual(caveats);
  });

  it("says no opportunity when the edge is gone from the books", async () => {
    polymarket.script.setBook(FED_PM, { bids: [[0.56, 100]], asks: [[0.58, 100]] });
    const data = await compare("event_id=xev_fed");
    expect(data.spread_analysis.arbitrage_opportunity).toBe(false);
    expect(data.arbitrage).toMatchObject({ size: 0, profit: 0, avg_edge: null, edge_first_contract: -0.02 });
    expect(data.arbitrage_reason.code).toBe("no_edge");
  });

  it("needs the edge at the minimum size: a 5-contract edge is not an opportunity", async () => {
    polymarket.script.setBook(FED_PM, {
      bids: [[0.45, 100]],
      asks: [
        [0.5, 5],
        [0.7, 100],
      ],
    });
    const data = await compare("event_id=xev_fed");
    // 5 pairs at 0.50 + 0.42: $0.40 − ceil(8.526) = 9 cents. At 10 pairs the five at 0.70 + 0.42 lose
    // $0.60: 0.40 − 0.60 − ceil(17.052) = 18 cents of fee = −$0.38.
    expect(data.arbitrage).toMatchObject({ size: 5, profit: 0.31, min_size: 10 });
    expect(data.arbitrage.best_at_min_size).toEqual({ size: 10, profit: -0.38, avg_edge: -0.038 });
    expect(data.spread_analysis.arbitrage_opportunity).toBe(false);
    expect(data.arbitrage_reason.code).toBe("below_min_size");
  });

  it("flips the legs of a complement pair: YES on both venues", async () => {
    polymarket.script.setBook(CUTS_PM, { bids: [[0.58, 100]], asks: [[0.6, 50]] });
    // Kalshi YES bids at 0.33 (NO asks at 0.67); NO bids at 0.65 (YES asks at 0.35).
    kalshi.script.setBook("KXRATECUTCOUNT-27-T2", { yes: [[0.33, 50]], no: [[0.65, 50]] });
    lookup.events = [
      event("xev_cuts", "How many Fed rate cuts in 2027?", [
        pair(pmId(CUTS_PM), CUTS_KX, { relation: "complement", polarity: "inverted" }),
      ]),
    ];
    const data = await compare("event_id=xev_cuts");
    expect(data.platforms.polymarket.event_yes_outcome).toBe("yes");
    expect(data.platforms.kalshi.event_yes_outcome).toBe("no");
    expect(data.platforms.kalshi).toMatchObject({ best_bid: 0.33, best_ask: 0.35, no_price: 0.66 });
    // The event's YES costs 0.60 on Polymarket and 0.67 (Kalshi's NO) on Kalshi; it sells for 0.58 on
    // Polymarket and 0.65 (Kalshi's NO bid) on Kalshi.
    expect(data.spread_analysis.best_yes_buy).toBe("polymarket");
    expect(data.spread_analysis.best_yes_sell).toBe("kalshi");
    expect(data.spread_analysis.yes_spread).toBeCloseTo(
      Math.abs(data.platforms.polymarket.yes_price - data.platforms.kalshi.no_price),
      6,
    );
    // YES at 0.60 + YES at 0.35 = 0.95; Kalshi's fee at 0.35 is $0.015925 a contract: 50 pairs pay
    // $2.50 − ceil(79.625) = 80 cents.
    expect(data.arbitrage).toMatchObject({
      relation: "complement",
      polarity: "inverted",
      size: 50,
      fees: 0.8,
      profit: 1.7,
      edge_first_contract: 0.03,
    });
    expect(data.arbitrage.legs.map((l: { outcome: string }) => l.outcome)).toEqual(["yes", "yes"]);
    expect(data.arbitrage.other_direction.legs.map((l: { outcome: string }) => l.outcome)).toEqual([
      "no",
      "no",
    ]);
    expect(data.spread_analysis.arbitrage_opportunity).toBe(true);
  });

  it("gives no arbitrage figure for a subset pair", async () => {
    lookup.events = [
      event("xev_fed", "Fed decision in December 2026", [
        pair(pmId(FED_PM), FED_KX, { relation: "subset", polarity: "same", confidence: 0.99 }),
      ]),
    ];
    const data = await compare("event_id=xev_fed");
    expect(data.arbitrage).toBeNull();
    expect(data.arbitrage_reason.code).toBe("relation_not_arbitrageable");
    expect(data.spread_analysis.arbitrage_opportunity).toBe(false);
    expect(Object.keys(data.platforms).sort()).toEqual(["kalshi", "polymarket"]);
  });

  it("with two markets on a venue, compares the best verified pair and says which", async () => {
    lookup.events = [
      event("xev_fed", "Fed decision in December 2026", [
        pair(pmId(FED_PM), HOLD_KX, { match_id: "mat_hold", status: "candidate", confidence: 0.99 }),
        pair(pmId(FED_PM), FED_KX, { match_id: "mat_cut", confidence: 0.93 }),
        pair(pmId(FED_PM), HOLD_KX, { match_id: "mat_rej", status: "rejected", confidence: 1 }),
      ]),
    ];
    const data = await compare("event_id=xev_fed");
    expect(data.platforms.kalshi.market_id).toBe(FED_KX);
    expect(data.arbitrage.match_id).toBe("mat_cut");
    expect(data.pairs.map((p: { match_id: string; selected: boolean }) => [p.match_id, p.selected])).toEqual([
      ["mat_hold", false],
      ["mat_cut", true],
      ["mat_rej", false],
    ]);
  });

  it("compares a market in no cross-venue event alone", async () => {
    lookup.events = [];
    const data = await compare(`market_id=${encodeURIComponent(HOLD_KX)}`);
    expect(data.event_id).toBe(HOLD_KX);
    expect(data.title).toBe("Fed decision in December 2026");
    expect(Object.keys(data.platforms)).toEqual(["kalshi"]);
    expect(data.spread_analysis).toMatchObject({
      yes_spread: null,
      yes_spread_pct: null,
      best_yes_buy: "kalshi",
      best_yes_sell: "kalshi",
      arbitrage_opportunity: false,
    });
    expect(data.arbitrage).toBeNull();
    expect(data.arbitrage_reason.code).toBe("no_cross_event");
  });

  it("answers from quotes with arbitrage null when a venue is down", async () => {
    kalshi.script.goDown(true);
    try {
      const data = await compare("event_id=xev_fed");
      expect(data.arbitrage).toBeNull();
      expect(data.arbitrage_reason).toEqual({
        code: "book_unavailable",
        message: expect.stringContaining(FED_KX),
      });
      expect(data.spread_analysis.arbitrage_opportunity).toBe(false);
      expect(data.platforms.kalshi).toMatchObject({ liquidity_source: "catalog", book_timestamp: null });
      expect(typeof data.platforms.kalshi.yes_price).toBe("number");
      expect(data.platforms.polymarket.liquidity_source).toBe("book");
    } finally {
      kalshi.script.goDown(false);
    }
  }, 60_000);

  it("errors: unknown id 404, missing or conflicting ids 400", async () => {
    const unknown = expectError(await get("event_id=xev_nope"), 404, "EVENT_NOT_FOUND");
    expect(unknown.details).toEqual({ event_id: "xev_nope" });
    expectError(await get("event_id=kalshi:NOPE-26"), 404, "EVENT_NOT_FOUND");
    const missing = expectError(await get(""), 400, "VALIDATION_ERROR");
    expect(missing.details).toEqual({ fields: { "query.event_id": expect.any(String) } });
    expectError(await get("event_id=xev_fed&market_id=kalshi:X"), 400, "VALIDATION_ERROR");
    expectError(await get("event_id=xev_fed&bogus=1"), 400, "VALIDATION_ERROR");
    expectError(await get("event_id="), 400, "VALIDATION_ERROR");
    const anonymous = await t.app.inject({ method: "GET", url: "/v1/prices/compare?event_id=xev_fed" });
    expectError(anonymous, 401, "UNAUTHORIZED");
  });

  it("charges each leg by its market's fee schedule: Polymarket's shares × rate × p(1 − p)", async () => {
    // The Polymarket market now publishes a schedule (rate 0.05, exponent 1; takerBaseFee 1000 is a
    // cap, not a rate): the catalog learns it at its next sync and the arbitrage charges it.
    polymarket.script.setFees(FED_PM, { rate: 0.05, exponent: 1 });
    await t.services.catalog.syncVenue("polymarket");
    try {
      const market = (
        await t.app.inject({ method: "GET", url: `/v1/markets/${pmId(FED_PM)}`, headers: bearer(key) })
      ).json().data;
      expect(market.fees).toMatchObject({
        model: "polymarket",
        rate: 0.05,
        exponent: 1,
        taker_only: true,
        cap_bps: 1000,
      });
      const arb = (await compare("event_id=xev_fed")).arbitrage;
      // YES at 0.55 now pays 0.05 × 0.55 × 0.45 = $0.012375 a contract on Polymarket: the edge of 0.03 a
      // pair less 0.017052 on Kalshi leaves 0.000573, and the best size is where the roundings fall
      // best: 38 pairs, Polymarket 0.47025 (down to $0.00001), Kalshi 0.648 -> 0.65.
      expect(arb).toMatchObject({ size: 38, fees: 1.12025, profit: 0.01975 });
      expect(arb.legs.map((l: { fees: number }) => l.fees)).toEqual([0.47025, 0.65]);
    } finally {
      polymarket.script.setFees(FED_PM, false);
      await t.services.catalog.syncVenue("polymarket");
    }
  });
});

describe("GET /v1/prices/compare with the matching service app.ts wires", () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp({
      venues,
      config: { ...config, feedMaxMarketsPerVenue: 0 },
      clock: new ManualClock(Date.now()),
    });
    key = (await createKey(t.app, (await signup(t.app)).session, { type: "read_only" })).key;
    await t.services.catalog.syncVenue("polymarket");
    await t.services.catalog.syncVenue("kalshi");
  });
  afterAll(() => t.close());

  it("compares the cross-venue event of a pair an admin created", async () => {
    const get = (id: string) =>
      t.app.inject({
        method: "GET",
        url: `/v1/prices/compare?market_id=${encodeURIComponent(id)}`,
        headers: bearer(key),
      });
    // Before any match: the market alone.
    const alone = (await get(pmId(FED_PM))).json().data;
    expect(alone.arbitrage_reason.code).toBe("no_cross_event");

    const { match } = await t.services.matching.create(
      { market_ids: [pmId(FED_PM), FED_KX], relation: "identity" },
      { accountId: "acc_operator", keyId: "key_operator" },
    );
    const event = await t.services.matching.resolve(FED_KX);
    expect(event).not.toBeNull();
    const response = await get(FED_KX);
    expect(response.statusCode, response.body).toBe(200);
    const data = response.json().data;
    expect(data.event_id).toBe(event!.id);
    expect(Object.keys(data.platforms).sort()).toEqual(["kalshi", "polymarket"]);
    expect(data.arbitrage).toMatchObject({ match_id: match.row.id, relation: "identity" });
    expect(data.pairs).toEqual([expect.objectContaining({ match_id: match.row.id, selected: true })]);
  });
});
