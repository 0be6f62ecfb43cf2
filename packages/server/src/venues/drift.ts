/**
 * `crossbook venues check`: asks each enabled venue's public endpoints (markets, events, one event,
 * one book, one history window, the WebSocket where we may connect) and holds every answer against
 * the declarative field lists kept beside the normalizers (polymarket/fields.ts, kalshi/fields.ts).
 * Per endpoint it reports the fields we read that are missing or have another type (drift: exit 1),
 * the fields the venue sent that no list names (new), and listed fields it did not send (not seen:
 * optional, or removed). It is the first thing to run when a venue changes.
 *
 * Nothing here may hang: every HTTP call has a timeout and no retries (a Retry-After is never slept
 * on), each endpoint has a deadline over that, and a socket is closed when its wait ends. Only
 * public endpoints are asked; Kalshi's WebSocket is signed with the feed key, and skipped without.
 */
import WebSocket from "ws";
import type { Config } from "../config";
import { isVenueError } from "./errors";
import { VenueHttp } from "./http";
import { type KalshiKey, kalshiAuthHeaders } from "./kalshi/auth";
import { KALSHI_CAPABILITIES } from "./kalshi/capabilities";
import { MARKET_CHANNELS } from "./kalshi/feed";
import { describeKalshiError } from "./kalshi/fetcher";
import { KALSHI_ENDPOINTS } from "./kalshi/fields";
import type { VenueId } from "./model";
import { describePolymarketError, RATE_LIMITS } from "./polymarket/fetcher";
import { POLYMARKET_ENDPOINTS } from "./polymarket/fields";
import { parseWsFrame } from "./polymarket/normalize";

// ---------------------------------------------------------------------------------------------
// Field lists
// ---------------------------------------------------------------------------------------------

/**
 * `"<type>[|<type>…][?]"`. Types: string, number, integer, boolean, object, array, decimal (a string
 * holding a plain decimal: "0.52", "-54.00"; not ".52"), json-array (a string holding a JSON array),
 * empty (the empty string, where a venue sends "" for "nothing").
 * A trailing `?`: the field may be absent or null; otherwise absent or null is reported missing.
 */
export type FieldSpec = string;
/** Path -> spec. A path is keys joined by `.`; `[]` after a key means every element of that array. */
export type FieldMap = Readonly<Record<string, FieldSpec>>;

export interface EndpointFields {
  /** Short name in the report: markets, event, book, history, ws… */
  id: string;
  /** What is asked, for people. */
  request: string;
  /** Every field our normalizers read from the answer, with the types they accept. */
  read: FieldMap;
  /** Fields the venue sends that we do not read: not reported as new. */
  known?: readonly string[];
}

/** The fields of `map` under `prefix` (`under("markets[]", {id: …})` -> `{"markets[].id": …}`). */
export function under(prefix: string, map: FieldMap): FieldMap {
  return Object.fromEntries(Object.entries(map).map(([path, spec]) => [`${prefix}.${path}`, spec]));
}

const TYPES = ["string", "number", "integer", "boolean", "object", "array", "decimal", "json-array", "empty"];

export function parseSpec(spec: FieldSpec): { types: string[]; optional: boolean } {
  const optional = spec.endsWith("?");
  const types = (optional ? spec.slice(0, -1) : spec).split("|").map((t) => t.trim());
  for (const t of types) if (!TYPES.includes(t)) throw new Error(`unknown field type ${t} in "${spec}"`);
  return { types, optional };
}

type Step = { key: string } | { each: true };

function steps(path: string): Step[] {
  const out: Step[] = [];
  for (const part of path.split(".")) {
    const m = /^([^[]*)((?:\[\])*)$/.exec(part);
    if (!m) throw new Error(`bad field path ${path}`);
    if (m[1]) out.push({ key: m[1] });
    for (let i = 0; i < m[2]!.length / 2; i++) out.push({ each: true });
  }
  return out;
}

function join(path: string, step: Step): string {
  if ("each" in step) return `${path}[]`;
  return path === "" ? step.key : `${path}.${step.key}`;
}

/** `a.b[].c` -> ["a", "a.b", "a.b[]"]: the containers above a path. */
function containers(path: string): string[] {
  const out: string[] = [];
  let at = "";
  const all = steps(path);
  for (let i = 0; i < all.length - 1; i++) {
    at = join(at, all[i]!);
    out.push(at);
  }
  return out;
}

function parentOf(path: string): string {
  return containers(path).at(-1) ?? "";
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const DECIMAL = /^-?\d+(\.\d+)?$/;

function matches(value: unknown, type: string): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isPlainObject(value);
    case "array":
      return Array.isArray(value);
    case "decimal":
      return typeof value === "string" && DECIMAL.test(value);
    case "empty":
      return value === "";
    case "json-array":
      if (typeof value !== "string") return false;
      try {
        return Array.isArray(JSON.parse(value));
      } catch {
        return false;
      }
    default:
      return false;
  }
}

/** How a value that did not match is shown: its JSON type, and a short string as itself. */
function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "string")
    return `string ${JSON.stringify(value.length > 24 ? `${value.slice(0, 24)}…` : value)}`;
  return typeof value;
}

export interface FieldIssue {
  field: string;
  /** Instances of the field (rows of its array) that have the problem, of all instances checked. */
  rows: number;
  of: number;
  expected?: string;
  /** For a type mismatch: one example of each JSON type seen instead (a short string as itself). */
  got?: string[];
}

export interface SampleResult {
  missing: FieldIssue[];
  wrongType: FieldIssue[];
  /** Fields the answer carries that no list names: what the venue added. */
  newFields: string[];
  /** Listed fields (optional or unread) the answer did not carry where their parent was: maybe removed. */
  notSeen: string[];
}

/**
 * Holds one answer against an endpoint's list. Containers above a read path (`markets`, `markets[]`)
 * are checked to be arrays or objects even when not listed; a container that is absent hides its
 * children (list it without `?` where its absence matters).
 */
export function checkSample(body: unknown, spec: Pick<EndpointFields, "read" | "known">): SampleResult {
  const read = new Map(Object.entries(spec.read).map(([p, s]) => [p, parseSpec(s)]));
  // Containers implied by the paths below them: optional, typed by what follows them.
  for (const path of read.keys()) {
    const all = steps(path);
    let at = "";
    for (let i = 0; i < all.length - 1; i++) {
      at = join(at, all[i]!);
      if (!read.has(at))
        read.set(at, { types: ["each" in all[i + 1]! ? "array" : "object"], optional: true });
    }
  }
  const known = new Set(spec.known ?? []);
  const missing: FieldIssue[] = [];
  const wrongType: FieldIssue[] = [];
  for (const [path, { types, optional }] of read) {
    let of = 0;
    let absent = 0;
    let wrong = 0;
    // One example of each JSON type seen instead.
    const got = new Map<string, string>();
    visit(body, steps(path), (value) => {
      of++;
      if (value === undefined || value === null) absent++;
      else if (!types.some((t) => matches(value, t))) {
        wrong++;
        const kind = Array.isArray(value) ? "array" : typeof value;
        if (!got.has(kind)) got.set(kind, describe(value));
      }
    });
    if (absent > 0 && !optional) missing.push({ field: path, rows: absent, of });
    if (wrong > 0)
      wrongType.push({ field: path, rows: wrong, of, expected: types.join("|"), got: [...got.values()] });
  }

  // Every path the answer carries, walked only into containers a list describes.
  const described = new Set<string>([""]);
  for (const path of [...read.keys(), ...known]) for (const c of containers(path)) described.add(c);
  const seen = new Set<string>();
  const newFields = new Set<string>();
  const walk = (value: unknown, path: string) => {
    if (!described.has(path)) return;
    if (Array.isArray(value)) {
      for (const item of value) note(item, join(path, { each: true }));
    } else if (isPlainObject(value)) {
      for (const [key, item] of Object.entries(value)) note(item, join(path, { key }));
    }
  };
  const note = (value: unknown, path: string) => {
    seen.add(path);
    if (!read.has(path) && !known.has(path) && !described.has(path)) {
      newFields.add(path);
      return;
    }
    walk(value, path);
  };
  walk(body, "");
  const notSeen = [...read.entries()]
    .filter(([p, s]) => s.optional && spec.read[p] !== undefined)
    .map(([p]) => p)
    .concat([...known])
    .filter((p) => !seen.has(p) && (parentOf(p) === "" || seen.has(parentOf(p))));
  return { missing, wrongType, newFields: [...newFields].sort(), notSeen: [...new Set(notSeen)].sort() };
}

/** Calls `fn` with the field's value (undefined when absent) in every place its parent exists. */
function visit(node: unknown, path: Step[], fn: (value: unknown) => void): void {
  if (path.length === 0) {
    fn(node);
    return;
  }
  const [step, ...rest] = path;
  if ("each" in step!) {
    if (!Array.isArray(node)) return;
    for (const item of node) {
      if (rest.length === 0) fn(item);
      else if (item !== null && item !== undefined) visit(item, rest, fn);
    }
    return;
  }
  if (!isPlainObject(node)) return;
  const child = node[step!.key];
  if (rest.length === 0) fn(child);
  else if (child !== null && child !== undefined) visit(child, rest, fn);
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

export type EndpointStatus = "ok" | "drift" | "error" | "unreachable" | "skipped";

export interface EndpointReport {
  venue: VenueId;
  endpoint: string;
  request: string;
  /**
   * ok: every read field present with its type; drift: some are not; error: the venue refused or
   * answered something that is not JSON (also drift: the endpoint changed); unreachable: no answer
   * (timeout, refused connection, 5xx, 429); skipped: not asked (reason says why).
   */
  status: EndpointStatus;
  reason?: string;
  http_status?: number;
  missing: FieldIssue[];
  wrong_type: FieldIssue[];
  new_fields: string[];
  not_seen: string[];
}

export interface VenueDriftReport {
  venue: VenueId;
  reachable: boolean;
  endpoints: EndpointReport[];
}

export interface DriftReport {
  /** 0: every read field present with its type; 1: drift somewhere; 2: no drift, but a venue unreachable. */
  exit_code: 0 | 1 | 2;
  venues: VenueDriftReport[];
}

export interface DriftOptions {
  config: Pick<Config, "venues" | "venueUrls" | "kalshiFeedKey">;
  /** These venues instead of the enabled ones (`--venue`). */
  venues?: VenueId[];
  /** Per HTTP call and per WebSocket wait, ms. Default 10 s. */
  timeoutMs?: number;
  /** One line per endpoint, as it starts and as it ends. */
  progress?: (line: string) => void;
  /** Unix ms, for the history window. */
  now?: () => number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

export async function runDriftCheck(options: DriftOptions): Promise<DriftReport> {
  const wanted = options.venues ?? options.config.venues;
  const venues: VenueDriftReport[] = [];
  for (const venue of wanted) {
    const run = new VenueRun(venue, options);
    if (venue === "polymarket") await checkPolymarket(run, options.config.venueUrls.polymarket);
    else await checkKalshi(run, options.config.venueUrls.kalshi, options.config.kalshiFeedKey);
    venues.push({ venue, reachable: run.reachable, endpoints: run.reports });
  }
  const all = venues.flatMap((v) => v.endpoints);
  const exit_code = all.some((e) => e.status === "drift" || e.status === "error")
    ? 1
    : all.some((e) => e.status === "unreachable")
      ? 2
      : 0;
  return { exit_code, venues };
}

/** What a step's fetch hands back: the answer to check, its HTTP status, a note for the report. */
interface Answer {
  body: unknown;
  status?: number;
  note?: string;
}

/** Thrown inside a step: the venue did not answer. */
class Unreachable extends Error {}
/** Thrown inside a step: the venue answered, but not with something we can check. */
class Refused extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** One venue's run: asks endpoints in order, keeping the report of each. */
class VenueRun {
  readonly reports: EndpointReport[] = [];
  reachable = true;
  readonly timeoutMs: number;
  readonly now: () => number;
  readonly #specs: Map<string, EndpointFields>;

  constructor(
    readonly venue: VenueId,
    private readonly options: DriftOptions,
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
    const list = venue === "polymarket" ? POLYMARKET_ENDPOINTS : KALSHI_ENDPOINTS;
    this.#specs = new Map(list.map((e) => [e.id, e]));
  }

  http(baseUrl: string, rateLimit = RATE_LIMITS.gamma): VenueHttp {
    return new VenueHttp({
      venue: this.venue,
      baseUrl,
      rateLimit,
      timeoutMs: this.timeoutMs,
      // Never wait on a retry (or on a venue's Retry-After): one answer or a clear failure.
      maxRetries: 0,
      describeError: this.venue === "polymarket" ? describePolymarketError : describeKalshiError,
    });
  }

  #progress(line: string): void {
    this.options.progress?.(`${this.venue} ${line}`);
  }

  #report(id: string, status: EndpointStatus, extra: Partial<EndpointReport> = {}): EndpointReport {
    const spec = this.#specs.get(id)!;
    const report: EndpointReport = {
      venue: this.venue,
      endpoint: id,
      request: spec.request,
      status,
      missing: [],
      wrong_type: [],
      new_fields: [],
      not_seen: [],
      ...extra,
    };
    this.reports.push(report);
    const detail =
      status === "ok" || status === "drift"
        ? [
            report.missing.length ? `${report.missing.length} missing` : "",
            report.wrong_type.length ? `${report.wrong_type.length} wrong type` : "",
            report.new_fields.length ? `${report.new_fields.length} new` : "",
            report.not_seen.length ? `${report.not_seen.length} not seen` : "",
          ]
            .filter(Boolean)
            .join(", ")
        : (report.reason ?? "");
    this.#progress(`${id}: ${status}${detail ? ` (${detail})` : ""}`);
    return report;
  }

  skip(id: string, reason: string): void {
    this.#report(id, "skipped", { reason });
  }

  /** Skips every endpoint not yet reported. */
  skipRest(reason: string): void {
    for (const id of this.#specs.keys())
      if (!this.reports.some((r) => r.endpoint === id)) this.skip(id, reason);
  }

  /**
   * Asks one endpoint through `fetch` (which returns the answer to check, or throws), checks it, and
   * returns the answer for the steps that follow (undefined when there is none).
   */
  async step(id: string, fetch: () => Promise<Answer>): Promise<unknown> {
    const spec = this.#specs.get(id)!;
    if (!this.reachable) {
      this.skip(id, `${this.venue} unreachable`);
      return undefined;
    }
    this.#progress(`${id}: ${spec.request} …`);
    let answer: Answer;
    try {
      answer = await deadline(fetch(), this.timeoutMs + 2_000, `${id} took longer than ${this.timeoutMs} ms`);
    } catch (error) {
      const { status, reason, unreachable } = classify(error);
      if (unreachable) {
        // Without an answer to the listing, nothing else of this venue can be asked.
        if (id === "markets") this.reachable = false;
        this.#report(id, "unreachable", { reason, ...(status ? { http_status: status } : {}) });
      } else {
        this.#report(id, "error", { reason, ...(status ? { http_status: status } : {}) });
      }
      return undefined;
    }
    const result = checkSample(answer.body, spec);
    const drift = result.missing.length > 0 || result.wrongType.length > 0;
    this.#report(id, drift ? "drift" : "ok", {
      ...(answer.status ? { http_status: answer.status } : {}),
      ...(answer.note ? { reason: answer.note } : {}),
      missing: result.missing,
      wrong_type: result.wrongType,
      new_fields: result.newFields,
      not_seen: result.notSeen,
    });
    return answer.body;
  }
}

function classify(error: unknown): { status?: number; reason: string; unreachable: boolean } {
  if (error instanceof Unreachable) return { reason: error.message, unreachable: true };
  if (error instanceof Refused)
    return { reason: error.message, unreachable: false, ...(error.status ? { status: error.status } : {}) };
  if (isVenueError(error)) {
    const status = error.details.status;
    const unreachable =
      error.kind === "unavailable" || error.kind === "timeout" || error.kind === "rate_limited";
    return { reason: error.message, unreachable, ...(status ? { status } : {}) };
  }
  return { reason: error instanceof Error ? error.message : String(error), unreachable: false };
}

/** `promise`, or an Unreachable after `ms`: a last guard, under the calls' own timeouts. */
function deadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Unreachable(message)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function get(http: VenueHttp, path: string, query: Record<string, string | number | boolean> = {}) {
  const response = await http.request("GET", path, { query });
  if (typeof response.body === "string" && response.body !== "")
    throw new Refused(`GET ${path} answered text, not JSON`, response.status);
  return { body: response.body, status: response.status };
}

const obj = (v: unknown): Record<string, unknown> | undefined => (isPlainObject(v) ? v : undefined);
const text = (v: unknown): string | undefined =>
  typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : undefined;

// ---------------------------------------------------------------------------------------------
// Polymarket
// ---------------------------------------------------------------------------------------------

async function checkPolymarket(run: VenueRun, urls: Config["venueUrls"]["polymarket"]): Promise<void> {
  const gamma = run.http(urls.gamma, RATE_LIMITS.gamma);
  const clob = run.http(urls.clob, RATE_LIMITS.clob);
  const markets = await run.step("markets", () =>
    get(gamma, "/markets/keyset", { closed: false, limit: 20 }),
  );
  if (!run.reachable) return run.skipRest("polymarket unreachable");
  const market = pickPolymarketMarket(obj(markets)?.["markets"]);
  const events = await run.step("events", () => get(gamma, "/events/keyset", { closed: false, limit: 5 }));
  const eventId =
    market?.eventId ?? text(obj((obj(events)?.["events"] as unknown[] | undefined)?.[0])?.["id"]);
  if (eventId) await run.step("event", () => get(gamma, `/events/${encodeURIComponent(eventId)}`));
  else run.skip("event", "no event id in the market or event listing");
  if (!market) {
    for (const id of ["clob-market", "book", "history"])
      run.skip(id, "no market with a condition id and two token ids in the listing");
  } else {
    await run.step("clob-market", () => get(clob, `/clob-markets/${encodeURIComponent(market.conditionId)}`));
    await run.step("book", () => get(clob, "/book", { token_id: market.yes }));
    const end = Math.floor(run.now() / 1000);
    await run.step("history", () =>
      get(clob, "/prices-history", { market: market.yes, startTs: end - 86_400, endTs: end, fidelity: 60 }),
    );
  }
  await run.step("version", () => get(clob, "/version"));
  if (!market) run.skip("ws", "no market to subscribe to");
  else {
    const base = urls.ws.replace(/\/$/, "");
    const url = /\/market$/.test(base) ? base : `${base}/market`;
    await run.step("ws", () => polymarketWs(url, market, run.timeoutMs));
  }
}

interface PickedPolymarket {
  conditionId: string;
  yes: string;
  no: string;
  eventId?: string;
}

/** The first market with a condition id and two token ids, preferring one that takes orders. */
function pickPolymarketMarket(rows: unknown): PickedPolymarket | undefined {
  if (!Array.isArray(rows)) return undefined;
  const usable = rows
    .map(obj)
    .filter((m): m is Record<string, unknown> => m !== undefined)
    .map((m) => {
      let tokens: unknown;
      try {
        tokens = typeof m["clobTokenIds"] === "string" ? JSON.parse(m["clobTokenIds"]) : m["clobTokenIds"];
      } catch {
        tokens = undefined;
      }
      const conditionId = text(m["conditionId"]);
      if (!conditionId || !Array.isArray(tokens) || tokens.length !== 2) return undefined;
      const eventId = text(obj((m["events"] as unknown[] | undefined)?.[0])?.["id"]);
      return {
        picked: {
          conditionId,
          yes: String(tokens[0]),
          no: String(tokens[1]),
          ...(eventId ? { eventId } : {}),
        },
        live: m["acceptingOrders"] !== false && m["enableOrderBook"] !== false,
      };
    })
    .filter((m) => m !== undefined);
  return (usable.find((m) => m.live) ?? usable[0])?.picked;
}

/**
 * Subscribes to both tokens of a market on the market channel and keeps the first message of each
 * event type until the YES token's `book` arrives (or the wait ends: then `book` is missing).
 */
function polymarketWs(url: string, market: PickedPolymarket, timeoutMs: number): Promise<Answer> {
  return socketSample(url, {}, timeoutMs, (socket, sample) => ({
    open: () =>
      socket.send(
        JSON.stringify({ assets_ids: [market.yes, market.no], type: "market", custom_feature_enabled: true }),
      ),
    message: (text) => {
      for (const msg of parseWsFrame(text, () => {})) {
        const type = typeof msg["event_type"] === "string" ? msg["event_type"] : "<no event_type>";
        if (!(type in sample)) sample[type] = msg;
        if (type === "book" && msg["asset_id"] === market.yes) {
          sample[type] = msg;
          return true;
        }
      }
      return false;
    },
  }));
}

// ---------------------------------------------------------------------------------------------
// Kalshi
// ---------------------------------------------------------------------------------------------

async function checkKalshi(
  run: VenueRun,
  urls: Config["venueUrls"]["kalshi"],
  feedKey: KalshiKey | undefined,
): Promise<void> {
  const api = run.http(urls.api, KALSHI_CAPABILITIES.rateLimits.read);
  const markets = await run.step("markets", () =>
    get(api, "/markets", { limit: 20, mve_filter: "exclude", status: "open" }),
  );
  if (!run.reachable) return run.skipRest("kalshi unreachable");
  const rows = (obj(markets)?.["markets"] as unknown[] | undefined) ?? [];
  const market = rows
    .map(obj)
    .find((m) => text(m?.["ticker"]) !== undefined && text(m?.["event_ticker"]) !== undefined);
  const ticker = text(market?.["ticker"]);
  const eventTicker = text(market?.["event_ticker"]);
  await run.step("events", () =>
    get(api, "/events", { limit: 5, with_nested_markets: true, status: "open" }),
  );
  let seriesTicker: string | undefined;
  if (eventTicker) {
    const event = await run.step("event", () => get(api, `/events/${encodeURIComponent(eventTicker)}`));
    seriesTicker = text(obj(obj(event)?.["event"])?.["series_ticker"]);
  } else run.skip("event", "no market with an event ticker in the listing");
  if (seriesTicker) await run.step("series", () => get(api, `/series/${encodeURIComponent(seriesTicker)}`));
  else run.skip("series", "no series ticker from the event");
  if (ticker) await run.step("book", () => get(api, `/markets/${encodeURIComponent(ticker)}/orderbook`));
  else run.skip("book", "no market in the listing");
  if (ticker && seriesTicker) {
    const end = Math.floor(run.now() / 1000);
    await run.step("history", () =>
      get(
        api,
        `/series/${encodeURIComponent(seriesTicker)}/markets/${encodeURIComponent(ticker)}/candlesticks`,
        { start_ts: end - 86_400, end_ts: end, period_interval: 60 },
      ),
    );
  } else run.skip("history", "no market and series from the listing and event");
  await run.step("cutoff", () => get(api, "/historical/cutoff"));
  if (!feedKey) run.skip("ws", "needs KALSHI_FEED_KEY_ID (the WebSocket requires authentication)");
  else if (!ticker) run.skip("ws", "no market to subscribe to");
  else await run.step("ws", () => kalshiWs(urls.ws, feedKey, ticker, run.timeoutMs));
}

/**
 * Signs the upgrade as the feed does, subscribes one market to the market-data channels and keeps
 * the first message of each type until the subscription's `subscribed` and `orderbook_snapshot`.
 */
function kalshiWs(url: string, key: KalshiKey, ticker: string, timeoutMs: number): Promise<Answer> {
  const headers = kalshiAuthHeaders(key, "GET", new URL(url).pathname, Date.now());
  return socketSample(url, headers, timeoutMs, (socket, sample) => ({
    open: () =>
      socket.send(
        JSON.stringify({
          id: 1,
          cmd: "subscribe",
          params: { channels: [...MARKET_CHANNELS], market_tickers: [ticker] },
        }),
      ),
    message: (text) => {
      let msg: unknown;
      try {
        msg = JSON.parse(text);
      } catch {
        sample["<not JSON>"] ??= text.slice(0, 100);
        return false;
      }
      const o = obj(msg);
      const type = typeof o?.["type"] === "string" ? o["type"] : "<no type>";
      if (!(type in sample)) sample[type] = msg;
      return "subscribed" in sample && "orderbook_snapshot" in sample;
    },
  }));
}

/**
 * Opens a socket, lets `handlers` collect a sample, and resolves with it once `message` says it is
 * complete or `timeoutMs` has passed; the socket is always closed. A refused upgrade is `Refused`
 * (the venue answered), no connection at all is `Unreachable`.
 */
function socketSample(
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
  handlers: (
    socket: WebSocket,
    sample: Record<string, unknown>,
  ) => { open: () => void; message: (text: string) => boolean },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sample: Record<string, unknown> = {};
    let opened = false;
    let done = false;
    let note: string | undefined;
    const socket = new WebSocket(url, { headers, handshakeTimeout: timeoutMs });
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on("error", () => {});
      socket.terminate();
      if (error) reject(error);
      else resolve({ body: sample, status: 101, ...(note ? { note } : {}) });
    };
    const timer = setTimeout(() => {
      if (opened) {
        note = `stopped waiting after ${timeoutMs} ms; saw ${Object.keys(sample).join(", ") || "no message"}`;
        finish();
      } else finish(new Unreachable(`no WebSocket connection to ${url} within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = handlers(socket, sample);
    socket.on("unexpected-response", (_request, response) => {
      finish(new Refused(`WebSocket upgrade refused: HTTP ${response.statusCode}`, response.statusCode));
    });
    socket.on("open", () => {
      opened = true;
      try {
        on.open();
      } catch (error) {
        finish(error as Error);
      }
    });
    socket.on("message", (data, isBinary) => {
      if (isBinary) return;
      if (on.message(data.toString())) finish();
    });
    socket.on("error", (error) => {
      finish(
        opened
          ? new Refused(`WebSocket error: ${error.message}`)
          : new Unreachable(`WebSocket: ${error.message}`),
      );
    });
    socket.on("close", (code) => {
      if (!opened) return finish(new Unreachable(`WebSocket closed before it opened (${code})`));
      note = `the venue closed the socket (${code}); saw ${Object.keys(sample).join(", ") || "no message"}`;
      finish();
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

/** The report as people read it: one table row per endpoint, then what is wrong or new. */
export function formatDriftReport(report: DriftReport): string {
  const rows = report.venues.flatMap((v) => v.endpoints);
  const head = ["venue", "endpoint", "status", "missing", "wrong type", "new", "not seen"];
  const table = rows.map((r) => [
    r.venue,
    r.endpoint,
    r.status,
    String(r.missing.length),
    String(r.wrong_type.length),
    String(r.new_fields.length),
    String(r.not_seen.length),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const out = [line(head), line(widths.map((w) => "-".repeat(w))), ...table.map(line)];
  for (const r of rows) {
    if (r.status === "skipped") {
      out.push("", `${r.venue} ${r.endpoint}: skipped: ${r.reason ?? ""}`);
      continue;
    }
    const notes: string[] = [];
    if (r.reason) notes.push(`  ${r.status}: ${r.reason}`);
    for (const m of r.missing) notes.push(`  MISSING ${m.field} (in ${m.rows} of ${m.of})`);
    for (const w of r.wrong_type)
      notes.push(
        `  WRONG TYPE ${w.field}: expected ${w.expected}, got ${w.got!.join(", ")} (in ${w.rows} of ${w.of})`,
      );
    if (r.new_fields.length > 0) notes.push(`  new: ${r.new_fields.join(", ")}`);
    if (r.not_seen.length > 0) notes.push(`  not seen (optional, or removed): ${r.not_seen.join(", ")}`);
    if (notes.length > 0) out.push("", `${r.venue} ${r.endpoint}: ${r.request}`, ...notes);
  }
  out.push(
    "",
    report.exit_code === 0
      ? "every field the adapters read is present with its type"
      : report.exit_code === 1
        ? "DRIFT: fields the adapters read are missing or changed (see above)"
        : "no drift seen, but a venue could not be reached",
  );
  return out.join("\n");
}
