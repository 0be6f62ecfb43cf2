/**
 * The concepts knowledge module: the same competition, award, office or release named the way each
 * venue names it gives one concept id, and look-alikes that are other contracts give different ids.
 */
import { describe, expect, it } from "vitest";
import {
  CONCEPTS,
  conceptById,
  conceptsOfTicker,
  findConcepts,
  leaguesOf,
  specialize,
} from "../../src/matching/knowledge/concepts";
import data from "../../src/matching/knowledge/concepts.json" with { type: "json" };

/** The ids of the concepts found in `text`. */
function ids(text: string): string[] {
  return findConcepts(text).map((m) => m.concept.id);
}

/** The concept of the longest phrase in `text`. */
function main(text: string): string | undefined {
  return findConcepts(text)[0]?.concept.id;
}

/** The phrase as the lookup reads it, so "d'Or" and "d or", "Finals" and "Final" compare equal. */
function folded(phrase: string): string {
  return phrase
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/['\u2019]s\b/g, "")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== "" && w !== "the")
    .map((w) => (w === "mens" ? "men" : w === "womens" ? "women" : w))
    .join(" ");
}

describe("concepts.json", () => {
  it("has unique ids, known kinds and references that resolve", () => {
    const seen = new Set<string>();
    for (const c of CONCEPTS) {
      expect(seen.has(c.id), c.id).toBe(false);
      seen.add(c.id);
      expect(c.phrases.length, c.id).toBeGreaterThan(0);
    }
    for (const c of CONCEPTS) {
      for (const other of c.distinctFrom ?? [])
        expect(conceptById(other), `${c.id} -> ${other}`).toBeDefined();
      if (c.specializes) expect(conceptById(c.specializes), `${c.id} -> ${c.specializes}`).toBeDefined();
    }
    for (const p of data.series_patterns as Array<{ pattern: string; concept?: string }>) {
      expect(() => new RegExp(p.pattern)).not.toThrow();
      if (p.concept) expect(conceptById(p.concept), p.pattern).toBeDefined();
    }
  });

  it("puts no phrase (nor its plural) under two concepts", () => {
    const owner = new Map<string, string>();
    for (const c of CONCEPTS) {
      for (const phrase of c.phrases) {
        const key = folded(phrase);
        expect(key, `${c.id}: ${phrase}`).not.toBe("");
        for (const form of [key, key.endsWith("s") ? key.slice(0, -1) : `${key}s`]) {
          const prior = owner.get(form);
          if (prior !== undefined && form === key) expect(prior, `"${phrase}"`).toBe(c.id);
          if (form === key) owner.set(form, c.id);
        }
      }
    }
    // A plural that is another concept's phrase would be matched by both.
    for (const [key, id] of owner) {
      const plural = owner.get(`${key}s`);
      if (plural !== undefined && key.split(" ").at(-1)!.length >= 3) expect(plural, `"${key}s"`).toBe(id);
    }
  });

  it("puts every Kalshi series under one concept only", () => {
    const owner = new Map<string, string>();
    for (const c of CONCEPTS) {
      for (const s of c.kalshiSeries) {
        expect(owner.get(s), s).toBeUndefined();
        expect(s).toMatch(/^KX[A-Z0-9]+$/);
        owner.set(s, c.id);
      }
    }
  });

  it("narrows each league-free concept to at most one concept per league", () => {
    const seen = new Set<string>();
    for (const c of CONCEPTS) {
      if (!c.specializes) continue;
      const key = `${c.specializes}|${c.league}`;
      expect(seen.has(key), key).toBe(false);
      seen.add(key);
    }
  });

  it("finds each concept by every one of its phrases, as written and in title case", () => {
    for (const c of CONCEPTS) {
      for (const phrase of c.phrases) {
        expect(main(phrase), phrase).toBe(c.id);
        const title = phrase.replace(/\b\p{L}/gu, (ch) => ch.toUpperCase());
        expect(main(`Will it be the ${title}?`), title).toBe(c.id);
      }
    }
  });
});

describe("findConcepts: the venues' wordings of one contract", () => {
  const same: Array<[string, string[]]> = [
    [
      "competition:nfl-title",
      ["2027 NFL league championship", "2027 Pro Football Championship", "Super Bowl LXI"],
    ],
    [
      "competition:nfl-title",
      ["Pro Football Champion 2027?", "Will the Philadelphia Eagles win Super Bowl LXI?"],
    ],
    [
      "competition:nba-title",
      ["2027 NBA Finals", "2027 Pro Basketball Finals", "2027 Pro Basketball Champion?"],
    ],
    [
      "competition:mlb-title",
      ["2026 World Series", "Pro Baseball Championship", "2027 Pro Baseball Champion?"],
    ],
    ["competition:nhl-title", ["2026-27 NHL Stanley Cup Champion", "2026-27 Stanley Cup® Finals"]],
    ["competition:ucl", ["2026-27 UEFA Champions League Championship", "the Champions League"]],
    [
      "competition:ncaaf-title",
      ["2027 CFP National Championship", "College Football Playoff National Championship"],
    ],
    ["competition:nfl-afc-west", ["2026 AFC West", "Pro Football AFC West Division"]],
    ["competition:nfl-afc-title", ["2027 NFL AFC Championship", "Pro Football AFC Championship"]],
    ["stage:nba-playoffs", ["make the 2027 NBA Playoffs", "Pro Basketball Playoff Qualifiers"]],
    ["award:nfl-droy", ["2026 NFL Defensive Rookie of the Year", "Defensive Rookie of the Year"]],
    [
      "nomination:us-president-r",
      [
        "win the 2028 Republican presidential nomination",
        "be the nominee for the Presidency for the Republican party",
        "Republican Presidential nominee",
      ],
    ],
    ["chamber:us-senate", ["control the Senate", "win the U.S. Senate"]],
    ["economic:fed-decision", ["Fed decision in Dec 2026?", "FOMC", "the Federal Reserve"]],
    ["economic:rate-hold", ["No change", "Maintains rate", "Hike rates by 0bps", "holds rates steady"]],
    ["award:ballon-dor", ["Ballon d'Or", "Ballon d’Or 2026", "BALLON DOR"]],
  ];
  for (const [id, texts] of same) {
    it(`${id}: ${texts.join(" / ")}`, () => {
      for (const text of texts) expect(ids(text), text).toContain(id);
    });
  }

  it("gives EPL's title, and the league, from both venues' wordings", () => {
    const kalshi = "2026-27 English Premier League (EPL) Championship";
    expect(ids(kalshi)).toEqual(expect.arrayContaining(["league:epl", "competition:epl-title"]));
    expect(ids("English Premier League")).toEqual(["league:epl"]);
    expect(leaguesOf(kalshi)).toEqual(leaguesOf("English Premier League"));
    expect(conceptsOfTicker("KXPREMIERLEAGUE-27-ARS").concepts.map((c) => c.id)).toEqual([
      "competition:epl-title",
    ]);
  });

  it("takes the longest phrase and does not overlap", () => {
    const found = findConcepts("Will SGA win the 2027 NBA Finals MVP?");
    expect(found.map((m) => m.concept.id)).toEqual(["award:nba-finals-mvp"]);
    const text = "Who wins the 2026-27 NHL Stanley Cup® Finals?";
    const [m] = findConcepts(text);
    expect(text.slice(m!.start, m!.end)).toBe("NHL Stanley Cup® Finals");
  });

  it("folds diacritics, case and punctuation", () => {
    expect(main("LIGUE 1 — champion")).toBe("competition:ligue1-title");
    expect(main("Ligue 1")).toBe("league:ligue1");
    expect(main("Élysée")).toBe("office:president-france");
    expect(main("the heisman's finalists")).toBe("award:heisman");
  });
});

describe("findConcepts: look-alikes that are other contracts", () => {
  const differ = (a: string, b: string) => {
    const x = main(a);
    const y = main(b);
    expect(x, a).toBeDefined();
    expect(y, b).toBeDefined();
    expect(x, `${a} vs ${b}`).not.toBe(y);
  };

  it("NFL MVP is not WNBA MVP", () => {
    expect(main("2026 NFL MVP")).toBe("award:nfl-mvp");
    expect(main("2026 WNBA MVP award")).toBe("award:wnba-mvp");
  });

  it("a bare MVP takes its league from the ticker", () => {
    expect(main("the MVP")).toBe("award:mvp");
    expect(conceptsOfTicker("KXNFLMVP-26-JALL").concepts.map((c) => c.id)).toEqual(["award:nfl-mvp"]);
    expect(specialize(conceptById("award:mvp")!, leaguesOf("the MVP", "KXNFLMVP-26")).id).toBe(
      "award:nfl-mvp",
    );
    expect(specialize(conceptById("award:mvp")!, ["nba"]).id).toBe("award:nba-mvp");
    expect(specialize(conceptById("award:mvp")!, ["cricket"]).id).toBe("award:mvp");
  });

  it("Republican and Democratic nominations differ", () => {
    differ("Republican Presidential nominee", "Democratic Presidential nominee");
    expect(main("be the nominee for the Presidency for the Democratic party")).toBe(
      "nomination:us-president-d",
    );
    differ("Republican Presidential nominee", "win the US Presidential Election");
  });

  it("offices differ", () => {
    differ("Minister of Defense", "Minister of National Security");
    differ("Secretary of the Treasury", "Secretary of State");
    expect(main("next Prime Minister of the UK")).toBe("office:prime-minister");
    expect(ids("Bitcoin above $100k at 5 PM ET?")).toEqual([]);
    expect(ids("Bitcoin above $100k at 5 p.m. ET?")).toEqual([]);
  });

  it("CPI, core CPI, PCE and core PCE are four releases", () => {
    const names = ["core PCE", "PCE", "CPI", "core CPI"];
    const found = names.map(main);
    expect(new Set(found).size).toBe(4);
    expect(found).toEqual(["economic:core-pce", "economic:pce", "economic:cpi", "economic:core-cpi"]);
  });

  it("central banks differ", () => {
    differ("Bank of Canada rate decision", "Fed decision in Dec 2026?");
    differ("Bank of England decreases Bank Rate by 25 bps", "FOMC");
    expect(ids("Fed decreases interest rates by 25 bps after December 2026 meeting?")).toEqual([
      "economic:rate-cut",
      "economic:fed-decision",
    ]);
  });

  it("a table finish is not the title", () => {
    const found = ids("Will Liverpool finish in the top half of the 2026-27 Premier League?");
    expect(found).not.toContain("competition:epl-title");
    expect(found).toContain("stage:top-half");
    expect(ids("Liverpool finish in the top half")).not.toContain("competition:epl-title");
  });

  it("playoffs are not the finals", () => {
    differ("NBA Playoffs", "NBA Finals");
    differ("make the NHL playoffs", "Stanley Cup");
    differ("make the College Football Playoff", "CFP National Championship");
  });

  it("reads only the first 4 KiB", () => {
    expect(ids(`${"x ".repeat(3000)} NBA Finals`)).toEqual([]);
    expect(findConcepts("")).toEqual([]);
  });
});

describe("conceptsOfTicker", () => {
  const only = (ticker: string) => conceptsOfTicker(ticker).concepts.map((c) => c.id);

  it("reads the series of a market, event or series ticker", () => {
    expect(conceptsOfTicker("KXNBA-27-SAS")).toEqual({
      concepts: [conceptById("competition:nba-title")],
      leagues: ["nba"],
    });
    expect(only("KXNBAPLAYOFF-27-BOS")).toEqual(["stage:nba-playoffs"]);
    expect(only("KXSB-27-KC")).toEqual(["competition:nfl-title"]);
    expect(conceptsOfTicker("KXSB-27-KC").leagues).toEqual(["nfl"]);
    expect(only("KXNHL-27-OTT")).toEqual(["competition:nhl-title"]);
    expect(only("KXUCL-27-BVB")).toEqual(["competition:ucl"]);
    expect(only("KXPRESNOMR-28-MR")).toEqual(["nomination:us-president-r"]);
    expect(only("KXPRESNOMD-28-GNEW")).toEqual(["nomination:us-president-d"]);
    expect(only("KXFEDDECISION-26DEC-C25")).toEqual(["economic:fed-decision"]);
    expect(only("kxnba")).toEqual(["competition:nba-title"]);
  });

  it("gives a league's own awards and stages their league", () => {
    expect(conceptsOfTicker("KXNFLDROTY-26-ABC")).toEqual({
      concepts: [conceptById("award:nfl-droy")],
      leagues: ["nfl"],
    });
    expect(leaguesOf("Defensive Rookie of the Year", "KXNFLDROTY-26")).toEqual(["nfl"]);
  });

  it("never reads a listed series as a prefix of another", () => {
    expect(conceptsOfTicker("KXNBAGAME-26DEC25LALBOS-LAL")).toEqual({ concepts: [], leagues: ["nba"] });
    expect(only("KXRATECUTCOUNT-27DEC31-T2")).toEqual(["economic:rate-cut"]);
    expect(only("KXCPICORE-26DEC-T0.3")).toEqual(["economic:core-cpi"]);
  });

  it("falls back to the league patterns and the office patterns", () => {
    expect(conceptsOfTicker("KXNFLFOO-26").leagues).toEqual(["nfl"]);
    expect(conceptsOfTicker("KXWNBAFOO-26").leagues).toEqual(["wnba"]);
    expect(conceptsOfTicker("KXNCAAMBFOO-26").leagues).toEqual(["ncaab"]);
    expect(conceptsOfTicker("KXMLBWINS-27NYY-T90.5").leagues).toEqual(["mlb"]);
    expect(only("KXGOVMS-27-R")).toEqual(["office:governor"]);
    expect(only("KXGOVSHUT-27MAR01-Y")).toEqual([]);
    expect(only("KXMAYORCHI-27-BJOH")).toEqual(["office:mayor"]);
  });

  it("knows nothing of an unknown series", () => {
    expect(conceptsOfTicker("KXFOO-27")).toEqual({ concepts: [], leagues: [] });
    expect(conceptsOfTicker("")).toEqual({ concepts: [], leagues: [] });
  });
});

describe("leaguesOf", () => {
  it("reads leagues from league names and from the concepts found", () => {
    expect(leaguesOf("NBA Finals")).toEqual(["nba"]);
    expect(leaguesOf("Pro Football Championship")).toEqual(["nfl"]);
    expect(leaguesOf("Stanley Cup")).toEqual(["nhl"]);
    expect(leaguesOf("Will Arsenal win La Liga or the Champions League?")).toEqual(["laliga", "ucl"]);
    expect(leaguesOf("Fed decision")).toEqual([]);
    expect(leaguesOf("the MVP", "KXNBAMVP-27")).toEqual(["nba"]);
    expect(leaguesOf("the MVP", null)).toEqual([]);
  });
});
