/**
 * Competitions, awards, offices, leagues and economic releases, each under one id whatever the venue
 * calls it: Kalshi's "Pro Football Championship" and Polymarket's "Super Bowl" are one concept, and
 * "core PCE" and "PCE" are two. The data is concepts.json; this file only reads it. Deterministic,
 * linear in the text: one index built at load, no pattern per concept per call.
 */
import data from "./concepts.json" with { type: "json" };

export interface Concept {
  id: string;
  kind: string;
  league?: string;
  phrases: string[];
  kalshiSeries: string[];
  /** The league-free concept this one narrows ("award:nba-mvp" narrows "award:mvp"). */
  specializes?: string;
  /** Look-alikes that are other contracts (documentation only). */
  distinctFrom?: string[];
}

export interface ConceptMention {
  concept: Concept;
  /** UTF-16 offsets into the text given to findConcepts. */
  start: number;
  end: number;
}

interface RawConcept {
  id: string;
  kind: string;
  league?: string | null;
  phrases: string[];
  kalshi_series?: string[];
  specializes?: string;
  distinct_from?: string[];
}

interface RawPattern {
  pattern: string;
  league?: string;
  concept?: string;
}

/** Venue text past this is rules boilerplate; reading it costs time and finds nothing new. */
const SCAN_LIMIT = 4096;

/** Words that never tell two concepts apart ("win the Super Bowl" / "win Super Bowl"). */
const SKIPPED = new Set(["the"]);

/** Spellings folded onto one token before lookup ("men's" and "mens" both reach "men"). */
const TOKEN_ALIASES = new Map([
  ["mens", "men"],
  ["womens", "women"],
]);

interface Token {
  text: string;
  start: number;
  end: number;
}

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const MARKS = /\p{M}/gu;
const LETTER = /^[a-z]$/;
const APOSTROPHES = new Set(["'", "\u2019", "\u02bc"]);

/** Lowercase, diacritic-free, compatibility-folded ("Ｅ" -> "e", "é" -> "e"). */
function fold(word: string): string {
  return word.normalize("NFKD").replace(MARKS, "").toLowerCase();
}

/**
 * The words of `text` with their offsets. Anything that is not a letter or digit separates words,
 * so "®", "-" and "'" act as spaces; a possessive "'s" is dropped, dotted initials ("U.S.", "p.m.")
 * join into one word, and "the" is skipped.
 */
function tokenize(text: string): Token[] {
  const raw: Token[] = [];
  for (const m of text.matchAll(WORD)) {
    const start = m.index;
    const end = start + m[0].length;
    let word = fold(m[0]);
    if (word === "") continue;
    word = TOKEN_ALIASES.get(word) ?? word;
    const prev = raw[raw.length - 1];
    // "Heisman's" -> "heisman": an "s" glued to the previous word by an apostrophe.
    if (word === "s" && prev && prev.end === start - 1 && APOSTROPHES.has(text[start - 1] ?? "")) continue;
    // "U.S." -> "us": single letters joined by dots are one abbreviation.
    if (
      prev &&
      LETTER.test(word) &&
      prev.end === start - 1 &&
      text[start - 1] === "." &&
      isInitials(prev, text)
    ) {
      prev.text += word;
      prev.end = end;
      continue;
    }
    raw.push({ text: word, start, end });
  }
  return raw.filter((t) => !SKIPPED.has(t.text));
}

/** Whether `t` is a run of dotted single letters so far ("u", or "u.s" already joined). */
function isInitials(t: Token, text: string): boolean {
  return LETTER.test(t.text) || /^(?:\p{L}\.)+\p{L}$/u.test(text.slice(t.start, t.end));
}

interface Phrase {
  words: string[];
  chars: number;
  concept: Concept;
}

/** Whether text word `t` is phrase word `p`, allowing a plural on either side (finals/final). */
function lastWordMatches(t: string, p: string): boolean {
  if (t === p) return true;
  // Two-letter words would turn "a" into "as" and "u" into "us".
  if (t.length === p.length + 1) return p.length >= 3 && t.endsWith("s") && t.startsWith(p);
  if (p.length === t.length + 1) return t.length >= 3 && p.endsWith("s") && p.startsWith(t);
  return false;
}

/** Words that are a clock time's suffix after a number ("5 PM ET"), not an office. */
const NEVER_AFTER_NUMBER = new Set(["pm"]);

const raw = data as { concepts: RawConcept[]; series_patterns: RawPattern[] };

export const CONCEPTS: readonly Concept[] = raw.concepts.map((c) => {
  const concept: Concept = {
    id: c.id,
    kind: c.kind,
    phrases: [...new Set(c.phrases)],
    kalshiSeries: (c.kalshi_series ?? []).map((s) => s.toUpperCase()),
  };
  if (c.league) concept.league = c.league;
  if (c.specializes) concept.specializes = c.specializes;
  if (c.distinct_from) concept.distinctFrom = c.distinct_from;
  return concept;
});

const BY_ID = new Map(CONCEPTS.map((c) => [c.id, c]));

/** First word -> phrases that start with it, longest first. One-word phrases also under their plural. */
const INDEX = new Map<string, Phrase[]>();
const BY_SERIES = new Map<string, Concept[]>();

for (const concept of CONCEPTS) {
  const seen = new Set<string>();
  for (const text of concept.phrases) {
    const words = tokenize(text).map((t) => t.text);
    const key = words.join(" ");
    if (words.length === 0 || seen.has(key)) continue;
    seen.add(key);
    const phrase: Phrase = { words, chars: key.length, concept };
    const first = words[0]!;
    const keys = [first];
    if (words.length === 1) {
      if (first.length >= 3) keys.push(`${first}s`);
      if (first.length >= 4 && first.endsWith("s")) keys.push(first.slice(0, -1));
    }
    for (const k of keys) {
      const list = INDEX.get(k);
      if (list) list.push(phrase);
      else INDEX.set(k, [phrase]);
    }
  }
  for (const s of concept.kalshiSeries) {
    const list = BY_SERIES.get(s);
    if (list) list.push(concept);
    else BY_SERIES.set(s, [concept]);
  }
}
for (const list of INDEX.values()) list.sort(byLength);

function byLength(a: Phrase, b: Phrase): number {
  return b.words.length - a.words.length || b.chars - a.chars;
}

/** More specific patterns (longer source) first, so "^KXNCAAMB" is read before a broader "^KXNCAA". */
const PATTERNS = raw.series_patterns
  .map((p) => ({ re: new RegExp(p.pattern), source: p.pattern, league: p.league, concept: p.concept }))
  .sort((a, b) => b.source.length - a.source.length);

export function conceptById(id: string): Concept | undefined {
  return BY_ID.get(id);
}

/** Concepts named in `text` (any case, diacritics, "®", punctuation), longest phrase first, no overlaps. */
export function findConcepts(text: string): ConceptMention[] {
  if (typeof text !== "string" || text === "") return [];
  const tokens = tokenize(text.slice(0, SCAN_LIMIT));
  const found: Array<{ phrase: Phrase; from: number; to: number }> = [];
  for (let i = 0; i < tokens.length; i++) {
    const candidates = INDEX.get(tokens[i]!.text);
    if (!candidates) continue;
    for (const phrase of candidates) {
      const n = phrase.words.length;
      if (i + n > tokens.length) continue;
      let ok = true;
      for (let k = 0; k < n && ok; k++) {
        const t = tokens[i + k]!.text;
        const p = phrase.words[k]!;
        ok = k === n - 1 ? lastWordMatches(t, p) : t === p;
      }
      if (!ok) continue;
      if (n === 1 && NEVER_AFTER_NUMBER.has(phrase.words[0]!) && i > 0 && /^\d+$/.test(tokens[i - 1]!.text))
        continue;
      found.push({ phrase, from: i, to: i + n });
    }
  }
  // Most words win; among equals the earlier one ("WNBA MVP award" is the WNBA MVP, not "MVP award").
  found.sort((a, b) => b.to - b.from - (a.to - a.from) || a.from - b.from || b.phrase.chars - a.phrase.chars);
  const taken = new Uint8Array(tokens.length);
  const out: ConceptMention[] = [];
  for (const f of found) {
    let free = true;
    for (let k = f.from; k < f.to && free; k++) free = taken[k] === 0;
    if (!free) continue;
    taken.fill(1, f.from, f.to);
    out.push({ concept: f.phrase.concept, start: tokens[f.from]!.start, end: tokens[f.to - 1]!.end });
  }
  return out;
}

/** The concepts and leagues a Kalshi series/event/market ticker implies (most specific series first). */
export function conceptsOfTicker(ticker: string): { concepts: Concept[]; leagues: string[] } {
  const concepts: Concept[] = [];
  const leagues: string[] = [];
  if (typeof ticker !== "string") return { concepts, leagues };
  const series = (ticker.split("-", 1)[0] ?? "").trim().toUpperCase();
  if (series === "") return { concepts, leagues };
  // The exact series only: a listed series is never read as a prefix (KXNBA's title is not KXNBAGAME's).
  for (const c of BY_SERIES.get(series) ?? []) concepts.push(c);
  for (const p of PATTERNS) {
    if (!p.re.test(series)) continue;
    const c = p.concept ? BY_ID.get(p.concept) : undefined;
    if (c && !concepts.includes(c)) concepts.push(c);
    if (p.league) leagues.push(p.league);
  }
  for (const c of concepts) if (c.league) leagues.unshift(c.league);
  return { concepts, leagues: [...new Set(leagues)] };
}

/** Leagues named in text or implied by the concepts found in it ("NBA Finals" -> nba; "Pro Football Championship" -> nfl). */
export function leaguesOf(text: string, ticker?: string | null): string[] {
  const mentions = findConcepts(text).sort((a, b) => a.start - b.start);
  const leagues: string[] = [];
  for (const m of mentions) if (m.concept.league) leagues.push(m.concept.league);
  if (ticker) leagues.push(...conceptsOfTicker(ticker).leagues);
  return [...new Set(leagues)];
}

const NARROWER = new Map<string, Concept>();
for (const c of CONCEPTS) {
  if (c.specializes && c.league && !NARROWER.has(`${c.specializes}|${c.league}`)) {
    NARROWER.set(`${c.specializes}|${c.league}`, c);
  }
}

/**
 * The league's own version of a league-free concept ("the MVP" on an NFL market is the NFL MVP), or
 * the concept itself when no known league narrows it.
 */
export function specialize(concept: Concept, leagues: readonly string[]): Concept {
  for (const league of leagues) {
    const narrower = NARROWER.get(`${concept.id}|${league}`);
    if (narrower) return narrower;
  }
  return concept;
}
