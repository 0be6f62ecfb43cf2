import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KalshiFake, startKalshiFake } from "../src/kalshi/index";
import { DEFAULT_WORLD, seedFor } from "../src/world/seed";
import { bigWorld, call, type Wire } from "./kalshi-helpers";

const LEGACY_MARKET_FIELDS = [
  "yes_bid",
  "yes_ask",
  "no_bid",
  "no_ask",
  "last_price",
  "volume",
  "volume_24h",
  "open_interest",
  "liquidity",
];

describe("fake Kalshi discovery (default world)", () => {
  let fake: KalshiFake;
  beforeAll(async () => {
    fake = await startKalshiFake({ seed: 7 });
  });
  afterAll(() => fake.close());

  it("serves every seeded Kalshi market with fixed-point fields and no legacy cents", async () => {
    const res = await call(fake.apiUrl, "GET", "/markets?mve_filter=exclude&limit=1000");
    expect(res.status).toBe(200);
    expect(res.body.cursor).toBe("");
    const tickers = res.body.markets.map((m: Wire) => m.ticker).sort();
    expect(tickers).toEqual(
      seedFor("kalshi", DEFAULT_WORLD)
        .map((s) => s.key)
        .sort(),
    );
    for (const m of res.body.markets) {
      for (const f of LEGACY_MARKET_FIELDS) expect(m).not.toHaveProperty(f);
      expect(m.yes_bid_dollars).toMatch(/^\d\.\d{4}$/);
      expect(m.volume_fp).toMatch(/^\d+\.\d{2}$/);
      expect(m.liquidity_dollars).toBe("0.0000");
      expect(m.price_ranges[0]).toHaveProperty("step");
      // Removed from the API on 2026-07-09 (VENUES-AUDIT #14).
      expect(m).not.toHaveProperty("fractional_trading_enabled");
      expect(m).not.toHaveProperty("response_price_units");
    }
    const fed = res.body.markets.find((m: Wire) => m.ticker === "KXFEDDECISION-26DEC-C25");
    expect(fed.status).toBe("active");
    expect(fed.price_level_structure).toBe("linear_cent");
    const settled = res.body.markets.find((m: Wire) => m.ticker === "KXCPIYOY-26OCT-T3.0");
    expect(settled.status).toBe("finalized");
    expect(settled.result).toBe("yes");
  });

  it("lists combo (MVE) markets first and removes them with mve_filter=exclude", async () => {
    const all = await call(fake.apiUrl, "GET", "/markets?status=open&limit=1000");
    const combos = all.body.markets.filter((m: Wire) => m.mve_collection_ticker);
    expect(combos.length).toBeGreaterThanOrEqual(2);
    expect(all.body.markets[0].mve_collection_ticker).toBeTruthy();
    for (const c of combos) {
      expect(c.ticker.startsWith("KXMVE")).toBe(true);
      expect(c.mve_selected_legs.length).toBe(2);
      expect(new Set(c.mve_selected_legs.map((l: Wire) => l.event_ticker)).size).toBe(2);
    }
    const excl = await call(fake.apiUrl, "GET", "/markets?status=open&mve_filter=exclude&limit=1000");
    expect(excl.body.markets.some((m: Wire) => m.mve_collection_ticker)).toBe(false);
    expect(excl.body.markets.length).toBe(all.body.markets.length - combos.length);
    const only = await call(fake.apiUrl, "GET", "/markets?mve_filter=only");
    expect(only.body.markets.length).toBe(combos.length);
    const bad = await call(fake.apiUrl, "GET", "/markets?mve_filter=sometimes");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBeTruthy();
  });

  it("filters markets by status, event_ticker and tickers", async () => {
    const open = await call(fake.apiUrl, "GET", "/markets?status=open&mve_filter=exclude");
    expect(open.body.markets.every((m: Wire) => m.status === "active")).toBe(true);
    const settled = await call(fake.apiUrl, "GET", "/markets?status=settled");
    expect(settled.body.markets.map((m: Wire) => m.ticker)).toEqual(["KXCPIYOY-26OCT-T3.0"]);
    const ev = await call(fake.apiUrl, "GET", "/markets?event_ticker=KXFEDDECISION-26DEC");
    expect(ev.body.markets.map((m: Wire) => m.ticker).sort()).toEqual([
      "KXFEDDECISION-26DEC-C25",
      "KXFEDDECISION-26DEC-H0",
    ]);
    const t = await call(fake.apiUrl, "GET", "/markets?tickers=KXGOVSHUT-26DEC31,KXFEDCHAIROUT-26");
    expect(t.body.markets).toHaveLength(2);
    const badStatus = await call(fake.apiUrl, "GET", "/markets?status=active");
    expect(badStatus.status).toBe(400);
  });

  it("serves one market, one event (nested or not) and 404s in the venue's error body", async () => {
    const m = await call(fake.apiUrl, "GET", "/markets/KXBTCY-26DEC31-T100000");
    expect(m.body.market.event_ticker).toBe("KXBTCY-26DEC31");
    const e = await call(fake.apiUrl, "GET", "/events/KXFEDDECISION-26DEC");
    expect(e.body.event.series_ticker).toBe("KXFEDDECISION");
    expect(e.body.event).not.toHaveProperty("markets");
    expect(e.body.event.mutually_exclusive).toBe(true);
    expect(e.body.markets).toHaveLength(2);
    const nested = await call(fake.apiUrl, "GET", "/events/KXFEDDECISION-26DEC?with_nested_markets=true");
    expect(nested.body.event.markets).toHaveLength(2);
    const missing = await call(fake.apiUrl, "GET", "/markets/NOPE-1");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      error: { code: "not_found", message: expect.any(String), service: "exchange" },
    });
  });

  it("lists events without combos, with nested markets on request, and series", async () => {
    const ev = await call(fake.apiUrl, "GET", "/events?with_nested_markets=true");
    expect(ev.body.cursor).toBe("");
    expect(ev.body.events.some((e: Wire) => e.event_ticker.startsWith("KXMVE"))).toBe(false);
    const fed = ev.body.events.find((e: Wire) => e.event_ticker === "KXFEDDECISION-26DEC");
    expect(fed.markets).toHaveLength(2);
    const open = await call(fake.apiUrl, "GET", "/events?status=settled");
    expect(open.body.events.map((e: Wire) => e.event_ticker)).toEqual(["KXCPIYOY-26OCT"]);
    const series = await call(fake.apiUrl, "GET", "/series/KXFEDDECISION");
    expect(series.body.series.ticker).toBe("KXFEDDECISION");
    const all = await call(fake.apiUrl, "GET", "/series");
    expect(all.body.series.length).toBeGreaterThan(5);
  });

  it("serves each series' fee_type and fee_multiplier, and an event's fee override (SDK 3.30)", async () => {
    const all = (await call(fake.apiUrl, "GET", "/series")).body.series as Wire[];
    const fees = new Map(all.map((s) => [s.ticker, [s.fee_type, s.fee_multiplier]]));
    expect(fees.get("KXFEDDECISION")).toEqual(["quadratic_with_maker_fees", 1]);
    expect(fees.get("KXBTCY")).toEqual(["quadratic", 1]);
    expect(fees.get("KXTIMEPOY")).toEqual(["flat", 1]);
    // Most series are the general schedule.
    const general = [...fees.values()].filter(([t, m]) => t === "quadratic" && m === 1).length;
    expect(general).toBeGreaterThan(all.length / 2);
    for (const s of all) expect(typeof s.last_updated_ts).toBe("string");
    // Only the series updated since `min_updated_ts` (unix seconds).
    const later = Math.floor(Date.parse(all[0]!.last_updated_ts) / 1000) + 1;
    expect((await call(fake.apiUrl, "GET", `/series?min_updated_ts=${later}`)).body.series).toEqual([]);
    // The override is present only on the event that has one.
    const game = (await call(fake.apiUrl, "GET", "/events/KXNFLGAME-26DEC27KCDEN")).body.event;
    expect(game).toMatchObject({ fee_type_override: "quadratic", fee_multiplier_override: 0.5 });
    const fed = (await call(fake.apiUrl, "GET", "/events/KXFEDDECISION-26DEC")).body.event;
    expect(fed).not.toHaveProperty("fee_type_override");
    expect(fed).not.toHaveProperty("fee_multiplier_override");
  });
});

describe("fake Kalshi cursor pagination (generated world)", () => {
  let fake: KalshiFake;
  beforeAll(async () => {
    fake = await startKalshiFake({ world: bigWorld(250), seed: 3 });
  });
  afterAll(() => fake.close());

  it("walks /markets across several pages until an empty cursor, without loss or repeats", async () => {
    const seen: string[] = [];
    let cursor = "";
    let pages = 0;
    do {
      const res = await call(
        fake.apiUrl,
        "GET",
        `/markets?limit=60&mve_filter=exclude${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.markets.map((m: Wire) => m.ticker));
      cursor = res.body.cursor;
      pages += 1;
    } while (cursor !== "");
    expect(pages).toBe(5);
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
  });

  it("walks /events across pages (200 max per page)", async () => {
    const first = await call(fake.apiUrl, "GET", "/events");
    expect(first.body.events).toHaveLength(125);
    expect(first.body.cursor).toBe("");
    const p1 = await call(fake.apiUrl, "GET", "/events?limit=100");
    expect(p1.body.events).toHaveLength(100);
    expect(p1.body.cursor).not.toBe("");
    const p2 = await call(fake.apiUrl, "GET", `/events?limit=100&cursor=${p1.body.cursor}`);
    expect(p2.body.events).toHaveLength(25);
    expect(p2.body.cursor).toBe("");
    const tooBig = await call(fake.apiUrl, "GET", "/events?limit=201");
    expect(tooBig.status).toBe(400);
    const badCursor = await call(fake.apiUrl, "GET", "/markets?cursor=garbage!");
    expect(badCursor.status).toBe(400);
  });
});
