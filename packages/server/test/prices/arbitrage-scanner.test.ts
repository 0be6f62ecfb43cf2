/**
 * GET /v1/arbitrage (prices/scanner.ts): it lists exactly the verified identity and complement pairs
 * whose live books pay after fees at min_size or more — each checked against GET /v1/prices/compare
 * for its event — best first; never a candidate, subset or overlap pair, nor a pair without live
 * books (counted, and asked of the feed); the filters; the errors; and no venue call on a scan.
 *
 * The venues are TestVenues with live feeds, the matcher is scripted (test/matching/setup.ts), and
 * every book is pushed through the feed as a venue's WebSocket would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Opportunity, ScanMetaView } from "../../src/prices/scanner-schemas";
import type { BookLevel, OrderBook, VenueEvent, VenueId, VenueMarket } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { keys, type MatchingTestApp, matchingApp, pairRow, SURE, UNSURE } from "../matching/setup";
import { bearer, expectError } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";

const P = (key: string) => `polymarket:${key}`;
const K = (key: string) => `kalshi:${key}`;

/** Asks as [price, contracts]; the bids are what the other outcome's asks imply (1 − price). */
function book(
  marketId: string,
  yesAsks: Array<[number, number]>,
  noAsks: Array<[number, number]>,
): OrderBook {
  const levels = (asks: Array<[number, number]>): BookLevel[] =>
    asks.map(([price, size]) => ({ price: Math.round(price * 1e6), size: size * 1e6 }));
  const bids = (asks: Array<[number, number]>): BookLevel[] =>
    levels(asks.map(([price, size]) => [1 - price, size])).reverse();
  return {
    marketId,
    yes: { bids: bids(noAsks), asks: levels(yesAsks) },
    no: { bids: bids(yesAsks), asks: levels(noAsks) },
    timestamp: `2026-11-22T12:00:00.${String(marketId.length).padStart(3, "0")}Z`,
    sequence: null,
  };
}

function venueEvent(venue: VenueId, key: string, category: string, marketIds: string[]): VenueEvent {
  return {
    id: `${venue}:${key}`,
    venue,
    venueEventId: key,
    title: `${key} event`,
    category,
    marketIds,
    closeTime: null,
    url: null,
    mutuallyExclusive: false,
  };
}

/**
 * Polymarket PA–PH and Kalshi KA–KH, KX. The pairs (market A is Polymarket's):
 * A identity verified, pays; B complement verified, pays most; C identity verified, no edge;
 * D identity candidate, pays a lot; X (PA–KX) identity candidate inside A's event, pays a lot;
 * E subset and F overlap, verified by an operator, pay a lot; G identity verified, pays only on its
 * first 5 contracts; H identity verified, pays, but KH (the least traded) is not on the feed at first.
 */
function venues(): { polymarket: TestVenue; kalshi: TestVenue } {
  const polymarket = new TestVenue("polymarket");
  const kalshi = new TestVenue("kalshi");
  const market = (venue: VenueId, key: string, over: Partial<VenueMarket> = {}) =>
    testMarket(venue, key, {
      title: `Question ${key.slice(1)}?`,
      question: `Question ${key.slice(1)}?`,
      ...over,
    });
  polymarket.set(
    market("polymarket", "PA", { eventId: P("ECON") }),
    market("polymarket", "PB", { eventId: P("SPORT") }),
    ...["PC", "PD", "PE", "PF"].map((key) => market("polymarket", key)),
    market("polymarket", "PG", { eventId: P("ECON") }),
    market("polymarket", "PH", { eventId: P("ECON") }),
  );
  kalshi.set(
    ...["KA", "KB", "KC", "KD", "KE", "KF", "KG", "KX"].map((key) => market("kalshi", key)),
    market("kalshi", "KH", { volume24h: 1_000_000 }),
  );
  polymarket.events = [
    venueEvent("polymarket", "ECON", "Economics", [P("PA"), P("PG"), P("PH")]),
    venueEvent("polymarket", "SPORT", "Sports", [P("PB")]),
  ];
  return { polymarket, kalshi };
}

function pushBooks(polymarket: TestVenue, kalshi: TestVenue): void {
  // A: YES on PA at 0.40 + NO on KA at 0.50, 100 deep.
  polymarket.emit({ kind: "book", book: book(P("PA"), [[0.4, 100]], [[0.62, 100]]) });
  kalshi.emit({ kind: "book", book: book(K("KA"), [[0.52, 100]], [[0.5, 100]]) });
  // B (complement: YES + YES): 0.30 + 0.50, 200 deep.
  polymarket.emit({ kind: "book", book: book(P("PB"), [[0.3, 200]], [[0.72, 200]]) });
  kalshi.emit({ kind: "book", book: book(K("KB"), [[0.5, 200]], [[0.52, 200]]) });
  // C: 0.60 + 0.50 one way, 0.45 + 0.60 the other.
  polymarket.emit({ kind: "book", book: book(P("PC"), [[0.6, 100]], [[0.45, 100]]) });
  kalshi.emit({ kind: "book", book: book(K("KC"), [[0.6, 100]], [[0.5, 100]]) });
  // D, E, F, X: 0.20 + 0.20, far more than any fee.
  for (const key of ["D", "E", "F"]) {
    polymarket.emit({ kind: "book", book: book(P(`P${key}`), [[0.2, 100]], [[0.85, 100]]) });
    kalshi.emit({ kind: "book", book: book(K(`K${key}`), [[0.85, 100]], [[0.2, 100]]) });
  }
  kalshi.emit({ kind: "book", book: book(K("KX"), [[0.95, 100]], [[0.1, 100]]) });
  // G: YES on PG at 0.40 for 5 contracts, then 0.99 (each pair past 5 loses 49 cents); NO on KG at 0.50.
  polymarket.emit({
    kind: "book",
    book: book(
      P("PG"),
      [
        [0.4, 5],
        [0.99, 100],
      ],
      [[0.62, 100]],
    ),
  });
  kalshi.emit({ kind: "book", book: book(K("KG"), [[0.55, 100]], [[0.5, 100]]) });
  // H: 0.45 + 0.50, 50 deep (KH's book arrives in the test that feeds it).
  polymarket.emit({ kind: "book", book: book(P("PH"), [[0.45, 50]], [[0.6, 50]]) });
}

const khBook = () => book(K("KH"), [[0.55, 50]], [[0.5, 50]]);

describe.each(STORE_BACKENDS)("GET /v1/arbitrage on %s", (store) => {
  let t: MatchingTestApp;
  let polymarket: TestVenue;
  let kalshi: TestVenue;
  let read: string;
  const match: Record<string, string> = {};

  const scan = async (query = "") => {
    const response = await t.app.inject({
      method: "GET",
      url: `/v1/arbitrage${query}`,
      headers: bearer(read),
    });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body.success).toBe(true);
    return body as { data: Opportunity[]; meta: ScanMetaView };
  };
  const compare = async (eventId: string) => {
    const response = await t.app.inject({
      method: "GET",
      url: `/v1/prices/compare?event_id=${encodeURIComponent(eventId)}`,
      headers: bearer(read),
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data;
  };
  const venueCalls = () => polymarket.calls.length + kalshi.calls.length;
  const ids = (items: Opportunity[]) => items.map((i) => i.match_id);

  beforeAll(async () => {
    ({ polymarket, kalshi } = venues());
    // Eight markets a venue on the feed: KH, Kalshi's ninth and least traded, is left off.
    t = await matchingApp({
      store,
      venues: new Map<VenueId, Venue>([
        ["polymarket", polymarket],
        ["kalshi", kalshi],
      ]),
      config: { feedMaxMarketsPerVenue: 8 },
    });
    const script = t.matcher;
    script.script(P("PA"), K("KA"), SURE);
    script.script(P("PB"), K("KB"), {
      relation: "complement",
      confidence: 0.97,
      caveats: ["A tie settles No on one venue only"],
    });
    script.script(P("PC"), K("KC"), SURE);
    script.script(P("PD"), K("KD"), UNSURE);
    script.script(P("PA"), K("KX"), UNSURE);
    script.script(P("PE"), K("KE"), { relation: "subset", confidence: 0.97 });
    script.script(P("PF"), K("KF"), { relation: "overlap", confidence: 0.97 });
    script.script(P("PG"), K("KG"), SURE);
    script.script(P("PH"), K("KH"), SURE);
    await t.sync();
    for (const key of ["A", "B", "C", "D", "E", "F", "G", "H", "X"]) {
      const row = await pairRow(t, P(`P${key === "X" ? "A" : key}`), K(`K${key}`));
      if (!row) throw new Error(`pair ${key} was not stored`);
      match[key] = row.id;
    }
    const made = await keys(t.app);
    read = made.read;
    const operator = { accountId: made.accountId, keyId: null };
    await t.services.matching.verify(match["E"]!, { relation: "subset" }, operator);
    await t.services.matching.verify(match["F"]!, { relation: "overlap" }, operator);
    expect(kalshi.subscribed.has(K("KA"))).toBe(true);
    expect(kalshi.subscribed.has(K("KH"))).toBe(false);
    pushBooks(polymarket, kalshi);
  });
  afterAll(() => t?.close());

  it("lists exactly the verified pairs that pay at min_size, as compare prices each, best first", async () => {
    const before = venueCalls();
    const { data, meta } = await scan();
    expect(venueCalls()).toBe(before);

    // A, B, C, G and H are the verified identity or complement pairs; H's Kalshi book is not live.
    expect(meta).toEqual({
      pairs: 5,
      priced: 4,
      unpriced: 1,
      total: 2,
      limit: 50,
      min_size: 10,
      pairs_loaded_at: expect.any(String),
    });
    expect(ids(data)).toEqual([match["B"], match["A"]]);

    // Each verified pair priced on live books: listed exactly when compare calls it an opportunity.
    const expected: Array<{ id: string; profit: number }> = [];
    const CATEGORY: Record<string, string | null> = { A: "Economics", B: "Sports", C: null, G: "Economics" };
    for (const key of ["A", "B", "C", "G"]) {
      const eventId = (await pairRow(t, P(`P${key}`), K(`K${key}`)))!.event_id!;
      const comparison = await compare(eventId);
      const arb = comparison.arbitrage;
      expect(arb.match_id).toBe(match[key]);
      if (!comparison.spread_analysis.arbitrage_opportunity) {
        expect(
          data.some((item) => item.match_id === match[key]),
          key,
        ).toBe(false);
        continue;
      }
      expected.push({ id: match[key]!, profit: arb.best_at_min_size.profit });
      const item = data.find((i) => i.match_id === match[key])!;
      expect(item, key).toBeDefined();
      expect(item.event).toEqual({ id: eventId, title: comparison.title, category: CATEGORY[key] });
      expect(item).toMatchObject({
        relation: arb.relation,
        polarity: arb.polarity,
        confidence: arb.confidence,
        caveats: arb.caveats,
        min_size: arb.min_size,
        depth: arb.depth,
        edge_first_contract: arb.edge_first_contract,
        // The size an opportunity is judged on: here the most profitable size overall too.
        size: arb.size,
        cost: arb.cost,
        fees: arb.fees,
        payout: arb.payout,
        profit: arb.profit,
        avg_edge: arb.avg_edge,
        legs: arb.legs,
      });
      expect(arb.best_at_min_size).toEqual({
        size: item.size,
        profit: item.profit,
        avg_edge: item.avg_edge,
      });
      // Market A then B, as the legs; compare keys its platforms by venue.
      expect(item.markets).toEqual(
        arb.legs.map((leg: { platform: string; market_id: string }) => ({
          market_id: leg.market_id,
          platform: leg.platform,
          title: comparison.platforms[leg.platform].title,
          book_timestamp: comparison.platforms[leg.platform].book_timestamp,
        })),
      );
    }
    expect(expected.map((e) => e.id)).toEqual([match["A"], match["B"]]);
    expect(ids(data)).toEqual(expected.sort((x, y) => y.profit - x.profit).map((e) => e.id));
    expect(data[0]!.profit).toBeGreaterThan(data[1]!.profit);
    // Complement legs are YES + YES; identity YES + NO, in compare's words.
    expect(data[0]!.legs.map((l: { outcome: string }) => l.outcome)).toEqual(["yes", "yes"]);
    expect(data[1]!.legs.map((l: { outcome: string }) => l.outcome)).toEqual(["yes", "no"]);
    expect(data[0]!.caveats).toEqual(["A tie settles No on one venue only"]);
  });

  it("never lists a candidate, subset or overlap pair, however large its edge", async () => {
    const { data } = await scan("?min_size=1");
    for (const key of ["D", "X", "E", "F"]) expect(ids(data), key).not.toContain(match[key]);
    // The books of those pairs do pay: compare prices the candidate D, and says it is not verified.
    const candidate = await compare((await pairRow(t, P("PD"), K("KD")))!.event_id!);
    expect(candidate.arbitrage.best_at_min_size.profit).toBeGreaterThan(data[0]!.profit);
    expect(candidate.arbitrage_reason.code).toBe("pair_not_verified");
  });

  it("prices a pair at the best size of at least min_size: G pays on its first 5 contracts only", async () => {
    const comparison = await compare((await pairRow(t, P("PG"), K("KG")))!.event_id!);
    expect(comparison.arbitrage_reason.code).toBe("below_min_size");
    expect(comparison.arbitrage.size).toBe(5);

    const { data, meta } = await scan("?min_size=1");
    expect(meta.min_size).toBe(1);
    const g = data.find((i) => i.match_id === match["G"])!;
    // Below compare's minimum the most profitable size is compare's own `size` figures.
    expect(g).toMatchObject({
      size: comparison.arbitrage.size,
      cost: comparison.arbitrage.cost,
      fees: comparison.arbitrage.fees,
      profit: comparison.arbitrage.profit,
      avg_edge: comparison.arbitrage.avg_edge,
      legs: comparison.arbitrage.legs,
      min_size: 1,
    });
    expect(ids((await scan("?min_size=5")).data)).toContain(match["G"]);
    expect(ids((await scan("?min_size=6")).data)).not.toContain(match["G"]);
    // No book holds 1,000 hedged pairs.
    expect((await scan("?min_size=1000")).data).toEqual([]);
  });

  it("filters by profit, edge, venue and category, and cuts at limit", async () => {
    const all = (await scan()).data;
    const [best, second] = all as [Opportunity, Opportunity];

    const byProfit = await scan(`?min_profit=${best.profit}`);
    expect(ids(byProfit.data)).toEqual([best.match_id]);
    expect(byProfit.meta.total).toBe(1);
    expect(ids((await scan(`?min_profit=${best.profit + 0.01}`)).data)).toEqual([]);

    const [higher, lower] = [best, second].sort((x, y) => y.avg_edge - x.avg_edge);
    expect(higher!.avg_edge).toBeGreaterThan(lower!.avg_edge);
    expect(ids((await scan(`?min_edge=${higher!.avg_edge}`)).data)).toEqual([higher!.match_id]);
    expect(ids((await scan(`?min_edge=${lower!.avg_edge}`)).data)).toEqual(ids(all));

    // Every pair here spans both venues.
    for (const venue of ["polymarket", "kalshi"]) expect((await scan(`?venue=${venue}`)).data).toEqual(all);

    const economics = await scan("?category=ECONOMICS");
    expect(ids(economics.data)).toEqual([match["A"]]);
    // A, G and H are in the Economics event of Polymarket (their events' lead market).
    expect(economics.meta.pairs).toBe(3);
    const none = await scan("?category=Weather");
    expect(none.data).toEqual([]);
    expect(none.meta.pairs).toBe(0);

    const one = await scan("?limit=1");
    expect(ids(one.data)).toEqual([best.match_id]);
    expect(one.meta).toMatchObject({ total: 2, limit: 1 });
  });

  it("answers a bad filter with a 400 naming the field", async () => {
    const bad = async (query: string, field: string) => {
      const response = await t.app.inject({
        method: "GET",
        url: `/v1/arbitrage?${query}`,
        headers: bearer(read),
      });
      const error = expectError(response, 400, "VALIDATION_ERROR");
      expect(Object.keys((error.details as { fields: object }).fields), query).toContain(field);
    };
    await bad("min_profit=-1", "query.min_profit");
    await bad("min_profit=lots", "query.min_profit");
    await bad("min_edge=1.5", "query.min_edge");
    await bad("min_edge=-0.01", "query.min_edge");
    await bad("venue=nyse", "query.venue");
    await bad("category=", "query.category");
    await bad("limit=0", "query.limit");
    await bad("limit=101", "query.limit");
    await bad("min_size=0", "query.min_size");
    await bad("min_size=2.5", "query.min_size");
    await bad("min_size=Infinity", "query.min_size");
    await bad("sort=profit", "query.sort");
  });

  it("takes a read key and refuses a request without one", async () => {
    const response = await t.app.inject({ method: "GET", url: "/v1/arbitrage" });
    expectError(response, 401, "UNAUTHORIZED");
  });

  it("asks the feed for the markets of an unpriced pair and prices it once their books are live", async () => {
    // The first scan asked for KH: the feed carries it now, no venue was called.
    expect(kalshi.subscribed.has(K("KH"))).toBe(true);
    const before = venueCalls();
    const waiting = await scan();
    expect(waiting.meta).toMatchObject({ pairs: 5, priced: 4, unpriced: 1 });

    kalshi.emit({ kind: "book", book: khBook() });
    const { data, meta } = await scan();
    expect(venueCalls()).toBe(before);
    expect(meta).toMatchObject({ pairs: 5, priced: 5, unpriced: 0, total: 3 });
    const h = data.find((i) => i.match_id === match["H"]);
    const comparison = await compare((await pairRow(t, P("PH"), K("KH")))!.event_id!);
    expect(comparison.spread_analysis.arbitrage_opportunity).toBe(true);
    expect(h).toMatchObject({
      size: comparison.arbitrage.best_at_min_size.size,
      profit: comparison.arbitrage.best_at_min_size.profit,
      markets: [
        { market_id: P("PH"), book_timestamp: comparison.platforms.polymarket.book_timestamp },
        { market_id: K("KH"), book_timestamp: khBook().timestamp },
      ],
    });
  });

  it("follows the books: a pair whose edge is taken leaves the list at once", async () => {
    kalshi.emit({ kind: "book", book: book(K("KA"), [[0.52, 100]], [[0.65, 100]]) });
    expect(ids((await scan()).data)).not.toContain(match["A"]);
    const comparison = await compare((await pairRow(t, P("PA"), K("KA")))!.event_id!);
    expect(comparison.spread_analysis.arbitrage_opportunity).toBe(false);
    kalshi.emit({ kind: "book", book: book(K("KA"), [[0.52, 100]], [[0.5, 100]]) });
    expect(ids((await scan()).data)).toContain(match["A"]);
  });

  it("drops a rejected pair once the list of pairs is read again (at most 5 s later)", async () => {
    const made = await keys(t.app);
    await t.services.matching.reject(
      match["B"]!,
      { reason: "other" },
      { accountId: made.accountId, keyId: null },
    );
    t.clock.advance(5_000);
    const { data, meta } = await scan();
    expect(ids(data)).not.toContain(match["B"]);
    expect(meta.pairs).toBe(4);
  });
});
