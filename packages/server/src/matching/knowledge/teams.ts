/**
 * Team knowledge: which sports team a piece of venue text names. Polymarket writes full names or
 * nicknames ("San Antonio Spurs", "Bayern Munich"), Kalshi writes places and initials ("San Antonio",
 * "Los Angeles C") and ends its tickers in a team code ("KXNBA-27-SAS"). One index over teams.json
 * resolves all of them; how sure a form is decides what else must hold before it counts:
 *   - a full name counts anywhere;
 *   - a place (a city, or a name that is also one) counts only for the leagues the market is about;
 *   - an ordinary English word ("Heat", "Kings") counts when capitalised, or for those leagues;
 *   - a code counts only as an ALL-CAPS token and only for those leagues.
 * A form that still points at two teams names neither.
 */
import data from "./teams.json" with { type: "json" };

export type LeagueId = string;

export interface Team {
  id: string;
  league: LeagueId;
  sport: string;
  name: string;
  city: string;
  nickname: string;
  codes: string[];
  aliases: string[];
}

export interface TeamMention {
  team: Team;
  start: number;
  end: number;
  via: "name" | "nickname" | "city" | "alias" | "code";
}

type Via = TeamMention["via"];

/** Venue text is read only this far: every market names its teams well before. */
const TEXT_LIMIT = 4096;

/**
 * Nicknames and aliases that are also ordinary words: in prose they are usually not teams ("the heat
 * of the moment", "bills in Congress"), so they need a capital or the market's league.
 */
const PLAIN_WORDS = new Set(
  (
    "aces angels arsenal athletics avalanche badgers bears beavers bills blades blazers blues bolts braves " +
    "brewers broncos browns bucks buffs bulldogs bulls cal canes cardinal cardinals cards caps cavaliers " +
    "celtic chargers cherries chiefs citizens clippers colts commanders commodores cougars cowboys crew cubs " +
    "cyclones devils dodgers dolphins dream ducks dukes dynamo eagles earthquakes elephants falcons fever " +
    "fins fire flames flyers forest foxes friars gaels galaxy gators giants gophers guardians gunners " +
    "hammers hawks heat hogs hornets horns huskies hurricanes inter islanders isles jaguars jays jazz jets " +
    "kings knights kraken lens liberty lightning lions lynx magic magpies mammoth mariners mavericks " +
    "mercury midshipmen mountaineers musketeers mustangs nationals nets nice nova orange owls packers " +
    "palace panthers patriots pats pelicans penguins pens pirates predators raiders rams rangers rapids " +
    "rays rebels reds revolution rockets royals sabres saints seagulls senators sharks shockers sky " +
    "sparks spartans sporting spurs stars steelers storm sun suns tempo thunder tigers titans toffees " +
    "trojans twins union villa vikings volunteers warriors wild wildcats wings wizards wolves"
  ).split(" "),
);

/**
 * Plain words that prose capitalises as often as sport does ("How many Senators vote…"): these need
 * the market's league even when capitalised.
 */
const CIVIC_WORDS = new Set(["nationals", "patriots", "rebels", "senators", "union"]);

/**
 * ALL-CAPS words of ordinary headlines that are also team codes ("YES or NO", "MIN"): never read
 * as codes in prose. A ticker's own code still resolves through teamFromTickerCode.
 */
const PROSE_CODES = new Set(
  "AN AND ARE AS AT BE BIG DO END FOR GO HOT IN IS IT MAN MAX MIN MY NEW NO NOT OFF OK ON ONE OR OUT SO SUN THE TIE TO TOP TWO UP US WE WIN YES".split(
    " ",
  ),
);

/** Country names: a national team is named only when the market is about national teams. */
const PLACE_NAMED_LEAGUES = new Set<LeagueId>(["national"]);

/** How much must hold before a form counts; see the header. */
const Need = { Nothing: 0, CapitalOrLeague: 1, League: 2, Code: 3 } as const;
type Need = (typeof Need)[keyof typeof Need];

/** A stronger form beats a weaker one for the same words: "Liverpool" the club, not Everton's town. */
const STRENGTH: Record<Via, number> = { name: 4, nickname: 3, alias: 3, city: 2, code: 1 };

interface Entry {
  team: Team;
  via: Via;
  need: Need;
}

interface Phrase {
  words: string[];
  entries: Entry[];
}

interface RawLeague {
  sport: string;
  teams: Array<{
    id: string;
    name: string;
    city: string;
    nickname: string;
    codes: string[];
    aliases: string[];
  }>;
}

const FOLD_EXTRA: Record<string, string> = {
  ß: "ss",
  ø: "o",
  æ: "ae",
  œ: "oe",
  đ: "d",
  ł: "l",
  ı: "i",
  þ: "th",
};
const foldCache = new Map<string, string>();

/** One code point, lowercased and without diacritics ("É" -> "e", "ø" -> "o"). */
function foldChar(ch: string): string {
  if (ch.length === 1 && ch.charCodeAt(0) < 128) return ch.toLowerCase();
  let folded = foldCache.get(ch);
  if (folded === undefined) {
    folded = ch.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
    folded = FOLD_EXTRA[folded] ?? folded;
    if (foldCache.size < 4096) foldCache.set(ch, folded);
  }
  return folded;
}

/** Separators a team's name may span ("St. Louis", "Paris Saint-Germain", "Texas A&M", "Miami (FL)");
 *  a comma or a colon ends a name. */
const JOINING = /^[\s.\-'’&/()]*$/u;
const WORD = /[\p{L}\p{N}]+/gu;

interface Token {
  word: string;
  /** Original text range. */
  start: number;
  end: number;
  /** Whether only joining separators lie between this token and the previous one. */
  joined: boolean;
}

/** Words of `text` with their original ranges, folded; linear in the text. */
function tokenize(text: string): Token[] {
  // ASCII text (nearly all venue text) folds to its lower case character for character: folded
  // character i comes from text[i], and no combining mark follows a word. So the folded text is
  // one call, not a string built a character at a time with two tables of offsets (left null).
  const ascii = ASCII.test(text);
  let folded = ascii ? text.toLowerCase() : "";
  // Original start and end of the code point each folded character came from.
  const fromStart: number[] | null = ascii ? null : [];
  const fromEnd: number[] | null = ascii ? null : [];
  let i = 0;
  if (fromStart && fromEnd)
    for (const ch of text) {
      const f = foldChar(ch);
      for (let k = 0; k < f.length; k++) {
        fromStart.push(i);
        fromEnd.push(i + ch.length);
      }
      folded += f;
      i += ch.length;
    }
  const tokens: Token[] = [];
  let prevEnd = -1;
  for (const m of folded.matchAll(WORD)) {
    const a = m.index;
    const b = a + m[0].length;
    let end = fromEnd ? fromEnd[b - 1]! : b;
    // Decomposed input: the marks after the last letter belong to the word.
    if (!ascii) while (end < text.length && /\p{M}/u.test(text[end]!)) end++;
    const gap = prevEnd < 0 ? "" : folded.slice(prevEnd, a);
    const start = fromStart ? fromStart[a]! : a;
    tokens.push({ word: m[0], start, end, joined: prevEnd >= 0 && JOINING.test(gap) });
    prevEnd = b;
  }
  return tokens;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range itself
const ASCII = /^[\x00-\x7f]*$/;

function words(phrase: string): string[] {
  return tokenize(phrase).map((t) => t.word);
}

const isUpper = (s: string) => s === s.toUpperCase() && s !== s.toLowerCase();
const startsUpper = (s: string) => {
  const c = s[0]!;
  return (c >= "0" && c <= "9") || isUpper(c);
};

function loadTeams(): Team[] {
  const teams: Team[] = [];
  for (const [league, raw] of Object.entries(data.leagues as Record<string, RawLeague>)) {
    for (const t of raw.teams) {
      teams.push({
        id: t.id,
        league,
        sport: raw.sport,
        name: t.name,
        city: t.city,
        nickname: t.nickname,
        codes: [...t.codes],
        aliases: [...t.aliases],
      });
    }
  }
  return teams;
}

export const TEAMS: readonly Team[] = Object.freeze(loadTeams());

const BY_ID = new Map(TEAMS.map((t) => [t.id, t]));
/** League -> code -> teams (a list, so that a duplicated code is seen as ambiguous). */
const BY_CODE = new Map<LeagueId, Map<string, Team[]>>();
/** First folded word -> phrases starting with it, longest first. */
const INDEX = new Map<string, Phrase[]>();

function buildIndex(): void {
  const phrases = new Map<string, Phrase>();
  const add = (phrase: string, team: Team, via: Via, need: Need) => {
    const w = words(phrase);
    if (w.length === 0) return;
    const key = w.join(" ");
    let p = phrases.get(key);
    if (!p) {
      p = { words: w, entries: [] };
      phrases.set(key, p);
    }
    // A team may own a phrase in several ways ("OM" alias and code); each way has its own condition.
    if (!p.entries.some((e) => e.team === team && e.via === via && e.need === need)) {
      p.entries.push({ team, via, need });
    }
  };

  // Places: every city within its league, and every country.
  const places = new Set<string>();
  for (const t of TEAMS) {
    const key = words(t.city).join(" ");
    places.add(`${t.league}|${key}`);
    if (PLACE_NAMED_LEAGUES.has(t.league)) places.add(`*|${key}`);
  }
  const needOf = (team: Team, phrase: string, via: Via): Need => {
    const w = words(phrase);
    const key = w.join(" ");
    if (PLACE_NAMED_LEAGUES.has(team.league) && via !== "nickname") return Need.League;
    if (places.has(`${team.league}|${key}`) || places.has(`*|${key}`)) return Need.League;
    if (w.length === 1) {
      const word = w[0]!;
      // "OM", "AZ": too short to be sure of in prose.
      if (word.length <= 2) return Need.League;
      if (CIVIC_WORDS.has(word)) return Need.League;
      if (PLAIN_WORDS.has(word)) return Need.CapitalOrLeague;
    }
    return Need.Nothing;
  };

  for (const team of TEAMS) {
    add(team.name, team, "name", needOf(team, team.name, "name"));
    add(team.nickname, team, "nickname", needOf(team, team.nickname, "nickname"));
    for (const alias of team.aliases) add(alias, team, "alias", needOf(team, alias, "alias"));
    add(team.city, team, "city", Need.League);
    for (const code of team.codes) {
      add(code, team, "code", Need.Code);
      const codes = BY_CODE.get(team.league) ?? new Map<string, Team[]>();
      BY_CODE.set(team.league, codes);
      const key = code.toUpperCase();
      codes.set(key, [...(codes.get(key) ?? []), team]);
    }
  }

  // Kalshi tells apart teams of one city by an initial: "Los Angeles C" / "Los Angeles L".
  const byCity = new Map<string, Team[]>();
  for (const t of TEAMS) {
    const key = `${t.league}|${words(t.city).join(" ")}`;
    byCity.set(key, [...(byCity.get(key) ?? []), t]);
  }
  for (const group of byCity.values()) {
    if (group.length < 2) continue;
    const initial = (t: Team) => words(t.nickname)[0]?.[0] ?? "";
    for (const t of group) {
      const i = initial(t);
      if (i && group.filter((o) => initial(o) === i).length === 1)
        add(`${t.city} ${i}`, t, "city", Need.League);
    }
  }

  for (const p of phrases.values()) {
    const first = p.words[0]!;
    const list = INDEX.get(first) ?? [];
    list.push(p);
    INDEX.set(first, list);
  }
  for (const list of INDEX.values()) list.sort((a, b) => b.words.length - a.words.length);
}

buildIndex();

/**
 * Whether a capital tells a name from a word here: not in a Title Case or ALL-CAPS headline ("Will
 * Trump Sign More Than 10 Bills?"), where every longer word has one.
 */
function capitalsMeanNames(tokens: readonly Token[], text: string): boolean {
  let words = 0;
  let capitalised = 0;
  for (const t of tokens) {
    const original = text.slice(t.start, t.end);
    if (original.length < 4 || !LETTERS_ONLY.test(original)) continue;
    words++;
    if (startsUpper(original)) capitalised++;
  }
  return words < 3 || capitalised < words * 0.75;
}

/** A constant, not a literal in the loop above: a literal is a new RegExp object each time it runs. */
const LETTERS_ONLY = /^\p{L}+$/u;

/** The one team `phrase` names here, or undefined when none or several. */
function resolve(
  p: Phrase,
  tokens: readonly Token[],
  at: number,
  text: string,
  scope: ReadonlySet<LeagueId> | null,
  capitals: boolean,
): Entry | undefined {
  const span = tokens.slice(at, at + p.words.length);
  const capitalised = capitals && span.every((t) => startsUpper(text.slice(t.start, t.end)));
  let ok: Entry[] = [];
  for (const e of p.entries) {
    const inScope = scope?.has(e.team.league) ?? false;
    let admitted: boolean;
    switch (e.need) {
      case Need.Nothing:
        admitted = true;
        break;
      case Need.CapitalOrLeague:
        admitted = scope ? inScope : capitalised;
        break;
      case Need.League:
        admitted = inScope;
        break;
      case Need.Code: {
        const original = text.slice(span[0]!.start, span[0]!.end);
        admitted = inScope && isUpper(original) && !PROSE_CODES.has(original);
        break;
      }
    }
    if (admitted) ok.push(e);
  }
  if (ok.length === 0) return undefined;
  // A team of the market's leagues over a namesake elsewhere ("Panthers" for the NHL).
  if (scope && ok.some((e) => scope.has(e.team.league))) ok = ok.filter((e) => scope.has(e.team.league));
  const best = Math.max(...ok.map((e) => STRENGTH[e.via]));
  ok = ok.filter((e) => STRENGTH[e.via] === best);
  const team = ok[0]!.team;
  return ok.every((e) => e.team === team) ? ok[0] : undefined;
}

/** Every team mention in `text` (original text, any case/diacritics), longest match first, no overlaps.
 *  `leagues`: the leagues the market is about (from its competition or ticker); when given, only
 *  teams of those leagues are matched by city or ambiguous alias/nickname; full names always match. */
export function findTeams(text: string, leagues?: readonly LeagueId[] | null): TeamMention[] {
  const clipped = text.length > TEXT_LIMIT ? text.slice(0, TEXT_LIMIT) : text;
  const scope = leagues && leagues.length > 0 ? new Set(leagues) : null;
  const tokens = tokenize(clipped);
  const capitals = capitalsMeanNames(tokens, clipped);
  const found: TeamMention[] = [];
  let i = 0;
  while (i < tokens.length) {
    const candidates = INDEX.get(tokens[i]!.word);
    let consumed = 1;
    if (candidates) {
      for (const p of candidates) {
        const n = p.words.length;
        if (i + n > tokens.length) continue;
        let fits = true;
        for (let k = 1; k < n && fits; k++) {
          const t = tokens[i + k]!;
          fits = t.joined && t.word === p.words[k];
        }
        if (!fits) continue;
        // The longest phrase present owns its words even when it names no team here: "Kansas City"
        // with college leagues is not Kansas, "Boston College" is not the Celtics.
        consumed = n;
        const entry = resolve(p, tokens, i, clipped, scope, capitals);
        if (entry) {
          found.push({
            team: entry.team,
            start: tokens[i]!.start,
            end: tokens[i + n - 1]!.end,
            via: entry.via,
          });
        }
        break;
      }
    }
    i += consumed;
  }
  return found;
}

/** The team a Kalshi ticker's last segment names ("KXNBA-27-SAS" -> Spurs) within the given leagues; undefined when unknown or ambiguous. */
export function teamFromTickerCode(code: string, leagues: readonly LeagueId[]): Team | undefined {
  const key = code
    .slice(code.lastIndexOf("-") + 1)
    .trim()
    .toUpperCase();
  if (!key) return undefined;
  const teams = new Set<Team>();
  for (const league of new Set(leagues)) for (const t of BY_CODE.get(league)?.get(key) ?? []) teams.add(t);
  return teams.size === 1 ? [...teams][0] : undefined;
}

export function teamById(id: string): Team | undefined {
  return BY_ID.get(id);
}
