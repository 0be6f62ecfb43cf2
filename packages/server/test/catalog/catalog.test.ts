/** The catalog: sync from venues, status tracking, venue health, and the market routes. */
import { kalshiSchedule } from "@crossbook/fees";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MARKET_STATUS_CHANNEL, type MarketStatusChange } from "../../src/catalog/service";
import { VenueError } from "../../src/venues/errors";
import type { VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, expectError, signup, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";

describe.each(STORE_BACKENDS)("catalog on %s", (store) => {
  let t: TestApp;
  let key: string;
  const poly = new TestVenue("polymarket");
  const kalshi = new TestVenue("kalshi");
  const changes: MarketStatusChange[] = [];

  beforeAll(async () => {
    poly.set(
      testMarket("polymarket", "0xaaa", {
        title: "Fed cuts rates in December",
        eventId: "polymarket:fed-dec",
      }),
      testMarket("polymarket", "0xbbb", {
        title: "Bitcoin above 100k",
        question: "Will BTC be above $100,000?",
      }),
      testMarket("polymarket", "0xccc", { title: "Snow in London", status: "closed" }),
    );
    kalshi.set(
      testMarket("kalshi", "KXFED-26DEC-C25", {
        title: "Fed cut 25bps December",
        eventId: "kalshi:KXFED-26DEC",
      }),
      testMarket("kalshi", "KXBTC-26DEC31-T100000", {
        title: "Bitcoin above $100,000 at year end",
        lastPrice: 550_000,
      }),
    );
    const venues = new Map<VenueId, Venue>([
      ["polymarket", poly],
      ["kalshi", kalshi],
    ]);
    t = await createTestApp({ store, venues });
    await t.runtime.bus.subscribe(MARKET_STATUS_CHANNEL, (m) => changes.push(m as MarketStatusChange));
    const { session } = await signup(t.app);
    key = (await createKey(t.app, session, { type: "read_only" })).key;
    await t.services.catalog.syncVenue("polymarket");
    await t.services.catalog.syncVenue("kalshi");
  });
  afterAll(() => t.close());

  const get = (url: string) => t.app.inject({ method: "GET", url, headers: bearer(key) });

  it("lists open markets from every venue with page meta, numbers at the edge", async () => {
    const response = await get("/v1/markets");
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.meta).toEqual({ page: 1, limit: 50, total: 4 });
    const btc = body.data.find((m: { id: string }) => m.id === "kalshi:KXBTC-26DEC31-T100000");
    expect(btc).toMatchObject({
      venue: "kalshi",
      venue_market_id: "KXBTC-26DEC31-T100000",
      status: "open",
      last_price: 0.55,
      best_bid: 0.41,
      best_ask: 0.43,
      tick_size: 0.01,
      min_size: 1,
      volume: 5000,
      outcomes: {
        yes: { label: "Yes", token_id: "KXBTC-26DEC31-T100000-yes" },
        no: { label: "No", token_id: "KXBTC-26DEC31-T100000-no" },
      },
    });
  });

  it("filters by venue, status, event and words, and paginates", async () => {
    const ids = async (url: string) => (await get(url)).json().data.map((m: { id: string }) => m.id);
    expect(await ids("/v1/markets?venue=kalshi")).toEqual([
      "kalshi:KXBTC-26DEC31-T100000",
      "kalshi:KXFED-26DEC-C25",
    ]);
    // Only open markets are enumerated; one already closed when first listed is never stored.
    expect(await ids("/v1/markets?status=closed")).toEqual([]);
    expect((await ids("/v1/markets?status=all")).length).toBe(4);
    expect(await ids("/v1/markets?event_id=kalshi:KXFED-26DEC")).toEqual(["kalshi:KXFED-26DEC-C25"]);
    expect(await ids("/v1/markets?q=BITCOIN%20100")).toEqual([
      "kalshi:KXBTC-26DEC31-T100000",
      "polymarket:0xbbb",
    ]);
    expect(await ids("/v1/markets?q=%25")).toHaveLength(4);
    const page2 = (await get("/v1/markets?limit=3&offset=3")).json();
    expect(page2.meta).toEqual({ page: 2, limit: 3, total: 4 });
    expect(page2.data).toHaveLength(1);
  });

  it("rejects bad filters with field messages", async () => {
    expect(
      expectError(await get("/v1/markets?venue=manifold"), 400, "VALIDATION_ERROR").details?.["fields"],
    ).toHaveProperty("query.venue");
    expect(
      expectError(await get("/v1/markets?limit=101"), 400, "VALIDATION_ERROR").details?.["fields"],
    ).toHaveProperty("query.limit");
  });

  it("returns one market, or 404 MARKET_NOT_FOUND", async () => {
    expect((await get("/v1/markets/polymarket:0xaaa")).json().data.title).toBe("Fed cuts rates in December");
    const missing = expectError(await get("/v1/markets/kalshi:NOPE"), 404, "MARKET_NOT_FOUND");
    expect(missing.details).toEqual({ market_id: "kalshi:NOPE" });
  });

  it("tracks a market that leaves the open listing and resolves", async () => {
    poly.set(
      testMarket("polymarket", "0xaaa", {
        status: "resolved",
        resolution: "yes",
        title: "Fed cuts rates in December",
      }),
    );
    await t.services.catalog.syncVenue("polymarket");
    expect((await get("/v1/markets/polymarket:0xaaa")).json().data).toMatchObject({
      status: "resolved",
      resolution: "yes",
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(changes).toContainEqual({
      market_id: "polymarket:0xaaa",
      venue: "polymarket",
      previous: "open",
      status: "resolved",
      resolution: "yes",
    });

    poly.markets.delete("polymarket:0xbbb");
    await t.services.catalog.syncVenue("polymarket");
    expect((await get("/v1/markets/polymarket:0xbbb")).json().data.status).toBe("closed");
  });

  it("marks a failing venue unreachable while the other keeps working, then recovers", async () => {
    kalshi.failWith = new VenueError("kalshi", "unavailable", "connect ECONNREFUSED");
    await t.services.catalog.syncVenue("kalshi");
    const venues = (await get("/v1/venues")).json().data;
    const k = venues.find((v: { id: string }) => v.id === "kalshi");
    const p = venues.find((v: { id: string }) => v.id === "polymarket");
    expect(k.health).toMatchObject({
      status: "unreachable",
      consecutive_failures: 1,
      last_error: "unavailable: connect ECONNREFUSED",
    });
    expect(p.health.status).toBe("ok");
    expect((await get("/v1/markets?venue=kalshi")).json().data).toHaveLength(2);

    kalshi.failWith = undefined;
    await t.services.catalog.syncVenue("kalshi");
    const recovered = (await get("/v1/venues")).json().data.find((v: { id: string }) => v.id === "kalshi");
    expect(recovered.health).toMatchObject({ status: "ok", consecutive_failures: 0, last_sync_markets: 2 });
  });

  it("keeps a market's known fee schedule when a later listing does not say it", async () => {
    const id = "kalshi:KXFED-26DEC-C25";
    const market = kalshi.markets.get(id)!;
    kalshi.set({ ...market, fees: kalshiSchedule("quadratic_with_maker_fees", 1) });
    await t.services.catalog.syncVenue("kalshi");
    const fees = () => get(`/v1/markets/${id}`).then((r) => r.json().data.fees);
    expect(await fees()).toMatchObject({
      model: "kalshi",
      fee_type: "quadratic_with_maker_fees",
      maker_rate: 0.0175,
    });
    // Its series could not be read this time: the schedule stays.
    kalshi.set({ ...market, fees: null });
    await t.services.catalog.syncVenue("kalshi");
    expect(await fees()).toMatchObject({ fee_type: "quadratic_with_maker_fees" });
    // A market never given a schedule shows none.
    expect((await get("/v1/markets/kalshi:KXBTC-26DEC31-T100000")).json().data.fees).toBeNull();
  });

  it("describes each venue's capabilities, URLs and limits", async () => {
    const venues = (await get("/v1/venues")).json().data;
    expect(venues.map((v: { id: string }) => v.id)).toEqual(["polymarket", "kalshi"]);
    expect(venues[1]).toMatchObject({
      name: "Kalshi",
      capabilities: { order_book: true, feed: true, native_no_book: false },
      rate_limits: { read: { requests: 100, window_ms: 1000 } },
      fees: { model: "kalshi" },
    });
  });
});
