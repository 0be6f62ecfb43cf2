/**
 * The Polymarket Venue: wires the fetcher (Gamma/CLOB reads), the market feed, the auth sessions
 * and CLOB V2 order signing behind crossbook's Venue interface, and publishes the capability map.
 * Orders are checked locally (market open, tick, size, minimum) before anything is signed, so the
 * common mistakes fail fast with a clear message instead of a venue round trip. VENUES.md §1.
 */
import { randomInt } from "node:crypto";
import { type Clock, isoFromMs, systemClock } from "../../infra/clock";
import { type Logger, silentLogger } from "../../infra/log";
import { formatMicros, type Micros } from "../decimal";
import { VenueError } from "../errors";
import type { RequestOptions } from "../http";
import type { CandleInterval, VenueMarket } from "../model";
import type {
  FeedEvent,
  FeedSubscription,
  MarketQuery,
  PageProgress,
  Venue,
  VenueCapabilities,
  VenueCredentials,
  VenueFill,
  VenueOrder,
  VenueOrderRequest,
  VenuePosition,
} from "../venue";
import {
  normalizeBalance,
  normalizeOpenOrder,
  normalizePosition,
  normalizeTradeFills,
  positionLeg,
  type TokenResolver,
} from "./account";
import { PolymarketAuth, type Session } from "./auth";
import { ShardedMarketFeed } from "./feed";
import { type FetcherOptions, PolymarketFetcher, RATE_LIMITS } from "./fetcher";
import { clobFeeSchedule, isObject, micros, PolymarketParseError } from "./normalize";
import {
  type AmountProblem,
  type ImmediateAmounts,
  immediateOrderAmounts,
  type OrderStruct,
  orderAmounts,
  orderDomain,
  orderJson,
  signOrder,
  TICK_ROUNDING,
  ZERO_BYTES32,
} from "./signing";

export interface PolymarketVenueConfig {
  gammaUrl: string;
  clobUrl: string;
  /** CLOB WebSocket base (…/ws); the market channel is `${wsUrl}/market`. */
  wsUrl: string;
  /** Data API (positions); defaults to production. */
  dataUrl?: string;
  clock?: Clock;
  log?: Logger;
  /** 137 (Polygon) unless testing against Amoy (80002). */
  chainId?: number;
  http?: FetcherOptions["http"];
  feed?: {
    pingIntervalMs?: number;
    backoffBaseMs?: number;
    backoffCapMs?: number;
    silenceTimeoutMs?: number;
    /** Stalled-subscription checks and sharding (feed.ts). */
    snapshotTimeoutMs?: number;
    dataSilenceMs?: number;
    maxAssetsPerConnection?: number;
  };
}

/**
 * Data API `GET /positions` paging: `limit` ≤ 500 and `offset` ≤ 10,000 (docs.polymarket.com,
 * developers/open-api/get-positions.json).
 */
const DATA_POSITIONS_PAGE = 500;
const DATA_POSITIONS_MAX_OFFSET = 10_000;

export const POLYMARKET_PRODUCTION = {
  gamma: "https://gamma-api.polymarket.com",
  clob: "https://clob.polymarket.com",
  data: "https://data-api.polymarket.com",
  ws: "wss://ws-subscriptions-clob.polymarket.com/ws",
} as const;

export const POLYMARKET_CAPABILITIES: VenueCapabilities = {
  venue: "polymarket",
  displayName: "Polymarket",
  urls: { production: { ...POLYMARKET_PRODUCTION }, sandbox: null },
  supports: {
    events: true,
    orderBook: true,
    priceHistory: true,
    // prices-history fidelity 1 / 60 / 1440 minutes; returned as price points, not OHLC candles.
    candles: ["1m", "1h", "1d"],
    feed: true,
    trading: true,
    orderTypes: ["limit", "market"],
    timeInForce: ["GTC", "GTD", "IOC", "FOK"],
    nativeNoBook: true,
  },
  rateLimits: { read: RATE_LIMITS.gamma, trade: RATE_LIMITS.trade },
  fees: {
    model: "polymarket",
    description:
      "Per market (Gamma feeSchedule): takers pay shares × rate × (P × (1 − P))^exponent, rounded down to " +
      "$0.00001 and never more than takerBaseFee bps × min(P, 1 − P) × shares (a cap, not a rate); makers pay " +
      "nothing on taker-only schedules; markets with fees off pay nothing. Each market's `fees` gives its schedule.",
  },
};

/** Our time-in-force -> CLOB orderType (IOC is Polymarket's FAK). */
const ORDER_TYPE = { GTC: "GTC", GTD: "GTD", IOC: "FAK", FOK: "FOK" } as const;

/** `POST /order` statuses (VENUES.md §1.6); `delayed`/`unmatched` stay pending for the poller. */
const ORDER_RESPONSE_STATUSES = new Set(["live", "matched", "delayed", "unmatched"]);

/** What placement knows better than a read-back of the order: its id, our client id, any size note. */
function pick(placed: VenueOrder): Partial<VenueOrder> {
  return {
    venueOrderId: placed.venueOrderId,
    clientOrderId: placed.clientOrderId,
    ...(placed.sizeAdjustment ? { sizeAdjustment: placed.sizeAdjustment } : {}),
  };
}

/** GTD orders expire 60 s earlier than their `expiration` (VENUES.md §1.6 safety threshold). */
const GTD_SAFETY_S = 60;

export function createPolymarketVenue(config: PolymarketVenueConfig): Venue {
  return new PolymarketVenue(config);
}

export class PolymarketVenue implements Venue {
  readonly id = "polymarket" as const;
  readonly capabilities = POLYMARKET_CAPABILITIES;
  readonly fetcher: PolymarketFetcher;
  readonly #auth: PolymarketAuth;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #chainId: number;
  #version: Promise<number> | null = null;

  constructor(private readonly config: PolymarketVenueConfig) {
    this.#clock = config.clock ?? systemClock;
    this.#log = config.log ?? silentLogger;
    this.#chainId = config.chainId ?? 137;
    this.fetcher = new PolymarketFetcher({
      gammaUrl: config.gammaUrl,
      clobUrl: config.clobUrl,
      dataUrl: config.dataUrl ?? POLYMARKET_PRODUCTION.data,
      clock: this.#clock,
      log: this.#log,
      ...(config.http ? { http: config.http } : {}),
    });
    this.#auth = new PolymarketAuth(this.fetcher.trade, this.#clock, this.#chainId);
  }

  // -------------------------------------------------------------------------------------------
  // Market data
  // -------------------------------------------------------------------------------------------

  listEvents(query?: MarketQuery, progress?: PageProgress) {
    return this.fetcher.listEvents(query, progress);
  }

  listMarkets(query?: MarketQuery, progress?: PageProgress) {
    return this.fetcher.listMarkets(query, progress);
  }

  /** One market from Gamma; when Gamma gives no fee schedule, the CLOB's market info (`fd`) is asked. */
  async getMarket(marketId: string): Promise<VenueMarket> {
    const market = await this.fetcher.getMarket(marketId);
    if (market.fees !== null) return market;
    const path = `/clob-markets/${encodeURIComponent(market.venueMarketId)}`;
    const fees = await this.fetcher.clob.request("GET", path).then(
      (response) => clobFeeSchedule(response.body),
      () => null,
    );
    return fees ? { ...market, fees } : market;
  }

  getOrderBook(marketId: string, depth?: number) {
    return this.fetcher.getOrderBook(marketId, depth);
  }

  getPriceHistory(marketId: string, options: { interval: CandleInterval; start: string; end: string }) {
    return this.fetcher.getPriceHistory(marketId, options);
  }

  async subscribe(marketIds: string[], onEvent: (event: FeedEvent) => void): Promise<FeedSubscription> {
    const base = this.config.wsUrl.replace(/\/$/, "");
    const feed = new ShardedMarketFeed(
      {
        url: /\/market$/.test(base) ? base : `${base}/market`,
        clock: this.#clock,
        log: this.#log,
        report: this.fetcher.report,
        ...this.config.feed,
      },
      (ids) => Promise.all(ids.map((id) => this.fetcher.meta(id))),
      (event) => {
        // A market the feed saw resolve gets its history at the fidelity closed markets have.
        if (event.kind === "status") this.fetcher.noteStatus(event.marketId, event.status);
        onEvent(event);
      },
    );
    await feed.add(marketIds);
    return feed;
  }

  // -------------------------------------------------------------------------------------------
  // Trading — VENUES.md §1.6
  // -------------------------------------------------------------------------------------------

  async placeOrder(credentials: VenueCredentials, request: VenueOrderRequest): Promise<VenueOrder> {
    const session = await this.#auth.session(credentials);
    const market = await this.fetcher.getMarket(request.marketId);
    const { orderType, expiration } = this.#checkOrder(request, market);
    // The tick changes near 0.04/0.96 and Gamma's copy can lag: sign with the CLOB's current one.
    const clob = await this.#clobMarketInfo(market);
    const immediate = orderType === "FAK" || orderType === "FOK";
    const amounts: ImmediateAmounts | AmountProblem | { makerAmount: bigint; takerAmount: bigint } = immediate
      ? immediateOrderAmounts(request.side, request.price, request.size, { tickSize: clob.tickSize })
      : orderAmounts(request.side, request.price, request.size, {
          tickSize: clob.tickSize,
          minSize: market.minSize,
        });
    // Shares the signed order is for: fewer than asked when an immediate BUY had to be rounded down.
    const size: Micros = immediate && "size" in amounts ? (amounts as ImmediateAmounts).size : request.size;
    if ("kind" in amounts)
      throw new VenueError("polymarket", "rejected", amounts.message, {
        venueMessage: amounts.message,
        ...(amounts.kind === "precision"
          ? {}
          : {
              venueCode:
                amounts.kind === "min_size" ? "INVALID_ORDER_MIN_SIZE" : "INVALID_ORDER_MIN_TICK_SIZE",
            }),
      });
    const tokenId = market.outcomes[request.outcome].venueTokenId;

    const submit = async (): Promise<VenueOrder> => {
      const version = await this.#exchangeVersion();
      const struct: OrderStruct = {
        salt: BigInt(randomInt(0, 2 ** 47)),
        maker: session.maker,
        signer: session.orderSigner,
        tokenId: BigInt(tokenId),
        makerAmount: amounts.makerAmount,
        takerAmount: amounts.takerAmount,
        side: request.side === "buy" ? 0 : 1,
        signatureType: session.signatureType,
        timestamp: BigInt(this.#clock.now()),
        metadata: ZERO_BYTES32,
        builder: ZERO_BYTES32,
      };
      const signature = await signOrder(
        session.privateKey,
        struct,
        orderDomain(version, clob.negRisk, this.#chainId),
      );
      const body = {
        order: orderJson(struct, signature, expiration),
        owner: session.api.apiKey,
        orderType,
        deferExec: false,
        postOnly: false,
      };
      const response = await this.#l2(session, "POST", "/order", { body, mode: "write" });
      const result = response.body;
      if (
        !isObject(result) ||
        result.success === false ||
        typeof result.orderID !== "string" ||
        !result.orderID
      ) {
        const message =
          isObject(result) && typeof result.errorMsg === "string" ? result.errorMsg : "order refused";
        throw new VenueError("polymarket", "rejected", `polymarket rejected the order: ${message}`, {
          status: response.status,
          venueMessage: message,
          ...(/^[A-Z_]+$/.test(message.split(/[\s:]/)[0] ?? "")
            ? { venueCode: message.split(/[\s:]/)[0] }
            : {}),
        });
      }
      const wire = typeof result.status === "string" ? result.status.toLowerCase() : "";
      if (!ORDER_RESPONSE_STATUSES.has(wire)) this.fetcher.report("unknown_order_response_status", wire);
      const placed: VenueOrder = {
        venueOrderId: result.orderID,
        marketId: market.id,
        outcome: request.outcome,
        side: request.side,
        price: request.price,
        size,
        filledSize: 0,
        status: wire === "live" ? "open" : "pending",
        createdAt: isoFromMs(this.#clock.now()),
        clientOrderId: request.clientOrderId ?? null,
        ...(size < request.size
          ? {
              sizeAdjustment: {
                requested: request.size,
                reason:
                  `rounded down from ${formatMicros(request.size)} to ${formatMicros(size)}: Polymarket takes ` +
                  "IOC/FOK (FAK/FOK) orders only with the cash amount in whole cents and shares to 4 decimals",
              },
            }
          : {}),
      };
      if (wire !== "matched") return placed;
      // "matched" only says something matched: how much is in takingAmount/makingAmount (BUY takes
      // shares, SELL makes them). Without them, the order itself says.
      const shares = micros(request.side === "buy" ? result.takingAmount : result.makingAmount);
      if (shares === undefined || shares <= 0) {
        this.fetcher.report("order_response_without_amounts", result.orderID);
        try {
          return { ...(await this.#getOrder(session, result.orderID)), ...pick(placed) };
        } catch {
          return placed; // pending: the poller reads it
        }
      }
      // A BUY spends its whole cash amount, which can buy a few millionths of a share more than
      // the shares it signed for: crossbook books at most the order's size.
      const filledSize = Math.min(shares, size);
      const rests = orderType === "GTC" || orderType === "GTD";
      return {
        ...placed,
        filledSize,
        // An IOC/FOK remainder is killed at once; a GTC/GTD remainder rests.
        status: filledSize >= size ? "filled" : rests ? "open" : "cancelled",
      };
    };

    try {
      return await submit();
    } catch (error) {
      // The exchange version changed under us: re-read GET /version and sign again, once.
      if (error instanceof VenueError && /order_version_mismatch/i.test(error.details.venueMessage ?? "")) {
        this.#version = null;
        return submit();
      }
      throw error;
    }
  }

  #checkOrder(request: VenueOrderRequest, market: VenueMarket): { orderType: string; expiration: number } {
    const reject = (message: string, venueCode?: string): never => {
      throw new VenueError("polymarket", "rejected", message, {
        venueMessage: message,
        ...(venueCode ? { venueCode } : {}),
      });
    };
    if (market.status !== "open") reject(`market ${market.id} is ${market.status}`, "MARKET_NOT_READY");
    if (request.type === "market" && (request.timeInForce === "GTC" || request.timeInForce === "GTD"))
      reject("market orders must be IOC or FOK on Polymarket");
    let expiration = 0;
    if (request.timeInForce === "GTD") {
      const at = request.expiresAt ? Date.parse(request.expiresAt) : Number.NaN;
      if (!Number.isFinite(at)) reject("GTD orders need expiresAt", "INVALID_ORDER_EXPIRATION");
      const seconds = Math.floor(at / 1000);
      if (seconds <= Math.floor(this.#clock.now() / 1000))
        reject("expiresAt is in the past", "INVALID_ORDER_EXPIRATION");
      expiration = seconds + GTD_SAFETY_S;
    } else if (request.expiresAt) {
      reject("expiresAt is only valid with GTD");
    }
    return { orderType: ORDER_TYPE[request.timeInForce], expiration };
  }

  /**
   * Tick and neg-risk flag from the CLOB's compact market info (`GET /clob-markets/{condition}`:
   * `mts`, `nr`), as the official client reads them; Gamma's neg-risk flag when `nr` is absent.
   */
  async #clobMarketInfo(market: VenueMarket): Promise<{ tickSize: Micros; negRisk: boolean }> {
    const path = `/clob-markets/${encodeURIComponent(market.venueMarketId)}`;
    const response = await this.fetcher.clob.request("GET", path);
    const body = response.body;
    const tickSize = isObject(body) ? micros(body.mts) : undefined;
    if (tickSize === undefined || !TICK_ROUNDING[tickSize])
      throw new VenueError(
        "polymarket",
        "bad_response",
        `polymarket GET ${path}: no usable tick size (mts ${isObject(body) ? JSON.stringify(body.mts) : "absent"})`,
      );
    const negRisk = isObject(body) && typeof body.nr === "boolean" ? body.nr : market.negRisk;
    return { tickSize, negRisk };
  }

  #exchangeVersion(): Promise<number> {
    if (!this.#version) {
      const run = this.fetcher.clob.request("GET", "/version").then((response) => {
        const v = isObject(response.body) ? Number(response.body.version) : Number.NaN;
        if (!Number.isInteger(v) || v < 2)
          throw new VenueError(
            "polymarket",
            "bad_response",
            `GET /version answered ${JSON.stringify(response.body)}`,
          );
        return v;
      });
      this.#version = run;
      run.catch(() => {
        if (this.#version === run) this.#version = null;
      });
    }
    return this.#version;
  }

  /** An L2-signed CLOB call, with venue auth failures told apart from other rejections. */
  async #l2(session: Session, method: string, path: string, options: RequestOptions = {}) {
    try {
      return await this.fetcher.trade.request(method, path, { ...options, sign: this.#auth.signer(session) });
    } catch (error) {
      if (
        error instanceof VenueError &&
        error.kind === "rejected" &&
        /invalid signature|unauthorized|api key/i.test(error.details.venueMessage ?? "")
      ) {
        throw new VenueError("polymarket", "auth_failed", error.message, error.details);
      }
      throw error;
    }
  }

  async cancelOrder(credentials: VenueCredentials, venueOrderId: string): Promise<VenueOrder> {
    const session = await this.#auth.session(credentials);
    const before = await this.#getOrder(session, venueOrderId);
    const response = await this.#l2(session, "DELETE", "/order", {
      body: { orderID: venueOrderId },
      mode: "write",
    });
    const body = response.body;
    const notCanceled = isObject(body) && isObject(body.not_canceled) ? body.not_canceled : {};
    const reason = notCanceled[venueOrderId];
    if (reason !== undefined) {
      const message = typeof reason === "string" ? reason : "not canceled";
      throw new VenueError(
        "polymarket",
        "rejected",
        `polymarket did not cancel ${venueOrderId}: ${message}`,
        {
          venueMessage: message,
        },
      );
    }
    const canceled = isObject(body) && Array.isArray(body.canceled) ? body.canceled : [];
    if (!canceled.includes(venueOrderId)) this.fetcher.report("cancel_not_confirmed", venueOrderId);
    try {
      const after = await this.#getOrder(session, venueOrderId);
      return after.status === "open" ? { ...after, status: "cancelled" } : after;
    } catch {
      return { ...before, status: "cancelled" };
    }
  }

  async getOrder(credentials: VenueCredentials, venueOrderId: string): Promise<VenueOrder> {
    return this.#getOrder(await this.#auth.session(credentials), venueOrderId);
  }

  async #getOrder(session: Session, venueOrderId: string): Promise<VenueOrder> {
    const response = await this.#l2(session, "GET", `/data/order/${encodeURIComponent(venueOrderId)}`);
    if (!isObject(response.body) || !response.body.id)
      throw new VenueError("polymarket", "not_found", `polymarket order ${venueOrderId} not found`);
    const resolve = await this.#resolver([response.body]);
    return normalizeOpenOrder(response.body, resolve, this.fetcher.report);
  }

  async listOrders(
    credentials: VenueCredentials,
    options: { marketId?: string; openOnly?: boolean } = {},
  ): Promise<VenueOrder[]> {
    const session = await this.#auth.session(credentials);
    const market = options.marketId ? (await this.fetcher.meta(options.marketId)).conditionId : undefined;
    // `/data/orders` lists open orders only; closed ones are reachable by id (getOrder).
    const rows = await this.#cursorPages(session, "/data/orders", { market });
    const resolve = await this.#resolver(rows);
    const orders = this.#parseAll(rows, (row) => normalizeOpenOrder(row, resolve, this.fetcher.report));
    return options.openOnly ? orders.filter((o) => o.status === "open") : orders;
  }

  async listFills(
    credentials: VenueCredentials,
    options: { since?: string; marketId?: string } = {},
  ): Promise<VenueFill[]> {
    const session = await this.#auth.session(credentials);
    const market = options.marketId ? (await this.fetcher.meta(options.marketId)).conditionId : undefined;
    const after = options.since ? Math.floor(Date.parse(options.since) / 1000) : undefined;
    const rows = await this.#cursorPages(session, "/data/trades", {
      maker_address: session.maker,
      market,
      after: Number.isFinite(after) ? after : undefined,
    });
    const resolve = await this.#resolver(
      rows.flatMap((row) =>
        isObject(row) && Array.isArray(row.maker_orders) ? [row, ...row.maker_orders] : [row],
      ),
    );
    const us = { maker: session.maker, apiKey: session.api.apiKey };
    return rows.flatMap((row) => {
      try {
        return normalizeTradeFills(row, us, resolve, this.fetcher.report);
      } catch (error) {
        if (!(error instanceof PolymarketParseError)) throw error;
        this.#log.warn(
          { err: error, venue: "polymarket", item: error.itemId },
          `polymarket: skipped ${error.message}`,
        );
        return [];
      }
    });
  }

  /**
   * Every position of the funding wallet, from the Data API. Its defaults would hide some: only
   * positions of at least `sizeThreshold` = 1 share, and only the first `limit` = 100. So we ask for
   * `sizeThreshold=0` and walk `offset` pages of up to 500 (the documented maximum) until an empty
   * page, advancing by what each page returned (the venue may cap `limit` lower). `offset` may not
   * pass 10,000: a wallet with more positions than that is read as far as it goes, and reported.
   * Each row names its own market and leg; Gamma is asked only for a row that does not.
   */
  async listPositions(credentials: VenueCredentials): Promise<VenuePosition[]> {
    const session = await this.#auth.session(credentials);
    const body: unknown[] = [];
    const seen = new Set<string>();
    for (let offset = 0; ; ) {
      const response = await this.fetcher.data.request("GET", "/positions", {
        query: { user: session.maker, sizeThreshold: 0, limit: DATA_POSITIONS_PAGE, offset },
      });
      if (!Array.isArray(response.body))
        throw new VenueError("polymarket", "bad_response", "polymarket GET /positions: expected an array");
      if (response.body.length === 0) break;
      const before = body.length;
      for (const row of response.body) {
        // A position that moved between pages (the order is by size) can show twice: keep the first.
        const asset = isObject(row) && typeof row.asset === "string" ? row.asset : undefined;
        if (asset !== undefined && seen.has(asset)) continue;
        if (asset !== undefined) seen.add(asset);
        body.push(row);
      }
      // A page of nothing new means the venue ignored `offset`: stop rather than loop.
      if (body.length === before) {
        this.fetcher.report("positions_page_repeated", `offset ${offset}`);
        break;
      }
      offset += response.body.length;
      if (offset > DATA_POSITIONS_MAX_OFFSET) {
        this.fetcher.report("positions_past_offset_cap", `${offset} positions read; the rest are not`);
        break;
      }
    }
    const unknown = body.filter((row) => positionLeg(row) === undefined);
    const resolve = await this.#resolver(
      unknown.map((row) => (isObject(row) ? { asset_id: row.asset, market: row.conditionId } : row)),
    );
    return body.flatMap((row) => {
      const leg = positionLeg(row);
      const position = normalizePosition(row, leg ? () => leg : resolve, this.fetcher.report);
      return position && position.size > 0 ? [position] : [];
    });
  }

  async getBalance(credentials: VenueCredentials): Promise<Micros> {
    const session = await this.#auth.session(credentials);
    const response = await this.#l2(session, "GET", "/balance-allowance", {
      query: { asset_type: "COLLATERAL", signature_type: session.signatureType },
    });
    return normalizeBalance(response.body);
  }

  /** `next_cursor` pages of an L2 list (`MA==` first, `LTE=` last), guarded against loops. */
  async #cursorPages(
    session: Session,
    path: string,
    query: Record<string, string | number | undefined>,
  ): Promise<unknown[]> {
    const rows: unknown[] = [];
    const seen = new Set<string>();
    let cursor = "MA==";
    for (;;) {
      const response = await this.#l2(session, "GET", path, { query: { ...query, next_cursor: cursor } });
      const body = response.body;
      if (!isObject(body) || !Array.isArray(body.data))
        throw new VenueError(
          "polymarket",
          "bad_response",
          `polymarket GET ${path}: expected {data, next_cursor}`,
        );
      rows.push(...body.data);
      const next = body.next_cursor;
      if (typeof next !== "string" || next === "" || next === "LTE=" || body.data.length === 0) return rows;
      if (seen.has(next))
        throw new VenueError("polymarket", "bad_response", `polymarket GET ${path}: cursor ${next} repeated`);
      seen.add(next);
      cursor = next;
    }
  }

  /** Resolves the tokens of a batch of rows (`asset_id` + `market`) to our market and leg. */
  async #resolver(rows: unknown[]): Promise<TokenResolver> {
    const map = new Map<string, { marketId: string; outcome: "yes" | "no" }>();
    for (const row of rows) {
      if (!isObject(row) || typeof row.asset_id !== "string" || map.has(row.asset_id)) continue;
      try {
        const owner = await this.fetcher.tokenOwner(
          row.asset_id,
          typeof row.market === "string" ? row.market : undefined,
        );
        map.set(row.asset_id, { marketId: owner.meta.marketId, outcome: owner.outcome });
      } catch (error) {
        if (!(error instanceof VenueError) || error.kind !== "not_found") throw error;
        this.fetcher.report("unknown_token", row.asset_id);
      }
    }
    return (tokenId) => map.get(tokenId);
  }

  #parseAll<T>(rows: unknown[], parse: (row: unknown) => T): T[] {
    const out: T[] = [];
    for (const row of rows) {
      try {
        out.push(parse(row));
      } catch (error) {
        if (!(error instanceof PolymarketParseError)) throw error;
        this.#log.warn(
          { err: error, venue: "polymarket", item: error.itemId },
          `polymarket: skipped ${error.message}`,
        );
      }
    }
    return out;
  }
}
