/**
 * What the strategy sees of a replay: the step's candles as reusable views over the tape, the
 * portfolio, and the order, cancel and forecast calls, each handed to the module that owns it
 * (ledger, order book, scorecard). Nothing here changes state by itself.
 */
import { type Ledger, usd } from "./accounting.js";
import { MICROS } from "./fees.js";
import type { OrderBook } from "./orders.js";
import type { Scorecard } from "./scoring.js";
import { type CandleTape, isoOf } from "./tape.js";
import type {
  CandleView,
  OpenOrder,
  OrderInput,
  OrderTicket,
  Outcome,
  Portfolio,
  StrategyContext,
} from "./types.js";

/** A reusable view of the tape row a market's latest candle is at. */
export class TapeCandle implements CandleView {
  row = 0;
  constructor(
    private readonly tape: CandleTape,
    readonly market_id: string,
  ) {}
  get time(): number {
    return this.tape.time[this.row]!;
  }
  get timestamp(): string {
    return isoOf(this.tape.time[this.row]!);
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

/** The replay's state a context reads. */
export interface ReplayState {
  /** The current time, epoch ms. */
  readonly now: number;
  /** Steps run so far; the current one is `step − 1`. */
  readonly step: number;
  /** The current step's candles (empty in onStart, onEnd and onResolution). */
  readonly stepCandles: readonly TapeCandle[];
  /** Per market, the step of its latest candle (-1: none yet). */
  readonly stepOf: Float64Array;
  /** Per market, the view of its latest candle. */
  readonly views: readonly TapeCandle[];
  readonly indexOf: ReadonlyMap<string, number>;
  readonly ledger: Ledger;
  readonly book: OrderBook;
  readonly scores: Scorecard;
}

/** The `ctx` of a strategy's callbacks. */
export class Context implements StrategyContext {
  readonly portfolio: Portfolio;
  constructor(private readonly r: ReplayState) {
    const { ledger, indexOf } = r;
    this.portfolio = {
      get cash() {
        return usd(ledger.cash);
      },
      get available() {
        return usd(ledger.available);
      },
      get equity() {
        return ledger.equityMicros() / MICROS;
      },
      position(marketId: string, outcome: Outcome = "yes") {
        const m = indexOf.get(marketId);
        if (m === undefined) return 0;
        return usd(ledger.size[2 * m + (outcome === "no" ? 1 : 0)]!);
      },
      get positions() {
        return ledger.positions();
      },
    };
  }
  get time(): number {
    return this.r.now;
  }
  get timestamp(): string {
    return isoOf(this.r.now);
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
    const p = this.r.ledger.last[m]!;
    return Number.isNaN(p) ? undefined : p;
  }
  get openOrders(): readonly OpenOrder[] {
    return this.r.book.openOrders();
  }
  order(order: OrderInput): OrderTicket {
    return this.r.book.place(order);
  }
  cancel(id: string): boolean {
    return this.r.book.cancel(id, "cancelled");
  }
  predict(marketId: string, probability: number): void {
    this.r.scores.predict(marketId, probability);
  }
}
