/**
 * Polymarket I/O for public data: Gamma discovery with complete pagination, markets by condition
 * id, CLOB books and prices-history. Every call goes through VenueHttp (budget, timeout, retries);
 * parsing is delegated to the pure normalizers. Discovery and lookups use Gamma's keyset endpoints
 * (`/markets/keyset`, `/events/keyset`): the offset lists are deprecated and past their sunset
 * (VENUES-AUDIT #8) and are used only where keyset is not served, their 422 "offset too large"
 * ending the walk instead of failing it. Pagination never trusts the page size we asked for (a server
 * may cap `limit` lower): offset pages advance by what was returned and end on an empty page; keyset
 * pages end when `next_cursor` is absent. VENUES.md §1.2, §1.3, §1.7.
 */
import { type Clock, isoFromMs, systemClock } from "../../infra/clock";
import { type Logger, silentLogger } from "../../infra/log";
import { VenueError } from "../errors";
import { VenueHttp, type VenueHttpOptions } from "../http";
import type { OrderBook, PricePoint, VenueEvent, VenueHistory, VenueMarket } from "../model";
import { createDataReporter } from "../report";
import type { MarketQuery, PageProgress, RateLimitSpec } from "../venue";
import {
  isObject,
  normalizeGammaEvent,
  normalizeGammaMarket,
  normalizeOrderBook,
  normalizePriceHistory,
  PolymarketParseError,
  type Report,
  type TokenPair,
} from "./normalize";

/** Budgets from VENUES.md §1.7 (per 10 s), the tightest endpoint of each host we call. */
export const RATE_LIMITS = {
  /** Gamma `/markets` (300/10 s) is the tightest listing endpoint. */
  gamma: { requests: 300, windowMs: 10_000 },
  /** CLOB `/book`, `/price`, `/midpoint` 1,500/10 s; `/prices-history` 1,000. */
  clob: { requests: 1_000, windowMs: 10_000 },
  /** `/data/orders` 500/10 s; `POST /order` sustained 36,000/10 min = 600/10 s. */
  trade: { requests: 500, windowMs: 10_000 },
  /** Data API general 1,000/10 s. */
  data: { requests: 1_000, windowMs: 10_000 },
} satisfies Record<string, RateLimitSpec>;

/**
 * Gamma caps. Offset lists (deprecated): limit ≤ 100 and, third parties report, offset ≤ 10,000 (a 422
 * "offset too large" was also seen near 23,500; VENUES-AUDIT §4.1, unverified). Keyset: `/markets/keyset`
 * ≤ 100 a page, `/events/keyset` ≤ 500 (nautilus gamma docs).
 */
export const GAMMA_PAGE = 100;
export const GAMMA_MAX_OFFSET = 10_000;
export const MARKETS_KEYSET_PAGE = 100;
export const EVENTS_KEYSET_PAGE = 500;

/**
 * `/prices-history` limits (VENUES-AUDIT #6; observed by third parties, unverified): one request may
 * span at most 15 days (`endTs − startTs` ≤ 1,296,000 s, else 400 "'startTs' and 'endTs' interval is
 * too long"; Jon-Becker/prediction-market-analysis#55 windows at 15 days), and closed or resolved
 * markets answer empty below 720-minute fidelity (Polymarket/py-clob-client#216).
 */
export const HISTORY_WINDOW_MS = 15 * 86_400_000;
export const CLOSED_HISTORY_FIDELITY = 720;
const FIDELITY = { "1m": 1, "1h": 60, "1d": 1440 } as const;

/** A Gamma endpoint that is not served at all (404), as opposed to one that refused a request. */
function notServed(error: unknown): boolean {
  return error instanceof VenueError && error.kind === "not_found";
}

/** Pulls `{"error": "..."}` (or `errorMsg`) and an UPPER_CASE code out of a Polymarket error body. */
export function describePolymarketError(body: unknown): { message?: string; code?: string } {
  let message: string | undefined;
  if (typeof body === "string" && body.trim() !== "") message = body.trim().slice(0, 500);
  else if (isObject(body)) {
    const candidate = body.error ?? body.errorMsg ?? body.message;
    if (typeof candidate === "string" && candidate !== "") message = candidate;
  }
  if (!message) return {};
  const code =
    /\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/.exec(message)?.[1] ?? /order_version_mismatch/.exec(message)?.[0];
  return code ? { message, code } : { message };
}

/** Logs each report kind once per adapter, counting the rest (VENUES "Bad input": once per kind). */
export function reportOnce(log: Logger): Report {
  const reporter = createDataReporter("polymarket", log);
  return (kind, detail) => reporter.report(kind, { detail });
}

export interface FetcherOptions {
  gammaUrl: string;
  clobUrl: string;
  dataUrl: string;
  clock?: Clock;
  log?: Logger;
  /** Overrides for every VenueHttp (tests: sleep, retries, timeouts). */
  http?: Partial<Omit<VenueHttpOptions, "venue" | "baseUrl" | "rateLimit">>;
}

export interface MarketMeta extends TokenPair {
  tickSize: number;
  minSize: number;
  negRisk: boolean;
  /** Open when last listed: closed and resolved markets get history only at coarse fidelity. */
  open: boolean;
}

export class PolymarketFetcher {
  readonly gamma: VenueHttp;
  readonly clob: VenueHttp;
  readonly trade: VenueHttp;
  readonly data: VenueHttp;
  readonly clock: Clock;
  readonly log: Logger;
  readonly report: Report;
  /** conditionId -> tokens and order rules, from every market we have parsed. */
  readonly #meta = new Map<string, MarketMeta>();
  /** token id -> conditionId. */
  readonly #tokenToCondition = new Map<string, string>();

  constructor(options: FetcherOptions) {
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? silentLogger;
    this.report = reportOnce(this.log);
    const make = (baseUrl: string, rateLimit: RateLimitSpec) =>
      new VenueHttp({
        venue: "polymarket",
        baseUrl,
        rateLimit,
        clock: this.clock,
        describeError: describePolymarketError,
        ...options.http,
      });
    this.gamma = make(options.gammaUrl, RATE_LIMITS.gamma);
    this.clob = make(options.clobUrl, RATE_LIMITS.clob);
    this.trade = make(options.clobUrl, RATE_LIMITS.trade);
    this.data = make(options.dataUrl, RATE_LIMITS.data);
  }

  #ctx(eventId?: string) {
    return {
      now: isoFromMs(this.clock.now()),
      report: this.report,
      ...(eventId ? { eventId } : {}),
    };
  }

  #remember(market: VenueMarket): void {
    const meta: MarketMeta = {
      marketId: market.id,
      conditionId: market.venueMarketId,
      yes: market.outcomes.yes.venueTokenId,
      no: market.outcomes.no.venueTokenId,
      tickSize: market.tickSize,
      minSize: market.minSize,
      negRisk: market.negRisk,
      open: market.status === "open",
    };
    this.#meta.set(meta.conditionId, meta);
    this.#tokenToCondition.set(meta.yes, meta.conditionId);
    this.#tokenToCondition.set(meta.no, meta.conditionId);
  }

  /** Parses one Gamma market; logs and returns undefined when it cannot be parsed. */
  #market(raw: unknown, eventId?: string): VenueMarket | undefined {
    try {
      const market = normalizeGammaMarket(raw, this.#ctx(eventId));
      this.#remember(market);
      return market;
    } catch (error) {
      if (!(error instanceof PolymarketParseError)) throw error;
      this.#skipped(error);
      return undefined;
    }
  }

  #skipped(error: PolymarketParseError): void {
    this.log.warn(
      { venue: "polymarket", item: error.itemId, reason: error.reason },
      `polymarket: skipped ${error.itemId}: ${error.reason}`,
    );
  }

  // -------------------------------------------------------------------------------------------
  // Pagination
  // -------------------------------------------------------------------------------------------

  /**
   * Offset pages of a bare-array endpoint (the deprecated lists). Advances by the rows actually
   * returned, ends on an empty page, and stops at Gamma's offset cap — ours, or the venue's 422
   * "offset too large, use /markets/keyset" wherever it puts it — returning `capped: true` instead of
   * failing there.
   */
  async *offsetPages(
    path: string,
    query: Record<string, string | number | boolean>,
    progress?: PageProgress,
  ): AsyncGenerator<unknown[], { capped: boolean }> {
    let offset = 0;
    let items = 0;
    for (let page = 1; ; page++) {
      if (offset > GAMMA_MAX_OFFSET) return { capped: true };
      let response: Awaited<ReturnType<VenueHttp["request"]>>;
      try {
        response = await this.gamma.request("GET", path, {
          query: { ...query, limit: GAMMA_PAGE, offset },
        });
      } catch (error) {
        if (offset > 0 && error instanceof VenueError && error.details.status === 422) {
          this.report("gamma_offset_cap", `${path} at offset ${offset}: ${error.details.venueMessage ?? ""}`);
          return { capped: true };
        }
        throw error;
      }
      const warning = response.headers.get("warning");
      if (warning) this.report("gamma_deprecated", `${path}: ${warning}`);
      if (!Array.isArray(response.body))
        throw new VenueError("polymarket", "bad_response", `polymarket GET ${path}: expected an array`);
      if (response.body.length === 0) return { capped: false };
      items += response.body.length;
      progress?.({ page, items });
      yield response.body;
      offset += response.body.length;
    }
  }

  /**
   * Keyset pages (`after_cursor` = previous `next_cursor`), `pageSize` a page (100 for markets, 500
   * for events). We accept a bare array or an object carrying `events`/`markets`/`data` plus
   * `next_cursor`, which is absent on the last page.
   */
  async *keysetPages(
    path: string,
    key: string,
    query: Record<string, string | number | boolean>,
    pageSize: number,
    progress?: PageProgress,
  ): AsyncGenerator<unknown[], void> {
    let cursor: string | undefined;
    const seen = new Set<string>();
    let items = 0;
    for (let page = 1; ; page++) {
      const response = await this.gamma.request("GET", path, {
        query: { ...query, limit: pageSize, after_cursor: cursor },
      });
      const { rows, next } = keysetPage(response.body, key, path);
      items += rows.length;
      progress?.({ page, items });
      if (rows.length > 0) yield rows;
      if (typeof next !== "string" || next === "" || next === "LTE=" || rows.length === 0) return;
      if (seen.has(next))
        throw new VenueError("polymarket", "bad_response", `polymarket GET ${path}: cursor ${next} repeated`);
      seen.add(next);
      cursor = next;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Discovery — VENUES.md §1.2
  // -------------------------------------------------------------------------------------------

  async listEvents(query: MarketQuery = {}, progress?: PageProgress): Promise<VenueEvent[]> {
    const events = new Map<string, VenueEvent>();
    for (const closed of closedFlags(query.status)) {
      for await (const raw of this.#eventRows({ closed }, progress)) {
        try {
          const parsed = normalizeGammaEvent(raw, this.#ctx());
          for (const m of parsed.markets) this.#remember(m);
          for (const s of parsed.skipped) this.#skipped(s);
          if (query.venueEventId && parsed.event.venueEventId !== query.venueEventId) continue;
          events.set(parsed.event.id, parsed.event);
        } catch (error) {
          if (!(error instanceof PolymarketParseError)) throw error;
          this.#skipped(error);
        }
      }
    }
    return [...events.values()];
  }

  /** Events via keyset; falls back to offset pages if the keyset endpoint is not there. */
  async *#eventRows(query: { closed: boolean }, progress?: PageProgress): AsyncGenerator<unknown> {
    let started = false;
    try {
      for await (const page of this.keysetPages(
        "/events/keyset",
        "events",
        query,
        EVENTS_KEYSET_PAGE,
        progress,
      )) {
        started = true;
        yield* page;
      }
      return;
    } catch (error) {
      const missing =
        error instanceof VenueError && (error.kind === "not_found" || error.kind === "rejected");
      if (started || !missing) throw error;
      this.report("events_keyset_unavailable", (error as Error).message);
    }
    for await (const page of this.offsetPages(
      "/events",
      { ...query, order: "id", ascending: true },
      progress,
    ))
      yield* page;
  }

  async listMarkets(query: MarketQuery = {}, progress?: PageProgress): Promise<VenueMarket[]> {
    const wanted = (m: VenueMarket) => !query.status || query.status === "all" || m.status === query.status;
    if (query.venueEventId) {
      const response = await this.gamma.request("GET", `/events/${encodeURIComponent(query.venueEventId)}`);
      const parsed = normalizeGammaEvent(response.body, this.#ctx());
      for (const m of parsed.markets) this.#remember(m);
      for (const s of parsed.skipped) this.#skipped(s);
      return parsed.markets.filter(wanted);
    }
    const markets = new Map<string, VenueMarket>();
    for (const closed of closedFlags(query.status)) {
      // `closed` is always sent: the legacy /markets applies an implicit closed=false, and whether
      // keyset does is not documented.
      for await (const row of this.#marketRows({ closed }, progress)) {
        const m = this.#market(row.raw, row.eventId);
        // A market seen in the market listing keeps that row; the event listing only adds missing ones.
        if (m && wanted(m) && !(row.eventId !== undefined && markets.has(m.id))) markets.set(m.id, m);
      }
    }
    return [...markets.values()];
  }

  /**
   * Every market row: `/markets/keyset` pages. Where keyset is not served (404), the deprecated offset
   * list, which stops at Gamma's offset cap (or its 422) and is finished through the keyset event
   * listing, whose markets carry their event id.
   */
  async *#marketRows(
    query: { closed: boolean },
    progress?: PageProgress,
  ): AsyncGenerator<{ raw: unknown; eventId?: string }> {
    let started = false;
    try {
      for await (const page of this.keysetPages(
        "/markets/keyset",
        "markets",
        query,
        MARKETS_KEYSET_PAGE,
        progress,
      )) {
        started = true;
        for (const raw of page) yield { raw };
      }
      return;
    } catch (error) {
      if (started || !notServed(error)) throw error;
      this.report("markets_keyset_unavailable", (error as Error).message);
    }
    const pages = this.offsetPages("/markets", { ...query, order: "id", ascending: true }, progress);
    let step = await pages.next();
    while (!step.done) {
      for (const raw of step.value) yield { raw };
      step = await pages.next();
    }
    if (!step.value.capped) return;
    // Past Gamma's offset cap: finish through the keyset event listing, which has none.
    this.log.info({ venue: "polymarket" }, "polymarket: offset cap reached; using keyset");
    for await (const raw of this.#eventRows(query)) {
      if (!isObject(raw) || !Array.isArray(raw.markets)) continue;
      const eventId =
        typeof raw.id === "string" || typeof raw.id === "number" ? `polymarket:${raw.id}` : undefined;
      for (const rawMarket of raw.markets) yield eventId ? { raw: rawMarket, eventId } : { raw: rawMarket };
    }
  }

  /**
   * Gamma markets matching an id filter (`condition_ids`, `clob_token_ids`), open or closed ones:
   * `/markets/keyset`, or the deprecated `/markets` list where keyset is not served (404).
   */
  async #lookup(filter: Record<string, string>, closed: boolean): Promise<unknown[]> {
    try {
      const response = await this.gamma.request("GET", "/markets/keyset", {
        query: { ...filter, closed, limit: MARKETS_KEYSET_PAGE },
      });
      return keysetPage(response.body, "markets", "/markets/keyset").rows;
    } catch (error) {
      if (!notServed(error)) throw error;
    }
    const response = await this.gamma.request("GET", "/markets", { query: { ...filter, closed } });
    if (!Array.isArray(response.body))
      throw new VenueError("polymarket", "bad_response", "polymarket GET /markets: expected an array");
    return response.body;
  }

  /** One market by our id, open or not (VENUES.md §1.2 gotcha: closed must be asked for). */
  async getMarket(marketId: string): Promise<VenueMarket> {
    const conditionId = conditionIdOf(marketId);
    for (const closed of [false, true]) {
      const rows = await this.#lookup({ condition_ids: conditionId }, closed);
      const raw = rows.find(
        (m) =>
          isObject(m) && typeof m.conditionId === "string" && m.conditionId.toLowerCase() === conditionId,
      );
      if (raw !== undefined) {
        const market = normalizeGammaMarket(raw, this.#ctx());
        this.#remember(market);
        return market;
      }
    }
    throw new VenueError("polymarket", "not_found", `polymarket market ${conditionId} not found`);
  }

  /** A status learnt elsewhere (the feed's `market_resolved`), so the cached `open` stays right. */
  noteStatus(marketId: string, status: VenueMarket["status"]): void {
    const meta = this.#meta.get(conditionIdOf(marketId));
    if (meta) meta.open = status === "open";
  }

  async meta(marketId: string): Promise<MarketMeta> {
    const known = this.#meta.get(conditionIdOf(marketId));
    if (known) return known;
    await this.getMarket(marketId);
    return this.#meta.get(conditionIdOf(marketId))!;
  }

  /** Token id -> (market, outcome), fetching by token when unknown. */
  async tokenOwner(
    tokenId: string,
    conditionId?: string,
  ): Promise<{ meta: MarketMeta; outcome: "yes" | "no" }> {
    let cid = this.#tokenToCondition.get(tokenId) ?? conditionId?.toLowerCase();
    if (!cid || !this.#meta.has(cid)) {
      if (cid) await this.getMarket(`polymarket:${cid}`);
      else {
        for (const closed of [false, true]) {
          for (const raw of await this.#lookup({ clob_token_ids: tokenId }, closed)) this.#market(raw);
          cid = this.#tokenToCondition.get(tokenId);
          if (cid) break;
        }
      }
    }
    const meta = cid ? this.#meta.get(cid) : undefined;
    if (!meta || (meta.yes !== tokenId && meta.no !== tokenId))
      throw new VenueError(
        "polymarket",
        "not_found",
        `polymarket token ${tokenId} belongs to no known market`,
      );
    return { meta, outcome: meta.yes === tokenId ? "yes" : "no" };
  }

  // -------------------------------------------------------------------------------------------
  // CLOB market data — VENUES.md §1.3
  // -------------------------------------------------------------------------------------------

  async getOrderBook(marketId: string, depth?: number): Promise<OrderBook> {
    const meta = await this.meta(marketId);
    const [yes, no] = await Promise.all([
      this.clob.request("GET", "/book", { query: { token_id: meta.yes } }),
      this.clob.request("GET", "/book", { query: { token_id: meta.no } }),
    ]);
    return normalizeOrderBook(meta, yes.body, no.body, this.report, {
      nowMs: this.clock.now(),
      ...(depth !== undefined ? { depth } : {}),
    });
  }

  /**
   * The YES token's price points for [start, end) (VENUES.md §1.3, VENUES-AUDIT #6), asked in windows
   * of at most 15 days, each point kept only inside its window (a live market's answer has been seen
   * to append the current price past `endTs`). A closed or resolved market answers empty below
   * 720-minute fidelity: when a finer window of one comes back empty, it and the rest are asked at 720
   * minutes, the first one reaching one step earlier so the price in force at the start is known (it
   * is stamped at the start), and the answer says the points are that coarse.
   */
  async getPriceHistory(
    marketId: string,
    options: { interval: "1m" | "1h" | "1d"; start: string; end: string },
  ): Promise<VenueHistory> {
    const meta = await this.meta(marketId);
    const start = Date.parse(options.start);
    const end = Date.parse(options.end);
    if (!Number.isFinite(start) || !Number.isFinite(end))
      throw new VenueError("polymarket", "rejected", "price history needs ISO start and end");
    const asked = FIDELITY[options.interval];
    let fidelity: number = asked;
    let lookBack = false;
    const points: PricePoint[] = [];
    for (let a = start; a < end; ) {
      const from = lookBack ? a - fidelity * 60_000 : a;
      const b = Math.min(end, from + HISTORY_WINDOW_MS);
      const got = await this.#historyWindow(meta.yes, from, b, fidelity);
      if (got.length === 0 && !meta.open && fidelity < CLOSED_HISTORY_FIDELITY) {
        fidelity = CLOSED_HISTORY_FIDELITY;
        lookBack = true;
        continue;
      }
      let before: PricePoint | undefined;
      let first = true;
      for (const point of got) {
        const at = Date.parse(point.timestamp);
        if (at < a) before = point;
        else if (at < b) {
          if (first && before && at > a) points.push({ timestamp: isoFromMs(a), price: before.price });
          first = false;
          points.push(point);
        }
      }
      if (first && before) points.push({ timestamp: isoFromMs(a), price: before.price });
      lookBack = false;
      a = b;
    }
    return fidelity > asked ? { series: points, coarserMinutes: fidelity } : { series: points };
  }

  async #historyWindow(token: string, from: number, to: number, fidelity: number): Promise<PricePoint[]> {
    const response = await this.clob.request("GET", "/prices-history", {
      query: {
        market: token,
        startTs: Math.floor(from / 1000),
        endTs: Math.floor(to / 1000),
        fidelity,
      },
    });
    return normalizePriceHistory(response.body, token, this.report);
  }
}

/** Rows and cursor of one keyset page: a bare array, or `{[key] | data, next_cursor?}`. */
function keysetPage(body: unknown, key: string, path: string): { rows: unknown[]; next: unknown } {
  let rows: unknown;
  let next: unknown;
  if (Array.isArray(body)) rows = body;
  else if (isObject(body)) {
    rows = body[key] ?? body.data;
    next = body.next_cursor;
  }
  if (!Array.isArray(rows))
    throw new VenueError("polymarket", "bad_response", `polymarket GET ${path}: no ${key} array in the page`);
  return { rows, next };
}

function closedFlags(status: MarketQuery["status"]): boolean[] {
  if (status === undefined || status === "open") return [false];
  if (status === "closed" || status === "resolved") return [true];
  return [false, true];
}

/** `polymarket:0xabc…` (or a bare condition id) -> lower-case condition id. */
export function conditionIdOf(marketId: string): string {
  const raw = marketId.startsWith("polymarket:") ? marketId.slice("polymarket:".length) : marketId;
  if (!/^0x[0-9a-fA-F]{64}$/.test(raw))
    throw new VenueError("polymarket", "not_found", `${marketId} is not a Polymarket market id`);
  return raw.toLowerCase();
}
