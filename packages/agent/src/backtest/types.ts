/** Public types of the backtester: candles, sources, strategies, orders and results. */
import type { FeesView, KalshiFeeType } from "@crossbook/fees";
import type { paths } from "../generated/api.js";
import type { OrderType as ApiOrderType, OrderOutcome, OrderRequest, OrderSide } from "../order-types.js";
import type { CandleTape } from "./tape.js";

type HistoryGet = paths["/v1/prices/history"]["get"];

/**
 * A candle length of `GET /v1/prices/history`: `1m`, `5m`, `15m`, `1h`, `4h`, `1d` or `1w`.
 *
 * @example
 * const interval: Interval = "1h";
 */
export type Interval = NonNullable<HistoryGet["parameters"]["query"]["interval"]>;

/**
 * One candle as `GET /v1/prices/history` returns it: `timestamp` is the period's start, prices are YES, 0-1.
 *
 * @example
 * const c: ApiCandle = { timestamp: "2026-01-01T00:00:00.000Z", open: 0.4, high: 0.5, low: 0.4, close: 0.45, volume: 120 };
 */
export type ApiCandle = HistoryGet["responses"][200]["content"]["application/json"]["data"][number];

/**
 * A candle of a named market: the API's candle shape plus `market_id`. This is the format of a
 * candle file (see `fileSource`); `timestamp` may also be epoch milliseconds there.
 *
 * @example
 * // one line of a candles.jsonl file
 * {"market_id":"kalshi:A","timestamp":"2026-01-01T00:00:00.000Z","open":0.4,"high":0.5,"low":0.4,"close":0.45,"volume":120}
 */
export interface MarketCandle extends Omit<ApiCandle, "timestamp"> {
  market_id: string;
  timestamp: string | number;
}

/**
 * The body of a `GET /v1/prices/history` response (only `data` and `meta.end` are read).
 *
 * @example
 * const page: HistoryPage = await client.prices.history({ market_id, interval: "1h", start, limit: 1000 });
 */
export interface HistoryPage {
  data: readonly ApiCandle[];
  meta?: { end?: string; [key: string]: unknown };
}

/**
 * The history call a candle source pages through: candles of `marketId` whose period starts in
 * [`start`, `end`) (ISO 8601), the first `limit` of them, oldest first. The client passes its
 * `/v1/prices/history` call; a bare array of candles is accepted too.
 *
 * @example
 * const fetchHistory: FetchHistory = (market_id, interval, start, end, limit) =>
 *   client.prices.history({ market_id, interval, start, end, limit });
 */
export type FetchHistory = (
  marketId: string,
  interval: Interval,
  start: string,
  end: string,
  limit: number,
) => Promise<HistoryPage | readonly ApiCandle[]>;

/**
 * What the backtest asks a candle source for.
 *
 * @example
 * await source.load({ markets: ["kalshi:A"], interval: "1h", from: Date.parse("2026-01-01"), to: Date.parse("2026-02-01") });
 */
export interface CandleRequest {
  markets: readonly string[];
  interval: Interval;
  /** Epoch ms, inclusive: candles whose period starts at or after it. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
}

/**
 * Where candles come from. `load` returns the candles of the requested markets in [from, to), in
 * any order; the backtest merges them across markets in time order (see `CandleTape`).
 *
 * @example
 * const mine: CandleSource = { load: async ({ markets }) => (await readMyCandles()).filter((c) => markets.includes(c.market_id)) };
 */
export interface CandleSource {
  load(request: CandleRequest): Promise<Iterable<MarketCandle> | CandleTape>;
}

/**
 * The order vocabulary is the API's (`POST /v1/orders`, from the generated types): a strategy's
 * orders have the fields and values a live order has.
 *
 * @example
 * const side: Side = "buy";
 */
export type Side = OrderSide;
/**
 * @example
 * const outcome: Outcome = "no";
 */
export type Outcome = OrderOutcome;
/**
 * @example
 * const type: OrderType = "market";
 */
export type OrderType = ApiOrderType;

/**
 * An order a strategy places: the fields of `POST /v1/orders` the backtest models (`market_id`,
 * `side`, `outcome` default yes, `type` default limit, `price`, `amount`, `max_slippage` default
 * 0.05), picked from the API's order body. A NO contract is priced at 1 − the YES price; `price` is
 * required for limit orders and a bound on market orders; `amount` is contracts, > 0.
 *
 * @example
 * ctx.order({ market_id: "kalshi:A", side: "buy", outcome: "no", type: "limit", price: 0.35, amount: 20 });
 */
export type OrderInput = Pick<
  OrderRequest,
  "market_id" | "side" | "outcome" | "type" | "price" | "amount" | "max_slippage"
>;

/**
 * What `ctx.order` answers: the order's id, and `rejected` with a reason when it was refused at once.
 *
 * @example
 * const t = ctx.order(order);
 * if (t.status === "rejected") console.warn(t.reason);
 */
export interface OrderTicket {
  id: string;
  status: "open" | "rejected";
  reason?: RejectReason;
}

/**
 * Why an order was rejected: `invalid_order` (bad field), `unknown_market` (not in `markets`),
 * `market_resolved`, `insufficient_cash` (cost plus fee beyond available cash),
 * `insufficient_position` (selling contracts not held or already offered), `slippage_exceeded`
 * (a market order's slippage above its `max_slippage`), `price_bound` (a market order's fill price
 * beyond its `price`).
 *
 * @example
 * const cashRejections = result.rejected.filter((r) => r.reason === "insufficient_cash");
 */
export type RejectReason =
  | "invalid_order"
  | "unknown_market"
  | "market_resolved"
  | "insufficient_cash"
  | "insufficient_position"
  | "slippage_exceeded"
  | "price_bound";

/**
 * A market's resolution: YES or NO wins, at time `at` (ISO 8601 or epoch ms).
 *
 * @example
 * resolutions: [{ market_id: "kalshi:A", outcome: "yes", at: "2026-03-01T20:00:00Z" }]
 */
export interface Resolution {
  market_id: string;
  outcome: Outcome;
  at: string | number | Date;
}

/**
 * A candle as the strategy sees it. Views are reused from candle to candle: copy what you keep.
 *
 * @example
 * onCandle(ctx) { for (const c of ctx.candles) if (c.close > c.open) ctx.predict(c.market_id, c.close); }
 */
export interface CandleView {
  readonly market_id: string;
  /** Start of the period, epoch ms. */
  readonly time: number;
  /** Start of the period, ISO 8601 (built on each read). */
  readonly timestamp: string;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
}

/**
 * A position held (contracts of one outcome of one market).
 *
 * @example
 * for (const p of ctx.portfolio.positions) console.log(p.market_id, p.outcome, p.size, p.unrealized_pnl);
 */
export interface PositionView {
  market_id: string;
  outcome: Outcome;
  /** Contracts held. */
  size: number;
  /** Cost basis (prices paid plus buy fees) of the contracts held, USD. */
  cost_basis: number;
  /** cost_basis / size. */
  avg_price: number;
  /** Last close of the outcome (NO: 1 − YES), or the average price before any candle. */
  mark: number;
  /** size × mark. */
  value: number;
  unrealized_pnl: number;
}

/**
 * The simulated account: cash, positions and equity, live during the run.
 *
 * @example
 * if (ctx.portfolio.available > 50 && ctx.portfolio.position("kalshi:A") === 0) ctx.order(order);
 */
export interface Portfolio {
  /** Cash, USD. Never negative. */
  readonly cash: number;
  /** Cash not held back by open buy orders. */
  readonly available: number;
  /** Cash plus every position at its mark. */
  readonly equity: number;
  /** Contracts held of one outcome of a market (0 when none). */
  position(marketId: string, outcome?: Outcome): number;
  /** Every open position (a new array on each read). */
  readonly positions: readonly PositionView[];
}

/**
 * An order still open.
 *
 * @example
 * for (const o of ctx.openOrders) if (o.type === "limit") ctx.cancel(o.id);
 */
export interface OpenOrder {
  id: string;
  market_id: string;
  side: Side;
  outcome: Outcome;
  type: OrderType;
  price: number | null;
  amount: number;
  /** ISO 8601 time it was placed (the step's candle time, or `from` in onStart). */
  placed_at: string;
}

/**
 * What a strategy's callbacks receive.
 *
 * @example
 * onCandle(ctx) { const c = ctx.candleOf("kalshi:A"); if (c && c.close < 0.2) ctx.order({ market_id: c.market_id, side: "buy", type: "market", amount: 10 }); }
 */
export interface StrategyContext {
  /** The current step's time (candle start), epoch ms; `from` in onStart, the run's end in onEnd. */
  readonly time: number;
  /** The same as ISO 8601. */
  readonly timestamp: string;
  /** The candles of this step (one per market that has a candle now), in the order of `markets`. Reused: copy what you keep. */
  readonly candles: readonly CandleView[];
  /** The first of `candles` (handy with one market). */
  readonly candle: CandleView | undefined;
  /** This step's candle of a market, if it has one now. */
  candleOf(marketId: string): CandleView | undefined;
  /** The last known YES close of a market (undefined before its first candle). */
  price(marketId: string): number | undefined;
  readonly portfolio: Portfolio;
  /** Orders still open (a new array on each read). */
  readonly openOrders: readonly OpenOrder[];
  /** Places an order. It can fill from the next candle of its market on, never on the current one. */
  order(order: OrderInput): OrderTicket;
  /** Cancels an open order; false when it is not open (filled, cancelled or unknown). */
  cancel(id: string): boolean;
  /** States the probability that `marketId` resolves YES, scored by the Brier score at resolution. */
  predict(marketId: string, probability: number): void;
}

/**
 * A resolution as `onResolution` sees it, with what the positions paid.
 *
 * @example
 * onResolution(ctx, r) { console.log(`${r.market_id} resolved ${r.outcome}, paid ${r.payout}`); }
 */
export interface ResolutionEvent {
  market_id: string;
  outcome: Outcome;
  timestamp: string;
  /** USD paid out for the positions in this market. */
  payout: number;
}

/**
 * A trading strategy. `onCandle` runs once per step (each distinct candle time) after that step's
 * fills; orders placed there can fill from the next candle on. All callbacks are synchronous.
 *
 * @example
 * const meanReversion: Strategy = {
 *   onCandle(ctx) {
 *     for (const c of ctx.candles) {
 *       if (c.close < 0.3 && ctx.portfolio.position(c.market_id) === 0) ctx.order({ market_id: c.market_id, side: "buy", price: c.close, amount: 10 });
 *       if (c.close > 0.6 && ctx.portfolio.position(c.market_id) > 0) ctx.order({ market_id: c.market_id, side: "sell", type: "market", amount: ctx.portfolio.position(c.market_id) });
 *     }
 *   },
 * };
 */
export interface Strategy {
  onStart?(ctx: StrategyContext): void;
  onCandle(ctx: StrategyContext): void;
  onResolution?(ctx: StrategyContext, resolution: ResolutionEvent): void;
  onEnd?(ctx: StrategyContext): void;
}

/**
 * A fill as the fee function sees it.
 *
 * @example
 * fees: (f: FeeInput) => (f.liquidity === "taker" ? 0.01 * f.amount : 0)
 */
export interface FeeInput {
  market_id: string;
  /** `kalshi`, `polymarket` (from the market id's prefix), else `other`. */
  venue: "kalshi" | "polymarket" | "other";
  side: Side;
  outcome: Outcome;
  /** Price of the outcome, 0-1. */
  price: number;
  amount: number;
  /** `taker` for market orders and limit orders that crossed the last price when placed; else `maker`. */
  liquidity: "maker" | "taker";
}

/**
 * A custom fee: USD for one fill (≥ 0).
 *
 * @example
 * const flat: FeeFunction = (f) => 0.02 * f.amount * Math.min(f.price, 1 - f.price);
 */
export type FeeFunction = (fill: FeeInput) => number;

/**
 * A market's fee schedule as `GET /v1/markets/{id}` publishes it (`market.fees`): a taker fill of C
 * contracts at price P pays C × rate × (P × (1 − P))^exponent, makers `maker_rate` instead, rounded
 * by the venue's rules (`model`).
 *
 * @example
 * const fees: MarketFees = { model: "polymarket", rate: 0.05, exponent: 1, taker_only: true, maker_rate: 0, fee_type: null, multiplier: null, cap_bps: 1000 };
 */
export type MarketFees = FeesView;

/**
 * Venue fee rules: the same schedules and rounding the crossbook sandbox charges (@crossbook/fees).
 * A market in `markets` is charged its own schedule; others by their venue's settings here, else
 * what the server charges a market whose schedule it does not know (Kalshi quadratic × 1,
 * Polymarket rate 0.07 exponent 1).
 *
 * @example
 * const markets = await client.markets.list({ venue: "polymarket" });
 * fees: { markets: Object.fromEntries(markets.data.map((m) => [m.id, m.fees])), kalshi: { feeMultiplier: 1 } }
 */
export interface FeeConfig {
  /** Per market id: its schedule as the API publishes it (`market.fees`); null: the venue's settings. */
  markets?: Readonly<Record<string, MarketFees | null>>;
  /**
   * Kalshi markets not in `markets`: the series' fee type (`quadratic`, `quadratic_with_maker_fees`,
   * `quadratic_with_combo_maker_fees`, `flat`) and multiplier (1 = the general 0.07). `false`: no fee.
   */
  kalshi?: { feeType?: KalshiFeeType; feeMultiplier?: number } | false;
  /**
   * Polymarket markets not in `markets`: the `feeSchedule` rate and exponent (`rate: 0` for a
   * fee-free market), makers free unless `takerOnly: false`, capped at `capBps`. `false`: no fee.
   */
  polymarket?: { rate?: number; exponent?: number; takerOnly?: boolean; capBps?: number | null } | false;
  /** Makers (limit orders that rested) pay the taker fee too (a stress test). Default: as the schedule says. */
  makersPay?: boolean;
}

/**
 * A slippage model: the fraction a market order's price moves against it (0.01 = 1 %).
 *
 * @example
 * slippage: ({ amount, volume }) => Math.min(0.05, 0.002 + amount / Math.max(1, volume) / 10)
 */
export type SlippageFunction = (order: {
  market_id: string;
  side: Side;
  outcome: Outcome;
  amount: number;
  /** The outcome's open of the filling candle. */
  price: number;
  /** The filling candle's volume. */
  volume: number;
}) => number;

/**
 * Progress of a replay.
 *
 * @example
 * onProgress: ({ done, total, pct }) => console.log(`${done}/${total} (${pct.toFixed(0)} %)`)
 */
export interface Progress {
  /** Candles replayed. */
  done: number;
  total: number;
  /** done / total × 100. */
  pct: number;
}

/**
 * Options of `backtest`.
 *
 * @example
 * const options: BacktestOptions = { strategy, markets: ["kalshi:A"], interval: "1h", from: "2026-01-01", to: "2026-02-01",
 *   initialCash: 1000, fees: {}, slippage: 0.01, source: fileSource("candles.jsonl") };
 */
export interface BacktestOptions {
  strategy: Strategy;
  /** Market ids (`kalshi:…`, `polymarket:…`); ties in time are replayed in this order. */
  markets: readonly string[];
  interval: Interval;
  /** Start, inclusive (ISO 8601, epoch ms or Date). */
  from: string | number | Date;
  /** End, exclusive. */
  to: string | number | Date;
  /** Starting cash, USD. */
  initialCash: number;
  /** Venue fee rules, or a custom fee function. Default: each venue's rules with Polymarket at 0 bps. */
  fees?: FeeConfig | FeeFunction;
  /** Market-order slippage: a fraction (0.01 = 1 %) or a function. Default 0. */
  slippage?: number | SlippageFunction;
  /** Resolutions: positions pay 1 per winning contract at `at` (when `at` is before `to`). */
  resolutions?: readonly Resolution[];
  /** The candles: a source (`fileSource`, `historySource`), a `CandleTape`, or an array of candles. */
  source?: CandleSource | CandleTape | Iterable<MarketCandle>;
  /**
   * Market titles by id, for the report (which shows a title with its id beneath). `client.backtest`
   * fills them in from `GET /v1/markets/{id}` when it reads the candles from the service.
   */
  titles?: Readonly<Record<string, string>>;
  /** Called about every 1 % of the replay, and at the end. */
  onProgress?: (progress: Progress) => void;
  /** A line on stderr every ~2 s once the replay runs longer than 2 s (default true). */
  progressLog?: boolean;
}

/**
 * A fill.
 *
 * @example
 * const bought = result.trades.filter((t) => t.side === "buy").reduce((n, t) => n + t.amount, 0);
 */
export interface Trade {
  order_id: string;
  /** Start of the candle the fill happened in, ISO 8601. */
  timestamp: string;
  market_id: string;
  side: Side;
  outcome: Outcome;
  type: OrderType;
  liquidity: "maker" | "taker";
  /** Price of the outcome. */
  price: number;
  amount: number;
  /** USD. */
  fee: number;
  /** Sells: proceeds − fee − cost basis of the contracts sold; buys: 0. */
  realized_pnl: number;
}

/**
 * An order refused, at placement or when it came to fill.
 *
 * @example
 * for (const r of result.rejected) console.warn(r.timestamp, r.order_id, r.reason, r.message);
 */
export interface RejectedOrder {
  order_id: string;
  timestamp: string;
  market_id: string;
  side: Side | string;
  outcome: Outcome | string;
  type: OrderType | string;
  price: number | null;
  amount: number;
  reason: RejectReason;
  message: string;
}

/**
 * An order cancelled: by the strategy, by its market's resolution, or open at the end of the run.
 *
 * @example
 * const leftOpen = result.cancelled.filter((c) => c.reason === "backtest_end").length;
 */
export interface CancelledOrder {
  order_id: string;
  timestamp: string;
  market_id: string;
  side: Side;
  outcome: Outcome;
  type: OrderType;
  price: number | null;
  amount: number;
  reason: "cancelled" | "market_resolved" | "backtest_end";
}

/**
 * The equity curve, one point per step (and per resolution after the last candle), columnar.
 *
 * @example
 * const { time, equity } = result.equityCurve;
 * const last = equity[equity.length - 1];
 */
export interface EquityCurve {
  /** Epoch ms of each point (the step's candle start). */
  time: number[];
  /** Equity at each point, USD: cash plus positions at the step's closes. */
  equity: number[];
}

/**
 * Performance figures.
 *
 * @example
 * const { totalReturn, sharpe, maxDrawdown, winRate, brier } = result.metrics;
 */
export interface Metrics {
  /** finalEquity / initialCash − 1. */
  totalReturn: number;
  /** Annualised Sharpe ratio of per-interval returns (see `sharpeRatio`); null with < 2 periods or no variance. */
  sharpe: number | null;
  /** Largest fall from a running peak (initial cash included), as a fraction of the peak (0.2 = 20 %). */
  maxDrawdown: number;
  /** Share of closed round trips and resolved positions with positive PnL; null when none closed. */
  winRate: number | null;
  /** Closed round trips and resolved positions counted by `winRate`. */
  roundTrips: number;
  wins: number;
  /** Mean (p − outcome)² over every `predict` of a market that resolved in the run; null without any. */
  brier: number | null;
  /** Predictions scored by `brier`. */
  predictions: number;
  /** Total fees paid, USD. */
  fees: number;
}

/**
 * What `backtest` returns. Plain JSON: two runs with the same inputs serialise byte for byte the same.
 *
 * @example
 * await writeFile("result.json", JSON.stringify(result)); // same inputs, same bytes
 */
export interface BacktestResult {
  markets: string[];
  interval: Interval;
  from: string;
  to: string;
  initialCash: number;
  finalCash: number;
  finalEquity: number;
  /** Candles replayed (those of resolved markets after their resolution are skipped but counted). */
  candles: number;
  /** Distinct candle times (strategy steps). */
  steps: number;
  metrics: Metrics;
  trades: Trade[];
  rejected: RejectedOrder[];
  cancelled: CancelledOrder[];
  /** Positions still open at the end, at their marks. */
  positions: PositionView[];
  /** Resolutions applied during the run. */
  resolutions: Array<{ market_id: string; outcome: Outcome; timestamp: string; payout: number }>;
  equityCurve: EquityCurve;
  /** Titles of the run's markets by id, when `titles` named any (absent otherwise). */
  titles?: Record<string, string>;
}
