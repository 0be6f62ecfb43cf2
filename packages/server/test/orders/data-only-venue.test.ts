/**
 * A venue added for market data only (no trading methods): its markets are listed and priced, the
 * sandbox trades against its books, and a live order on it is refused with VENUE_NOT_LINKED before
 * anything is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VenueId } from "../../src/venues/model";
import { canTrade, type MarketDataVenue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, expectError, signup, type TestApp } from "../support/app";
import { TestVenue, testMarket } from "../support/fake-venue";
import { book, get, place, placed, setBook } from "./setup";

/** Only the market-data half of a venue, as a newly added venue would start. */
function dataOnly(venue: TestVenue): MarketDataVenue {
  return {
    id: venue.id,
    capabilities: venue.capabilities,
    listEvents: venue.listEvents.bind(venue),
    listMarkets: venue.listMarkets.bind(venue),
    getMarket: venue.getMarket.bind(venue),
    getOrderBook: venue.getOrderBook.bind(venue),
    getPriceHistory: venue.getPriceHistory.bind(venue),
    subscribe: venue.subscribe.bind(venue),
  };
}

describe("a venue that serves market data only", () => {
  let t: TestApp;
  let kalshi: TestVenue;
  let sandboxKey: string;
  let liveKey: string;

  beforeAll(async () => {
    kalshi = new TestVenue("kalshi");
    kalshi.set(testMarket("kalshi", "K"));
    const venue = dataOnly(kalshi);
    expect(canTrade(venue)).toBe(false);
    expect(canTrade(kalshi)).toBe(true);
    t = await createTestApp({ venues: new Map<VenueId, MarketDataVenue>([["kalshi", venue]]) });
    await t.services.catalog.syncVenue("kalshi");
    const { session } = await signup(t.app);
    sandboxKey = (await createKey(t.app, session, { type: "trading", environment: "sandbox" })).key;
    liveKey = (await createKey(t.app, session, { type: "trading", environment: "live" })).key;
  });

  afterAll(async () => {
    await t.close();
  });

  it("lists its markets", async () => {
    const response = await t.app.inject({
      method: "GET",
      url: "/v1/markets/kalshi:K",
      headers: bearer(sandboxKey),
    });
    expect(response.statusCode).toBe(200);
  });

  it("trades in the sandbox against its books", async () => {
    setBook(kalshi, book("kalshi:K", { asks: [[0.4, 50]] }));
    const order = await placed(t.app, sandboxKey, {
      market_id: "kalshi:K",
      side: "buy",
      price: 0.4,
      amount: 5,
    });
    expect(order).toMatchObject({ status: "filled", filled_amount: 5 });
  });

  it("refuses a live order with VENUE_NOT_LINKED and stores nothing", async () => {
    const error = expectError(
      await place(t.app, liveKey, { market_id: "kalshi:K", side: "buy", price: 0.3, amount: 5 }),
      409,
      "VENUE_NOT_LINKED",
    );
    expect(error.details).toMatchObject({ venue: "kalshi" });
    expect((await get(t.app, liveKey, "/v1/orders?status=all")).data).toEqual([]);
  });
});
