/**
 * The matching evaluation as a function: labelled pair records in, the matcher's figures out. Used
 * by `npm run eval:matching` (eval/matching/run.ts) and by the test that keeps the figures from
 * slipping (test/matching/eval.test.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isAutoAcceptable, matchCatalogs } from "../../src/matching/matcher";
import {
  inverseRelation,
  type MatchableMarket,
  type MatchVerdict,
  RELATIONS,
} from "../../src/matching/types";
import { eventInfo, normalizeMarket } from "../../src/venues/kalshi/normalize";
import type { VenueMarket } from "../../src/venues/model";
import { normalizeGammaMarket } from "../../src/venues/polymarket/normalize";

export const PAIRS_DIR = join(import.meta.dirname, "pairs");

export interface PairRecord {
  id: string;
  category: string;
  /**
   * The relation of Polymarket's YES to Kalshi's: one of RELATIONS (the team's set), or on the real
   * set `identity`, `complement`, `related` (same topic, another contract) or `unrelated`.
   */
  label: string;
  /** The real set's settlement-strict label: identity/complement only when no edge clause differs. */
  strict?: string;
  kind: string;
  why: string;
  polymarket: { event?: Record<string, unknown>; market: Record<string, unknown> };
  kalshi: { event?: Record<string, unknown>; market: Record<string, unknown> };
}

/** Every pair record of the given files (default: all of eval/matching/pairs). */
export function loadPairs(files?: string[]): { files: string[]; records: PairRecord[] } {
  const list = files?.length
    ? files
    : readdirSync(PAIRS_DIR)
        .filter((f) => f.endsWith(".json"))
        .sort()
        .map((f) => join(PAIRS_DIR, f));
  const records: PairRecord[] = [];
  for (const file of list) {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as PairRecord[];
    if (!Array.isArray(parsed)) throw new Error(`${file}: expected a JSON array of pair records`);
    records.push(...parsed);
  }
  return { files: list, records };
}

const report = () => {};
const now = "2026-11-24T00:00:00Z";

export function matchable(m: VenueMarket, eventTitle: string | null): MatchableMarket {
  return {
    id: m.id,
    venue: m.venue,
    question: m.question,
    eventTitle,
    rules: m.rules,
    settlementSource: m.settlementSource,
    closeTime: m.closeTime,
    yesLabel: m.outcomes.yes.label,
    noLabel: m.outcomes.no.label,
    venueMarketId: m.venueMarketId,
  };
}

/** Venue JSON -> our model through the same normalisers the adapters use. */
export function readPair(r: PairRecord): { pm: MatchableMarket; k: MatchableMarket } {
  const pmEventTitle =
    (r.polymarket.event?.title as string | undefined) ??
    (r.polymarket.market.events as Array<{ title?: string }> | undefined)?.[0]?.title ??
    null;
  const pm = normalizeGammaMarket(r.polymarket.market, { now, report });
  const info = eventInfo(r.kalshi.event);
  const k = normalizeMarket(r.kalshi.market, { now, report }, info);
  return { pm: matchable(pm, pmEventTitle), k: matchable(k, info?.title ?? null) };
}

export type Cell = { tp: number; fp: number; fn: number };

const ratio = (a: number, b: number) => (b === 0 ? Number.NaN : a / b);
/** Precision, recall and F1 of a cell (NaN where undefined). */
export function prf(c: Cell) {
  const precision = ratio(c.tp, c.tp + c.fp);
  const recall = ratio(c.tp, c.tp + c.fn);
  const f1 =
    Number.isNaN(precision) || Number.isNaN(recall) || precision + recall === 0
      ? Number.NaN
      : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1, ...c };
}

export function evaluate(records: PairRecord[]) {
  const markets = new Map<string, MatchableMarket>();
  const labelled = new Map<string, { record: PairRecord; pm: string; k: string }>();
  for (const r of records) {
    const { pm, k } = readPair(r);
    markets.set(pm.id, pm);
    markets.set(k.id, k);
    labelled.set(`${pm.id} ${k.id}`, { record: r, pm: pm.id, k: k.id });
  }

  const started = performance.now();
  const verdicts = matchCatalogs([...markets.values()]);
  const elapsedMs = performance.now() - started;

  /** Verdicts read from the Polymarket side, keyed "pm k". */
  const predicted = new Map<string, MatchVerdict>();
  for (const v of verdicts) {
    const aIsPm = markets.get(v.marketA)?.venue === "polymarket";
    const oriented: MatchVerdict = aIsPm
      ? v
      : { ...v, marketA: v.marketB, marketB: v.marketA, relation: inverseRelation(v.relation) };
    predicted.set(`${oriented.marketA} ${oriented.marketB}`, oriented);
  }

  type Cell = { tp: number; fp: number; fn: number };
  const cell = (): Cell => ({ tp: 0, fp: 0, fn: 0 });
  const overall = cell();
  const byRelation = new Map<string, Cell>(["identity", "complement"].map((r) => [r, cell()]));
  const byCategory = new Map<string, Cell>();
  const relationCells = new Map<string, Cell>(RELATIONS.map((r) => [r, cell()]));
  const LABELS = [...RELATIONS, "none"] as const;
  const rowLabels = [...new Set([...RELATIONS, ...records.map((r) => r.label)])];
  const confusion = new Map<string, Map<string, number>>(
    rowLabels.map((l) => [l, new Map(LABELS.map((p) => [p, 0]))]),
  );
  const mistakes: string[] = [];
  let proposed = 0;
  /** True pairs (identity, complement) and how many of them the index proposed. */
  let positives = 0;
  let positivesProposed = 0;
  /**
   * The settlement-strict view (records with a strict label): auto-verified pairs without caveats,
   * and how many of them the strict label also calls identity or complement.
   */
  const strict = { autoWithoutCaveats: 0, strictRight: 0, autoWithCaveats: 0, strictRelatedFlagged: 0 };

  for (const [key, { record }] of labelled) {
    const v = predicted.get(key);
    if (v) proposed++;
    const rel = v?.relation ?? "none";
    confusion.get(record.label)!.set(rel, confusion.get(record.label)!.get(rel)! + 1);
    for (const r of RELATIONS) {
      const c = relationCells.get(r)!;
      if (rel === r && record.label === r) c.tp++;
      else if (rel === r) c.fp++;
      else if (record.label === r) c.fn++;
    }
    const auto = v !== undefined && isAutoAcceptable(v);
    const positive = record.label === "identity" || record.label === "complement";
    if (auto && record.strict !== undefined && rel === record.label) {
      const strictPositive = record.strict === "identity" || record.strict === "complement";
      if (v.caveats.length === 0) {
        strict.autoWithoutCaveats++;
        if (strictPositive) strict.strictRight++;
      } else {
        strict.autoWithCaveats++;
        if (!strictPositive) strict.strictRelatedFlagged++;
      }
    }
    if (positive) {
      positives++;
      if (v) positivesProposed++;
    }
    const cat = byCategory.get(record.category) ?? cell();
    byCategory.set(record.category, cat);
    const cells = [overall, cat, ...(positive ? [byRelation.get(record.label)!] : [])];
    const predictedCell = auto ? byRelation.get(rel) : undefined;
    if (auto && rel === record.label) for (const c of cells) c.tp++;
    else {
      if (auto) {
        overall.fp++;
        cat.fp++;
        if (predictedCell) predictedCell.fp++;
      }
      if (positive) for (const c of cells) c.fn++;
    }
    const wrong = (auto && rel !== record.label) || (positive && !(auto && rel === record.label));
    if (wrong)
      mistakes.push(
        `${record.id} [${record.kind}] label=${record.label} predicted=${rel}${v ? ` conf=${v.confidence}${auto ? " AUTO" : ""}` : ""}\n    ${record.why}\n    ${v ? [...v.reasons, ...v.blockers.map((b) => `BLOCKER: ${b}`)].join("\n    ") : "(never proposed as a candidate)"}`,
      );
  }

  // Auto-accepted pairs nobody labelled: counted as false positives (the set's markets are all known).
  const unlabelledAuto = [...predicted.entries()].filter(
    ([key, v]) => !labelled.has(key) && isAutoAcceptable(v),
  );
  for (const [, v] of unlabelledAuto) {
    overall.fp++;
    byRelation.get(v.relation)!.fp++;
    mistakes.push(
      `unlabelled pair auto-accepted as ${v.relation} (conf ${v.confidence}): ${v.marketA} ~ ${v.marketB}\n    ${v.reasons.join("\n    ")}`,
    );
  }

  return {
    markets,
    labelled,
    verdicts,
    predicted,
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
  };
}
