/**
 * Text normalisation for matching: one spelling per thing, so that "$100k", "$100,000" and
 * "100 thousand dollars" compare equal, "FOMC" and "the Federal Reserve" name the same body, and
 * "25 bps" and "0.25 percentage points" are the same move. Deterministic, no external model.
 */

/** Multi-word and single-word aliases -> one canonical token. Applied to lowercased text. */
const PHRASE_ALIASES: Array<[RegExp, string]> = [
  [/\bfederal open market committee\b|\bfomc\b|\bfederal reserve( board)?\b|\bthe fed\b/g, " fed "],
  [
    /\b(target )?(federal|fed) funds( target)?( rate| range)?\b|\binterest rates?\b|\bpolicy rate\b/g,
    " rate ",
  ],
  [/\bconsumer price index\b|\bcpi-u\b|\bheadline cpi\b|\binflation\b/g, " cpi "],
  [/\bunemployment rate\b|\bjobless rate\b|\bu-3\b/g, " unemployment "],
  [/\bnon-?farm payrolls?\b|\bpayrolls\b|\bjobs report\b|\bnfp\b/g, " payrolls "],
  [/\bgross domestic product\b/g, " gdp "],
  [/\byear-over-year\b|\byear over year\b|\byoy\b|\by\/y\b|\b12-month\b/g, " yoy "],
  [/\bmonth-over-month\b|\bmonth over month\b|\bmom\b|\bm\/m\b/g, " mom "],
  [/\bpercentage points?\b|\bpct\.? points?\b/g, " pp "],
  [/\bbasis points?\b|\bbps\b|\bbp\b/g, " bps "],
  [/\bno change\b|\bkeep (?:rates )?(?:steady|unchanged)\b|\bleaves? (?:rates )?unchanged\b/g, " hold "],
  [/\bgovernment shut ?down\b|\bshut ?down\b/g, " shutdown "],
  [/\bunited states\b|\bu\.s\.a?\.?(?=\s|$)/g, " us "],
  [/\bnew york city\b|\bnyc\b/g, " new york "],
  [/\bbtc\b|\bxbt\b/g, " bitcoin "],
  [/\beth\b|\bether\b/g, " ethereum "],
  [/\bsol\b/g, " solana "],
  [/\bdoge\b/g, " dogecoin "],
  [/\bgop\b/g, " republican "],
  [/\bmanchester city\b|\bman city\b/g, " man-city "],
  [/\bmanchester united\b|\bman utd\b|\bman united\b/g, " man-united "],
  [/\bpro basketball\b/g, " nba "],
  [/\bpro football\b/g, " nfl "],
  [/\bpro baseball\b/g, " mlb "],
  [/\bpro hockey\b/g, " nhl "],
  [/\bdems?\b|\bdemocratic\b/g, " democrat "],
  [/\brepublicans\b/g, " republican "],
  [/\bdemocrats\b/g, " democrat "],
];

/** Word-level synonyms (after PHRASE_ALIASES). */
const WORD_ALIASES: Record<string, string> = Object.assign(Object.create(null), {
  decrease: "cut",
  decreases: "cut",
  lower: "cut",
  lowers: "cut",
  reduce: "cut",
  reduces: "cut",
  cuts: "cut",
  increase: "hike",
  increases: "hike",
  raise: "hike",
  raises: "hike",
  hikes: "hike",
  holds: "hold",
  unchanged: "hold",
  pause: "hold",
  pauses: "hold",
  maintain: "hold",
  maintains: "hold",
  beats: "beat",
  defeat: "beat",
  defeats: "beat",
  wins: "win",
  won: "win",
  winner: "win",
  reaches: "reach",
  hits: "reach",
  hit: "reach",
  touch: "reach",
  touches: "reach",
  temp: "temperature",
  inches: "inch",
  high: "high",
  highest: "high",
  maximum: "high",
  max: "high",
  lowest: "low",
  minimum: "low",
  resigns: "resign",
  resignation: "resign",
  resigned: "resign",
  announces: "announce",
  announced: "announce",
  announcement: "announce",
  elected: "win",
  movie: "film",
  movies: "film",
  films: "film",
  grossing: "gross",
  grosses: "gross",
  seats: "seat",
  votes: "vote",
  games: "game",
  points: "point",
  goals: "goal",
}) as Record<string, string>;

/** Words that carry no subject: they never make two markets alike. */
export const STOPWORDS = new Set(
  (
    "a an the of in on at by to for from with and or be is are was were will would shall should can could " +
    "this that these those it its as than then there their what which who whom whose when where how " +
    "yes no not market resolve resolves resolved resolution this question if otherwise any all per " +
    "after before during until through between above below over under least most more less higher lower " +
    "or_ do does did has have had been being into out up down about end close closes closing price " +
    "official officially according reported report data source sources first final day date time et utc " +
    "am pm value year month week"
  ).split(" "),
);

// Null prototype: a word of venue text ("constructor", "__proto__") must never read as a month.
export const MONTHS: Record<string, number> = Object.assign(Object.create(null), {
  january: 1,
  jan: 1,
  february: 2,
  feb: 2,
  march: 3,
  mar: 3,
  april: 4,
  apr: 4,
  may: 5,
  june: 6,
  jun: 6,
  july: 7,
  jul: 7,
  august: 8,
  aug: 8,
  september: 9,
  sept: 9,
  sep: 9,
  october: 10,
  oct: 10,
  november: 11,
  nov: 11,
  december: 12,
  dec: 12,
}) as Record<string, number>;

const SCALE: Record<string, number> = {
  k: 1e3,
  thousand: 1e3,
  m: 1e6,
  mm: 1e6,
  million: 1e6,
  b: 1e9,
  bn: 1e9,
  billion: 1e9,
  t: 1e12,
  trillion: 1e12,
};

/**
 * Lowercases, unifies dashes, quotes and comparison symbols, expands "$100k" style numbers, drops
 * thousands separators, and applies the aliases. Keeps `%`, `$`, `°`, `.` and `-` inside tokens.
 */
export function normalizeText(input: string): string {
  // Titles, labels, sources and entity names repeat across a catalog; rules rarely do.
  if (input.length <= 200) {
    const hit = normalizedCache.get(input);
    if (hit !== undefined) return hit;
    const out = normalizeUncached(input);
    if (normalizedCache.size >= 20_000) normalizedCache.clear();
    normalizedCache.set(input, out);
    return out;
  }
  return normalizeUncached(input);
}

const normalizedCache = new Map<string, string>();

/** "Mélenchon" -> "Melenchon": the venues write names with and without their diacritics. */
export function foldDiacritics(text: string): string {
  // Only text outside ASCII can carry a combining mark: most venue text skips the work.
  return ASCII_ONLY.test(text) ? text : text.normalize("NFD").replace(COMBINING_MARKS, "");
}

// The patterns of the functions below are constants of the module: a pattern written inside a
// function is a new RegExp object every time it runs, and these run for every text or every word.
// (A global pattern is safe to share with `replace`, which reads it from the start every time.)
// biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range itself
const ASCII_ONLY = /^[\x00-\x7f]*$/;
const COMBINING_MARKS = /[\u0300-\u036f]/g;

/** Quotes, dashes and comparison symbols, rewritten in this order before numbers are read. */
const SYMBOL_REWRITES: Array<[RegExp, string]> = [
  [/[\u2018\u2019\u201c\u201d"`]/g, " "],
  [/[\u2013\u2014\u2212]/g, "-"],
  [/≥|>=|=>/g, " at least "],
  [/≤|<=|=</g, " at most "],
  [/(^|\s)>(?=\s*[$\d])/g, " above "],
  [/(^|\s)<(?=\s*[$\d])/g, " below "],
  [/(\d),(?=\d{3}\b)/g, "$1"],
  [/(\d),(?=\d{3}\b)/g, "$1"],
];
/**
 * "$100k", "1.5m", "2 billion". A number starts where its digits start: tried from inside a run of
 * digits the pattern would rescan the whole run once per digit.
 */
/** "$100k", "1.5m", "2 billion": a number with a scale word, written out by `plainNumber`. */
export const SCALED_NUMBER =
  /(\$?)(?<!\d)(\d+(?:\.\d+)?)\s?(k|thousand|mm|m|million|bn|b|billion|t|trillion)\b/g;
export const DEGREES = /(\d)\s*(?:°|º|degrees?)\s*(f|fahrenheit|c|celsius)?\b/g;
export const PERCENT = /(\d)\s*(percent|per cent)\b/g;
/** House seats: "MI-07" and "MI-7" (Kalshi's legacy tickers) are one district. */
const HOUSE_SEAT = /\b([a-z]{2})-0(\d)\b/g;
const WHITESPACE = /\s+/g;

/** A scaled number written out: ("$", "1.5", "m") -> "$1500000". */
export function plainNumber(dollar: string, num: string, unit: string): string {
  return `${dollar}${Number((Number(num) * (SCALE[unit] ?? 1)).toPrecision(12))}`;
}

function normalizeUncached(input: string): string {
  let s = ` ${foldDiacritics(input).toLowerCase()} `;
  for (const [pattern, replacement] of SYMBOL_REWRITES) s = s.replace(pattern, replacement);
  // "$100k", "1.5m", "2 billion" -> plain numbers.
  s = s.replace(SCALED_NUMBER, (_all, dollar: string, num: string, unit: string) =>
    plainNumber(dollar, num, unit),
  );
  s = s.replace(DEGREES, (_a, d: string, u?: string) => (u?.startsWith("c") ? `${d}°c` : `${d}°f`));
  s = s.replace(PERCENT, "$1%");
  s = s.replace(HOUSE_SEAT, "$1-$2");
  for (const [pattern, replacement] of PHRASE_ALIASES) s = s.replace(pattern, replacement);
  return s.replace(WHITESPACE, " ").trim();
}

/** Words of normalised text, with word aliases applied. Numbers and `%`/`$` stay attached. */
export function words(normalized: string): string[] {
  const out: string[] = [];
  // The runs of word characters, found in place: splitting made a string of every run, then another
  // of a run whose punctuation was trimmed, and an array of all of them.
  const n = normalized.length;
  let at = 0;
  while (at < n) {
    while (at < n && !isWordChar(normalized.charCodeAt(at))) at++;
    const runEnd = runOfWordChars(normalized, at);
    // Trim leading/trailing punctuation kept inside tokens, and a possessive 's.
    let start = at;
    let end = runEnd;
    while (start < end && EDGE.has(normalized.charCodeAt(start))) start++;
    while (end > start && EDGE.has(normalized.charCodeAt(end - 1))) end--;
    if (end - start > 2 && normalized.charCodeAt(end - 1) === 115 && normalized.charCodeAt(end - 2) === 39)
      end -= 2;
    if (end > start) {
      const w = normalized.slice(start, end);
      out.push(WORD_ALIASES[w] ?? w);
    }
    at = runEnd;
  }
  return out;
}

/** The end of the run of word characters starting at `at`. */
function runOfWordChars(text: string, at: number): number {
  let end = at;
  while (end < text.length && isWordChar(text.charCodeAt(end))) end++;
  return end;
}

/** A character that words keep: a-z 0-9 . % $ ° - / ' (anything else separates words). */
function isWordChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) ||
    (c >= 48 && c <= 57) ||
    c === 46 ||
    c === 37 ||
    c === 36 ||
    c === 0xb0 ||
    c === 45 ||
    c === 47 ||
    c === 39
  );
}

/** - . ' / */
const EDGE = new Set([45, 46, 39, 47]);

/** Crude plural folding so "cuts"/"cut", "tweets"/"tweet" meet; leaves short words and numbers. */
export function stem(word: string): string {
  if (word.length > 4 && PLURAL_S.test(word) && !NOT_PLURAL_S.test(word)) return word.slice(0, -1);
  return word;
}

const PLURAL_S = /[a-z]s$/;
const NOT_PLURAL_S = /ss$|us$|is$/;

/** Content words: stemmed, no stopwords, no bare numbers (numbers are compared as measures). */
export function contentWords(normalized: string): string[] {
  return contentOfWords(words(normalized));
}

const NUMBER_START = /^[$]?\d/;

/** `contentWords` of a text whose `words` were already read. */
export function contentOfWords(ws: readonly string[]): string[] {
  const out: string[] = [];
  for (const w of ws) {
    if (STOPWORDS.has(w) || MONTHS[w] !== undefined) continue;
    if (NUMBER_START.test(w)) continue;
    if (w.length < 2) continue;
    out.push(stem(w));
  }
  return out;
}

/**
 * `text` cut to at most `max` UTF-16 code units, never between the two halves of a surrogate pair
 * (the cut would leave a lone high surrogate, which is not text).
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/**
 * Whether a match of `first` is followed by a match of `then` with no match of `stop` in between:
 * what `first[^stop]*then` asks, in one pass. The regular expression rescans the rest of the stretch
 * once for every match of `first`, so "not not not …" without the word it waits for is quadratic;
 * here each stretch is scanned once and `then` only ever forward. All three patterns need the `g`
 * flag; `stop` matches single characters, which neither `first` nor `then` may contain.
 */
export function followedBy(text: string, first: RegExp, then: RegExp, stop: RegExp): boolean {
  first.lastIndex = 0;
  /** Start of the first match of `then` after the last place it was looked for (Infinity: none). */
  let next = -1;
  for (let a = first.exec(text); a; a = first.exec(text)) {
    const from = a.index + a[0].length;
    stop.lastIndex = from;
    const end = stop.exec(text)?.index ?? text.length;
    if (next < from) {
      then.lastIndex = from;
      next = then.exec(text)?.index ?? Number.POSITIVE_INFINITY;
    }
    if (next <= end) return true;
    // A later `first` in the same stretch sees the same stretch, minus its start: it fails too.
    first.lastIndex = Math.max(end, from + (a[0].length === 0 ? 1 : 0));
  }
  return false;
}
