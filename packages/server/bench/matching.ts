/**
 * bench/matching: the matcher over two synthetic catalogs of N markets each (N = 5,000, 20,000,
 * 50,000 by default), each size in a fresh process so its memory is its own: wall time and peak
 * memory to index both catalogs and match every market, and the time to match ONE new market
 * against the 50,000 (p50/p99 over 1,000 new markets). Ratios printed: time per market at each size
 * against the smallest size (1.0 = perfectly linear growth), and total time against a baseline
 * measured in the same process: reading every market's features once (the floor any matcher that
 * reads the rules pays). Targets: 50,000 × 50,000 in ≤ 60 s and ≤ 2 GB; one new market ≤ 5 ms.
 *
 * The catalogs are generated deterministically (seeded PRNG) from templates across politics,
 * economics, crypto, sports, weather and entertainment, with thousands of distinct people, teams,
 * cities and assets, ladders of thresholds, and per venue phrasing: about half the markets are
 * listed on both venues, a fifth have a look-alike on the other venue, the rest are on one only.
 *
 *   npm run bench:matching [-- --sizes 5000,20000,50000 --new 1000]
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { seededRandom } from "@crossbook/fakes/random";
import { extractFeatures } from "../src/matching/features";
import { isAutoAcceptable, Matcher } from "../src/matching/matcher";
import type { MatchableMarket } from "../src/matching/types";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

const TARGET_SECONDS = 60;
const TARGET_BYTES = 2 * 1024 ** 3;
const TARGET_NEW_MS = 5;

const SYLLABLES =
  "ka lo mi ra ven tor sel dan bri co mar tin fel gar hol jun kes lan mor nel pra quin ros sab tal ur vik wes yor zan".split(
    " ",
  );
const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const SHORT = MONTH_NAMES.map((m) => m.slice(0, 3));

/** Generates paired catalogs of `n` markets per venue; ids are `<idPrefix><venue>:<n>`. */
export function generateCatalogs(
  n: number,
  seed = 7,
  idPrefix = "",
): { polymarket: MatchableMarket[]; kalshi: MatchableMarket[] } {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const name = (parts: number) => {
    let s = "";
    for (let i = 0; i < parts; i++) s += pick(SYLLABLES);
    return s.charAt(0).toUpperCase() + s.slice(1);
  };
  const pool = (size: number, parts: number) => Array.from({ length: size }, () => name(parts));
  const people = Array.from({ length: 6000 }, () => `${name(2)} ${name(3)}`);
  const teams = pool(900, 3);
  const cities = pool(1500, 3);
  const assets = pool(600, 2);
  const films = pool(2500, 3);
  const pm: MatchableMarket[] = [];
  const k: MatchableMarket[] = [];
  let id = 0;
  const market = (
    venue: "polymarket" | "kalshi",
    question: string,
    eventTitle: string,
    rules: string,
    source: string,
    close: string,
    yesLabel = "Yes",
  ): MatchableMarket => ({
    id: `${idPrefix}${venue}:${++id}`,
    venue,
    question,
    eventTitle,
    rules,
    settlementSource: source,
    closeTime: close,
    yesLabel,
    noLabel: yesLabel === "Yes" ? "No" : "Other",
  });
  while (pm.length < n || k.length < n) {
    const month = Math.floor(rnd() * 12);
    const day = 1 + Math.floor(rnd() * 28);
    const year = 2027;
    const iso = `${year}-${String(month + 1).padStart(2, "0")}-${String(day).padStart(2, "0")}T23:00:00Z`;
    const long = `${MONTH_NAMES[month]} ${day}, ${year}`;
    const short = `${SHORT[month]} ${day}`;
    const family = Math.floor(rnd() * 6);
    let a: MatchableMarket;
    let b: MatchableMarket;
    if (family === 0) {
      const asset = pick(assets);
      const t = (1 + Math.floor(rnd() * 40)) * 250;
      a = market(
        "polymarket",
        `Will ${asset} be above $${t.toLocaleString("en-US")} on ${long}?`,
        `${asset} above ___ on ${long}?`,
        `This market will resolve to "Yes" if the ${asset}/USD CF Benchmarks index is above $${t} at 5:00 PM ET on ${long}. Otherwise, this market will resolve to "No".`,
        "CF Benchmarks",
        iso,
      );
      b = market(
        "kalshi",
        `${asset} price on ${short}, ${year}?`,
        `${asset} price on ${short}`,
        `If the CF Benchmarks ${asset} index is strictly greater than ${t} at 5:00 PM ET on ${long}, then the market resolves to Yes.`,
        "CF Benchmarks",
        iso,
        `Above $${t}`,
      );
    } else if (family === 1) {
      const person = pick(people);
      const office = pick(["governor", "mayor", "senator", "minister", "chair", "director"]);
      a = market(
        "polymarket",
        `${person} out as ${office} by ${long}?`,
        `${person} out by ${short}?`,
        `This market will resolve to "Yes" if ${person} ceases to hold the office of ${office} by ${long}, 11:59 PM ET.`,
        "Official statements",
        iso,
      );
      b = market(
        "kalshi",
        `Will ${person} leave office as ${office} before ${MONTH_NAMES[month]} ${day + 1}, ${year}?`,
        `${person} leaves office`,
        `If ${person} ceases to hold the office of ${office} before ${MONTH_NAMES[month]} ${day + 1}, ${year}, then the market resolves to Yes.`,
        "Official statements",
        iso,
      );
    } else if (family === 2) {
      const home = pick(teams);
      const away = pick(teams);
      a = market(
        "polymarket",
        `${away} vs. ${home}`,
        `${away} vs. ${home} (${short}, ${year})`,
        `This market resolves to ${away} if the ${away} win their game against the ${home} on ${long}, and to ${home} otherwise. If the game is cancelled, it resolves 50-50.`,
        "League box score",
        iso,
        away,
      );
      b = market(
        "kalshi",
        `Will the ${away} beat the ${home} on ${long}?`,
        `${away} at ${home} (${short})`,
        `If the ${away} win the game against the ${home} scheduled for ${long}, then the market resolves to Yes. If cancelled, the market resolves 50-50.`,
        "League box score",
        iso,
      );
    } else if (family === 3) {
      const city = pick(cities);
      const t = 30 + Math.floor(rnd() * 60);
      a = market(
        "polymarket",
        `Will the highest temperature in ${city} be ${t}°F or higher on ${long}?`,
        `Highest temperature in ${city} on ${short}?`,
        `This market resolves to "Yes" if the highest temperature recorded at ${city} Municipal Airport on ${long}, per the National Weather Service, is ${t}°F or higher.`,
        "National Weather Service",
        iso,
      );
      b = market(
        "kalshi",
        `Highest temperature in ${city} on ${short}, ${year}?`,
        `High temp in ${city}`,
        `If the maximum temperature recorded at ${city} Municipal Airport on ${long}, per the NWS Daily Climate Report, is greater than or equal to ${t}°F, then the market resolves to Yes.`,
        "National Weather Service",
        iso,
        `${t}° or above`,
      );
    } else if (family === 4) {
      const indicator = pick([
        "CPI",
        "core CPI",
        "unemployment rate",
        "PCE inflation",
        "retail sales growth",
      ]);
      const region = pick(cities);
      const t = (20 + Math.floor(rnd() * 30)) / 10;
      a = market(
        "polymarket",
        `${region} ${indicator} above ${t}% in ${MONTH_NAMES[month]} ${year}?`,
        `${region} ${indicator} ${MONTH_NAMES[month]} ${year}`,
        `This market will resolve to "Yes" if the ${region} ${indicator} for ${MONTH_NAMES[month]} ${year}, as first published, is greater than ${t}%.`,
        `${region} statistics office`,
        iso,
      );
      b = market(
        "kalshi",
        `Will ${region} ${indicator} be above ${t}% for ${MONTH_NAMES[month]} ${year}?`,
        `${region} ${indicator}`,
        `If the ${region} ${indicator} for ${MONTH_NAMES[month]} ${year}, as first released, is strictly greater than ${t}%, then the market resolves to Yes.`,
        `${region} statistics office`,
        iso,
      );
    } else {
      const film = pick(films);
      const t = (1 + Math.floor(rnd() * 20)) * 25;
      a = market(
        "polymarket",
        `Will ${film} gross over $${t}M domestically in its opening weekend?`,
        `${film} opening weekend box office`,
        `This market will resolve to "Yes" if ${film} earns more than $${t} million at the domestic box office in its opening weekend, per Box Office Mojo, reported by ${long}.`,
        "Box Office Mojo",
        iso,
      );
      b = market(
        "kalshi",
        `${film} opening weekend above $${t}M?`,
        `${film} opening weekend`,
        `If ${film} grosses more than $${t},000,000 at the domestic box office over its opening weekend as reported by Box Office Mojo by ${long}, then the market resolves to Yes.`,
        "Box Office Mojo",
        iso,
      );
    }
    const r = rnd();
    if (r < 0.5) {
      if (pm.length < n) pm.push(a);
      if (k.length < n) k.push(b);
    } else if (r < 0.75) {
      if (pm.length < n) pm.push(a);
    } else if (k.length < n) k.push(b);
  }
  return { polymarket: pm, kalshi: k };
}

function run(n: number, newMarkets: number): void {
  const { polymarket, kalshi } = generateCatalogs(n);
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage();
  let peak = base.rss;
  const sample = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  // Baseline: read every market's features once.
  let t0 = performance.now();
  let keys = 0;
  for (const m of polymarket) keys += extractFeatures(m).keys.length;
  for (const m of kalshi) keys += extractFeatures(m).keys.length;
  const baselineMs = performance.now() - t0;

  t0 = performance.now();
  const matcher = new Matcher();
  for (const m of polymarket) matcher.add(m);
  for (const m of kalshi) matcher.add(m);
  const indexMs = performance.now() - t0;
  let verdicts = 0;
  let accepted = 0;
  for (const m of polymarket) {
    for (const v of matcher.match(m)) {
      verdicts++;
      if (isAutoAcceptable(v)) accepted++;
    }
  }
  const totalMs = performance.now() - t0;
  peak = Math.max(peak, process.memoryUsage().rss);

  let newP50 = 0;
  let newP99 = 0;
  if (newMarkets > 0) {
    // Built like the indexed markets, not copied with a spread: a market object of another shape
    // sends the matcher's optimized code back to the interpreter, which no real new market does.
    const fresh = generateCatalogs(newMarkets, 99, "new:").polymarket;
    const times: number[] = [];
    for (const m of fresh) {
      const s = performance.now();
      matcher.add(m);
      matcher.match(m);
      times.push(performance.now() - s);
      matcher.remove(m.id);
    }
    times.sort((x, y) => x - y);
    newP50 = times[Math.floor(times.length * 0.5)]!;
    newP99 = times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]!;
  }
  clearInterval(sample);
  console.log(
    JSON.stringify({
      n,
      baselineMs,
      indexMs,
      totalMs,
      verdicts,
      accepted,
      peakRss: peak,
      baseRss: base.rss,
      keys,
      newP50,
      newP99,
    }),
  );
}

if (process.argv.includes("--child")) {
  run(Number(arg("n", "5000")), Number(arg("new", "0")));
} else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const sizes = arg("sizes", "5000,20000,50000").split(",").map(Number);
  const newCount = Number(arg("new", "1000"));
  const self = fileURLToPath(import.meta.url);
  console.log(
    `bench/matching: two catalogs of N markets each, every market matched against the other venue (${sizes.join(", ")}); each size in its own process`,
  );
  const results: Array<Record<string, number>> = [];
  for (const n of sizes) {
    const largest = n === Math.max(...sizes);
    const out = execFileSync(
      process.execPath,
      [
        "--expose-gc",
        "--import",
        "tsx",
        self,
        "--child",
        "--n",
        String(n),
        "--new",
        String(largest ? newCount : 0),
      ],
      { encoding: "utf8", maxBuffer: 1 << 24 },
    );
    const r = JSON.parse(out.trim().split("\n").pop()!) as Record<string, number>;
    results.push(r);
    const perMarket = (r.totalMs! * 1000) / (2 * n);
    const first = results[0]!;
    const linear = perMarket / ((first.totalMs! * 1000) / (2 * first.n!));
    console.log(
      `N=${String(n).padStart(6)}: ${(r.totalMs! / 1000).toFixed(2)} s (index ${(r.indexMs! / 1000).toFixed(2)} s), ${perMarket.toFixed(1)} µs/market, ` +
        `peak RSS ${(r.peakRss! / 1024 ** 2).toFixed(0)} MB, ${r.verdicts} verdicts (${r.accepted} auto-accepted); ` +
        `ratio to features-only baseline (${(r.baselineMs! / 1000).toFixed(2)} s): ${(r.totalMs! / r.baselineMs!).toFixed(2)}x; per-market time vs N=${first.n}: ${linear.toFixed(2)}x`,
    );
    if (largest && newCount > 0)
      console.log(
        `  one new market against ${n}: p50 ${r.newP50!.toFixed(2)} ms, p99 ${r.newP99!.toFixed(2)} ms (target ≤ ${TARGET_NEW_MS} ms): ${r.newP99! <= TARGET_NEW_MS ? "PASS" : "MISS"}`,
      );
    if (largest)
      console.log(
        `  target ${TARGET_SECONDS} s and 2 GB at N=${n}: ${r.totalMs! / 1000 <= TARGET_SECONDS ? "PASS" : "MISS"} time, ${r.peakRss! <= TARGET_BYTES ? "PASS" : "MISS"} memory`,
      );
  }
}
