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
  return new Date(clock.now()).toISOString();
}
