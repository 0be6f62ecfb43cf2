/**
 * The replay's account: cash and the cash held back by resting buys, positions with their cost
 * basis and the contracts offered by resting sells, fees paid, and the PnL of every position that
 * closed. Kept apart from order handling so that what a fill costs, what a resolution pays and what
 * the account is worth are decided in one place. Money and contracts are integer micro-units
 * (1e-6), which keeps results exact and deterministic.
 */
import { type FeeRule, MICROS } from "./fees.js";
import type { FeeInput, PositionView } from "./types.js";

const OUTCOMES = ["yes", "no"] as const;

/**
 * Micro-units as units (USD or contracts).
 *
 * @example
 * usd(1_250_000); // 1.25
 */
export const usd = (micros: number): number => micros / MICROS;

/**
 * What `sizeMicros` contracts at `priceMicros` cost, micro-USD, rounded to the nearest.
 *
 * @example
 * cost(450_000, 10_000_000); // 4_500_000 ($4.50)
 */
export const cost = (priceMicros: number, sizeMicros: number): number =>
  Math.round((priceMicros * sizeMicros) / MICROS);

/**
 * Cash, positions, fees and PnL of one run, micros. Positions are kept per market and outcome in
 * flat arrays at index `2 × market + outcome` (0 YES, 1 NO), so valuing the account reads typed
 * arrays only.
 *
 * @example
 * const ledger = new Ledger(["kalshi:A"], 1_000_000_000, feeRule({}));
 * ledger.buy(0, 0, 10_000_000, cost(400_000, 10_000_000), 0);
 * ledger.last[0] = 0.45;
 * ledger.equityMicros(); // 1_000_500_000
 */
export class Ledger {
  /** Cash, micro-USD. Never negative. */
  cash: number;
  /** Cash held back by resting limit buys (cost plus fee at the limit). */
  locked = 0;
  feesPaid = 0;
  /** Each market's last YES close: the mark of its positions (NaN before its first candle). */
  readonly last: Float64Array;
  /** Contracts held, per market and outcome. */
  readonly size: Float64Array;
  /** Cost basis (prices paid plus buy fees) of the contracts held. */
  readonly basis: Float64Array;
  /** Contracts offered by resting sells (not sellable again). */
  readonly offered: Float64Array;
  /** PnL of the position open in a slot since it was last flat. */
  readonly roundTrip: Float64Array;
  /** PnL of every position closed (sold back to 0, or resolved), in the order they closed. */
  readonly closedPnls: number[] = [];
  /** Markets with a position, and each market's place in that list (-1: none). */
  readonly held: number[] = [];
  readonly heldAt: Int32Array;

  constructor(
    readonly markets: readonly string[],
    /** The starting cash, micro-USD. */
    readonly initialMicros: number,
    private readonly feeRule: FeeRule,
  ) {
    const n = markets.length;
    this.cash = initialMicros;
    this.last = new Float64Array(n).fill(Number.NaN);
    this.size = new Float64Array(2 * n);
    this.basis = new Float64Array(2 * n);
    this.offered = new Float64Array(2 * n);
    this.roundTrip = new Float64Array(2 * n);
    this.heldAt = new Int32Array(n).fill(-1);
  }

  /** Cash not held back by resting buys. */
  get available(): number {
    return this.cash - this.locked;
  }

  /** The run's fee for one fill of `sizeMicros` contracts at `priceMicros`, micro-USD. */
  fee(input: FeeInput, sizeMicros: number, priceMicros: number): number {
    return this.feeRule(input, sizeMicros, priceMicros);
  }

  /** Holds cash back for a resting buy. */
  lockCash(micros: number): void {
    this.locked += micros;
  }

  unlockCash(micros: number): void {
    this.locked -= micros;
  }

  /** Contracts of a slot held and not already offered by a resting sell. */
  unoffered(slot: number): number {
    return this.size[slot]! - this.offered[slot]!;
  }

  /** Marks contracts of a slot as offered by a resting sell. */
  offer(slot: number, sizeMicros: number): void {
    this.offered[slot]! += sizeMicros;
  }

  unoffer(slot: number, sizeMicros: number): void {
    this.offered[slot]! -= sizeMicros;
  }

  /** A buy fills: pays cost and fee; the fee goes into the cost basis. */
  buy(m: number, outcome: 0 | 1, sizeMicros: number, value: number, fee: number): void {
    const slot = 2 * m + outcome;
    this.cash -= value + fee;
    if (this.size[slot] === 0) this.roundTrip[slot] = 0;
    this.size[slot]! += sizeMicros;
    this.basis[slot]! += value + fee;
    this.feesPaid += fee;
    this.hold(m);
  }

  /**
   * A sell fills: receives the proceeds less the fee, and gives up the sold share of the cost
   * basis. Returns the realized PnL; a position sold back to 0 closes its round trip.
   */
  sell(m: number, outcome: 0 | 1, sizeMicros: number, value: number, fee: number): number {
    const slot = 2 * m + outcome;
    const held = this.size[slot]!;
    const slice =
      sizeMicros >= held ? this.basis[slot]! : Math.round((this.basis[slot]! * sizeMicros) / held);
    const realized = value - fee - slice;
    this.cash += value - fee;
    this.size[slot] = held - sizeMicros;
    this.basis[slot]! -= slice;
    this.roundTrip[slot]! += realized;
    this.feesPaid += fee;
    if (this.size[slot] === 0) {
      this.basis[slot] = 0;
      this.closedPnls.push(this.roundTrip[slot]!);
      this.roundTrip[slot] = 0;
      this.unholdIfFlat(m);
    }
    return realized;
  }

  /** A market resolves: the winning outcome's contracts pay 1 each, the others 0. Returns the payout. */
  settle(m: number, winner: 0 | 1): number {
    let payout = 0;
    for (let o = 0; o < 2; o++) {
      const slot = 2 * m + o;
      const held = this.size[slot]!;
      if (held === 0) continue;
      const paid = o === winner ? held : 0;
      payout += paid;
      this.roundTrip[slot]! += paid - this.basis[slot]!;
      this.closedPnls.push(this.roundTrip[slot]!);
      this.roundTrip[slot] = 0;
      this.size[slot] = 0;
      this.basis[slot] = 0;
    }
    this.cash += payout;
    this.unholdIfFlat(m);
    return payout;
  }

  /** Cash plus positions at their marks (the last close; the cost basis before any candle), micros. */
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

  /** The open positions, by market then outcome, at their marks. */
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

  private hold(m: number): void {
    if (this.heldAt[m] !== -1) return;
    this.heldAt[m] = this.held.length;
    this.held.push(m);
  }

  private unholdIfFlat(m: number): void {
    const at = this.heldAt[m]!;
    if (at === -1 || this.size[2 * m] !== 0 || this.size[2 * m + 1] !== 0) return;
    const lastHeld = this.held.pop()!;
    if (lastHeld !== m) {
      this.held[at] = lastHeld;
      this.heldAt[lastHeld] = at;
    }
    this.heldAt[m] = -1;
  }
}
