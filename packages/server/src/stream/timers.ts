/**
 * The stream hub's own clock: its heartbeat, the deadline for an `auth` message, the close
 * handshake's deadline, the flush interval, the length of a flush slice and the stall timeout all
 * read `now()` and schedule through it, so the hub's tests move a manual clock instead of sleeping.
 * Production's is monotonic, not wall time: a wall clock set back would hold every connection's next
 * write until it caught up.
 */
import type { Clock } from "../infra/clock";

/** Stops a timer; harmless once it has run or been stopped. */
export type Cancel = () => void;

export interface Timers extends Clock {
  /**
   * Runs `fn` once, `ms` from now. Only a timer with `keepAlive` holds the process open: a flush
   * waiting out its interval has writes due, while a deadline is moot once nothing else runs.
   */
  after(ms: number, fn: () => void, keepAlive?: boolean): Cancel;
  /** Runs `fn` every `ms` until cancelled; never holds the process open. */
  every(ms: number, fn: () => void): Cancel;
}

export const monotonicTimers: Timers = {
  now: () => performance.timeOrigin + performance.now(),
  after(ms, fn, keepAlive = false) {
    const timer = setTimeout(fn, ms);
    if (!keepAlive) timer.unref();
    return () => clearTimeout(timer);
  },
  every(ms, fn) {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};
