/**
 * The default world both fake venues serve: realistic events across politics, economics, crypto,
 * sports, weather and entertainment. Some contracts are listed on both venues (`sameAs` names the
 * other venue's key), as real ones are; some only on one; and some are look-alikes that are NOT the
 * same contract (`lookalikeOf`, with the reason), so matching has hard negatives to refuse; others are
 * complements (`complementOf`: YES on one venue is NO on the other). `crossListings()` lists the pairs.
 * Written for crossbook; every text here is ours.
 */
import { MORE_MARKETS } from "./more";

export type Category = "politics" | "economics" | "crypto" | "sports" | "weather" | "entertainment";
export type VenueName = "polymarket" | "kalshi";

export interface SeedMarket {
  venue: VenueName;
  /** Unique within the venue; the venue fake derives its ids (Kalshi ticker, Polymarket slug) from it. */
  key: string;
  eventKey: string;
  eventTitle: string;
  category: Category;
  question: string;
  rules: string;
  settlementSource: string;
  /** ISO 8601 UTC */
  closeTime: string;
  /** Polymarket outcome labels in listing order; YES is not always first. Default ["Yes", "No"]. */
  outcomes?: [string, string];
  /** Which of `outcomes` is the YES leg (by label). Default "Yes". */
  yesLabel?: string;
  /** Starting probability of YES. */
  yesPrice: number;
  tickSize: 0.01 | 0.001;
  negRisk?: boolean;
  /**
   * Default "open". "unopened" is listed but not yet trading (Kalshi `initialized`); Polymarket has
   * no such state in VENUES.md §1.2 and serves it as open.
   */
  status?: "open" | "closed" | "resolved" | "unopened";
  resolution?: "yes" | "no";
  /** The same contract on the other venue (its key there). */
  sameAs?: string;
  /** Looks like another venue's market but settles differently. */
  lookalikeOf?: Lookalike;
  /** Further look-alikes on the other venue, when one is not enough (same shape as `lookalikeOf`). */
  moreLookalikes?: Lookalike[];
  /** The other venue's market whose YES is this market's NO (its key there). */
  complementOf?: string;

  // Optional venue fields. When absent each fake generates its own (deterministic) value.
  /** Minimum order size in shares (Polymarket `orderMinSize`; Kalshi has no such field). Default 5. */
  minSize?: number;
  /** Lifetime volume in the venue's unit: pUSD on Polymarket, contracts on Kalshi (`volume_fp`). */
  volume?: number;
  /** 24 h volume, same units as `volume` (Polymarket `volume24hr`, Kalshi `volume_24h_fp`). */
  volume24h?: number;
  /** Polymarket `liquidity` in pUSD. Kalshi's `liquidity_dollars` is deprecated and stays "0.0000". */
  liquidity?: number;
  /**
   * Polymarket: the market's taker fee schedule; `false` fee-free. Default: its category's 2026 rate
   * (exponent 1) when it opened after the fee rollout (2026-03-30), else fee-free.
   */
  fees?: false | { rate: number; exponent: number };
  /** ISO 8601 UTC: Kalshi `open_time`, Polymarket `startDate`. */
  openTime?: string;
  /** Alias of `openTime` under Polymarket's name; if both are given they must be equal. */
  startDate?: string;
  /** Kalshi series ticker; default the event ticker's first segment. */
  seriesKey?: string;
  /**
   * Kalshi `price_level_structure`; default from `tickSize` (0.01 → linear_cent, 0.001 → deci_cent).
   * `tapered_deci_cent` (0.001 below 0.10 and above 0.90, 0.01 between) needs `tickSize: 0.001`.
   */
  priceLevelStructure?: "linear_cent" | "deci_cent" | "tapered_deci_cent";
  /**
   * Kalshi: whether this market's event is mutually exclusive (a ladder of thresholds is not).
   * Default: events with more than one market are. Set it on every market of the event.
   */
  mutuallyExclusive?: boolean;
}

/** A look-alike on the other venue: similar text, different contract. */
export interface Lookalike {
  /** The other venue's key. */
  key: string;
  /** One line: why they are not the same contract. */
  why: string;
  /**
   * The relation MATCHING.md would assign, from this market's side ("subset": this YES implies the
   * other's YES). Absent: not a clean set relation (a different source, rules, tie handling…).
   */
  trueRelation?: "subset" | "superset" | "overlap" | "disjoint";
}

const DEC31 = "2026-12-31T23:59:59Z";

export const DEFAULT_WORLD: SeedMarket[] = [
  // Economics: the December FOMC decision, listed on both venues.
  {
    venue: "kalshi",
    key: "KXFEDDECISION-26DEC-C25",
    eventKey: "KXFEDDECISION-26DEC",
    eventTitle: "Fed decision in December 2026",
    category: "economics",
    question: "Will the Fed cut rates by 25bps at its December 2026 meeting?",
    rules:
      "If the Federal Reserve lowers the upper bound of the federal funds target range by exactly 25 basis points at the meeting concluding December 16, 2026, the market resolves Yes. Source: the FOMC statement published on federalreserve.gov.",
    settlementSource: "Federal Reserve FOMC statement",
    closeTime: "2026-12-16T19:00:00Z",
    yesPrice: 0.62,
    tickSize: 0.01,
    sameAs: "fed-decision-december-2026-25-bps-cut",
  },
  {
    venue: "polymarket",
    key: "fed-decision-december-2026-25-bps-cut",
    eventKey: "fed-decision-in-december-2026",
    eventTitle: "Fed decision in December 2026",
    category: "economics",
    question: "Fed decreases interest rates by 25 bps after December 2026 meeting?",
    rules:
      "This market resolves to Yes if the Federal Reserve announces a 25 basis point decrease to the upper bound of the target federal funds rate at its meeting scheduled to conclude December 16, 2026. Resolution source: the official FOMC statement on federalreserve.gov.",
    settlementSource: "Federal Reserve FOMC statement",
    closeTime: "2026-12-16T19:00:00Z",
    yesPrice: 0.6,
    tickSize: 0.01,
    negRisk: true,
    sameAs: "KXFEDDECISION-26DEC-C25",
  },
  {
    venue: "polymarket",
    key: "fed-decision-december-2026-no-change",
    eventKey: "fed-decision-in-december-2026",
    eventTitle: "Fed decision in December 2026",
    category: "economics",
    question: "No change in Fed interest rates after December 2026 meeting?",
    rules:
      "This market resolves to Yes if the Federal Reserve leaves the target federal funds range unchanged at its meeting scheduled to conclude December 16, 2026. Resolution source: the official FOMC statement on federalreserve.gov.",
    settlementSource: "Federal Reserve FOMC statement",
    closeTime: "2026-12-16T19:00:00Z",
    yesPrice: 0.35,
    tickSize: 0.01,
    negRisk: true,
    sameAs: "KXFEDDECISION-26DEC-H0",
  },
  {
    venue: "kalshi",
    key: "KXFEDDECISION-26DEC-H0",
    eventKey: "KXFEDDECISION-26DEC",
    eventTitle: "Fed decision in December 2026",
    category: "economics",
    question: "Will the Fed hold rates at its December 2026 meeting?",
    rules:
      "If the Federal Reserve leaves the federal funds target range unchanged at the meeting concluding December 16, 2026, the market resolves Yes. Source: the FOMC statement published on federalreserve.gov.",
    settlementSource: "Federal Reserve FOMC statement",
    closeTime: "2026-12-16T19:00:00Z",
    yesPrice: 0.36,
    tickSize: 0.01,
    sameAs: "fed-decision-december-2026-no-change",
  },
  // Economics: CPI. Kalshi's "above" is strict; Polymarket's threshold is inclusive: look-alikes.
  {
    venue: "kalshi",
    key: "KXCPIYOY-26NOV-T3.0",
    eventKey: "KXCPIYOY-26NOV",
    eventTitle: "CPI year-over-year in November 2026",
    category: "economics",
    question: "Will CPI inflation be above 3.0% for November 2026?",
    rules:
      "If year-over-year CPI-U inflation (all items, not seasonally adjusted) for November 2026, as first released by the Bureau of Labor Statistics, is strictly greater than 3.0%, the market resolves Yes.",
    settlementSource: "Bureau of Labor Statistics CPI release",
    closeTime: "2026-12-10T13:30:00Z",
    yesPrice: 0.41,
    tickSize: 0.01,
    lookalikeOf: {
      key: "november-2026-cpi-3pt0-or-higher",
      why: "strict > vs inclusive ≥ at the same threshold",
    },
  },
  {
    venue: "polymarket",
    key: "november-2026-cpi-3pt0-or-higher",
    eventKey: "november-2026-inflation",
    eventTitle: "November 2026 inflation (CPI YoY)",
    category: "economics",
    question: "Will November 2026 CPI inflation be 3.0% or higher?",
    rules:
      "This market resolves to Yes if the year-over-year change in CPI-U for November 2026, as first published by the BLS, is 3.0% or higher. Otherwise it resolves to No.",
    settlementSource: "Bureau of Labor Statistics CPI release",
    closeTime: "2026-12-10T13:30:00Z",
    yesPrice: 0.47,
    tickSize: 0.01,
    lookalikeOf: { key: "KXCPIYOY-26NOV-T3.0", why: "inclusive ≥ vs strict >" },
  },
  // Crypto thresholds: same contract on both venues.
  {
    venue: "kalshi",
    key: "KXBTCY-26DEC31-T100000",
    eventKey: "KXBTCY-26DEC31",
    eventTitle: "Bitcoin price at the end of 2026",
    category: "crypto",
    question: "Will Bitcoin be above $100,000 at 11:59 PM ET on December 31, 2026?",
    rules:
      "If the CF Benchmarks Bitcoin Real Time Index (BRTI) is strictly above 100,000.00 at 11:59 PM ET on December 31, 2026, the market resolves Yes.",
    settlementSource: "CF Benchmarks BRTI",
    closeTime: "2027-01-01T04:59:00Z",
    yesPrice: 0.55,
    tickSize: 0.01,
    lookalikeOf: {
      key: "bitcoin-above-100k-on-december-31-2026",
      why: "different index and minute (BRTI 11:59 PM ET vs Binance 12:00 UTC close)",
    },
  },
  {
    venue: "polymarket",
    key: "bitcoin-above-100k-on-december-31-2026",
    eventKey: "bitcoin-above-on-december-31-2026",
    eventTitle: "Bitcoin above ___ on December 31, 2026?",
    category: "crypto",
    question: "Will the price of Bitcoin be above $100,000 on December 31, 2026?",
    rules:
      "This market resolves to Yes if the Binance BTC/USDT 1-minute candle for 12:00 UTC on December 31, 2026 has a final close price above $100,000. Otherwise No.",
    settlementSource: "Binance BTC/USDT 1m candle",
    closeTime: "2026-12-31T12:00:00Z",
    yesPrice: 0.53,
    tickSize: 0.01,
    negRisk: true,
    lookalikeOf: { key: "KXBTCY-26DEC31-T100000", why: "different index and minute" },
  },
  {
    venue: "kalshi",
    key: "KXETHMAXY-26-T5000",
    eventKey: "KXETHMAXY-26",
    eventTitle: "How high will Ethereum get in 2026?",
    category: "crypto",
    question: "Will Ethereum reach $5,000 before January 1, 2027?",
    rules:
      "If the CF Benchmarks Ether Real Time Index (ETHUSD_RTI) is at or above 5,000.00 at any time before January 1, 2027 00:00 ET, the market resolves Yes.",
    settlementSource: "CF Benchmarks ETHUSD_RTI",
    closeTime: "2027-01-01T05:00:00Z",
    yesPrice: 0.18,
    tickSize: 0.01,
    sameAs: "will-ethereum-reach-5000-in-2026",
  },
  {
    venue: "polymarket",
    key: "will-ethereum-reach-5000-in-2026",
    eventKey: "what-price-will-ethereum-hit-in-2026",
    eventTitle: "What price will Ethereum hit in 2026?",
    category: "crypto",
    question: "Will Ethereum reach $5,000 in 2026?",
    rules:
      "This market resolves to Yes if the CF Benchmarks Ether Real Time Index reaches $5,000 or more at any time between market creation and December 31, 2026, 11:59 PM ET. Otherwise No.",
    settlementSource: "CF Benchmarks ETHUSD_RTI",
    closeTime: "2027-01-01T04:59:00Z",
    outcomes: ["No", "Yes"],
    yesPrice: 0.2,
    tickSize: 0.01,
    sameAs: "KXETHMAXY-26-T5000",
  },
  // Politics.
  {
    venue: "kalshi",
    key: "KXGOVSHUT-26DEC31",
    eventKey: "KXGOVSHUT-26",
    eventTitle: "Government shutdown in 2026?",
    category: "politics",
    question: "Will the federal government shut down before December 31, 2026?",
    rules:
      "If a lapse in appropriations causes the Office of Personnel Management to announce a shutdown of the US federal government before December 31, 2026, the market resolves Yes.",
    settlementSource: "US Office of Personnel Management",
    closeTime: DEC31,
    yesPrice: 0.22,
    tickSize: 0.01,
    sameAs: "us-government-shutdown-by-december-31-2026",
  },
  {
    venue: "polymarket",
    key: "us-government-shutdown-by-december-31-2026",
    eventKey: "us-government-shutdown-in-2026",
    eventTitle: "US government shutdown in 2026?",
    category: "politics",
    question: "US government shutdown by December 31, 2026?",
    rules:
      "This market resolves to Yes if the US federal government enters a shutdown (as announced by the Office of Personnel Management following a lapse in appropriations) by December 31, 2026, 11:59 PM ET.",
    settlementSource: "US Office of Personnel Management",
    closeTime: DEC31,
    yesPrice: 0.2,
    tickSize: 0.01,
    sameAs: "KXGOVSHUT-26DEC31",
    // A fee-free market (geopolitics-like markets charge no fee).
    fees: false,
  },
  {
    venue: "polymarket",
    key: "fed-chair-announces-resignation-by-december-31-2026",
    eventKey: "fed-chair-resignation-2026",
    eventTitle: "Fed Chair resignation in 2026?",
    category: "politics",
    question: "Fed Chair announces resignation by December 31, 2026?",
    rules:
      "This market resolves to Yes if the sitting Chair of the Federal Reserve publicly announces a resignation by December 31, 2026, 11:59 PM ET, regardless of when it takes effect.",
    settlementSource: "Official statements",
    closeTime: DEC31,
    yesPrice: 0.08,
    tickSize: 0.001,
    lookalikeOf: { key: "KXFEDCHAIROUT-26", why: "announcement vs leaving office" },
  },
  {
    venue: "kalshi",
    key: "KXFEDCHAIROUT-26",
    eventKey: "KXFEDCHAIROUT",
    eventTitle: "Fed Chair out in 2026?",
    category: "politics",
    question: "Will the Fed Chair leave office before January 1, 2027?",
    rules:
      "If the person serving as Chair of the Federal Reserve on January 1, 2026 ceases to hold the office before January 1, 2027, the market resolves Yes. An announced but not yet effective resignation does not count.",
    settlementSource: "Federal Reserve Board",
    closeTime: "2027-01-01T05:00:00Z",
    yesPrice: 0.05,
    tickSize: 0.01,
    lookalikeOf: {
      key: "fed-chair-announces-resignation-by-december-31-2026",
      why: "leaving office vs announcement",
    },
  },
  // Sports: Polymarket moneyline uses team names as outcomes.
  {
    venue: "polymarket",
    key: "nba-lal-bos-2026-12-25",
    eventKey: "nba-lal-bos-2026-12-25",
    eventTitle: "Lakers vs. Celtics (Dec 25, 2026)",
    category: "sports",
    question: "Lakers vs. Celtics",
    rules:
      "This market resolves to Lakers if the Los Angeles Lakers win their game against the Boston Celtics scheduled for December 25, 2026, and to Celtics otherwise. If the game is postponed, the market remains open until it is played; if cancelled, it resolves 50-50.",
    settlementSource: "NBA official box score",
    closeTime: "2026-12-26T04:00:00Z",
    outcomes: ["Lakers", "Celtics"],
    yesLabel: "Lakers",
    yesPrice: 0.44,
    tickSize: 0.01,
    // The same game and side; only a cancellation settles differently (50-50 here, the last fair
    // price on Kalshi): an edge clause, which the matcher reports as a caveat.
    sameAs: "KXNBAGAME-26DEC25LALBOS-LAL",
  },
  {
    venue: "kalshi",
    key: "KXNBAGAME-26DEC25LALBOS-LAL",
    eventKey: "KXNBAGAME-26DEC25LALBOS",
    eventTitle: "Los Angeles L at Boston (Dec 25)",
    category: "sports",
    question: "Will the Los Angeles Lakers win against the Boston Celtics on December 25, 2026?",
    rules:
      "If the Los Angeles Lakers win the game against the Boston Celtics originally scheduled for December 25, 2026, the market resolves Yes. If the game is postponed it stays open until played; if cancelled, the market settles at the last fair price.",
    settlementSource: "NBA official box score",
    closeTime: "2026-12-26T04:00:00Z",
    yesPrice: 0.45,
    tickSize: 0.01,
    sameAs: "nba-lal-bos-2026-12-25",
  },
  {
    venue: "kalshi",
    key: "KXNFLGAME-26DEC27KCDEN-KC",
    eventKey: "KXNFLGAME-26DEC27KCDEN",
    eventTitle: "Kansas City at Denver (Dec 27)",
    category: "sports",
    question: "Will Kansas City beat Denver on December 27, 2026?",
    rules:
      "If the Kansas City Chiefs win the game against the Denver Broncos scheduled for December 27, 2026, the market resolves Yes.",
    settlementSource: "NFL official game book",
    closeTime: "2026-12-28T05:00:00Z",
    yesPrice: 0.58,
    tickSize: 0.01,
  },
  // Weather: the same city, different stations.
  {
    venue: "kalshi",
    key: "KXHIGHNY-26DEC01-T45",
    eventKey: "KXHIGHNY-26DEC01",
    eventTitle: "Highest temperature in NYC on Dec 1, 2026",
    category: "weather",
    question: "Will the high temperature in New York City be above 45°F on December 1, 2026?",
    rules:
      "If the maximum temperature recorded at Central Park, New York (KNYC) on December 1, 2026, per the National Weather Service Daily Climate Report, is strictly greater than 45°F, the market resolves Yes.",
    settlementSource: "NWS Daily Climate Report, Central Park (KNYC)",
    closeTime: "2026-12-02T05:00:00Z",
    yesPrice: 0.5,
    tickSize: 0.01,
    lookalikeOf: {
      key: "highest-temperature-in-nyc-on-december-1-2026-46f-or-higher",
      why: "different weather station (KNYC vs KLGA)",
    },
  },
  {
    venue: "polymarket",
    key: "highest-temperature-in-nyc-on-december-1-2026-46f-or-higher",
    eventKey: "highest-temperature-in-nyc-on-december-1-2026",
    eventTitle: "Highest temperature in NYC on December 1?",
    category: "weather",
    question: "Will the highest temperature in NYC be 46°F or higher on December 1, 2026?",
    rules:
      "This market resolves to Yes if the highest temperature recorded at LaGuardia Airport (KLGA) on December 1, 2026, as reported by Weather Underground, is 46°F or higher.",
    settlementSource: "Weather Underground, LaGuardia Airport (KLGA)",
    closeTime: "2026-12-02T05:00:00Z",
    yesPrice: 0.48,
    tickSize: 0.01,
    negRisk: true,
    lookalikeOf: { key: "KXHIGHNY-26DEC01-T45", why: "different station" },
  },
  // Entertainment, one venue only.
  {
    venue: "polymarket",
    key: "top-grossing-movie-of-2026-avatar-fire-and-ash",
    eventKey: "top-grossing-movie-of-2026",
    eventTitle: "Top grossing movie of 2026?",
    category: "entertainment",
    question: "Will Avatar: Fire and Ash be the top grossing movie of 2026?",
    rules:
      "This market resolves to Yes if Avatar: Fire and Ash has the highest domestic box office gross of films released in 2026, per Box Office Mojo, on January 5, 2027.",
    settlementSource: "Box Office Mojo",
    closeTime: "2027-01-05T17:00:00Z",
    yesPrice: 0.31,
    tickSize: 0.01,
  },
  // A resolved market and a closed one, so status handling is exercised.
  {
    venue: "kalshi",
    key: "KXCPIYOY-26OCT-T3.0",
    eventKey: "KXCPIYOY-26OCT",
    eventTitle: "CPI year-over-year in October 2026",
    category: "economics",
    question: "Will CPI inflation be above 3.0% for October 2026?",
    rules:
      "If year-over-year CPI-U inflation for October 2026, as first released by the Bureau of Labor Statistics, is strictly greater than 3.0%, the market resolves Yes.",
    settlementSource: "Bureau of Labor Statistics CPI release",
    closeTime: "2026-11-12T13:30:00Z",
    yesPrice: 0.99,
    tickSize: 0.01,
    status: "resolved",
    resolution: "yes",
  },
  {
    venue: "polymarket",
    key: "will-it-snow-in-london-on-november-20-2026",
    eventKey: "snow-in-london-november-20-2026",
    eventTitle: "Snow in London on November 20, 2026?",
    category: "weather",
    question: "Will it snow in London on November 20, 2026?",
    rules:
      "This market resolves to Yes if the Met Office reports measurable snowfall at Heathrow on November 20, 2026.",
    settlementSource: "Met Office, Heathrow",
    closeTime: "2026-11-21T00:00:00Z",
    yesPrice: 0.03,
    tickSize: 0.001,
    status: "closed",
  },
  // The larger world (more markets, ladders, neg-risk events, complements, look-alikes): ./more.ts
  ...MORE_MARKETS,
];

/** Markets of one venue in the default world. */
export function seedFor(venue: VenueName, world: SeedMarket[] = DEFAULT_WORLD): SeedMarket[] {
  return world.filter((m) => m.venue === venue);
}
