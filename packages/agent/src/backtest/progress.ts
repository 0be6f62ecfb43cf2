/** Progress of a replay: a callback about every 1 %, and a stderr line every ~2 s on long runs. */
import type { Progress } from "./types.js";

/**
 * How often the stderr line is written, ms (and the run length before the first one).
 *
 * @example
 * // backtest: 1,200,000 / 5,000,000 candles (24.0 %), 2.0 s, 600,000 candles/s
 */
export const PROGRESS_LOG_MS = 2000;

/**
 * @example
 * let next = tracker.nextCheck;
 * for (let i = 1; i <= total; i++) if (i === next) next = tracker.check(i);
 * tracker.finish(total);
 */
export interface ProgressTracker {
  /** The first `done` count at which `check` must be called (-1: never). */
  readonly nextCheck: number;
  /** Reports `done` candles; returns the next count at which to call it. */
  check(done: number): number;
  /** Reports the end of the replay. */
  finish(done: number): void;
}

const count = (n: number) => n.toLocaleString("en-US");

/**
 * Checks happen every ~1 % of the run (at most every 65,536 candles), so the hot loop only compares counts.
 *
 * @example
 * const tracker = createProgress(total, (p) => console.log(p.pct), true);
 */
export function createProgress(
  total: number,
  onProgress: ((progress: Progress) => void) | undefined,
  log: boolean,
  write: (line: string) => void = (line) => process.stderr.write(line),
): ProgressTracker {
  const chunk = Math.max(1, Math.min(65_536, Math.ceil(total / 100)));
  const started = performance.now();
  let nextLog = started + PROGRESS_LOG_MS;
  let logged = false;
  let reported = -1;
  const report = (done: number) => {
    reported = done;
    onProgress?.({ done, total, pct: total > 0 ? (done / total) * 100 : 100 });
  };
  const line = (done: number, now: number) => {
    const seconds = (now - started) / 1000;
    const rate = seconds > 0 ? Math.round(done / seconds) : 0;
    const pct = total > 0 ? ((done / total) * 100).toFixed(1) : "100.0";
    write(
      `backtest: ${count(done)} / ${count(total)} candles (${pct} %), ${seconds.toFixed(1)} s, ${count(rate)} candles/s\n`,
    );
  };
  return {
    nextCheck: total > 0 ? Math.min(chunk, total) : -1,
    check(done) {
      if (onProgress) report(done);
      if (log) {
        const now = performance.now();
        if (now >= nextLog) {
          line(done, now);
          logged = true;
          nextLog = now + PROGRESS_LOG_MS;
        }
      }
      return done + chunk;
    },
    finish(done) {
      if (onProgress && reported !== done) report(done);
      if (log && logged) line(done, performance.now());
    },
  };
}
