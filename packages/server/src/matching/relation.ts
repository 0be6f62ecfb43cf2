/**
 * Two markets' features -> how their YES legs relate, how sure we are, and why. The rules decide:
 * a threshold's comparator is taken from the rules text when it states one, and any difference in
 * settlement source, observation time, window, what counts (announcement, race call, certification)
 * or tie/cancellation handling makes two otherwise identical questions a different contract.
 */
import { type ContractFeatures, type Measure, measureText, mentionsEntity, sameSide } from "./features";
import { conceptOf, predicateOf, uncoveredWords, usesConcept } from "./proposition";
import { contentWords, normalizeText } from "./text";
import type { MatchVerdict, Polarity, Relation } from "./types";

/**
 * The content words of a settlement source, as a set. Remembered: a catalog states a handful of
 * sources, and a comparison with no source group in common asks for both of its markets' words,
 * so rebuilding them was garbage on every such pair. The sets are shared: read them, never change them.
 */
function sourceWords(text: string | null): ReadonlySet<string> {
  if (!text) return NO_WORDS;
  let out = sourceWordsCache.get(text);
  if (out === undefined) {
    out = new Set(contentWords(normalizeText(text)));
    if (sourceWordsCache.size >= 5_000) sourceWordsCache.clear();
    sourceWordsCache.set(text, out);
  }
  return out;
}

const NO_WORDS: ReadonlySet<string> = new Set();
const sourceWordsCache = new Map<string, ReadonlySet<string>>();

/** Whether two sets share an element (without spreading either into an array). */
function intersects<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  for (const x of a) if (b.has(x)) return true;
  return false;
}

export type Idf = (word: string) => number;

/**
 * The confidence at most of a verdict the matcher cannot vouch for though nothing in it conflicts: a
 * question's words the other market never uses, a name on one side only, a Kalshi ticker's year
 * against its title's, named topics that differ. Below the auto-accept threshold, so a person reads
 * both markets.
 */
export const UNSURE_CONFIDENCE = 0.85;

const SOURCE_GROUP_NAMES: Record<string, string> = {
  station: "weather station",
  wxsource: "weather data source",
  index: "price index or exchange",
  cpi: "CPI measure (core vs headline)",
  adjust: "seasonal adjustment",
  change: "period of change (month-over-month vs year-over-year)",
  release: "which release counts (first vs revised)",
  boxoffice: "box-office source",
  chart: "chart",
  reviews: "review aggregator",
  poll: "polling average",
  approval: "approval source",
  domain: "box-office territory (domestic vs worldwide)",
  region: "country or region",
  stage: "stage (round, primary, season)",
  agency: "reporting agency",
  markettype: "kind of market (spread or total vs winner)",
  span: "span counted (opening weekend vs first week)",
  evidence: "what evidence counts (official announcement vs credible reports)",
  period: "what part of the game counts (regulation vs overtime)",
};

/** Groups that name who publishes the figure (as opposed to which variant of it). */
const SOURCE_TYPE_GROUPS = new Set([
  "station",
  "wxsource",
  "index",
  "agency",
  "boxoffice",
  "chart",
  "reviews",
  "poll",
  "approval",
]);

/** Groups where a value on one side only still means a different contract. */
const ONE_SIDED_CONFLICT = new Set(["cpi", "domain", "region", "stage", "markettype"]);

const BASIS_TEXT: Record<string, string> = {
  announce: "an announcement",
  call: "a race call",
  certify: "certification",
  inaugurate: "taking office",
  nominate: "a nomination",
  confirm: "Senate confirmation",
  file: "a filing",
  sign: "signing into law",
  pass: "passing a chamber",
  release: "a release",
};

function cosine(a: Map<string, number>, b: Map<string, number>, idf: Idf): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  // Keys, then each count: `for (const [w, c] of a)` made an array of every entry it destructured.
  for (const w of a.keys()) {
    const x = a.get(w)! * idf(w);
    na += x * x;
    const cb = b.get(w);
    if (cb !== undefined) dot += x * cb * idf(w);
  }
  for (const w of b.keys()) {
    const y = b.get(w)! * idf(w);
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Whether `v` is in the YES set of a measure. */
function accepts(m: Measure, v: number): boolean {
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
}

/**
 * Set relation of two measures on the same quantity, by testing every point where either set can
 * change (each bound, a step either side of it, and between bounds). On a stepped quantity only
 * values on the grid are tested, so "> 5 cuts" equals "≥ 6 cuts".
 */
export function measureRelation(a: Measure, b: Measure): Relation {
  const step = Math.max(a.step, b.step);
  const sorted = sortedBounds(a, b);
  const delta = step > 0 ? step : 1e-6;
  // Which (A, B) outcomes the points show, one bit each (see `outcomeBit`). Each point is tested as
  // it comes rather than gathered into a set first: testing a point twice shows nothing new.
  let seen = 0;
  for (const x of sorted) for (let d = -2; d <= 2; d++) seen |= outcomeBit(a, b, step, x + d * delta);
  for (let i = 0; i + 1 < sorted.length; i++)
    seen |= outcomeBit(a, b, step, (sorted[i]! + sorted[i + 1]!) / 2);
  seen |= outcomeBit(a, b, step, sorted[0]! - 1000 * delta - 1e6);
  seen |= outcomeBit(a, b, step, sorted[sorted.length - 1]! + 1000 * delta + 1e6);
  const aOnly = (seen & A_ONLY) !== 0;
  const bOnly = (seen & B_ONLY) !== 0;
  if (!aOnly && !bOnly) return "identity";
  if ((seen & (NEITHER | BOTH)) === 0) return "complement";
  if (!aOnly) return "subset";
  if (!bOnly) return "superset";
  return (seen & BOTH) !== 0 ? "overlap" : "disjoint";
}

/**
 * The bounds of two measures in increasing order (at most four): one array, sorted by insertion,
 * where filtering and sorting made three (the sort copies its input).
 */
function sortedBounds(a: Measure, b: Measure): number[] {
  const out: number[] = [];
  for (const x of [a.value, a.high, b.value, b.high]) {
    if (x === undefined) continue;
    let at = out.length;
    while (at > 0 && out[at - 1]! > x) {
      out[at] = out[at - 1]!;
      at--;
    }
    out[at] = x;
  }
  return out;
}

/** The four outcomes of a point for two measures: neither, only B, only A, or both accept it. */
const NEITHER = 1;
const B_ONLY = 2;
const A_ONLY = 4;
const BOTH = 8;

/** The outcome at `p` (on the step's grid when there is one). */
function outcomeBit(a: Measure, b: Measure, step: number, p: number): number {
  const q = step > 0 ? Math.round(p / step) * step : p;
  return accepts(a, q) ? (accepts(b, q) ? BOTH : A_ONLY) : accepts(b, q) ? B_ONLY : NEITHER;
}

function sameUnit(a: Measure, b: Measure): boolean {
  if (a.unit === b.unit) return true;
  if (isPercent(a.unit) && isPercent(b.unit)) return true;
  return (a.unit === "n" && b.unit !== "usd") || (b.unit === "n" && a.unit !== "usd");
}

function isPercent(unit: string): boolean {
  return unit === "%" || unit === "pp";
}

function dayDiff(a: string, b: string): number {
  return Math.round((Date.parse(`${a}T00:00:00Z`) - Date.parse(`${b}T00:00:00Z`)) / 86_400_000);
}

type DateAgreement =
  | { kind: "exact"; day: string }
  | { kind: "weak"; text: string; mild?: boolean }
  | { kind: "unknown" }
  | { kind: "window"; aEarlier: boolean; text: string }
  | { kind: "conflict"; text: string; closeOnly?: boolean };

function compareDates(a: ContractFeatures, b: ContractFeatures): DateAgreement {
  const da = a.date;
  const db = b.date;
  if (da && db && da.level === "day" && db.level === "day") {
    if (da.key === db.key) {
      if (da.kind !== db.kind && (da.kind === "in" || db.kind === "in"))
        return { kind: "weak", text: `same date ${da.key}, read differently` };
      // "at the end of December" (the state at one instant) vs "before 2027" (at any time until then).
      if (da.kind !== db.kind && (da.instant || db.instant))
        return {
          kind: "window",
          aEarlier: da.kind === "on",
          text: `observed ${da.kind === "on" ? "on" : "by"} ${da.key} on A, ${db.kind === "on" ? "on" : "by"} it on B`,
        };
      return { kind: "exact", day: da.key };
    }
    if (da.kind === "by" && db.kind === "by")
      return { kind: "window", aEarlier: da.key < db.key, text: `deadline differs: ${da.key} vs ${db.key}` };
    // Each names the other's day ("opening December 18" vs "the December 18-20 weekend").
    if (a.allDays.has(db.key) && b.allDays.has(da.key))
      return { kind: "weak", text: `dates ${da.key} and ${db.key} both named on each side` };
    return { kind: "conflict", text: `date differs: ${da.key} vs ${db.key}` };
  }
  if (da && db && da.key === db.key) return { kind: "exact", day: da.key };
  // One season named by either of its years ("2026-27" and "2027").
  if (da && db && da.level === "year" && db.level === "year") {
    const ya = [da.key, da.alt];
    if ([db.key, db.alt].some((y) => y !== undefined && ya.includes(y)))
      return { kind: "weak", text: `same season (${da.alt ?? da.key} / ${db.alt ?? db.key})` };
  }
  if (da && db) {
    const [short, long] = da.key.length <= db.key.length ? [da, db] : [db, da];
    const prefix = short.level === "quarter" ? short.key.slice(0, 4) : short.key;
    if (long.key.startsWith(prefix)) {
      // "in 2026" and "by December 31, 2026" agree; "in Q2" and "by June 30" do not.
      const endOfPeriod =
        long.level === "day" &&
        (short.level === "year"
          ? long.key.endsWith("-12-31")
          : short.level === "month"
            ? dayDiff(long.key, `${short.key}-01`) >= 27
            : false);
      // A year against one month of it ("in 2026" vs "in November 2026") is a different period.
      const nested = short.level === "year" && long.level === "month";
      if (
        short.level === "quarter" ||
        nested ||
        (short.kind !== long.kind && long.kind === "by" && !endOfPeriod)
      )
        return { kind: "conflict", text: `window differs: ${da.key} vs ${db.key}` };
      // A month and a day inside it ("the January 2027 meeting", "January 27, 2027"): one event.
      const mild =
        short.level === "month" && long.level === "day" && short.kind !== "by" && long.kind !== "by";
      return { kind: "weak", text: `dates agree at ${short.level} level (${short.key})`, mild };
    }
    if (da.level === db.level) return { kind: "conflict", text: `period differs: ${da.key} vs ${db.key}` };
    return { kind: "conflict", text: `date differs: ${da.key} vs ${db.key}` };
  }
  // One side dates its question, the other only has a close time.
  const dayA = da?.level === "day" ? da.key : a.closeDay;
  const dayB = db?.level === "day" ? db.key : b.closeDay;
  if (dayA && dayB) {
    const diff = Math.abs(dayDiff(dayA, dayB));
    if (diff <= 1) return { kind: "weak", text: `close dates agree (${dayA})` };
    if (diff > 7)
      return {
        kind: "conflict",
        text: `close dates differ: ${dayA} vs ${dayB}`,
        closeOnly: da?.level !== "day" && db?.level !== "day",
      };
    return { kind: "weak", text: `close dates within a week (${dayA} vs ${dayB})` };
  }
  return { kind: "unknown" };
}

function setText(s: Set<string>): string {
  return [...s].sort().join(", ");
}

export interface CompareOptions {
  idf?: Idf;
}

const UNIT_IDF: Idf = () => 1;

// The subject checks of `compareContracts`, as functions of the module rather than closures made
// anew for every pair compared: a comparison runs a dozen times per market, and each closure (named,
// under the TypeScript loader) was garbage the collector then paused for.

/** What a subject check needs to know about the pair being compared. */
interface Pair {
  a: ContractFeatures;
  b: ContractFeatures;
  /** The markets share a named topic (competition, award, office) or a team. */
  sharedTopic: boolean;
  sharedTeam: boolean;
  /** The two major parties' markets of one race: the parties differ, the race must not. */
  partySwap: boolean;
}

/** Whether market `f` of the pair mentions entity `e` somewhere. */
function mentions(pair: Pair, f: ContractFeatures, e: string): boolean {
  return (
    mentionsEntity(f.allWords, e) ||
    // A word of a named competition the other side names its own way ("NHL Stanley Cup" / "Stanley
    // Cup Finals", "Super Bowl" / "Pro Football Championship").
    ((pair.a.topicWords.has(e) || pair.b.topicWords.has(e)) && pair.sharedTopic) ||
    // A word of a team's name the other side writes another way ("Borussia Dortmund" / "Dortmund").
    ((pair.a.teamWords.has(e) || pair.b.teamWords.has(e)) && pair.sharedTeam) ||
    usesConcept(f.allWords, conceptOf(e)) ||
    // "US-Iran" is mentioned by "the U.S. and Iran".
    (e.includes("-") && e.split("-").every((part) => part.length < 2 || mentions(pair, f, part)))
  );
}

/**
 * The subject entities of `f` that `other` never mentions: `core` those of the question itself,
 * `aside` those named only in an aside, or that are part of a longer name `other` writes shorter.
 */
function missingSubjects(pair: Pair, f: ContractFeatures, other: ContractFeatures): Missing {
  let missing: { core: string[]; aside: string[] } | null = null;
  for (const e of f.subjectEntities) {
    if (mentions(pair, other, e) || (pair.partySwap && (e === "democrat" || e === "republican"))) continue;
    missing ??= { core: [], aside: [] };
    if (f.coreSubject.has(e) && !shortened(pair, f, other, e)) missing.core.push(e);
    else missing.aside.push(e);
  }
  return missing ?? NOTHING_MISSING;
}

interface Missing {
  readonly core: readonly string[];
  readonly aside: readonly string[];
}

/** Shared by every pair whose subjects are all found (most of them): read it, never change it. */
const NOTHING_MISSING: Missing = Object.freeze({ core: Object.freeze([]), aside: Object.freeze([]) });

/**
 * Part of a longer form of a name the other side writes shorter ("Borussia Dortmund" / "Dortmund",
 * "Francis James Allison Oyague" / "Francis Allison"): an aside, not another subject.
 * Two other words of the run must be there: one alone could be another name ("Ivanka Trump" /
 * "Donald Trump") or a headline word ("the Florida Senate race" / "the Senate").
 */
function shortened(pair: Pair, f: ContractFeatures, other: ContractFeatures, e: string): boolean {
  let found = 0;
  for (const o of f.nameRunOf.get(e) ?? [])
    if (o !== e && mentions(pair, other, o) && ++found >= 2) return true;
  return false;
}

/** Whether every side of `f`'s contest is a side of `other`'s or a word `other` writes. */
function namesSidesOf(f: ContractFeatures, other: ContractFeatures): boolean {
  for (const p of f.participants) if (!hasSide(other.participants, p) && !other.allWords.has(p)) return false;
  return true;
}

/** Whether one of `sides` is the same side as `side`. */
function hasSide(sides: ReadonlySet<string>, side: string): boolean {
  for (const q of sides) if (sameSide(side, q)) return true;
  return false;
}

/**
 * How A's YES leg relates to B's. Null when they are not about the same thing (different subject,
 * period or quantity): those pairs are not worth a person's look.
 */
export function compareContracts(
  a: ContractFeatures,
  b: ContractFeatures,
  options: CompareOptions = {},
): MatchVerdict | null {
  const idf = options.idf ?? UNIT_IDF;
  const reasons: string[] = [];
  const conflicts: string[] = [];
  /** Differences in edge clauses only: the relation stands, arbitrage users may filter on them. */
  const caveats: string[] = [];
  const blockers: string[] = [];
  let confidence = 1;

  // --- Subject -------------------------------------------------------------------------------
  // The two major parties' markets of one race: the parties differ, the race must not.
  const partySwap = a.yesParty !== null && b.yesParty !== null && a.yesParty !== b.yesParty;
  const pair: Pair = {
    a,
    b,
    sharedTopic: intersects(a.topics, b.topics),
    sharedTeam: intersects(a.teams, b.teams),
    partySwap,
  };
  const missA = missingSubjects(pair, a, b);
  const missB = missingSubjects(pair, b, a);
  const missingA = missA.core;
  const missingB = missB.core;
  // Names only in an aside (a candidate Kalshi appends to a party market): detail, lightly weighed.
  if (missA.aside.length + missB.aside.length > 0) {
    const asides = [...missA.aside, ...missB.aside];
    confidence *= 0.98 ** Math.min(3, asides.length);
    reasons.push(`named in an aside on one side only: ${asides.join(", ")}`);
  }
  const cos = Math.max(cosine(a.content, b.content, idf), 0.9 * cosine(a.rulesContent, b.rulesContent, idf));
  // Both markets are about one head-to-head contest when each names the other's sides somewhere.
  const contest =
    a.participants.size >= 2 && b.participants.size >= 2 && namesSidesOf(a, b) && namesSidesOf(b, a);
  let templated = false;
  if (missingA.length > 0 && missingB.length > 0) {
    // Same template, other subject: "Will NY win the Finals?" vs "Will Boston win the Finals?".
    if (cos < 0.45) return null;
    if (contest && missingA.length + missingB.length <= 2 && cos >= 0.6) {
      confidence *= 0.92;
    } else {
      templated = true;
      conflicts.push(`subject differs: ${missingA.join(", ")} on A vs ${missingB.join(", ")} on B`);
    }
  } else if (missingA.length > 0 || missingB.length > 0) {
    // A name on one side only: often a Title Case headline word, sometimes a real difference ("the
    // Florida Senate race" vs "control of the Senate"). Either way a person should look.
    if (cos < 0.3) return null;
    confidence = Math.min(
      confidence * 0.96 ** Math.min(3, missingA.length + missingB.length),
      UNSURE_CONFIDENCE,
    );
    reasons.push(`named on one side only: ${[...missingA, ...missingB].join(", ")}`);
  } else if (cos < 0.2) {
    return null;
  }
  // Named entities agreeing both ways carry the subject; wording only breaks ties.
  const subjectScore =
    a.entities.size > 0 && b.entities.size > 0
      ? cos >= 0.5
        ? 1
        : cos >= 0.25
          ? 0.98
          : 0.94
      : Math.min(1, 0.75 + cos * 0.35);
  confidence *= templated ? 0.85 : subjectScore;
  if (!templated)
    reasons.push(
      `same subject (${setText(a.entities) || "no named entities"}); wording similarity ${cos.toFixed(2)}`,
    );

  // --- Dates ---------------------------------------------------------------------------------
  const dates = compareDates(a, b);
  let windowRelation: Relation | null = null;
  switch (dates.kind) {
    case "exact":
      reasons.push(`same ${dates.day.length === 10 ? "date" : "period"} ${dates.day}`);
      break;
    case "weak":
      reasons.push(dates.text);
      confidence *= dates.mild ? 0.97 : 0.93;
      break;
    case "unknown":
      reasons.push("no date on either side");
      confidence *= 0.85;
      break;
    case "window":
      windowRelation = dates.aEarlier ? "subset" : "superset";
      conflicts.push(dates.text);
      break;
    case "conflict":
      if (cos < 0.5 && !contest) return null;
      // Neither question dates itself: only the close instants differ, an edge clause, unless the
      // markets are games (another date is another game).
      if (dates.closeOnly && !contest) caveats.push(dates.text);
      else conflicts.push(dates.text);
      break;
  }

  // --- The condition on YES ------------------------------------------------------------------
  let relation: Relation = "identity";
  const ma = a.measure;
  const mb = b.measure;
  if (ma && mb) {
    if (!sameUnit(ma, mb)) {
      conflicts.push(`different quantities: ${ma.text} vs ${mb.text}`);
      relation = "overlap";
      confidence *= 0.7;
    } else {
      relation = measureRelation(ma, mb);
      const described = `${ma.text} vs ${mb.text}`;
      if (relation === "identity")
        reasons.push(`same condition: ${ma.text}${ma.text !== mb.text ? ` (≡ ${mb.text})` : ""}`);
      else if (relation === "complement")
        reasons.push(`opposite conditions: ${described} (YES on one is NO on the other)`);
      else if (
        ma.comparator !== mb.comparator &&
        ma.value === mb.value &&
        ma.comparator !== "between" &&
        mb.comparator !== "between"
      )
        conflicts.push(`comparator differs: ${described}`);
      else if (ma.comparator === "between" || mb.comparator === "between")
        conflicts.push(`threshold vs bucket: ${described}`);
      else conflicts.push(`threshold differs: ${described}`);
      if (ma.from !== "rules" || mb.from !== "rules") confidence *= 0.95;
    }
  } else if ((ma || mb) && (ma ?? mb)!.from === "rules" && !a.measureInQuestion && !b.measureInQuestion) {
    // A number only one side's rules mention while neither question asks about a number ("a
    // candidate must secure over 50% to win outright in the first round"): how the event works,
    // not a condition of its own.
    reasons.push(
      `only ${ma ? "A" : "B"}'s rules state a number (${(ma ?? mb)!.text}); neither question asks one`,
    );
    confidence *= 0.95;
  } else if (ma || mb) {
    const m = (ma ?? mb)!;
    conflicts.push(`only ${ma ? "A" : "B"} states a numeric condition (${m.text})`);
    relation = "overlap";
    confidence *= 0.6;
  } else if ((a.yesSubject === "draw") !== (b.yesSubject === "draw") && (a.yesSubject || b.yesSubject)) {
    relation = "disjoint";
    conflicts.push(`YES is a draw on ${a.yesSubject === "draw" ? "A" : "B"} only`);
  } else if (partySwap && (a.legislative || a.executive) && (b.legislative || b.executive)) {
    // One race, the other major party on each side: YES on one is NO on the other, unless neither
    // major party wins (an independent), where both pay No.
    relation = "complement";
    reasons.push(`opposite major parties of one race: YES is ${a.yesParty} on A and ${b.yesParty} on B`);
    caveats.push("a winner from neither major party (an independent) resolves both No");
    confidence *= 0.98;
  } else if (contest && a.yesSubject && b.yesSubject) {
    if (sameSide(a.yesSubject, b.yesSubject)) {
      reasons.push(`same side of the contest: ${a.yesSubject}`);
    } else if (hasSide(a.participants, a.yesSubject) && hasSide(a.participants, b.yesSubject)) {
      if (a.drawPossible || b.drawPossible) {
        relation = "disjoint";
        reasons.push(
          `opposite sides (${a.yesSubject} vs ${b.yesSubject}) of a contest that can be drawn: not complements`,
        );
      } else {
        relation = "complement";
        reasons.push(`opposite sides of the contest: YES is ${a.yesSubject} on A and ${b.yesSubject} on B`);
      }
    } else {
      confidence *= 0.7;
    }
  } else {
    // Opposite stances on the same thing ("remains" vs "leaves", "holds" vs "flips"), or a
    // negation on one side only.
    const opposed = [...a.stances].some((x) => {
      const [topic, sign] = x.split(":");
      return topic !== "happen" && b.stances.has(`${topic}:${sign === "+" ? "-" : "+"}`) && !b.stances.has(x);
    });
    const negA = a.stances.has("happen:-");
    const negB = b.stances.has("happen:-");
    if (opposed !== (negA !== negB)) {
      relation = "complement";
      reasons.push("opposite framing of the same question (YES on one is NO on the other)");
      confidence *= opposed ? 0.96 : 0.92;
    } else {
      reasons.push("same question, no numeric condition");
      confidence *= 0.98;
    }
    if (
      a.yesSubject &&
      b.yesSubject &&
      !sameSide(a.yesSubject, b.yesSubject) &&
      !contest &&
      !inQuestion(b, a.yesSubject) &&
      !inQuestion(a, b.yesSubject)
    ) {
      conflicts.push(`YES is about ${a.yesSubject} on A and ${b.yesSubject} on B`);
      relation = "disjoint";
    }
  }

  // --- Observation: an instant vs any time before a deadline ----------------------------------
  const touchPair =
    (a.observation === "throughout" && b.observation === "any_time") ||
    (a.observation === "any_time" && b.observation === "throughout");
  if (touchPair && relation !== "complement" && relation !== "disjoint") {
    conflicts.push(
      "observation differs: stays throughout the window on one side, reached at any time on the other",
    );
  } else if (
    !touchPair &&
    a.observation &&
    b.observation &&
    a.observation !== b.observation &&
    (relation === "identity" || relation === "complement")
  ) {
    conflicts.push(
      `observation differs: ${a.observation === "at_time" ? "price at an instant" : "reached at any time"} on A vs ${b.observation === "at_time" ? "price at an instant" : "reached at any time"} on B`,
    );
    if (relation === "identity") windowRelation = a.observation === "at_time" ? "subset" : "superset";
  }
  if (a.minuteUtc !== null && b.minuteUtc !== null && a.minuteUtc !== b.minuteUtc) {
    conflicts.push(`observation time differs: ${utcText(a.minuteUtc)} vs ${utcText(b.minuteUtc)}`);
  }

  // --- Settlement source and measure variants ----------------------------------------------------
  let sharedGroups = 0;
  const groups = keysOfEither(a.sources, b.sources);
  for (const g of groups) {
    const sa = a.sources.get(g);
    const sb = b.sources.get(g);
    if (g === "evidence" && sa && sb && setText(sa) !== setText(sb)) {
      conflicts.push(`what evidence counts differs: ${setText(sa)} vs ${setText(sb)}`);
    } else if (sa && sb) {
      sharedGroups++;
      if (!intersects(sa, sb))
        conflicts.push(`${SOURCE_GROUP_NAMES[g] ?? g} differs: ${setText(sa)} vs ${setText(sb)}`);
      else
        reasons.push(
          `same ${SOURCE_GROUP_NAMES[g] ?? g}: ${setText(new Set([...sa].filter((x) => sb.has(x))))}`,
        );
    } else if (ONE_SIDED_CONFLICT.has(g)) {
      conflicts.push(
        `${SOURCE_GROUP_NAMES[g] ?? g} differs: ${setText((sa ?? sb)!)} on ${sa ? "A" : "B"} only`,
      );
    } else if (!SILENT_ONE_SIDED.has(g)) {
      // A source one side names and the other leaves unsaid: an edge clause, not another contract.
      confidence *= 0.99;
      caveats.push(
        `only ${sa ? "A" : "B"} names the ${SOURCE_GROUP_NAMES[g] ?? g} (${setText((sa ?? sb)!)})`,
      );
    }
  }
  if (sharedGroups === 0) {
    const sa = sourceWords(a.market.settlementSource);
    const sb = sourceWords(b.market.settlementSource);
    let shared = 0;
    for (const w of sa) if (sb.has(w)) shared++;
    // |A ∪ B| = |A| + |B| - |A ∩ B|.
    const jaccard = shared / Math.max(1, sa.size + sb.size - shared);
    if (jaccard >= 0.5) reasons.push(`same settlement source (${a.market.settlementSource})`);
    else if (a.market.settlementSource && b.market.settlementSource) confidence *= 0.95;
    else if (a.market.settlementSource || b.market.settlementSource)
      caveats.push(
        `settlement source stated on ${a.market.settlementSource ? "A" : "B"} only (${a.market.settlementSource ?? b.market.settlementSource})`,
      );
    // Neither states one apart from its rules: the venues' usual way, no evidence either way.
    else reasons.push("settlement source not stated apart from the rules on either side");
  }

  // --- What has to happen ----------------------------------------------------------------------
  const onlyA = onlyIn(a.basis, b.basis);
  const onlyB = onlyIn(b.basis, a.basis);
  if (onlyA.length > 0 || onlyB.length > 0)
    conflicts.push(`what counts differs: ${basisText(onlyA)} on A vs ${basisText(onlyB)} on B`);
  // What settles an election: a race call, certification or the winner taking office. For an
  // executive office they can differ (a called winner who is never inaugurated); for a seat in a
  // chamber the venues treat the member sworn in as the winner, so it is an edge clause.
  // An executive office's winner "inaugurated" on one side only is a different contract even when
  // the other side names no trigger (it then pays on the election's result).
  if (
    (a.trigger && b.trigger && a.trigger !== b.trigger) ||
    ((a.executive || b.executive) && (a.trigger === "inaugurate") !== (b.trigger === "inaugurate"))
  ) {
    const text = `resolution trigger differs: ${triggerText(a)} on A vs ${triggerText(b)} on B`;
    if (a.legislative || b.legislative) caveats.push(text);
    else conflicts.push(text);
  }

  // --- Ties, cancellations, postponements ---------------------------------------------------------
  // On a complement, B's fallback is read from A's side: B paying No is A's YES paying.
  for (const situation of keysOfEither(a.voidPolicy, b.voidPolicy)) {
    const pa = a.voidPolicy.get(situation);
    const pb = relation === "complement" ? flipped(b.voidPolicy.get(situation)) : b.voidPolicy.get(situation);
    // How a tie, a cancellation or a postponement settles is an edge clause: reported, never a
    // different contract (MATCHING.md; the strict view for arbitrage filters on caveats). But a
    // tie or a draw of a game is one of its results (an NFL tie, a soccer draw), not an edge case.
    const game = a.participants.size >= 2 && b.participants.size >= 2;
    const common = situation === "tie" && (a.drawPossible || b.drawPossible || game);
    const stated = pa ?? pb;
    if (pa && pb && pa !== pb)
      (common ? conflicts : caveats).push(`${situation} handling differs: ${pa} vs ${pb}`);
    else if (pa && pb) reasons.push(`same ${situation} handling (${pa})`);
    else if (common && stated !== "no")
      conflicts.push(`only ${pa ? "A" : "B"} says how a draw settles (${stated})`);
    else
      caveats.push(
        `only ${pa ? "A" : "B"} says how a ${situation} ${situation === "tie" ? "" : "event "}settles (${stated})`,
      );
  }

  // --- Time zones, window start, named sources --------------------------------------------------
  if (a.zones.size > 0 && b.zones.size > 0 && !intersects(a.zones, b.zones))
    conflicts.push(`time zone differs: ${setText(a.zones)} vs ${setText(b.zones)}`);
  if (a.windowStart && b.windowStart && a.windowStart !== b.windowStart)
    conflicts.push(`window starts differ: ${a.windowStart} vs ${b.windowStart}`);
  if (a.namedSources.size > 0 && b.namedSources.size > 0 && !sourceTypesAgree(a, b)) {
    if (!intersects(a.namedSources, b.namedSources))
      conflicts.push(
        `named source differs: ${a.market.settlementSource ?? setText(a.namedSources)} vs ${b.market.settlementSource ?? setText(b.namedSources)}`,
      );
  }

  // A "complement" both of whose markets pay No when the event does not happen is not one.
  if (relation === "complement") {
    for (const [situation, pa] of a.voidPolicy) {
      if (pa === "no" && b.voidPolicy.get(situation) === "no") {
        relation = "disjoint";
        reasons.unshift(
          `both resolve No when the ${situation === "postponed" ? "event does not take place in time" : situation} — not complements`,
        );
      }
    }
  }

  // --- The predicate: what has to happen, found on both sides? -----------------------------------
  // Same names and the same date are not the same question: "out by 2027" / "arrested before 2027".
  // Names the questions themselves use (an event title's capitals are often just headline style).
  const unsaidOnB = uncoveredWords(
    predicateOf(a.questionWords, a.subjectEntities, b.subjectEntities),
    b.allWords,
  );
  const unsaidOnA = uncoveredWords(
    predicateOf(b.questionWords, a.subjectEntities, b.subjectEntities),
    a.allWords,
  );
  // Only where no numeric condition was compared: with one, the words around it ("rise above",
  // "fewer than", "stay below") are the condition, already read and compared as a set of outcomes.
  // Nor on a complement read from opposite framings ("hold" / "flip", "stays" / "out"): its words
  // differ by design, and the framing was the evidence.
  if (!(ma && mb) && relation !== "complement" && unsaidOnB.length + unsaidOnA.length > 0) {
    confidence = Math.min(confidence, UNSURE_CONFIDENCE);
    reasons.push(
      `wording of the question not found on the other side: ${[
        ...(unsaidOnB.length ? [`${unsaidOnB.join(", ")} (A)`] : []),
        ...(unsaidOnA.length ? [`${unsaidOnA.join(", ")} (B)`] : []),
      ].join("; ")}`,
    );
  }

  // --- A Kalshi market whose ticker names another year than its title ------------------------------
  if (a.tickerYearConflict) {
    confidence = Math.min(confidence, UNSURE_CONFIDENCE);
    reasons.push(`A's ticker and title name different years (${a.tickerYearConflict})`);
  }
  if (b.tickerYearConflict) {
    confidence = Math.min(confidence, UNSURE_CONFIDENCE);
    reasons.push(`B's ticker and title name different years (${b.tickerYearConflict})`);
  }

  // --- Named topics: the same competition, award or office? ---------------------------------------
  const topicsA = namedTopics(a);
  const topicsB = namedTopics(b);
  if (topicsA.length > 0 && topicsB.length > 0 && !topicsA.some((t) => b.topics.has(t))) {
    // "NBA Playoffs" / "NBA Finals", "Minister of Defense" / "Minister of National Security".
    confidence = Math.min(confidence, UNSURE_CONFIDENCE);
    reasons.push(`named topics differ: ${topicsA.join(", ")} on A vs ${topicsB.join(", ")} on B`);
  }

  // --- Rules usable? -------------------------------------------------------------------------------
  if (a.placeholderRules) blockers.push("A has missing or placeholder rules");
  if (b.placeholderRules) blockers.push("B has missing or placeholder rules");
  if (blockers.length > 0) confidence *= 0.8;

  // --- Decide -------------------------------------------------------------------------------------
  if (windowRelation && (relation === "identity" || relation === "complement")) {
    relation = relation === "identity" ? windowRelation : "overlap";
  }
  if (conflicts.length > 0) {
    if (relation === "identity" || relation === "complement") relation = "overlap";
    // The more explicit the difference, the surer we are that these differ.
    confidence = Math.min(0.95, 0.55 + 0.15 * conflicts.length) * (templated ? 0.9 : 1);
    if (
      relation === "overlap" &&
      templated &&
      a.yesSubject &&
      b.yesSubject &&
      a.yesSubject !== b.yesSubject &&
      /\bwin\b/.test(`${[...a.content.keys()].join(" ")}`)
    )
      relation = "disjoint";
  }
  const polarity: Polarity = relation === "complement" ? "inverted" : "same";
  return {
    marketA: a.market.id,
    marketB: b.market.id,
    relation,
    polarity,
    confidence: Math.round(Math.max(0, Math.min(1, confidence)) * 1000) / 1000,
    reasons: [...conflicts, ...reasons],
    caveats,
    blockers,
  };
}

// Small pieces of `compareContracts`, as functions of the module rather than closures made for
// every pair (see the subject checks above).

/** The keys of `x`, then those of `y` that `x` lacks: what a set of both would hold, in its order. */
function keysOfEither<K>(x: ReadonlyMap<K, unknown>, y: ReadonlyMap<K, unknown>): K[] {
  const out = [...x.keys()];
  for (const k of y.keys()) if (!x.has(k)) out.push(k);
  return out;
}

/** The elements of `x` that `y` lacks, in `x`'s order. */
function onlyIn(x: ReadonlySet<string>, y: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const e of x) if (!y.has(e)) out.push(e);
  return out;
}

function basisText(xs: string[]): string {
  return xs.length ? xs.map((x) => BASIS_TEXT[x] ?? x).join(" and ") : "the event itself";
}

function triggerText(f: ContractFeatures): string | undefined {
  return f.trigger ? BASIS_TEXT[f.trigger] : "the election's result";
}

/** A fallback outcome read from the other side of a complement: B paying No is A's YES paying. */
function flipped(x: string | undefined): string | undefined {
  return x === "yes" ? "no" : x === "no" ? "yes" : x;
}

/** Groups that settle nothing when only one side names them. */
const SILENT_ONE_SIDED = new Set(["release", "adjust", "change", "period", "evidence", "span"]);

/** Both markets name a source of the same type (a station, an index, an agency…). */
function sourceTypesAgree(a: ContractFeatures, b: ContractFeatures): boolean {
  for (const g of SOURCE_TYPE_GROUPS) if (a.sources.has(g) && b.sources.has(g)) return true;
  return false;
}

/** Whether the question side of `f` (its subject, or its question and YES label) says `w`. */
function inQuestion(f: ContractFeatures, w: string): boolean {
  return f.subjectEntities.has(w) || normalizeText(`${f.market.question} ${f.market.yesLabel}`).includes(w);
}

/** "14:30 UTC". */
function utcText(minute: number): string {
  return `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")} UTC`;
}

/** The competitions, awards and offices a market names (its leagues left out). */
function namedTopics(f: ContractFeatures): string[] {
  const out: string[] = [];
  for (const t of f.topics) if (!t.startsWith("league:")) out.push(t);
  return out;
}

export { measureText };
