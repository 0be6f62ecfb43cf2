/**
 * The replay: candles in time order through the strategy, orders filled by the rules in the
 * README, money kept in integer micro-units (1e-6 USD, 1e-6 contract) so results are exact and
 * deterministic. The hot loop reads typed arrays and allocates nothing per candle.
 */
import { type FeeRule, feeRule, MICROS, toMicros, venueOf } from "./fees.js";
import { maxDrawdown, sharpeRatio, totalReturn, winRate } from "./metrics.js";
import { createProgress } from "./progress.js";
import { INTERVAL_MS } from "./sources.js";
import { CandleTape, timeOf } from "./tape.js";
import type {
  BacktestOptions,
  BacktestResult,
  CancelledOrder,
  CandleRequest,
  CandleView,
  FeeInput,
  MarketCandle,
  OpenOrder,
  OrderInput,
  OrderTicket,
  Outcome,
  Portfolio,
  PositionView,
  RejectedOrder,
  RejectReason,
  ResolutionEvent,
  SlippageFunction,
  Strategy,
  StrategyContext,
  Trade,
} from "./types.js";

const BUY = 0;
const YES = 0;
const LIMIT = 0;
/**
 * The default `max_slippage` of a market order, as in the API.
 *
 * @example
 * ctx.order({ market_id, side: "buy", type: "market", amount: 5 }); // max_slippage 0.05
 */
export const DEFAULT_MAX_SLIPPAGE = 0.05;

interface SimOrder {
  id: string;
  m: number;
  market_id: string;
  side: 0 | 1;
  outcome: 0 | 1;
  type: 0 | 1;
  /** Limit price, or a market order's bound (-1 when none), micros of the outcome. */
  price: number;
  size: number;
  amount: number;
  maxSlippage: number;
  liquidity: "maker" | "taker";
  /** Cash held back (limit buys): cost plus fee at the limit. */
  lock: number;
  placedAt: number;
}

const SIDES = ["buy", "sell"] as const;
const OUTCOMES = ["yes", "no"] as const;
const TYPES = ["limit", "market"] as const;

const iso = (t: number) => new Date(t).toISOString();
const usd = (micros: number) => micros / MICROS;
const cost = (priceMicros: number, sizeMicros: number) => Math.round((priceMicros * sizeMicros) / MICROS);

/** A reusable view of the tape row a market's latest candle is at. */
class TapeCandle implements CandleView {
  row = 0;
  constructor(
    private readonly tape: CandleTape,
    readonly market_id: string,
  ) {}
  get time(): number {
    return this.tape.time[this.row]!;
  }
  get timestamp(): string {
    return iso(this.tape.time[this.row]!);
  }
  get open(): number {
    return this.tape.open[this.row]!;
  }
  get high(): number {
    return this.tape.high[this.row]!;
  }
  get low(): number {
    return this.tape.low[this.row]!;
  }
  get close(): number {
    return this.tape.close[this.row]!;
  }
  get volume(): number {
    return this.tape.volume[this.row]!;
  }
  toJSON() {
    return {
      market_id: this.market_id,
      timestamp: this.timestamp,
      open: this.open,
      high: this.high,
      low: this.low,
      close: this.close,
      volume: this.volume,
    };
  }
}

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
  return { strategy, markets: [...markets], interval, from, to, initialCash, slippage, indexOf, resolutions };
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

class Replay {
  readonly strategy: Strategy;
  readonly markets: string[];
  readonly indexOf: Map<string, number>;
  readonly fee: FeeRule;
  readonly slippage: number | SlippageFunction;
  readonly resolutionQueue: Array<{ m: number; outcome: Outcome; at: number }>;
  nextResolution = 0;

  // Money, micros.
  cash: number;
  locked = 0;
  readonly initialMicros: number;
  feesPaid = 0;

  // Per market (and outcome: index 2m + outcome).
  readonly last: Float64Array;
  readonly size: Float64Array;
  readonly basis: Float64Array;
  readonly offered: Float64Array;
  readonly roundTrip: Float64Array;
  readonly resolved: Uint8Array;
  readonly openCount: Int32Array;
  readonly orders: SimOrder[][];
  readonly views: TapeCandle[];
  readonly stepOf: Float64Array;
  readonly predCount: Float64Array;
  readonly predSum: Float64Array;
  readonly predSquares: Float64Array;
  /** Markets with a position, and each market's place in that list (-1: none). */
  readonly held: number[] = [];
  readonly heldAt: Int32Array;

  readonly byId = new Map<string, SimOrder>();
  seq = 0;
  step = 0;
  now: number;
  readonly stepCandles: TapeCandle[] = [];

  // Results.
  readonly trades: Trade[] = [];
  readonly rejected: RejectedOrder[] = [];
  readonly cancelled: CancelledOrder[] = [];
  readonly roundTripPnls: number[] = [];
  readonly resolutionsApplied: BacktestResult["resolutions"] = [];
  brierSum = 0;
  brierCount = 0;
  readonly eqTime: number[] = [];
  readonly eqValue: number[] = [];
  readonly ctx: Context;

  constructor(
    readonly options: BacktestOptions,
    readonly s: ReturnType<typeof settings>,
    readonly tape: CandleTape,
  ) {
    this.strategy = s.strategy;
    this.markets = s.markets;
    this.indexOf = s.indexOf;
    this.fee = feeRule(options.fees);
    this.slippage = s.slippage;
    this.resolutionQueue = s.resolutions;
    this.initialMicros = toMicros(s.initialCash);
    this.cash = this.initialMicros;
    this.now = s.from;
    const n = this.markets.length;
    this.last = new Float64Array(n).fill(Number.NaN);
    this.size = new Float64Array(2 * n);
    this.basis = new Float64Array(2 * n);
    this.offered = new Float64Array(2 * n);
    this.roundTrip = new Float64Array(2 * n);
    this.resolved = new Uint8Array(n);
    this.openCount = new Int32Array(n);
    this.orders = this.markets.map(() => []);
    this.views = this.markets.map((id) => new TapeCandle(tape, id));
    this.stepOf = new Float64Array(n).fill(-1);
    this.predCount = new Float64Array(n);
    this.predSum = new Float64Array(n);
    this.predSquares = new Float64Array(n);
    this.heldAt = new Int32Array(n).fill(-1);
    this.ctx = new Context(this);
  }

  run(): BacktestResult {
    const { tape, strategy, ctx } = this;
    const n = tape.length;
    const time = tape.time;
    const market = tape.market;
    const close = tape.close;
    const last = this.last;
    const resolved = this.resolved;
    const openCount = this.openCount;
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
          if (openCount[m] !== 0) this.fillOrders(m, i);
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
      this.eqTime.push(t);
      this.eqValue.push(this.equityMicros() / MICROS);
      strategy.onCandle(ctx);
    }

    // Resolutions after the last candle, before `to`: each adds a point to the equity curve.
    while (this.nextResolution < queue.length && queue[this.nextResolution]!.at < this.s.to) {
      const at = queue[this.nextResolution]!.at;
      this.now = at;
      this.resolveUntil(at);
      const lastTime =
        this.eqTime.length > 0 ? this.eqTime[this.eqTime.length - 1]! : Number.NEGATIVE_INFINITY;
      if (at > lastTime) {
        this.eqTime.push(at);
        this.eqValue.push(this.equityMicros() / MICROS);
      } else {
        this.eqValue[this.eqValue.length - 1] = this.equityMicros() / MICROS;
      }
    }
    progress.finish(n);

    this.now = this.s.to;
    this.stepCandles.length = 0;
    strategy.onEnd?.(ctx);
    for (const list of this.orders) {
      for (const order of [...list]) this.cancelOrder(order, "backtest_end");
    }
    return this.result();
  }

  // --- orders -------------------------------------------------------------------------------------

  reject(
    id: string,
    input: Partial<OrderInput> | undefined,
    reason: RejectReason,
    message: string,
  ): OrderTicket {
    const type = input?.type ?? "limit";
    this.rejected.push({
      order_id: id,
      timestamp: iso(this.now),
      market_id: String(input?.market_id ?? ""),
      side: String(input?.side ?? ""),
      outcome: String(input?.outcome ?? "yes"),
      type: String(type),
      price: typeof input?.price === "number" ? input.price : null,
      amount: typeof input?.amount === "number" ? input.amount : 0,
      reason,
      message,
    });
    return { id, status: "rejected", reason };
  }

  place(input: OrderInput): OrderTicket {
    const id = `bt_${++this.seq}`;
    if (!input || typeof input !== "object")
      return this.reject(id, undefined, "invalid_order", "order must be an object");
    const m = this.indexOf.get(input.market_id);
    if (m === undefined)
      return this.reject(id, input, "unknown_market", `${input.market_id} is not in the run's markets`);
    if (this.resolved[m] !== 0)
      return this.reject(id, input, "market_resolved", `${input.market_id} has resolved`);
    const side = SIDES.indexOf(input.side);
    const outcome = OUTCOMES.indexOf(input.outcome ?? "yes");
    const type = TYPES.indexOf(input.type ?? "limit");
    if (side < 0) return this.reject(id, input, "invalid_order", "side must be buy or sell");
    if (outcome < 0) return this.reject(id, input, "invalid_order", "outcome must be yes or no");
    if (type < 0) return this.reject(id, input, "invalid_order", "type must be limit or market");
    const size =
      typeof input.amount === "number" && Number.isFinite(input.amount) ? toMicros(input.amount) : 0;
    if (!(size > 0)) return this.reject(id, input, "invalid_order", "amount must be a number > 0");
    let price = -1;
    if (input.price !== undefined || type === LIMIT) {
      const p = input.price;
      if (typeof p !== "number" || !(p > 0 && p < 1)) {
        return this.reject(id, input, "invalid_order", "price must be strictly between 0 and 1");
      }
      price = toMicros(p);
      if (price <= 0 || price >= MICROS)
        return this.reject(id, input, "invalid_order", "price must be strictly between 0 and 1");
    }
    const maxSlippage = input.max_slippage ?? DEFAULT_MAX_SLIPPAGE;
    if (!(typeof maxSlippage === "number" && Number.isFinite(maxSlippage) && maxSlippage >= 0)) {
      return this.reject(id, input, "invalid_order", "max_slippage must be a fraction ≥ 0");
    }
    const slot = 2 * m + outcome;
    if (side !== BUY && this.size[slot]! - this.offered[slot]! < size) {
      const free = usd(this.size[slot]! - this.offered[slot]!);
      return this.reject(
        id,
        input,
        "insufficient_position",
        `selling ${input.amount}, ${free} held and not already offered`,
      );
    }
    // A limit order that crosses the last price would take liquidity (taker); otherwise it rests (maker).
    let liquidity: "maker" | "taker" = "taker";
    if (type === LIMIT) {
      const lastYes = this.last[m]!;
      if (!Number.isNaN(lastYes)) {
        const lastMicros = toMicros(lastYes);
        const outcomeLast = outcome === YES ? lastMicros : MICROS - lastMicros;
        liquidity = (side === BUY ? price >= outcomeLast : price <= outcomeLast) ? "taker" : "maker";
      }
    }
    const order: SimOrder = {
      id,
      m,
      market_id: input.market_id,
      side: side as 0 | 1,
      outcome: outcome as 0 | 1,
      type: type as 0 | 1,
      price,
      size,
      amount: usd(size),
      maxSlippage,
      liquidity,
      lock: 0,
      placedAt: this.now,
    };
    if (type === LIMIT && side === BUY) {
      const lock = cost(price, size) + this.feeOf(order, price);
      if (lock > this.cash - this.locked) {
        return this.reject(
          id,
          input,
          "insufficient_cash",
          `needs ${usd(lock)} (cost and fee), ${usd(this.cash - this.locked)} available`,
        );
      }
      order.lock = lock;
      this.locked += lock;
    }
    if (side !== BUY) this.offered[slot]! += size;
    this.orders[m]!.push(order);
    this.openCount[m]!++;
    this.byId.set(id, order);
    return { id, status: "open" };
  }

  feeOf(order: SimOrder, priceMicros: number): number {
    const input: FeeInput = {
      market_id: order.market_id,
      venue: venueOf(order.market_id),
      side: SIDES[order.side],
      outcome: OUTCOMES[order.outcome],
      price: usd(priceMicros),
      amount: order.amount,
      liquidity: order.liquidity,
    };
    return this.fee(input, order.size, priceMicros);
  }

  /** Takes an order off its market (filled, cancelled, rejected at fill time). */
  remove(order: SimOrder): void {
    const list = this.orders[order.m]!;
    const at = list.indexOf(order);
    if (at >= 0) list.splice(at, 1);
    this.openCount[order.m]!--;
    this.byId.delete(order.id);
    if (order.lock > 0) {
      this.locked -= order.lock;
      order.lock = 0;
    }
    if (order.side !== BUY) this.offered[2 * order.m + order.outcome]! -= order.size;
  }

  cancelOrder(order: SimOrder, reason: CancelledOrder["reason"]): void {
    this.remove(order);
    this.cancelled.push({ ...this.ended(order), reason });
  }

  rejectAtFill(order: SimOrder, reason: RejectReason, message: string): void {
    this.remove(order);
    this.rejected.push({ ...this.ended(order), reason, message });
  }

  /** What the cancelled and rejected lists say of an order taken off now. */
  ended(order: SimOrder): Omit<CancelledOrder, "reason"> {
    return {
      order_id: order.id,
      timestamp: iso(this.now),
      market_id: order.market_id,
      side: SIDES[order.side],
      outcome: OUTCOMES[order.outcome],
      type: TYPES[order.type],
      price: order.price >= 0 ? usd(order.price) : null,
      amount: order.amount,
    };
  }

  /** Fills the open orders of market `m` that candle row `i` reaches, in the order they were placed. */
  fillOrders(m: number, i: number): void {
    const tape = this.tape;
    const lowYes = toMicros(tape.low[i]!);
    const highYes = toMicros(tape.high[i]!);
    const openYes = toMicros(tape.open[i]!);
    const list = this.orders[m]!;
    let j = 0;
    while (j < list.length) {
      const order = list[j]!;
      this.tryFill(order, i, lowYes, highYes, openYes);
      if (list[j] === order) j++; // still open; else it left the list and the next one moved here
    }
  }

  tryFill(order: SimOrder, i: number, lowYes: number, highYes: number, openYes: number): void {
    const tape = this.tape;
    const yes = order.outcome === YES;
    if (order.type === LIMIT) {
      const low = yes ? lowYes : MICROS - highYes;
      const high = yes ? highYes : MICROS - lowYes;
      if (order.side === BUY ? low <= order.price : high >= order.price) this.fill(order, order.price);
      return;
    }
    const open = yes ? openYes : MICROS - openYes;
    const s =
      typeof this.slippage === "number"
        ? this.slippage
        : this.slippage({
            market_id: order.market_id,
            side: SIDES[order.side],
            outcome: OUTCOMES[order.outcome],
            amount: order.amount,
            price: usd(open),
            volume: tape.volume[i]!,
          });
    if (!(Number.isFinite(s) && s >= 0)) throw new RangeError(`slippage function returned ${s}`);
    if (s > order.maxSlippage + 1e-12) {
      this.rejectAtFill(order, "slippage_exceeded", `slippage ${s} above max_slippage ${order.maxSlippage}`);
      return;
    }
    const moved = order.side === BUY ? open * (1 + s) : open * (1 - s);
    const price = Math.min(MICROS, Math.max(0, Math.round(moved)));
    if (order.price >= 0 && (order.side === BUY ? price > order.price : price < order.price)) {
      this.rejectAtFill(
        order,
        "price_bound",
        `fill price ${usd(price)} beyond the order's price ${usd(order.price)}`,
      );
      return;
    }
    this.fill(order, price);
  }

  fill(order: SimOrder, price: number): void {
    const slot = 2 * order.m + order.outcome;
    const size = order.size;
    const fee = this.feeOf(order, price);
    const value = cost(price, size);
    let realized = 0;
    if (order.side === BUY) {
      const available = this.cash - this.locked + order.lock;
      if (value + fee > available) {
        this.rejectAtFill(
          order,
          "insufficient_cash",
          `needs ${usd(value + fee)} (cost and fee), ${usd(available)} available`,
        );
        return;
      }
      this.remove(order);
      this.cash -= value + fee;
      if (this.size[slot] === 0) this.roundTrip[slot] = 0;
      this.size[slot]! += size;
      this.basis[slot]! += value + fee;
      this.hold(order.m);
    } else {
      if (this.cash + value - fee < 0) {
        this.rejectAtFill(order, "insufficient_cash", `fee ${usd(fee)} above the proceeds and cash`);
        return;
      }
      this.remove(order);
      const held = this.size[slot]!;
      const slice = size >= held ? this.basis[slot]! : Math.round((this.basis[slot]! * size) / held);
      realized = value - fee - slice;
      this.cash += value - fee;
      this.size[slot] = held - size;
      this.basis[slot]! -= slice;
      this.roundTrip[slot]! += realized;
      if (this.size[slot] === 0) {
        this.basis[slot] = 0;
        this.roundTripPnls.push(this.roundTrip[slot]!);
        this.roundTrip[slot] = 0;
        this.unholdIfFlat(order.m);
      }
    }
    this.feesPaid += fee;
    this.trades.push({
      order_id: order.id,
      timestamp: iso(this.now),
      market_id: order.market_id,
      side: SIDES[order.side],
      outcome: OUTCOMES[order.outcome],
      type: TYPES[order.type],
      liquidity: order.liquidity,
      price: usd(price),
      amount: order.amount,
      fee: usd(fee),
      realized_pnl: usd(realized),
    });
  }

  hold(m: number): void {
    if (this.heldAt[m] !== -1) return;
    this.heldAt[m] = this.held.length;
    this.held.push(m);
  }

  unholdIfFlat(m: number): void {
    const at = this.heldAt[m]!;
    if (at === -1 || this.size[2 * m] !== 0 || this.size[2 * m + 1] !== 0) return;
    const lastHeld = this.held.pop()!;
    if (lastHeld !== m) {
      this.held[at] = lastHeld;
      this.heldAt[lastHeld] = at;
    }
    this.heldAt[m] = -1;
  }

  /** Cash plus positions at their marks (the last close; the average price before any candle), micros. */
  equityMicros(): number {
    let value = this.cash;
    const held = this.held;
    for (let j = 0; j < held.length; j++) {
      const m = held[j]!;
      const p = this.last[m]!;
      if (Number.isNaN(p)) value += this.basis[2 * m]! + this.basis[2 * m + 1]!;
      else value += this.size[2 * m]! * p + this.size[2 * m + 1]! * (1 - p);
    }
    return value;
  }

  // --- resolutions --------------------------------------------------------------------------------

  resolveUntil(t: number): void {
    const queue = this.resolutionQueue;
    while (this.nextResolution < queue.length && queue[this.nextResolution]!.at <= t) {
      const r = queue[this.nextResolution++]!;
      if (r.at < this.s.to) this.resolve(r.m, r.outcome, r.at);
    }
  }

  resolve(m: number, outcome: Outcome, at: number): void {
    const saved = this.now;
    this.now = at;
    for (const order of [...this.orders[m]!]) this.cancelOrder(order, "market_resolved");
    this.resolved[m] = outcome === "yes" ? 1 : 2;
    const winner = outcome === "yes" ? 0 : 1;
    let payout = 0;
    for (let o = 0; o < 2; o++) {
      const slot = 2 * m + o;
      const held = this.size[slot]!;
      if (held === 0) continue;
      const paid = o === winner ? held : 0;
      payout += paid;
      this.roundTrip[slot]! += paid - this.basis[slot]!;
      this.roundTripPnls.push(this.roundTrip[slot]!);
      this.roundTrip[slot] = 0;
      this.size[slot] = 0;
      this.basis[slot] = 0;
    }
    this.cash += payout;
    this.unholdIfFlat(m);
    const count = this.predCount[m]!;
    if (count > 0) {
      const o = outcome === "yes" ? 1 : 0;
      this.brierSum += this.predSquares[m]! - 2 * o * this.predSum[m]! + o * count;
      this.brierCount += count;
    }
    const event: ResolutionEvent = {
      market_id: this.markets[m]!,
      outcome,
      timestamp: iso(at),
      payout: usd(payout),
    };
    this.resolutionsApplied.push({ ...event });
    this.stepCandles.length = 0; // no candle is current while a resolution is announced
    this.strategy.onResolution?.(this.ctx, event);
    this.now = saved;
  }

  predict(marketId: string, probability: number): void {
    const m = this.indexOf.get(marketId);
    if (m === undefined) throw new RangeError(`predict: ${marketId} is not in the run's markets`);
    if (!(typeof probability === "number" && probability >= 0 && probability <= 1)) {
      throw new RangeError(`predict: probability must be in 0-1, got ${probability}`);
    }
    if (this.resolved[m] !== 0) return;
    this.predCount[m]!++;
    this.predSum[m]! += probability;
    this.predSquares[m]! += probability * probability;
  }

  // --- views and result ---------------------------------------------------------------------------

  positions(): PositionView[] {
    const out: PositionView[] = [];
    const held = [...this.held].sort((a, b) => a - b);
    for (const m of held) {
      for (let o = 0; o < 2; o++) {
        const slot = 2 * m + o;
        const size = this.size[slot]!;
        if (size === 0) continue;
        const lastYes = this.last[m]!;
        const basis = this.basis[slot]!;
        const mark = Number.isNaN(lastYes) ? basis / size : o === 0 ? lastYes : 1 - lastYes;
        const value = (size * mark) / MICROS;
        out.push({
          market_id: this.markets[m]!,
          outcome: OUTCOMES[o]!,
          size: usd(size),
          cost_basis: usd(basis),
          avg_price: basis / size,
          mark,
          value,
          unrealized_pnl: value - usd(basis),
        });
      }
    }
    return out;
  }

  openOrders(): OpenOrder[] {
    const all: SimOrder[] = [];
    for (const list of this.orders) all.push(...list);
    all.sort((a, b) => Number(a.id.slice(3)) - Number(b.id.slice(3)));
    return all.map((o) => ({
      id: o.id,
      market_id: o.market_id,
      side: SIDES[o.side],
      outcome: OUTCOMES[o.outcome],
      type: TYPES[o.type],
      price: o.price >= 0 ? usd(o.price) : null,
      amount: o.amount,
      placed_at: iso(o.placedAt),
    }));
  }

  result(): BacktestResult {
    const finalEquity = this.equityMicros() / MICROS;
    const initialCash = usd(this.initialMicros);
    const curve = { time: this.eqTime, equity: this.eqValue };
    const pnls = this.roundTripPnls;
    const wins = pnls.reduce((count, pnl) => count + (pnl > 0 ? 1 : 0), 0);
    return {
      markets: [...this.markets],
      interval: this.s.interval,
      from: iso(this.s.from),
      to: iso(this.s.to),
      initialCash,
      finalCash: usd(this.cash),
      finalEquity,
      candles: this.tape.length,
      steps: this.step,
      metrics: {
        totalReturn: totalReturn(initialCash, finalEquity),
        sharpe: sharpeRatio(curve, this.s.interval, initialCash),
        maxDrawdown: maxDrawdown(curve.equity, initialCash),
        winRate: winRate(pnls),
        roundTrips: pnls.length,
        wins,
        brier: this.brierCount > 0 ? Math.max(0, this.brierSum) / this.brierCount : null,
        predictions: this.brierCount,
        fees: usd(this.feesPaid),
      },
      trades: this.trades,
      rejected: this.rejected,
      cancelled: this.cancelled,
      positions: this.positions(),
      resolutions: this.resolutionsApplied,
      equityCurve: curve,
    };
  }
}

class Context implements StrategyContext {
  readonly portfolio: Portfolio;
  constructor(private readonly r: Replay) {
    const replay = r;
    this.portfolio = {
      get cash() {
        return usd(replay.cash);
      },
      get available() {
        return usd(replay.cash - replay.locked);
      },
      get equity() {
        return replay.equityMicros() / MICROS;
      },
      position(marketId: string, outcome: Outcome = "yes") {
        const m = replay.indexOf.get(marketId);
        if (m === undefined) return 0;
        return usd(replay.size[2 * m + (outcome === "no" ? 1 : 0)]!);
      },
      get positions() {
        return replay.positions();
      },
    };
  }
  get time(): number {
    return this.r.now;
  }
  get timestamp(): string {
    return iso(this.r.now);
  }
  get candles(): readonly CandleView[] {
    return this.r.stepCandles;
  }
  get candle(): CandleView | undefined {
    return this.r.stepCandles[0];
  }
  candleOf(marketId: string): CandleView | undefined {
    const m = this.r.indexOf.get(marketId);
    if (m === undefined || this.r.stepOf[m] !== this.r.step - 1 || this.r.stepCandles.length === 0)
      return undefined;
    return this.r.views[m];
  }
  price(marketId: string): number | undefined {
    const m = this.r.indexOf.get(marketId);
    if (m === undefined) return undefined;
    const p = this.r.last[m]!;
    return Number.isNaN(p) ? undefined : p;
  }
  get openOrders(): readonly OpenOrder[] {
    return this.r.openOrders();
  }
  order(order: OrderInput): OrderTicket {
    return this.r.place(order);
  }
  cancel(id: string): boolean {
    const order = this.r.byId.get(id);
    if (!order) return false;
    this.r.cancelOrder(order, "cancelled");
    return true;
  }
  predict(marketId: string, probability: number): void {
    this.r.predict(marketId, probability);
  }
}
