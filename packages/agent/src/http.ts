/**
 * The transport under every call: typed from the service's OpenAPI document (src/generated/api.ts),
 * with the API key, retries with exponential backoff and full jitter on 429 and 502/503/504 (and on
 * network errors for requests that are safe to repeat), `Retry-After` honoured as a floor, a
 * per-attempt timeout, and error envelopes turned into `CrossbookApiError`.
 */
import { CrossbookApiError, CrossbookNetworkError, CrossbookRateLimitError } from "./errors.js";
import type { paths } from "./generated/api.js";
import { describeCause, networkHint } from "./network.js";

export type Method = "get" | "post" | "patch" | "delete";
export type Path = keyof paths;

/** The OpenAPI operation of a path and method (never when the path has no such method). */
export type Operation<P extends Path, M extends Method> = NonNullable<paths[P][M]>;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? Q : never;
type PathParamsOf<O> = O extends { parameters: { path: infer X } } ? X : never;
type BodyOf<O> = O extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;
type JsonOf<R> = R extends { content: { "application/json": infer J } } ? J : never;
/** The success body (200, 201 or 202) of an operation. */
export type SuccessBody<O> = O extends { responses: infer R }
  ? JsonOf<
      R extends { 200: infer A } ? A : R extends { 201: infer B } ? B : R extends { 202: infer C } ? C : never
    >
  : never;
/** The `data` of an operation's success envelope. */
export type DataOf<O> = SuccessBody<O> extends { data: infer D } ? D : never;

export interface RequestOptions<P extends Path, M extends Method> {
  params?: PathParamsOf<Operation<P, M>>;
  query?: QueryOf<Operation<P, M>>;
  body?: BodyOf<Operation<P, M>>;
  /** Sent as `Idempotency-Key` on every attempt; also makes a POST safe to retry. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** A retry the client is about to make. */
export interface RetryInfo {
  /** The HTTP method, upper case. */
  method: string;
  url: string;
  /** 1 for the first retry, up to `maxRetries`. */
  attempt: number;
  /** How long the client waits before it, ms. */
  delayMs: number;
  /** What failed: `503 VENUE_UNAVAILABLE`, `429 RATE_LIMITED`, `ECONNREFUSED 127.0.0.1:8080`… */
  reason: string;
}

/** A 429 answer: told before the client waits it out, or before it gives up. */
export interface RateLimitInfo {
  /** The HTTP method, upper case. */
  method: string;
  url: string;
  /** The wait before the next attempt, ms (the service's `Retry-After` is its floor). */
  waitMs: number;
  /** The key's requests per window (`RateLimit-Limit`), when the service said. */
  limit?: number;
  /** Requests left in the window (`RateLimit-Remaining`), when the service said. */
  remaining?: number;
  /** False when the client gives up instead of waiting (the wait is past `maxRateLimitWaitMs`, or no retry is left). */
  retrying: boolean;
}

export type LogLevel = "debug" | "info" | "warn";
/** Where the client's own notes go: `console` fits, or any object with these three methods. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
}
/** A logger, one function for every level, or `false` for silence. */
export type LogOption = Logger | ((level: LogLevel, message: string) => void) | false;

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  /** Retries after the first attempt (default 3). 0 disables retries. */
  maxRetries?: number;
  /** First backoff step in ms (default 250); each retry doubles it, capped at `maxDelayMs`. */
  baseDelayMs?: number;
  /** Longest wait between attempts in ms (default 8,000; a longer Retry-After still wins). */
  maxDelayMs?: number;
  /** Longest wait for a 429 in ms (default 10,000): past it the call throws `CrossbookRateLimitError` at once. */
  maxRateLimitWaitMs?: number;
  /** Per-attempt timeout in ms (default 30,000). */
  timeoutMs?: number;
  /** A fetch implementation (default the global one). */
  fetch?: typeof fetch;
  /** Called before each retry. */
  onRetry?: (info: RetryInfo) => void;
  /** Called on every 429, before waiting (or giving up). */
  onRateLimit?: (info: RateLimitInfo) => void;
  /** The client's notes: each request at `debug`, retries at `info`, rate limits at `warn`. Default: warnings to stderr. */
  log?: LogOption;
  /** Random source for jitter (tests). */
  random?: () => number;
  /** Sleep (tests). */
  sleep?: (ms: number) => Promise<void>;
  userAgent?: string;
}

/** Retried with backoff; a 429 has its own branch (waits for Retry-After, or gives up at once). */
const RETRYABLE_STATUS = new Set([502, 503, 504]);

type Log = (level: LogLevel, message: string) => void;

/** Only warnings, to stderr: a library should not chatter, but a stalled call must not be silent. */
const defaultLog: Log = (level, message) => {
  if (level === "warn") console.warn(`crossbook: ${message}`);
};

function toLog(option: LogOption | undefined): Log {
  if (option === undefined) return defaultLog;
  if (option === false) return () => {};
  if (typeof option === "function") return option;
  return (level, message) => option[level](message);
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/**
 * Sends typed requests to the service.
 *
 * @example
 * const http = new Transport({ baseUrl: "http://127.0.0.1:8080", apiKey: "cb_test_…" });
 * const body = await http.request("get", "/v1/orders/{id}", { params: { id: "ord_1" } });
 */
export class Transport {
  readonly #options: Required<
    Omit<TransportOptions, "userAgent" | "onRetry" | "onRateLimit" | "log" | "fetch">
  > & { userAgent: string; fetch: typeof fetch };
  readonly #onRetry: TransportOptions["onRetry"];
  readonly #onRateLimit: TransportOptions["onRateLimit"];
  readonly #log: Log;

  constructor(options: TransportOptions) {
    const { onRetry, onRateLimit, log, ...rest } = options;
    this.#options = {
      maxRetries: 3,
      baseDelayMs: 250,
      maxDelayMs: 8_000,
      maxRateLimitWaitMs: 10_000,
      timeoutMs: 30_000,
      fetch: globalThis.fetch.bind(globalThis),
      random: Math.random,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      userAgent: "crossbook-agent/0.1",
      ...rest,
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
    };
    this.#onRetry = onRetry;
    this.#onRateLimit = onRateLimit;
    this.#log = toLog(log);
  }

  /** The service's base URL, without a trailing slash. */
  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  /** The URL of a path with its path parameters and query filled in. */
  url(path: string, params?: Record<string, unknown>, query?: Record<string, unknown>): string {
    let filled = path;
    for (const [key, value] of Object.entries(params ?? {}))
      filled = filled.replace(`{${key}}`, encodeURIComponent(String(value)));
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      search.set(key, Array.isArray(value) ? value.join(",") : String(value));
    }
    const qs = search.toString();
    return `${this.#options.baseUrl}${filled}${qs ? `?${qs}` : ""}`;
  }

  /** Sends one call (with retries) and returns the success body, or throws. */
  async request<P extends Path, M extends Method>(
    method: M,
    path: P,
    options: RequestOptions<P, M> = {},
  ): Promise<SuccessBody<Operation<P, M>>> {
    const o = this.#options;
    const url = this.url(
      path as string,
      options.params as Record<string, unknown> | undefined,
      options.query as Record<string, unknown> | undefined,
    );
    const headers: Record<string, string> = {
      authorization: `Bearer ${o.apiKey}`,
      accept: "application/json",
      "user-agent": o.userAgent,
    };
    let payload: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(options.body);
    }
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
    // Repeating a request that never got an answer is safe only when the server can tell.
    const safeToRepeat = method === "get" || method === "delete" || options.idempotencyKey !== undefined;

    const verb = method.toUpperCase();
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      const timeout = AbortSignal.timeout(o.timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      const started = Date.now();
      try {
        response = await o.fetch(url, { method: verb, headers, body: payload, signal });
      } catch (cause) {
        if (options.signal?.aborted) throw cause;
        const failure = timeout.aborted
          ? { code: "TIMEOUT", text: `no answer within ${o.timeoutMs} ms` }
          : describeCause(cause);
        const last = !safeToRepeat || attempt >= o.maxRetries;
        if (last) {
          const tries = attempt > 0 ? ` (${attempt + 1} attempts)` : "";
          throw new CrossbookNetworkError(
            `${verb} ${url} failed: ${failure.text}${tries}${networkHint(failure.code, o.baseUrl)}`,
            cause,
            { method: verb, url, ...(failure.code ? { code: failure.code } : {}) },
          );
        }
        await this.#retry(verb, url, attempt, this.#backoff(attempt, undefined), failure.text);
        continue;
      }
      this.#log("debug", `${verb} ${url} -> ${response.status} (${Date.now() - started} ms)`);
      if (response.ok) {
        if (response.status === 204) return undefined as SuccessBody<Operation<P, M>>;
        return (await response.json()) as SuccessBody<Operation<P, M>>;
      }
      const error = await toApiError(response);
      const reason = `${response.status} ${error.code}`;
      const exhausted = attempt >= o.maxRetries;
      if (response.status === 429) {
        const waitMs = this.#backoff(attempt, error.retryAfterMs);
        const { limit, remaining } = rateLimitOf(response, error);
        const tooLong = waitMs > o.maxRateLimitWaitMs;
        const retrying = !exhausted && !tooLong;
        this.#hook("onRateLimit", () =>
          this.#onRateLimit?.({
            method: verb,
            url,
            waitMs,
            ...(limit !== undefined ? { limit } : {}),
            ...(remaining !== undefined ? { remaining } : {}),
            retrying,
          }),
        );
        const quota =
          limit !== undefined
            ? ` (limit ${limit}${remaining !== undefined ? `, ${remaining} left` : ""})`
            : "";
        if (!retrying) {
          const why = tooLong
            ? `${verb} ${url}: asked to wait ${seconds(waitMs)}, more than maxRateLimitWaitMs (${seconds(o.maxRateLimitWaitMs)})${quota}`
            : `${verb} ${url}: still limited after ${attempt + 1} attempts${quota}; wait ${seconds(waitMs)}`;
          this.#log("warn", `rate limited, not waiting: ${why}`);
          throw new CrossbookRateLimitError(error, error.retryAfterMs ?? waitMs, limit, remaining, why);
        }
        this.#log("warn", `rate limited: ${verb} ${url}: waiting ${seconds(waitMs)}${quota}`);
        await this.#retry(verb, url, attempt, waitMs, reason);
        continue;
      }
      const retry = RETRYABLE_STATUS.has(response.status) || (response.status === 500 && method === "get");
      if (!retry || exhausted) throw error;
      await this.#retry(verb, url, attempt, this.#backoff(attempt, error.retryAfterMs), reason);
    }
  }

  /** Tells the hook and the log about a retry, then waits for it. */
  async #retry(method: string, url: string, attempt: number, delayMs: number, reason: string): Promise<void> {
    const retry = attempt + 1;
    this.#log(
      "info",
      `retrying ${method} ${url} in ${delayMs} ms (retry ${retry} of ${this.#options.maxRetries}): ${reason}`,
    );
    this.#hook("onRetry", () => this.#onRetry?.({ method, url, attempt: retry, delayMs, reason }));
    await this.#options.sleep(delayMs);
  }

  /** Runs a hook; one that throws is logged, not allowed to fail the call it watches. */
  #hook(name: string, run: () => void): void {
    try {
      run();
    } catch (error) {
      this.#log("warn", `${name} hook threw: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Full jitter over an exponential step; `Retry-After` is a floor. */
  #backoff(attempt: number, retryAfterMs: number | undefined): number {
    const o = this.#options;
    const step = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** attempt);
    const jittered = Math.floor(o.random() * step);
    return Math.max(jittered, retryAfterMs ?? 0);
  }
}

async function toApiError(response: Response): Promise<CrossbookApiError> {
  const requestId = response.headers.get("x-request-id") ?? undefined;
  const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
  let code = `HTTP_${response.status}`;
  let message = response.statusText || "request failed";
  let details: Record<string, unknown> | undefined;
  try {
    const body = (await response.json()) as {
      error?: { code?: string; message?: string; details?: Record<string, unknown> };
    };
    if (body?.error) {
      code = body.error.code ?? code;
      message = body.error.message ?? message;
      details = body.error.details;
    }
  } catch {
    // Not JSON (a proxy's error page): keep the status line.
  }
  return new CrossbookApiError(response.status, code, message, details, requestId, retryAfterMs);
}

/** `12 s`, `1.5 s`, `250 ms`: waits as a person reads them. */
function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** The key's limit and what is left of it: the RateLimit-* headers, else the envelope's details. */
function rateLimitOf(response: Response, error: CrossbookApiError): { limit?: number; remaining?: number } {
  const read = (header: string, detail: string): number | undefined => {
    const raw = response.headers.get(`ratelimit-${header}`) ?? response.headers.get(`x-ratelimit-${header}`);
    const value = raw !== null && raw.trim() !== "" ? Number(raw) : error.details?.[detail];
    return typeof value === "number" && Number.isFinite(value) ? value : undefined;
  };
  const limit = read("limit", "limit");
  const remaining = read("remaining", "remaining");
  return { ...(limit !== undefined ? { limit } : {}), ...(remaining !== undefined ? { remaining } : {}) };
}

/**
 * What fetch's failure was, from the system error under it: `ECONNREFUSED 127.0.0.1:8080`,
 * `ENOTFOUND crossbook.invalid`… (fetch itself only says "fetch failed").
 */
