import { describe, expect, it } from "vitest";
import { extractFeatures } from "../../src/matching/features";
import predicates from "../../src/matching/knowledge/predicates.json" with { type: "json" };
import { isAutoAcceptable } from "../../src/matching/matcher";
import { conceptOf } from "../../src/matching/proposition";
import { compareContracts } from "../../src/matching/relation";
import { market } from "./markets";

describe("the predicate data (knowledge/predicates.json)", () => {
  it("puts no word in two groups, and every word finds its group", () => {
    const seen = new Map<string, string>();
    for (const [group, members] of Object.entries(predicates.groups))
      for (const w of members) {
        expect(seen.get(w), `${w} in ${group} and ${seen.get(w)}`).toBeUndefined();
        seen.set(w, group);
        expect(conceptOf(w)).toBe(`=${group}`);
      }
  });

  it("folds word forms the groups do not list to one stem", () => {
    expect(conceptOf("nomination")).toBe(conceptOf("nominee"));
    expect(conceptOf("presidency")).toBe(conceptOf("presidential"));
    expect(conceptOf("arrested")).not.toBe(conceptOf("out"));
  });
});

describe("relations on real wording (issue 20)", () => {
  const rules = (s: string) =>
    `${s} Otherwise, this market will resolve to "No". The resolution source is a consensus of credible reporting.`;

  it("does not auto-verify the same person and deadline with another predicate", () => {
    const out = market(
      "polymarket:out",
      "polymarket",
      "Netanyahu out by end of 2026?",
      rules(
        'This market will resolve to "Yes" if Benjamin Netanyahu ceases to be Prime Minister of Israel by December 31, 2026.',
      ),
    );
    const arrested = market(
      "kalshi:ARREST",
      "kalshi",
      "Will Benjamin Netanyahu be arrested before Jan 1, 2027?",
      "If Benjamin Netanyahu has been arrested before Jan 1, 2027, then the market resolves to Yes.",
    );
    const v = compareContracts(extractFeatures(out), extractFeatures(arrested));
    expect(v).not.toBeNull();
    expect(isAutoAcceptable(v!)).toBe(false);
    expect(v!.reasons.join(" ")).toMatch(/arrested/);
  });

  it("reports an edge clause as a caveat and keeps the relation", () => {
    const a = market(
      "polymarket:holmes",
      "polymarket",
      "Will Trump pardon Elizabeth Holmes before 2027?",
      rules(
        'This market will resolve to "Yes" if Donald Trump pardons Elizabeth Holmes by December 31, 2026. If the pardon is announced but not yet granted, the market resolves to No.',
      ),
    );
    const b = market(
      "kalshi:HOLMES",
      "kalshi",
      "Will Elizabeth Holmes receive a presidential pardon from Trump before Jan 1, 2027?",
      "If Elizabeth Holmes receives a presidential pardon from Donald Trump before Jan 1, 2027, then the market resolves to Yes. If the pardon process is delayed, the market resolves to Yes only once granted.",
    );
    const v = compareContracts(extractFeatures(a), extractFeatures(b))!;
    expect(v.relation).toBe("identity");
    expect(v.caveats.length).toBeGreaterThan(0);
  });

  it("reads a season named by either year and a seat with or without its zero", () => {
    const a = market(
      "polymarket:mi7",
      "polymarket",
      "Will the Republican Party win the MI-07 House seat?",
      rules(
        "This market will resolve according to the party of the candidate who wins the MI-07 congressional district seat in the 2026 midterm elections.",
      ),
    );
    const b = market(
      "kalshi:HOUSEMI7-26-R",
      "kalshi",
      "Will Republican win the House race for MI-7?",
      "If the House member sworn in for MI-07 for the term beginning in 2027 is a member of the Republican party, then the market resolves to Yes.",
    );
    const v = compareContracts(extractFeatures(a), extractFeatures(b))!;
    expect(v.relation).toBe("identity");
    expect(v.reasons.join(" ")).not.toMatch(/period differs/);
  });

  it("reads the other major party's market of one race as its complement, with a caveat", () => {
    const dem = market(
      "polymarket:fl-d",
      "polymarket",
      "Will the Democrats win the Florida Senate race in 2026?",
      rules("This market will resolve according to the winner of the 2026 Florida U.S. Senate election."),
    );
    const rep = market(
      "kalshi:SENATEFLS-26-R",
      "kalshi",
      "Will Republicans win the Senate race in Florida? (Ashley Moody)",
      "If a representative of the Republican party is sworn in as a Senator of Florida for the term beginning in 2027, then the market resolves to Yes.",
      { yesLabel: "Ashley Moody" },
    );
    const v = compareContracts(extractFeatures(dem), extractFeatures(rep))!;
    expect(v.relation).toBe("complement");
    expect(v.polarity).toBe("inverted");
    expect(v.caveats.join(" ")).toMatch(/neither major party/);
    // Another state's race is another contract.
    const kansas = market(
      "kalshi:SENATEKS-26-R",
      "kalshi",
      "Will Republicans win the Senate race in Kansas?",
      "If a representative of the Republican party is sworn in as a Senator of Kansas for the term beginning in 2027, then the market resolves to Yes.",
    );
    const other = compareContracts(extractFeatures(dem), extractFeatures(kansas));
    expect(other === null || !isAutoAcceptable(other)).toBe(true);
  });

  it("reads no side from a YES label that repeats the question", () => {
    const question = "Will Dallas beat Philadelphia on January 3, 2027?";
    const k = market(
      "kalshi:KXNFLGAME-27JAN03DALPHI-DAL",
      "kalshi",
      question,
      "If the Dallas Cowboys win the game against the Philadelphia Eagles scheduled for January 3, 2027, the market resolves to Yes.",
      { yesLabel: question },
    );
    // The label's last city (Philadelphia) is not the side YES is about.
    expect(extractFeatures(k).yesSubject).not.toBe("eagles");
    const pm = market(
      "polymarket:dal-phi",
      "polymarket",
      "Cowboys vs. Eagles",
      "This market will resolve to Cowboys if the Dallas Cowboys win their game against the Philadelphia Eagles scheduled for January 3, 2027, and to Eagles otherwise.",
      { yesLabel: "Cowboys", noLabel: "Eagles" },
    );
    expect(compareContracts(extractFeatures(pm), extractFeatures(k))?.relation).not.toBe("complement");
  });

  it("tells an announcement stated in Kalshi's condition sentence from the event itself", () => {
    const ipo = market(
      "polymarket:anthropic-ipo",
      "polymarket",
      "Will Anthropic IPO by December 31, 2026?",
      rules(
        'This market will resolve to "Yes" if Anthropic shares are listed on a public securities exchange and open for trading by 11:59 PM ET on December 31, 2026.',
      ),
    );
    const confirms = market(
      "kalshi:KXIPO-26-ANTHROPIC",
      "kalshi",
      "Who will IPO before 2027? (Anthropic)",
      "If Anthropic confirms an IPO before Jan 1, 2027, then the market resolves to Yes.",
      { yesLabel: "Anthropic" },
    );
    const v = compareContracts(extractFeatures(ipo), extractFeatures(confirms))!;
    expect(isAutoAcceptable(v)).toBe(false);
    expect(v.reasons.join(" ")).toMatch(/an announcement/);
  });
});
