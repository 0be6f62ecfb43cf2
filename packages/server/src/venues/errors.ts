/**
 * One error taxonomy for every venue, so callers decide "retry or not" without knowing which venue
 * answered. Each kind is retryable or not; `rate_limited` carries the venue's Retry-After.
 */
import type { VenueId } from "./model";

export type VenueErrorKind =
  | "unavailable" // 5xx, connection refused or reset
  | "timeout" // no answer in time
  | "rate_limited" // 429
  | "rejected" // the venue refused the request (4xx with a reason): bad order, closed market…
  | "auth_failed" // 401/403, bad signature, unknown key
  | "not_found" // 404
  | "bad_response"; // the venue answered something we cannot parse

const RETRYABLE: Record<VenueErrorKind, boolean> = {
  unavailable: true,
  timeout: true,
  rate_limited: true,
  rejected: false,
  auth_failed: false,
  not_found: false,
  bad_response: false,
};

export class VenueError extends Error {
  readonly retryable: boolean;

  constructor(
    readonly venue: VenueId,
    readonly kind: VenueErrorKind,
    message: string,
    readonly details: {
      status?: number;
      /** The venue's own error code, if it sent one. */
      venueCode?: string;
      /** The venue's own message: shown to users for rejections. */
      venueMessage?: string;
      retryAfterMs?: number;
      cause?: unknown;
    } = {},
  ) {
    super(message);
    this.name = "VenueError";
    this.retryable = RETRYABLE[kind];
  }

  get retryAfterMs(): number | undefined {
    return this.details.retryAfterMs;
  }
}

export function isVenueError(error: unknown): error is VenueError {
  return error instanceof VenueError;
}

/** Maps an HTTP status to a kind; body-specific rules stay in each adapter. */
export function kindForStatus(status: number): VenueErrorKind {
  if (status === 429) return "rate_limited";
  if (status === 401 || status === 403) return "auth_failed";
  if (status === 404) return "not_found";
  if (status === 408 || status === 504) return "timeout";
  if (status >= 500) return "unavailable";
  return "rejected";
}

/** Retry-After as seconds or an HTTP date, in ms; undefined if absent or unparsable. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}
