/**
 * The in-memory trigger index that lets every quote update be checked against its market's alerts
 * without looking at any other alert. Per market and condition, alerts sit in two ladders sorted by
 * threshold: `armed` (may fire) and `waiting` (fired, repeat, waiting to cross back). Because the
 * alerts an update fires are always a contiguous end of the armed ladder (for `price_above` at v:
 * every threshold below v) and the ones it re-arms an end of the waiting ladder, one binary search
 * per ladder finds them: O(log n) for an update that changes nothing; an update that fires or
 * re-arms alerts also moves them between ladders (array splices, cheap at the sizes one market has).
 *
 * Pure and synchronous: the store is the alerts service's business. Values and thresholds are
 * integers scaled by 1,000,000 (micro-units of price, micro-percent of the 24-hour change).
 */

export const CONDITIONS = [
  "price_above",
  "price_below",
  "change_pct_24h_above",
  "change_pct_24h_below",
] as const;
export type Condition = (typeof CONDITIONS)[number];

/** Which quote figure a condition watches. */
export function watchesChange(condition: Condition): boolean {
  return condition === "change_pct_24h_above" || condition === "change_pct_24h_below";
}

function isAbove(condition: Condition): boolean {
  return condition === "price_above" || condition === "change_pct_24h_above";
}

/** The condition holds: the value is strictly beyond the threshold. */
export function conditionHolds(condition: Condition, value: number, threshold: number): boolean {
  return isAbove(condition) ? value > threshold : value < threshold;
}

/**
 * The value is strictly back on the other side, which re-arms a repeating alert. A value exactly at
 * the threshold neither fires nor re-arms, so a price sitting on the line cannot flap.
 */
export function crossedBack(condition: Condition, value: number, threshold: number): boolean {
  return isAbove(condition) ? value < threshold : value > threshold;
}

export interface Watch {
  readonly id: string;
  readonly marketId: string;
  readonly condition: Condition;
  readonly threshold: number;
  readonly repeat: boolean;
  armed: boolean;
  /** Times fired as this process believes; the store's `trigger_count`. */
  count: number;
  /** Opaque to the index: the owner's note of when it placed the watch. */
  stamp: number;
}

export interface Transition {
  kind: "fire" | "rearm";
  watch: Watch;
  /** The `trigger_count` the store must still hold for the transition to apply. */
  expectedCount: number;
  /** The value that caused it. */
  value: number;
}

/** Watches sorted by threshold (ties in insertion order). */
class Ladder {
  readonly items: Watch[] = [];

  /** How many thresholds are < value. */
  below(value: number): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.threshold < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** How many thresholds are <= value. */
  atOrBelow(value: number): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.threshold <= value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(watch: Watch): void {
    this.items.splice(this.atOrBelow(watch.threshold), 0, watch);
  }

  remove(watch: Watch): boolean {
    for (let i = this.below(watch.threshold); i < this.items.length; i++) {
      const item = this.items[i]!;
      if (item.threshold !== watch.threshold) break;
      if (item === watch) {
        this.items.splice(i, 1);
        return true;
      }
    }
    return false;
  }
}

class MarketWatches {
  readonly armed = new Map<Condition, Ladder>(CONDITIONS.map((c) => [c, new Ladder()]));
  readonly waiting = new Map<Condition, Ladder>(CONDITIONS.map((c) => [c, new Ladder()]));
  size = 0;

  ladder(watch: Watch): Ladder {
    return (watch.armed ? this.armed : this.waiting).get(watch.condition)!;
  }
}

const NONE: readonly Transition[] = Object.freeze([]);

export class TriggerIndex {
  readonly #markets = new Map<string, MarketWatches>();
  readonly #byId = new Map<string, Watch>();

  get size(): number {
    return this.#byId.size;
  }

  get(id: string): Watch | undefined {
    return this.#byId.get(id);
  }

  ids(): IterableIterator<string> {
    return this.#byId.keys();
  }

  marketIds(): string[] {
    return [...this.#markets.keys()];
  }

  /** Adds a watch, replacing one with the same id. */
  put(watch: Watch): void {
    this.remove(watch.id);
    let market = this.#markets.get(watch.marketId);
    if (!market) {
      market = new MarketWatches();
      this.#markets.set(watch.marketId, market);
    }
    market.ladder(watch).insert(watch);
    market.size += 1;
    this.#byId.set(watch.id, watch);
  }

  remove(id: string): Watch | undefined {
    const watch = this.#byId.get(id);
    if (!watch) return undefined;
    this.#byId.delete(id);
    const market = this.#markets.get(watch.marketId)!;
    market.ladder(watch).remove(watch);
    market.size -= 1;
    if (market.size === 0) this.#markets.delete(watch.marketId);
    return watch;
  }

  /**
   * Applies one market update and returns what changed. Fired watches leave the armed ladder at
   * once (so nothing fires twice while its write is in flight): repeating ones wait to cross back,
   * one-shot ones leave the index. A null figure changes nothing.
   */
  evaluate(marketId: string, price: number | null, changeMicroPct: number | null): readonly Transition[] {
    const market = this.#markets.get(marketId);
    if (!market) return NONE;
    let out: Transition[] | undefined;
    for (const condition of CONDITIONS) {
      const value = watchesChange(condition) ? changeMicroPct : price;
      if (value === null) continue;
      const armed = market.armed.get(condition)!;
      const waiting = market.waiting.get(condition)!;
      if (armed.items.length === 0 && waiting.items.length === 0) continue;
      let rearmed: Watch[];
      let fired: Watch[];
      if (isAbove(condition)) {
        rearmed = waiting.items.splice(waiting.atOrBelow(value));
        fired = armed.items.splice(0, armed.below(value));
      } else {
        rearmed = waiting.items.splice(0, waiting.below(value));
        fired = armed.items.splice(armed.atOrBelow(value));
      }
      if (rearmed.length === 0 && fired.length === 0) continue;
      out ??= [];
      for (const watch of rearmed) {
        watch.armed = true;
        armed.insert(watch);
        out.push({ kind: "rearm", watch, expectedCount: watch.count, value });
      }
      for (const watch of fired) out.push(this.#fire(market, watch, value));
    }
    return out ?? NONE;
  }

  /** Applies the current figures to one watch only (a new alert meeting the market as it is). */
  check(id: string, price: number | null, changeMicroPct: number | null): Transition | undefined {
    const watch = this.#byId.get(id);
    if (!watch) return undefined;
    const value = watchesChange(watch.condition) ? changeMicroPct : price;
    if (value === null) return undefined;
    const market = this.#markets.get(watch.marketId)!;
    if (watch.armed && conditionHolds(watch.condition, value, watch.threshold)) {
      market.ladder(watch).remove(watch);
      return this.#fire(market, watch, value);
    }
    if (!watch.armed && crossedBack(watch.condition, value, watch.threshold)) {
      market.ladder(watch).remove(watch);
      watch.armed = true;
      market.ladder(watch).insert(watch);
      return { kind: "rearm", watch, expectedCount: watch.count, value };
    }
    return undefined;
  }

  /** `watch` has already left its armed ladder. */
  #fire(market: MarketWatches, watch: Watch, value: number): Transition {
    const transition: Transition = { kind: "fire", watch, expectedCount: watch.count, value };
    watch.count += 1;
    watch.armed = false;
    if (watch.repeat) {
      market.waiting.get(watch.condition)!.insert(watch);
    } else {
      this.#byId.delete(watch.id);
      market.size -= 1;
      if (market.size === 0) this.#markets.delete(watch.marketId);
    }
    return transition;
  }
}
