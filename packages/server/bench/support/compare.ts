/**
 * Comparing crossbook with its baseline in the stream benches (bench/stream, bench/account-stream):
 * the runs a bench asks for, in alternating pairs, and the medians and verdicts its summary prints.
 */
import { arg } from "./child";
import type { Side } from "./coordinator";

export interface Pair<Result> {
  base: Result;
  ours: Result;
}

/**
 * The runs asked for: with `--only crossbook|baseline`, that side once (and no pairs returned);
 * otherwise `--pairs N` (default 1) baseline/crossbook pairs. Pairs alternate which side runs
 * first, so a neighbour's load drifting during the run does not always land on the same side; the
 * summary takes medians over pairs. Each run is printed with `print` when it ends.
 */
export async function runSides<Result>(
  run: (side: Side) => Promise<Result>,
  print: (side: Side, result: Result) => void,
): Promise<Array<Pair<Result>>> {
  const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
  if (only === "crossbook" || only === "baseline") {
    print(only, await run(only));
    return [];
  }
  const pairs: Array<Pair<Result>> = [];
  for (let i = 0; i < arg("pairs", 1); i++) {
    const order: Side[] = i % 2 === 0 ? ["baseline", "crossbook"] : ["crossbook", "baseline"];
    const results: Partial<Record<Side, Result>> = {};
    for (const side of order) {
      results[side] = await run(side);
      print(side, results[side]);
    }
    pairs.push({ base: results.baseline!, ours: results.crossbook! });
  }
  return pairs;
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * What every stream bench's summary compares: the throughput ratio (crossbook's messages/s over the
 * baseline's in each pair) and crossbook's latency, as medians over the pairs; `of` says how many
 * pairs (empty for one).
 */
export function pairMedians(pairs: Array<Pair<{ messagesPerSecond: number; p50: number; p99: number }>>) {
  return {
    ratio: median(pairs.map((p) => p.ours.messagesPerSecond / p.base.messagesPerSecond)),
    p50: median(pairs.map((p) => p.ours.p50)),
    p99: median(pairs.map((p) => p.ours.p99)),
    of: pairs.length > 1 ? ` (median of ${pairs.length} pairs)` : "",
  };
}

/** A target's verdict, as the summaries print it. */
export const pass = (ok: boolean) => (ok ? "PASS" : "BELOW TARGET");

/** Milliseconds as the summaries print them: whole from 100, else one decimal. */
export const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
