/**
 * Dates in market text: days, months, quarters and years, written any way the venues write them,
 * with whether each is a deadline ("by", "before"), an instant ("on") or a period ("in"), and which
 * one the question is about.
 */
import { MONTHS } from "./text";

export interface DateMention {
  /** Day as YYYY-MM-DD, month as YYYY-MM, quarter as YYYY-Qn, year as YYYY. */
  key: string;
  level: "day" | "month" | "quarter" | "year";
  /** "by" (deadline, cumulative), "on" (an instant or day), "in" (a period). */
  kind: "by" | "on" | "in";
  /**
   * A season across two years ("2026-27"): the other year it is known by. Venues name one season by
   * either year ("the 2027 NBA Finals", "the 2026 NFL MVP", a Kalshi ticker's "27").
   */
  alt?: string;
  /** Said as an instant in so many words ("at the end of December"), not just a bare day. */
  instant?: boolean;
}

// Dates

export const MONTH_RE =
  "(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?";

export function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

export function dayKey(y: number, m: number, d: number): string {
  return `${y}-${pad(m)}-${pad(d)}`;
}

export function shiftDay(key: string, days: number): string {
  const t = Date.parse(`${key}T12:00:00Z`) + days * 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

export function fullYear(y: string | undefined, fallback: number): number {
  if (!y) return fallback;
  const n = Number(y);
  return n < 100 ? 2000 + n : n;
}

export interface RawDate {
  index: number;
  mention: DateMention;
  /** Said as a fallback ("if not released by …"): never the date the question is about. */
  fallback: boolean;
  /** First day of a range ("December 18-20" -> 12-18). */
  start?: string;
}

/**
 * The year of a date written without one: the one that puts it nearest the market's close
 * ("Dec 31" on a market closing 2027-01-01 is 2026).
 */
export type YearOf = (month: number, day: number) => number;

export function yearNear(closeDay: string | null): YearOf {
  if (!closeDay) return () => 2026;
  const close = Date.parse(`${closeDay}T00:00:00Z`);
  const closeYear = Number(closeDay.slice(0, 4));
  return (month, day) => {
    let best = closeYear;
    let bestGap = Number.POSITIVE_INFINITY;
    for (const y of [closeYear - 1, closeYear, closeYear + 1]) {
      const gap = Math.abs(Date.UTC(y, month - 1, day) - close);
      if (gap < bestGap) {
        best = y;
        bestGap = gap;
      }
    }
    return best;
  };
}

const MONTH_WITHOUT_YEAR = new RegExp(`\\b(in|for|during|of|by|through)\\s+${MONTH_RE}`, "g");

/**
 * For each position i of `s` (and s.length): 1 when the first character at or after i that is not a
 * lowercase letter or a space is a digit. What the lookahead `(?=[a-z\s]*\d)` asks at i, for every i
 * in one pass from the end (the lookahead rescans the words after each match).
 */
export function digitAfterWords(s: string): Uint8Array {
  const out = new Uint8Array(s.length + 1);
  for (let i = s.length - 1; i >= 0; i--) {
    const c = s.charCodeAt(i);
    if ((c >= 97 && c <= 122) || isSpace(c)) out[i] = out[i + 1]!;
    else out[i] = c >= 48 && c <= 57 ? 1 : 0;
  }
  return out;
}

/** What `\s` matches in a regular expression. */
function isSpace(c: number): boolean {
  return (
    (c >= 9 && c <= 13) ||
    c === 32 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

export const FALLBACK_CONTEXT =
  /\b(not|no|unless|fails?|delay(ed)?|unpublished|postponed|otherwise|cancel+ed|void|absent|lapse)\b[^.;]{0,80}$/;
/**
 * The term an office-holder serves ("sworn in for the term beginning in 2027"): a consequence of the
 * election the question is about, never its date.
 */
const TERM_CONTEXT =
  /\b(term|congress|session)\s+(that\s+)?(begin|begins|beginning|start|starts|starting|commencing)\s+(in|on)?\s*$/;

// The patterns of `findDates`, built once. Each is global and read with `exec` from the start of the
// text (`firstMatch`): building a pattern per call, and the copy `matchAll` makes of it, was garbage
// for every text read. None of them matches an empty string, so each loop ends.
const ISO_DAY = /\b(20\d\d)-(\d\d)-(\d\d)\b/g;
const SLASH_DAY = /\b(\d{1,2})\/(\d{1,2})\/(\d{2,4})\b/g;
/** "December 8-9, 2026" (a two-day meeting) is about its last day. */
const MONTH_DAY = new RegExp(
  `\\b${MONTH_RE}\\s+(\\d{1,2})(?:st|nd|rd|th)?(?:\\s*(?:-|to|and|&)\\s*(\\d{1,2})(?:st|nd|rd|th)?)?\\b(?:,?\\s*(20\\d\\d|'\\d\\d))?`,
  "g",
);
const DAY_MONTH = new RegExp(
  `\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}\\b(?:,?\\s*(20\\d\\d))?`,
  "g",
);
const BEFORE_YEAR = /\bbefore (?:january 1,? )?(20\d\d)\b(?! *[-/])/g;
/** "at the end of December 2026": the state at one instant, the month's last day. */
const END_OF_MONTH = new RegExp(`\\b(?:at|as of|on) the end of ${MONTH_RE}(?:,?\\s*(20\\d\\d))?\\b`, "g");
const END_OF_YEAR = /\b(?:the )?end of (20\d\d)\b/g;
const MONTH_YEAR = new RegExp(`\\b${MONTH_RE}(?:\\s+|\\s*'|,\\s*)(20\\d\\d|\\d\\d)\\b`, "g");
const QUARTER = /\b(?:q([1-4])\s*(20\d\d)|(first|second|third|fourth) quarter(?: of)? (20\d\d))\b/g;
/** A season written across two years: "2026-27", "2026/27", "2026-2027". */
const SEASON = /\b(20\d\d)\s?[-/]\s?(?:20)?(\d\d)\b(?!\s?[-/]\d)/g;
const YEAR = /\b(20\d\d)\b/g;

/** The first match of the global pattern `re` in `s`; `re.exec(s)` then gives the next ones. */
function firstMatch(re: RegExp, s: string): RegExpExecArray | null {
  re.lastIndex = 0;
  return re.exec(s);
}

/** One reading of a text by `findDates`: what it found so far, and which characters that took. */
interface DateScan {
  s: string;
  out: RawDate[];
  /**
   * Characters already read as part of a date: a later pattern may not reuse them. One flag per
   * character keeps the check proportional to the mention, not to the mentions found so far.
   */
  taken: Uint8Array;
}

/** A day's key and kind from the words before it: "before" it is a deadline the day before. */
function kindAt(s: string, index: number, day: string): { key: string; kind: DateMention["kind"] } {
  const before = s.slice(Math.max(0, index - 28), index);
  if (/\b(before|prior to)\s*$/.test(before)) return { key: shiftDay(day, -1), kind: "by" };
  if (/\b(by|on or before|no later than|through|until|ending|deadline)\s*(the end of\s*)?$/.test(before))
    return { key: day, kind: "by" };
  return { key: day, kind: "on" };
}

/** Records a mention unless a mention found earlier took any of its characters. */
function push(scan: DateScan, index: number, length: number, mention: DateMention): void {
  const { s, taken } = scan;
  for (let i = index; i < index + length; i++) if (taken[i]) return;
  taken.fill(1, index, index + length);
  const before = s.slice(Math.max(0, index - 100), index);
  scan.out.push({ index, mention, fallback: FALLBACK_CONTEXT.test(before) || TERM_CONTEXT.test(before) });
}

/** The year a date writes ("2027", "'27", "27"), else the one `yearOf` puts it in. */
function explicit(y: string | undefined, month: number, day: number, yearOf: YearOf): number {
  return y ? fullYear(y.replace("'", ""), 2026) : yearOf(month, day);
}

/** Every date mention in normalised text, with its position; `yearOf` fills in a missing year. */
export function findDates(s: string, yearOf: YearOf): RawDate[] {
  const scan: DateScan = { s, out: [], taken: new Uint8Array(s.length) };
  const out = scan.out;
  for (let m = firstMatch(ISO_DAY, s); m; m = ISO_DAY.exec(s)) {
    const k = kindAt(s, m.index, dayKey(Number(m[1]), Number(m[2]), Number(m[3])));
    push(scan, m.index, m[0].length, { key: k.key, level: "day", kind: k.kind });
  }
  for (let m = firstMatch(SLASH_DAY, s); m; m = SLASH_DAY.exec(s)) {
    const year = explicit(m[3], Number(m[1]), Number(m[2]), yearOf);
    const k = kindAt(s, m.index, dayKey(year, Number(m[1]), Number(m[2])));
    push(scan, m.index, m[0].length, { key: k.key, level: "day", kind: k.kind });
  }
  for (let m = firstMatch(MONTH_DAY, s); m; m = MONTH_DAY.exec(s)) {
    const month = MONTHS[m[1]!]!;
    const day = Number(m[3] ?? m[2]);
    const year = explicit(m[4], month, day, yearOf);
    const k = kindAt(s, m.index, dayKey(year, month, day));
    push(scan, m.index, m[0].length, { key: k.key, level: "day", kind: k.kind });
    if (m[3] && out.length > 0 && out[out.length - 1]!.index === m.index)
      out[out.length - 1]!.start = dayKey(year, month, Number(m[2]));
  }
  for (let m = firstMatch(DAY_MONTH, s); m; m = DAY_MONTH.exec(s)) {
    const month = MONTHS[m[2]!]!;
    const k = kindAt(s, m.index, dayKey(explicit(m[3], month, Number(m[1]), yearOf), month, Number(m[1])));
    push(scan, m.index, m[0].length, { key: k.key, level: "day", kind: k.kind });
  }
  for (let m = firstMatch(BEFORE_YEAR, s); m; m = BEFORE_YEAR.exec(s)) {
    push(scan, m.index, m[0].length, { key: dayKey(Number(m[1]) - 1, 12, 31), level: "day", kind: "by" });
  }
  for (let m = firstMatch(END_OF_MONTH, s); m; m = END_OF_MONTH.exec(s)) {
    const month = MONTHS[m[1]!]!;
    const year = m[2] ? Number(m[2]) : yearOf(month, 28);
    const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
    push(scan, m.index, m[0].length, {
      key: dayKey(year, month, last),
      level: "day",
      kind: "on",
      instant: true,
    });
  }
  for (let m = firstMatch(END_OF_YEAR, s); m; m = END_OF_YEAR.exec(s)) {
    push(scan, m.index, m[0].length, { key: dayKey(Number(m[1]), 12, 31), level: "day", kind: "by" });
  }
  for (let m = firstMatch(MONTH_YEAR, s); m; m = MONTH_YEAR.exec(s)) {
    const before = s.slice(Math.max(0, m.index - 12), m.index);
    const kind = /\b(by|before|until|through)\s*(the end of\s*)?$/.test(before) ? "by" : "in";
    push(scan, m.index, m[0].length, {
      key: `${fullYear(m[2], 2026)}-${pad(MONTHS[m[1]!]!)}`,
      level: "month",
      kind,
    });
  }
  // A month without a year ("in November?"): the one nearest the close. Not when a number follows
  // the words after it ("in May 2027", "by March of next year 5"): that was a dated mention above.
  let digitAhead: Uint8Array | null = null;
  for (let m = firstMatch(MONTH_WITHOUT_YEAR, s); m; m = MONTH_WITHOUT_YEAR.exec(s)) {
    digitAhead ??= digitAfterWords(s);
    let length = m[0].length;
    if (digitAhead[m.index + length]) {
      // Without its dot the month is followed by "." rather than by words and a number.
      if (!m[0].endsWith(".")) continue;
      length -= 1;
    }
    const month = MONTHS[m[2]!]!;
    const at = m.index + m[1]!.length + 1;
    push(scan, at, length - m[1]!.length - 1, {
      key: `${yearOf(month, 15)}-${pad(month)}`,
      level: "month",
      kind: m[1] === "by" || m[1] === "through" ? "by" : "in",
    });
  }
  for (let m = firstMatch(QUARTER, s); m; m = QUARTER.exec(s)) {
    const q = m[1] ?? String(["first", "second", "third", "fourth"].indexOf(m[3]!) + 1);
    push(scan, m.index, m[0].length, { key: `${m[2] ?? m[4]}-Q${q}`, level: "quarter", kind: "in" });
  }
  for (let m = firstMatch(SEASON, s); m; m = SEASON.exec(s)) {
    const start = Number(m[1]);
    if ((start + 1) % 100 !== Number(m[2])) continue;
    push(scan, m.index, m[0].length, { key: m[1]!, level: "year", kind: "in", alt: String(start + 1) });
  }
  for (let m = firstMatch(YEAR, s); m; m = YEAR.exec(s)) {
    const before = s.slice(Math.max(0, m.index - 16), m.index);
    const kind = /\b(by|before|until|through)\s*(the end of\s*)?$/.test(before) ? "by" : "in";
    push(scan, m.index, m[0].length, { key: m[1]!, level: "year", kind });
  }
  return out.sort((a, b) => a.index - b.index);
}

export const LEVEL_RANK = { day: 3, month: 2, quarter: 1, year: 0 } as const;

export function mostPrecise(dates: RawDate[]): DateMention | null {
  let best: DateMention | null = null;
  for (const d of dates)
    if (!d.fallback && (!best || LEVEL_RANK[d.mention.level] > LEVEL_RANK[best.level])) best = d.mention;
  return best;
}

/**
 * The date the question is about: the most precise mention in the question (else the event
 * title); a month is refined to a day the rules name within it ("the December 2026 meeting"). When
 * neither names a date, the rules' first mention that is not a fallback ("if not released by …").
 */
export function keyDate(question: RawDate[], eventTitle: RawDate[], rules: RawDate[]): DateMention | null {
  const best = mostPrecise(question) ?? mostPrecise(eventTitle);
  if (best && best.level === "day") return best;
  if (best && best.level !== "month") return best;
  const r = rules.filter((d) => !d.fallback);
  if (best) {
    const within = r.find((d) => d.mention.level === "day" && d.mention.key.startsWith(best.key));
    return within
      ? { key: within.mention.key, level: "day", kind: best.kind === "by" ? "by" : within.mention.kind }
      : best;
  }
  return r[0]?.mention ?? null;
}

// Times of day

export function minuteUtcOf(s: string): number | null {
  const m =
    /\b(\d{1,2})(?::(\d{2}))?\s*(?:(am|pm|a\.m\.|p\.m\.)\s*)?(et|est|edt|eastern|utc|gmt|ct|cst|pt|pst)\b/.exec(
      s,
    );
  if (!m) {
    const noon = /\bnoon (et|eastern|utc)\b/.exec(s);
    if (noon) return noon[1] === "utc" ? 720 : 720 + 300;
    return null;
  }
  let h = Number(m[1]);
  const min = Number(m[2] ?? 0);
  if (h > 23 || min > 59) return null;
  const ap = m[3]?.[0];
  if (ap === "p" && h < 12) h += 12;
  if (ap === "a" && h === 12) h = 0;
  const zone = m[4]!;
  const offset = zone.startsWith("e") ? 300 : zone.startsWith("c") ? 360 : zone.startsWith("p") ? 480 : 0;
  return (((h * 60 + min + offset) % 1440) + 1440) % 1440;
}
