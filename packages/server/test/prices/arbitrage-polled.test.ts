/**
 * GET /v1/arbitrage with a venue that has no live feed (Kalshi without a feed key): the scan watches
 * the pair's market, the REST poller brings its book, and the next scan prices the pair on it, as
 * compare would; a polled book gone stale is not priced; a scan itself never calls a venue; and the
 * markets one scan watches per venue are bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PollAllowance } from "../../src/prices/scanner";
import type { MarketSummary } from "../../src/prices/service";
import type { BookLevel, OrderBook, VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { keys, type MatchingTestApp, matchingApp, pairRow, SURE } from "../matching/setup";
import { bearer } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";

const PA = "polymarket:PA";
const KA = "kalshi:KA";

/** YES and NO asks as [price, contracts]; each side's bids are the other outcome's asks mirrored. */
function book(marketId: string, yesAsk: [number, number], noAsk: [number, number], at: string): OrderBook {
  const level = ([price, size]: [number, number]): BookLevel => ({
    price: Math.round(price * 1e6),
    size: size * 1e6,
  });
  const mirrored = ([price, size]: [number, number]): BookLevel => level([1 - price, size]);
  return {
    marketId,
    yes: { bids: [mirrored(noAsk)], asks: [level(yesAsk)] },
    no: { bids: [mirrored(yesAsk)], asks: [level(noAsk)] },
    timestamp: at,
    sequence: null,
  };
}

describe.each(STORE_BACKENDS)("GET /v1/arbitrage without a live feed on %s", (store) => {
  let t: MatchingTestApp;
  let read: string;
  const polymarket = new TestVenue("polymarket");
  const kalshi = new TestVenue("kalshi");

  beforeAll(async () => {
    polymarket.set(testMarket("polymarket", "PA", { title: "Question A?", question: "Question A?" }));
    kalshi.set(testMarket("kalshi", "KA", { title: "Question A?", question: "Question A?" }));
    // Kalshi's WebSocket needs a key: without one the adapter offers no feed.
    (kalshi.capabilities.supports as { feed: boolean }).feed = false;
    t = await matchingApp({
      store,
      venues: new Map<VenueId, Venue>([
        ["polymarket", polymarket],
        ["kalshi", kalshi],
      ]),
    });
    t.matcher.script(PA, KA, SURE);
    await t.sync();
    read = (await keys(t.app)).read;
    // YES on PA at 0.40 + NO on KA at 0.50: 0.10 a contract before fees, 100 deep.
    polymarket.emit({ kind: "book", book: book(PA, [0.4, 100], [0.62, 100], "2026-11-22T12:00:00.000Z") });
    kalshi.books.set(KA, book(KA, [0.52, 100], [0.5, 100], "2026-11-22T12:00:00.000Z"));
  });
  afterAll(() => t?.close());

  const scan = async () => {
    const response = await t.app.inject({ method: "GET", url: "/v1/arbitrage", headers: bearer(read) });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as {
      data: Array<{ match_id: string; profit: number; size: number }>;
      meta: object;
    };
  };
  const kalshiBookCalls = () => kalshi.calls.filter((call) => call.startsWith("getOrderBook")).length;

  it("watches the unfed market, prices the pair on its polled book, and stops at a stale one", async () => {
    const before = kalshiBookCalls();
    expect((await scan()).meta).toMatchObject({ pairs: 1, priced: 0, unpriced: 1 });
    expect(kalshiBookCalls()).toBe(before); // the scan asked no venue

    expect(await t.services.prices.pollOnce()).toBe(1);
    expect(kalshiBookCalls()).toBe(before + 1);
    const { data, meta } = await scan();
    expect(meta).toMatchObject({ pairs: 1, priced: 1, unpriced: 0, total: 1 });
    const compared = await t.app.inject({
      method: "GET",
      url: `/v1/prices/compare?event_id=${encodeURIComponent((await pairRow(t, PA, KA))!.event_id!)}`,
      headers: bearer(read),
    });
    const arbitrage = compared.json().data.arbitrage;
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({ size: arbitrage.size, profit: arbitrage.profit });
    expect(kalshiBookCalls()).toBe(before + 2); // compare read Kalshi's REST book itself

    // Thirty seconds without a poll: the book is too old to trade on.
    t.clock.advance(30_001);
    expect((await scan()).meta).toMatchObject({ priced: 0, unpriced: 1 });
    await t.services.prices.pollOnce();
    expect((await scan()).meta).toMatchObject({ priced: 1, unpriced: 0 });
  });
});

describe("PollAllowance", () => {
  const market = (venue: string, id: string) => ({ id: `${venue}:${id}`, venue }) as unknown as MarketSummary;

  it("takes at most its limit of markets per venue, each once", () => {
    const allowance = new PollAllowance(2);
    expect(allowance.add(market("kalshi", "A"))).toBe(true);
    expect(allowance.add(market("kalshi", "A"))).toBe(true);
    expect(allowance.add(market("kalshi", "B"))).toBe(true);
    expect(allowance.add(market("kalshi", "C"))).toBe(false);
    expect(allowance.add(market("polymarket", "C"))).toBe(true);
    expect(allowance.markets.map((m) => m.id)).toEqual(["kalshi:A", "kalshi:B", "polymarket:C"]);
  });
});
