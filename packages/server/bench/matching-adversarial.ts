/**
 * bench/matching-adversarial: what hostile venue text costs the matcher. A market whose question,
 * event title, rules, settlement source and YES label each hold N KiB (4, 16, 64) of one hostile
 * family (a run of digits, "1.1.1.…", dots, name fragments, capitals, month names, comparators,
 * negations, figures, unicode, a mix) is read into its features WITHOUT the input limits
 * (`readFeatures`), so the figures are the patterns' own. Printed per family: time per read, the
 * per-KiB cost at 64 KiB over the per-KiB cost at 4 KiB (1 = linear growth, 16 = quadratic), and the
 * per-KiB cost at 64 KiB against a baseline measured in the same run: realistic markets (the
 * synthetic catalog of bench/matching.ts) read the same way. Target: per-KiB growth 64/4 ≤ 2 for
 * every family. Last, the same 64 KiB markets through `extractFeatures` (the input limits on), as a
 * multiple of one realistic market: what one hostile market costs the service.
 *
 * Rounds alternate families and sizes, and each figure is the median of the rounds, so a
 * neighbour's load lands on every input alike.
 *
 *   npm run bench:matching-adversarial [-- --rounds 7 --sizes 4,16,64]
 */
import { extractFeatures, readFeatures } from "../src/matching/features";
import type { MatchableMarket } from "../src/matching/types";
import { generateCatalogs } from "./matching";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

const ROUNDS = Number(arg("rounds", "7"));
const SIZES_KIB = arg("sizes", "4,16,64").split(",").map(Number);
const TARGET_GROWTH = 2;
/** Each timed sample repeats the read until it has run this long. */
const SAMPLE_MS = 20;

/** Each family is a unit repeated to the size: the shapes that make a backtracking pattern rescan. */
const FAMILIES: Record<string, string> = {
  digits: "9",
  "1.1.1.": "1.",
  dots: ".",
  names: "Los Angeles L at Boston Celtics vs. the Lakers, Max Verstappen beat O'Neil-Smith ",
  capitals: "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
  months: "in may december 8-9 by march of 2026 jan 1 sept. ",
  comparators: "above above at least more than or more not less than ",
  negations: "not never nobody does not fails to no candidate ",
  figures: "5% $1,000 25 bps 3.5 44-45°f 100k ",
  unicode: "é😀中\u0301𝔘\u00a0",
  mix: "Will the 1.1.1 Lakers beat 999999 above $100k in May 2026 per The BLS not worldwide domestic (",
};

function fill(unit: string, chars: number): string {
  const s = unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
  // Never end on half a surrogate pair.
  const last = s.charCodeAt(s.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? s.slice(0, -1) : s;
}

function hostile(family: string, kib: number): MatchableMarket {
  const text = fill(FAMILIES[family]!, kib * 1024);
  return {
    id: `polymarket:${family}-${kib}`,
    venue: "polymarket",
    question: text,
    eventTitle: text,
    rules: text,
    settlementSource: text,
    closeTime: "2026-12-31T23:00:00Z",
    yesLabel: text,
    noLabel: "No",
  };
}

function textChars(m: MatchableMarket): number {
  return (
    m.question.length +
    (m.eventTitle?.length ?? 0) +
    (m.rules?.length ?? 0) +
    (m.settlementSource?.length ?? 0) +
    m.yesLabel.length +
    m.noLabel.length
  );
}

/** Milliseconds per call of `run`, repeated until the sample has run SAMPLE_MS. */
function sample(run: () => void): number {
  let calls = 0;
  const t0 = performance.now();
  let elapsed = 0;
  do {
    run();
    calls++;
    elapsed = performance.now() - t0;
  } while (elapsed < SAMPLE_MS);
  return elapsed / calls;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const { polymarket, kalshi } = generateCatalogs(200, 11);
const realistic = [...polymarket, ...kalshi];
const realisticChars = realistic.reduce((n, m) => n + textChars(m), 0);
const inputs = Object.keys(FAMILIES).flatMap((family) =>
  SIZES_KIB.map((kib) => ({ family, kib, market: hostile(family, kib) })),
);

console.log(
  `bench/matching-adversarial: markets with every text field holding ${SIZES_KIB.join(", ")} KiB of hostile text, read without the input limits, vs ${realistic.length} realistic markets (${(realisticChars / realistic.length / 1024).toFixed(2)} KiB of text each) read in the same run; median of ${ROUNDS} rounds`,
);

// Warm-up: every input once, so the first round does not pay for compiling the patterns.
for (const m of realistic) readFeatures(m);
for (const { market } of inputs) {
  readFeatures(market);
  extractFeatures(market);
}

const realisticMs: number[] = [];
const realisticBoundedMs: number[] = [];
const hostileMs = new Map<string, number[]>();
const boundedMs = new Map<string, number[]>();
const largest = Math.max(...SIZES_KIB);
for (let round = 0; round < ROUNDS; round++) {
  realisticMs.push(
    sample(() => {
      for (const m of realistic) readFeatures(m);
    }) / realistic.length,
  );
  realisticBoundedMs.push(
    sample(() => {
      for (const m of realistic) extractFeatures(m);
    }) / realistic.length,
  );
  // A different order each round.
  const order = round % 2 === 0 ? inputs : [...inputs].reverse();
  for (const { family, kib, market } of order) {
    const key = `${family}|${kib}`;
    hostileMs.set(key, [...(hostileMs.get(key) ?? []), sample(() => readFeatures(market))]);
    if (kib === largest)
      boundedMs.set(family, [...(boundedMs.get(family) ?? []), sample(() => extractFeatures(market))]);
  }
}

const realisticPerMarket = median(realisticMs);
const realisticPerKiB = realisticPerMarket / (realisticChars / realistic.length / 1024);
console.log(
  `realistic market: ${(realisticPerMarket * 1000).toFixed(1)} µs per read, ${(realisticPerKiB * 1000).toFixed(1)} µs per KiB of text`,
);
const smallest = Math.min(...SIZES_KIB);
const pad = (s: string, n: number) => s.padEnd(n);
console.log(
  `${pad("family", 12)}${SIZES_KIB.map((k) => pad(`${k} KiB`, 11)).join("")}${pad(`per-KiB ${largest}/${smallest}`, 16)}per KiB at ${largest} KiB vs realistic`,
);
let worst = 0;
let worstFamily = "";
for (const family of Object.keys(FAMILIES)) {
  const perKiB = (kib: number) => {
    const market = inputs.find((x) => x.family === family && x.kib === kib)!.market;
    return median(hostileMs.get(`${family}|${kib}`)!) / (textChars(market) / 1024);
  };
  const growth = perKiB(largest) / perKiB(smallest);
  if (growth > worst) {
    worst = growth;
    worstFamily = family;
  }
  console.log(
    `${pad(family, 12)}${SIZES_KIB.map((k) => pad(`${median(hostileMs.get(`${family}|${k}`)!).toFixed(2)} ms`, 11)).join("")}${pad(`${growth.toFixed(2)}x`, 16)}${(perKiB(largest) / realisticPerKiB).toFixed(2)}x`,
  );
}
console.log(
  `worst per-KiB growth ${largest}/${smallest} KiB: ${worst.toFixed(2)}x (${worstFamily}; target ≤ ${TARGET_GROWTH}, quadratic would be ${(largest / smallest).toFixed(0)}x): ${worst <= TARGET_GROWTH ? "PASS" : "MISS"}`,
);
const realisticBounded = median(realisticBoundedMs);
let worstBounded = 0;
let worstBoundedFamily = "";
for (const [family, values] of boundedMs) {
  if (median(values) <= worstBounded) continue;
  worstBounded = median(values);
  worstBoundedFamily = family;
}
console.log(
  `with the input limits (extractFeatures): the costliest ${largest} KiB hostile market (${worstBoundedFamily}) takes ${worstBounded.toFixed(2)} ms, ${(worstBounded / realisticBounded).toFixed(0)}x one realistic market (${(realisticBounded * 1000).toFixed(1)} µs)`,
);
