/**
 * bench/engine: the sandbox matching engine (SimBook) on one core — throughput over a realistic op
 * stream and per-op latency — as a ratio against a baseline measured in the same run: the same op
 * stream applied to a plain Map (set on add, delete on cancel and on every order a trade filled),
 * the cost floor of bookkeeping the same refs. Targets: >= 2,000,000 ops/s and p99 <= 5 µs.
 *
 * The stream is generated once, deterministically (seeded PRNG), by driving a SimBook: ~60% limit
 * adds near a drifting mid, ~30% cancels of random resting orders, ~10% real prints that reach a
 * few levels into one side, on a book held at about 10,000 resting orders (maxTick 1000, 5 owners,
 * sizes and queues in micro-units). Each measured run replays it on a fresh book after replaying
 * the untimed prefill that builds the steady-state book.
 *
 *   npm run bench:engine [-- --ops 5000000 --latency-ops 1000000 --rounds 5 --resting 10000 --ref-base 0]
 */

import { seededRandom } from "@crossbook/fakes/random";
import { ASK, BID, type EngineSide, SimBook } from "../src/sandbox/engine";

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

const OPS = arg("ops", 5_000_000);
const LATENCY_OPS = arg("latency-ops", 1_000_000);
const ROUNDS = arg("rounds", 5);
const RESTING = arg("resting", 10_000);
/** First order ref - 1; refs at or past 2^31 are heap numbers, not small integers, to V8. */
const REF_BASE = arg("ref-base", 0);
const MAX_TICK = 1000;
const OWNERS = 5;
const MICRO = 1_000_000;
const TARGET_OPS = 2_000_000;
const TARGET_P99_NS = 5_000;

const ADD = 0;
const CANCEL = 1;
const TRADE = 2;

interface Stream {
  /** Ops before `start` build the book and are never timed. */
  start: number;
  length: number;
  kind: Uint8Array;
  ref: Float64Array;
  owner: Uint8Array;
  side: Uint8Array;
  tick: Int32Array;
  size: Float64Array;
  queue: Float64Array;
  /** Refs each trade filled completely (for the baseline): fillRefs[fillStart[i] .. fillStart[i+1]). */
  fillStart: Int32Array;
  fillRefs: Float64Array;
  counts: [adds: number, cancels: number, trades: number, fills: number];
}

function generate(prefill: number, ops: number, seed: number): Stream {
  const length = prefill + ops;
  const s: Stream = {
    start: prefill,
    length,
    kind: new Uint8Array(length),
    ref: new Float64Array(length),
    owner: new Uint8Array(length),
    side: new Uint8Array(length),
    tick: new Int32Array(length),
    size: new Float64Array(length),
    queue: new Float64Array(length),
    fillStart: new Int32Array(length + 1),
    fillRefs: new Float64Array(0),
    counts: [0, 0, 0, 0],
  };
  const rnd = seededRandom(seed);
  const book = new SimBook(MAX_TICK);
  // Resting refs, for picking a random one to cancel in O(1) (swap-remove).
  const live: number[] = [];
  const where = new Map<number, number>();
  const forget = (ref: number) => {
    const i = where.get(ref)!;
    const last = live.pop()!;
    if (last !== ref) {
      live[i] = last;
      where.set(last, i);
    }
    where.delete(ref);
  };
  let fillRefs = new Float64Array(1 << 20);
  let fillCount = 0;
  const onFill = (ref: number) => {
    if (!book.has(ref)) {
      if (fillCount === fillRefs.length) {
        const bigger = new Float64Array(fillRefs.length * 2);
        bigger.set(fillRefs);
        fillRefs = bigger;
      }
      fillRefs[fillCount++] = ref;
      forget(ref);
    }
  };
  let nextRef = REF_BASE + 1;
  let mid = 500;
  for (let i = 0; i < length; i++) {
    s.fillStart[i] = fillCount;
    if (rnd() < 0.001) mid = Math.min(900, Math.max(100, mid + (rnd() < 0.5 ? -1 : 1)));
    const roll = rnd();
    let kind = i < prefill ? ADD : roll < 0.6 ? ADD : roll < 0.9 ? CANCEL : TRADE;
    // Hold the book near its steady size: a surplus turns adds into cancels, a deficit the reverse.
    if (kind === ADD && book.size > RESTING * 1.05) kind = CANCEL;
    else if (kind === CANCEL && (book.size < RESTING * 0.95 || live.length === 0)) kind = ADD;
    s.kind[i] = kind;
    if (kind === ADD) {
      const side: EngineSide = rnd() < 0.5 ? BID : ASK;
      // Most adds at or near the touch, a tail a few dozen ticks deep.
      const depth = Math.min(60, Math.floor(-Math.log(1 - rnd()) * 6));
      const tick = side === BID ? mid - 1 - depth : mid + 1 + depth;
      const ref = nextRef++;
      const owner = Math.floor(rnd() * OWNERS);
      const size = (1 + Math.floor(rnd() * 100)) * MICRO;
      const queue = Math.floor(rnd() * rnd() * 2_000) * MICRO;
      book.add(ref, owner, side, tick, size, queue);
      where.set(ref, live.length);
      live.push(ref);
      s.ref[i] = ref;
      s.owner[i] = owner;
      s.side[i] = side;
      s.tick[i] = tick;
      s.size[i] = size;
      s.queue[i] = queue;
      s.counts[0]++;
    } else if (kind === CANCEL) {
      const ref = live[Math.floor(rnd() * live.length)]!;
      book.cancel(ref);
      forget(ref);
      s.ref[i] = ref;
      s.counts[1]++;
    } else {
      // A print on one side: at the touch, or having swept up to 3 levels through it.
      const side: EngineSide = rnd() < 0.5 ? BID : ASK;
      const best = book.best(side);
      const through = [0, 0, 0, 1, 1, 2, 3][Math.floor(rnd() * 7)]!;
      const base = best === -1 ? mid : best;
      const tick = Math.min(MAX_TICK - 1, Math.max(1, side === BID ? base - through : base + through));
      const size = (1 + Math.floor(rnd() * rnd() * 300)) * MICRO;
      s.counts[3] += book.trade(side, tick, size, onFill);
      s.side[i] = side;
      s.tick[i] = tick;
      s.size[i] = size;
      s.counts[2]++;
    }
  }
  s.fillStart[length] = fillCount;
  s.fillRefs = fillRefs.subarray(0, fillCount);
  return s;
}

let fills = 0;
function countFill(_ref: number, _owner: number, _tick: number, _size: number): void {
  fills++;
}

function applyEngine(book: SimBook, s: Stream, i: number): void {
  const kind = s.kind[i]!;
  if (kind === ADD) {
    book.add(s.ref[i]!, s.owner[i]!, s.side[i] as EngineSide, s.tick[i]!, s.size[i]!, s.queue[i]!);
  } else if (kind === CANCEL) {
    book.cancel(s.ref[i]!);
  } else {
    book.trade(s.side[i] as EngineSide, s.tick[i]!, s.size[i]!, countFill);
  }
}

function applyBaseline(map: Map<number, number>, s: Stream, i: number): void {
  const kind = s.kind[i]!;
  if (kind === ADD) {
    map.set(s.ref[i]!, s.size[i]!);
  } else if (kind === CANCEL) {
    map.delete(s.ref[i]!);
  } else {
    for (let f = s.fillStart[i]!, end = s.fillStart[i + 1]!; f < end; f++) map.delete(s.fillRefs[f]!);
  }
}

const BATCH = 100_000;

/** Ops per second over the timed part of the stream, timed in batches (sum of batch times). */
function throughput<T>(make: () => T, apply: (target: T, s: Stream, i: number) => void, s: Stream): number {
  const target = make();
  for (let i = 0; i < s.start; i++) apply(target, s, i);
  let elapsed = 0n;
  for (let from = s.start; from < s.length; from += BATCH) {
    const to = Math.min(s.length, from + BATCH);
    const t0 = process.hrtime.bigint();
    for (let i = from; i < to; i++) apply(target, s, i);
    elapsed += process.hrtime.bigint() - t0;
  }
  return ((s.length - s.start) / Number(elapsed)) * 1e9;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** Per-op latency in ns (each op timed alone, sorted, also by kind), and an empty hrtime pair's. */
function latency(s: Stream, ops: number): { ops: Float64Array; byKind: Float64Array[]; timer: Float64Array } {
  const book = new SimBook(MAX_TICK);
  for (let i = 0; i < s.start; i++) applyEngine(book, s, i);
  const n = Math.min(ops, s.length - s.start);
  const samples = new Float64Array(n);
  const timer = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const t0 = process.hrtime.bigint();
    const t1 = process.hrtime.bigint();
    timer[k] = Number(t1 - t0);
  }
  for (let k = 0; k < n; k++) {
    const t0 = process.hrtime.bigint();
    applyEngine(book, s, s.start + k);
    const t1 = process.hrtime.bigint();
    samples[k] = Number(t1 - t0);
  }
  const kinds = s.kind.subarray(s.start, s.start + n);
  const byKind = [ADD, CANCEL, TRADE].map((kind) => samples.filter((_, k) => kinds[k] === kind).sort());
  return { ops: samples.sort(), byKind, timer: timer.sort() };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

const generatedAt = performance.now();
const stream = generate(RESTING, OPS, 20_260_101);
const [adds, cancels, trades, fillCount] = stream.counts;
const timed = stream.length - stream.start;
const timedAdds = stream.kind.subarray(stream.start).filter((k) => k === ADD).length;
const timedCancels = stream.kind.subarray(stream.start).filter((k) => k === CANCEL).length;
const timedTrades = timed - timedAdds - timedCancels;
console.log(
  `stream: ${fmt(timed)} timed ops after a ${fmt(stream.start)}-add prefill (${((performance.now() - generatedAt) / 1000).toFixed(1)} s to generate)`,
);
console.log(
  `  mix: ${((timedAdds / timed) * 100).toFixed(1)}% adds, ${((timedCancels / timed) * 100).toFixed(1)}% cancels, ${((timedTrades / timed) * 100).toFixed(1)}% trades; ` +
    `${fmt(fillCount)} fills in ${fmt(trades)} trades (${(fillCount / trades).toFixed(2)} per trade); ${fmt(adds)} adds, ${fmt(cancels)} cancels in all`,
);

// Warm-up: let V8 optimize both paths on a full replay before anything is timed.
throughput(() => new SimBook(MAX_TICK), applyEngine, stream);
throughput(() => new Map<number, number>(), applyBaseline, stream);

const engineRates: number[] = [];
const baseRates: number[] = [];
const ratios: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  fills = 0;
  const base = throughput(() => new Map<number, number>(), applyBaseline, stream);
  const engine = throughput(() => new SimBook(MAX_TICK), applyEngine, stream);
  if (fills !== fillCount) throw new Error(`replay diverged: ${fills} fills, generation had ${fillCount}`);
  baseRates.push(base);
  engineRates.push(engine);
  ratios.push(engine / base);
  console.log(
    `round ${round}: Map baseline ${fmt(base)} ops/s, SimBook ${fmt(engine)} ops/s, ratio ${(engine / base).toFixed(3)}`,
  );
}

const lat = latency(stream, LATENCY_OPS);
const overhead = percentile(lat.timer, 0.5);
const net = (p: number, samples = lat.ops) => Math.max(0, percentile(samples, p) - overhead);
const rate = median(engineRates);
const p99 = net(0.99);
const name = "bench/engine".padEnd(13);
console.log(
  `timer: empty hrtime.bigint() pair p50 ${fmt(overhead)} ns, p99 ${fmt(percentile(lat.timer, 0.99))} ns (subtracted below)`,
);
console.log(
  `${name} latency over ${fmt(lat.ops.length)} ops, each timed alone: p50 ${fmt(net(0.5))} ns, p99 ${fmt(p99)} ns, p99.9 ${fmt(net(0.999))} ns, max ${fmt(net(1))} ns`,
);
lat.byKind.forEach((samples, kind) => {
  console.log(
    `${name}   ${["add   ", "cancel", "trade "][kind]} (${fmt(samples.length)}): p50 ${fmt(net(0.5, samples))} ns, p99 ${fmt(net(0.99, samples))} ns, p99.9 ${fmt(net(0.999, samples))} ns`,
  );
});
console.log(`${name} SimBook: ${fmt(rate)} ops/s (median of ${ROUNDS})`);
console.log(`${name} Map baseline, same refs: ${fmt(median(baseRates))} ops/s (median of ${ROUNDS})`);
console.log(
  `${name} ratio ${median(ratios).toFixed(3)} of the Map baseline (median of ${ROUNDS} paired runs)`,
);
const passRate = rate >= TARGET_OPS;
const passP99 = p99 <= TARGET_P99_NS;
console.log(
  `${name} throughput ${fmt(rate)} ops/s (target >= ${fmt(TARGET_OPS)}) ${passRate ? "PASS" : "FAIL"}; ` +
    `p99 ${(p99 / 1000).toFixed(2)} µs (target <= ${TARGET_P99_NS / 1000} µs) ${passP99 ? "PASS" : "FAIL"}`,
);
if (!passRate || !passP99) process.exitCode = 1;
