import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KalshiFake, startKalshiFake } from "../src/kalshi/index";
import { type PolymarketFake, startPolymarketFake } from "../src/polymarket/index";
import { crossListings, INVERSE } from "../src/world/cross";
import { DEFAULT_WORLD, type Lookalike, type SeedMarket, seedFor } from "../src/world/seed";
import { call, type Wire } from "./kalshi-helpers";

/** Keys other packages' tests may rely on: they must never disappear. */
const ORIGINAL_KEYS = [
  "KXFEDDECISION-26DEC-C25",
  "fed-decision-december-2026-25-bps-cut",
  "fed-decision-december-2026-no-change",
  "KXFEDDECISION-26DEC-H0",
  "KXCPIYOY-26NOV-T3.0",
  "november-2026-cpi-3pt0-or-higher",
  "KXBTCY-26DEC31-T100000",
  "bitcoin-above-100k-on-december-31-2026",
  "KXETHMAXY-26-T5000",
  "will-ethereum-reach-5000-in-2026",
  "KXGOVSHUT-26DEC31",
  "us-government-shutdown-by-december-31-2026",
  "fed-chair-announces-resignation-by-december-31-2026",
  "KXFEDCHAIROUT-26",
  "nba-lal-bos-2026-12-25",
  "KXNBAGAME-26DEC25LALBOS-LAL",
  "KXNFLGAME-26DEC27KCDEN-KC",
  "KXHIGHNY-26DEC01-T45",
  "highest-temperature-in-nyc-on-december-1-2026-46f-or-higher",
  "top-grossing-movie-of-2026-avatar-fire-and-ash",
  "KXCPIYOY-26OCT-T3.0",
  "will-it-snow-in-london-on-november-20-2026",
];

const other = (m: SeedMarket) => (m.venue === "kalshi" ? "polymarket" : "kalshi");
const byKey = new Map(DEFAULT_WORLD.map((m) => [`${m.venue}:${m.key}`, m]));
const find = (venue: string, key: string) => byKey.get(`${venue}:${key}`);
const lookalikes = (m: SeedMarket): Lookalike[] => [
  ...(m.lookalikeOf ? [m.lookalikeOf] : []),
  ...(m.moreLookalikes ?? []),
];

describe("the seeded world", () => {
  it("keeps every original entry and has unique keys per venue", () => {
    const keys = new Set(DEFAULT_WORLD.map((m) => m.key));
    for (const k of ORIGINAL_KEYS) expect(keys.has(k), k).toBe(true);
    for (const venue of ["polymarket", "kalshi"] as const) {
      const ks = seedFor(venue).map((m) => m.key);
      expect(new Set(ks).size).toBe(ks.length);
    }
    expect(DEFAULT_WORLD.length).toBeGreaterThanOrEqual(60);
    expect(DEFAULT_WORLD.length).toBeLessThanOrEqual(80);
    const categories = new Set(DEFAULT_WORLD.map((m) => m.category));
    expect(categories.size).toBe(6);
  });

  it("points every sameAs / complementOf / look-alike at a market of the other venue, symmetrically", () => {
    for (const m of DEFAULT_WORLD) {
      const where = `${m.venue}:${m.key}`;
      if (m.sameAs) {
        const t = find(other(m), m.sameAs);
        expect(t, `${where} sameAs ${m.sameAs}`).toBeDefined();
        expect(t!.sameAs, `${m.sameAs} sameAs back`).toBe(m.key);
      }
      if (m.complementOf) {
        const t = find(other(m), m.complementOf);
        expect(t, `${where} complementOf ${m.complementOf}`).toBeDefined();
        expect(t!.complementOf, `${m.complementOf} complementOf back`).toBe(m.key);
        expect(m.sameAs).not.toBe(m.complementOf);
      }
      for (const l of lookalikes(m)) {
        const t = find(other(m), l.key);
        expect(t, `${where} lookalike ${l.key}`).toBeDefined();
        expect(l.why.length, `${where} why`).toBeGreaterThan(5);
        const back = lookalikes(t!).find((x) => x.key === m.key);
        expect(back, `${l.key} lookalike back to ${m.key}`).toBeDefined();
        expect(back!.trueRelation).toBe(l.trueRelation ? INVERSE[l.trueRelation] : undefined);
        expect(l.key === m.sameAs || l.key === m.complementOf, `${where} ${l.key}`).toBe(false);
      }
    }
  });

  it("derives labelled pairs: enough identities, complements and look-alikes of every kind", () => {
    const pairs = crossListings();
    const count = (r: string) => pairs.filter((p) => p.relation === r).length;
    expect(count("identity")).toBeGreaterThanOrEqual(12);
    expect(count("complement")).toBeGreaterThanOrEqual(3);
    expect(count("lookalike")).toBeGreaterThanOrEqual(12);
    expect(new Set(pairs.map((p) => `${p.relation}:${p.polymarket}:${p.kalshi}`)).size).toBe(pairs.length);
    for (const p of pairs) {
      expect(find("polymarket", p.polymarket)).toBeDefined();
      expect(find("kalshi", p.kalshi)).toBeDefined();
      expect(p.relation === "lookalike" ? typeof p.why : "none").toBe(
        p.relation === "lookalike" ? "string" : "none",
      );
    }
    for (const r of ["subset", "superset", "overlap"])
      expect(
        pairs.some((p) => p.trueRelation === r),
        r,
      ).toBe(true);
    // A placeholder-rules market and an empty-rules market, each labelled a look-alike.
    const weak = DEFAULT_WORLD.filter((m) => m.rules.trim() === "" || /rules tbd/i.test(m.rules));
    expect(weak.length).toBeGreaterThanOrEqual(2);
    for (const m of weak) expect(m.lookalikeOf).toBeDefined();
  });

  it("has a neg-risk event of 4+ outcomes summing to about 1, mirrored outcome by outcome on Kalshi", () => {
    const events = new Map<string, SeedMarket[]>();
    for (const m of seedFor("polymarket").filter((x) => x.negRisk))
      events.set(m.eventKey, [...(events.get(m.eventKey) ?? []), m]);
    const full = [...events.values()].filter((ms) => ms.length >= 4);
    expect(full.length).toBeGreaterThanOrEqual(1);
    for (const ms of full) {
      const sum = ms.reduce((a, m) => a + m.yesPrice, 0);
      expect(Math.abs(sum - 1)).toBeLessThan(0.03);
    }
    const mirrored = full.find((ms) => ms.every((m) => m.sameAs));
    expect(mirrored).toBeDefined();
    const kalshiEvents = new Set(mirrored!.map((m) => find("kalshi", m.sameAs!)!.eventKey));
    expect(kalshiEvents.size).toBe(1);
  });

  it("covers the status and tick cases, with consistent optional fields", () => {
    const k = seedFor("kalshi");
    const p = seedFor("polymarket");
    expect(k.some((m) => m.status === "closed" && m.resolution === undefined)).toBe(true);
    expect(k.some((m) => m.status === "unopened")).toBe(true);
    expect(k.some((m) => m.tickSize === 0.001 && m.priceLevelStructure === "deci_cent")).toBe(true);
    expect(p.some((m) => m.status === "resolved" && m.resolution !== undefined)).toBe(true);
    expect(p.some((m) => m.tickSize === 0.01 && m.yesPrice >= 0.95 && (m.status ?? "open") === "open")).toBe(
      true,
    );
    for (const m of DEFAULT_WORLD) {
      if (m.resolution !== undefined) expect(m.status, m.key).toBe("resolved");
      if (m.priceLevelStructure)
        expect(m.tickSize, m.key).toBe(m.priceLevelStructure === "linear_cent" ? 0.01 : 0.001);
      if (m.openTime && m.startDate) expect(m.openTime).toBe(m.startDate);
      const opened = m.openTime ?? m.startDate;
      if (opened) expect(Date.parse(opened)).toBeLessThan(Date.parse(m.closeTime));
      if (m.outcomes) expect(m.outcomes).toContain(m.yesLabel ?? "Yes");
    }
  });
});

describe("the fakes honour the optional seed fields", () => {
  let kalshi: KalshiFake;
  let pm: PolymarketFake;
  beforeAll(async () => {
    kalshi = await startKalshiFake({ seed: 3 });
    pm = await startPolymarketFake({ seed: 3 });
  });
  afterAll(async () => {
    await kalshi.close();
    await pm.close();
  });

  it("Kalshi: series, open time, volumes, price level structures, unopened and closed markets", async () => {
    const jan = (await call(kalshi.apiUrl, "GET", "/markets/KXFEDDECISION-27JAN-H0")).body.market;
    expect(jan.open_time).toBe("2026-10-29T14:00:00Z");
    expect(jan.volume_fp).toBe("1694120.00");
    expect(jan.volume_24h_fp).toBe("26490.00");
    const ev = (await call(kalshi.apiUrl, "GET", "/events/KXFEDDECISION-27JAN")).body;
    expect(ev.event.series_ticker).toBe("KXFEDDECISION");
    expect(ev.event.mutually_exclusive).toBe(true);
    expect(ev.markets).toHaveLength(4);
    const ladder = (await call(kalshi.apiUrl, "GET", "/events/KXU3-26DEC")).body;
    expect(ladder.event.mutually_exclusive).toBe(false);
    const tapered = (await call(kalshi.apiUrl, "GET", "/markets/KXBTCMAXY-26-T150000")).body.market;
    expect(tapered.price_level_structure).toBe("tapered_deci_cent");
    expect(tapered.price_ranges.map((r: Wire) => r.step)).toEqual(["0.0010", "0.0100", "0.0010"]);
    const deci = (await call(kalshi.apiUrl, "GET", "/markets/KXSOLD-26DEC3117-T149.99")).body.market;
    expect(deci.price_level_structure).toBe("deci_cent");
    expect(deci.price_ranges).toEqual([{ start: "0.0000", end: "1.0000", step: "0.0010" }]);
    const unopened = (await call(kalshi.apiUrl, "GET", "/markets?status=unopened")).body.markets;
    expect(unopened.map((m: Wire) => m.ticker)).toEqual(["KXFEDDECISION-27MAR-H0"]);
    expect(unopened[0].status).toBe("initialized");
    const closed = (await call(kalshi.apiUrl, "GET", "/markets?status=closed")).body.markets;
    expect(closed.map((m: Wire) => m.ticker)).toContain("KXHIGHNY-26NOV20-T50");
    expect(closed.find((m: Wire) => m.ticker === "KXHIGHNY-26NOV20-T50").result).toBe("");
  });

  it("Kalshi: the default world needs several pages at a small limit", async () => {
    const seen: string[] = [];
    let cursor = "";
    let pages = 0;
    do {
      const q = `/markets?limit=5&mve_filter=exclude${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const res = await call(kalshi.apiUrl, "GET", q);
      seen.push(...res.body.markets.map((m: Wire) => m.ticker));
      cursor = res.body.cursor;
      pages += 1;
    } while (cursor !== "");
    expect(pages).toBeGreaterThanOrEqual(6);
    expect(new Set(seen).size).toBe(seedFor("kalshi").length);
  });

  it("Polymarket: minimum size, volumes, liquidity and start date from the seed", async () => {
    const get = async (path: string) => (await fetch(`${pm.gammaUrl}${path}`)).json() as Promise<Wire>;
    const nba = await get("/markets/slug/nba-gsw-phx-2027-01-02");
    expect(nba.volumeNum).toBe(210448.1);
    expect(nba.volume24hr).toBe(38120.6);
    expect(nba.liquidityNum).toBe(44300);
    const near = await get("/markets/slug/november-2026-unemployment-above-3pt5");
    expect(near.orderMinSize).toBe(15);
    expect(near.orderPriceMinTickSize).toBe(0.01);
    const fed = await get("/markets/slug/fed-decision-january-2027-no-change");
    expect(fed.startDate).toBe("2026-10-29T16:00:00Z");
    const event = await get("/events/slug/fed-decision-in-january-2027");
    expect(event.markets).toHaveLength(4);
    expect(event.negRisk).toBe(true);
    const resolved = (await get(
      "/markets?closed=true&slug=highest-temperature-in-nyc-on-november-15-2026-55f-or-higher",
    )) as Wire[];
    expect(resolved[0].umaResolutionStatus).toBe("resolved");
    expect(JSON.parse(resolved[0].outcomePrices)).toEqual(["0", "1"]);
  });
});
