import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PolymarketFake, startPolymarketFake } from "../src/polymarket/index";
import { DEFAULT_WORLD, type SeedMarket } from "../src/world/seed";
import type { Json } from "./polymarket-helpers";

/** A larger generated world so listings need more than one page. */
function bigWorld(n: number): SeedMarket[] {
  return Array.from({ length: n }, (_, i) => ({
    venue: "polymarket" as const,
    key: `generated-market-${i}`,
    eventKey: `generated-event-${Math.floor(i / 3)}`,
    eventTitle: `Generated event ${Math.floor(i / 3)}`,
    category: "crypto" as const,
    question: `Generated question ${i}?`,
    rules: "Generated rules.",
    settlementSource: "Generator",
    closeTime: "2027-03-01T00:00:00Z",
    yesPrice: 0.1 + (i % 80) / 100,
    tickSize: 0.01 as const,
    ...(i % 10 === 9 ? { status: "closed" as const } : {}),
  }));
}

describe("fake Polymarket — Gamma", () => {
  let fake: PolymarketFake;
  beforeAll(async () => {
    fake = await startPolymarketFake({ seed: 7 });
  });
  afterAll(() => fake.close());

  const get = async (path: string) => {
    const res = await fetch(`${fake.gammaUrl}${path}`);
    return { status: res.status, json: (await res.json()) as Json };
  };

  it("encodes outcomes, outcomePrices and clobTokenIds as JSON strings that line up", async () => {
    const { status, json } = await get("/markets?limit=100");
    expect(status).toBe(200);
    expect(Array.isArray(json)).toBe(true);
    for (const m of json) {
      expect(typeof m.outcomes).toBe("string");
      expect(typeof m.outcomePrices).toBe("string");
      expect(typeof m.clobTokenIds).toBe("string");
      const outcomes = JSON.parse(m.outcomes);
      const prices = JSON.parse(m.outcomePrices);
      const tokens = JSON.parse(m.clobTokenIds);
      expect(outcomes).toHaveLength(2);
      expect(prices.every((p: unknown) => typeof p === "string")).toBe(true);
      expect(tokens.every((t: string) => /^\d{30,78}$/.test(t))).toBe(true);
      expect(Number(prices[0]) + Number(prices[1])).toBeCloseTo(1, 9);
      expect(m.conditionId).toMatch(/^0x[0-9a-f]{64}$/);
      expect(m.id).toMatch(/^\d+$/);
      expect(typeof m.volume).toBe("string");
      expect(typeof m.liquidity).toBe("string");
      expect(typeof m.volumeNum).toBe("number");
      expect(typeof m.bestBid).toBe("number");
      expect(typeof m.orderPriceMinTickSize).toBe("number");
    }
  });

  it("carries every documented Market and Event field (VENUES.md §1.2)", async () => {
    const market = (await get("/markets/slug/fed-decision-december-2026-25-bps-cut")).json;
    const marketKeys = [
      "id",
      "question",
      "conditionId",
      "slug",
      "endDate",
      "endDateIso",
      "outcomes",
      "outcomePrices",
      "clobTokenIds",
      "volume",
      "volumeNum",
      "volume24hr",
      "volume1wk",
      "volume1mo",
      "volume1yr",
      "volumeClob",
      "liquidity",
      "liquidityNum",
      "liquidityClob",
      "bestBid",
      "bestAsk",
      "lastTradePrice",
      "spread",
      "orderPriceMinTickSize",
      "orderMinSize",
      "oneDayPriceChange",
      "negRisk",
      "negRiskMarketID",
      "active",
      "closed",
      "acceptingOrders",
      "enableOrderBook",
      "feesEnabled",
      "feeType",
      "feeSchedule",
      "makerBaseFee",
      "takerBaseFee",
    ];
    for (const k of marketKeys) expect(market, k).toHaveProperty(k);
    expect(market.endDate).toBe("2026-12-16T19:00:00Z");
    expect(market.endDateIso).toBe("2026-12-16");
    const event = (await get("/events/slug/fed-decision-in-december-2026")).json;
    const eventKeys = [
      "id",
      "ticker",
      "slug",
      "title",
      "description",
      "startDate",
      "creationDate",
      "endDate",
      "active",
      "closed",
      "archived",
      "new",
      "featured",
      "restricted",
      "liquidity",
      "volume",
      "openInterest",
      "volume24hr",
      "volume1wk",
      "volume1mo",
      "volume1yr",
      "competitive",
      "enableOrderBook",
      "liquidityClob",
      "negRisk",
      "negRiskMarketID",
      "commentCount",
      "markets",
      "tags",
      "series",
    ];
    for (const k of eventKeys) expect(event, k).toHaveProperty(k);
  });

  it("publishes fee schedules as 2026 markets carry them: feeSchedule the rate, base fees the cap", async () => {
    const fed = (await get("/markets/slug/fed-decision-december-2026-no-change")).json;
    expect(fed).toMatchObject({
      feesEnabled: true,
      feeSchedule: { exponent: 1, rate: 0.05, takerOnly: true },
      makerBaseFee: 1000,
      takerBaseFee: 1000,
    });
    const sol = (await get("/markets/slug/solana-below-150-at-5pm-et-on-december-31-2026")).json;
    expect(sol).toMatchObject({ feesEnabled: true, feeSchedule: { exponent: 2, rate: 0.25 } });
    const free = (await get("/markets/slug/us-government-shutdown-by-december-31-2026")).json;
    expect(free).toMatchObject({ feesEnabled: false, makerBaseFee: 0, takerBaseFee: 0 });
    // The CLOB says the same: fd {r, e, to} and the cap, and /fee-rate's base fee.
    const tokens = JSON.parse(fed.clobTokenIds as string) as string[];
    const info = (await (await fetch(`${fake.clobUrl}/clob-markets/${fed.conditionId}`)).json()) as Json;
    expect(info).toMatchObject({ fd: { r: 0.05, e: 1, to: true }, mbf: 1000, tbf: 1000 });
    const rate = (await (await fetch(`${fake.clobUrl}/fee-rate?token_id=${tokens[0]}`)).json()) as Json;
    expect(rate).toEqual({ base_fee: 1000 });
  });

  it("keeps the seed's outcome order: YES is not always first", async () => {
    const eth = (await get("/markets/slug/will-ethereum-reach-5000-in-2026")).json;
    expect(JSON.parse(eth.outcomes)).toEqual(["No", "Yes"]);
    const ethPrices = JSON.parse(eth.outcomePrices).map(Number);
    expect(ethPrices[1]).toBeCloseTo(0.2, 2); // the YES leg is second
    const info = fake.script.market("will-ethereum-reach-5000-in-2026");
    expect(JSON.parse(eth.clobTokenIds)[1]).toBe(info.yesTokenId);

    const nba = (await get("/markets/slug/nba-lal-bos-2026-12-25")).json;
    expect(JSON.parse(nba.outcomes)).toEqual(["Lakers", "Celtics"]);
    expect(JSON.parse(nba.clobTokenIds)[0]).toBe(fake.script.market("nba-lal-bos-2026-12-25").yesTokenId);
  });

  it("derives ids deterministically from the seed keys", async () => {
    const other = await startPolymarketFake({ seed: 99 });
    try {
      const a = fake.script.market("fed-decision-december-2026-25-bps-cut");
      const b = other.script.market("fed-decision-december-2026-25-bps-cut");
      expect(b.conditionId).toBe(a.conditionId);
      expect(b.tokenIds).toEqual(a.tokenIds);
      expect(a.slug).toBe("fed-decision-december-2026-25-bps-cut");
      expect(a.negRisk).toBe(true);
    } finally {
      await other.close();
    }
  });

  it("/markets drops closed markets unless closed is sent", async () => {
    const open = (await get("/markets")).json as Json[];
    expect(open.some((m) => m.slug === "will-it-snow-in-london-on-november-20-2026")).toBe(false);
    const bySlug = (await get("/markets?slug=will-it-snow-in-london-on-november-20-2026")).json;
    expect(bySlug).toEqual([]);
    const closed = (await get("/markets?slug=will-it-snow-in-london-on-november-20-2026&closed=true")).json;
    expect(closed).toHaveLength(1);
    expect(closed[0].closed).toBe(true);
    expect(closed[0].acceptingOrders).toBe(false);
    const direct = await get("/markets/slug/will-it-snow-in-london-on-november-20-2026");
    expect(direct.status).toBe(200);
    expect(direct.json.closed).toBe(true);
  });

  it("filters markets by clob_token_ids, condition_ids and id", async () => {
    const info = fake.script.market("top-grossing-movie-of-2026-avatar-fire-and-ash");
    const byToken = (await get(`/markets?clob_token_ids=${info.noTokenId}`)).json;
    expect(byToken.map((m: Json) => m.slug)).toEqual([info.slug]);
    const byCond = (await get(`/markets?condition_ids=${info.conditionId}`)).json;
    expect(byCond.map((m: Json) => m.slug)).toEqual([info.slug]);
    const byId = (await get(`/markets?id=${info.id}`)).json;
    expect(byId.map((m: Json) => m.slug)).toEqual([info.slug]);
    expect((await get(`/markets/${info.id}`)).json.slug).toBe(info.slug);
    expect((await get("/markets/999")).status).toBe(404);
  });

  it("serves events with nested markets; liquidity and volume are numbers on events", async () => {
    const events = (await get("/events?limit=100")).json as Json[];
    const fed = events.find((e) => e.slug === "fed-decision-in-december-2026");
    expect(fed.markets).toHaveLength(2);
    expect(fed.negRisk).toBe(true);
    expect(typeof fed.liquidity).toBe("number");
    expect(typeof fed.volume).toBe("number");
    expect(typeof fed.markets[0].outcomes).toBe("string");
    expect((await get(`/events/${fed.id}`)).json.slug).toBe(fed.slug);
    expect((await get(`/events/slug/${fed.slug}`)).json.id).toBe(fed.id);
    expect((await get(`/events?slug=${fed.slug}`)).json).toHaveLength(1);
    expect((await get("/events/slug/nope")).status).toBe(404);
    const closedOnly = (await get("/events?closed=true")).json as Json[];
    expect(closedOnly.map((e) => e.slug)).toEqual([
      "snow-in-london-november-20-2026",
      "highest-temperature-in-nyc-on-november-15-2026",
    ]);
  });

  it("orders by a field", async () => {
    const rows = (await get("/markets?order=volumeNum&ascending=true")).json as Json[];
    const vols = rows.map((m) => m.volumeNum);
    expect(vols).toEqual([...vols].sort((a, b) => a - b));
  });

  it("pages through a large world with offset and keyset pagination", async () => {
    const big = await startPolymarketFake({ world: bigWorld(250), seed: 3 });
    try {
      const seen: string[] = [];
      for (let offset = 0; ; offset += 100) {
        const res = await fetch(`${big.gammaUrl}/markets?limit=100&offset=${offset}`);
        const page = (await res.json()) as Json[];
        seen.push(...page.map((m) => m.slug));
        if (page.length < 100) break;
      }
      expect(seen).toHaveLength(225); // 25 of 250 are closed and dropped by the implicit closed=false
      expect(new Set(seen).size).toBe(225);

      // limit is capped at 100
      const capped = (await (await fetch(`${big.gammaUrl}/markets?limit=500&closed=true`)).json()) as Json[];
      expect(capped).toHaveLength(25);
      const all = (await (await fetch(`${big.gammaUrl}/markets?limit=500`)).json()) as Json[];
      expect(all).toHaveLength(100);

      const events: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const url = `${big.gammaUrl}/events/keyset?limit=30${cursor ? `&after_cursor=${cursor}` : ""}`;
        const body = (await (await fetch(url)).json()) as { events: Json[]; next_cursor?: string };
        events.push(...body.events.map((e) => e.slug));
        cursor = body.next_cursor;
        pages += 1;
      } while (cursor);
      expect(pages).toBeGreaterThan(1);
      expect(events).toHaveLength(84);
      expect(new Set(events).size).toBe(84);

      const rejected = await fetch(`${big.gammaUrl}/events/keyset?offset=10`);
      expect(rejected.status).toBe(422);
    } finally {
      await big.close();
    }
  });

  it("serves only Polymarket entries of a mixed world", async () => {
    const polyCount = DEFAULT_WORLD.filter((m) => m.venue === "polymarket").length;
    const rows = (await get("/markets?closed=true")).json.length + (await get("/markets")).json.length;
    expect(rows).toBe(polyCount);
  });
});
