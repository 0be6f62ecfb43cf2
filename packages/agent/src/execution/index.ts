/**
 * Execution helpers: the ways agents actually work an order. Each returns an `ExecutionReport` that
 * says what it did, order by order (placed, filled, cancelled, rejected), so a bot's log explains
 * every fill. All of them go through `Executor.submit`, where an optional pre-trade check (the risk
 * chain) can refuse an order before it is sent.
 *
 * Helpers that wait for a resting order to fill (`iceberg`, `chase`) follow its fills on the private
 * account stream (`OrderWatcher`): the order is re-read when an event for it arrives, and otherwise
 * only every `safetyPollMs`; while the stream is down, or with `watch: "poll"`, every `pollMs`.
 */
import { randomUUID } from "node:crypto";
import type { Crossbook } from "../client.js";
import { CrossbookApiError } from "../errors.js";
import type { Order, OrderOutcome, OrderRequest, OrderSide } from "../order-types.js";
import { OrderWatcher } from "./order-watcher.js";

export { ORDER_EVENT_TYPES, OrderWatcher, type OrderWatcherOptions } from "./order-watcher.js";

export type Side = OrderSide;
export type Outcome = OrderOutcome;

/** One thing a helper did. */
export interface ExecutionStep {
  at: string;
  action: "placed" | "filled" | "partially_filled" | "cancelled" | "rejected" | "failed" | "skipped";
  order_id?: string;
  market_id: string;
  side?: Side;
  outcome?: Outcome;
  price?: number | null;
  amount?: number;
  filled_amount?: number;
  reason?: string;
}

/** What a helper did and where it ended. */
export interface ExecutionReport {
  helper: string;
  status: "done" | "partial" | "failed";
  /** Contracts filled in total (for arbitrage: pairs held after any unwind). */
  filled: number;
  /** Volume-weighted fill price, null when nothing filled. */
  average_price: number | null;
  steps: ExecutionStep[];
  error?: string;
}

/** A pre-trade check: undefined or `{ allowed: true }` lets the order through. */
export type PreTradeCheck = (
  order: OrderRequest,
) =>
  | Promise<{ allowed: boolean; reason?: string } | undefined>
  | { allowed: boolean; reason?: string }
  | undefined;

export interface ExecutorOptions {
  /** Runs before every order (e.g. `(o) => riskChain.check(o)`); a refusal is a `rejected` step. */
  check?: PreTradeCheck;
  /**
   * How working orders learn of their fills: `"stream"` (default) from the private account stream
   * (`/v1/account/stream`, opened when a helper first waits for a fill), re-reading an order when an
   * event for it arrives; `"poll"` re-reads every `pollMs`, as before the stream existed. A client
   * without `accountStream` (a test double) always polls.
   */
  watch?: "stream" | "poll";
  /**
   * How often working orders are re-read when polling (default 500 ms): with `watch: "poll"`, and
   * while the account stream is not connected. `chase` also re-checks the book this often.
   */
  pollMs?: number;
  /**
   * With the stream connected, a working order is still re-read this often even when no event came
   * (a safety net; default 5,000 ms).
   */
  safetyPollMs?: number;
  /**
   * The account stream is closed this long after the last helper waiting for fills returned
   * (default 5,000 ms; it reopens when needed). `close()` closes it at once.
   */
  streamIdleMs?: number;
  /** How `twap` waits between slices and `watch: "poll"` between polls (stream waits use their own timers). */
  sleep?: (ms: number) => Promise<void>;
  now?: () => Date;
}

/**
 * Places and works orders for an agent. `iceberg` and `chase` follow their orders' fills on the
 * account stream; a long-lived agent calls `close()` when done (or `await using exec = …`), which
 * closes that stream at once instead of `streamIdleMs` later.
 *
 * @example
 * const exec = new Executor(client, { check: (o) => risk.check(o) });
 * try {
 *   const report = await exec.twap({ market_id: id, side: "buy", amount: 100, slices: 5, intervalMs: 60_000, maxSlippage: 0.02 });
 *   for (const step of report.steps) console.log(step.action, step.order_id, step.filled_amount);
 * } finally {
 *   exec.close();
 * }
 */
export class Executor {
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #now: () => Date;
  /** Opened on the first wait for a fill; null: this executor polls (`watch: "poll"`, no `accountStream`). */
  #watcher: OrderWatcher | null | undefined;
  #closed = false;

  constructor(
    readonly client: Crossbook,
    readonly options: ExecutorOptions = {},
  ) {
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#now = options.now ?? (() => new Date());
  }

  #step(step: Omit<ExecutionStep, "at">): ExecutionStep {
    return { at: this.#now().toISOString(), ...step };
  }

  /**
   * Closes the account stream the helpers follow fills on (if one is open). Later helpers poll
   * every `pollMs`; a helper still running goes on by polling.
   */
  close(): void {
    this.#closed = true;
    this.#watcher?.close();
  }

  /** `await using exec = new Executor(client)`: closed when the scope ends. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.close();
  }

  /** The order watcher, or undefined when this executor polls. */
  #watching(): OrderWatcher | undefined {
    if (this.#closed || this.options.watch === "poll") return undefined;
    if (this.#watcher === undefined) {
      const client = this.client as Partial<Crossbook>;
      this.#watcher =
        typeof client.accountStream === "function"
          ? new OrderWatcher({
              open: (o) => this.client.accountStream(o),
              idleCloseMs: this.options.streamIdleMs ?? 5_000,
            })
          : null;
    }
    return this.#watcher ?? undefined;
  }

  get #pollMs(): number {
    return this.options.pollMs ?? 500;
  }

  /** How long to wait for news before re-reading anyway: long while events arrive live, else a poll. */
  #quietMs(watcher: OrderWatcher): number {
    return watcher.live ? (this.options.safetyPollMs ?? 5_000) : this.#pollMs;
  }

  /**
   * Sends one order through the pre-trade check. Never throws for a refusal: returns the step.
   * @example const { order, step } = await exec.submit({ market_id: id, side: "buy", price: 0.4, amount: 10 });
   */
  async submit(order: OrderRequest): Promise<{ order?: Order; step: ExecutionStep }> {
    const base = {
      market_id: order.market_id,
      side: order.side,
      outcome: order.outcome ?? "yes",
      amount: order.amount,
    };
    const verdict = await this.options.check?.(order);
    if (verdict && !verdict.allowed)
      return {
        step: this.#step({ ...base, action: "rejected", reason: `risk: ${verdict.reason ?? "refused"}` }),
      };
    try {
      const placed: Order = await this.client.orders.place({
        ...order,
        client_order_id: order.client_order_id ?? `agent-${randomUUID()}`,
      });
      return {
        order: placed,
        step: this.#step({
          ...base,
          action:
            placed.filled_amount >= placed.amount
              ? "filled"
              : placed.filled_amount > 0
                ? "partially_filled"
                : "placed",
          order_id: placed.id,
          price: placed.average_fill_price ?? placed.price,
          filled_amount: placed.filled_amount,
        }),
      };
    } catch (error) {
      const reason = error instanceof CrossbookApiError ? `${error.code}: ${error.message}` : String(error);
      return { step: this.#step({ ...base, action: "rejected", reason }) };
    }
  }

  /**
   * A limit order (`time_in_force` default GTC).
   * @example await exec.limit({ market_id: id, side: "buy", price: 0.42, amount: 10, time_in_force: "IOC" });
   */
  async limit(order: Omit<OrderRequest, "type"> & { price: number }): Promise<ExecutionReport> {
    const { order: placed, step } = await this.submit({ ...order, type: "limit" });
    return report("limit", [step], placed ? [placed] : []);
  }

  /**
   * A market order that never fills further than `maxSlippage` (a fraction of the best price) from
   * the best level; the rest is cancelled (IOC).
   * @example await exec.market({ market_id: id, side: "buy", amount: 10, maxSlippage: 0.02 });
   */
  async market(order: {
    market_id: string;
    side: Side;
    outcome?: Outcome;
    amount: number;
    maxSlippage?: number;
  }) {
    const { order: placed, step } = await this.submit({
      market_id: order.market_id,
      side: order.side,
      outcome: order.outcome ?? "yes",
      type: "market",
      amount: order.amount,
      max_slippage: order.maxSlippage ?? 0.02,
      time_in_force: "IOC",
    });
    return report("market", [step], placed ? [placed] : []);
  }

  /**
   * Time-weighted: `amount` split into `slices` market orders (with the slippage guard), one every
   * `intervalMs`. Stops early if a slice is refused.
   * @example await exec.twap({ market_id: id, side: "buy", amount: 100, slices: 4, intervalMs: 30_000 });
   */
  async twap(o: {
    market_id: string;
    side: Side;
    outcome?: Outcome;
    amount: number;
    slices: number;
    intervalMs: number;
    maxSlippage?: number;
  }): Promise<ExecutionReport> {
    const steps: ExecutionStep[] = [];
    const orders: Order[] = [];
    const sizes = split(o.amount, o.slices);
    for (let i = 0; i < sizes.length; i++) {
      if (i > 0) await this.#sleep(o.intervalMs);
      const { order, step } = await this.submit({
        market_id: o.market_id,
        side: o.side,
        outcome: o.outcome ?? "yes",
        type: "market",
        amount: sizes[i]!,
        max_slippage: o.maxSlippage ?? 0.02,
        time_in_force: "IOC",
      });
      steps.push(step);
      if (order) orders.push(order);
      if (step.action === "rejected") break;
    }
    return report("twap", steps, orders, o.amount);
  }

  /**
   * Iceberg: shows only `visible` contracts at `price`; when a slice fills, the next is placed.
   * Gives up after `timeoutMs` (default 10 min), cancelling the working slice.
   * @example await exec.iceberg({ market_id: id, side: "sell", price: 0.6, amount: 200, visible: 20 });
   */
  async iceberg(o: {
    market_id: string;
    side: Side;
    outcome?: Outcome;
    price: number;
    amount: number;
    visible: number;
    timeoutMs?: number;
  }): Promise<ExecutionReport> {
    const steps: ExecutionStep[] = [];
    const orders: Order[] = [];
    const deadline = this.#now().getTime() + (o.timeoutMs ?? 600_000);
    let remaining = o.amount;
    const watcher = this.#watching();
    const release = watcher?.hold();
    try {
      while (remaining > 1e-9) {
        // Taken before placing: an event for the slice that arrives before its first wait counts.
        const since = watcher?.checkpoint() ?? 0;
        const { order, step } = await this.submit({
          market_id: o.market_id,
          side: o.side,
          outcome: o.outcome ?? "yes",
          type: "limit",
          price: o.price,
          amount: Math.min(o.visible, remaining),
          time_in_force: "GTC",
        });
        steps.push(step);
        if (!order) break;
        const final = await this.#work(order, deadline, steps, since);
        orders.push(final);
        remaining -= final.filled_amount;
        if (final.filled_amount < final.amount) break; // timed out or cancelled elsewhere
      }
    } finally {
      release?.();
    }
    return report("iceberg", steps, orders, o.amount);
  }

  /**
   * Chase: keeps a limit at the best bid (buy) or best ask (sell), never past `priceCap`, replacing
   * it when the best price moves, until filled or `timeoutMs` (default 5 min). The book is re-checked
   * every `pollMs`; the working order is re-read when the account stream reports an event for it
   * (else every `safetyPollMs`; every `pollMs` when polling).
   * @example await exec.chase({ market_id: id, side: "buy", amount: 50, priceCap: 0.55 });
   */
  async chase(o: {
    market_id: string;
    side: Side;
    amount: number;
    priceCap: number;
    timeoutMs?: number;
  }): Promise<ExecutionReport> {
    const steps: ExecutionStep[] = [];
    const orders: Order[] = [];
    const deadline = this.#now().getTime() + (o.timeoutMs ?? 300_000);
    let remaining = o.amount;
    let working: Order | undefined;
    const watcher = this.#watching();
    const release = watcher?.hold();
    /** The working order's checkpoint (see OrderWatcher) and when it was last read. */
    let since = 0;
    let readAt = 0;
    try {
      while (remaining > 1e-9 && this.#now().getTime() < deadline) {
        const quote = (await this.client.prices.get([o.market_id]))[o.market_id];
        const best = o.side === "buy" ? quote?.best_bid : quote?.best_ask;
        const target =
          best == null ? null : o.side === "buy" ? Math.min(best, o.priceCap) : Math.max(best, o.priceCap);
        if (working && (target === null || Math.abs(working.price - target) > 1e-9)) {
          const final = await this.#cancel(working, steps);
          orders.push(final);
          remaining -= final.filled_amount;
          working = undefined;
        }
        if (!working && target !== null && remaining > 1e-9) {
          since = watcher?.checkpoint() ?? 0;
          const { order, step } = await this.submit({
            market_id: o.market_id,
            side: o.side,
            type: "limit",
            price: target,
            amount: round2(remaining),
            time_in_force: "GTC",
          });
          steps.push(step);
          if (!order) break;
          working = order;
          readAt = Date.now();
        }
        // Wake for the next look at the book in `pollMs`, or sooner when the working order changed.
        let reread = true;
        if (watcher && working) {
          const news = await watcher.changed(working.id, this.#pollMs, since);
          reread = news || !watcher.live || Date.now() - readAt >= this.#quietMs(watcher);
        } else await this.#sleep(this.#pollMs);
        if (working && reread) {
          working = await this.client.orders.get(working.id);
          readAt = Date.now();
          if (working.status === "filled") {
            steps.push(this.#step(fillStep(working)));
            orders.push(working);
            remaining -= working.filled_amount;
            watcher?.forget(working.id);
            working = undefined;
          }
        }
      }
      if (working) {
        const final = await this.#cancel(working, steps);
        orders.push(final);
      }
    } finally {
      release?.();
    }
    return report("chase", steps, orders, o.amount);
  }

  /**
   * Sells a whole position (market order with the slippage guard).
   * @example await exec.closePosition("pos_…", { maxSlippage: 0.03 });
   */
  async closePosition(positionId: string, options: { maxSlippage?: number } = {}): Promise<ExecutionReport> {
    const position = await this.client.positions.get(positionId);
    const free = position.size - position.reserved;
    if (free <= 0)
      return report(
        "closePosition",
        [this.#step({ market_id: position.market_id, action: "skipped", reason: "nothing to sell" })],
        [],
      );
    const result = await this.market({
      market_id: position.market_id,
      side: "sell",
      outcome: position.outcome,
      amount: round2(free),
      ...(options.maxSlippage !== undefined ? { maxSlippage: options.maxSlippage } : {}),
    });
    return { ...result, helper: "closePosition" };
  }

  /**
   * Cancels every open order (or one market's / one side's).
   * @example const r = await exec.cancelAll({ market_id: id });
   */
  async cancelAll(filter: { market_id?: string; side?: Side } = {}): Promise<ExecutionReport> {
    const result = await this.client.orders.cancelAll(filter);
    const steps = result.cancelled_orders.map((o) =>
      this.#step({ market_id: o.market_id, action: "cancelled", order_id: o.id }),
    );
    return { helper: "cancelAll", status: "done", filled: 0, average_price: null, steps };
  }

  /**
   * Two-leg arbitrage on a matched pair: checks the edge from `/v1/prices/compare`, buys the first
   * leg (IOC at its ask), then the second; if the second does not fill, sells what the first bought
   * (unwind). Refuses when the pair is not verified or the edge at `size` is below `minEdge`.
   * @example const r = await exec.arbitrage("xev_…", 20, { minEdge: 0.01 });
   */
  async arbitrage(
    eventOrMatchMarketId: string,
    size: number,
    options: { minEdge?: number; maxSlippage?: number } = {},
  ): Promise<ExecutionReport> {
    const steps: ExecutionStep[] = [];
    const compare = await this.client.prices.compare(eventOrMatchMarketId);
    const arb = compare.arbitrage;
    const refuse = (reason: string) =>
      report(
        "arbitrage",
        [...steps, this.#step({ market_id: eventOrMatchMarketId, action: "skipped", reason })],
        [],
      );
    if (!arb) return refuse("no arbitrage analysis for this event (unmatched, or books unavailable)");
    if (arb.status !== "verified") return refuse(`pair ${arb.match_id} is ${arb.status}, not verified`);
    const edge = arb.avg_edge ?? arb.edge_first_contract ?? 0;
    if (arb.size < size || edge < (options.minEdge ?? 0.005))
      return refuse(
        `edge ${edge.toFixed(4)} at ${arb.size} pairs does not cover ${size} at min edge ${options.minEdge ?? 0.005}`,
      );
    const [first, second] = arb.legs;
    if (!first || !second || first.best_ask === null || second.best_ask === null)
      return refuse("a leg has no ask");
    const slip = options.maxSlippage ?? 0.01;
    const leg = (l: typeof first) =>
      this.submit({
        market_id: l.market_id,
        side: "buy",
        outcome: l.outcome,
        type: "limit",
        price: round2(Math.min(0.99, (l.best_ask ?? 0) * (1 + slip))),
        amount: size,
        time_in_force: "IOC",
      });
    const a = await leg(first);
    steps.push(a.step);
    if (!a.order || a.order.filled_amount <= 0)
      return report("arbitrage", steps, a.order ? [a.order] : [], size);
    const b = await leg(second);
    steps.push(b.step);
    const orders = [a.order, ...(b.order ? [b.order] : [])];
    const unhedged = a.order.filled_amount - (b.order?.filled_amount ?? 0);
    if (unhedged > 1e-9) {
      const unwind = await this.submit({
        market_id: first.market_id,
        side: "sell",
        outcome: first.outcome,
        type: "market",
        amount: round2(unhedged),
        max_slippage: 0.05,
        time_in_force: "IOC",
      });
      steps.push({ ...unwind.step, reason: "unwind: second leg did not fill" });
      if (unwind.order) orders.push(unwind.order);
      return {
        ...report("arbitrage", steps, orders, size),
        status: "partial",
        filled: b.order?.filled_amount ?? 0,
      };
    }
    return { ...report("arbitrage", steps, orders, size), filled: a.order.filled_amount };
  }

  /**
   * Works a resting order until filled, cancelled, or the deadline (then cancels it): re-reads it
   * when the account stream reports news for it (at the latest every `safetyPollMs`, or `pollMs`
   * while the stream is down), or every `pollMs` when polling. `since`: the watcher's checkpoint
   * taken before the order was placed.
   */
  async #work(order: Order, deadline: number, steps: ExecutionStep[], since = 0): Promise<Order> {
    let current = order;
    const watcher = this.#watching();
    while (current.status === "open" || current.status === "pending") {
      const left = deadline - this.#now().getTime();
      if (left <= 0) {
        watcher?.forget(current.id);
        return this.#cancel(current, steps);
      }
      if (watcher) await watcher.changed(current.id, Math.min(left, this.#quietMs(watcher)), since);
      else await this.#sleep(this.#pollMs);
      current = await this.client.orders.get(current.id);
    }
    watcher?.forget(current.id);
    steps.push(
      this.#step(
        current.status === "filled" ? fillStep(current) : { ...fillStep(current), action: "cancelled" },
      ),
    );
    return current;
  }

  async #cancel(order: Order, steps: ExecutionStep[]): Promise<Order> {
    try {
      await this.client.orders.cancel(order.id);
      // The cancel answer is short; the full order says what filled before it.
      const cancelled = await this.client.orders.get(order.id);
      steps.push(this.#step({ ...fillStep(cancelled), action: "cancelled" }));
      return cancelled;
    } catch (error) {
      // Filled in the meantime: that is the answer.
      if (error instanceof CrossbookApiError && error.code === "ORDER_NOT_CANCELLABLE") {
        const final = await this.client.orders.get(order.id);
        steps.push(this.#step(fillStep(final)));
        return final;
      }
      throw error;
    }
  }
}

function fillStep(o: Order): Omit<ExecutionStep, "at"> {
  return {
    action: o.filled_amount >= o.amount ? "filled" : o.filled_amount > 0 ? "partially_filled" : "cancelled",
    order_id: o.id,
    market_id: o.market_id,
    side: o.side,
    outcome: o.outcome,
    price: o.average_fill_price ?? o.price,
    amount: o.amount,
    filled_amount: o.filled_amount,
  };
}

function round2(n: number): number {
  return Math.floor(n * 100 + 1e-6) / 100;
}

/** `amount` in `parts` slices of whole cents of a contract, the remainder on the last. */
export function split(amount: number, parts: number): number[] {
  const n = Math.max(1, Math.floor(parts));
  const each = round2(amount / n);
  const out = Array.from({ length: n }, () => each);
  out[n - 1] = round2(amount - each * (n - 1));
  return out.filter((x) => x > 0);
}

function report(helper: string, steps: ExecutionStep[], orders: Order[], target?: number): ExecutionReport {
  const byId = new Map(orders.map((o) => [o.id, o]));
  let filled = 0;
  let notional = 0;
  for (const o of byId.values()) {
    // An arbitrage's unwind sells are not fills of the pair.
    if (helper === "arbitrage" && o.side === "sell") continue;
    filled += o.filled_amount;
    notional += o.filled_amount * (o.average_fill_price ?? o.price);
  }
  const failed = steps.length > 0 && steps.every((s) => s.action === "rejected" || s.action === "skipped");
  const status = failed ? "failed" : target !== undefined && filled + 1e-9 < target ? "partial" : "done";
  return {
    helper,
    status,
    filled: round2(filled),
    average_price: filled > 0 ? notional / filled : null,
    steps,
  };
}
