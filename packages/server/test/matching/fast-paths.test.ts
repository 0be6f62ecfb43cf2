/**
 * The matcher's fast paths read exactly what their plain definitions read. Each fast path (a scanner
 * instead of a split, a pre-test before a lookup, ASCII read without folding tables, outcomes tested
 * point by point) is checked here against the plain definition it replaced, on seeded random input
 * and on the edge cases. How much faster they are is measured in bench/matching.ts, not here.
 */
import { seededRandom } from "@crossbook/fakes/random";
import { describe, expect, it } from "vitest";
import type { Measure } from "../../src/matching/features";
import { findTeams } from "../../src/matching/knowledge/teams";
import { conceptOf, usesConcept } from "../../src/matching/proposition";
import { measureRelation } from "../../src/matching/relation";
import { words } from "../../src/matching/text";
import type { Relation } from "../../src/matching/types";

const random = seededRandom(20261127);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

/** `words` as first written: split on anything that is not a word character, then trimmed. */
function wordsBySplit(normalized: string): string[] {
  const out: string[] = [];
  for (const raw of normalized.split(/[^a-z0-9.%$°\-/']+/)) {
    if (raw.length === 0) continue;
    let start = 0;
    let end = raw.length;
    const edge = (c: number) => c === 45 || c === 46 || c === 39 || c === 47;
    while (start < end && edge(raw.charCodeAt(start))) start++;
    while (end > start && edge(raw.charCodeAt(end - 1))) end--;
    if (end - start > 2 && raw.charCodeAt(end - 1) === 115 && raw.charCodeAt(end - 2) === 39) end -= 2;
    if (end <= start) continue;
    out.push(raw.slice(start, end));
  }
  return out;
}

describe("words", () => {
  // Pieces of text with no word alias among them (an alias is looked up the same way either way).
  const pieces = [
    "a",
    "z",
    "0",
    "9",
    ".",
    "%",
    "$",
    "°",
    "-",
    "/",
    "'",
    "s",
    "'s",
    " ",
    "  ",
    "A",
    "é",
    "?",
    "\n",
    "😀",
    "fed",
  ];

  it("reads the words a split on non-word characters reads", () => {
    for (let n = 0; n < 5000; n++) {
      let text = "";
      const length = Math.floor(random() * 12);
      for (let i = 0; i < length; i++) text += pick(pieces);
      expect(words(text), JSON.stringify(text)).toEqual(wordsBySplit(text));
    }
  });

  it("trims edge punctuation and possessives, keeps inner ones, applies the word aliases", () => {
    expect(words(" -.'/ ")).toEqual([]);
    expect(words("u.s. 5% $100 °f o'neil's a-b/c..")).toEqual(["u.s", "5%", "$100", "°f", "o'neil", "a-b/c"]);
    expect(words("wins beats hikes")).toEqual(["win", "beat", "hike"]);
  });
});

/** `usesConcept` as first written: every word's concept, and each part's of a hyphenated word. */
function usesConceptByScan(ws: Iterable<string>, concept: string): boolean {
  for (const w of ws) {
    if (conceptOf(w) === concept) return true;
    if (w.includes("-"))
      for (const part of w.split("-")) if (part.length > 1 && conceptOf(part) === concept) return true;
  }
  return false;
}

describe("usesConcept", () => {
  const vocabulary = [
    "win",
    "wins",
    "winner",
    "champion",
    "championship",
    "out",
    "leave",
    "leaves",
    "resign",
    "resignation",
    "nominee",
    "nomination",
    "nominated",
    "presidency",
    "presidential",
    "arrested",
    "meet",
    "meeting",
    "talks",
    "release",
    "released",
    "launch",
    "launches",
    "qualify",
    "qualifies",
    "us-iran",
    "man-city",
    "50-50",
    "re-elected",
    "a-b",
    "x",
    "tie",
    "ties",
    "cut",
    "cuts",
    "hike",
    "ab",
    "abcdefgh",
    "abcde",
  ];

  it("answers what a scan of every word's concept answers", () => {
    const concepts = [...new Set(vocabulary.flatMap((w) => [conceptOf(w), ...w.split("-").map(conceptOf)]))];
    for (let n = 0; n < 2000; n++) {
      const ws = new Set<string>();
      const size = Math.floor(random() * 6);
      for (let i = 0; i < size; i++) ws.add(pick(vocabulary));
      const concept = pick(concepts);
      expect(usesConcept(ws, concept), `${[...ws].join(" ")} / ${concept}`).toBe(
        usesConceptByScan(ws, concept),
      );
    }
  });
});

describe("team mentions in ASCII text", () => {
  it("are the ones the folding path finds", () => {
    const texts = [
      "Will the San Antonio Spurs beat the Los Angeles Lakers?",
      "Los Angeles L at Boston (Nov 3) - KC vs. LAL, St. Louis Blues & Texas A&M",
      "Will Borussia Dortmund, Bayern Munich or Paris Saint-Germain win? HEAT at MIA; the heat of summer",
      "KANSAS CITY CHIEFS VS BUFFALO BILLS: who wins?",
    ];
    for (const text of texts)
      for (const leagues of [null, ["nba"], ["nfl"], ["bundesliga", "ligue1"]]) {
        // A character outside ASCII after the text sends it through the folding path.
        const folded = findTeams(`${text} é`, leagues).filter((m) => m.end <= text.length);
        expect(findTeams(text, leagues), `${text} / ${leagues}`).toEqual(folded);
      }
  });
});

/** `measureRelation` as first written: the outcome at every point of a set of points. */
function measureRelationBySet(a: Measure, b: Measure): Relation {
  const accepts = (m: Measure, v: number): boolean => {
    const eps = 1e-9;
    switch (m.comparator) {
      case ">":
        return v > m.value + eps;
      case ">=":
        return v >= m.value - eps;
      case "<":
        return v < m.value - eps;
      case "<=":
        return v <= m.value + eps;
      case "=":
        return Math.abs(v - m.value) <= eps;
      case "!=":
        return Math.abs(v - m.value) > eps;
      case "between":
        return (
          (m.lowOpen ? v > m.value + eps : v >= m.value - eps) &&
          (m.highOpen ? v < (m.high ?? m.value) - eps : v <= (m.high ?? m.value) + eps)
        );
    }
  };
  const step = Math.max(a.step, b.step);
  const bounds = [a.value, a.high, b.value, b.high].filter((x): x is number => x !== undefined);
  const delta = step > 0 ? step : 1e-6;
  const points = new Set<number>();
  for (const x of bounds) for (const d of [-2, -1, 0, 1, 2]) points.add(x + d * delta);
  const sorted = [...bounds].sort((x, y) => x - y);
  for (let i = 0; i + 1 < sorted.length; i++) points.add((sorted[i]! + sorted[i + 1]!) / 2);
  points.add(sorted[0]! - 1000 * delta - 1e6);
  points.add(sorted[sorted.length - 1]! + 1000 * delta + 1e6);
  let same = true;
  let opposite = true;
  let aImpliesB = true;
  let bImpliesA = true;
  let both = false;
  for (let p of points) {
    if (step > 0) p = Math.round(p / step) * step;
    const x = accepts(a, p);
    const y = accepts(b, p);
    if (x !== y) same = false;
    if (x === y) opposite = false;
    if (x && !y) aImpliesB = false;
    if (y && !x) bImpliesA = false;
    if (x && y) both = true;
  }
  if (same) return "identity";
  if (opposite) return "complement";
  if (aImpliesB) return "subset";
  if (bImpliesA) return "superset";
  return both ? "overlap" : "disjoint";
}

describe("measureRelation", () => {
  const comparators = [">", ">=", "<", "<=", "=", "!=", "between"] as const;
  const measure = (): Measure => {
    const comparator = pick(comparators);
    const value = pick([0, 1, 2, 2.5, 3, 44.5, 45, 100, -25]);
    const m: Measure = {
      unit: "n",
      comparator,
      value,
      step: pick([0, 0, 1, 0.1, 25]),
      from: "rules",
      text: "",
    };
    if (comparator === "between") {
      m.high = value + pick([0.5, 1, 2, 10]);
      m.lowOpen = random() < 0.3;
      m.highOpen = random() < 0.3;
    }
    return m;
  };

  it("gives the relation the set of every tested point gives", () => {
    for (let n = 0; n < 5000; n++) {
      const a = measure();
      const b = measure();
      expect(measureRelation(a, b), JSON.stringify([a, b])).toBe(measureRelationBySet(a, b));
    }
  });
});
