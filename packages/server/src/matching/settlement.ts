/**
 * How a market settles, as its rules say: the source (station, index, agency, chart…) and variant of
 * the figure, what has to happen (an announcement, a race call…), framing words with a direction,
 * tie/cancellation/postponement handling, time zones, the window's start, and named sources.
 */
import { type DateMention, dayKey, MONTH_RE, type YearOf } from "./dates";
import { contentWords, followedBy, MONTHS, normalizeText } from "./text";

// Sources, basis, stances, void policy

/** A regular expression, or a test one cannot write as one that runs in linear time. */
export interface TextTest {
  test(text: string): boolean;
}

const WORLDWIDE = /\bworldwide\b/g;
const GROSS = /\b(?:box office|gross)/g;
const FULL_STOP = /\./g;
/** Worldwide box office or gross, or "worldwide" followed by either in the same sentence. */
const WORLDWIDE_GROSS: TextTest = {
  test: (text) =>
    /\b(global|worldwide|international) (box office|gross|grosses|ticket sales)\b/.test(text) ||
    followedBy(text, WORLDWIDE, GROSS, FULL_STOP),
};

export const SOURCE_PATTERNS: Array<[string, TextTest, string]> = [
  // [group, pattern, canonical value]
  ["station", /\bcentral park\b|\bknyc\b/, "KNYC"],
  ["station", /\blaguardia\b|\bklga\b/, "KLGA"],
  ["station", /\bjfk\b|\bkjfk\b|\bkennedy (international )?airport\b/, "KJFK"],
  ["station", /\bnewark\b|\bkewr\b/, "KEWR"],
  ["station", /\bmidway\b|\bkmdw\b/, "KMDW"],
  ["station", /\bo'?hare\b|\bkord\b/, "KORD"],
  ["station", /\bheathrow\b|\begll\b/, "EGLL"],
  ["station", /\blax\b|\bklax\b|\blos angeles international\b/, "KLAX"],
  ["station", /\bdowntown los angeles\b|\bkcqt\b|\busc campus\b/, "KCQT"],
  ["station", /\bmiami international\b|\bkmia\b/, "KMIA"],
  ["station", /\baustin-bergstrom\b|\bkaus\b|\bbergstrom\b/, "KAUS"],
  ["station", /\bcamp mabry\b|\bkatt\b/, "KATT"],
  ["station", /\bdenver international\b|\bkden\b/, "KDEN"],
  ["station", /\bphiladelphia international\b|\bkphl\b/, "KPHL"],
  ["station", /\bhobby airport\b|\bkhou\b/, "KHOU"],
  ["station", /\bbush intercontinental\b|\bkiah\b/, "KIAH"],
  ["station", /\bsea-?tac\b|\bksea\b/, "KSEA"],
  ["station", /\blogan\b|\bkbos\b/, "KBOS"],
  ["station", /\breagan national\b|\bkdca\b/, "KDCA"],
  ["station", /\bdulles\b|\bkiad\b/, "KIAD"],
  ["station", /\bhartsfield\b|\bkatl\b/, "KATL"],
  ["station", /\bsky harbor\b|\bkphx\b/, "KPHX"],
  ["station", /\bdfw\b|\bkdfw\b|\bdallas\/fort worth\b/, "KDFW"],
  ["station", /\blove field\b|\bkdal\b/, "KDAL"],
  ["station", /\bsfo\b|\bksfo\b|\bsan francisco international\b/, "KSFO"],
  ["wxsource", /\bweather underground\b|\bwunderground\b/, "wunderground"],
  ["wxsource", /\bdaily climate report\b|\bnws\b|\bnational weather service\b|\bnoaa\b|\bncei\b/, "nws"],
  ["wxsource", /\bmet office\b/, "metoffice"],
  ["index", /\bbrti\b|\bbitcoin real time index\b/, "cf-brti"],
  ["index", /\bethusd_rti\b|\bether real time index\b/, "cf-ethrti"],
  ["index", /\bsolusd_rti\b|\bsol real time index\b/, "cf-solrti"],
  ["index", /\bbinance\b/, "binance"],
  ["index", /\bcoinbase\b/, "coinbase"],
  ["index", /\bkraken\b/, "kraken"],
  ["index", /\bbitstamp\b/, "bitstamp"],
  ["index", /\bcoingecko\b/, "coingecko"],
  ["index", /\bcoinmarketcap\b/, "coinmarketcap"],
  ["index", /\bchainlink\b/, "chainlink"],
  ["index", /\bpyth\b/, "pyth"],
  ["cpi", /\bcore (cpi|inflation)\b|\bless food and energy\b|\bexcluding food and energy\b|\bcore\b/, "core"],
  ["adjust", /\bnot seasonally adjusted\b|\bnon-seasonally adjusted\b|\bnsa\b|\bunadjusted\b/, "nsa"],
  ["adjust", /(?<!not )\bseasonally adjusted\b|\bsa\b/, "sa"],
  [
    "change",
    /\bmonth-over-month\b|\bmonth over month\b|\bmom\b|\bmonthly change\b|\bfrom the previous month\b/,
    "mom",
  ],
  ["change", /\byear-over-year\b|\byear over year\b|\byoy\b|\b12-month\b|\bannual (rate|change)\b/, "yoy"],
  [
    "release",
    /\b(final|third|latest) (estimate|reading|release|revision)\b|\bincluding (any )?revisions\b|\bafter (all )?revisions\b|\brevised (figure|number|value|estimate|data) (is|will be) used\b/,
    "revised",
  ],
  [
    "release",
    /\bfirst (release|released|published|reported|estimate)\b|\badvance estimate\b|\binitial (release|estimate|reading)\b|\bas first\b/,
    "first",
  ],
  ["stage", /\bfirst round\b|\bround one\b|\b1st round\b/, "first-round"],
  ["stage", /\bsecond round\b|\brun-?off\b|\b2nd round\b/, "second-round"],
  ["stage", /\bprimary\b(?! (?:resolution|source|settlement))|\bprimaries\b/, "primary"],
  ["stage", /\bgeneral election\b/, "general"],
  ["stage", /\bregular season\b/, "regular-season"],
  [
    "span",
    /\bopening weekend\b|\b(3|three)-day (opening|weekend)\b|\bfriday (through|to|-) sunday\b/,
    "weekend",
  ],
  ["span", /\b(first|opening) (week|seven days|7 days)\b|\bseven-day\b|\b7-day\b/, "week"],
  [
    "markettype",
    /\bspread\b|\bhandicap\b|\(\s*[+-]\d+(\.5)?\s*\)|\bby more than \d+(\.5)? points\b|\bcover\b/,
    "spread",
  ],
  [
    "markettype",
    /\bo\/u\b|\bover\/under\b|\btotal (points|goals|runs)\b|\bcombined (points|score)\b/,
    "total",
  ],
  [
    "evidence",
    /\bcredible report|\bwidely reported\b|\bmedia reports?\b|\breported by (major|reputable)/,
    "credible-reports",
  ],
  [
    "evidence",
    /\bofficial(ly)? (team |club |league |public )?(announce|announcement|statement|confirm|press release)|\bannounced by the (team|club|organization|league)\b/,
    "official",
  ],
  [
    "period",
    /\bregulation( time)?\b|\b90 minutes\b|\bfull[- ]time\b|\bnot including (overtime|extra time)\b|\bexcluding (overtime|extra time)\b/,
    "regulation",
  ],
  [
    "period",
    /\bincluding (overtime|extra time|penalt)|\bovertime (counts|included)\b|\bextra time and penalt|\badvances?\b|\bprogress(es)? to\b/,
    "with-overtime",
  ],
  ["stage", /\bplayoffs?\b|\bpostseason\b|\bcfp\b/, "postseason"],
  ["agency", /\badp\b|\bautomatic data processing\b/, "adp"],
  ["agency", /\bbureau of labor statistics\b|\bbls\b/, "bls"],
  ["agency", /\bbureau of economic analysis\b|\bbea\b/, "bea"],
  ["agency", /\bcensus bureau\b/, "census"],
  ["agency", /\bnber\b|\bnational bureau of economic research\b/, "nber"],
  ["agency", /\bconference board\b/, "conference-board"],
  ["agency", /\buniversity of michigan\b|\bumich\b/, "umich"],
  ["agency", /\bism\b|\binstitute for supply management\b/, "ism"],
  ["region", /\b(uk|u\.k|united kingdom|britain|british|ons)\b/, "uk"],
  ["region", /\b(eurozone|euro area|ecb|eurostat|european union)\b/, "euro-area"],
  ["region", /\b(canada|canadian|statistics canada|bank of canada)\b/, "canada"],
  ["region", /\b(japan|japanese|boj|bank of japan)\b/, "japan"],
  ["region", /\b(china|chinese|pboc)\b/, "china"],
  ["region", /\b(germany|german|destatis)\b/, "germany"],
  ["region", /\b(australia|australian|rba)\b/, "australia"],
  ["region", /\b(mexico|mexican|banxico)\b/, "mexico"],
  ["region", /\b(india|indian|rbi)\b/, "india"],
  ["boxoffice", /\bbox office mojo\b/, "boxofficemojo"],
  ["boxoffice", /\bthe numbers\b/, "the-numbers"],
  ["chart", /\bbillboard\b/, "billboard"],
  ["chart", /\bspotify\b/, "spotify"],
  ["chart", /\bapple music\b/, "apple-music"],
  ["chart", /\bnetflix top 10\b|\bnetflix'?s? (global )?top\b/, "netflix-top10"],
  ["chart", /\bnielsen\b/, "nielsen"],
  ["reviews", /\brotten tomatoes\b|\btomatometer\b/, "rottentomatoes"],
  ["reviews", /\bimdb\b/, "imdb"],
  ["reviews", /\bmetacritic\b/, "metacritic"],
  ["poll", /\b538\b|\bfivethirtyeight\b/, "538"],
  ["poll", /\brealclearpolitics\b|\brcp\b/, "rcp"],
  ["poll", /\bsilver bulletin\b/, "silver-bulletin"],
  ["approval", /\bgallup\b/, "gallup"],
  ["domain", WORLDWIDE_GROSS, "worldwide"],
  [
    "domain",
    // "(…)" holds no other "(": each aside is scanned once, not once per "domestic (" before it.
    /\bdomestic( \([^()]*\))? (box office|gross|grosses|opening|weekend|ticket sales)\b|\bnorth american (box office|gross)\b/,
    "domestic",
  ],
];

export const BASIS_PATTERNS: Array<[string, RegExp]> = [
  ["announce", /\bannounce\b|\bpublicly (states|declares)\b|\bformally declares\b/],
  [
    "call",
    /\b(race|election) (is )?called\b|\bcalls? the race\b|\bprojected (winner|to win)\b|\bdecision desk\b|\bassociated press\b|\bap (calls|projects|declares)\b/,
  ],
  ["certify", /\bcertif(y|ied|ies|ication)\b/],
  ["inaugurate", /\binaugurat|\bsworn in\b|\btakes? office\b|\bassumes? office\b/],
  ["nominate", /\bnominat|\bnominee/],
  ["confirm", /\bconfirm(ed|s|ation)? by the senate\b|\bsenate confirm/],
  ["file", /\bfiles? (to run|paperwork|candidacy)\b/],
  ["sign", /\bsigns? (into law|the bill)\b|\bsigned into law\b/],
  ["pass", /\bpass(es|ed)? (the )?(house|senate)\b/],
  [
    "advance",
    /\b(advance|advances|qualify|qualifies|qualifiers?|make the runoff|makes the runoff|on the (runoff )?ballot|finish(es)? (in the )?top (two|2|three|3)|reach(es)? the (runoff|[a-z-]*finals?|playoffs))\b|\breach(es)?\b[^.?]{0,40}\b(quarter|semi)-?finals?\b|\bmakes? the (\d{4}(-\d\d)? )?([a-z]+ )?playoffs?\b/,
  ],
  ["release", /\breleased? (in|on|by) theaters?\b|\btheatrical release\b|\bpremiere/],
];

export const STANCE_PATTERNS: Array<[string, RegExp]> = [
  [
    "office:-",
    /\b(leave|leaves|out|resign|removed|ousted|fired|step(s)? down|depart|exit|impeached and removed|no longer|cease|ceases|vacate|vacates|replaced)\b/,
  ],
  [
    "office:+",
    /\b(remain|remains|stay|stays|survive|survives|still be|keep (his|her|their) (job|seat|position))\b/,
  ],
  ["happen:-", /\b(not|never|fail(s)? to|avoid|without)\b/],
  [
    "runoff:+",
    /\b(go(es)? to a runoff|head(s)? to a runoff|force(s)? a runoff|runoff (is|will be) (held|needed|required)|be a runoff|advance to a runoff)\b/,
  ],
  ["runoff:-", /\b(outright|avoid(s)? a runoff|without a runoff|no runoff)\b/],
  ["control:+", /\b(hold|holds|retain|retains|keep|keeps|defend|defends)\b/],
  ["control:-", /\b(flip|flips|lose|loses|lost)\b/],
];

// The patterns of the functions below are constants of the module, not literals in the functions: a
// pattern written inside a function is a new RegExp object every time it runs, and these run for
// every sentence of every market's rules.
const SENTENCE_BREAK = /(?<=[.;])\s+/;
/** What a sentence of the rules is about: a cancellation, a postponement (or no release), a tie. */
const CANCELLED = /\b(cancel+ed|cancel+ation|abandoned|called off)\b/;
const POSTPONED =
  /\bpostpone|\bdelayed|\brescheduled\b|\bnot (been )?(released|published|held|reported)\b|\bno (release|statement|report|election|vote|data)\b|\bunpublished\b|\bno [a-z]+( [a-z]+)? (is|are|has been|was) (held|released|published)\b|\b(is|are) not held\b|\bdoes not (take place|occur)\b|\b(not|never) (be )?(released|published|held|open|opens|premiere|premieres|take place|occur|happen)\b|\b(does|do|did|has|have) not (open|release|premiere|happen|occur|take place|publish|published|report|reported|announce|announced|name|named|hold|held)\b|\bno\b[^.,;]{0,30}\b(held|takes place|occurs|happens)\b/;
const TIE =
  /\b(tie|tied|ties|draw|drawn|dead heat)\b|\b(is|are) (exactly )?equal\b(?! to)|\bidentical\b|\bmultiple winners\b|\bmultiple [a-z]+ (are|is) declared\b|\bco-?winners?\b/;

export function voidPolicyOf(rules: string): Map<string, string> {
  const out = new Map<string, string>();
  const sentences = rules.split(SENTENCE_BREAK);
  for (const s of sentences) {
    const situation = CANCELLED.test(s)
      ? "cancelled"
      : POSTPONED.test(s)
        ? "postponed"
        : TIE.test(s)
          ? "tie"
          : null;
    if (!situation || out.has(situation)) continue;
    const saysNo = /\b(resolve[sd]?|settles?) (to |as )?no\b(?! change)|\bno\b["']? (if|when)\b/.test(s);
    const saysYes = /\b(resolve[sd]?|settles?) (to |as )?yes\b|\byes\b["']? (if|when)\b/.test(s);
    const outcome = /\b50-50\b|\b50\/50\b|\bfifty-fifty\b|\bsplit\b|\b0\.5\b|\$0\.50\b/.test(s)
      ? "50-50"
      : // Polymarket's multi-outcome events: every listed outcome pays No when "Other" wins.
        /\bresolve[sd]? to ["'\u201c\u201d]?other\b/.test(s)
        ? "other"
        : /\balphabetical/.test(s)
          ? "alphabetical"
          : /\bfair (price|value)\b|\blast (traded|fair) price\b/.test(s)
            ? "fair-price"
            : /\b(remain|remains|stay|stays|kept|keep) open\b|\buntil (it is |the [a-z]+ is )?(played|completed|published|released|held)\b/.test(
                  s,
                )
              ? "open"
              : /\brefund|\bvoid\b/.test(s)
                ? "void"
                : saysNo && !saysYes
                  ? "no"
                  : saysYes && !saysNo
                    ? "yes"
                    : null; // both or neither: a sentence about several outcomes says nothing plain
    if (outcome) out.set(situation, outcome);
    // A cancellation or postponement clause whose outcome the text does not give (cut short, or
    // "as the venue decides"): still an edge clause the other venue may settle otherwise.
    else if (situation !== "tie") out.set(situation, "unstated");
  }
  return out;
}

/** Time zones as the rules write them, in the order `zonesOf` adds them. */
const ZONES: Array<[RegExp, string]> = [
  [/\b(utc|gmt|coordinated universal time|zulu)\b/, "utc"],
  [/\b(et|est|edt|eastern( standard| daylight)? time|new york time)\b/, "et"],
  [/\b(ct|cst|cdt|central( standard)? time)\b/, "ct"],
  [/\b(mt|mst|mdt|mountain( standard)? time)\b/, "mt"],
  [/\b(pt|pst|pdt|pacific( standard)? time)\b/, "pt"],
  [/\blocal (standard )?time\b|\blocal (climate )?day\b|\bclimatological day\b/, "local"],
];

export function zonesOf(s: string): Set<string> {
  const out = new Set<string>();
  for (const [pattern, zone] of ZONES) if (pattern.test(s)) out.add(zone);
  return out;
}

/** "from November 25", "between Dec 1": a window's first day, said in so many words. */
const WINDOW_FROM = new RegExp(
  `\\b(?:from|between|starting|beginning)\\s+(?:on\\s+)?${MONTH_RE}\\s+(\\d{1,2})(?:st|nd|rd|th)?(?:,?\\s*(20\\d\\d))?`,
);
/** "December 18-20": a range of days. */
const DAY_RANGE = new RegExp(
  `\\b${MONTH_RE}\\s+(\\d{1,2})\\s*(?:-|to|through)\\s*(\\d{1,2})\\b(?:,?\\s*(20\\d\\d))?`,
);

/** "from November 25 to December 31", "between Dec 1 and Dec 31": the window's first day. */
export function windowStartOf(s: string, yearOf: YearOf, date: DateMention | null): string | null {
  const m = WINDOW_FROM.exec(s);
  if (m) {
    const month = MONTHS[m[1]!]!;
    const day = Number(m[2]);
    return dayKey(m[3] ? Number(m[3]) : yearOf(month, day), month, day);
  }
  const range = DAY_RANGE.exec(s);
  if (range && Number(range[3]) - Number(range[2]) >= 2) {
    const month = MONTHS[range[1]!]!;
    return dayKey(range[4] ? Number(range[4]) : yearOf(month, Number(range[2])), month, Number(range[2]));
  }
  if (date?.level === "month") return `${date.key}-01`;
  return null;
}

/** Organisations a market names as its source: the settlement source and "according to X" phrases. */
export function namedSourcesOf(settlementSource: string, rules: string): Set<string> {
  const out = new Set<string>();
  const phrases = [settlementSource];
  for (const m of rules.matchAll(
    /\b(?:according to|as (?:reported|published|announced|certified|determined) by|per|published by|reported by|source(?: is|:))\s+(?:the\s+)?([A-Z][A-Za-z.'&-]*(?:\s+(?:of\s+|the\s+|for\s+|and\s+)?[A-Z][A-Za-z.'&-]*){0,6})/g,
  ))
    phrases.push(m[1]!);
  for (const phrase of phrases) {
    const caps = phrase.match(/[A-Z][A-Za-z.'&-]*/g) ?? [];
    if (caps.length >= 2) out.add(caps.map((w) => w[0]!.toLowerCase()).join(""));
    for (const w of contentWords(
      normalizeText(phrase.replace(/https?:\/\/(www\.)?/g, "").replace(/\.(com|org|gov|net|fr|uk)\b/g, " ")),
    ))
      if (w.length > 2 && !GENERIC_SOURCE_WORDS.has(w)) out.add(w);
  }
  return out;
}

export const GENERIC_SOURCE_WORDS = new Set([
  "official",
  "statement",
  "data",
  "release",
  "report",
  "result",
  "website",
  "page",
  "www",
  "http",
  "https",
  "information",
  "publication",
  "announcement",
  "government",
  "site",
  "consensu",
  "credible",
  "reporting",
  "media",
  "news",
  "source",
]);

export const PLACEHOLDER =
  /^(tbd|tba|to be (determined|announced)|see (title|question|above)|n\/?a|none|placeholder|rules to follow|coming soon|lorem ipsum)\.?$/i;
