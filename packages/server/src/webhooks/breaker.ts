/**
 * Circuit breakers for webhook endpoints that keep timing out. A timed-out attempt holds one of the
 * dispatcher's slots for the whole delivery timeout (5 s), so an account whose receivers hang could
 * keep slots busy doing nothing; the breaker stops trying such an endpoint for a while.
 *
 * An endpoint is one account's receiving origin (`https://host:port`), shared by that account's
 * webhooks on it; other accounts' webhooks on the same host have breakers of their own, so no
 * tenant can slow another's deliveries.
 *
 * - Closed: attempts go out. `threshold` timeouts in a row (any answer, even an error status,
 *   resets the count) open it.
 * - Open: no attempt starts until the cool-down is over (`cooldownMs`, doubled each time a probe
 *   times out again, at most `maxCooldownMs`).
 * - Half-open: one attempt (the probe) may start. If it gets any answer the breaker closes; if it
 *   times out the breaker opens again with the longer cool-down.
 *
 * The breaker only delays: a delivery it holds back is not attempted, so no failure is recorded for
 * it and its retry schedule is untouched (its next attempt comes later, never earlier). State lives
 * in the dispatcher's memory (per instance); a restart starts every endpoint closed.
 */
export interface BreakerOptions {
  /** Timeouts in a row that open the breaker. */
  threshold: number;
  /** First cool-down of an open breaker, ms. */
  cooldownMs: number;
  /** Longest cool-down, ms. */
  maxCooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerOptions = {
  threshold: 3,
  cooldownMs: 60_000,
  maxCooldownMs: 3_600_000,
};

interface Endpoint {
  /** Timeouts in a row while closed. */
  timeouts: number;
  /** While open: until when (ms); 0 when closed. */
  openUntil: number;
  /** The cool-down of the last opening, ms. */
  cooldownMs: number;
  /** Half-open and the probe is under way. */
  probing: boolean;
  /** Webhooks seen on this endpoint: left out of the dispatcher's claims while it is open. */
  webhooks: Set<string>;
}

/** Whether an attempt may start: "closed" (normal), "probe" (the single half-open attempt) or not. */
export type Admission = "closed" | "probe" | false;

const MAX_ENDPOINTS = 10_000;

export class EndpointBreakers {
  readonly #endpoints = new Map<string, Endpoint>();

  constructor(private readonly options: BreakerOptions = DEFAULT_BREAKER) {}

  /** Asks to start an attempt on `endpoint` (from `webhookId`); a "probe" must be settled. */
  admit(endpoint: string, webhookId: string, now: number): Admission {
    const state = this.#endpoints.get(endpoint);
    if (!state || state.openUntil === 0) return "closed";
    state.webhooks.add(webhookId);
    if (now < state.openUntil || state.probing) return false;
    state.probing = true;
    return "probe";
  }

  /** May a worker already under way go on to its next attempt? (Never takes the probe.) */
  allows(endpoint: string): boolean {
    const state = this.#endpoints.get(endpoint);
    return !state || state.openUntil === 0;
  }

  /** The outcome of an attempt: timed out or not. */
  record(endpoint: string, webhookId: string, timedOut: boolean, now: number, probe: boolean): void {
    let state = this.#endpoints.get(endpoint);
    if (!timedOut) {
      // The endpoint answers: closed, count reset.
      if (state) this.#endpoints.delete(endpoint);
      return;
    }
    if (!state) {
      if (this.#endpoints.size >= MAX_ENDPOINTS) this.#endpoints.clear();
      state = { timeouts: 0, openUntil: 0, cooldownMs: 0, probing: false, webhooks: new Set() };
      this.#endpoints.set(endpoint, state);
    }
    state.webhooks.add(webhookId);
    if (probe && state.openUntil !== 0) {
      state.probing = false;
      state.cooldownMs = Math.min(state.cooldownMs * 2, this.options.maxCooldownMs);
      state.openUntil = now + state.cooldownMs;
      return;
    }
    // Attempts that were already under way when it opened change nothing.
    if (state.openUntil !== 0) return;
    state.timeouts++;
    if (state.timeouts >= this.options.threshold) {
      state.cooldownMs = Math.min(this.options.cooldownMs, this.options.maxCooldownMs);
      state.openUntil = now + state.cooldownMs;
    }
  }

  /** A probe that made no attempt after all (nothing to send): the next one may go. */
  release(endpoint: string): void {
    const state = this.#endpoints.get(endpoint);
    if (state) state.probing = false;
  }

  /** Webhooks whose endpoint takes no attempt now (open, or half-open with its probe under way). */
  held(now: number): string[] {
    const held: string[] = [];
    for (const state of this.#endpoints.values()) {
      if (state.openUntil === 0 || (now >= state.openUntil && !state.probing)) continue;
      for (const id of state.webhooks) held.push(id);
    }
    return held;
  }
}

/** The breaker key of a webhook: its account and its URL's origin (stored URLs are normalized). */
export function endpointOf(accountId: string, url: string): string {
  const slash = url.indexOf("/", url.indexOf("//") + 2);
  return `${accountId} ${slash === -1 ? url : url.slice(0, slash)}`;
}
