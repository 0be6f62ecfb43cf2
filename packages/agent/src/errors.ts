/**
 * Errors the client throws. Every failure the service answers carries its envelope's `code`,
 * `message` and `details` and the request id, so a bot can branch on `code` and a person can find
 * the request in the server's log.
 */

/**
 * The service answered with an error envelope (any non-2xx status).
 *
 * @example
 * try {
 *   await client.orders.cancel("ord_123");
 * } catch (err) {
 *   if (err instanceof CrossbookApiError && err.code === "ORDER_NOT_CANCELLABLE") console.log(err.details);
 *   else throw err;
 * }
 */
export class CrossbookApiError extends Error {
  override readonly name: string = "CrossbookApiError";
  constructor(
    /** HTTP status. */
    readonly status: number,
    /** The envelope's machine code, e.g. `INSUFFICIENT_BALANCE`, `RATE_LIMITED`. */
    readonly code: string,
    message: string,
    /** The envelope's `details` (field errors, the order's status…), when given. */
    readonly details: Record<string, unknown> | undefined,
    /** The `X-Request-Id` of the failed request. */
    readonly requestId: string | undefined,
    /** How long the service asked us to wait (`Retry-After`), in ms, on 429/503. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(`${status} ${code}: ${message}`);
  }

  /** True for answers worth retrying as they are: 429 and 502/503/504. */
  get retryable(): boolean {
    return this.status === 429 || this.status === 502 || this.status === 503 || this.status === 504;
  }
}

/**
 * A 429 the client did not wait out: the service asked for a longer wait than `maxRateLimitWaitMs`
 * allows, or the retries ran out. `waitMs` is the wait it asked for; `limit` and `remaining` are the
 * key's requests per window and what is left of them, when the service said.
 *
 * @example
 * catch (err) { if (err instanceof CrossbookRateLimitError) await sleep(err.waitMs); }
 */
export class CrossbookRateLimitError extends CrossbookApiError {
  override readonly name: string = "CrossbookRateLimitError";
  constructor(
    answer: CrossbookApiError,
    /** The wait before the next attempt would be admitted, ms. */
    readonly waitMs: number,
    /** The key's request limit per window (the `RateLimit-Limit` header), when given. */
    readonly limit: number | undefined,
    /** Requests left in the window (`RateLimit-Remaining`), when given. */
    readonly remaining: number | undefined,
    /** Why the client stopped, appended to the service's message. */
    why: string,
  ) {
    super(answer.status, answer.code, answer.message, answer.details, answer.requestId, answer.retryAfterMs);
    this.message = `${answer.message} (${why})`;
  }
}

/** What a `CrossbookNetworkError` was about. */
export interface NetworkErrorContext {
  /** The HTTP method, upper case. */
  method: string;
  /** The full URL asked for. */
  url: string;
  /** The system error code behind it (`ECONNREFUSED`, `ENOTFOUND`, `TimeoutError`…), when known. */
  code?: string;
}

/**
 * The request never got an answer (connection refused, reset, DNS, timeout). The message names the
 * method, the URL and the cause; `cause` is what fetch threw.
 *
 * @example
 * catch (err) { if (err instanceof CrossbookNetworkError) console.log(err.method, err.url, err.code, err.cause); }
 */
export class CrossbookNetworkError extends Error {
  override readonly name = "CrossbookNetworkError";
  /** The HTTP method, upper case (undefined when built without a context). */
  readonly method: string | undefined;
  /** The URL asked for. */
  readonly url: string | undefined;
  /** The system error code behind it, e.g. `ECONNREFUSED`. */
  readonly code: string | undefined;
  constructor(
    message: string,
    override readonly cause: unknown,
    context?: NetworkErrorContext,
  ) {
    super(message);
    this.method = context?.method;
    this.url = context?.url;
    this.code = context?.code;
  }
}

/**
 * The client refused to send: a sandbox key with `environment: "production"` (or the reverse), a
 * key that is not a crossbook key, a bad option. Nothing reached the service.
 *
 * @example
 * new Crossbook({ apiKey: "cb_test_…", environment: "production" }); // throws CrossbookConfigError
 */
export class CrossbookConfigError extends Error {
  override readonly name = "CrossbookConfigError";
}
