/**
 * The Kalshi venue (Trade API v2): discovery through every page with combo markets excluded, one
 * market, books, candlesticks, the live feed (only with a feed key: the WebSocket requires auth),
 * and the account side on V2 order entry. Markets, candles, orders and fills Kalshi has moved past
 * its historical cutoff are read from `/historical/*` when the live endpoints no longer have them.
 * I/O lives in fetcher.ts, parsing in normalize.ts (market data) and account.ts (portfolio), both
 * pure, signing in auth.ts, order shapes in orders.ts; this file wires them to the Venue interface.
 */
import { randomUUID } from "node:crypto";
import { type Clock, isoNow, systemClock } from "../../infra/clock";
import { type Logger, silentLogger } from "../../infra/log";
import type { Micros } from "../decimal";
import { isVenueError, VenueError } from "../errors";
import type { Candle, MarketStatus, OrderBook, VenueEvent, VenueMarket } from "../model";
import { createDataReporter, type DataReporter } from "../report";
import type {
  FeedEvent,
  FeedSubscription,
  MarketQuery,
  PageProgress,
  Venue,
  VenueCredentials,
  VenueFill,
  VenueOrder,
  VenueOrderRequest,
  VenuePosition,
} from "../venue";
import { normalizeBalance, normalizeFill, normalizeOrder, normalizePosition } from "./account";
import type { KalshiKey } from "./auth";
import { KALSHI_CAPABILITIES } from "./capabilities";
import { KalshiFeed, type KalshiFeedOptions } from "./feed";
import { KalshiFetcher, type KalshiFetcherOptions } from "./fetcher";
import {
  type EventInfo,
  eventInfo,
  type HistoricalCutoff,
  KalshiParseError,
  type NormalizeContext,
  normalizeCandles,
  normalizeCutoff,
  normalizeEvent,
  normalizeMarket,
  normalizeMarkets,
  normalizeOrderBook,
  PERIOD_MINUTES,
  type SeriesFees,
  seriesFees,
  tickerFromMarketId,
} from "./normalize";
import { orderFromV2Response, toV2OrderBody } from "./orders";

export interface KalshiVenueConfig {
  apiUrl: string;
  wsUrl: string;
  clock?: Clock;
  log?: Logger;
  /**
   * Signs the market-data WebSocket, which Kalshi requires ("authentication is required to
   * establish the connection", docs.kalshi.com/websockets/websocket-connection). Without it no feed
   * is started (`feedUnavailable` says why) and prices come from REST.
   */
  feedKey?: KalshiKey;
  /** Page sizes (VENUES.md §2.2: markets ≤ 1000, events ≤ 200; positions ≤ 1000, default 200). */
  pageLimit?: { markets?: number; events?: number; positions?: number };
  http?: KalshiFetcherOptions["http"];
  feed?: Pick<KalshiFeedOptions, "backoffBaseMs" | "backoffCapMs" | "pingIntervalMs" | "onFill">;
}

/** How often the series list (fee types and multipliers) is asked for what changed. */
const SERIES_REFRESH_MS = 60_000;
/** `min_updated_ts` reaches back this far before the last check, for clock skew. */
const SERIES_OVERLAP_S = 60;

/** How long `GET /historical/cutoff` is trusted; the venue moves it forward over time. */
const CUTOFF_TTL_MS = 10 * 60_000;

/** Why the feed is off without a key (shown in `GET /v1/venues` health). */
export const KALSHI_FEED_NEEDS_KEY =
  "Kalshi's market-data WebSocket requires authentication and no feed key is configured " +
  "(KALSHI_FEED_KEY_ID and KALSHI_FEED_PRIVATE_KEY_FILE); Kalshi prices come from REST polling";

/** Our status filter -> Kalshi's list filter (which uses a different vocabulary than objects). */
const STATUS_FILTER: Record<MarketStatus, string> = { open: "open", closed: "closed", resolved: "settled" };

function keyOf(credentials: VenueCredentials): KalshiKey {
  if (credentials.venue !== "kalshi") {
    throw new VenueError("kalshi", "auth_failed", `credentials for ${credentials.venue} given to kalshi`);
  }
  return { keyId: credentials.keyId, privateKeyPem: credentials.privateKeyPem };
}

export class KalshiVenue implements Venue {
  readonly id = "kalshi" as const;
  readonly capabilities: Venue["capabilities"];
  readonly feedUnavailable?: string;
  readonly reporter: DataReporter;
  readonly #fetcher: KalshiFetcher;
  readonly #clock: Clock;
  readonly #events = new Map<string, EventInfo>();
  /** Series ticker -> its fee type and multiplier (see #refreshSeries). */
  readonly #series = new Map<string, SeriesFees>();
  #seriesCheckedAt: number | null = null;
  /** ticker -> event_ticker, learned from listings, so candles need no extra market lookup. */
  readonly #eventOfMarket = new Map<string, string>();
  #cutoff: { at: number; value: Promise<HistoricalCutoff | null> } | undefined;

  constructor(private readonly config: KalshiVenueConfig) {
    this.#clock = config.clock ?? systemClock;
    this.reporter = createDataReporter("kalshi", config.log ?? silentLogger);
    if (config.feedKey) this.capabilities = KALSHI_CAPABILITIES;
    else {
      // An unsigned upgrade is refused (401): rather than a socket that reconnects forever, no feed.
      this.capabilities = {
        ...KALSHI_CAPABILITIES,
        supports: { ...KALSHI_CAPABILITIES.supports, feed: false },
      };
      this.feedUnavailable = KALSHI_FEED_NEEDS_KEY;
    }
    this.#fetcher = new KalshiFetcher({
      apiUrl: config.apiUrl,
      clock: this.#clock,
      report: this.reporter.report,
      ...(config.http ? { http: config.http } : {}),
    });
  }

  #ctx(): NormalizeContext {
    return { report: this.reporter.report, now: isoNow(this.#clock) };
  }

  // --- discovery ------------------------------------------------------------------------------

  async listEvents(query: MarketQuery = {}, progress?: PageProgress): Promise<VenueEvent[]> {
    await this.#refreshSeries();
    const ctx = this.#ctx();
    const raws = await this.#fetcher.all(
      "/events",
      "events",
      {
        limit: this.config.pageLimit?.events ?? 200,
        with_nested_markets: true,
        ...(query.status && query.status !== "all" ? { status: STATUS_FILTER[query.status] } : {}),
      },
      progress ? { progress } : {},
    );
    const events: VenueEvent[] = [];
    for (const raw of raws) {
      try {
        const { event, info, markets } = normalizeEvent(raw, ctx, (series) => this.#series.get(series));
        this.#events.set(info.eventTicker, info);
        this.#remember(markets);
        if (query.venueEventId && event.venueEventId !== query.venueEventId) continue;
        events.push(event);
      } catch (error) {
        if (!(error instanceof KalshiParseError)) throw error;
        this.reporter.report("event_parse_failed", { err: error });
      }
    }
    return events;
  }

  async listMarkets(query: MarketQuery = {}, progress?: PageProgress): Promise<VenueMarket[]> {
    const ctx = this.#ctx();
    const raws = await this.#fetcher.all(
      "/markets",
      "markets",
      {
        limit: this.config.pageLimit?.markets ?? 1000,
        mve_filter: "exclude",
        ...(query.status && query.status !== "all" ? { status: STATUS_FILTER[query.status] } : {}),
        ...(query.venueEventId ? { event_ticker: query.venueEventId } : {}),
      },
      progress ? { progress } : {},
    );
    // Settlement sources and fee overrides live on events, fee types on series: borrowed from those
    // listEvents (which reads the series first) or getMarket has seen.
    const { markets } = normalizeMarkets(raws, ctx, (ticker) => this.#withSeries(this.#events.get(ticker)));
    this.#remember(markets);
    return markets;
  }

  #remember(markets: VenueMarket[]): void {
    for (const m of markets) {
      if (m.eventId) this.#eventOfMarket.set(m.venueMarketId, tickerFromMarketId(m.eventId));
    }
  }

  /**
   * Every series' fee type and multiplier, which markets need and do not carry. Series are shared by
   * many markets: one `GET /series` the first time (the whole list, no paging), then only the series
   * updated since (`min_updated_ts`), at most once a minute. A failure keeps what is known and is
   * reported; markets of a series not known show no `fees` and are charged the default schedule.
   */
  async #refreshSeries(): Promise<void> {
    const now = this.#clock.now();
    const since = this.#seriesCheckedAt;
    if (since !== null && now - since < SERIES_REFRESH_MS) return;
    try {
      const body = await this.#fetcher.get(
        "/series",
        since === null ? {} : { min_updated_ts: Math.floor(since / 1000) - SERIES_OVERLAP_S },
      );
      const list = body["series"];
      for (const raw of Array.isArray(list) ? list : []) this.#learnSeries(raw);
      this.#seriesCheckedAt = now;
    } catch (error) {
      this.reporter.report("series_lookup_failed", { err: error });
    }
  }

  /** One series' fees, for a market whose series no listing has shown (`GET /series/{ticker}`). */
  async #seriesOf(seriesTicker: string): Promise<void> {
    if (this.#series.has(seriesTicker)) return;
    try {
      const body = await this.#fetcher.get(`/series/${encodeURIComponent(seriesTicker)}`);
      this.#learnSeries(body["series"]);
    } catch (error) {
      this.reporter.report("series_lookup_failed", { err: error, series_ticker: seriesTicker });
    }
  }

  #learnSeries(raw: unknown): void {
    const read = seriesFees(raw);
    if (read) this.#series.set(read.ticker, read.fees);
    else this.reporter.report("series_without_fees", { series: JSON.stringify(raw).slice(0, 200) });
  }

  /** An event's facts with its series' current fees. */
  #withSeries(info: EventInfo | undefined): EventInfo | undefined {
    if (!info?.seriesTicker) return info;
    const fees = this.#series.get(info.seriesTicker);
    return fees === info.seriesFees ? info : { ...info, seriesFees: fees };
  }

  async #event(eventTicker: string): Promise<EventInfo | undefined> {
    const cached = this.#events.get(eventTicker);
    if (cached) return cached;
    const body = await this.#fetcher.get(`/events/${encodeURIComponent(eventTicker)}`);
    const info = eventInfo(body["event"]);
    if (info) this.#events.set(eventTicker, info);
    return info;
  }

  /**
   * One market; a market settled before Kalshi's historical cutoff is gone from `GET /markets/{t}`
   * (404) and read from `GET /historical/markets/{t}` instead (SDK 3.30 `HistoricalApi`).
   */
  async getMarket(id: string): Promise<VenueMarket> {
    const ticker = tickerFromMarketId(id);
    const raw = await this.#marketJson(ticker);
    const eventTicker = (raw as { event_ticker?: unknown } | undefined)?.event_ticker;
    let info: EventInfo | undefined;
    if (typeof eventTicker === "string" && eventTicker.length > 0) {
      info = await this.#event(eventTicker).catch((error: unknown) => {
        this.reporter.report("event_lookup_failed", { err: error, event_ticker: eventTicker });
        return undefined;
      });
    }
    if (info?.seriesTicker) await this.#seriesOf(info.seriesTicker);
    const market = normalizeMarket(raw, this.#ctx(), this.#withSeries(info));
    this.#remember([market]);
    return market;
  }

  async getOrderBook(id: string, depth?: number): Promise<OrderBook> {
    const ticker = tickerFromMarketId(id);
    // Kalshi takes depth 1–100 or 0 (= all); deeper requests ask for all and are cut here.
    const body = await this.#fetcher.get(`/markets/${encodeURIComponent(ticker)}/orderbook`, {
      ...(depth !== undefined && depth > 0 ? { depth: depth > 100 ? 0 : depth } : {}),
    });
    const book = normalizeOrderBook(body, ticker, isoNow(this.#clock));
    if (depth === undefined || depth <= 100) return book;
    const cut = (side: OrderBook["yes"]) => ({
      bids: side.bids.slice(0, depth),
      asks: side.asks.slice(0, depth),
    });
    return { ...book, yes: cut(book.yes), no: cut(book.no) };
  }

  /** `GET /markets/{t}`, or `GET /historical/markets/{t}` once the live one 404s. */
  async #marketJson(ticker: string): Promise<unknown> {
    const path = `/markets/${encodeURIComponent(ticker)}`;
    try {
      return (await this.#fetcher.get(path))["market"];
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        return (await this.#fetcher.get(`/historical${path}`))["market"];
      } catch (historical) {
        // Unknown in both tiers: the live endpoint's 404 is the answer.
        if (isNotFound(historical)) throw error;
        throw historical;
      }
    }
  }

  /**
   * Candlesticks live under the series, which must come from the event (VENUES.md §2.3). A market
   * past the historical cutoff (its live lookup or candles answer 404) is read from
   * `GET /historical/markets/{t}/candlesticks`, which needs no series.
   */
  async getPriceHistory(
    id: string,
    options: { interval: "1m" | "1h" | "1d"; start: string; end: string },
  ): Promise<Candle[]> {
    const ticker = tickerFromMarketId(id);
    const period = PERIOD_MINUTES[options.interval];
    const query = {
      start_ts: Math.floor(Date.parse(options.start) / 1000),
      end_ts: Math.floor(Date.parse(options.end) / 1000),
      period_interval: period,
    };
    const historical = async () => {
      const body = await this.#fetcher.get(
        `/historical/markets/${encodeURIComponent(ticker)}/candlesticks`,
        query,
      );
      return normalizeCandles(body, period, this.#ctx(), "historical");
    };
    let eventTicker = this.#eventOfMarket.get(ticker);
    if (!eventTicker) {
      let market: Record<string, unknown>;
      try {
        market = await this.#fetcher.get(`/markets/${encodeURIComponent(ticker)}`);
      } catch (error) {
        if (isNotFound(error)) return historical();
        throw error;
      }
      const raw = (market["market"] as { event_ticker?: unknown } | undefined)?.event_ticker;
      if (typeof raw === "string" && raw.length > 0) {
        eventTicker = raw;
        this.#eventOfMarket.set(ticker, raw);
      }
    }
    const info = eventTicker ? await this.#event(eventTicker) : undefined;
    if (!info?.seriesTicker) {
      throw new VenueError("kalshi", "bad_response", `kalshi ${ticker}: no series ticker for its event`);
    }
    let body: Record<string, unknown>;
    try {
      body = await this.#fetcher.get(
        `/series/${encodeURIComponent(info.seriesTicker)}/markets/${encodeURIComponent(ticker)}/candlesticks`,
        query,
      );
    } catch (error) {
      // Archived since we learned its event: the historical tier has its candles.
      if (isNotFound(error)) return historical();
      throw error;
    }
    return normalizeCandles(body, period, this.#ctx());
  }

  /**
   * `GET /historical/cutoff` (public), kept for CUTOFF_TTL_MS; null when it cannot be read (then
   * nothing is looked up in the historical tier by time, only after a live 404).
   */
  #historicalCutoff(): Promise<HistoricalCutoff | null> {
    const now = this.#clock.now();
    if (this.#cutoff && now - this.#cutoff.at < CUTOFF_TTL_MS) return this.#cutoff.value;
    const value = this.#fetcher
      .get("/historical/cutoff")
      .then((body) => normalizeCutoff(body, this.#ctx()))
      .catch((error: unknown) => {
        this.reporter.report("historical_cutoff_unavailable", { err: error });
        return null;
      });
    this.#cutoff = { at: now, value };
    return value;
  }

  async subscribe(marketIds: string[], onEvent: (event: FeedEvent) => void): Promise<FeedSubscription> {
    // Never an unsigned socket: the venue refuses it, and the feed would reconnect forever.
    if (this.feedUnavailable) throw new VenueError("kalshi", "auth_failed", this.feedUnavailable);
    const feed = new KalshiFeed({
      wsUrl: this.config.wsUrl,
      clock: this.#clock,
      onEvent,
      report: this.reporter.report,
      ...(this.config.feedKey ? { key: this.config.feedKey } : {}),
      ...this.config.feed,
    });
    await feed.start(marketIds);
    return feed;
  }

  // --- account --------------------------------------------------------------------------------

  /**
   * V2 order entry, `POST /portfolio/events/orders`, and nothing else: the legacy
   * `POST /portfolio/orders` answers 410 at the venue (VENUES-AUDIT #2). No answer of the venue
   * switches order entry elsewhere.
   */
  async placeOrder(credentials: VenueCredentials, order: VenueOrderRequest): Promise<VenueOrder> {
    const key = keyOf(credentials);
    const clientOrderId = order.clientOrderId ?? randomUUID();
    const body = await this.#fetcher.send(
      "POST",
      "/portfolio/events/orders",
      key,
      toV2OrderBody(order, clientOrderId),
    );
    return orderFromV2Response(body, order, clientOrderId, isoNow(this.#clock));
  }

  /**
   * `DELETE /portfolio/events/orders/{id}?market_ticker=` (V2; it answers only counts and wants the
   * market, so the order is read first). An order that is no longer resting — already filled or
   * cancelled, including one that filled between the read and the cancel, which the venue answers
   * with 404 — is refused as `not_found` ("no longer resting"): the caller reads the order and
   * applies its fills (orders/live.ts). A 404 says nothing about the endpoint and changes nothing
   * for later orders.
   */
  async cancelOrder(credentials: VenueCredentials, venueOrderId: string): Promise<VenueOrder> {
    const key = keyOf(credentials);
    const order = await this.getOrder(credentials, venueOrderId);
    if (order.status !== "open" && order.status !== "pending") throw notResting(venueOrderId, order.status);
    try {
      await this.#fetcher.send(
        "DELETE",
        `/portfolio/events/orders/${encodeURIComponent(venueOrderId)}`,
        key,
        undefined,
        { market_ticker: tickerFromMarketId(order.marketId) },
      );
    } catch (error) {
      if (isNotFound(error)) throw notResting(venueOrderId, null);
      throw error;
    }
    return { ...order, status: "cancelled" };
  }

  /**
   * `GET /portfolio/orders/{id}`; an order closed before Kalshi's historical cutoff is no longer
   * there (404) and, given its market, is looked up in `GET /historical/orders` (which has no
   * by-id form: the market's archived orders since `hint.since` are searched).
   */
  async getOrder(
    credentials: VenueCredentials,
    venueOrderId: string,
    hint: { marketId?: string; since?: string } = {},
  ): Promise<VenueOrder> {
    const key = keyOf(credentials);
    try {
      const body = await this.#fetcher.get(`/portfolio/orders/${encodeURIComponent(venueOrderId)}`, {}, key);
      return normalizeOrder(body["order"], this.#ctx());
    } catch (error) {
      if (!isNotFound(error) || !hint.marketId) throw error;
      const since = hint.since ? Date.parse(hint.since) : Number.NaN;
      const raws = await this.#fetcher.all(
        "/historical/orders",
        "orders",
        {
          limit: 200,
          ticker: tickerFromMarketId(hint.marketId),
          ...(Number.isFinite(since) ? { min_ts: Math.floor(since / 1000) - HISTORY_LOOKBACK_S } : {}),
        },
        { key },
      );
      const found = this.#each(raws, "order", normalizeOrder).find((o) => o.venueOrderId === venueOrderId);
      if (!found) throw error;
      return found;
    }
  }

  async listOrders(
    credentials: VenueCredentials,
    options: { marketId?: string; openOnly?: boolean } = {},
  ): Promise<VenueOrder[]> {
    const raws = await this.#fetcher.all(
      "/portfolio/orders",
      "orders",
      {
        limit: 200,
        ...(options.marketId ? { ticker: tickerFromMarketId(options.marketId) } : {}),
        ...(options.openOnly ? { status: "resting" } : {}),
      },
      { key: keyOf(credentials) },
    );
    return this.#each(raws, "order", normalizeOrder);
  }

  /**
   * The account's fills (`GET /portfolio/fills`). Fills created before Kalshi's historical cutoff
   * (`trades_created_ts`) are only in `GET /historical/fills`: when `since` reaches back past it,
   * that tier is read too, so an order reconciled late still gets every fill it had.
   */
  async listFills(
    credentials: VenueCredentials,
    options: { since?: string; marketId?: string } = {},
  ): Promise<VenueFill[]> {
    const key = keyOf(credentials);
    const since = options.since === undefined ? undefined : Date.parse(options.since);
    const query = {
      limit: 200,
      ...(options.marketId ? { ticker: tickerFromMarketId(options.marketId) } : {}),
      ...(since !== undefined && Number.isFinite(since) ? { min_ts: Math.floor(since / 1000) } : {}),
    };
    const cutoff = (await this.#historicalCutoff())?.tradesCreatedMs ?? null;
    const archived = cutoff !== null && cutoff > 0 && (since === undefined || !(since >= cutoff));
    const [live, old] = await Promise.all([
      this.#fetcher.all("/portfolio/fills", "fills", query, { key }),
      archived ? this.#fetcher.all("/historical/fills", "fills", query, { key }) : Promise.resolve([]),
    ]);
    const fills = this.#each([...old, ...live], "fill", normalizeFill);
    const seen = new Set<string>();
    return fills.filter((f) => !seen.has(f.venueFillId) && seen.add(f.venueFillId) !== undefined);
  }

  /**
   * Every market position, page after page until the cursor comes back empty (`GET
   * /portfolio/positions`: `limit` default 100, at most 1000 per docs.kalshi.com/api-reference/
   * portfolio/get-positions). `count_filter=position` leaves out markets traded but no longer held.
   * `position_fp` is signed: Kalshi nets YES against NO in one market (negative = NO contracts).
   */
  async listPositions(credentials: VenueCredentials): Promise<VenuePosition[]> {
    const raws = await this.#fetcher.all(
      "/portfolio/positions",
      "market_positions",
      { limit: this.config.pageLimit?.positions ?? 200, count_filter: "position" },
      { key: keyOf(credentials) },
    );
    return this.#each(raws, "position", normalizePosition).filter((p): p is VenuePosition => p !== null);
  }

  async getBalance(credentials: VenueCredentials): Promise<Micros> {
    const body = await this.#fetcher.get("/portfolio/balance", {}, keyOf(credentials));
    return normalizeBalance(body, this.#ctx());
  }

  /** Parses each item, reporting and skipping the ones that do not parse. */
  #each<T>(raws: unknown[], what: string, parse: (raw: unknown, ctx: NormalizeContext) => T): T[] {
    const ctx = this.#ctx();
    const out: T[] = [];
    for (const raw of raws) {
      try {
        out.push(parse(raw, ctx));
      } catch (error) {
        if (!(error instanceof KalshiParseError)) throw error;
        this.reporter.report(`${what}_parse_failed`, { err: error });
      }
    }
    return out;
  }
}

/** Reads of archived orders reach this far before the time asked for (venue times are in seconds). */
const HISTORY_LOOKBACK_S = 60;

function isNotFound(error: unknown): boolean {
  return isVenueError(error) && error.kind === "not_found";
}

/** A cancel of an order that no longer rests at the venue (filled, cancelled or expired there). */
function notResting(venueOrderId: string, status: VenueOrder["status"] | null): VenueError {
  const message = `kalshi order ${venueOrderId} is no longer resting${status ? ` (${status})` : ""}`;
  return new VenueError("kalshi", "not_found", message, { venueMessage: "order is no longer resting" });
}

export function createKalshiVenue(config: KalshiVenueConfig): KalshiVenue {
  return new KalshiVenue(config);
}
