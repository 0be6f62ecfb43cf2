/**
 * Alerts evaluated in the agent itself, with callbacks: on a market's price (from the live stream),
 * on a position's unrealized PnL and on the account's total PnL (polled). Each alert fires once when
 * its condition becomes true and re-arms when it becomes false again, like the server's alerts.
 */
import type { Crossbook } from "../client.js";
import type { PriceStream, PriceUpdate } from "../stream.js";

export type AlertComparison = "above" | "below";

export interface AlertFired {
  id: string;
  kind: "price" | "position_pnl" | "total_pnl";
  subject: string;
  comparison: AlertComparison;
  threshold: number;
  value: number;
  at: string;
}

interface Rule {
  id: string;
  kind: AlertFired["kind"];
  subject: string;
  comparison: AlertComparison;
  threshold: number;
  callback: (fired: AlertFired) => void;
  armed: boolean;
}

export interface AlertWatcherOptions {
  /** How often positions are polled for PnL alerts (default 5,000 ms). */
  pollMs?: number;
}

/**
 * Watches prices and PnL and calls you back.
 *
 * @example
 * const alerts = new AlertWatcher(client);
 * alerts.price("kalshi:KXFED-26DEC-T4.00", "above", 0.6, (a) => console.log("crossed", a.value));
 * alerts.totalPnl("below", -250, () => executor.cancelAll());
 * // … later
 * alerts.close();
 */
export class AlertWatcher {
  readonly #rules = new Map<string, Rule>();
  #stream: PriceStream | undefined;
  #timer: NodeJS.Timeout | undefined;
  #next = 0;

  constructor(
    readonly client: Crossbook,
    readonly options: AlertWatcherOptions = {},
  ) {}

  /** Fires when the market's price crosses the threshold. Returns the alert id. */
  price(
    marketId: string,
    comparison: AlertComparison,
    threshold: number,
    callback: (fired: AlertFired) => void,
  ): string {
    const id = this.#add("price", marketId, comparison, threshold, callback);
    if (!this.#stream) {
      this.#stream = this.client.prices.stream([marketId]);
      this.#stream.on("update", (u: PriceUpdate) => this.#onPrice(u));
    } else this.#stream.subscribe([marketId]);
    return id;
  }

  /** Fires when a position's (by id or market id) unrealized PnL crosses the threshold (USD). */
  positionPnl(
    positionOrMarketId: string,
    comparison: AlertComparison,
    threshold: number,
    callback: (f: AlertFired) => void,
  ) {
    const id = this.#add("position_pnl", positionOrMarketId, comparison, threshold, callback);
    this.#startPolling();
    return id;
  }

  /** Fires when realized + unrealized PnL across open positions crosses the threshold (USD). */
  totalPnl(comparison: AlertComparison, threshold: number, callback: (fired: AlertFired) => void): string {
    const id = this.#add("total_pnl", "account", comparison, threshold, callback);
    this.#startPolling();
    return id;
  }

  /** Removes an alert. */
  remove(id: string): void {
    this.#rules.delete(id);
  }

  /** Stops the stream and the polling. */
  close(): void {
    this.#stream?.close();
    clearInterval(this.#timer);
  }

  /** Checks position and PnL alerts now (also called on every poll). */
  async checkPositions(): Promise<void> {
    const rules = [...this.#rules.values()].filter((r) => r.kind !== "price");
    if (rules.length === 0) return;
    const positions: Array<{
      id: string;
      market_id: string;
      unrealized_pnl: number | null;
      realized_pnl: number;
    }> = [];
    for await (const p of this.client.paginate((q) =>
      this.client.positions.list({ ...q, status: "open" } as never),
    ))
      positions.push(p as (typeof positions)[number]);
    let total = 0;
    for (const p of positions) total += p.realized_pnl + (p.unrealized_pnl ?? 0);
    for (const rule of rules) {
      if (rule.kind === "total_pnl") this.#evaluate(rule, total);
      else {
        const p = positions.find((x) => x.id === rule.subject || x.market_id === rule.subject);
        if (p?.unrealized_pnl != null) this.#evaluate(rule, p.unrealized_pnl);
      }
    }
  }

  #add(
    kind: Rule["kind"],
    subject: string,
    comparison: AlertComparison,
    threshold: number,
    callback: Rule["callback"],
  ) {
    const id = `local_${++this.#next}`;
    this.#rules.set(id, { id, kind, subject, comparison, threshold, callback, armed: true });
    return id;
  }

  #startPolling(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.checkPositions().catch(() => {}), this.options.pollMs ?? 5_000);
    this.#timer.unref?.();
  }

  #onPrice(update: PriceUpdate): void {
    if (update.price === null) return;
    for (const rule of this.#rules.values())
      if (rule.kind === "price" && rule.subject === update.market_id) this.#evaluate(rule, update.price);
  }

  #evaluate(rule: Rule, value: number): void {
    const met = rule.comparison === "above" ? value > rule.threshold : value < rule.threshold;
    if (met && rule.armed) {
      rule.armed = false;
      rule.callback({
        id: rule.id,
        kind: rule.kind,
        subject: rule.subject,
        comparison: rule.comparison,
        threshold: rule.threshold,
        value,
        at: new Date().toISOString(),
      });
    } else if (!met) rule.armed = true;
  }
}
