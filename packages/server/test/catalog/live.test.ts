/** Live prices: feed events fold into the catalog's last-seen prices, written in batches. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, signup, type TestApp } from "../support/app";
import { TestVenue, testMarket } from "../support/fake-venue";

describe("live markets", () => {
  let t: TestApp;
  let key: string;
  const kalshi = new TestVenue("kalshi");

  beforeAll(async () => {
    kalshi.set(
      testMarket("kalshi", "A", { volume24h: 10 }),
      testMarket("kalshi", "B", { volume24h: 30 }),
      testMarket("kalshi", "C", { volume24h: 20 }),
    );
    t = await createTestApp({
      venues: new Map<VenueId, Venue>([["kalshi", kalshi]]),
      config: { feedMaxMarketsPerVenue: 2 },
    });
    key = (await createKey(t.app, (await signup(t.app)).session, { type: "read_only" })).key;
    await t.services.catalog.syncVenue("kalshi");
  });
  afterAll(() => t.close());

  it("subscribes the most traded open markets after a sync, up to the cap", () => {
    expect([...kalshi.subscribed].sort()).toEqual(["kalshi:B", "kalshi:C"]);
  });

  it("shows feed prices in the catalog after a flush, and feed state in venue health", async () => {
    kalshi.emit({
      kind: "quote",
      marketId: "kalshi:B",
      bestBid: 610_000,
      bestAsk: 630_000,
      lastPrice: 620_000,
      timestamp: "t",
    });
    expect(await t.services.live.flush()).toBe(1);
    const market = (
      await t.app.inject({ method: "GET", url: "/v1/markets/kalshi:B", headers: bearer(key) })
    ).json().data;
    expect(market).toMatchObject({ best_bid: 0.61, best_ask: 0.63, last_price: 0.62 });

    const health = async () =>
      (await t.app.inject({ method: "GET", url: "/v1/venues", headers: bearer(key) })).json().data[0].health
        .feed_connected;
    expect(await health()).toBe(true);
    kalshi.emit({ kind: "connection", state: "disconnected", reason: "socket closed" });
    expect(await health()).toBe(false);
    expect(await t.services.live.flush()).toBe(0);
  });
});
