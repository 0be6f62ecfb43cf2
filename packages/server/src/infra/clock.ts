/**
 * Time comes from an injected clock so retry schedules, rate-limit windows, session expiry and
 * candles can be tested without waiting.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; for tests. */
export class ManualClock implements Clock {
  constructor(private current = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export function isoNow(clock: Clock): string {
  return isoFromMs(clock.now());
}

/** ".000Z" … ".999Z": the millisecond suffixes of an ISO timestamp. */
const MS_SUFFIX = Array.from({ length: 1000 }, (_, ms) => `.${String(ms).padStart(3, "0")}Z`);
/**
 * The last two seconds formatted, each as "YYYY-MM-DDTHH:MM:SS": callers often alternate between
 * now and a fixed offset from it (a lease's start and end, a key's creation and expiry).
 */
let cachedSecond = Number.NaN;
let cachedPrefix = "";
let otherSecond = Number.NaN;
let otherPrefix = "";

/**
 * `new Date(ms).toISOString()` for hot paths (feed timestamps, stream messages, events): the
 * "YYYY-MM-DDTHH:MM:SS" part is formatted once per second and the milliseconds come from a table,
 * because formatting a Date costs more than everything else a feed message goes through.
 */
export function isoFromMs(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= 253_402_300_800_000) return new Date(ms).toISOString();
  const second = Math.floor(ms / 1000);
  if (second !== cachedSecond) {
    const prefix = second === otherSecond ? otherPrefix : new Date(second * 1000).toISOString().slice(0, 19);
    otherSecond = cachedSecond;
    otherPrefix = cachedPrefix;
    cachedSecond = second;
    cachedPrefix = prefix;
  }
  return cachedPrefix + MS_SUFFIX[ms - second * 1000]!;
}
