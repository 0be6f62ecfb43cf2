/**
 * `npm run eval:matching`: runs the matcher over two labelled sets and prints, for each, precision,
 * recall and F1 at the auto-accept threshold (overall, per relation, per category), how many true
 * pairs the candidate index proposed, the confusion between relations, and every mistake with the
 * matcher's reasons when asked:
 *   - the real set: pairs of markets the venues listed, in their own words (../shared/matching/,
 *     or MATCHING_REAL_PAIRS; read from there, never copied into the repository);
 *   - the team's set: eval/matching/pairs/*.json, written by us in the venues' formats.
 *
 * The markets of a set are put in ONE catalog per venue and matched the way the service matches
 * (candidate index, then full comparison), so a pair the index never proposes counts as a miss, and
 * an auto-accepted pair that no record labels counts against precision.
 *
 *   npm run eval:matching [-- --set real|team|both] [--dir eval/matching/pairs] [--file a.json ...]
 *                          [--errors] [--json] [--explain <pair id> ...]
 */
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { extractFeatures } from "../../src/matching/features";
import { AUTO_ACCEPT_CONFIDENCE } from "../../src/matching/matcher";
import { compareContracts } from "../../src/matching/relation";
import { type Cell, evaluate, loadPairs, PAIRS_DIR, type PairRecord, prf } from "./evaluate";
import { loadRealPairs, realPairsAvailable, realPairsPath } from "./real";

const { values } = parseArgs({
  options: {
    dir: { type: "string", default: PAIRS_DIR },
    file: { type: "string", multiple: true },
    errors: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
    explain: { type: "string", multiple: true },
    set: { type: "string", default: "both" },
  },
});

if (!["real", "team", "both"].includes(values.set ?? "both"))
  throw new Error(`--set must be real, team or both (got ${values.set})`);

const sets: Array<{ name: string; files: string[]; records: PairRecord[] }> = [];
const wanted = values.file?.length ? "team" : (values.set ?? "both");
if (wanted !== "team") {
  if (realPairsAvailable()) {
    const real = loadRealPairs();
    sets.push({ name: "real venue pairs", files: [real.file], records: real.records });
  } else if (wanted === "real") {
    throw new Error(`the real set is not at ${realPairsPath()}: set MATCHING_REAL_PAIRS to its pairs.jsonl`);
  } else {
    console.log(`(real set skipped: no ${realPairsPath()}; set MATCHING_REAL_PAIRS to its pairs.jsonl)\n`);
  }
}
if (wanted !== "real") {
  const dir = values.dir ?? PAIRS_DIR;
  const team = loadPairs(
    values.file?.length
      ? values.file.map((f) => resolve(f))
      : readdirSync(dir)
          .filter((f) => f.endsWith(".json"))
          .sort()
          .map((f) => join(dir, f)),
  );
  if (team.records.length === 0) throw new Error(`no pair records found in ${team.files.join(", ") || dir}`);
  sets.push({ name: "the team's pairs", ...team });
}

const json: Record<string, unknown> = {};
for (const set of sets) reportSet(set.name, set.files, set.records);
if (values.json) console.log(JSON.stringify(json, null, 2));

function reportSet(name: string, files: string[], records: PairRecord[]): void {
  const {
    markets,
    labelled,
    verdicts,
    elapsedMs,
    overall,
    byRelation,
    byCategory,
    relationCells,
    confusion,
    LABELS,
    mistakes,
    proposed,
    positives,
    positivesProposed,
    unlabelledAuto,
    strict,
  } = evaluate(records);

  // --explain <pair id>: both markets' features and the direct verdict, then stop.
  if (values.explain?.length) {
    for (const [, { record, pm, k }] of labelled) {
      if (!values.explain.includes(record.id)) continue;
      const fa = extractFeatures(markets.get(pm)!);
      const fb = extractFeatures(markets.get(k)!);
      const show = (f: ReturnType<typeof extractFeatures>) => ({
        question: f.market.question,
        eventTitle: f.market.eventTitle,
        yes: f.market.yesLabel,
        entities: [...f.subjectEntities],
        measure: f.measure?.text,
        measureFrom: f.measure?.from,
        date: f.date,
        closeDay: f.closeDay,
        observation: f.observation,
        sources: Object.fromEntries([...f.sources].map(([g, v]) => [g, [...v]])),
        basis: [...f.basis],
        stances: [...f.stances],
        yesSubject: f.yesSubject,
        participants: [...f.participants],
        voidPolicy: Object.fromEntries(f.voidPolicy),
        placeholderRules: f.placeholderRules,
      });
      console.log(record.id, record.label, record.why);
      console.dir(
        { polymarket: show(fa), kalshi: show(fb), verdict: compareContracts(fa, fb) },
        { depth: 5 },
      );
    }
    return;
  }

  const f = (x: number) => (Number.isNaN(x) ? "  -  " : x.toFixed(3));
  const row = (name: string, c: Cell) => {
    const m = prf(c);
    return `${name.padEnd(16)} ${f(m.precision)}     ${f(m.recall)}   ${f(m.f1)}   tp=${c.tp} fp=${c.fp} fn=${c.fn}`;
  };

  const counts = new Map<string, number>();
  for (const { record } of labelled.values()) counts.set(record.label, (counts.get(record.label) ?? 0) + 1);
  const negatives = [...labelled.values()].filter(
    ({ record }) => record.label !== "identity" && record.label !== "complement",
  ).length;

  if (values.json) {
    json[name] = {
      pairs: labelled.size,
      candidates_proposed: { true_pairs: positives, proposed: positivesProposed },
      threshold: AUTO_ACCEPT_CONFIDENCE,
      overall: prf(overall),
      by_relation: Object.fromEntries([...byRelation].map(([k, c]) => [k, prf(c)])),
      by_category: Object.fromEntries([...byCategory].map(([k, c]) => [k, prf(c)])),
      relations: Object.fromEntries([...relationCells].map(([k, c]) => [k, prf(c)])),
      confusion: Object.fromEntries([...confusion].map(([k, m]) => [k, Object.fromEntries(m)])),
    };
  } else {
    console.log(`== ${name} ==`);
    console.log(
      `Labelled pairs: ${labelled.size} from ${files.length} file(s); markets: ${markets.size}; hard negatives: ${negatives}`,
    );
    console.log(`Labels: ${[...counts].map(([k, n]) => `${k} ${n}`).join(", ")}`);
    console.log(
      `Matched ${markets.size} markets in ${elapsedMs.toFixed(0)} ms; ${verdicts.length} verdicts; labelled pairs proposed by the index: ${proposed}/${labelled.size}`,
    );
    console.log(
      `Candidate recall (true pairs, identity or complement, proposed by the index): ${positivesProposed}/${positives} = ${f(positivesProposed / Math.max(1, positives))}`,
    );
    console.log(
      `\nAt the auto-accept threshold (confidence ≥ ${AUTO_ACCEPT_CONFIDENCE}, identity or complement, no blockers):`,
    );
    console.log(`                 precision recall  F1`);
    console.log(row("overall", overall));
    for (const [k, c] of byRelation) console.log(row(k, c));
    console.log("\nPer category:");
    for (const [k, c] of [...byCategory].sort()) console.log(row(k, c));
    console.log("\nRelation predicted, any confidence (precision/recall of each relation):");
    for (const [k, c] of relationCells) console.log(row(k, c));
    console.log("\nConfusion (rows: label, columns: predicted relation):");
    console.log(`${"".padEnd(12)}${LABELS.map((l) => l.slice(0, 10).padStart(11)).join("")}`);
    for (const [label, m] of confusion)
      if ((counts.get(label) ?? 0) > 0)
        console.log(`${label.padEnd(12)}${LABELS.map((p) => String(m.get(p)).padStart(11)).join("")}`);
    if (strict.autoWithoutCaveats + strict.autoWithCaveats > 0)
      console.log(
        `\nSettlement-strict view (correct auto-verified pairs): ${strict.autoWithoutCaveats} without caveats, of which the strict label keeps ${strict.strictRight} as identity/complement; ${strict.autoWithCaveats} with caveats, of which the strict label calls ${strict.strictRelatedFlagged} related (the caveat flags a real edge difference)`,
      );
    if (unlabelledAuto.length > 0)
      console.log(
        `\nAuto-accepted pairs no record labels: ${unlabelledAuto.length} (counted as false positives)`,
      );
    if (values.errors) console.log(`\nMistakes (${mistakes.length}):\n${mistakes.join("\n")}`);
    else console.log(`\n${mistakes.length} mistakes; --errors lists them with the matcher's reasons.`);
    console.log("");
  }
}
