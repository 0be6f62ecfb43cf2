/**
 * Who and what a market is about: proper nouns, known teams (with the cities Kalshi names them by)
 * and assets, and the two sides of a head-to-head contest.
 */
import { MONTHS, normalizeText, STOPWORDS, stem, words } from "./text";

// Entities

export const CAP_STOP = new Set(
  (
    "will would who what which when where how why is are does do did can the a an in on at by to of for " +
    "and or if yes no this that these market markets above below over under between before after than " +
    "more less at least most highest lowest high low price any monday tuesday wednesday thursday friday " +
    "saturday sunday et utc pt est edt gmt am pm q1 q2 q3 q4 vs v versus part one two other otherwise " +
    "resolution source rules note up down new number how many much o/u over under us usa american america party candidate nominee team hike cut hold maintain maintains rate rates increase decrease change exactly bps or " +
    "next final finals copy"
  ).split(" "),
);

/** Team nicknames (unambiguous): the key of a team whatever the city spelling. */
export const TEAMS = (
  "man-city man-united lakers celtics warriors knicks nets bulls heat bucks nuggets suns mavericks clippers rockets spurs " +
  "thunder grizzlies pelicans timberwolves jazz kings blazers trail-blazers raptors 76ers sixers cavaliers " +
  "pistons pacers hawks hornets magic wizards chiefs broncos raiders chargers patriots bills dolphins jets " +
  "ravens steelers bengals browns texans colts jaguars titans cowboys eagles giants commanders packers " +
  "bears lions vikings saints buccaneers falcons panthers 49ers niners seahawks rams cardinals yankees " +
  "dodgers mets red-sox cubs astros braves phillies padres mariners orioles guardians rangers blue-jays " +
  "twins tigers royals white-sox angels athletics brewers reds pirates rockies marlins nationals rays " +
  "diamondbacks arsenal chelsea liverpool everton tottenham barcelona madrid juventus bayern psg " +
  "oilers maple-leafs canadiens bruins penguins blackhawks avalanche lightning hurricanes islanders"
).split(" ");
export const TEAM_SET = new Set(TEAMS);

/** Where each team plays: Kalshi often names a team by its city ("Oklahoma City", "Los Angeles L"). */
export const TEAM_CITY: Record<string, string> = Object.fromEntries(
  (
    "lakers:angeles celtics:boston warriors:golden-state knicks:york nets:brooklyn bulls:chicago heat:miami bucks:milwaukee " +
    "nuggets:denver suns:phoenix mavericks:dallas clippers:angeles rockets:houston spurs:antonio thunder:oklahoma " +
    "grizzlies:memphis pelicans:orleans timberwolves:minnesota jazz:utah kings:sacramento blazers:portland raptors:toronto " +
    "76ers:philadelphia sixers:philadelphia cavaliers:cleveland pistons:detroit pacers:indiana hawks:atlanta hornets:charlotte " +
    "magic:orlando wizards:washington chiefs:kansas broncos:denver raiders:vegas chargers:angeles patriots:england bills:buffalo " +
    "dolphins:miami jets:york ravens:baltimore steelers:pittsburgh bengals:cincinnati browns:cleveland texans:houston " +
    "colts:indianapolis jaguars:jacksonville titans:tennessee cowboys:dallas eagles:philadelphia giants:york commanders:washington " +
    "packers:green-bay bears:chicago lions:detroit vikings:minnesota saints:orleans buccaneers:tampa falcons:atlanta " +
    "panthers:carolina 49ers:francisco niners:francisco seahawks:seattle rams:angeles cardinals:arizona yankees:york " +
    "dodgers:angeles mets:york cubs:chicago astros:houston braves:atlanta phillies:philadelphia padres:diego mariners:seattle " +
    "orioles:baltimore guardians:cleveland brewers:milwaukee reds:cincinnati pirates:pittsburgh rockies:colorado marlins:miami " +
    "nationals:washington rays:tampa diamondbacks:arizona oilers:edmonton canadiens:montreal bruins:boston penguins:pittsburgh " +
    "blackhawks:chicago avalanche:colorado lightning:tampa hurricanes:carolina islanders:york"
  )
    .split(" ")
    .map((pair) => pair.split(":") as [string, string]),
);
// Null prototype: TEAM_CITY is looked up with words of venue text, and "constructor" (an F1
// market's "Constructors' Champion") must not find Object's own.
Object.setPrototypeOf(TEAM_CITY, null);

export const CITY_WORDS = new Set(Object.values(TEAM_CITY).flatMap((c) => c.split("-")));

/**
 * One side of a contest as a key: a team nickname ("lakers"), or where only a city is given (Kalshi
 * writes "Los Angeles L at Boston") `city:<city>` plus the nickname's initial when one follows.
 */
export function sideKey(name: string): string | null {
  const ws = words(normalizeText(name));
  const nick = ws.find((w) => TEAM_SET.has(w));
  if (nick) return nick;
  const cityIndex = ws
    .map((w, i) => (CITY_WORDS.has(w) ? i : -1))
    .filter((i) => i >= 0)
    .pop();
  if (cityIndex !== undefined) {
    const initial = ws[cityIndex + 1];
    return `city:${ws[cityIndex]}${initial && initial.length === 1 ? `:${initial}` : ""}`;
  }
  const last = name.trim().split(/\s+/).slice(-1)[0] ?? "";
  return entityKey(last);
}

export function cityOf(key: string): string | null {
  if (key.startsWith("city:")) return key.split(":")[1] ?? null;
  return TEAM_CITY[key]?.split("-").pop() ?? null;
}

/** Whether two side keys name the same team ("lakers" and "city:angeles:l"). */
export function sameSide(p: string, q: string): boolean {
  if (p === q) return true;
  const parse = (k: string) => {
    if (!k.startsWith("city:"))
      return TEAM_CITY[k] ? { nick: k, cities: TEAM_CITY[k]!.split("-"), initial: k[0] } : null;
    const [, city, initial] = k.split(":");
    return { nick: null, cities: [city!], initial };
  };
  const a = parse(p);
  const b = parse(q);
  if (!a || !b) return false;
  if (a.nick && b.nick) return a.nick === b.nick;
  const shareCity = a.cities.some((c) => b.cities.includes(c));
  const initialsAgree = !a.initial || !b.initial || a.initial === b.initial;
  return shareCity && initialsAgree;
}

/** Words of the other market that stand for `entity` (a team's city counts for the team). */
export function entityAliases(entity: string): string[] {
  const city = TEAM_CITY[entity];
  return city ? [entity, ...city.split("-")] : [entity];
}

/**
 * Whether `words` holds one of `entityAliases(entity)`. Without building the list: every comparison
 * asks this of each name on both sides, and the list was garbage each time.
 */
export function mentionsEntity(words: ReadonlySet<string>, entity: string): boolean {
  if (words.has(entity)) return true;
  const cityWords = TEAM_CITY_WORDS.get(entity);
  if (cityWords) for (const w of cityWords) if (words.has(w)) return true;
  return false;
}

/** Each team's city words ("golden-state" -> golden, state), split once. */
const TEAM_CITY_WORDS = new Map(Object.entries(TEAM_CITY).map(([team, city]) => [team, city.split("-")]));
/** Words of a YES label that do not say who YES is about ("Democratic party", "Team Liquid"). */
export const GENERIC_LABEL_WORDS = new Set([
  "party",
  "team",
  "candidate",
  "club",
  "fc",
  "the",
  "mr",
  "ms",
  "dr",
  "jr",
  "sr",
]);
export const SOCCER = new Set([
  "man-city",
  "man-united",
  "arsenal",
  "chelsea",
  "liverpool",
  "everton",
  "tottenham",
  "barcelona",
  "madrid",
  "juventus",
  "bayern",
  "psg",
]);

export function entityKey(token: string): string | null {
  const n = words(normalizeText(token));
  const w = n[n.length - 1];
  if (!w || w.length < 2 || DIGIT_START.test(w) || CAP_STOP.has(w) || MONTHS[w] !== undefined) return null;
  return TEAM_SET.has(w) ? w : stem(w);
}

/**
 * Capitalised runs of the original text (proper nouns), normalised as a whole so "Federal Reserve"
 * becomes "fed"; plus known team names and assets wherever they appear.
 */
export function extractEntities(
  text: string,
  normalized: string[],
  runs: string[][] = nameRuns(text),
): Set<string> {
  const out = new Set<string>();
  for (const run of runs) for (const key of run) out.add(key);
  for (const w of normalized) if (TEAM_SET.has(w) || ASSETS.has(w)) out.add(w);
  return out;
}

/**
 * The entity keys of each run of capitalised words ("Francis James Allison Oyague", "Borussia
 * Dortmund", "UEFA Champions League"): one name, however much of it a venue writes.
 */
export function nameRuns(text: string): string[][] {
  const runs: string[][] = [];
  // The runs as strings (`match`), not a match object each (`matchAll`).
  for (const name of text.match(NAME_RUN) ?? []) {
    const run: string[] = [];
    for (const w of words(normalizeText(name))) {
      const key = entityWord(w);
      if (key) run.push(key);
    }
    if (run.length > 0) runs.push(run);
  }
  return runs;
}

// Constants of the module, not literals in the functions: a pattern written inside a function is a
// new RegExp object every time it runs, and these run for every name and every word of a market.
// (`match` reads a global pattern from its start every time, so NAME_RUN is safe to share.)
const NAME_RUN = /[A-Z][A-Za-z0-9'.&-]*(?:\s+(?:of\s+|the\s+|de\s+|&\s+)?[A-Z0-9][A-Za-z0-9'.&-]*)*/g;
const DIGIT_START = /^\d/;

export const ASSETS = new Set(["bitcoin", "ethereum", "solana", "dogecoin", "fed", "cpi"]);

export function entityWord(w: string): string | null {
  if (w.length < 2 || DIGIT_START.test(w) || CAP_STOP.has(w) || STOPWORDS.has(w) || MONTHS[w] !== undefined)
    return null;
  return TEAM_SET.has(w) ? w : stem(w);
}
