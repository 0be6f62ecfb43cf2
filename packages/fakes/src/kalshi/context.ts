/**
 * What every route module shares: the state, the scripted faults, the options, and the small HTTP
 * helpers that keep Kalshi's conventions in one place (the `{"error":{code,message,service}}` body of
 * VENUES.md §2.7, opaque cursors where an empty string ends the listing per §2.2, signed-request auth).
 */
import type { FastifyRequest } from "fastify";
import { verifySignedRequest } from "./auth";
import { KalshiError } from "./engine";
import type { ApiKey, KalshiState } from "./state";

export type MalformKind = "garbage" | "missing_fields" | "unexpected_fields" | "unknown_enum";

export interface Faults {
  down: boolean;
  rateLimit: { remaining: number; retryAfterSeconds: number };
  latencyMs: number;
  unexpectedFields: boolean;
  malform: { kind: MalformKind; remaining: number; path: string | null }[];
  /** Tickers whose next orderbook_delta skips a sequence number. */
  skipSeq: Set<string>;
  /** Requests per `METHOD /route` (route pattern relative to the API base). */
  counts: Map<string, number>;
}

export interface Ctx {
  state: KalshiState;
  faults: Faults;
  /** Path prefix of the REST API, e.g. `/trade-api/v2`. */
  base: string;
  authToleranceMs: number;
  /** Refuse WebSocket upgrades without signing headers (current docs; the default). */
  wsRequireAuth: boolean;
  wsPingIntervalMs: number;
}

/** VENUES.md §2.7 observed wire body. */
export function errorBody(
  code: string,
  message: string,
): { error: { code: string; message: string; service: string } } {
  return { error: { code, message, service: "exchange" } };
}

export function pathOf(req: FastifyRequest): string {
  return (req.raw.url ?? req.url).split("?")[0] ?? "";
}

/** Required signed request; throws 401 in the venue's body shape. */
export function requireKey(ctx: Ctx, req: FastifyRequest): ApiKey {
  return verifySignedRequest(ctx.state, req.headers, req.method, pathOf(req), ctx.authToleranceMs);
}

export type Query = Record<string, string | undefined>;

export function intParam(q: Query, name: string, def: number, min: number, max: number): number {
  const raw = q[name];
  if (raw === undefined || raw === "") return def;
  if (!/^-?\d+$/.test(raw)) throw new KalshiError(400, "invalid_parameters", `${name} must be an integer`);
  const n = Number(raw);
  if (n < min || n > max)
    throw new KalshiError(400, "invalid_parameters", `${name} must be between ${min} and ${max}`);
  return n;
}

export function optInt(q: Query, name: string): number | null {
  const raw = q[name];
  if (raw === undefined || raw === "") return null;
  if (!/^-?\d+$/.test(raw)) throw new KalshiError(400, "invalid_parameters", `${name} must be an integer`);
  return Number(raw);
}

export function listParam(q: Query, name: string): string[] | null {
  const raw = q[name];
  if (raw === undefined || raw === "") return null;
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export function boolParam(q: Query, name: string): boolean {
  return q[name] === "true" || q[name] === "1";
}

/** Opaque cursor pagination: the cursor encodes the next offset; "" means the last page. */
export function paginate<T>(
  items: T[],
  q: Query,
  defLimit: number,
  maxLimit: number,
): { page: T[]; cursor: string } {
  const limit = intParam(q, "limit", defLimit, 1, maxLimit);
  let offset = 0;
  const cursor = q["cursor"];
  if (cursor) {
    const decoded = Buffer.from(cursor, "base64url").toString("utf8");
    const m = /^o:(\d+)$/.exec(decoded);
    if (!m) throw new KalshiError(400, "invalid_parameters", "invalid cursor");
    offset = Number(m[1]);
  }
  const page = items.slice(offset, offset + limit);
  const next = offset + limit;
  return { page, cursor: next < items.length ? Buffer.from(`o:${next}`).toString("base64url") : "" };
}
