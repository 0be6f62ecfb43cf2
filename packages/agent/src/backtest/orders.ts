/**
 * Order handling for the replay: checks and places the strategy's orders, keeps the resting ones
 * per market, matches them against each replayed candle by the sandbox's fill rules (README), and
 * cancels them. When and at what price an order fills is decided here; what the fill costs and
 * does to cash and positions is the ledger's (accounting.ts). Trades, rejections and cancellations
 * are recorded here, in the order they happen.
 */
import { cost, type Ledger, usd } from "./accounting.js";
import { MICROS, toMicros, venueOf } from "./fees.js";
import { type CandleTape, isoOf } from "./tape.js";
import type {
  CancelledOrder,
  FeeInput,
  OpenOrder,
  OrderInput,
  OrderTicket,
  RejectedOrder,
  RejectReason,
  SlippageFunction,
  Trade,
} from "./types.js";

/**
 * The default `max_slippage` of a market order, as in the API.
 *
 * @example
 * ctx.order({ market_id, side: "buy", type: "market", amount: 5 }); // max_slippage 0.05
 */
export const DEFAULT_MAX_SLIPPAGE = 0.05;

// Orders keep their side, outcome and type as indexes into these lists.
const SIDES = ["buy", "sell"] as const;
const OUTCOMES = ["yes", "no"] as const;
const TYPES = ["limit", "market"] as const;
const BUY = 0;
const YES = 0;
const LIMIT = 0;

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

/** The replay's current time (epoch ms), which stamps every record. */
export interface Clock {
  readonly now: number;
}

/**
 * The open orders of a run and their outcomes. Orders are numbered `bt_1`, `bt_2`, … in the
 * order placed, rejected ones included.
 *
 * @example
 * const book = new OrderBook(tape, indexOf, ledger, 0.01, resolved, clock);
 * book.place({ market_id: "kalshi:A", side: "buy", price: 0.4, amount: 10 }); // { id: "bt_1", status: "open" }
 * book.fillAt(0, row); // fills what the candle at `row` reaches
 */
export class OrderBook {
  /** Open orders per market, in the order they were placed. */
  readonly open: SimOrder[][];
  /** How many orders each market has open (the replay skips matching where there are none). */
  readonly openCount: Int32Array;
  readonly trades: Trade[] = [];
  readonly rejected: RejectedOrder[] = [];
  readonly cancelled: CancelledOrder[] = [];
  private readonly byId = new Map<string, SimOrder>();
  private seq = 0;

  /**
   * @param resolved per market, non-zero once it resolved (set by the replay): orders on it are refused
   */
  constructor(
    private readonly tape: CandleTape,
    private readonly indexOf: ReadonlyMap<string, number>,
    private readonly ledger: Ledger,
    private readonly slippage: number | SlippageFunction,
    private readonly resolved: Uint8Array,
    private readonly clock: Clock,
  ) {
    const n = indexOf.size;
    this.open = Array.from({ length: n }, () => []);
    this.openCount = new Int32Array(n);
  }

  /** Checks and places an order; a refused one is recorded in `rejected` with its reason. */
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
    const ledger = this.ledger;
    const slot = 2 * m + outcome;
    if (side !== BUY && ledger.unoffered(slot) < size) {
      return this.reject(
        id,
        input,
        "insufficient_position",
        `selling ${input.amount}, ${usd(ledger.unoffered(slot))} held and not already offered`,
      );
    }
    // A limit order that crosses the last price would take liquidity (taker); otherwise it rests (maker).
    let liquidity: "maker" | "taker" = "taker";
    if (type === LIMIT) {
      const lastYes = ledger.last[m]!;
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
      placedAt: this.clock.now,
    };
    if (type === LIMIT && side === BUY) {
      const lock = cost(price, size) + this.feeOf(order, price);
      if (lock > ledger.available) {
        return this.reject(
          id,
          input,
          "insufficient_cash",
          `needs ${usd(lock)} (cost and fee), ${usd(ledger.available)} available`,
        );
      }
      order.lock = lock;
      ledger.lockCash(lock);
    }
    if (side !== BUY) ledger.offer(slot, size);
    this.open[m]!.push(order);
    this.openCount[m]!++;
    this.byId.set(id, order);
    return { id, status: "open" };
  }

  /** Cancels an open order by id; false when it is not open. */
  cancel(id: string, reason: CancelledOrder["reason"]): boolean {
    const order = this.byId.get(id);
    if (!order) return false;
    this.cancelOrder(order, reason);
    return true;
  }

  /** Cancels every open order of market `m`. */
  cancelMarket(m: number, reason: CancelledOrder["reason"]): void {
    for (const order of [...this.open[m]!]) this.cancelOrder(order, reason);
  }

  /** Cancels every open order, market by market. */
  cancelAll(reason: CancelledOrder["reason"]): void {
    for (let m = 0; m < this.open.length; m++) this.cancelMarket(m, reason);
  }

  /** Fills the open orders of market `m` that candle row `i` reaches, in the order they were placed. */
  fillAt(m: number, i: number): void {
    const tape = this.tape;
    const lowYes = toMicros(tape.low[i]!);
    const highYes = toMicros(tape.high[i]!);
    const openYes = toMicros(tape.open[i]!);
    const list = this.open[m]!;
    let j = 0;
    while (j < list.length) {
      const order = list[j]!;
      this.tryFill(order, i, lowYes, highYes, openYes);
      if (list[j] === order) j++; // still open; else it left the list and the next one moved here
    }
  }

  /** The open orders in the order placed (a new array). */
  openOrders(): OpenOrder[] {
    const all: SimOrder[] = [];
    for (const list of this.open) all.push(...list);
    all.sort((a, b) => Number(a.id.slice(3)) - Number(b.id.slice(3)));
    return all.map((o) => ({
      id: o.id,
      market_id: o.market_id,
      side: SIDES[o.side],
      outcome: OUTCOMES[o.outcome],
      type: TYPES[o.type],
      price: o.price >= 0 ? usd(o.price) : null,
      amount: o.amount,
      placed_at: isoOf(o.placedAt),
    }));
  }

  private tryFill(order: SimOrder, i: number, lowYes: number, highYes: number, openYes: number): void {
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
            volume: this.tape.volume[i]!,
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

  /** Fills an order in full at `price` (micros), unless the cash cannot pay for it. */
  private fill(order: SimOrder, price: number): void {
    const ledger = this.ledger;
    const fee = this.feeOf(order, price);
    const value = cost(price, order.size);
    let realized = 0;
    if (order.side === BUY) {
      const available = ledger.available + order.lock;
      if (value + fee > available) {
        this.rejectAtFill(
          order,
          "insufficient_cash",
          `needs ${usd(value + fee)} (cost and fee), ${usd(available)} available`,
        );
        return;
      }
      this.remove(order);
      ledger.buy(order.m, order.outcome, order.size, value, fee);
    } else {
      if (ledger.cash + value - fee < 0) {
        this.rejectAtFill(order, "insufficient_cash", `fee ${usd(fee)} above the proceeds and cash`);
        return;
      }
      this.remove(order);
      realized = ledger.sell(order.m, order.outcome, order.size, value, fee);
    }
    this.trades.push({
      order_id: order.id,
      timestamp: isoOf(this.clock.now),
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

  /** The run's fee for filling `order` at `priceMicros`, micro-USD. */
  private feeOf(order: SimOrder, priceMicros: number): number {
    const input: FeeInput = {
      market_id: order.market_id,
      venue: venueOf(order.market_id),
      side: SIDES[order.side],
      outcome: OUTCOMES[order.outcome],
      price: usd(priceMicros),
      amount: order.amount,
      liquidity: order.liquidity,
    };
    return this.ledger.fee(input, order.size, priceMicros);
  }

  /** Takes an order off its market (filled, cancelled, rejected at fill time) and frees what it held. */
  private remove(order: SimOrder): void {
    const list = this.open[order.m]!;
    const at = list.indexOf(order);
    if (at >= 0) list.splice(at, 1);
    this.openCount[order.m]!--;
    this.byId.delete(order.id);
    if (order.lock > 0) {
      this.ledger.unlockCash(order.lock);
      order.lock = 0;
    }
    if (order.side !== BUY) this.ledger.unoffer(2 * order.m + order.outcome, order.size);
  }

  private cancelOrder(order: SimOrder, reason: CancelledOrder["reason"]): void {
    this.remove(order);
    this.cancelled.push({ ...this.ended(order), reason });
  }

  private rejectAtFill(order: SimOrder, reason: RejectReason, message: string): void {
    this.remove(order);
    this.rejected.push({ ...this.ended(order), reason, message });
  }

  /** Records an order refused at placement, as far as its fields can be read. */
  private reject(
    id: string,
    input: Partial<OrderInput> | undefined,
    reason: RejectReason,
    message: string,
  ): OrderTicket {
    const type = input?.type ?? "limit";
    this.rejected.push({
      order_id: id,
      timestamp: isoOf(this.clock.now),
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

  /** What the cancelled and rejected lists say of an order taken off now. */
  private ended(order: SimOrder): Omit<CancelledOrder, "reason"> {
    return {
      order_id: order.id,
      timestamp: isoOf(this.clock.now),
      market_id: order.market_id,
      side: SIDES[order.side],
      outcome: OUTCOMES[order.outcome],
      type: TYPES[order.type],
      price: order.price >= 0 ? usd(order.price) : null,
      amount: order.amount,
    };
  }
}
