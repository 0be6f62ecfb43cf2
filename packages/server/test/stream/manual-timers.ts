/**
 * A manual clock that also runs the timers set on it, for the stream hub's tests: moving it runs
 * every timer that falls due, in time order and with the clock at that timer's time, so heartbeats,
 * the auth deadline and the flush interval happen when a test says so instead of after real sleeps.
 * It is a ManualClock, so it can be the whole test app's clock as well.
 */
import { ManualClock } from "../../src/infra/clock";
import type { Cancel, Timers } from "../../src/stream/timers";

interface Pending {
  at: number;
  /** 0 for a one-off timer. */
  every: number;
  fn: () => void;
  /** Set order: timers due at the same time run in it, as Node's do. */
  order: number;
}

export class ManualTimers extends ManualClock implements Timers {
  #pending: Pending[] = [];
  #order = 0;

  after(ms: number, fn: () => void): Cancel {
    return this.#add(Math.max(0, ms), 0, fn);
  }

  every(ms: number, fn: () => void): Cancel {
    const period = Math.max(1, ms);
    return this.#add(period, period, fn);
  }

  /** Timers still waiting to run. */
  get pending(): number {
    return this.#pending.length;
  }

  override advance(ms: number): void {
    this.set(this.now() + ms);
  }

  override set(ms: number): void {
    for (;;) {
      const next = this.#due(ms);
      if (!next) break;
      super.set(Math.max(this.now(), next.at));
      if (next.every > 0) {
        next.at += next.every;
        next.order = this.#order++;
      } else {
        this.#remove(next);
      }
      next.fn();
    }
    super.set(ms);
  }

  #add(ms: number, every: number, fn: () => void): Cancel {
    const timer: Pending = { at: this.now() + ms, every, fn, order: this.#order++ };
    this.#pending.push(timer);
    return () => this.#remove(timer);
  }

  #remove(timer: Pending): void {
    const at = this.#pending.indexOf(timer);
    if (at >= 0) this.#pending.splice(at, 1);
  }

  /** The earliest timer due by `until`. */
  #due(until: number): Pending | undefined {
    let best: Pending | undefined;
    for (const t of this.#pending) {
      if (t.at > until) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.order < best.order)) best = t;
    }
    return best;
  }
}
