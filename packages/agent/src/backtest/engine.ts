/**
 * The replay: candles in time order through the strategy, by the rules in the README. This module
 * drives the run (steps, resolutions, the strategy's callbacks, the result); what an order does is
 * orders.ts, what it costs and what the account holds is accounting.ts, and the equity curve,
 * forecasts and metrics are scoring.ts. The hot loop reads typed arrays and allocates nothing per
 * candle.
 */
import { Ledger, usd } from "./accounting.js";
import { Context, type ReplayState, TapeCandle } from "./context.js";
import { feeRule, MICROS, toMicros } from "./fees.js";
import { OrderBook } from "./orders.js";
import { createProgress } from "./progress.js";
import { Scorecard } from "./scoring.js";
import { INTERVAL_MS } from "./sources.js";
import { CandleTape, isoOf, timeOf } from "./tape.js";
import type {
  BacktestOptions,
  BacktestResult,
  CandleRequest,
  MarketCandle,
  Outcome,
  ResolutionEvent,
  Strategy,
} from "./types.js";

/** Parses and checks the run's options (everything but the candles). */
function settings(options: BacktestOptions) {
  if (!options || typeof options !== "object") throw new TypeError("backtest: options required");
  const { strategy, markets, interval, initialCash } = options;
  if (!strategy || typeof strategy.onCandle !== "function") {
    throw new TypeError("backtest: strategy.onCandle must be a function");
  }
  if (!Array.isArray(markets) || markets.length === 0 || !markets.every((m) => typeof m === "string" && m)) {
    throw new TypeError("backtest: markets must be a non-empty list of market ids");
  }
  if (new Set(markets).size !== markets.length) throw new TypeError("backtest: markets has duplicates");
  if (!Object.hasOwn(INTERVAL_MS, interval)) {
    throw new TypeError(`backtest: interval must be one of ${Object.keys(INTERVAL_MS).join(", ")}`);
  }
  const from = timeOf(options.from);
  const to = timeOf(options.to);
  if (!Number.isFinite(from) || !Number.isFinite(to))
    throw new TypeError("backtest: from and to must be ISO 8601, epoch ms or Dates");
  if (!(from < to)) throw new RangeError("backtest: from must be before to");
  if (!(Number.isFinite(initialCash) && initialCash > 0))
    throw new RangeError("backtest: initialCash must be > 0");
  const slippage = options.slippage ?? 0;
  if (typeof slippage === "number" && !(Number.isFinite(slippage) && slippage >= 0)) {
    throw new RangeError("backtest: slippage must be a fraction ≥ 0");
  }
  const indexOf = new Map(markets.map((id, i) => [id, i]));
  const resolutions = (options.resolutions ?? []).map((r) => {
    const m = indexOf.get(r.market_id);
    if (m === undefined)
      throw new RangeError(`backtest: resolution of ${r.market_id}, which is not in markets`);
    if (r.outcome !== "yes" && r.outcome !== "no")
      throw new RangeError(`backtest: resolution of ${r.market_id}: outcome must be yes or no`);
    const at = timeOf(r.at);
    if (!Number.isFinite(at))
      throw new RangeError(`backtest: resolution of ${r.market_id}: at is not a time`);
    return { m, outcome: r.outcome, at };
  });
  if (new Set(resolutions.map((r) => r.m)).size !== resolutions.length) {
    throw new RangeError("backtest: a market is resolved twice");
  }
  resolutions.sort((a, b) => a.at - b.at || a.m - b.m);
  // Only the run's markets, in their order: the result stays byte-identical for the same inputs.
  const titles = Object.fromEntries(
    markets
      .map((id) => [id, options.titles?.[id]] as const)
      .filter((entry): entry is readonly [string, string] => typeof entry[1] === "string" && entry[1] !== ""),
  );
  return {
    strategy,
    markets: [...markets],
    interval,
    from,
    to,
    initialCash,
    slippage,
    indexOf,
    resolutions,
    titles,
  };
}

function* inRange(candles: Iterable<MarketCandle>, from: number, to: number): Iterable<MarketCandle> {
  for (const c of candles) {
    const t = timeOf(c.timestamp);
    if (t >= from && t < to) yield c;
  }
}

async function loadTape(source: BacktestOptions["source"], request: CandleRequest): Promise<CandleTape> {
  if (source === undefined || source === null) {
    throw new TypeError(
      "backtest: no candles: pass `source` (fileSource(path), historySource(fetchHistory), a CandleTape or an array of candles)",
    );
  }
  if (source instanceof CandleTape) return source.select(request.markets, request.from, request.to);
  let loaded: Iterable<MarketCandle> | CandleTape;
  if (typeof (source as { load?: unknown }).load === "function") {
    loaded = await (
      source as { load: (r: CandleRequest) => Promise<Iterable<MarketCandle> | CandleTape> }
    ).load(request);
  } else if (typeof (source as Iterable<MarketCandle>)[Symbol.iterator] === "function") {
    loaded = source as Iterable<MarketCandle>;
  } else {
    throw new TypeError("backtest: source must be a CandleSource, a CandleTape or an iterable of candles");
  }
  if (loaded instanceof CandleTape) return loaded.select(request.markets, request.from, request.to);
  return CandleTape.fromCandles(inRange(loaded, request.from, request.to), request.markets);
}

/**
 * Replays candles through a strategy and returns trades, rejected and cancelled orders, the
 * equity curve and the metrics. Deterministic: the same inputs give a byte-identical
 * `JSON.stringify(result)`.
 *
 * Fill rules: an order can fill from the next candle of its market on; a limit buy fills when a
 * candle's low (of its outcome) ≤ its price, a sell when the high ≥ its price, at the limit
 * price, in full; a market order fills at the next candle's open moved against it by
 * `slippage` (rejected beyond its `max_slippage`, default 5 %); NO is priced at 1 − YES; fees by
 * venue (makers free unless `fees.makersPay`); cash never goes negative; sells need contracts
 * held; winning contracts pay 1 at resolution; open orders are cancelled at the end.
 *
 * @example
 * const result = await backtest({
 *   strategy: { onCandle(ctx) { if (ctx.candle && ctx.candle.close < 0.3) ctx.order({ market_id: ctx.candle.market_id, side: "buy", type: "market", amount: 10 }); } },
 *   markets: ["kalshi:FED-26DEC-T4.00"], interval: "1h", from: "2026-01-01", to: "2026-03-01",
 *   initialCash: 1000, fees: {}, slippage: 0.01, source: fileSource("candles.jsonl"),
 *   resolutions: [{ market_id: "kalshi:FED-26DEC-T4.00", outcome: "no", at: "2026-02-20T19:00:00Z" }],
 * });
 * console.log(result.metrics.totalReturn, result.metrics.sharpe);
 */
export async function backtest(options: BacktestOptions): Promise<BacktestResult> {
  const s = settings(options);
  const tape = await loadTape(options.source, {
    markets: s.markets,
    interval: s.interval,
    from: s.from,
    to: s.to,
  });
  return new Replay(options, s, tape).run();
}

/** One run: the clock, the step's candles, and the resolutions still to apply. */
class Replay implements ReplayState {
  readonly strategy: Strategy;
  readonly indexOf: Map<string, number>;
  readonly resolutionQueue: Array<{ m: number; outcome: Outcome; at: number }>;
  nextResolution = 0;
  /** Per market: non-zero once it resolved (its orders refused, its candles skipped). */
  readonly resolved: Uint8Array;
  readonly ledger: Ledger;
  readonly book: OrderBook;
  readonly scores: Scorecard;
  readonly views: TapeCandle[];
  readonly stepOf: Float64Array;
  readonly stepCandles: TapeCandle[] = [];
  readonly resolutionsApplied: BacktestResult["resolutions"] = [];
  step = 0;
  now: number;
  readonly ctx: Context;

  constructor(
    readonly options: BacktestOptions,
    readonly s: ReturnType<typeof settings>,
    readonly tape: CandleTape,
  ) {
    const n = s.markets.length;
    this.strategy = s.strategy;
    this.indexOf = s.indexOf;
    this.resolutionQueue = s.resolutions;
    this.now = s.from;
    this.resolved = new Uint8Array(n);
    this.ledger = new Ledger(s.markets, toMicros(s.initialCash), feeRule(options.fees));
    this.book = new OrderBook(tape, this.indexOf, this.ledger, s.slippage, this.resolved, this);
    this.scores = new Scorecard(this.indexOf, this.resolved);
    this.views = s.markets.map((id) => new TapeCandle(tape, id));
    this.stepOf = new Float64Array(n).fill(-1);
    this.ctx = new Context(this);
  }

  run(): BacktestResult {
    const { tape, strategy, ctx, book, ledger, scores } = this;
    const n = tape.length;
    const time = tape.time;
    const market = tape.market;
    const close = tape.close;
    const last = ledger.last;
    const resolved = this.resolved;
    const openCount = book.openCount;
    const views = this.views;
    const stepOf = this.stepOf;
    const stepCandles = this.stepCandles;
    const progress = createProgress(n, this.options.onProgress, this.options.progressLog !== false);
    let nextCheck = progress.nextCheck;
    const queue = this.resolutionQueue;
    let nextAt = queue.length > 0 ? queue[0]!.at : Number.POSITIVE_INFINITY;

    this.now = this.s.from;
    strategy.onStart?.(ctx);

    let i = 0;
    while (i < n) {
      const t = time[i]!;
      this.now = t;
      if (nextAt <= t) {
        this.resolveUntil(t);
        nextAt =
          this.nextResolution < queue.length ? queue[this.nextResolution]!.at : Number.POSITIVE_INFINITY;
      }
      const step = this.step;
      let k = 0;
      do {
        const m = market[i]!;
        if (resolved[m] === 0) {
          if (openCount[m] !== 0) book.fillAt(m, i);
          last[m] = close[i]!;
          const view = views[m]!;
          view.row = i;
          stepOf[m] = step;
          stepCandles[k++] = view;
        }
        i++;
        if (i === nextCheck) nextCheck = progress.check(i);
      } while (i < n && time[i] === t);
      if (k === 0) continue;
      if (stepCandles.length !== k) stepCandles.length = k;
      this.step = step + 1;
      scores.record(t, ledger.equityMicros() / MICROS);
      strategy.onCandle(ctx);
    }

    // Resolutions after the last candle, before `to`: each adds a point to the equity curve.
    while (this.nextResolution < queue.length && queue[this.nextResolution]!.at < this.s.to) {
      const at = queue[this.nextResolution]!.at;
      this.now = at;
      this.resolveUntil(at);
      scores.restate(at, ledger.equityMicros() / MICROS);
    }
    progress.finish(n);

    this.now = this.s.to;
    this.stepCandles.length = 0;
    strategy.onEnd?.(ctx);
    book.cancelAll("backtest_end");
    return this.result();
  }

  resolveUntil(t: number): void {
    const queue = this.resolutionQueue;
    while (this.nextResolution < queue.length && queue[this.nextResolution]!.at <= t) {
      const r = queue[this.nextResolution++]!;
      if (r.at < this.s.to) this.resolve(r.m, r.outcome, r.at);
    }
  }

  /** Market `m` resolves at `at`: its orders are cancelled, its positions paid, its forecasts scored. */
  resolve(m: number, outcome: Outcome, at: number): void {
    const saved = this.now;
    this.now = at;
    this.book.cancelMarket(m, "market_resolved");
    this.resolved[m] = outcome === "yes" ? 1 : 2;
    const payout = this.ledger.settle(m, outcome === "yes" ? 0 : 1);
    this.scores.resolve(m, outcome);
    const event: ResolutionEvent = {
      market_id: this.s.markets[m]!,
      outcome,
      timestamp: isoOf(at),
      payout: usd(payout),
    };
    this.resolutionsApplied.push({ ...event });
    this.stepCandles.length = 0; // no candle is current while a resolution is announced
    this.strategy.onResolution?.(this.ctx, event);
    this.now = saved;
  }

  result(): BacktestResult {
    const { ledger, book, s } = this;
    const finalEquity = ledger.equityMicros() / MICROS;
    const initialCash = usd(ledger.initialMicros);
    return {
      markets: [...s.markets],
      interval: s.interval,
      from: isoOf(s.from),
      to: isoOf(s.to),
      initialCash,
      finalCash: usd(ledger.cash),
      finalEquity,
      candles: this.tape.length,
      steps: this.step,
      metrics: this.scores.metrics(s.interval, initialCash, finalEquity, ledger.closedPnls, ledger.feesPaid),
      trades: book.trades,
      rejected: book.rejected,
      cancelled: book.cancelled,
      positions: ledger.positions(),
      resolutions: this.resolutionsApplied,
      equityCurve: this.scores.curve,
      ...(Object.keys(s.titles).length > 0 ? { titles: s.titles } : {}),
    };
  }
}
