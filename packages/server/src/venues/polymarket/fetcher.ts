/**
 * Polymarket I/O for public data: Gamma discovery with complete pagination, markets by condition
 * id, CLOB books and prices-history. Every call goes through VenueHttp (budget, timeout, retries);
 * parsing is delegated to the pure normalizers. Pagination never trusts the page size we asked for
 * (a server may cap `limit` lower): offset pages advance by what was returned and end on an empty
 * page; keyset pages end when `next_cursor` is absent. VENUES.md §1.2, §1.3, §1.7.
 */
import { type Clock, isoFromMs, systemClock } from "../../infra/clock";
import { VenueError } from "../errors";
import { VenueHttp, type VenueHttpOptions } from "../http";
import type { OrderBook, PricePoint, VenueEvent, VenueMarket } from "../model";
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

export interface VenueLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export const silentLog: VenueLog = { info: () => {}, warn: () => {} };

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

/** Gamma caps (VENUES.md §1.2): offset listing limit ≤ 100 and offset ≤ 10,000; keyset limit ≤ 500. */
export const GAMMA_PAGE = 100;
export const GAMMA_MAX_OFFSET = 10_000;
export const KEYSET_PAGE = 500;

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
export function reportOnce(log: VenueLog): Report {
  const reporter = createDataReporter("polymarket", (obj, msg) => log.warn(obj, msg));
  return (kind, detail) => reporter.report(kind, { detail });
}

export interface FetcherOptions {
  gammaUrl: string;
  clobUrl: string;
  dataUrl: string;
  clock?: Clock;
  log?: VenueLog;
  /** Overrides for every VenueHttp (tests: sleep, retries, timeouts). */
  http?: Partial<Omit<VenueHttpOptions, "venue" | "baseUrl" | "rateLimit">>;
}

export interface MarketMeta extends TokenPair {
  tickSize: number;
  minSize: number;
  negRisk: boolean;
}

export class PolymarketFetcher {
  readonly gamma: VenueHttp;
  readonly clob: VenueHttp;
  readonly trade: VenueHttp;
  readonly data: VenueHttp;
  readonly clock: Clock;
  readonly log: VenueLog;
  readonly report: Report;
  /** conditionId -> tokens and order rules, from every market we have parsed. */
  readonly #meta = new Map<string, MarketMeta>();
  /** token id -> conditionId. */
  readonly #tokenToCondition = new Map<string, string>();

  constructor(options: FetcherOptions) {
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? silentLog;
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
   * Offset pages of a bare-array endpoint. Advances by the rows actually returned, ends on an empty
   * page, and stops at Gamma's offset cap (returning `capped: true`) instead of erroring there.
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
      const response = await this.gamma.request("GET", path, {
        query: { ...query, limit: GAMMA_PAGE, offset },
      });
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
   * Keyset pages (`after_cursor` = previous `next_cursor`). The envelope is unverified in VENUES.md
   * §1.2, so we accept a bare array or an object carrying `events`/`markets`/`data` plus `next_cursor`.
   */
  async *keysetPages(
    path: string,
    key: string,
    query: Record<string, string | number | boolean>,
    progress?: PageProgress,
  ): AsyncGenerator<unknown[], void> {
    let cursor: string | undefined;
    const seen = new Set<string>();
    let items = 0;
    for (let page = 1; ; page++) {
      const response = await this.gamma.request("GET", path, {
        query: { ...query, limit: KEYSET_PAGE, after_cursor: cursor },
      });
      const body = response.body;
      let rows: unknown;
      let next: unknown;
      if (Array.isArray(body)) rows = body;
      else if (isObject(body)) {
        rows = body[key] ?? body.data;
        next = body.next_cursor;
      }
      if (!Array.isArray(rows))
        throw new VenueError(
          "polymarket",
          "bad_response",
          `polymarket GET ${path}: no ${key} array in the page`,
        );
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
      for await (const page of this.keysetPages("/events/keyset", "events", query, progress)) {
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
      // `closed` is always sent: /markets otherwise applies an implicit closed=false.
      const pages = this.offsetPages("/markets", { closed, order: "id", ascending: true }, progress);
      let step = await pages.next();
      while (!step.done) {
        for (const raw of step.value) {
          const m = this.#market(raw);
          if (m && wanted(m)) markets.set(m.id, m);
        }
        step = await pages.next();
      }
      if (step.value.capped) {
        // Past Gamma's offset cap: finish through the keyset event listing, which has none.
        this.log.info(
          { venue: "polymarket", markets: markets.size },
          "polymarket: offset cap reached; using keyset",
        );
        for await (const raw of this.#eventRows({ closed })) {
          if (!isObject(raw) || !Array.isArray(raw.markets)) continue;
          const eventId =
            typeof raw.id === "string" || typeof raw.id === "number" ? `polymarket:${raw.id}` : undefined;
          for (const rawMarket of raw.markets) {
            const m = this.#market(rawMarket, eventId);
            if (m && wanted(m) && !markets.has(m.id)) markets.set(m.id, m);
          }
        }
      }
    }
    return [...markets.values()];
  }

  /** One market by our id, open or not (VENUES.md §1.2 gotcha: closed must be asked for). */
  async getMarket(marketId: string): Promise<VenueMarket> {
    const conditionId = conditionIdOf(marketId);
    for (const closed of [false, true]) {
      const response = await this.gamma.request("GET", "/markets", {
        query: { condition_ids: conditionId, closed },
      });
      if (!Array.isArray(response.body))
        throw new VenueError("polymarket", "bad_response", "polymarket GET /markets: expected an array");
      const raw = response.body.find(
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
          const response = await this.gamma.request("GET", "/markets", {
            query: { clob_token_ids: tokenId, closed },
          });
          for (const raw of Array.isArray(response.body) ? response.body : []) this.#market(raw);
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

  async getPriceHistory(
    marketId: string,
    options: { interval: "1m" | "1h" | "1d"; start: string; end: string },
  ): Promise<PricePoint[]> {
    const meta = await this.meta(marketId);
    const startTs = Math.floor(Date.parse(options.start) / 1000);
    const endTs = Math.floor(Date.parse(options.end) / 1000);
    if (!Number.isFinite(startTs) || !Number.isFinite(endTs))
      throw new VenueError("polymarket", "rejected", "price history needs ISO start and end");
    const fidelity = { "1m": 1, "1h": 60, "1d": 1440 }[options.interval];
    const response = await this.clob.request("GET", "/prices-history", {
      query: { market: meta.yes, startTs, endTs, fidelity },
    });
    return normalizePriceHistory(response.body, meta.yes, this.report);
  }
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
