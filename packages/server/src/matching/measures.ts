/**
 * The numeric condition of a market: a threshold with its comparator, a bucket, or a Fed move, read
 * from the rules when they state it and from the title otherwise; and the step the quantity moves in.
 */
import { MONTH_RE } from "./dates";
import { stem, words } from "./text";

export type Comparator = ">" | ">=" | "<" | "<=" | "=" | "!=" | "between";

/** A numeric condition: the YES set is the set of values `test` accepts. */
export interface Measure {
  /** `usd`, `%`, `°f`, `bps_change` (a rate move, signed), or a counted noun ("seat", "cut"). */
  unit: string;
  comparator: Comparator;
  value: number;
  /** A bucket's bounds excluded ("at least 100,000 and less than 105,000" excludes its top). */
  lowOpen?: boolean;
  highOpen?: boolean;
  /** Upper bound of a bucket (`between`). */
  high?: number;
  /** Smallest step the quantity moves in (1 for counts and degrees, 25 for Fed moves), 0 = continuous. */
  step: number;
  /** Where the comparator came from: the rules are read first, the title only when they are silent. */
  from: "rules" | "title";
  /** Readable form: "≥ 3.0%". */
  text: string;
}

// Measures

export const COUNT_NOUNS = new Set(
  "cut hike time job seat vote game win point goal touchdown run home tweet post inch state electoral delegate basis bill executive order film nomination award rebound assist".split(
    " ",
  ),
);

// The patterns of the functions below are constants of the module, not literals in the functions:
// a pattern written inside a function is a new RegExp object every time it runs, and these run for
// every number of every market's text.

/** Comparators written right before a number, tried in this order. */
const COMPARATORS_BEFORE: Array<[RegExp, Comparator]> = [
  [
    /\b(at or above|greater than or equal to|equal to or greater than|at least|not less than|no less than|or more than|minimum of|reach(?:es)?|reaching|hit|hits|hitting|touch(?:es)?|trade at)\s*$/,
    ">=",
  ],
  [
    /\b(at or below|less than or equal to|equal to or less than|at most|not more than|no more than|maximum of)\s*$/,
    "<=",
  ],
  [
    /\b(strictly greater than|greater than|more than|higher than|above|over|exceeds?|exceeding|in excess of|surpass(?:es)?|beyond|top|tops)\s*$/,
    ">",
  ],
  [/\b(strictly less than|less than|fewer than|lower than|below|under|beneath)\s*$/, "<"],
  [/\b(exactly|precisely)\s*$/, "="],
];

/** Comparators written right after a number, tried in this order. */
const COMPARATORS_AFTER: Array<[RegExp, Comparator]> = [
  [/^\s*(\+|(?:[a-z]+\s+)?or (more|higher|above|greater|over)|and (above|up|over|higher)|at minimum)/, ">="],
  [/^\s*((?:[a-z]+\s+)?or (less|lower|below|fewer|under)|and (below|under|lower))/, "<="],
];

export function comparatorBefore(s: string): Comparator | null {
  const t = s.slice(-40);
  for (const [pattern, comparator] of COMPARATORS_BEFORE) if (pattern.test(t)) return comparator;
  return null;
}

export function comparatorAfter(s: string): Comparator | null {
  const t = s.slice(0, 40);
  for (const [pattern, comparator] of COMPARATORS_AFTER) if (pattern.test(t)) return comparator;
  return null;
}

export interface NumberHit {
  index: number;
  end: number;
  value: number;
  unit: string;
  /** Written "50+": this many or more. */
  plus: boolean;
}

/** A number, read with `exec` from the start of the text (`matchAll` copied the pattern each call). */
const NUMBER = /(\$?)(-?\d+(?:\.\d+)?)(%|°f|°c|\+)?(?:\s*(bps|pp))?/g;
const MONTH_BEFORE = new RegExp(`${MONTH_RE}\\s*$`);
const MONTH_AFTER = new RegExp(`^\\s*(?:of\\s+)?${MONTH_RE}\\b`);
/** Part of a date or a time: "12/25", "2026-12-", "5:00", a digit right before. */
const DIGIT_BEFORE = /\d[:/.-]?$/;
const TIME_OR_DATE_AFTER = /^[:/]\d/;
const ISO_DATE_AFTER = /^-\d\d-/;
const ORDINAL_AFTER = /^(st|nd|rd|th)\b/;
const CLOCK_AFTER = /^\s*(am|pm|a\.m|p\.m)\b/;
const ZONE_AFTER = /^\s*(utc|et|gmt)\b/;
const QUARTER_BEFORE = /\bq$/;

/** Numbers with a unit or a counted noun; dates, years and times are skipped. */
export function findNumbers(s: string): NumberHit[] {
  const out: NumberHit[] = [];
  NUMBER.lastIndex = 0;
  for (let m = NUMBER.exec(s); m; m = NUMBER.exec(s)) {
    const index = m.index;
    const end = index + m[0].length;
    const before = s.slice(Math.max(0, index - 12), index);
    const after = s.slice(end, end + 16);
    if (DIGIT_BEFORE.test(before) || TIME_OR_DATE_AFTER.test(after) || ISO_DATE_AFTER.test(after)) continue;
    if (ORDINAL_AFTER.test(after)) continue;
    if (MONTH_BEFORE.test(before)) continue;
    if (CLOCK_AFTER.test(after) || ZONE_AFTER.test(after)) continue;
    if (QUARTER_BEFORE.test(before)) continue;
    if (MONTH_AFTER.test(after)) continue;
    const value = Number(m[2]);
    // Three hundred digits are not a threshold (and read as Infinity).
    if (!Number.isFinite(value)) continue;
    let unit: string;
    if (m[1] === "$") unit = "usd";
    else if (m[3] === "%") unit = "%";
    else if (m[3] === "°f" || m[3] === "°c") unit = m[3];
    else if (m[4] === "bps") unit = "bps";
    else if (m[4] === "pp") unit = "pp";
    else {
      const next = words(after)[0];
      if (next && COUNT_NOUNS.has(stem(next))) unit = stem(next);
      else if (next === "usd" || next === "dollars" || next === "dollar") unit = "usd";
      else if (!comparatorAfter(after) && !comparatorBefore(s.slice(0, index))) continue;
      else if (value >= 1900 && value <= 2100 && !m[3]) continue;
      else unit = "n";
    }
    if (unit === "n" && value >= 1900 && value <= 2100) continue;
    out.push({ index, end, value, unit, plus: m[3] === "+" });
  }
  return out;
}

export function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(10)));
}

export const SYMBOL: Record<Comparator, string> = {
  ">": ">",
  ">=": "≥",
  "<": "<",
  "<=": "≤",
  "=": "=",
  "!=": "≠",
  between: "",
};

export function measureText(m: Pick<Measure, "unit" | "comparator" | "value" | "high">): string {
  const u = (v: number) =>
    m.unit === "usd"
      ? `$${fmt(v)}`
      : m.unit === "%"
        ? `${fmt(v)}%`
        : m.unit === "bps_change"
          ? `${v > 0 ? "+" : ""}${fmt(v)} bps`
          : m.unit.startsWith("°")
            ? `${fmt(v)}${m.unit.toUpperCase()}`
            : `${fmt(v)} ${m.unit}`;
  if (m.comparator === "between") return `${u(m.value)}–${u(m.high ?? m.value)}`;
  return `${SYMBOL[m.comparator]} ${u(m.value)}`;
}

export function stepFor(unit: string, allText: string): number {
  if (unit === "bps_change") return 25;
  if (unit === "inch") return 0.01;
  if (unit === "°f" || unit === "°c") return /\btenths?\b|\bone decimal\b/.test(allText) ? 0.1 : 1;
  if (unit === "%" || unit === "pp")
    return /\bone decimal\b|\bnearest tenth\b|\btenth of a\b|\bas published\b|\bfirst (release|published|reported)/.test(
      allText,
    )
      ? 0.1
      : 0;
  if (unit === "usd") return 0.01;
  return 1;
}

/**
 * The numbers of a rules text, read once: a market's question asks about its numbers one by one,
 * and rescanning the rules for each (and each of those for every other number) made a page of
 * "5% 5% 5% …" cost minutes. Hits are grouped by value, the comparator written around each hit is
 * read once, and each (value, unit) question is answered once.
 */
export class RulesNumbers {
  #hits: NumberHit[] | null = null;
  /** Hits by value, in text order. Values are parsed from decimal text, so equal figures are equal numbers. */
  readonly #byValue = new Map<number, number[]>();
  /** The comparator written right around hit i (undefined: not read yet). */
  readonly #near: Array<Comparator | null | undefined> = [];
  readonly #answers = new Map<string, Comparator | null>();

  constructor(readonly text: string) {}

  /** The numbers of the rules, in text order (read on first use). */
  get hits(): NumberHit[] {
    if (this.#hits === null) {
      this.#hits = findNumbers(this.text);
      this.#hits.forEach((hit, i) => {
        const list = this.#byValue.get(hit.value);
        if (list) list.push(i);
        else this.#byValue.set(hit.value, [i]);
      });
    }
    return this.#hits;
  }

  /** The comparator the rules state for the value, if they state one. */
  comparator(value: number, unit: string): Comparator | null {
    const key = `${value}|${unit}`;
    let answer = this.#answers.get(key);
    if (answer === undefined) {
      answer = this.#comparator(value, unit);
      this.#answers.set(key, answer);
    }
    return answer;
  }

  #comparator(value: number, unit: string): Comparator | null {
    const rules = this.text;
    const hits = this.hits;
    for (const i of this.#byValue.get(value) ?? []) {
      const hit = hits[i]!;
      if (hit.unit !== unit && !(unit === "n" || hit.unit === "n")) continue;
      let found = this.#near[i];
      if (found === undefined) {
        found = comparatorAfter(rules.slice(hit.end)) ?? comparatorBefore(rules.slice(0, hit.index));
        this.#near[i] = found;
      }
      if (!found) continue;
      // "… resolves to No if it reaches $5,000": the sentence states the NO condition.
      const start = Math.max(rules.lastIndexOf(". ", hit.index), rules.lastIndexOf("; ", hit.index)) + 1;
      const endDot = rules.indexOf(". ", hit.end);
      const sentence = rules.slice(start, endDot < 0 ? rules.length : endDot);
      const saysNo = /\b(resolve[sd]?|settles?) (to |as )?no\b|\bno\b["']? if\b/.test(sentence);
      const saysYes = /\b(resolve[sd]?|settles?) (to |as )?yes\b|\byes\b["']? if\b/.test(sentence);
      // "If no candidate receives more than 50%": the clause itself is negated. Only the clause's
      // last stretch without a comma or semicolon can end in a negation.
      const clause = rules.slice(start, hit.index);
      const lastStretch = clause.slice(Math.max(clause.lastIndexOf(","), clause.lastIndexOf(";")) + 1);
      const negated =
        /\b(no (candidate|one|team|player|party)|nobody|none of|does not|do not|did not|fails? to)\b/.test(
          lastStretch,
        );
      const flipped = (saysNo && !saysYes) !== negated;
      return flipped ? NEGATE[found] : found;
    }
    return null;
  }
}

export const NEGATE: Record<Comparator, Comparator> = {
  ">": "<=",
  ">=": "<",
  "<": ">=",
  "<=": ">",
  "=": "!=",
  "!=": "=",
  between: "between",
};

export function extractMeasure(
  question: string,
  rules: RulesNumbers,
  allText: string,
  stances: Set<string>,
  /** `words(question).join(" ")`, when the caller has it already. */
  aliasedQuestion: string = words(question).join(" "),
): Measure | null {
  // A Fed decision is a signed rate move: "cut by 25 bps" = -25, "hold" = 0, "hike" > 0.
  const aliased = ` ${aliasedQuestion} `;
  const counted =
    /(?<!\d)\d+\+?\s+(?:or (?:more|fewer|less)\s+)?(?:fed\s+)?(?:rate\s+)?(cut|hike|time)s?\b|\bhow many\b|\bnumber of\b/.test(
      aliased,
    );
  if (
    / fed /.test(aliased) &&
    / (change|move|adjust)s? (rate|the rate)/.test(aliased) &&
    !/ (cut|hike|hold) /.test(aliased) &&
    !counted
  )
    return { unit: "bps_change", comparator: "!=", value: 0, step: 25, from: "title", text: "any change" };
  const isRateDecision = / fed /.test(aliased) && / (cut|hike|hold) /.test(aliased) && !counted;
  if (isRateDecision) {
    const sign = / cut /.test(aliased) ? -1 : / hike /.test(aliased) ? 1 : 0;
    const all = findNumbers(question);
    // "by 0.25%" is a move; "3.25% or lower" is a level of the rate, read as a plain threshold.
    const moves = all.filter(
      (h) =>
        h.unit === "bps" ||
        h.unit === "pp" ||
        (h.unit === "%" && /\bby\s*$/.test(question.slice(Math.max(0, h.index - 40), h.index))),
    );
    if (moves.length === 0 && all.some((h) => h.unit === "%")) return plainMeasure(question, rules, allText);
    if (sign === 0) {
      return { unit: "bps_change", comparator: "=", value: 0, step: 25, from: "title", text: "no change" };
    }
    const hit = moves[0];
    if (!hit) {
      const m = {
        unit: "bps_change",
        comparator: sign < 0 ? "<" : ">",
        value: 0,
        step: 25,
        from: "title",
      } as const;
      return { ...m, text: sign < 0 ? "any cut" : "any hike" };
    }
    const bps = hit.unit === "bps" ? hit.value : hit.value * 100;
    const cmp = hit.plus
      ? ">="
      : (comparatorAfter(question.slice(hit.end)) ?? comparatorBefore(question.slice(0, hit.index)));
    // "cut by 50 bps or more" is a move of -50 or lower.
    let comparator: Comparator = "=";
    if (cmp === ">=" || cmp === ">") comparator = sign < 0 ? (cmp === ">=" ? "<=" : "<") : cmp;
    if (cmp === "<=" || cmp === "<") comparator = sign < 0 ? (cmp === "<=" ? ">=" : ">") : cmp;
    const m = { unit: "bps_change", comparator, value: sign * bps, step: 25, from: "title" as const };
    return { ...m, text: measureText(m) };
  }
  void stances;
  return plainMeasure(question, rules, allText);
}

/**
 * A question with no number ("White Christmas in Chicago?") whose rules state the threshold
 * ("1 inch or more of snow on the ground"): the first number the rules attach a comparator and a
 * unit to, read with the polarity of its sentence.
 */
export function rulesMeasure(rules: RulesNumbers, allText: string): Measure | null {
  for (const hit of rules.hits) {
    if (hit.unit === "n" || hit.unit === "time" || hit.unit === "job") continue;
    const comparator = rules.comparator(hit.value, hit.unit);
    if (!comparator) continue;
    const m = {
      unit: hit.unit,
      comparator,
      value: hit.value,
      step: stepFor(hit.unit, allText),
      from: "rules" as const,
    };
    return { ...m, text: measureText(m) };
  }
  return null;
}

/** A threshold or bucket on whatever the question counts or measures. */
export function plainMeasure(question: string, rulesNumbers: RulesNumbers, allText: string): Measure | null {
  const rules = rulesNumbers.text;
  // Buckets: "between 44 and 45°F", "44-45°F", "58.0 to 58.9". A figure starts where its digits do.
  const bucket =
    /(?:between\s+)?(\$?)(-?(?<!\d)\d+(?:\.\d+)?)(%|°f|°c)?\s*(?:-|to|and|through)\s*(\$?)(\d+(?:\.\d+)?)(%|°f|°c)?(?!\d)/.exec(
      question,
    );
  if (
    bucket &&
    !/\d[/:-]$/.test(question.slice(0, bucket.index)) &&
    !/^[-/]\d/.test(question.slice(bucket.index + bucket[0].length))
  ) {
    const lo = Number(bucket[2]);
    const hi = Number(bucket[5]);
    const unit = bucket[1] || bucket[4] ? "usd" : (bucket[3] ?? bucket[6] ?? "n");
    const isYear = lo >= 1900 && lo <= 2100 && hi >= 1900 && hi <= 2100 && unit === "n";
    if (
      hi > lo &&
      Number.isFinite(lo) &&
      Number.isFinite(hi) &&
      !isYear &&
      (unit !== "n" || /\bbetween\b/.test(bucket[0]))
    ) {
      const fmtNum = (n: number) => String(n).replace(".", "\\.");
      const highOpen = new RegExp(
        `\\b(less than|below|under|up to but not including)\\s*\\$?${fmtNum(hi)}(?!\\d)`,
      ).test(rules);
      const lowOpen = new RegExp(
        `\\b(more than|greater than|above|over|exceeds?)\\s*\\$?${fmtNum(lo)}(?!\\d)`,
      ).test(rules);
      const m = {
        unit,
        comparator: "between" as const,
        value: lo,
        high: hi,
        step: stepFor(unit, allText),
        from: (highOpen || lowOpen ? "rules" : "title") as "rules" | "title",
        highOpen,
        lowOpen,
      };
      return { ...m, text: measureText(m) };
    }
  }
  // Totals: "O/U 44.5" with an Over or Under YES leg.
  const ou = /\bo\/u\s*(\d+(?:\.\d+)?)/.exec(question);
  const side = /\((over|under)\)/.exec(question);
  if (ou && side && Number.isFinite(Number(ou[1]))) {
    const m = {
      unit: "point",
      comparator: side[1] === "over" ? ">" : "<",
      value: Number(ou[1]),
      step: 1,
      from: "title",
    } as const;
    return { ...m, text: measureText(m) };
  }
  const hits = findNumbers(question);
  for (const hit of hits) {
    let comparator: Comparator | null = hit.plus
      ? ">="
      : (comparatorAfter(question.slice(hit.end)) ?? comparatorBefore(question.slice(0, hit.index)));
    const fromRules = rulesNumbers.comparator(hit.value, hit.unit);
    const from = fromRules ? ("rules" as const) : ("title" as const);
    if (fromRules) comparator = fromRules;
    if (!comparator) {
      if (hit.unit === "n") continue;
      comparator = "=";
    }
    const m = { unit: hit.unit, comparator, value: hit.value, step: stepFor(hit.unit, allText), from };
    return { ...m, text: measureText(m) };
  }
  return null;
}
