/**
 * What a market's contract says, read from its question, YES label, rules and settlement source:
 * its subject (entities and content words), the measure and its YES set (a threshold with its
 * comparator, or a bucket), the date the question is about and how it is observed (at an instant or
 * at any time before a deadline), the settlement source, what counts (an announcement, a race call,
 * a certification…), how ties, cancellations and postponements settle, and whether the rules are
 * usable at all. Pure: the same market always gives the same features.
 */
import { type DateMention, findDates, keyDate, minuteUtcOf, yearNear } from "./dates";
import {
  ASSETS,
  CAP_STOP,
  cityOf,
  entityWord,
  extractEntities,
  GENERIC_LABEL_WORDS,
  nameRuns,
  SOCCER,
  sameSide,
  sideKey,
  TEAM_SET,
} from "./entities";
import { conceptsOfTicker, findConcepts } from "./knowledge/concepts";
import { findTeams, teamFromTickerCode } from "./knowledge/teams";
import {
  type Comparator,
  extractMeasure,
  type Measure,
  measureText,
  RulesNumbers,
  rulesMeasure,
} from "./measures";
import {
  BASIS_PATTERNS,
  namedSourcesOf,
  PLACEHOLDER,
  SOURCE_PATTERNS,
  STANCE_PATTERNS,
  voidPolicyOf,
  windowStartOf,
  zonesOf,
} from "./settlement";
import {
  clip,
  contentOfWords,
  foldDiacritics,
  followedBy,
  normalizeText,
  STOPWORDS,
  stem,
  words,
} from "./text";
import type { MatchableMarket } from "./types";

export { entityAliases, mentionsEntity, sameSide } from "./entities";
export { measureText } from "./measures";
export type { Comparator, DateMention, Measure };

export interface ContractFeatures {
  /** The market as read: each text field cut to its limit (`MATCHER_TEXT_LIMITS`). */
  market: MatchableMarket;
  /** Canonical entity keys named by the question, event title and YES label (blocking). */
  entities: Set<string>;
  /** Entities the question itself names, which the other market should mention somewhere. */
  subjectEntities: Set<string>;
  /**
   * The subject entities named outside any parenthesis: what the question is about. A name in an
   * aside ("Lux (Rosalía)", "Kuomintang (KMT)", the candidate Kalshi appends to a party market) is
   * detail the other venue may leave out.
   */
  coreSubject: Set<string>;
  /**
   * Competitions, awards, offices and leagues the market is about (`knowledge/concepts.json`), from
   * its question, event title and Kalshi series: "Pro Football Championship" and "Super Bowl" agree.
   */
  topics: Set<string>;
  /** Entity keys that are words of a named topic ("nhl", "stanley", "cup"), matched by topic. */
  topicWords: Set<string>;
  /**
   * A Kalshi ticker whose year segment ("KXGTEMP-27-…") is not the year its title asks about
   * ("Will 2026 be …"): one of them is stale, so the market is not matched without a person.
   */
  tickerYearConflict: string | null;
  /**
   * The major party YES is about when the question names exactly one ("Will the Democrats win the
   * Florida Senate race?"): in a two-party race, the other party's market is its complement.
   */
  yesParty: "democrat" | "republican" | null;
  /** Teams the question, event title and YES label name (`knowledge/teams.json`), by id. */
  teams: Set<string>;
  /** Entity keys that are words of a team's name as written ("borussia", "crimson", "tide"). */
  teamWords: Set<string>;
  /** Each core subject entity -> the other entities of its run of capitalised words. */
  nameRunOf: Map<string, string[]>;
  /** Every word of all the market's text (question, event, labels, rules, source): entity checks. */
  allWords: Set<string>;
  /** Words of the question and its YES label, in order (the predicate is read from them). */
  questionWords: string[];
  /** Content words of the question side with counts (subject similarity). */
  content: Map<string, number>;
  /** Content words of the rules (a second opinion on the subject when titles are terse). */
  rulesContent: Map<string, number>;
  measure: Measure | null;
  /** The condition was read from a number the question itself states (not from the rules alone). */
  measureInQuestion: boolean;
  /** The date the question is about. */
  date: DateMention | null;
  /** Every day the question and rules mention (ranges give both ends). */
  allDays: Set<string>;
  /** Close time as an ET calendar day (YYYY-MM-DD), when known. */
  closeDay: string | null;
  /** An instant, any time in the window (a touch), or throughout the window (never touches). */
  observation: "any_time" | "at_time" | "throughout" | null;
  /** Time of day (UTC minutes) of an instant-observed market, when the rules name one. */
  minuteUtc: number | null;
  /** Action words with a direction: "office:-" (leaves), "pass:+"… */
  stances: Set<string>;
  /** What has to happen for YES: announce, call, certify, inaugurate, nominate, confirm… */
  basis: Set<string>;
  /**
   * What settles an election by the rules: a race `call`, `certify` (certification) or `inaugurate`
   * (taking office), the first the rules name (later ones are fallbacks); null when they name none.
   */
  trigger: "call" | "certify" | "inaugurate" | null;
  /** The question is about a seat in a chamber (House, Senate…) rather than an executive office. */
  legislative: boolean;
  /** The question is about an executive office (president, governor, mayor, prime minister…). */
  executive: boolean;
  /** Canonical settlement sources (stations, indices, agencies, exchanges) and measure variants. */
  sources: Map<string, Set<string>>;
  /** Time zones the rules count days or instants in ("utc", "et", "local"…). */
  zones: Set<string>;
  /** First day of the window (YYYY-MM-DD) when the market states one. */
  windowStart: string | null;
  /** Organisations named as the source of truth, with their acronyms ("bureau of labor statistics", "bls"). */
  namedSources: Set<string>;
  /** Tie, cancellation and postponement handling: situation -> outcome. */
  voidPolicy: Map<string, string>;
  /** The team or person YES is about, when the market is one side of a contest. */
  yesSubject: string | null;
  /** The two sides of a head-to-head contest, when the market is one. */
  participants: Set<string>;
  drawPossible: boolean;
  /** Rules missing, too short or a placeholder: the market cannot be auto-accepted. */
  placeholderRules: boolean;
  /** Blocking keys for the candidate index. */
  keys: string[];
}

// ---------------------------------------------------------------------------------------------

/**
 * How much of each venue text field the matcher reads, in UTF-16 code units. Venue text is input we
 * do not control: a feed that sends a megabyte of rules must not cost more than one that sends a
 * page. The limits sit far above real markets (questions and event titles run to about 200
 * characters, rules to a few KiB), so nothing a venue writes for people is lost; whatever is longer
 * is cut before any pattern runs, which bounds the work per market.
 */
export const MATCHER_TEXT_LIMITS = {
  question: 500,
  eventTitle: 500,
  rules: 16 * 1024,
  settlementSource: 1000,
  /** YES/NO labels: a name, a strike or a bucket. */
  label: 200,
} as const;

/** The market with each text field cut to `MATCHER_TEXT_LIMITS` (the same object when all fit). */
export function boundedMarket(market: MatchableMarket): MatchableMarket {
  const L = MATCHER_TEXT_LIMITS;
  const cut = <T extends string | null>(text: T, max: number): T => (text ? (clip(text, max) as T) : text);
  const question = cut(market.question, L.question);
  const eventTitle = cut(market.eventTitle, L.eventTitle);
  const rules = cut(market.rules, L.rules);
  const settlementSource = cut(market.settlementSource, L.settlementSource);
  const yesLabel = cut(market.yesLabel, L.label);
  const noLabel = cut(market.noLabel, L.label);
  if (
    question === market.question &&
    eventTitle === market.eventTitle &&
    rules === market.rules &&
    settlementSource === market.settlementSource &&
    yesLabel === market.yesLabel &&
    noLabel === market.noLabel
  )
    return market;
  return { ...market, question, eventTitle, rules, settlementSource, yesLabel, noLabel };
}

/** How often each word occurs in the lists, in the order words first occur. */
function countWords(...lists: string[][]): Map<string, number> {
  const out = new Map<string, number>();
  for (const ws of lists) for (const w of ws) out.set(w, (out.get(w) ?? 0) + 1);
  return out;
}

/** A lower-case word not at the start of a sentence (a headline capitalises every word). */
const LOWER_CASE_WORD = /(?<![.!?:]\s)\b[a-z][a-z'-]+/g;

// Patterns of extractFeatures. Each is linear in its text: where a pattern could start at every
// character of a run ("AAAA…", "a-a-a-…") and rescan the rest of the run each time, it starts only
// where the first match of the original would have.

/** A name: capitalised words. Starts only at the first capital of a run of name characters. */
const NAME_START = "(?=[A-Z])(?<![A-Z][\\w.'&-]*?)";
const NAME = "([A-Z][\\w.'&-]*(?:\\s+[A-Z0-9][\\w.'&-]*){0,3})";
/** "A vs. B", "A at B": the two sides of a contest. */
const VERSUS = new RegExp(`${NAME_START}${NAME}\\s+(?:vs\\.?|v\\.?|versus|at|@)\\s+(?:the\\s+)?${NAME}`);
/** "A beat B". */
const BEATS = new RegExp(
  // "win the Senate" names a prize, not an opponent: "win" takes one only with "against" or "over".
  `${NAME_START}${NAME}\\s+(?:(?:win|wins)\\s+(?:against|over)|beat|beats|defeat|defeats)\\s+(?:the\\s+)?${NAME}`,
);
/** "<word> win": the word before, from the first word character of its run. */
const WINNER = /(?<![a-z0-9'-])['-]*\b([a-z0-9'-]+)\s+(?:win|beat)\b/;
/** `on … at|close` in one line, `not|never … sufficient` in one sentence (see `followedBy`). */
const ON_WORD = /\bon\b/g;
const AT_OR_CLOSE = /\b(?:at|close)\b/g;
const LINE_END = /[\n\r\u2028\u2029]/g;
const NEGATION = /\b(?:not|never)\b/g;
const SUFFICES = /\b(?:sufficient|suffice|count|enough|qualify)\b/g;
const FULL_STOP = /\./g;

function isGeneric(label: string): boolean {
  return /^(yes|no)$/i.test(label.trim());
}

/** Reads a market into its contract features (from its text cut to `MATCHER_TEXT_LIMITS`). */
export function extractFeatures(market: MatchableMarket): ContractFeatures {
  const bounded = boundedMarket(market);
  const features = readFeatures(foldedMarket(bounded));
  // Read without diacritics, shown as the venue wrote it.
  features.market = bounded;
  return features;
}

/**
 * The market's text without diacritics, so that names read the same whichever way a venue spells
 * them ("Mélenchon", "Melenchon") and a capitalised run does not stop at "á" ("Hlaváček").
 */
function foldedMarket(market: MatchableMarket): MatchableMarket {
  const fold = <T extends string | null>(text: T): T => (text ? (foldDiacritics(text) as T) : text);
  return {
    ...market,
    question: fold(market.question),
    eventTitle: fold(market.eventTitle),
    rules: fold(market.rules),
    settlementSource: fold(market.settlementSource),
    yesLabel: fold(market.yesLabel),
    noLabel: fold(market.noLabel),
  };
}

/**
 * `extractFeatures` without the input limits. Only for measuring that the reading itself grows
 * linearly with its text (bench/matching-adversarial.ts): everything else reads bounded text.
 */
export function readFeatures(market: MatchableMarket): ContractFeatures {
  // A YES label that repeats the question (or is one) names no side: "Will Dallas beat
  // Philadelphia?" as a label would otherwise read its last city as the side YES is about.
  const labelText =
    isGeneric(market.yesLabel) || market.yesLabel === market.question || /\?\s*$/.test(market.yesLabel)
      ? ""
      : market.yesLabel;
  const questionRaw = [
    market.question,
    labelText && !market.question.includes(labelText) ? `(${labelText})` : "",
  ]
    .filter(Boolean)
    .join(" ");
  const question = normalizeText(questionRaw);
  const eventTitle = market.eventTitle ? normalizeText(market.eventTitle) : "";
  const rulesRaw = (market.rules ?? "").trim();
  const rules = normalizeText(rulesRaw);
  const source = normalizeText(market.settlementSource ?? "");
  const allText = `${question} ${eventTitle} ${rules} ${source}`;
  const closeMs = market.closeTime ? Date.parse(market.closeTime) : Number.NaN;
  // Close time as an Eastern calendar day: venues close "11:59 PM ET" markets at 04:59 UTC.
  const closeDay = Number.isFinite(closeMs)
    ? new Date(closeMs - 5 * 3_600_000).toISOString().slice(0, 10)
    : null;

  // Each text's words are read once, here: reading them is an array of new strings each time, and
  // the question's and event title's were read three times, the rules' twice. The words of all the
  // text are these four lists in turn (the space that joins them is not part of any word).
  const questionWords = words(question);
  const eventWords = words(eventTitle);
  const rulesWords = words(rules);
  const sourceWords = words(source);
  const headlineWords = [...questionWords, ...eventWords];
  const aliasedQuestion = questionWords.join(" ");
  const topicText = `${questionRaw} ${market.eventTitle ?? ""}`;
  const entities = extractEntities(topicText, headlineWords);
  // A capitalised word that the market also writes in lower case is a headline word, not a name.
  const lowerWords = new Set<string>();
  for (const w of `${market.question} ${rulesRaw}`.match(LOWER_CASE_WORD) ?? []) lowerWords.add(stem(w));
  const questionRuns = nameRuns(questionRaw);
  const subjectEntities = new Set(
    [...extractEntities(questionRaw, questionWords, questionRuns)].filter(
      (e) => TEAM_SET.has(e) || ASSETS.has(e) || !lowerWords.has(e),
    ),
  );
  const topics = new Set<string>();
  const topicWords = new Set<string>();
  for (const m of findConcepts(topicText)) {
    topics.add(m.concept.id);
    if (m.concept.league) topics.add(`league:${m.concept.league}`);
    for (const w of words(normalizeText(topicText.slice(m.start, m.end)))) {
      const key = entityWord(w);
      if (key) topicWords.add(key);
    }
  }
  if (market.venue === "kalshi" && market.venueMarketId) {
    const fromTicker = conceptsOfTicker(market.venueMarketId);
    for (const c of fromTicker.concepts) topics.add(c.id);
    for (const l of fromTicker.leagues) topics.add(`league:${l}`);
  }
  // Teams, read with the leagues the market is about ("Kansas City" is the Chiefs in the NFL).
  const leagues = teamLeagues([...topics].filter((t) => t.startsWith("league:")).map((t) => t.slice(7)));
  const teams = new Set<string>();
  const teamWords = new Set<string>();
  for (const m of findTeams(topicText, leagues)) {
    teams.add(m.team.id);
    for (const w of words(normalizeText(topicText.slice(m.start, m.end)))) {
      const key = entityWord(w);
      if (key) teamWords.add(key);
    }
  }
  if (market.venue === "kalshi" && market.venueMarketId && leagues.length > 0) {
    const team = teamFromTickerCode(market.venueMarketId, leagues);
    if (team) teams.add(team.id);
  }
  const questionCore = questionRaw.replace(/\([^()]*\)/g, " ");
  const questionCoreNormalized = normalizeText(questionCore);
  // A question without an aside is its own core: its runs and words are already read.
  const hasAside = questionCore !== questionRaw;
  const coreRuns = hasAside ? nameRuns(questionCore) : questionRuns;
  const nameRunOf = new Map<string, string[]>();
  for (const run of coreRuns) for (const key of run) nameRunOf.set(key, run);
  const coreSubject = new Set(
    [
      ...extractEntities(questionCore, hasAside ? words(questionCoreNormalized) : questionWords, coreRuns),
    ].filter((e) => subjectEntities.has(e)),
  );
  const textWords = [questionWords, eventWords, rulesWords, sourceWords];
  const allWords = new Set<string>();
  for (const ws of textWords) for (const w of ws) allWords.add(w);
  for (const ws of textWords) for (const w of ws) allWords.add(stem(w));

  const content = countWords(contentOfWords(questionWords), contentOfWords(eventWords));

  const stances = new Set<string>();
  for (const [stance, pattern] of STANCE_PATTERNS) if (pattern.test(aliasedQuestion)) stances.add(stance);

  const rulesNumbers = new RulesNumbers(rules);
  const questionMeasure = extractMeasure(question, rulesNumbers, allText, stances, aliasedQuestion);
  const measure = questionMeasure ?? rulesMeasure(rulesNumbers, allText);
  const yearOf = yearNear(closeDay);
  const questionDates = findDates(question, yearOf);
  const eventDates = findDates(eventTitle, yearOf);
  const rulesDates = findDates(rules, yearOf);
  const date = keyDate(questionDates, eventDates, rulesDates);

  // Built once: each concatenation is copied again by the first pattern that reads it.
  const questionAndRules = `${question} ${rules}`;
  const anyTime =
    /\b(reach|at any time|any time|ever|all-time high|hit|intraday|at any point|dip|dips|fall to|falls to|drop to|drops to|sink to|trade at)\b/.test(
      questionAndRules,
    );
  const atTime =
    /\b(close|closing|settle|settlement price|at \d{1,2}(:\d\d)?\s*(am|pm)|on (the date|that day)|candle|snapshot|fixing|final (price|value))\b/.test(
      questionAndRules,
    );
  const throughout =
    /\b(stay|stays|remain|remains|hold|holds) (below|under|above|over)\b|\bnever (reach|trade|go|fall|drop|rise)/.test(
      aliasedQuestion,
    );
  const observation: ContractFeatures["observation"] =
    measure && (measure.unit === "usd" || measure.unit === "%" || measure.unit === "n")
      ? throughout
        ? "throughout"
        : anyTime && !followedBy(question, ON_WORD, AT_OR_CLOSE, LINE_END)
          ? "any_time"
          : atTime || date?.kind === "on"
            ? "at_time"
            : null
      : null;

  // "Stay below $5,000 through 2026": YES is the price never reaching it, whatever the rules' phrasing.
  if (observation === "throughout" && measure && measure.comparator !== "between") {
    const below =
      /\b(stay|stays|remain|remains|hold|holds) (below|under)\b|\bnever (reach|rise|trade above|go above)/.test(
        aliasedQuestion,
      );
    const comparator: Comparator = below ? "<" : ">";
    if (measure.comparator !== comparator)
      Object.assign(measure, { comparator, text: measureText({ ...measure, comparator }) });
  }

  const sources = new Map<string, Set<string>>();
  const sourceText = `${source} ${rules}`;
  // Evidence a sentence rules out ("media reports … are not sufficient") is not evidence that counts.
  const evidenceText = sourceText
    .split(/(?<=[.;])\s+/)
    .filter((x) => !followedBy(x, NEGATION, SUFFICES, FULL_STOP) && !/\b(do|does) not count\b/.test(x))
    .join(" ");
  const headline = `${question} ${eventTitle}`;
  // Built once: a new concatenation per pattern would be copied again for every pattern it is read by.
  const headlineAndSource = `${headline} ${sourceText}`;
  for (const [group, pattern, value] of SOURCE_PATTERNS) {
    const text =
      group === "markettype"
        ? headline
        : group === "evidence"
          ? evidenceText
          : group === "stage"
            ? // A stage the question names; rules mention rounds and playoffs in passing ("playoff
              // games do not count", "the primary resolution source").
              headline
            : group === "cpi" || group === "domain" || group === "region" || group === "span"
              ? headlineAndSource
              : sourceText;
    if (!pattern.test(text)) continue;
    const set = sources.get(group) ?? new Set<string>();
    sources.set(group, set);
    set.add(value);
  }
  // "not seasonally adjusted" also matches the plain pattern's words; keep the explicit one.
  const adjust = sources.get("adjust");
  if (/\b(us|u\.s\.|united states) (and|&) canada\b|\bnorth america/.test(headlineAndSource))
    sources.get("region")?.delete("canada");
  if (sources.get("region")?.size === 0) sources.delete("region");
  const release = sources.get("release");
  if (release?.has("first") && release.has("revised")) release.delete("revised");
  if (
    adjust?.has("nsa") &&
    adjust.has("sa") &&
    !/(?<!not )seasonally adjusted/.test(sourceText.replace(/not seasonally adjusted/g, ""))
  )
    adjust.delete("sa");

  const basis = new Set<string>();
  for (const [name, pattern] of BASIS_PATTERNS) if (pattern.test(aliasedQuestion)) basis.add(name);
  // Kalshi states the condition in one sentence: "If Anthropic confirms an IPO before …, then the
  // market resolves to Yes." When that condition is a party confirming its own plan, the
  // confirmation is what counts, whatever the title says ("Who will IPO before 2027?"). ("The FOMC
  // announces a cut" is the event itself: an official body's announcement is how it happens.)
  if (/^\s*if\b[^.]{0,120}?\bconfirms\b/.test(rules)) basis.add("announce");
  let trigger: ContractFeatures["trigger"] = null;
  let triggerAt = Number.POSITIVE_INFINITY;
  for (const [name, pattern] of BASIS_PATTERNS) {
    if (name !== "call" && name !== "certify" && name !== "inaugurate") continue;
    const at = pattern.exec(rules)?.index;
    if (at !== undefined && at < triggerAt) {
      trigger = name;
      triggerAt = at;
    }
  }
  const legislative =
    /\b(house|senate|seat|congress(ional)?|representatives?|senators?|chamber|balance of power)\b/.test(
      headline,
    );

  // A contest: "A vs B", "A at B", "A beat B", or a YES label naming a team.
  const participants = new Set<string>();
  for (const w of headlineWords) if (TEAM_SET.has(w)) participants.add(w);
  // Unknown teams and players: "A vs. B", "A at B", "Will A beat B".
  const side = sideKey;
  for (const text of [questionRaw, market.eventTitle ?? ""]) {
    const m = VERSUS.exec(text) ?? BEATS.exec(text.replace(/^Will (the )?/, ""));
    if (!m) continue;
    for (const name of [m[1]!, m[2]!]) {
      const key = side(name);
      if (key) participants.add(key);
    }
  }
  // The rules name both teams in full even when a title uses cities ("Los Angeles L at Boston").
  const ruleTeams = new Set(
    (rules.length <= 600 ? rulesWords : words(rules.slice(0, 600))).filter((w) => TEAM_SET.has(w)),
  );
  if (ruleTeams.size === 2 && ![...participants].every((p) => ruleTeams.has(p))) {
    participants.clear();
    for (const t of ruleTeams) participants.add(t);
  }
  let yesSubject: string | null = null;
  if (labelText) {
    const lw = words(normalizeText(labelText));
    yesSubject =
      lw.find((w) => TEAM_SET.has(w)) ??
      lw
        .map(stem)
        .find(
          (w) =>
            w.length > 1 &&
            !/^\d/.test(w) &&
            !CAP_STOP.has(w) &&
            !STOPWORDS.has(w) &&
            !GENERIC_LABEL_WORDS.has(w),
        ) ??
      null;
  } else {
    const m = WINNER.exec(aliasedQuestion.replace(/\bwill (the )?/, ""));
    if (m) {
      const before = questionWords.slice(0, questionWords.indexOf(m[1]!) + 1).reverse();
      const candidate =
        before.find((w) => TEAM_SET.has(w)) ?? (m[1] && !CAP_STOP.has(m[1]) ? stem(m[1]) : null);
      yesSubject =
        candidate && (TEAM_SET.has(candidate) || subjectEntities.has(candidate)) ? candidate : null;
    }
  }
  if (
    /^(draw|tie)$/i.test(labelText.trim()) ||
    /\b(end|ends|finish|finishes) (in )?(a )?(draw|tie)\b/.test(question)
  )
    yesSubject = "draw";
  // "Boston" or "Kansas City" as the YES side: the participant who plays there.
  if (labelText && participants.size === 2 && yesSubject !== "draw") {
    const key = sideKey(labelText);
    const match = key ? [...participants].filter((p) => sameSide(p, key)) : [];
    if (match.length === 1) yesSubject = key!.startsWith("city:") ? match[0]! : key;
  } else if (
    yesSubject &&
    yesSubject !== "draw" &&
    participants.size === 2 &&
    !participants.has(yesSubject)
  ) {
    const said = sideKey(
      market.question.replace(/^Will (the )?/, "").split(/\s+(?:win|wins|beat|beats)\b/)[0] ?? "",
    );
    const match = said ? [...participants].filter((p) => sameSide(p, said)) : [];
    if (match.length === 1) yesSubject = match[0]!;
  }
  const drawPossible =
    [...participants].some((t) => SOCCER.has(t)) ||
    /\b(draw|tie)\b/.test(question) ||
    /\b(draw|drawn)\b|\bregulation time\b|\b90 minutes\b/.test(rules);

  const placeholderRules =
    rulesRaw.length < 40 ||
    PLACEHOLDER.test(rulesRaw) ||
    /\b(tbd|to be determined|placeholder)\b/i.test(rulesRaw.slice(0, 80));

  const keys: string[] = [];
  const month = date ? date.key.slice(0, 7) : closeDay ? closeDay.slice(0, 7) : "";
  // The venues' structure as well as their words: the same team, and the same named competition,
  // award or office in the same season, whatever each venue calls them ("San Antonio" / "Spurs",
  // "Pro Football Championship" / "Super Bowl"; a Kalshi series names one without a word of it).
  for (const t of teams) keys.push(`tm:${t}`);
  const season = date?.level === "year" ? (date.alt ?? date.key) : month.slice(0, 4);
  for (const t of topics) if (!t.startsWith("league:") && season) keys.push(`tp:${t}|${season}`);
  for (const t of participants) {
    if (TEAM_SET.has(t)) entities.add(t);
    const city = cityOf(t);
    if (city && month) keys.push(`ec:${city}|${month}`);
  }
  for (const e of entities) {
    keys.push(`e:${e}`);
    if (month) keys.push(`em:${e}|${month}`);
  }
  // The threshold (and its strict/inclusive neighbours) finds the same rung of a ladder.
  if (measure && month) {
    const values = [measure.value, measure.high, measure.value + measure.step, measure.value - measure.step];
    for (const v of values) if (v !== undefined) keys.push(`nv:${Number(v.toFixed(6))}|${month}`);
  }
  // Content words in the same month find markets whose subject is not a proper noun.
  if (month)
    for (const w of content.keys()) if (!entities.has(w) && w.length > 2) keys.push(`wm:${w}|${month}`);

  return {
    market,
    entities,
    subjectEntities,
    coreSubject,
    topics,
    topicWords,
    tickerYearConflict: tickerYearConflictOf(market, date),
    // The question's own words first; else a YES label naming a party ("Which party will win…?
    // (Republican)").
    yesParty: yesPartyOf(questionCoreNormalized) ?? (labelText ? yesPartyOf(normalizeText(labelText)) : null),
    teams,
    teamWords,
    nameRunOf,
    allWords,
    questionWords,
    content,
    rulesContent: countWords(contentOfWords(rulesWords)),
    measure,
    measureInQuestion: questionMeasure !== null,
    date,
    closeDay,
    allDays: new Set(
      [...questionDates, ...rulesDates, ...eventDates]
        .filter((d) => d.mention.level === "day")
        .flatMap((d) => [d.mention.key, ...(d.start ? [d.start] : [])]),
    ),
    observation,
    minuteUtc: observation === "at_time" ? minuteUtcOf(questionAndRules) : null,
    stances,
    basis,
    trigger,
    legislative,
    executive:
      !legislative &&
      /\b(president(ial|cy)?|governor(ship)?|gubernatorial|mayor(al)?|prime minister|premier|chancellor)\b/.test(
        headline,
      ),
    sources,
    voidPolicy: voidPolicyOf(rules),
    zones: zonesOf(questionAndRules),
    windowStart: windowStartOf(questionAndRules, yearOf, date),
    namedSources: namedSourcesOf(market.settlementSource ?? "", rulesRaw),
    yesSubject,
    participants,
    drawPossible,
    placeholderRules,
    keys,
  };
}

/** "ticker 2027, title 2026" when a Kalshi ticker's year segment and its title's year disagree. */
function tickerYearConflictOf(market: MatchableMarket, date: DateMention | null): string | null {
  if (market.venue !== "kalshi" || !market.venueMarketId || date?.level !== "year") return null;
  const segment = market.venueMarketId.split("-")[1];
  if (!segment || !/^\d\d$/.test(segment)) return null;
  const year = String(2000 + Number(segment));
  return year === date.key || year === date.alt ? null : `ticker ${year}, title ${date.key}`;
}

/**
 * The one major party a question makes its subject (after the aliases: Democratic, Dems, GOP…),
 * else null. "flip from Republican control" names a party YES is not about.
 */
function yesPartyOf(normalizedQuestion: string): ContractFeatures["yesParty"] {
  const named = new Set<string>();
  for (const m of normalizedQuestion.matchAll(/(\w+ )?\b(democrat|republican)\b/g))
    if (!/^(from|against|over|than|not) $/.test(m[1] ?? "")) named.add(m[2]!);
  return named.size === 1 ? (named.values().next().value as "democrat" | "republican") : null;
}

/**
 * The team leagues (`knowledge/teams.json`) a market's leagues draw teams from: a European club
 * competition draws on every European league, college sports on the NCAA, a nations' tournament on
 * national teams.
 */
function teamLeagues(leagues: string[]): string[] {
  const out = new Set<string>();
  for (const league of leagues) {
    if (league === "ucl" || league === "uel" || league === "uecl" || league === "club-world-cup")
      for (const l of ["epl", "laliga", "bundesliga", "seriea", "ligue1", "europe-other"]) out.add(l);
    else if (league === "ncaaf" || league === "ncaab" || league === "cfp") out.add("ncaa");
    else if (
      league === "nations-league" ||
      league === "world-cup" ||
      league === "euros" ||
      league === "copa-america"
    )
      out.add("national");
    else out.add(league);
  }
  return [...out];
}
