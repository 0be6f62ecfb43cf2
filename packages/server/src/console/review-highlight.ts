/**
 * The phrases of a market's text the matcher read, marked up for the review desk: the threshold
 * with its comparator, dates and times of day, settlement sources, what has to happen (a race call,
 * a certification…), and the tie, cancellation and postponement clauses.
 *
 * The matcher reads normalised text (lower case, "$100k" as "$100000", "≥" as "at least"…), so its
 * positions are not positions in what the venue wrote. This module normalises the venue's text the
 * same way while remembering, for every character, which characters of the original it came from;
 * then it runs the matcher's own readers (findNumbers, findDates, the settlement patterns,
 * voidPolicyOf) over that text and maps what they found back. Where a reader gives a value without
 * its extent (a date's length), the extent is found by matching the value's shape at that place.
 *
 * Everything is escaped: the venue's text only ever reaches the page through `escapeHtml`.
 */
import { findDates, MONTH_RE, yearNear } from "../matching/dates";
import { type ContractFeatures, MATCHER_TEXT_LIMITS } from "../matching/features";
import { findNumbers } from "../matching/measures";
import { BASIS_PATTERNS, SOURCE_PATTERNS, voidPolicyOf } from "../matching/settlement";
import { DEGREES, normalizeText, PERCENT, plainNumber, SCALED_NUMBER } from "../matching/text";
import { escapeHtml, html, raw, type SafeHtml } from "./html";

export type MarkKind = "threshold" | "date" | "source" | "trigger" | "clause";

/** A stretch of the original text [start, end) and what the matcher read there. */
export interface Mark {
  start: number;
  end: number;
  kind: MarkKind;
  note: string;
}

// --- Normalised text that remembers where each character came from -----------------------------

/** Text with, for each character, the stretch [from, to) of the original it stands for. */
interface Mapped {
  text: string;
  from: number[];
  to: number[];
}

const QUOTES = new Set(["\u2018", "\u2019", "\u201c", "\u201d", '"', "`"]);
const DASHES = new Set(["\u2013", "\u2014", "\u2212"]);

/** Lower case without diacritics, one character for one (so positions stay the original's). */
function lowered(original: string): Mapped {
  let text = "";
  const from: number[] = [];
  const to: number[] = [];
  for (let i = 0; i < original.length; i++) {
    const c = original[i]!;
    let d = c.toLowerCase();
    if (d.length !== 1) d = c;
    if (d.charCodeAt(0) > 0x7f) d = d.normalize("NFD")[0] ?? d;
    // Quotes become spaces and dashes hyphens, as the matcher's normalisation does.
    if (QUOTES.has(d)) d = " ";
    else if (DASHES.has(d)) d = "-";
    text += d;
    from.push(i);
    to.push(i + 1);
  }
  return { text, from, to };
}

/**
 * Each match of the global `pattern` replaced by `replace(match)`: the new characters stand for the
 * whole stretch of the original the match covered; the others keep their own.
 */
function rewrite(m: Mapped, pattern: RegExp, replace: (match: RegExpExecArray) => string): Mapped {
  let text = "";
  const from: number[] = [];
  const to: number[] = [];
  let last = 0;
  const copy = (a: number, b: number) => {
    text += m.text.slice(a, b);
    for (let i = a; i < b; i++) {
      from.push(m.from[i]!);
      to.push(m.to[i]!);
    }
  };
  pattern.lastIndex = 0;
  for (let match = pattern.exec(m.text); match; match = pattern.exec(m.text)) {
    if (match[0].length === 0) {
      pattern.lastIndex++;
      continue;
    }
    copy(last, match.index);
    const end = match.index + match[0].length;
    const replacement = replace(match);
    const start = m.from[match.index]!;
    const stop = m.to[end - 1]!;
    text += replacement;
    for (let i = 0; i < replacement.length; i++) {
      from.push(start);
      to.push(stop);
    }
    last = end;
  }
  copy(last, m.text.length);
  return { text, from, to };
}

/**
 * The matcher's normalisation (matching/text.ts normalizeText) as far as positions matter: symbols,
 * thousands separators, scaled numbers, degrees, percent and whitespace. Its word aliases are left
 * out: the patterns used here match the words as venues write them.
 */
function normalised(original: string): Mapped {
  let m = lowered(original);
  m = rewrite(m, /≥|>=|=>/g, () => " at least ");
  m = rewrite(m, /≤|<=|=</g, () => " at most ");
  m = rewrite(m, /(^|\s)>(?=\s*[$\d])/g, (x) => `${x[1]} above `);
  m = rewrite(m, /(^|\s)<(?=\s*[$\d])/g, (x) => `${x[1]} below `);
  m = rewrite(m, /(\d),(?=\d{3}\b)/g, (x) => x[1]!);
  m = rewrite(m, /(\d),(?=\d{3}\b)/g, (x) => x[1]!);
  m = rewrite(m, SCALED_NUMBER, (x) => plainNumber(x[1]!, x[2]!, x[3]!));
  m = rewrite(m, DEGREES, (x) => (x[2]?.startsWith("c") ? `${x[1]}°c` : `${x[1]}°f`));
  m = rewrite(m, PERCENT, (x) => `${x[1]}%`);
  return rewrite(m, /\s+/g, () => " ");
}

/** The original stretch of normalised characters [start, end). */
function back(m: Mapped, start: number, end: number): { start: number; end: number } {
  return { start: m.from[start]!, end: m.to[end - 1]! };
}

function global(pattern: RegExp): RegExp {
  return new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
}

/** Every match of `pattern` in the normalised text (at most `cap`), as original stretches. */
function allMatches(m: Mapped, pattern: RegExp, cap = 50): Array<{ start: number; end: number }> {
  const re = global(pattern);
  const out: Array<{ start: number; end: number }> = [];
  for (let x = re.exec(m.text); x && out.length < cap; x = re.exec(m.text)) {
    if (x[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    // Patterns written with a leading space or boundary: mark the words, not the space.
    const lead = /^\s*/.exec(x[0])![0].length;
    const trail = /\s*$/.exec(x[0])![0].length;
    if (x[0].length - lead - trail > 0) out.push(back(m, x.index + lead, x.index + x[0].length - trail));
  }
  return out;
}

// --- Thresholds ------------------------------------------------------------------------------------

/** The comparator words the matcher reads before a number (matching/measures.ts), at the end of a text. */
const COMPARATOR_BEFORE =
  /\b(?:at or above|at or below|greater than or equal to|less than or equal to|equal to or (?:greater|less) than|at least|at most|not (?:less|more) than|no (?:less|more) than|or more than|minimum of|maximum of|(?:strictly )?(?:greater|less) than|more than|higher than|fewer than|lower than|above|over|below|under|beneath|exceeds?|exceeding|in excess of|surpass(?:es)?|beyond|tops?|reach(?:es)?|reaching|hits?|hitting|touch(?:es)?|trade at|exactly|precisely) ?$/;
/** …and after one, at the start of a text. */
const COMPARATOR_AFTER =
  /^ ?(?:(?:[a-z]+ )?or (?:more|higher|above|greater|over|less|lower|below|fewer|under)|and (?:above|up|over|higher|below|under|lower)|at minimum)\b/;

function sameNumber(a: number, b: number): boolean {
  return Math.abs(Math.abs(a) - Math.abs(b)) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

function thresholdMarks(m: Mapped, features: ContractFeatures): Mark[] {
  const measure = features.measure;
  if (!measure) return [];
  const values = [measure.value, ...(measure.high !== undefined ? [measure.high] : [])];
  const out: Mark[] = [];
  for (const hit of findNumbers(m.text)) {
    if (!values.some((v) => sameNumber(v, hit.value))) continue;
    let start = hit.index;
    let end = hit.end;
    const before = COMPARATOR_BEFORE.exec(m.text.slice(Math.max(0, start - 40), start));
    if (before) start -= before[0].length;
    const after = COMPARATOR_AFTER.exec(m.text.slice(end, end + 40));
    if (after) end += after[0].length;
    out.push({
      ...back(m, start, end),
      kind: "threshold",
      note: `Condition: ${measure.text} (read from the ${measure.from === "rules" ? "rules" : "title"})`,
    });
  }
  return out;
}

// --- Dates and times -------------------------------------------------------------------------------

/** The shapes findDates (matching/dates.ts) reads, each tried where it found a date. */
const DATE_SHAPES = [
  /20\d\d-\d\d-\d\d\b/y,
  /\d{1,2}\/\d{1,2}\/\d{2,4}\b/y,
  new RegExp(
    `${MONTH_RE}\\s+\\d{1,2}(?:st|nd|rd|th)?(?:\\s*(?:-|to|and|&)\\s*\\d{1,2}(?:st|nd|rd|th)?)?\\b(?:,?\\s*(?:20\\d\\d|'\\d\\d))?`,
    "y",
  ),
  new RegExp(`\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}\\b(?:,?\\s*20\\d\\d)?`, "y"),
  /before (?:january 1,? )?20\d\d\b/y,
  new RegExp(`(?:at|as of|on) the end of ${MONTH_RE}(?:,?\\s*20\\d\\d)?\\b`, "y"),
  /(?:the )?end of 20\d\d\b/y,
  new RegExp(`${MONTH_RE}(?:\\s+|\\s*'|,\\s*)(?:20\\d\\d|\\d\\d)\\b`, "y"),
  /(?:q[1-4]\s*20\d\d|(?:first|second|third|fourth) quarter(?: of)? 20\d\d)\b/y,
  /20\d\d\s?[-/]\s?(?:20)?\d\d\b/y,
  new RegExp(MONTH_RE, "y"),
  /20\d\d\b/y,
];

/** The words before a date that make it a deadline, as the matcher reads them. */
const DEADLINE_BEFORE = /\b(?:on or before|no later than|prior to|before|by|until|through) (?:the end of )?$/;

/** The longest date shape at `index` of the text. */
function dateLength(text: string, index: number): number {
  let best = 0;
  for (const shape of DATE_SHAPES) {
    shape.lastIndex = index;
    const m = shape.exec(text);
    if (m && m[0].length > best) best = m[0].length;
  }
  return best;
}

const KIND_WORDS = { by: "a deadline", on: "an instant or day", in: "a period" } as const;

/** A time of day with its zone, as matching/dates.ts minuteUtcOf reads one. */
const TIME_OF_DAY =
  /\b\d{1,2}(?::\d{2})?\s*(?:(?:am|pm|a\.m\.|p\.m\.)\s*)?(?:et|est|edt|eastern|utc|gmt|ct|cst|pt|pst)\b|\bnoon (?:et|eastern|utc)\b/g;

function dateMarks(m: Mapped, features: ContractFeatures): Mark[] {
  const out: Mark[] = [];
  for (const found of findDates(m.text, yearNear(features.closeDay))) {
    const length = dateLength(m.text, found.index);
    if (length === 0) continue;
    let start = found.index;
    const deadline = DEADLINE_BEFORE.exec(m.text.slice(Math.max(0, start - 28), start));
    if (deadline) start -= deadline[0].length;
    const { key, kind } = found.mention;
    out.push({
      ...back(m, start, found.index + length),
      kind: "date",
      note: `Date: ${key}, ${KIND_WORDS[kind]}${found.fallback ? " (a fallback, not the question's date)" : ""}`,
    });
  }
  for (const stretch of allMatches(m, TIME_OF_DAY)) {
    out.push({ ...stretch, kind: "date", note: "Time of day and time zone" });
  }
  return out;
}

// --- Sources and what has to happen ---------------------------------------------------------------

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function sourceMarks(m: Mapped, features: ContractFeatures): Mark[] {
  const out: Mark[] = [];
  for (const [group, test, value] of SOURCE_PATTERNS) {
    if (!(test instanceof RegExp) || !features.sources.get(group)?.has(value)) continue;
    for (const stretch of allMatches(m, test)) {
      out.push({ ...stretch, kind: "source", note: `Source (${group}): ${value}` });
    }
  }
  // Organisations named as the source of truth (the settlement source, "according to X").
  for (const name of features.namedSources) {
    if (name.length < 3) continue;
    for (const stretch of allMatches(m, new RegExp(`\\b${escapeRegExp(name)}(?:s|es)?\\b`), 20)) {
      out.push({ ...stretch, kind: "source", note: "Named as the source" });
    }
  }
  for (const [name, pattern] of BASIS_PATTERNS) {
    if (!features.basis.has(name) && features.trigger !== name) continue;
    for (const stretch of allMatches(m, pattern)) {
      out.push({
        ...stretch,
        kind: "trigger",
        note: `What counts: ${name}${features.trigger === name ? " (what settles it, by the rules)" : ""}`,
      });
    }
  }
  return out;
}

// --- Tie, cancellation and postponement clauses --------------------------------------------------

const SITUATIONS: Record<string, string> = {
  tie: "A tie",
  cancelled: "A cancellation",
  postponed: "A postponement",
};

/** Where the matcher's voidPolicyOf splits rules into sentences. */
const SENTENCE_BREAK = /(?<=[.;])\s+/g;

/** The sentences of the rules that say how a tie, a cancellation or a postponement settles. */
function clauseMarks(original: string): Mark[] {
  const sentences: Array<[number, number]> = [];
  let start = 0;
  SENTENCE_BREAK.lastIndex = 0;
  for (let b = SENTENCE_BREAK.exec(original); b; b = SENTENCE_BREAK.exec(original)) {
    sentences.push([start, b.index]);
    start = b.index + b[0].length;
  }
  sentences.push([start, original.length]);
  const out: Mark[] = [];
  for (const [from, to] of sentences) {
    const text = original.slice(from, to);
    if (!text.trim()) continue;
    const policy = voidPolicyOf(normalizeText(text));
    if (policy.size === 0) continue;
    const lead = /^\s*/.exec(text)![0].length;
    out.push({
      start: from + lead,
      end: to,
      kind: "clause",
      note: [...policy]
        .map(([situation, outcome]) => `${SITUATIONS[situation] ?? situation} settles: ${outcome}`)
        .join("; "),
    });
  }
  return out;
}

// --- Putting it together --------------------------------------------------------------------------

/** Marks that do not overlap: earlier first, the longer of two starting together; touching sources join. */
function resolve(marks: Mark[]): Mark[] {
  const sorted = [...marks].sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Mark[] = [];
  for (const mark of sorted) {
    const last = out.at(-1);
    if (last && mark.start < last.end) {
      if (mark.kind === last.kind && mark.end > last.end) last.end = mark.end;
      continue;
    }
    out.push({ ...mark });
  }
  return out;
}

/**
 * Where the matcher's reading shows in `text` (a question, rules or a settlement source): the
 * stretches of the part it read (`limit` characters, its input limit), none overlapping another
 * of the same layer. Clauses (whole sentences) are one layer, the phrases inside them another.
 */
export function readingMarks(
  text: string,
  features: ContractFeatures,
  options: { clauses?: boolean; limit?: number } = {},
): { clauses: Mark[]; phrases: Mark[] } {
  const read = text.slice(0, options.limit ?? MATCHER_TEXT_LIMITS.rules);
  const m = normalised(read);
  const phrases = resolve([
    ...thresholdMarks(m, features),
    ...dateMarks(m, features),
    ...sourceMarks(m, features),
  ]);
  // Two source words a few small words apart are one name ("Bureau of Labor Statistics").
  const joined: Mark[] = [];
  for (const mark of phrases) {
    const last = joined.at(-1);
    if (
      last &&
      last.kind === mark.kind &&
      mark.kind === "source" &&
      /^\s+(?:(?:of|the|for|and)\s+)?$/i.test(read.slice(last.end, mark.start))
    ) {
      last.end = mark.end;
      continue;
    }
    joined.push(mark);
  }
  return { clauses: options.clauses ? resolve(clauseMarks(read)) : [], phrases: joined };
}

/** A run this long without a space (a URL, a hash) may break anywhere, or it would widen the page. */
const LONG_RUN = /\S{25,}/g;

/** Venue text as HTML: escaped, line breaks kept, long runs given places to wrap (<wbr>). */
export function plain(text: string): string {
  let out = "";
  let at = 0;
  LONG_RUN.lastIndex = 0;
  for (let m = LONG_RUN.exec(text); m; m = LONG_RUN.exec(text)) {
    out += escapeHtml(text.slice(at, m.index));
    const pieces: string[] = [];
    const run = m[0];
    for (let i = 0; i < run.length; ) {
      let end = Math.min(run.length, i + 20);
      // Never between the two halves of a surrogate pair.
      const last = run.charCodeAt(end - 1);
      if (last >= 0xd800 && last <= 0xdbff && end < run.length) end++;
      pieces.push(escapeHtml(run.slice(i, end)));
      i = end;
    }
    out += pieces.join("<wbr>");
    at = m.index + m[0].length;
  }
  return (out + escapeHtml(text.slice(at))).replace(/\r?\n/g, "<br>\n");
}

function open(mark: Mark): string {
  return `<mark data-kind="${mark.kind}" title="${escapeHtml(mark.note)}">`;
}

/** `text[from, to)` with the phrases inside it marked. */
function withPhrases(text: string, from: number, to: number, phrases: Mark[]): string {
  let out = "";
  let at = from;
  for (const p of phrases) {
    if (p.start < from || p.end > to) continue;
    // Phrases in bold, so that they stand out inside a marked clause too.
    out += `${plain(text.slice(at, p.start))}${open(p)}<b>${plain(text.slice(p.start, p.end))}</b></mark>`;
    at = p.end;
  }
  return out + plain(text.slice(at, to));
}

/**
 * The text as HTML, escaped, with the phrases the matcher read in <mark> (its note as the title),
 * and, for rules, the tie and cancellation sentences marked around them. A phrase that crosses a
 * clause's edge is left unmarked rather than breaking the nesting.
 */
export function highlight(
  text: string | null,
  features: ContractFeatures,
  options: { clauses?: boolean; limit?: number } = {},
): SafeHtml {
  if (!text) return html``;
  const { clauses, phrases } = readingMarks(text, features, options);
  const inside = (p: Mark, c: Mark) => p.start >= c.start && p.end <= c.end;
  const crossing = (p: Mark) => clauses.some((c) => p.start < c.end && p.end > c.start && !inside(p, c));
  const kept = phrases.filter((p) => !crossing(p));
  let out = "";
  let at = 0;
  for (const c of clauses) {
    out += withPhrases(text, at, c.start, kept);
    out += `${open(c)}${withPhrases(text, c.start, c.end, kept)}</mark>`;
    at = c.end;
  }
  out += withPhrases(text, at, text.length, kept);
  // Every piece above went through escapeHtml or is a <mark> whose note was escaped.
  return raw(out);
}
