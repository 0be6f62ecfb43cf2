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
  override readonly name = "CrossbookApiError";
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
 * The request never got an answer (connection refused, reset, DNS, timeout).
 *
 * @example
 * catch (err) { if (err instanceof CrossbookNetworkError) console.log("service unreachable:", err.cause); }
 */
export class CrossbookNetworkError extends Error {
  override readonly name = "CrossbookNetworkError";
  constructor(
    message: string,
    override readonly cause: unknown,
  ) {
    super(message);
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
