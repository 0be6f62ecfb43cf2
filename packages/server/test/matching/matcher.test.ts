import { crossListings, DEFAULT_WORLD } from "@crossbook/fakes/world";
import { describe, expect, it } from "vitest";
import { extractFeatures } from "../../src/matching/features";
import { isAutoAcceptable, Matcher, matchCatalogs } from "../../src/matching/matcher";
import { compareContracts, measureRelation } from "../../src/matching/relation";
import { normalizeText } from "../../src/matching/text";
import type { MatchableMarket, MatchVerdict } from "../../src/matching/types";
import { market } from "./markets";

const worldMarkets: MatchableMarket[] = DEFAULT_WORLD.map((m) => {
  const yes = m.yesLabel ?? "Yes";
  const outcomes = m.outcomes ?? ["Yes", "No"];
  return {
    id: `${m.venue}:${m.key}`,
    venue: m.venue,
    question: m.question,
    eventTitle: m.eventTitle,
    rules: m.rules,
    settlementSource: m.settlementSource,
    closeTime: m.closeTime,
    yesLabel: yes,
    noLabel: outcomes.find((o) => o !== yes) ?? "No",
  };
});

function pairKey(a: string, b: string): string {
  return a < b ? `${a} ${b}` : `${b} ${a}`;
}

describe("text normalisation", () => {
  it("writes numbers, units and aliases one way", () => {
    expect(normalizeText("BTC above $100k")).toBe("bitcoin above $100000");
    expect(normalizeText("$1,250,000")).toBe("$1250000");
    expect(normalizeText("FOMC cuts by 25 basis points")).toContain("fed cuts by 25 bps");
    expect(normalizeText("at least 45 degrees F")).toBe("at least 45°f");
    expect(normalizeText("≥ 3.0 percent")).toBe("at least 3.0%");
  });
});

describe("features", () => {
  it("reads the comparator from the rules when they state it", () => {
    const f = extractFeatures(
      market(
        "k",
        "kalshi",
        "Will CPI be above 3.0% in November 2026?",
        "If CPI for November 2026 is 3.0% or higher, the market resolves to Yes, as first released by the BLS.",
      ),
    );
    expect(f.measure).toMatchObject({ comparator: ">=", value: 3, unit: "%", from: "rules" });
  });

  it("reads a Fed decision as a signed move, whatever the wording", () => {
    const a = extractFeatures(
      market(
        "a",
        "polymarket",
        "Fed decreases interest rates by 25 bps after December 2026 meeting?",
        "Resolves Yes if the FOMC lowers the target range by 25 basis points at its December 16, 2026 meeting.",
      ),
    );
    const b = extractFeatures(
      market(
        "b",
        "kalshi",
        "Will the Federal Reserve cut rates by 0.25 percentage points in December 2026?",
        "If the Federal Reserve lowers the target range by 0.25 percentage points at the meeting concluding December 16, 2026, the market resolves to Yes.",
      ),
    );
    expect(a.measure).toMatchObject({ unit: "bps_change", comparator: "=", value: -25 });
    expect(b.measure).toMatchObject({ unit: "bps_change", comparator: "=", value: -25 });
    const hold = extractFeatures(
      market(
        "c",
        "kalshi",
        "Will the Fed hold rates in December 2026?",
        "If the Fed leaves rates unchanged at the December 16, 2026 meeting, the market resolves to Yes.",
      ),
    );
    expect(hold.measure).toMatchObject({ unit: "bps_change", comparator: "=", value: 0 });
  });

  it("reads 'before' a date as the day before, and a month's day from the rules", () => {
    const f = extractFeatures(
      market(
        "k",
        "kalshi",
        "Will X leave office before January 1, 2027?",
        "If X leaves office before January 1, 2027, the market resolves to Yes.",
      ),
    );
    expect(f.date).toEqual({ key: "2026-12-31", level: "day", kind: "by" });
    const g = extractFeatures(
      market(
        "p",
        "polymarket",
        "Fed decision in December 2026?",
        "Resolves at the meeting concluding December 16, 2026.",
      ),
    );
    expect(g.date?.key).toBe("2026-12-16");
  });

  it("flags missing and placeholder rules", () => {
    expect(extractFeatures(market("a", "kalshi", "Will it rain?", "TBD")).placeholderRules).toBe(true);
    expect(extractFeatures(market("a", "kalshi", "Will it rain?", "")).placeholderRules).toBe(true);
  });
});

describe("measureRelation", () => {
  const m = (
    comparator: ">" | ">=" | "<" | "<=" | "=" | "between",
    value: number,
    step = 0,
    high?: number,
  ) => ({
    unit: "%",
    comparator,
    value,
    high,
    step,
    from: "rules" as const,
    text: "",
  });
  it("tells strict from inclusive at the same threshold", () => {
    expect(measureRelation(m(">", 3), m(">=", 3))).toBe("subset");
    expect(measureRelation(m(">=", 3), m(">", 3))).toBe("superset");
  });
  it("equates strict and inclusive one step apart on a stepped quantity", () => {
    expect(measureRelation(m(">", 44.5, 1), m(">=", 45, 1))).toBe("identity");
    expect(measureRelation(m(">=", 6, 1), m("<=", 5, 1))).toBe("complement");
  });
  it("places a bucket inside a threshold", () => {
    expect(measureRelation(m("between", 58, 0.1, 58.9), m(">=", 58, 0.1))).toBe("subset");
    expect(measureRelation(m("between", 58, 0.1, 58.9), m(">=", 60, 0.1))).toBe("disjoint");
    expect(measureRelation(m(">", 4), m("<", 5))).toBe("overlap");
  });
});

describe("compareContracts", () => {
  it("explains a settlement-source difference and refuses to call it identity", () => {
    const a = extractFeatures(
      market(
        "a",
        "polymarket",
        "Highest temperature in NYC 46°F or higher on December 1, 2026?",
        "Resolves Yes if the high at LaGuardia Airport (KLGA) on December 1, 2026 is 46°F or higher.",
        { closeTime: "2026-12-02T05:00:00Z" },
      ),
    );
    const b = extractFeatures(
      market(
        "b",
        "kalshi",
        "Will the high in New York City be above 45°F on December 1, 2026?",
        "If the maximum temperature at Central Park (KNYC) on December 1, 2026 is greater than 45°F, the market resolves to Yes.",
        { closeTime: "2026-12-02T05:00:00Z" },
      ),
    );
    const v = compareContracts(a, b)!;
    expect(v.relation).toBe("overlap");
    expect(v.reasons.join(" ")).toMatch(/weather station differs: KLGA vs KNYC/);
    expect(isAutoAcceptable(v)).toBe(false);
  });

  it("never auto-accepts a pair with placeholder rules", () => {
    const a = extractFeatures(
      market(
        "a",
        "polymarket",
        "Will Bitcoin reach $150,000 by December 31, 2026?",
        "This market resolves to Yes if the CF Benchmarks BRTI reaches $150,000 or more at any time by December 31, 2026, 11:59 PM ET.",
      ),
    );
    const b = extractFeatures(
      market("b", "kalshi", "Will Bitcoin reach $150,000 by December 31, 2026?", "TBD"),
    );
    const v = compareContracts(a, b)!;
    expect(v.blockers.length).toBeGreaterThan(0);
    expect(isAutoAcceptable(v)).toBe(false);
  });
});

describe("the matcher on the fake venues' world", () => {
  const verdicts = matchCatalogs(worldMarkets);
  const byPair = new Map<string, MatchVerdict>(verdicts.map((v) => [pairKey(v.marketA, v.marketB), v]));
  const labels = crossListings();

  it("auto-accepts no look-alike", () => {
    for (const l of labels.filter((x) => x.relation === "lookalike")) {
      const v = byPair.get(pairKey(`polymarket:${l.polymarket}`, `kalshi:${l.kalshi}`));
      expect(v && isAutoAcceptable(v), `${l.polymarket} ~ ${l.kalshi} (${l.why})`).toBeFalsy();
    }
  });

  it("finds the listed identity and complement pairs with the right polarity", () => {
    const positives = labels.filter((x) => x.relation !== "lookalike");
    const found = positives.filter((l) => {
      const v = byPair.get(pairKey(`polymarket:${l.polymarket}`, `kalshi:${l.kalshi}`));
      return (
        v &&
        isAutoAcceptable(v) &&
        v.relation === l.relation &&
        v.polarity === (l.relation === "complement" ? "inverted" : "same")
      );
    });
    // One world pair is written "by December 31" on one venue and "before December 31" on the
    // other; the matcher reads those as different deadlines (a day apart) and says so.
    const missed = positives
      .filter((l) => !found.includes(l))
      .map((l) => {
        const v = byPair.get(pairKey(`polymarket:${l.polymarket}`, `kalshi:${l.kalshi}`));
        return `${l.polymarket} ~ ${l.kalshi} ${l.relation}: ${v ? `${v.relation} ${v.confidence} ${v.reasons.join("; ")}` : "not proposed"}`;
      });
    expect(found.length, missed.join("\n")).toBeGreaterThanOrEqual(positives.length - 1);
  });

  it("auto-accepts only listed pairs", () => {
    const listed = new Set(
      labels
        .filter((x) => x.relation !== "lookalike")
        .map((l) => pairKey(`polymarket:${l.polymarket}`, `kalshi:${l.kalshi}`)),
    );
    const extra = verdicts.filter((v) => isAutoAcceptable(v) && !listed.has(pairKey(v.marketA, v.marketB)));
    expect(extra.map((v) => `${v.marketA} ~ ${v.marketB}: ${v.reasons.join("; ")}`)).toEqual([]);
  });

  it("is deterministic and order-independent, and matches one new market like the batch", () => {
    const shuffled = [...worldMarkets].reverse();
    const again = matchCatalogs(shuffled);
    const summary = (vs: MatchVerdict[]) =>
      new Map(
        vs
          .filter(isAutoAcceptable)
          .map((v) => [pairKey(v.marketA, v.marketB), `${v.relation} ${v.confidence}`]),
      );
    expect(summary(again)).toEqual(summary(verdicts));

    const matcher = new Matcher();
    const newcomer = worldMarkets.find((m) => m.id === "kalshi:KXFEDDECISION-26DEC-C25")!;
    for (const m of worldMarkets) if (m !== newcomer) matcher.add(m);
    matcher.add(newcomer);
    const best = matcher.match(newcomer)[0]!;
    expect(best.marketB).toBe("polymarket:fed-decision-december-2026-25-bps-cut");
    expect(best.relation).toBe("identity");
    expect(isAutoAcceptable(best)).toBe(true);
  });
});
