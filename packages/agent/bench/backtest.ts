/**
 * bench/agent, backtest half: replay speed of `backtest()` in candles/s, as a ratio against a
 * baseline measured in the same run: a plain loop over the same candle arrays computing the same
 * equity sum (last close per market, cash plus every position at its close at each step). Target:
 * >= 1,000,000 candles/s.
 *
 * Candles are generated once, deterministically (seeded PRNG): 50 markets × 100,000 one-minute
 * candles (5,000,000), a random walk per market. The strategy is trivial: it buys 10 contracts of
 * every market at the start (market orders, so every step values 50 positions) and then only
 * looks at each step's candles. The run's equity curve must match the baseline's.
 *
 *   node --import tsx packages/agent/bench/backtest.ts [--candles 5000000] [--markets 50] [--rounds 5]
 */

import { seededRandom } from "@crossbook/fakes/random";
import { backtest, CandleTape, type StrategyContext } from "../src/backtest/index";

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

const CANDLES = arg("candles", 5_000_000);
const MARKETS = arg("markets", 50);
const ROUNDS = arg("rounds", 5);
const TARGET = 1_000_000;
const CASH = 1_000_000;
const SIZE = 10;
const MICROS = 1_000_000;
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

function generate(): CandleTape {
  const steps = Math.ceil(CANDLES / MARKETS);
  const n = steps * MARKETS;
  const random = seededRandom(20260101);
  const markets = Array.from({ length: MARKETS }, (_, i) => `polymarket:bench-${String(i).padStart(3, "0")}`);
  const columns = {
    markets,
    time: new Float64Array(n),
    market: new Uint32Array(n),
    open: new Float64Array(n),
    high: new Float64Array(n),
    low: new Float64Array(n),
    close: new Float64Array(n),
    volume: new Float64Array(n),
  };
  const price = new Float64Array(MARKETS).map(() => 0.2 + random() * 0.6);
  const tick = (x: number) => Math.round(x * 1000) / 1000;
  let row = 0;
  for (let s = 0; s < steps; s++) {
    const t = T0 + s * MINUTE;
    for (let m = 0; m < MARKETS; m++) {
      const open = price[m]!;
      const close = tick(Math.min(0.99, Math.max(0.01, open + (random() - 0.5) * 0.01)));
      price[m] = close;
      columns.time[row] = t;
      columns.market[row] = m;
      columns.open[row] = open;
      columns.high[row] = tick(Math.min(0.99, Math.max(open, close) + random() * 0.003));
      columns.low[row] = tick(Math.max(0.01, Math.min(open, close) - random() * 0.003));
      columns.close[row] = close;
      columns.volume[row] = Math.floor(random() * 1000);
      row++;
    }
  }
  return new CandleTape(columns);
}

/** The floor: one pass over the same arrays, the same equity at each step, no strategy or orders. */
function baseline(tape: CandleTape): { seconds: number; checksum: number; points: number } {
  const started = performance.now();
  const { time, market, open, close } = tape;
  const n = tape.length;
  const count = tape.markets.length;
  const last = new Float64Array(count);
  const size = new Float64Array(count);
  let cash = CASH * MICROS;
  // Positions bought at each market's first open (the strategy's start-of-run market orders).
  for (let i = 0; i < count && i < n; i++) {
    const price = Math.round(open[i]! * MICROS);
    cash -= Math.round((price * SIZE * MICROS) / MICROS);
    size[market[i]!] = SIZE * MICROS;
  }
  const eqTime: number[] = [];
  const eqValue: number[] = [];
  let i = 0;
  while (i < n) {
    const t = time[i]!;
    do {
      last[market[i]!] = close[i]!;
      i++;
    } while (i < n && time[i] === t);
    let value = cash;
    for (let m = 0; m < count; m++) value += size[m]! * last[m]!;
    eqTime.push(t);
    eqValue.push(value / MICROS);
  }
  const seconds = (performance.now() - started) / 1000;
  let checksum = 0;
  for (const v of eqValue) checksum += v;
  return { seconds, checksum, points: eqValue.length };
}

async function engine(tape: CandleTape): Promise<{ seconds: number; checksum: number; points: number }> {
  let seen = 0;
  const strategy = {
    onStart(ctx: StrategyContext) {
      for (const id of tape.markets) ctx.order({ market_id: id, side: "buy", type: "market", amount: SIZE });
    },
    onCandle(ctx: StrategyContext) {
      seen += ctx.candles.length;
    },
  };
  const started = performance.now();
  const result = await backtest({
    strategy,
    markets: tape.markets,
    interval: "1m",
    from: tape.time[0]!,
    to: tape.time[tape.length - 1]! + MINUTE,
    initialCash: CASH,
    // The baseline pays no fees, so neither does the run (the default schedules would charge the
    // 50 start-of-run buys and the equity curves would differ).
    fees: { polymarket: false },
    source: tape,
    progressLog: false,
  });
  const seconds = (performance.now() - started) / 1000;
  if (seen !== tape.length) throw new Error(`strategy saw ${seen} candles of ${tape.length}`);
  if (result.trades.length !== tape.markets.length)
    throw new Error(`${result.trades.length} fills, expected ${tape.markets.length}`);
  let checksum = 0;
  for (const v of result.equityCurve.equity) checksum += v;
  return { seconds, checksum, points: result.equityCurve.equity.length };
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const genStart = performance.now();
const tape = generate();
console.log(
  `backtest bench: ${fmt(tape.length)} candles (${MARKETS} markets × ${fmt(tape.length / MARKETS)} 1m candles), ` +
    `generated in ${((performance.now() - genStart) / 1000).toFixed(2)} s; node ${process.version}`,
);

// Warm-up (JIT) on both paths, then paired rounds.
baseline(tape);
await engine(tape);
const baseRates: number[] = [];
const engineRates: number[] = [];
const ratios: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const b = baseline(tape);
  const e = await engine(tape);
  if (b.points !== e.points || Math.abs(b.checksum - e.checksum) > 1e-6 * Math.abs(b.checksum)) {
    throw new Error(
      `equity curves differ: baseline ${b.points} points sum ${b.checksum}, backtest ${e.points} sum ${e.checksum}`,
    );
  }
  const baseRate = tape.length / b.seconds;
  const engineRate = tape.length / e.seconds;
  baseRates.push(baseRate);
  engineRates.push(engineRate);
  ratios.push(engineRate / baseRate);
  console.log(
    `round ${round}: baseline ${fmt(baseRate)} candles/s, backtest ${fmt(engineRate)} candles/s (${e.seconds.toFixed(3)} s), ratio ${(engineRate / baseRate).toFixed(3)}`,
  );
}
const rate = median(engineRates);
console.log(
  `backtest: ${fmt(rate)} candles/s (median of ${ROUNDS}); equity curve ${fmt(tape.length / MARKETS)} points, same as the baseline`,
);
console.log(
  `baseline (plain loop, same equity sum): ${fmt(median(baseRates))} candles/s (median of ${ROUNDS})`,
);
console.log(`ratio ${median(ratios).toFixed(3)} of the baseline (median of ${ROUNDS} paired runs)`);
console.log(
  `throughput ${fmt(rate)} candles/s (target >= ${fmt(TARGET)}) ${rate >= TARGET ? "PASS" : "MISS"}`,
);
