/**
 * The outbound HTTP client every adapter's fetcher uses: a per-venue request budget (token bucket),
 * a timeout on every call, and retries with exponential backoff and full jitter for retryable
 * failures, never sooner than the venue's Retry-After. Writes (orders) are retried only when the
 * venue certainly did not act on them (429, or a refused connection), never after a timeout.
 */
import { type Clock, systemClock } from "../infra/clock";
import { kindForStatus, parseRetryAfter, VenueError } from "./errors";
import type { VenueId } from "./model";
import type { RateLimitSpec } from "./venue";

export interface VenueHttpOptions {
  venue: VenueId;
  baseUrl: string;
  rateLimit: RateLimitSpec;
  timeoutMs?: number;
  maxRetries?: number;
  /** Backoff base and cap, ms. */
  backoffBaseMs?: number;
  backoffCapMs?: number;
  clock?: Clock;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Pulls the venue's message and code out of an error body. */
  describeError?: (body: unknown) => { message?: string; code?: string };
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined | null>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Signs a request: gets method, path with query and body text, returns headers. */
  sign?: (request: {
    method: string;
    path: string;
    pathWithQuery: string;
    body: string;
  }) => Record<string, string> | Promise<Record<string, string>>;
  /** "read": retry every retryable failure; "write": only failures the venue cannot have acted on. */
  mode?: "read" | "write";
}

export interface VenueResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A token bucket: `requests` per `windowMs`, refilled continuously; waiters queue in order. */
export class TokenBucket {
  #tokens: number;
  #last: number;
  #queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly spec: RateLimitSpec,
    private readonly clock: Clock,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {
    this.#tokens = spec.requests;
    this.#last = clock.now();
  }

  take(): Promise<void> {
    const turn = this.#queue.then(async () => {
      for (;;) {
        const now = this.clock.now();
        this.#tokens = Math.min(
          this.spec.requests,
          this.#tokens + ((now - this.#last) * this.spec.requests) / this.spec.windowMs,
        );
        this.#last = now;
        if (this.#tokens >= 1) {
          this.#tokens -= 1;
          return;
        }
        await this.sleep(Math.ceil(((1 - this.#tokens) * this.spec.windowMs) / this.spec.requests));
      }
    });
    this.#queue = turn.catch(() => {});
    return turn;
  }
}

export class VenueHttp {
  readonly #bucket: TokenBucket;
  readonly #clock: Clock;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;

  constructor(private readonly options: VenueHttpOptions) {
    this.#clock = options.clock ?? systemClock;
    this.#sleep = options.sleep ?? defaultSleep;
    this.#random = options.random ?? Math.random;
    this.#bucket = new TokenBucket(options.rateLimit, this.#clock, this.#sleep);
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  async request<T = unknown>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<VenueResponse<T>> {
    const maxRetries = this.options.maxRetries ?? 4;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#once<T>(method, path, options);
      } catch (error) {
        const venueError =
          error instanceof VenueError
            ? error
            : new VenueError(this.options.venue, "unavailable", String(error), { cause: error });
        const safeToRepeat =
          (options.mode ?? (method === "GET" ? "read" : "write")) === "read" ||
          venueError.kind === "rate_limited" ||
          (venueError.kind === "unavailable" && isConnectionRefused(venueError.details.cause));
        if (!venueError.retryable || !safeToRepeat || attempt >= maxRetries) throw venueError;
        const base = this.options.backoffBaseMs ?? 250;
        const cap = this.options.backoffCapMs ?? 8_000;
        const backoff = Math.min(cap, base * 2 ** attempt) * (0.5 + this.#random() / 2);
        await this.#sleep(Math.max(backoff, venueError.retryAfterMs ?? 0));
      }
    }
  }

  async #once<T>(method: string, path: string, options: RequestOptions): Promise<VenueResponse<T>> {
    await this.#bucket.take();
    const url = new URL(this.options.baseUrl.replace(/\/$/, "") + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const bodyText = options.body === undefined ? "" : JSON.stringify(options.body);
    const headers: Record<string, string> = { accept: "application/json", ...options.headers };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    if (options.sign) {
      Object.assign(
        headers,
        await options.sign({
          method,
          path: url.pathname,
          pathWithQuery: url.pathname + url.search,
          body: bodyText,
        }),
      );
    }
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : bodyText,
        signal: AbortSignal.timeout(timeoutMs),
        redirect: "manual",
      });
    } catch (error) {
      const name = (error as Error).name;
      if (name === "TimeoutError" || name === "AbortError") {
        throw new VenueError(
          this.options.venue,
          "timeout",
          `${method} ${url.pathname} timed out after ${timeoutMs} ms`,
          { cause: error },
        );
      }
      // fetch says only "fetch failed"; the cause says why (ENOTFOUND host, ECONNREFUSED, …).
      const cause = (error as { cause?: { code?: string; hostname?: string; message?: string } }).cause;
      const why = cause?.code ? `${cause.code}${cause.hostname ? ` ${cause.hostname}` : ""}` : cause?.message;
      throw new VenueError(
        this.options.venue,
        "unavailable",
        `${method} ${url.host}${url.pathname} failed: ${(error as Error).message}${why ? ` (${why})` : ""}`,
        { cause: cause ?? error },
      );
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw new VenueError(this.options.venue, "timeout", `${method} ${url.pathname}: body not received`, {
        cause: error,
      });
    }
    let body: unknown = text;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        if (response.ok) {
          throw new VenueError(
            this.options.venue,
            "bad_response",
            `${method} ${url.pathname} answered non-JSON`,
            {
              status: response.status,
            },
          );
        }
      }
    }
    if (!response.ok) {
      const described = this.options.describeError?.(body) ?? {};
      const kind = kindForStatus(response.status);
      throw new VenueError(
        this.options.venue,
        kind,
        `${this.options.venue} ${method} ${url.pathname} -> ${response.status}${described.message ? `: ${described.message}` : ""}`,
        {
          status: response.status,
          ...(described.code ? { venueCode: described.code } : {}),
          ...(described.message ? { venueMessage: described.message } : {}),
          ...(kind === "rate_limited" || kind === "unavailable"
            ? { retryAfterMs: parseRetryAfter(response.headers.get("retry-after"), this.#clock.now()) }
            : {}),
        },
      );
    }
    return { status: response.status, body: body as T, headers: response.headers };
  }
}

function isConnectionRefused(cause: unknown): boolean {
  return (cause as { code?: string } | undefined)?.code === "ECONNREFUSED";
}
