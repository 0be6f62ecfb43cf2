/**
 * The one error catalog: every machine code the API can return, its HTTP status, a default message
 * and whether retrying the same request can succeed. Services throw `AppError`; the HTTP layer
 * renders it as the spec's envelope. Codes are stable: clients switch on them, so never rename one.
 */
export const ERROR_CATALOG = {
  VALIDATION_ERROR: { status: 400, message: "The request is not valid", retryable: false },
  UNAUTHORIZED: { status: 401, message: "Missing, invalid or revoked credentials", retryable: false },
  FORBIDDEN: { status: 403, message: "This key is not allowed to do that", retryable: false },
  SANDBOX_ONLY: {
    status: 403,
    message: "This endpoint takes sandbox keys (cb_test_…); live balances are never touched by it",
    retryable: false,
  },
  WEBHOOK_LIMIT_REACHED: {
    status: 403,
    message: "The account has reached its number of webhooks (25); delete one first",
    retryable: false,
  },
  KEY_LIMIT_REACHED: {
    status: 403,
    message: "The account has reached its tier's number of API keys",
    retryable: false,
  },
  ALERT_LIMIT_REACHED: {
    status: 403,
    message: "The account has reached its tier's number of active price alerts",
    retryable: false,
  },
  NOT_FOUND: { status: 404, message: "Not found", retryable: false },
  ACCOUNT_NOT_FOUND: { status: 404, message: "Account not found", retryable: false },
  API_KEY_NOT_FOUND: { status: 404, message: "API key not found", retryable: false },
  ORDER_NOT_FOUND: { status: 404, message: "Order not found", retryable: false },
  MARKET_NOT_FOUND: { status: 404, message: "Market not found", retryable: false },
  ALERT_NOT_FOUND: { status: 404, message: "Alert not found", retryable: false },
  VENUE_CREDENTIAL_NOT_FOUND: { status: 404, message: "Venue credential not found", retryable: false },
  WEBHOOK_NOT_FOUND: { status: 404, message: "Webhook not found", retryable: false },
  POSITION_NOT_FOUND: { status: 404, message: "Position not found", retryable: false },
  MATCH_NOT_FOUND: { status: 404, message: "Match not found", retryable: false },
  EVENT_NOT_FOUND: { status: 404, message: "Cross-venue event not found", retryable: false },
  METHOD_NOT_ALLOWED: { status: 405, message: "Method not allowed on this path", retryable: false },
  REQUEST_TIMEOUT: {
    status: 408,
    message: "The request did not arrive in time; send it again",
    retryable: true,
  },
  EMAIL_TAKEN: { status: 409, message: "An account with this email already exists", retryable: false },
  ORDER_NOT_CANCELLABLE: {
    status: 409,
    message: "Only open or pending orders can be cancelled",
    retryable: false,
  },
  VENUE_HAS_OPEN_ORDERS: {
    status: 409,
    message: "Live orders are open on this venue; cancel them before unlinking it",
    retryable: false,
  },
  MARKET_CLOSED: { status: 409, message: "The market is not open for trading", retryable: false },
  VENUE_NOT_LINKED: {
    status: 409,
    message: "Link a venue account (POST /v1/venue-credentials) before trading live on this venue",
    retryable: false,
  },
  CURSOR_EXPIRED: {
    status: 410,
    message: "Events before this cursor are no longer kept; start again from the oldest event kept",
    retryable: false,
  },
  PAYLOAD_TOO_LARGE: { status: 413, message: "The request body is too large", retryable: false },
  URI_TOO_LONG: {
    status: 414,
    message: "The URL or one of its path segments is too long",
    retryable: false,
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: "Request bodies must be application/json",
    retryable: false,
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    message: "This Idempotency-Key was used with a different request",
    retryable: false,
  },
  INVALID_PRICE: { status: 400, message: "The price must be strictly between 0 and 1", retryable: false },
  PRICE_NOT_ON_TICK: {
    status: 400,
    message: "The price is not a multiple of the market's tick size",
    retryable: false,
  },
  AMOUNT_BELOW_MINIMUM: {
    status: 400,
    message: "The amount is under the market's minimum order size",
    retryable: false,
  },
  UNSUPPORTED_ORDER_TYPE: {
    status: 400,
    message: "The venue does not support this order type or time in force",
    retryable: false,
  },
  INSUFFICIENT_BALANCE: {
    status: 422,
    message: "Not enough available balance for this order",
    retryable: false,
  },
  INSUFFICIENT_POSITION: {
    status: 422,
    message: "Selling needs contracts held and not already promised to other sell orders",
    retryable: false,
  },
  VENUE_REJECTED: { status: 422, message: "The venue rejected the order", retryable: false },
  UPGRADE_REQUIRED: {
    status: 426,
    message: "This endpoint is a WebSocket: connect with an Upgrade: websocket request",
    retryable: false,
  },
  RATE_LIMITED: { status: 429, message: "Rate limit exceeded", retryable: true },
  CONNECTION_LIMIT: {
    status: 429,
    message: "The key already holds its plan's number of stream connections",
    retryable: true,
  },
  REQUEST_HEADER_FIELDS_TOO_LARGE: {
    status: 431,
    message: "The request line and headers are too large",
    retryable: false,
  },
  INTERNAL_ERROR: { status: 500, message: "Something went wrong on our side", retryable: true },
  SERVICE_UNAVAILABLE: { status: 503, message: "The service is not ready", retryable: true },
  SERVER_BUSY: {
    status: 503,
    message: "The service is busy with other sign-ins; retry in a moment",
    retryable: true,
  },
  VENUE_UNAVAILABLE: {
    status: 503,
    message: "The venue could not be reached for this data; try again shortly",
    retryable: true,
  },
} as const satisfies Record<string, { status: number; message: string; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;
export type ErrorDetails = Record<string, unknown>;

export class AppError extends Error {
  readonly status: number;
  readonly retryable: boolean;
  /** Extra response headers (e.g. Retry-After, Allow). */
  headers: Record<string, string> = {};

  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: ErrorDetails,
  ) {
    super(message ?? ERROR_CATALOG[code].message);
    this.name = "AppError";
    this.status = ERROR_CATALOG[code].status;
    this.retryable = ERROR_CATALOG[code].retryable;
  }

  withHeaders(headers: Record<string, string>): this {
    this.headers = { ...this.headers, ...headers };
    return this;
  }
}

/** A 400 naming each bad field: `{ fields: { "body.amount": "must be > 0" } }`. */
export function validationError(fields: Record<string, string>, message?: string): AppError {
  const names = Object.keys(fields);
  return new AppError(
    "VALIDATION_ERROR",
    message ??
      (names.length === 1
        ? `Invalid ${names[0]}: ${fields[names[0]!]}`
        : `Invalid fields: ${names.join(", ")}`),
    { fields },
  );
}
