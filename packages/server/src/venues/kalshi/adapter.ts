/**
 * The Kalshi venue (Trade API v2): discovery through every page with combo markets excluded, one
 * market, books, candlesticks, the live feed, and the account side on both order-entry shapes.
 * I/O lives in fetcher.ts, parsing in normalize.ts (pure), signing in auth.ts, order shapes in
 * orders.ts; this file wires them to the Venue interface.
 */
import { randomUUID } from "node:crypto";
import { type Clock, isoNow, systemClock } from "../../infra/clock";
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
import type { KalshiKey } from "./auth";
import { KALSHI_CAPABILITIES } from "./capabilities";
import { KalshiFeed, type KalshiFeedOptions } from "./feed";
import { KalshiFetcher, type KalshiFetcherOptions } from "./fetcher";
import {
  type EventInfo,
  eventInfo,
  KalshiParseError,
  type NormalizeContext,
  normalizeBalance,
  normalizeCandles,
  normalizeEvent,
  normalizeFill,
  normalizeMarket,
  normalizeMarkets,
  normalizeOrder,
  normalizeOrderBook,
  normalizePosition,
  PERIOD_MINUTES,
  tickerFromMarketId,
} from "./normalize";
import { orderFromV2Response, toLegacyOrderBody, toV2OrderBody } from "./orders";

export { kalshiTakerFee } from "./fees";

export interface KalshiLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface KalshiVenueConfig {
  apiUrl: string;
  wsUrl: string;
  clock?: Clock;
  log?: KalshiLog;
  /**
   * Order entry: "current" = `POST /portfolio/events/orders`, "legacy" = `POST /portfolio/orders`,
   * "auto" (default) = current, falling back to legacy for good if the venue answers 404.
   */
  orderApi?: "current" | "legacy" | "auto";
  /** Signs the WebSocket upgrade (current docs require auth on every connection). */
  feedKey?: KalshiKey;
  /** Page sizes (VENUES.md §2.2: markets ≤ 1000, events ≤ 200). */
  pageLimit?: { markets?: number; events?: number };
  http?: KalshiFetcherOptions["http"];
  feed?: Pick<KalshiFeedOptions, "backoffBaseMs" | "backoffCapMs" | "pingIntervalMs" | "onFill">;
}

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
  readonly capabilities = KALSHI_CAPABILITIES;
  readonly reporter: DataReporter;
  readonly #fetcher: KalshiFetcher;
  readonly #clock: Clock;
  readonly #events = new Map<string, EventInfo>();
  /** ticker -> event_ticker, learned from listings, so candles need no extra market lookup. */
  readonly #eventOfMarket = new Map<string, string>();
  #orderApi: "current" | "legacy" | "auto";

  constructor(private readonly config: KalshiVenueConfig) {
    this.#clock = config.clock ?? systemClock;
    const log = config.log;
    this.reporter = createDataReporter("kalshi", (obj, msg) => log?.warn(obj, msg));
    this.#orderApi = config.orderApi ?? "auto";
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
        const { event, info, markets } = normalizeEvent(raw, ctx);
        this.#events.set(info.eventTicker, info);
        this.#remember(markets);
        if (query.venueEventId && event.venueEventId !== query.venueEventId) continue;
        events.push(event);
      } catch (error) {
        if (!(error instanceof KalshiParseError)) throw error;
        this.reporter.report("event_parse_failed", { error: error.message });
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
    // Settlement sources live on events: borrowed from those listEvents (or getMarket) has seen.
    const { markets } = normalizeMarkets(raws, ctx, (ticker) => this.#events.get(ticker));
    this.#remember(markets);
    return markets;
  }

  #remember(markets: VenueMarket[]): void {
    for (const m of markets) {
      if (m.eventId) this.#eventOfMarket.set(m.venueMarketId, tickerFromMarketId(m.eventId));
    }
  }

  async #event(eventTicker: string): Promise<EventInfo | undefined> {
    const cached = this.#events.get(eventTicker);
    if (cached) return cached;
    const body = await this.#fetcher.get(`/events/${encodeURIComponent(eventTicker)}`);
    const info = eventInfo(body["event"]);
    if (info) this.#events.set(eventTicker, info);
    return info;
  }

  async getMarket(id: string): Promise<VenueMarket> {
    const ticker = tickerFromMarketId(id);
    const body = await this.#fetcher.get(`/markets/${encodeURIComponent(ticker)}`);
    const raw = body["market"];
    const eventTicker = (raw as { event_ticker?: unknown } | undefined)?.event_ticker;
    let info: EventInfo | undefined;
    if (typeof eventTicker === "string" && eventTicker.length > 0) {
      info = await this.#event(eventTicker).catch((error: unknown) => {
        this.reporter.report("event_lookup_failed", { event_ticker: eventTicker, error: String(error) });
        return undefined;
      });
    }
    const market = normalizeMarket(raw, this.#ctx(), info);
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

  /** Candlesticks live under the series, which must come from the event (VENUES.md §2.3). */
  async getPriceHistory(
    id: string,
    options: { interval: "1m" | "1h" | "1d"; start: string; end: string },
  ): Promise<Candle[]> {
    const ticker = tickerFromMarketId(id);
    let eventTicker = this.#eventOfMarket.get(ticker);
    if (!eventTicker) {
      const market = await this.#fetcher.get(`/markets/${encodeURIComponent(ticker)}`);
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
    const period = PERIOD_MINUTES[options.interval];
    const body = await this.#fetcher.get(
      `/series/${encodeURIComponent(info.seriesTicker)}/markets/${encodeURIComponent(ticker)}/candlesticks`,
      {
        start_ts: Math.floor(Date.parse(options.start) / 1000),
        end_ts: Math.floor(Date.parse(options.end) / 1000),
        period_interval: period,
      },
    );
    return normalizeCandles(body, period, this.#ctx());
  }

  async subscribe(marketIds: string[], onEvent: (event: FeedEvent) => void): Promise<FeedSubscription> {
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

  async placeOrder(credentials: VenueCredentials, order: VenueOrderRequest): Promise<VenueOrder> {
    const key = keyOf(credentials);
    const clientOrderId = order.clientOrderId ?? randomUUID();
    if (this.#orderApi !== "legacy") {
      try {
        const body = await this.#fetcher.send(
          "POST",
          "/portfolio/events/orders",
          key,
          toV2OrderBody(order, clientOrderId),
        );
        if (this.#orderApi === "auto") this.#orderApi = "current";
        return orderFromV2Response(body, order, clientOrderId, isoNow(this.#clock));
      } catch (error) {
        if (!(this.#orderApi === "auto" && isVenueError(error) && error.kind === "not_found")) throw error;
        this.config.log?.warn(
          { venue: "kalshi" },
          "kalshi has no /portfolio/events/orders; using /portfolio/orders",
        );
        this.#orderApi = "legacy";
      }
    }
    const body = await this.#fetcher.send(
      "POST",
      "/portfolio/orders",
      key,
      toLegacyOrderBody(order, clientOrderId),
    );
    return normalizeOrder(body["order"], this.#ctx());
  }

  async cancelOrder(credentials: VenueCredentials, venueOrderId: string): Promise<VenueOrder> {
    const key = keyOf(credentials);
    const id = encodeURIComponent(venueOrderId);
    if (this.#orderApi !== "legacy") {
      // The current cancel answers only counts, and wants the market: read the order first.
      const order = await this.getOrder(credentials, venueOrderId);
      try {
        await this.#fetcher.send("DELETE", `/portfolio/events/orders/${id}`, key, undefined, {
          market_ticker: tickerFromMarketId(order.marketId),
        });
        return { ...order, status: "cancelled" };
      } catch (error) {
        // The order exists (we just read it), so a 404 means the endpoint does not.
        if (!(this.#orderApi === "auto" && isVenueError(error) && error.kind === "not_found")) throw error;
        this.#orderApi = "legacy";
      }
    }
    const body = await this.#fetcher.send("DELETE", `/portfolio/orders/${id}`, key);
    return normalizeOrder(body["order"], this.#ctx());
  }

  async getOrder(credentials: VenueCredentials, venueOrderId: string): Promise<VenueOrder> {
    const body = await this.#fetcher.get(
      `/portfolio/orders/${encodeURIComponent(venueOrderId)}`,
      {},
      keyOf(credentials),
    );
    return normalizeOrder(body["order"], this.#ctx());
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

  async listFills(
    credentials: VenueCredentials,
    options: { since?: string; marketId?: string } = {},
  ): Promise<VenueFill[]> {
    const raws = await this.#fetcher.all(
      "/portfolio/fills",
      "fills",
      {
        limit: 200,
        ...(options.marketId ? { ticker: tickerFromMarketId(options.marketId) } : {}),
        ...(options.since ? { min_ts: Math.floor(Date.parse(options.since) / 1000) } : {}),
      },
      { key: keyOf(credentials) },
    );
    return this.#each(raws, "fill", normalizeFill);
  }

  async listPositions(credentials: VenueCredentials): Promise<VenuePosition[]> {
    const raws = await this.#fetcher.all(
      "/portfolio/positions",
      "market_positions",
      { limit: 200 },
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
        this.reporter.report(`${what}_parse_failed`, { error: error.message });
      }
    }
    return out;
  }
}

export function createKalshiVenue(config: KalshiVenueConfig): KalshiVenue {
  return new KalshiVenue(config);
}
