/**
 * Cross-venue prices in the default world, as a client sees them over both fakes' REST APIs: the
 * two venues' books for one contract agree within fees most of the time, and arbitrage after fees
 * shows up rarely, small, on a few pairs at a time, and closes within a few ticks.
 *
 * Arbitrage here is what issue 25 names: one contract bought at the best ask on each leg (identity:
 * YES on one venue + NO on the other; complement: YES + YES or NO + NO), each leg paying its venue's
 * taker fee (Kalshi's 0.07 × P × (1 − P) × the series' multiplier, rounded up to the cent for a
 * one-contract order; Polymarket's rate × (P × (1 − P))^exponent), costing less than the $1 the pair
 * pays. The fees come from the venues' own listings (Kalshi series and events, Gamma `feeSchedule`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FairValues } from "../src/fair";
import { type KalshiFake, startKalshiFake } from "../src/kalshi/index";
import { type PolymarketFake, startPolymarketFake } from "../src/polymarket/index";
import { type CrossListing, crossListings } from "../src/world/cross";
import { DEFAULT_WORLD, type SeedMarket } from "../src/world/seed";
import { call, type Wire } from "./kalshi-helpers";

const SEED = 7;
const TICKS = 200;
/** An opportunity must be gone this many ticks after it opened. */
const CLOSES_WITHIN = 25;

type Fee = (price: number) => number;

interface Pair {
  listing: CrossListing;
  yesToken: string;
  pmFee: Fee;
  kalshiFee: Fee;
}

interface Top {
  bid: number | null;
  ask: number | null;
}

const ceilCent = (x: number) => Math.ceil(Math.round(x * 1e8) / 1e6) / 100;

function kalshiFeeOf(feeType: string, multiplier: number): Fee {
  return (p) => ceilCent(feeType === "flat" ? 0.0175 * multiplier : 0.07 * multiplier * p * (1 - p));
}

function pmFeeOf(schedule: { rate: number; exponent: number } | null): Fee {
  return (p) => (schedule ? schedule.rate * (p * (1 - p)) ** schedule.exponent : 0);
}

/** Best edge per contract after fees over both directions of a pair (negative: no arbitrage). */
function edgeOf(pair: Pair, pm: Top, k: Top): number {
  const { pmFee, kalshiFee } = pair;
  const edges: number[] = [];
  const leg = (price: number, fee: Fee) => price + fee(price);
  if (pair.listing.relation === "identity") {
    // YES on Polymarket + NO on Kalshi; NO on Polymarket + YES on Kalshi.
    if (pm.ask !== null && k.bid !== null) edges.push(1 - leg(pm.ask, pmFee) - leg(1 - k.bid, kalshiFee));
    if (pm.bid !== null && k.ask !== null) edges.push(1 - leg(1 - pm.bid, pmFee) - leg(k.ask, kalshiFee));
  } else {
    // YES on both; NO on both.
    if (pm.ask !== null && k.ask !== null) edges.push(1 - leg(pm.ask, pmFee) - leg(k.ask, kalshiFee));
    if (pm.bid !== null && k.bid !== null) edges.push(1 - leg(1 - pm.bid, pmFee) - leg(1 - k.bid, kalshiFee));
  }
  return edges.length ? Math.round(Math.max(...edges) * 1e6) / 1e6 : Number.NEGATIVE_INFINITY;
}

/** |mid difference| in the pair's common terms, less both fees at the mids: > 0.01 disagrees. */
function disagreement(pair: Pair, pm: Top, k: Top): number | null {
  if (pm.bid === null || pm.ask === null || k.bid === null || k.ask === null) return null;
  const pmMid = (pm.bid + pm.ask) / 2;
  const kMid = (k.bid + k.ask) / 2;
  const other = pair.listing.relation === "identity" ? kMid : 1 - kMid;
  return Math.abs(pmMid - other) - pair.pmFee(pmMid) - pair.kalshiFee(kMid);
}

async function json(url: string, init?: RequestInit): Promise<Wire> {
  const res = await fetch(url, init);
  expect(res.status, url).toBe(200);
  return res.json();
}

describe("cross-venue prices of the default world", () => {
  let pm: PolymarketFake;
  let kalshi: KalshiFake;
  let pairs: Pair[];

  beforeAll(async () => {
    [pm, kalshi] = await Promise.all([startPolymarketFake({ seed: SEED }), startKalshiFake({ seed: SEED })]);
    pairs = [];
    for (const listing of crossListings()) {
      if (listing.relation === "lookalike") continue;
      const info = pm.script.market(listing.polymarket);
      const market = (await call(kalshi.apiUrl, "GET", `/markets/${listing.kalshi}`)).body.market;
      if (info.status !== "open" || market.status !== "active") continue;
      const gamma = await json(`${pm.gammaUrl}/markets/slug/${listing.polymarket}`);
      const event = (await call(kalshi.apiUrl, "GET", `/events/${market.event_ticker}`)).body.event;
      const series = (await call(kalshi.apiUrl, "GET", `/series/${event.series_ticker}`)).body.series;
      pairs.push({
        listing,
        yesToken: info.yesTokenId,
        pmFee: pmFeeOf(gamma.feesEnabled ? gamma.feeSchedule : null),
        kalshiFee: kalshiFeeOf(
          event.fee_type_override ?? series.fee_type,
          event.fee_multiplier_override ?? series.fee_multiplier,
        ),
      });
    }
  });

  afterAll(async () => {
    await Promise.all([pm?.close(), kalshi?.close()]);
  });

  /** Both venues' best YES bid and ask for every pair, read over REST. */
  async function tops(): Promise<{ pm: Top; k: Top }[]> {
    const books: Wire[] = await json(`${pm.clobUrl}/books`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(pairs.map((p) => ({ token_id: p.yesToken }))),
    });
    const byToken = new Map(books.map((b) => [b.asset_id, b]));
    const tickers = pairs.map((p) => p.listing.kalshi).join(",");
    const kbooks: Wire[] = (await call(kalshi.apiUrl, "GET", `/markets/orderbooks?tickers=${tickers}`)).body
      .orderbooks;
    const byTicker = new Map(kbooks.map((b) => [b.ticker, b.orderbook_fp]));
    const best = (levels: Wire[], pick: (...xs: number[]) => number) =>
      levels.length ? pick(...levels.map((l) => Number(l.price ?? l[0]))) : null;
    return pairs.map((p) => {
      const book = byToken.get(p.yesToken);
      const ob = byTicker.get(p.listing.kalshi);
      const noBid = best(ob.no_dollars, Math.max);
      return {
        pm: { bid: best(book.bids, Math.max), ask: best(book.asks, Math.min) },
        k: { bid: best(ob.yes_dollars, Math.max), ask: noBid === null ? null : 1 - noBid },
      };
    });
  }

  it(`agrees within fees most of the time; arbitrage is rare, small and short-lived over ${TICKS} ticks`, {
    timeout: 60_000,
  }, async () => {
    expect(pairs.length).toBeGreaterThanOrEqual(15);
    const edges: number[] = [];
    const perTick: number[] = [];
    let disagreeing = 0;
    let compared = 0;
    const openSince = new Map<string, number>();
    const runs: { pair: string; from: number; to: number | null }[] = [];
    for (let t = 1; t <= TICKS; t++) {
      pm.script.tick();
      kalshi.script.tick();
      const now = await tops();
      let open = 0;
      pairs.forEach((pair, i) => {
        const id = `${pair.listing.polymarket}~${pair.listing.kalshi}`;
        const top = now[i]!;
        const edge = edgeOf(pair, top.pm, top.k);
        const d = disagreement(pair, top.pm, top.k);
        if (d !== null) {
          compared += 1;
          if (d > 0.01 + 1e-9) disagreeing += 1;
        }
        if (edge > 1e-9) {
          open += 1;
          edges.push(edge);
          if (!openSince.has(id)) openSince.set(id, t);
        } else if (openSince.has(id)) {
          runs.push({ pair: id, from: openSince.get(id)!, to: t });
          openSince.delete(id);
        }
      });
      perTick.push(open);
    }
    for (const [pair, from] of openSince) runs.push({ pair, from, to: null });

    const pairTicks = pairs.length * TICKS;
    const sorted = [...edges].sort((a, b) => a - b);
    const figures = {
      pairs: pairs.length,
      arbitrageShare: edges.length / pairTicks,
      medianEdge: sorted[Math.floor(sorted.length / 2)] ?? 0,
      maxEdge: sorted.at(-1) ?? 0,
      maxPairsAtOnce: Math.max(...perTick),
      opportunities: runs.length,
      longestRun: Math.max(0, ...runs.map((r) => (r.to ?? TICKS + 1) - r.from)),
      disagreeingShare: disagreeing / compared,
    };
    const say = JSON.stringify(figures);
    // Most of the time the books agree within fees and a cent, and there is nothing to take.
    expect(figures.disagreeingShare, say).toBeLessThanOrEqual(0.1);
    expect(figures.arbitrageShare, say).toBeLessThanOrEqual(0.1);
    // A few pairs at a time, a cent or two each.
    expect(figures.maxPairsAtOnce, say).toBeLessThanOrEqual(4);
    expect(figures.maxEdge, say).toBeLessThanOrEqual(0.03);
    // It does show up, and what opens closes as the fakes trade.
    expect(figures.opportunities, say).toBeGreaterThan(0);
    for (const run of runs)
      if (run.from <= TICKS - CLOSES_WITHIN)
        expect(
          (run.to ?? TICKS + 1) - run.from,
          `${run.pair} from tick ${run.from}; ${say}`,
        ).toBeLessThanOrEqual(CLOSES_WITHIN);
  });
});

describe("the shared fair values", () => {
  const members = crossListings()
    .filter((l) => l.relation !== "lookalike")
    .flatMap(
      (l) =>
        [
          ["polymarket", l.polymarket],
          ["kalshi", l.kalshi],
        ] as const,
    );

  it("quote the same at a step whatever was asked before (each fake keeps its own copy)", () => {
    const stepped = new FairValues(DEFAULT_WORLD, 3);
    const late = new FairValues(DEFAULT_WORLD, 3);
    const other = new FairValues(DEFAULT_WORLD, 4);
    // One copy asked every step for Polymarket's markets only, the other first at step 400.
    for (let step = 1; step < 400; step++)
      for (const [venue, key] of members) if (venue === "polymarket") stepped.quote(venue, key, step);
    const at = (f: FairValues) => members.map(([venue, key]) => f.quote(venue, key, 400));
    expect(at(stepped)).toEqual(at(late));
    expect(at(stepped).every((q) => q !== null && q.bid < q.ask)).toBe(true);
    expect(at(other)).not.toEqual(at(late));
  });

  it("gives a path to labelled pairs only, and none to labels that contradict each other", () => {
    const market = (venue: "polymarket" | "kalshi", key: string, extra: Partial<SeedMarket>): SeedMarket => ({
      venue,
      key,
      eventKey: key,
      eventTitle: key,
      category: "economics",
      question: key,
      rules: key,
      settlementSource: "x",
      closeTime: "2027-01-01T00:00:00Z",
      yesPrice: 0.4,
      tickSize: 0.01,
      ...extra,
    });
    const fair = new FairValues(
      [
        market("polymarket", "same", { sameAs: "SAME" }),
        market("kalshi", "SAME", { sameAs: "same" }),
        market("polymarket", "torn", { sameAs: "TORN" }),
        market("kalshi", "TORN", { complementOf: "torn" }),
        market("polymarket", "alone", {}),
      ],
      1,
    );
    expect(fair.quote("polymarket", "same", 1)).not.toBeNull();
    expect(fair.quote("kalshi", "SAME", 1)).not.toBeNull();
    expect(fair.quote("polymarket", "torn", 1)).toBeNull();
    expect(fair.quote("kalshi", "TORN", 1)).toBeNull();
    expect(fair.quote("polymarket", "alone", 1)).toBeNull();
  });
});
