/**
 * Kalshi I/O: every REST call goes through VenueHttp (per-venue budget, timeout, retries with
 * backoff and jitter, Retry-After), signed with RSA-PSS when a key is given. Lists are followed
 * through every page: Kalshi's `cursor` is opaque and an EMPTY cursor means the last page
 * (VENUES.md §2.2). A page without a `cursor` field fails the walk (never a silently short list);
 * nor does a cursor that comes back twice (which would otherwise loop forever).
 */
import type { Clock } from "../../infra/clock";
import { VenueHttp, type VenueHttpOptions } from "../http";
import type { PageProgress } from "../venue";
import { type KalshiKey, kalshiAuthHeaders } from "./auth";
import { KALSHI_CAPABILITIES } from "./capabilities";
import { asObject, KalshiParseError, type Report } from "./normalize";

type Query = Record<string, string | number | boolean | undefined | null>;

/** Kalshi error bodies: `{"error":{"code","message"}}` on the wire, `{code,message}` in the spec. */
export function describeKalshiError(body: unknown): { message?: string; code?: string } {
  const outer = asObject(body);
  const inner = asObject(outer?.["error"]) ?? outer;
  if (!inner) return typeof body === "string" && body.length > 0 ? { message: body.slice(0, 300) } : {};
  const message = inner["message"] ?? inner["msg"];
  const code = inner["code"];
  return {
    ...(typeof message === "string" && message.length > 0 ? { message } : {}),
    ...(typeof code === "string" || typeof code === "number" ? { code: String(code) } : {}),
  };
}

export interface KalshiFetcherOptions {
  apiUrl: string;
  clock: Clock;
  report: Report;
  /** Test and tuning overrides for both clients (sleep, retries, timeouts). */
  http?: Partial<Omit<VenueHttpOptions, "venue" | "baseUrl">>;
}

export class KalshiFetcher {
  readonly read: VenueHttp;
  readonly write: VenueHttp;

  constructor(private readonly options: KalshiFetcherOptions) {
    const common = {
      venue: "kalshi" as const,
      baseUrl: options.apiUrl,
      clock: options.clock,
      describeError: describeKalshiError,
    };
    this.read = new VenueHttp({ ...common, rateLimit: KALSHI_CAPABILITIES.rateLimits.read, ...options.http });
    this.write = new VenueHttp({
      ...common,
      rateLimit: KALSHI_CAPABILITIES.rateLimits.trade,
      ...options.http,
    });
  }

  #signer(key: KalshiKey | undefined) {
    if (!key) return undefined;
    return ({ method, path }: { method: string; path: string }) =>
      kalshiAuthHeaders(key, method, path, this.options.clock.now());
  }

  async get(path: string, query: Query = {}, key?: KalshiKey): Promise<Record<string, unknown>> {
    const sign = this.#signer(key);
    const response = await this.read.request("GET", path, { query, ...(sign ? { sign } : {}) });
    return objectBody(response.body, path);
  }

  /** Order entry and cancels: the write budget, and retried only where the venue cannot have acted. */
  async send(
    method: "POST" | "DELETE",
    path: string,
    key: KalshiKey,
    body?: unknown,
    query: Query = {},
  ): Promise<Record<string, unknown>> {
    const response = await this.write.request(method, path, {
      query,
      ...(body === undefined ? {} : { body }),
      sign: this.#signer(key)!,
      mode: "write",
    });
    return objectBody(response.body ?? {}, path);
  }

  /** Every item of a cursor-paginated list, page after page until the cursor comes back empty. */
  async all(
    path: string,
    listKey: string,
    query: Query,
    options: { key?: KalshiKey; progress?: PageProgress; onPage?: (items: unknown[]) => void } = {},
  ): Promise<unknown[]> {
    const items: unknown[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      const body = await this.get(path, { ...query, cursor }, options.key);
      const list = body[listKey];
      if (list !== undefined && list !== null && !Array.isArray(list)) {
        throw new KalshiParseError(path, `${listKey} is not an array`);
      }
      const pageItems = (list ?? []) as unknown[];
      options.onPage?.(pageItems);
      items.push(...pageItems);
      options.progress?.({ page, items: items.length });
      const next = body["cursor"];
      if (next === "" || next === null) return items;
      if (typeof next !== "string") {
        // Kalshi always sends `cursor`; without it we cannot tell the last page from a broken one,
        // and stopping early would silently drop markets. Fail the walk so it is retried.
        this.options.report("missing_field:cursor", { path, page });
        throw new KalshiParseError(path, `page ${page} has no cursor`);
      }
      if (seen.has(next)) {
        this.options.report("cursor_repeated", { path, cursor: next });
        throw new KalshiParseError(path, `cursor ${next} came back twice`);
      }
      seen.add(next);
      cursor = next;
    }
  }
}

function objectBody(body: unknown, path: string): Record<string, unknown> {
  if (body === "" || body === undefined) return {};
  const o = asObject(body);
  if (!o) throw new KalshiParseError(path, "response is not a JSON object");
  return o;
}
