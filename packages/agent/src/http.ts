/**
 * The transport under every call: typed from the service's OpenAPI document (src/generated/api.ts),
 * with the API key, retries with exponential backoff and full jitter on 429 and 502/503/504 (and on
 * network errors for requests that are safe to repeat), `Retry-After` honoured as a floor, a
 * per-attempt timeout, and error envelopes turned into `CrossbookApiError`.
 */
import { CrossbookApiError, CrossbookNetworkError } from "./errors.js";
import type { paths } from "./generated/api.js";

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

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  /** Retries after the first attempt (default 3). 0 disables retries. */
  maxRetries?: number;
  /** First backoff step in ms (default 250); each retry doubles it, capped at `maxDelayMs`. */
  baseDelayMs?: number;
  /** Longest wait between attempts in ms (default 8,000; a longer Retry-After still wins). */
  maxDelayMs?: number;
  /** Per-attempt timeout in ms (default 30,000). */
  timeoutMs?: number;
  /** A fetch implementation (default the global one). */
  fetch?: typeof fetch;
  /** Random source for jitter (tests). */
  random?: () => number;
  /** Sleep (tests). */
  sleep?: (ms: number) => Promise<void>;
  userAgent?: string;
}

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

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
  readonly #options: Required<Omit<TransportOptions, "userAgent">> & { userAgent: string };

  constructor(options: TransportOptions) {
    this.#options = {
      maxRetries: 3,
      baseDelayMs: 250,
      maxDelayMs: 8_000,
      timeoutMs: 30_000,
      fetch: globalThis.fetch.bind(globalThis),
      random: Math.random,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      userAgent: "crossbook-agent/0.1",
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
    };
  }

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

    for (let attempt = 0; ; attempt++) {
      let response: Response;
      const timeout = AbortSignal.timeout(o.timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      try {
        response = await o.fetch(url, { method: method.toUpperCase(), headers, body: payload, signal });
      } catch (cause) {
        if (options.signal?.aborted) throw cause;
        const error = new CrossbookNetworkError(
          `${method.toUpperCase()} ${path as string}: no answer`,
          cause,
        );
        if (!safeToRepeat || attempt >= o.maxRetries) throw error;
        await o.sleep(this.#backoff(attempt, undefined));
        continue;
      }
      if (response.ok) {
        if (response.status === 204) return undefined as SuccessBody<Operation<P, M>>;
        return (await response.json()) as SuccessBody<Operation<P, M>>;
      }
      const error = await toApiError(response);
      const retry = RETRYABLE_STATUS.has(response.status) || (response.status === 500 && method === "get");
      if (!retry || attempt >= o.maxRetries) throw error;
      await o.sleep(this.#backoff(attempt, error.retryAfterMs));
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
