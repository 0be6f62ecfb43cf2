/**
 * Hostile venue text: the matcher reads each text field only up to its limit, every pattern it runs
 * is linear in its text (a page of "5% 5% 5% …" once cost minutes), and words of venue text never
 * reach Object's own properties. How fast is measured in bench/matching-adversarial.ts, not here;
 * here every read must finish (within the test's timeout) and say something sane.
 */
import { describe, expect, it } from "vitest";
import { digitAfterWords } from "../../src/matching/dates";
import { extractFeatures, MATCHER_TEXT_LIMITS } from "../../src/matching/features";
import { Matcher, matchCatalogs } from "../../src/matching/matcher";
import { clip, contentWords, followedBy, normalizeText } from "../../src/matching/text";
import { RELATIONS } from "../../src/matching/types";
import { market } from "./markets";

const KIB_64 = 64 * 1024;

/** `unit` repeated to `chars` characters. */
function fill(unit: string, chars: number): string {
  return unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
}

/** The shapes that make a backtracking pattern rescan its text once per character or per word. */
const HOSTILE: Record<string, string> = {
  digits: "9",
  "1.1.1.": "1.",
  dots: ".",
  "name fragments": "Los Angeles L at Boston Celtics vs. the Lakers, Max Verstappen beat O'Neil-Smith ",
  capitals: "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
  "month names": "in may december 8-9 by march of 2026 jan 1 sept. ",
  comparators: "above above at least more than or more ",
  negations: "not never nobody does not fails to no candidate ",
  figures: "5% $1,000 25 bps 3.5 44-45°f 100k ",
  unicode: "é😀中\u0301𝔘\u00a0",
};

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe("the matcher on 64 KiB of hostile text in every field", () => {
  const realisticA = market(
    "polymarket:btc",
    "polymarket",
    "Will Bitcoin be above $150,000 on December 31, 2026?",
    'This market will resolve to "Yes" if the Coinbase BTC/USD price is above $150,000 at 12:00 PM ET on December 31, 2026. Otherwise, this market will resolve to "No".',
    { settlementSource: "Coinbase" },
  );
  const realisticB = market(
    "kalshi:btc",
    "kalshi",
    "Bitcoin above $150,000 on Dec 31, 2026?",
    "If the Coinbase BTC/USD price is strictly greater than $150,000 at 12:00 PM ET on December 31, 2026, then the market resolves to Yes.",
    { settlementSource: "Coinbase" },
  );

  it.each(Object.entries(HOSTILE))("reads and matches a market of %s", (_family, unit) => {
    const text = fill(unit, KIB_64);
    const hostile = (id: string, venue: "polymarket" | "kalshi") =>
      market(id, venue, text, text, {
        eventTitle: text,
        settlementSource: text,
        yesLabel: text,
        noLabel: text,
      });
    const f = extractFeatures(hostile("polymarket:hostile", "polymarket"));

    // Read from the first characters of each field only, and never half a character.
    const read = f.market;
    expect(read.question.length).toBeLessThanOrEqual(MATCHER_TEXT_LIMITS.question);
    expect(read.question.length).toBeGreaterThanOrEqual(MATCHER_TEXT_LIMITS.question - 1);
    expect(read.eventTitle!.length).toBeLessThanOrEqual(MATCHER_TEXT_LIMITS.eventTitle);
    expect(read.rules!.length).toBeLessThanOrEqual(MATCHER_TEXT_LIMITS.rules);
    expect(read.rules!.length).toBeGreaterThanOrEqual(MATCHER_TEXT_LIMITS.rules - 1);
    expect(read.settlementSource!.length).toBeLessThanOrEqual(MATCHER_TEXT_LIMITS.settlementSource);
    expect(read.yesLabel.length).toBeLessThanOrEqual(MATCHER_TEXT_LIMITS.label);
    expect(read.noLabel.length).toBeLessThanOrEqual(MATCHER_TEXT_LIMITS.label);
    for (const field of [read.question, read.eventTitle, read.rules, read.settlementSource, read.yesLabel])
      expect(loneSurrogate.test(field ?? "")).toBe(false);
    expect(text.startsWith(read.rules!)).toBe(true);

    // Sane features: a finite condition if any, a bounded set of blocking keys.
    if (f.measure) {
      expect(Number.isFinite(f.measure.value)).toBe(true);
      if (f.measure.high !== undefined) expect(Number.isFinite(f.measure.high)).toBe(true);
    }
    expect(f.keys.length).toBeLessThan(2000);

    // Matched against another hostile market and a realistic pair: verdicts stay well-formed and
    // the realistic pair still finds its partner.
    const verdicts = matchCatalogs([
      hostile("polymarket:hostile", "polymarket"),
      hostile("kalshi:hostile", "kalshi"),
      realisticA,
      realisticB,
    ]);
    for (const v of verdicts) {
      expect(RELATIONS).toContain(v.relation);
      expect(v.confidence).toBeGreaterThanOrEqual(0);
      expect(v.confidence).toBeLessThanOrEqual(1);
    }
    const pair = verdicts.find((v) => [v.marketA, v.marketB].sort().join() === "kalshi:btc,polymarket:btc");
    expect(pair?.relation).toBe("identity");
  });
});

describe("the matcher's input limits", () => {
  const filler = "The market is about snow in Chicago and nothing else. ";
  const snowRule = " This market resolves to Yes if 1 inch or more of snow is on the ground at O'Hare.";

  it("reads the rules up to MATCHER_TEXT_LIMITS.rules: a threshold stated after it is not read", () => {
    const question = "White Christmas in Chicago?";
    const before = fill(filler, MATCHER_TEXT_LIMITS.rules - snowRule.length - 10);
    const after = fill(filler, MATCHER_TEXT_LIMITS.rules);
    const within = extractFeatures(market("polymarket:a", "polymarket", question, before + snowRule));
    expect(within.measure?.text).toBe("≥ 1 inch");
    const beyond = extractFeatures(market("polymarket:b", "polymarket", question, after + snowRule));
    expect(beyond.measure).toBeNull();
    expect(beyond.market.rules).toBe(after);
  });

  it("reads the question up to MATCHER_TEXT_LIMITS.question", () => {
    const rules =
      "This market resolves to Yes if the Coinbase BTC/USD price is at the level named in the title.";
    const tail = " above $150,000 on December 31, 2026?";
    const short = extractFeatures(market("polymarket:a", "polymarket", `Will Bitcoin be${tail}`, rules));
    expect(short.measure?.text).toBe("> $150000");
    expect(short.date?.key).toBe("2026-12-31");
    const padded = `Will Bitcoin ${fill("really ", MATCHER_TEXT_LIMITS.question)} be${tail}`;
    const long = extractFeatures(market("polymarket:b", "polymarket", padded, rules));
    expect(long.measure).toBeNull();
    expect(long.date?.key).not.toBe("2026-12-31");
    expect(long.market.question).toBe(padded.slice(0, MATCHER_TEXT_LIMITS.question));
  });

  it("cuts on a character boundary, never inside a surrogate pair", () => {
    const question = `${"a".repeat(MATCHER_TEXT_LIMITS.question - 1)}😀b`;
    const f = extractFeatures(market("polymarket:a", "polymarket", question, null));
    expect(f.market.question).toBe("a".repeat(MATCHER_TEXT_LIMITS.question - 1));
    expect(clip("ab😀", 3)).toBe("ab");
    expect(clip("ab😀", 4)).toBe("ab😀");
    expect(clip("abc", 5)).toBe("abc");
  });
});

describe("words of venue text that name Object's own properties", () => {
  it('matches markets about F1 "Constructors" instead of throwing', () => {
    const a = market(
      "polymarket:f1",
      "polymarket",
      "Will Mercedes be the 2026 F1 Constructors' Champion?",
      "This market resolves to Yes if Mercedes wins the 2026 F1 Constructors' Championship, per the final standings published by Formula 1.",
      { eventTitle: "F1 Constructors' Champion 2026" },
    );
    const b = market(
      "kalshi:f1",
      "kalshi",
      "Will Max Verstappen's next F1 team be Mercedes?",
      "If Max Verstappen's next team is the Mercedes F1 Team before Mar 12, 2027, then the market resolves to Yes.",
      { closeTime: "2027-03-12T04:59:00Z" },
    );
    expect(() => matchCatalogs([a, b])).not.toThrow();
    const matcher = new Matcher();
    matcher.add(a);
    matcher.add(b);
    expect(() => matcher.match(b)).not.toThrow();
  });

  it('reads "constructor" as a word, not as a month', () => {
    expect(contentWords(normalizeText("Which constructor takes the title?"))).toContain("constructor");
  });
});

describe("the linear replacements of scanning patterns", () => {
  // Small random texts over the tokens that matter, against the regular expressions they replace.
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const soup = (tokens: string[], max: number) =>
    Array.from(
      { length: 1 + Math.floor(random() * max) },
      () => tokens[Math.floor(random() * tokens.length)],
    ).join("");

  it("followedBy answers what first[^stop]*then asks", () => {
    const tokens = ["not", "never", " ", ".", "sufficient", "count", "x", "notx", "\n", "enough"];
    const pattern = /\b(not|never)\b[^.]*\b(sufficient|suffice|count|enough|qualify)\b/;
    for (let i = 0; i < 5000; i++) {
      const text = soup(tokens, 14);
      expect(
        followedBy(text, /\b(?:not|never)\b/g, /\b(?:sufficient|suffice|count|enough|qualify)\b/g, /\./g),
        JSON.stringify(text),
      ).toBe(pattern.test(text));
    }
  });

  it("digitAfterWords answers what (?=[a-z\\s]*\\d) asks at every position", () => {
    const tokens = ["a", " ", "1", ".", "\u00a0", "B", "\t", "may"];
    for (let i = 0; i < 2000; i++) {
      const text = soup(tokens, 12);
      const ahead = digitAfterWords(text);
      for (let at = 0; at <= text.length; at++)
        expect(ahead[at] === 1, `${JSON.stringify(text)} at ${at}`).toBe(/^[a-z\s]*\d/.test(text.slice(at)));
    }
  });
});
