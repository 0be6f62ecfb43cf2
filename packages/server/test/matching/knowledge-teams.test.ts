/**
 * Team knowledge: the data (teams.json) and the lookup that reads venue text with it. The last block
 * runs every team's own name, nickname, city and codes through the lookup, so a data edit that makes a
 * form unreachable or ambiguous fails here.
 */
import { describe, expect, it } from "vitest";
import {
  findTeams,
  type LeagueId,
  TEAMS,
  type Team,
  teamById,
  teamFromTickerCode,
} from "../../src/matching/knowledge/teams";
import data from "../../src/matching/knowledge/teams.json" with { type: "json" };

interface RawTeam {
  id: string;
  codes: string[];
  extra?: boolean;
}
const LEAGUES = data.leagues as unknown as Record<string, { sport: string; teams: RawTeam[] }>;

/** Ids of the teams `text` mentions, in order. */
function ids(text: string, leagues?: readonly LeagueId[] | null): string[] {
  return findTeams(text, leagues).map((m) => m.team.id);
}

/** The one team `text` names (fails when it names none or several). */
function one(text: string, leagues?: readonly LeagueId[] | null): string {
  const found = ids(text, leagues);
  expect(found, `${text} (${leagues?.join(",") ?? "no leagues"})`).toHaveLength(1);
  return found[0]!;
}

const fold = (s: string) =>
  s
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

describe("teams.json", () => {
  const current = (league: string) => LEAGUES[league]!.teams.filter((t) => !t.extra).length;

  it("has every league's current membership", () => {
    expect(current("nfl")).toBe(32);
    expect(current("nba")).toBe(30);
    expect(current("mlb")).toBe(30);
    expect(current("nhl")).toBe(32);
    expect(current("wnba")).toBe(15);
    expect(current("mls")).toBe(30);
    expect(current("epl")).toBe(20);
    expect(current("laliga")).toBe(20);
    expect(current("bundesliga")).toBe(18);
    expect(current("seriea")).toBe(20);
    expect(current("ligue1")).toBe(18);
    // Relegated or promotion-chasing clubs are kept, flagged, for next season's markets.
    expect(LEAGUES["epl"]!.teams.filter((t) => t.extra).length).toBeGreaterThanOrEqual(3);
    expect(current("europe-other")).toBeGreaterThanOrEqual(25);
    expect(current("national")).toBeGreaterThanOrEqual(60);
    expect(current("ncaa")).toBeGreaterThanOrEqual(69);
  });

  it("has unique ids prefixed by their league", () => {
    const seen = new Set<string>();
    for (const [league, { teams }] of Object.entries(LEAGUES)) {
      for (const t of teams) {
        expect(t.id.startsWith(`${league}:`), t.id).toBe(true);
        expect(seen.has(t.id), t.id).toBe(false);
        seen.add(t.id);
      }
    }
    expect(TEAMS).toHaveLength(seen.size);
  });

  it("gives every team a code and no two teams of a league the same code", () => {
    for (const [league, { teams }] of Object.entries(LEAGUES)) {
      const owner = new Map<string, string>();
      for (const t of teams) {
        expect(t.codes.length, t.id).toBeGreaterThan(0);
        for (const code of t.codes) {
          expect(code, t.id).toMatch(/^[A-Z0-9]{2,7}$/);
          expect(owner.get(code), `${league} ${code}`).toBeUndefined();
          owner.set(code, t.id);
        }
      }
    }
  });

  it("gives every team a name, city and nickname", () => {
    for (const t of TEAMS) {
      expect(t.name.trim(), t.id).not.toBe("");
      expect(t.city.trim(), t.id).not.toBe("");
      expect(t.nickname.trim(), t.id).not.toBe("");
      expect(teamById(t.id)).toBe(t);
    }
    expect(teamById("nba:no-such-team")).toBeUndefined();
  });
});

describe("findTeams", () => {
  it("ignores case and diacritics", () => {
    expect(one("SAN ANTONIO SPURS")).toBe("nba:san-antonio-spurs");
    expect(one("Atlético Madrid")).toBe(one("Atletico Madrid"));
    expect(one("bayern münchen")).toBe(one("Bayern Munchen"));
    // Decomposed input: "e" followed by a combining acute.
    const decomposed = "Atle\u0301tico Madrid wins";
    const [m] = findTeams(decomposed);
    expect(m?.team.id).toBe("laliga:atletico-madrid");
    expect(decomposed.slice(m!.start, m!.end)).toBe("Atle\u0301tico Madrid");
  });

  it("reports original offsets and how the team was named", () => {
    const text = "Will the Los Angeles Clippers beat Miami?";
    const [m] = findTeams(text);
    expect(m).toMatchObject({ via: "name", start: 9, end: 29 });
    expect(text.slice(m!.start, m!.end)).toBe("Los Angeles Clippers");
    expect(findTeams("Sixers vs Celtics").map((x) => x.via)).toEqual(["alias", "nickname"]);
  });

  it("matches whole words only", () => {
    expect(ids("a heatwave in Miami")).toEqual([]);
    expect(ids("the celticsfan account")).toEqual([]);
    expect(one("Jazz win")).toBe("nba:utah-jazz");
    expect(ids("Jazz-Lakers", ["nba"])).toEqual(["nba:utah-jazz", "nba:los-angeles-lakers"]);
  });

  it("prefers the longest match and never overlaps", () => {
    expect(findTeams("Los Angeles Clippers", ["nba"]).map((m) => m.via)).toEqual(["name"]);
    expect(one("Manchester City", ["epl"])).toBe("epl:manchester-city");
    expect(ids("Manchester", ["epl"])).toEqual([]);
    expect(ids("Boston College", ["nba", "ncaa"])).toEqual(["ncaa:boston-college-eagles"]);
    // A longer place owns its words even outside the leagues: Kansas City is not Kansas.
    expect(ids("Kansas City", ["ncaa"])).toEqual([]);
    expect(ids("New York Knicks vs Brooklyn Nets")).toEqual(["nba:new-york-knicks", "nba:brooklyn-nets"]);
  });

  it("joins a name across brackets but not across a comma", () => {
    expect(ids("Los Angeles, Clippers fans", ["nfl"])).toEqual([]);
    expect(ids("Miami (FL) vs Miami (OH)", ["ncaa"])).toEqual([
      "ncaa:miami-hurricanes",
      "ncaa:miami-oh-redhawks",
    ]);
  });

  it("matches a bare city only for the market's leagues, and only when one team there has it", () => {
    expect(ids("San Antonio")).toEqual([]);
    expect(one("San Antonio", ["nba"])).toBe(one("San Antonio Spurs"));
    expect(one("Kansas City", ["nfl"])).toBe("nfl:kansas-city-chiefs");
    expect(one("Kansas City", ["mlb"])).toBe("mlb:kansas-city-royals");
    expect(ids("Kansas City")).toEqual([]);
    expect(ids("Kansas City", ["nfl", "mlb"])).toEqual([]);
    expect(ids("Los Angeles", ["nba"])).toEqual([]);
    expect(one("Los Angeles", ["nhl"])).toBe("nhl:los-angeles-kings");
    expect(one("New York", ["nba"])).toBe("nba:new-york-knicks");
    expect(ids("London", ["epl"])).toEqual([]);
  });

  it("tells a city's teams apart by the initial Kalshi writes", () => {
    expect(one("Los Angeles C", ["nba"])).toBe("nba:los-angeles-clippers");
    expect(one("Los Angeles L", ["nba"])).toBe("nba:los-angeles-lakers");
    expect(one("Los Angeles C", ["nfl"])).toBe("nfl:los-angeles-chargers");
    expect(one("Los Angeles D", ["mlb"])).toBe("mlb:los-angeles-dodgers");
    expect(one("Los Angeles A", ["mlb"])).toBe("mlb:los-angeles-angels");
    expect(one("New York Y", ["mlb"])).toBe("mlb:new-york-yankees");
    expect(one("New York M", ["mlb"])).toBe("mlb:new-york-mets");
    expect(one("New York G", ["nfl"])).toBe("nfl:new-york-giants");
    expect(one("New York J", ["nfl"])).toBe("nfl:new-york-jets");
    expect(one("New York R", ["nhl"])).toBe("nhl:new-york-rangers");
    expect(one("New York I", ["nhl"])).toBe("nhl:new-york-islanders");
    expect(ids("Los Angeles C")).toEqual([]);
  });

  it("reads a nickname that is an ordinary word only when capitalised or for its league", () => {
    expect(ids("the heat of the moment")).toEqual([]);
    expect(ids("bills in congress")).toEqual([]);
    expect(one("Miami Heat")).toBe("nba:miami-heat");
    expect(one("Heat win the title")).toBe("nba:miami-heat");
    expect(one("will the heat win", ["nba"])).toBe("nba:miami-heat");
    // For other leagues the word is just a word.
    expect(ids("heat", ["nfl"])).toEqual([]);
    expect(ids("Heat", ["nfl"])).toEqual([]);
    // In a Title Case headline every word has a capital, so a capital proves nothing.
    expect(ids("Will Trump Sign More Than 10 Bills in 2025?")).toEqual([]);
    expect(one("Will Trump Sign More Than 10 Bills in 2025?", ["nfl"])).toBe("nfl:buffalo-bills");
    // Words prose capitalises as often as sport does need the league.
    expect(ids("How many Senators vote to convict?")).toEqual([]);
    expect(ids("Senators vs Leafs", ["nhl"])).toEqual(["nhl:ottawa-senators", "nhl:toronto-maple-leafs"]);
    // A distinctive nickname needs neither.
    expect(one("will the celtics repeat")).toBe("nba:boston-celtics");
  });

  it("leaves a nickname two teams share unresolved unless the leagues decide", () => {
    expect(ids("Spurs")).toEqual([]);
    expect(one("Spurs", ["nba"])).toBe("nba:san-antonio-spurs");
    expect(one("Spurs", ["epl"])).toBe("epl:tottenham-hotspur");
    expect(ids("Giants")).toEqual([]);
    expect(one("Giants", ["mlb"])).toBe("mlb:san-francisco-giants");
    expect(one("Rangers", ["europe-other"])).toBe("europe-other:rangers-fc");
  });

  it("reads codes only as ALL-CAPS tokens and only for the market's leagues", () => {
    expect(one("SAS", ["nba"])).toBe("nba:san-antonio-spurs");
    expect(ids("SAS")).toEqual([]);
    expect(ids("sas", ["nba"])).toEqual([]);
    expect(ids("Sas", ["nba"])).toEqual([]);
    expect(ids("SAS", ["nfl"])).toEqual([]);
    expect(one("KXNBA-27-OKC", ["nba"])).toBe("nba:oklahoma-city-thunder");
    // Ordinary capitals are never codes.
    expect(ids("YES or NO", ["nfl"])).toEqual([]);
    expect(ids("MIN 3 goals", ["nhl"])).toEqual([]);
  });

  it("reads only the first 4096 characters", () => {
    const pad = "x ".repeat(2100);
    expect(ids(`${pad}Miami Heat`)).toEqual([]);
    expect(ids(`Miami Heat ${pad}`)).toEqual(["nba:miami-heat"]);
  });

  it("keeps country names for national-team markets", () => {
    expect(ids("Will France hold a snap election?")).toEqual([]);
    expect(one("Will France win the World Cup?", ["national"])).toBe("national:france");
    expect(ids("ENG vs FRA", ["national"])).toEqual(["national:england", "national:france"]);
  });

  it("finds the same team whichever way a venue names it", () => {
    const scoped = (text: string, leagues: LeagueId[]) => one(text, leagues);
    const dortmund = ["bundesliga", "europe-other"];
    expect(scoped("Borussia Dortmund", dortmund)).toBe("bundesliga:borussia-dortmund");
    expect(scoped("Dortmund", dortmund)).toBe("bundesliga:borussia-dortmund");
    expect(scoped("BVB", dortmund)).toBe("bundesliga:borussia-dortmund");
    for (const text of ["Bayern München", "Bayern Munich", "Bayern", "FC Bayern", "Munich", "BMU"]) {
      expect(scoped(text, ["bundesliga"]), text).toBe("bundesliga:bayern-munich");
    }
    expect(scoped("Eintracht Frankfurt", ["bundesliga"])).toBe("bundesliga:eintracht-frankfurt");
    expect(scoped("Frankfurt", ["bundesliga"])).toBe("bundesliga:eintracht-frankfurt");
    expect(scoped("SGE", ["bundesliga"])).toBe("bundesliga:eintracht-frankfurt");
    for (const text of ["Olympique de Marseille", "Marseille", "OM"]) {
      expect(scoped(text, ["ligue1"]), text).toBe("ligue1:olympique-de-marseille");
    }
    expect(one("Atlético de Madrid")).toBe("laliga:atletico-madrid");
    expect(one("Real Madrid")).not.toBe(one("Atletico Madrid"));
    expect(ids("Madrid", ["laliga"])).toEqual([]);
    expect(one("Man City")).toBe("epl:manchester-city");
    expect(one("Man Utd")).toBe("epl:manchester-united");
    expect(scoped("Liverpool", ["epl"])).toBe("epl:liverpool");
    expect(scoped("Milan", ["seriea"])).toBe("seriea:ac-milan");
    expect(one("Inter Milan")).toBe("seriea:inter-milan");
    expect(one("Paris Saint-Germain")).toBe("ligue1:paris-saint-germain");
    expect(scoped("Alabama", ["ncaa"])).toBe(one("Alabama Crimson Tide"));
    expect(one("Oklahoma City", ["nba"])).toBe("nba:oklahoma-city-thunder");
    expect(one("Ottawa Senators")).toBe("nhl:ottawa-senators");
    expect(one("Niners")).toBe("nfl:san-francisco-49ers");
    expect(one("T-Wolves")).toBe("nba:minnesota-timberwolves");
    expect(one("Borussia Mönchengladbach")).toBe(one("Borussia Monchengladbach"));
  });

  it("matches in linear-ish time on long hostile text", () => {
    const hostile = "Los Angeles Los Angeles New York New ".repeat(200);
    const started = performance.now();
    for (let i = 0; i < 50; i++) findTeams(hostile, ["nba", "nfl", "mlb", "nhl"]);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe("teamFromTickerCode", () => {
  it("resolves a ticker's team code within its leagues", () => {
    expect(teamFromTickerCode("SAS", ["nba"])?.id).toBe("nba:san-antonio-spurs");
    expect(teamFromTickerCode("KXNBA-27-SAS", ["nba"])?.id).toBe("nba:san-antonio-spurs");
    expect(teamFromTickerCode("KC", ["nfl"])?.id).toBe("nfl:kansas-city-chiefs");
    expect(teamFromTickerCode("KC", ["mlb"])?.id).toBe("mlb:kansas-city-royals");
    expect(teamFromTickerCode("OTT", ["nhl"])?.id).toBe("nhl:ottawa-senators");
    expect(teamFromTickerCode("ALA", ["ncaa"])?.id).toBe("ncaa:alabama-crimson-tide");
    expect(teamFromTickerCode("UNM", ["ncaa"])?.id).toBe("ncaa:new-mexico-lobos");
    expect(teamFromTickerCode("KXSB-27-NO", ["nfl"])?.id).toBe("nfl:new-orleans-saints");
    expect(teamFromTickerCode("kxucl-27-bvb", ["bundesliga", "europe-other"])?.id).toBe(
      "bundesliga:borussia-dortmund",
    );
    expect(teamFromTickerCode("KXEPLTOP-27TOPHALF-LEE", ["epl"])?.id).toBe("epl:leeds-united");
    expect(teamFromTickerCode("KXSERIEA-27-MON", ["seriea"])?.id).toBe("seriea:ac-monza");
  });

  it("returns undefined when the code is unknown or ambiguous", () => {
    expect(teamFromTickerCode("KC", ["nfl", "mlb"])).toBeUndefined();
    expect(teamFromTickerCode("SAS", ["nfl"])).toBeUndefined();
    expect(teamFromTickerCode("ZZZ", ["nba"])).toBeUndefined();
    expect(teamFromTickerCode("SAS", [])).toBeUndefined();
    expect(teamFromTickerCode("", ["nba"])).toBeUndefined();
  });

  it("knows the codes of Kalshi's own tickers", () => {
    const tickers: Array<[string, LeagueId[], string]> = [
      ["KXNBA-27-LAC", ["nba"], "nba:los-angeles-clippers"],
      ["KXNBA-27-MIA", ["nba"], "nba:miami-heat"],
      ["KXNHL-27-BUF", ["nhl"], "nhl:buffalo-sabres"],
      ["KXNHLPLAYOFF-27-MIN", ["nhl"], "nhl:minnesota-wild"],
      ["KXUCL-27-RMA", ["laliga", "europe-other"], "laliga:real-madrid"],
      ["KXPREMIERLEAGUE-27-ARS", ["epl"], "epl:arsenal"],
      ["KXPREMIERLEAGUE-27-LFC", ["epl"], "epl:liverpool"],
      ["KXBUNDESLIGA-27-BMU", ["bundesliga"], "bundesliga:bayern-munich"],
      ["KXBUNDESLIGA-27-SGE", ["bundesliga"], "bundesliga:eintracht-frankfurt"],
      ["KXLIGUE1-27-OM", ["ligue1"], "ligue1:olympique-de-marseille"],
      ["KXNBAPLAYOFF-27-BOS", ["nba"], "nba:boston-celtics"],
      ["KXNFLAFCWEST-27-KC", ["nfl"], "nfl:kansas-city-chiefs"],
      ["KXNFLNFCEAST-27-DAL", ["nfl"], "nfl:dallas-cowboys"],
      ["KXMLB-26-KC", ["mlb"], "mlb:kansas-city-royals"],
      ["KXNCAAMBMW-27-UNM", ["ncaa"], "ncaa:new-mexico-lobos"],
    ];
    for (const [ticker, leagues, id] of tickers)
      expect(teamFromTickerCode(ticker, leagues)?.id, ticker).toBe(id);
  });
});

describe("every team of the data through the lookup", () => {
  const HEADLINE_WORDS = new Set(["AND", "MIN", "NEW", "NO", "NOT", "SUN"]);
  /** Teams of `league` that own the folded phrase in any way: more than one means it is not this team's alone. */
  const owners = new Map<string, Set<Team>>();
  for (const t of TEAMS) {
    for (const phrase of [t.name, t.nickname, t.city, ...t.aliases]) {
      const key = `${t.league}|${fold(phrase)}`;
      owners.set(key, (owners.get(key) ?? new Set()).add(t));
    }
  }
  const ownedAlone = (t: Team, phrase: string) => owners.get(`${t.league}|${fold(phrase)}`)?.size === 1;

  it("finds each team by its full name", () => {
    for (const t of TEAMS) {
      if (!ownedAlone(t, t.name)) continue;
      expect(ids(t.name, [t.league]), t.id).toEqual([t.id]);
    }
  });

  it("finds each team by its nickname within its league", () => {
    for (const t of TEAMS) {
      if (!ownedAlone(t, t.nickname)) continue;
      expect(ids(t.nickname, [t.league]), `${t.id} ${t.nickname}`).toEqual([t.id]);
    }
  });

  it("finds each team by its city within its league, when no other team there has it", () => {
    let checked = 0;
    for (const t of TEAMS) {
      if (!ownedAlone(t, t.city)) continue;
      expect(ids(t.city, [t.league]), `${t.id} ${t.city}`).toEqual([t.id]);
      checked++;
    }
    expect(checked).toBeGreaterThan(300);
  });

  it("finds each team by each code within its league", () => {
    for (const t of TEAMS) {
      for (const code of t.codes) {
        expect(teamFromTickerCode(code, [t.league]), `${t.id} ${code}`).toBe(t);
        // Codes that are also headline words ("NO", "NEW") are left to teamFromTickerCode.
        const expected = HEADLINE_WORDS.has(code) ? [] : [t.id];
        expect(ids(`${code} to win`, [t.league]), `${t.id} ${code}`).toEqual(expected);
      }
    }
  });
});
