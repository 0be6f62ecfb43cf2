/**
 * `Crossbook`: one typed client for every endpoint of the service, grouped by what it is about
 * (`markets`, `prices`, `orders`, `fills`, `positions`, `balance`, `sandbox`, `matches`, `events`,
 * `arbitrage`, `alerts`, `webhooks`, `venues`). Every call is typed from the service's OpenAPI document; lists come back
 * as `{ data, meta }`, single resources as their `data`.
 */
import { randomUUID } from "node:crypto";
import { AccountStream, type AccountStreamOptions } from "./account-stream.js";
import { backtest } from "./backtest/engine.js";
import { historySource } from "./backtest/sources.js";
import type { BacktestOptions, BacktestResult } from "./backtest/types.js";
import type { CursorStore } from "./cursor-store.js";
import { CrossbookConfigError } from "./errors.js";
import type { components } from "./generated/api.js";
import {
  type DataOf,
  type LogOption,
  type Method,
  type Operation,
  type Path,
  type RateLimitInfo,
  type RequestOptions,
  type RetryInfo,
  Transport,
} from "./http.js";
import type { Order, OrderRequest, OrderSummary, PlacedOrder } from "./order-types.js";
import { PriceStream, type PriceStreamOptions } from "./stream.js";
import type {
  Account,
  AccountEvent,
  Alert,
  ArbitrageList,
  Balance,
  Candle,
  Comparison,
  Event,
  Fill,
  FillPage,
  Market,
  MarketListItem,
  Match,
  Page,
  PageMeta,
  Position,
  Price,
  Venue,
  Webhook,
  WebhookDelivery,
} from "./types.js";

/** `production` trades for real with a live key (`cb_live_…`); `sandbox` uses a test key (`cb_test_…`). */
export type Environment = "production" | "sandbox";

export interface CrossbookOptions {
  /** Your API key: `cb_live_…` for production, `cb_test_…` for the sandbox. */
  apiKey: string;
  /** Which environment the key must belong to (default `sandbox`): a mismatch is refused up front. */
  environment?: Environment;
  /** The service's address (default `http://127.0.0.1:8080`, or `CROSSBOOK_URL`). */
  baseUrl?: string;
  /** Retries after the first attempt on 429/502/503/504 and lost connections (default 3). */
  maxRetries?: number;
  /** Per-attempt timeout in ms (default 30,000). */
  timeoutMs?: number;
  /** A fetch implementation (default the global one). */
  fetch?: typeof fetch;
  /**
   * Longest wait for a 429 in ms (default 10,000). When the service asks for longer (its
   * `Retry-After`), the call throws `CrossbookRateLimitError` at once instead of hanging.
   */
  maxRateLimitWaitMs?: number;
  /** Called before each retry: `{ method, url, attempt, delayMs, reason }`. */
  onRetry?: (info: RetryInfo) => void;
  /** Called on every 429 before the client waits (or gives up): `{ method, url, waitMs, limit, remaining, retrying }`. */
  onRateLimit?: (info: RateLimitInfo) => void;
  /**
   * Where the client's notes go: a logger with `debug`, `info` and `warn` (`console` fits), a
   * function `(level, message)`, or `false`. Default: warnings only, to stderr.
   */
  log?: LogOption;
}

const KEY_ENVIRONMENT: Array<[string, Environment]> = [
  ["cb_live_", "production"],
  ["cb_test_", "sandbox"],
];

/** The environment an API key belongs to, from its prefix; undefined for a string that is not a key. */
export function keyEnvironment(apiKey: string): Environment | undefined {
  return KEY_ENVIRONMENT.find(([prefix]) => apiKey.startsWith(prefix))?.[1];
}

type Schemas = components["schemas"];
type Data<P extends Path, M extends Method> = DataOf<Operation<P, M>>;
type Body<P extends Path, M extends Method> = NonNullable<RequestOptions<P, M>["body"]>;
type Query<P extends Path, M extends Method> = NonNullable<RequestOptions<P, M>["query"]>;

type MarketQuery = Query<"/v1/markets", "get">;
/**
 * `markets.list`: whole markets. Should the service offer a `fields` projection, a query that
 * uses it gets only those fields (`MarketListItem`) and one without it still whole markets.
 */
type MarketsList = "fields" extends keyof MarketQuery
  ? {
      (query?: MarketQuery & { fields?: undefined }): Promise<Page<Market>>;
      (query: MarketQuery): Promise<Page<MarketListItem>>;
    }
  : (query?: MarketQuery) => Promise<Page<Market>>;

// Still importable from here (the dashboard and the execution helpers do).
export type { AccountEvent, PageMeta };

type FillQuery = Query<"/v1/fills", "get">;

/** What `fills.all` reads: `GET /v1/fills`'s filters and start, and the page size. */
export interface FillsAllOptions extends Omit<FillQuery, "limit"> {
  /** Fills per request, 1–100 (default 100). */
  pageSize?: number;
}

export interface AccountEventsOptions {
  /** Start after this event (its `seq` or `id`); default: the cursor's saved seq, else the oldest kept. */
  after?: number | string;
  /** Only these event types (default: all). */
  types?: readonly string[];
  /**
   * Saves the seq of each event once you asked for the next one (you handled it), and supplies the
   * start: an agent restarted reads on from the last event it handled. See `FileCursorStore`.
   */
  cursor?: CursorStore;
  /** Keep waiting for new events instead of ending when caught up (default false). */
  follow?: boolean;
  /** With `follow`, how long to wait before asking again once caught up, ms (default 1,000). */
  pollMs?: number;
  /** Events per request, 1–1000 (default 100). */
  pageSize?: number;
  /** Ends a following iteration. */
  signal?: AbortSignal;
}

/**
 * The crossbook client.
 *
 * @example
 * import { Crossbook } from "@crossbook/agent";
 * const client = new Crossbook({ apiKey: process.env.CROSSBOOK_API_KEY ?? "", environment: "sandbox" });
 * const { data: markets } = await client.markets.list({ status: "open", limit: 5 });
 * const order = await client.orders.place({ market_id: markets[0]!.id, side: "buy", price: 0.4, amount: 10 });
 * await client.orders.cancel(order.id);
 */
export class Crossbook {
  /** The environment the key belongs to. */
  readonly environment: Environment;
  /** The transport under every call: `client.http.request(method, path, …)` reaches any endpoint, typed. */
  readonly http: Transport;
  readonly #apiKey: string;

  /** Checks the key against `environment` (nothing is sent on a mismatch) and sets up the transport. */
  constructor(options: CrossbookOptions) {
    const environment = options.environment ?? "sandbox";
    if (environment !== "production" && environment !== "sandbox")
      throw new CrossbookConfigError(
        `environment must be "production" or "sandbox", not ${String(environment)}`,
      );
    if (typeof options.apiKey !== "string" || options.apiKey.length === 0)
      throw new CrossbookConfigError(
        "apiKey is required (a cb_test_… or cb_live_… key; scripts usually read it from CROSSBOOK_API_KEY)",
      );
    const keyEnv = keyEnvironment(options.apiKey);
    if (!keyEnv) throw new CrossbookConfigError("apiKey is not a crossbook key (cb_live_… or cb_test_…)");
    if (keyEnv !== environment)
      throw new CrossbookConfigError(
        `a ${keyEnv} key (${options.apiKey.slice(0, 8)}…) cannot be used with environment "${environment}": ` +
          "nothing was sent",
      );
    this.environment = environment;
    this.#apiKey = options.apiKey;
    this.http = new Transport({
      baseUrl: options.baseUrl ?? process.env.CROSSBOOK_URL ?? "http://127.0.0.1:8080",
      apiKey: options.apiKey,
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.maxRateLimitWaitMs !== undefined ? { maxRateLimitWaitMs: options.maxRateLimitWaitMs } : {}),
      ...(options.onRetry ? { onRetry: options.onRetry } : {}),
      ...(options.onRateLimit ? { onRateLimit: options.onRateLimit } : {}),
      ...(options.log !== undefined ? { log: options.log } : {}),
    });
  }

  async #data<P extends Path, M extends Method>(method: M, path: P, options?: RequestOptions<P, M>) {
    const body = (await this.http.request(method, path, options)) as { data: Data<P, M> };
    return body.data;
  }

  async #page<P extends Path>(path: P, options?: RequestOptions<P, "get">) {
    const body = (await this.http.request("get", path, options)) as { data: Data<P, "get">; meta?: PageMeta };
    return { data: body.data, meta: body.meta ?? {} };
  }

  /** The account the key belongs to. @example const me = await client.account(); */
  account(): Promise<Account> {
    return this.#data("get", "/v1/account");
  }

  /** Venues and their health. */
  readonly venues = {
    /** Venues and their health. @example const venues = await client.venues.list(); */
    list: (): Promise<Venue[]> => this.#data("get", "/v1/venues"),
  };

  /** Markets of every venue: search and read. */
  readonly markets = {
    /** A page of markets. @example const { data } = await client.markets.list({ venue: "kalshi", limit: 20 }); */
    list: ((query?: MarketQuery) => this.#page("/v1/markets", query ? { query } : {})) as MarketsList,
    /** One market, in full. @example const m = await client.markets.get("kalshi:KXFED-26DEC-T4.00"); */
    get: (marketId: string): Promise<Market> =>
      // Asked without a projection, the answer is the whole market.
      this.#data("get", "/v1/markets/{market_id}", { params: { market_id: marketId } }) as Promise<Market>,
  };

  /** Current prices, candles, cross-venue comparison and the live price stream. */
  readonly prices = {
    /**
     * Current prices of up to 100 markets, keyed by market id.
     * @example const prices = await client.prices.get(["kalshi:A", "polymarket:0x…"], { orderbook: true });
     */
    get: async (
      marketIds: readonly string[],
      options: { orderbook?: boolean; depth?: number } = {},
    ): Promise<Record<string, Price>> => {
      const query = {
        market_ids: marketIds.join(","),
        ...(options.orderbook ? { include_orderbook: true } : {}),
        ...(options.depth !== undefined ? { depth: options.depth } : {}),
      } as Query<"/v1/prices", "get">;
      return this.#data("get", "/v1/prices", { query });
    },
    /** Candles of one market. @example const { data } = await client.prices.history({ market_id: id, interval: "1h" }); */
    history: (query: Query<"/v1/prices/history", "get">): Promise<Page<Candle>> =>
      this.#page("/v1/prices/history", { query }),
    /**
     * Cross-venue comparison with the arbitrage analysis, by event id or market id.
     * @example const cmp = await client.prices.compare("xev_…"); if (cmp.spread_analysis.arbitrage_opportunity) …
     */
    compare: (eventOrMarketId: string): Promise<Comparison> =>
      this.#data("get", "/v1/prices/compare", {
        query: { event_id: eventOrMarketId } as Query<"/v1/prices/compare", "get">,
      }),
    /**
     * A live, self-healing stream of price updates: reconnects, re-subscribes, and after a gap in
     * `seq` (or a reconnect) fetches current prices so you never act on a stale quote.
     * @example for await (const u of client.prices.stream(["kalshi:A"])) console.log(u.market_id, u.price);
     */
    stream: (
      marketIds: readonly string[] = [],
      options: Omit<PriceStreamOptions, "baseUrl" | "apiKey" | "marketIds"> = {},
    ) =>
      new PriceStream({
        baseUrl: this.http.baseUrl,
        apiKey: this.#apiKey,
        marketIds,
        fetchPrices: (ids) => this.prices.get(ids) as never,
        ...options,
      }),
  };

  /** Place, read and cancel orders (sandbox or live, by the key). */
  readonly orders = {
    /**
     * Places an order. An idempotency key is added (and reused across retries) unless you pass one,
     * so a retried placement never makes two orders.
     * @example const o = await client.orders.place({ market_id: id, side: "buy", price: 0.42, amount: 10 });
     */
    place: (order: OrderRequest, options: { idempotencyKey?: string } = {}): Promise<PlacedOrder> =>
      this.#data("post", "/v1/orders", {
        body: order,
        idempotencyKey: options.idempotencyKey ?? order.client_order_id ?? randomUUID(),
      }),
    /** Orders, newest first (default status open). @example const { data } = await client.orders.list({ status: "all" }); */
    list: (query?: Query<"/v1/orders", "get">): Promise<Page<OrderSummary>> =>
      this.#page("/v1/orders", query ? { query } : {}),
    /**
     * One order, full form. `{ refresh: true }` asks a live order's venue now instead of waiting for
     * crossbook's next poll (costs venue rate limit). @example const o = await client.orders.get("ord_…");
     */
    get: (id: string, query?: Query<"/v1/orders/{id}", "get">): Promise<Order> =>
      this.#data("get", "/v1/orders/{id}", { params: { id }, ...(query ? { query } : {}) }),
    /**
     * The fills of an order, each with its cause; `{ refresh: true }` as for `get`.
     * @example const fills = await client.orders.fills("ord_…");
     */
    fills: (id: string, query?: Query<"/v1/orders/{id}/fills", "get">): Promise<Fill[]> =>
      this.#data("get", "/v1/orders/{id}/fills", { params: { id }, ...(query ? { query } : {}) }),
    /** Cancels one order (409 ORDER_NOT_CANCELLABLE when filled or cancelled). @example await client.orders.cancel("ord_…"); */
    cancel: (id: string) => this.#data("delete", "/v1/orders/{id}", { params: { id } }),
    /**
     * Cancels every open order, or those of one market and/or side.
     * @example const { cancelled_count } = await client.orders.cancelAll({ market_id: id });
     */
    cancelAll: (query?: Query<"/v1/orders", "delete">) =>
      this.#data("delete", "/v1/orders", query ? { query } : {}),
  };

  /** Your fills across orders (`GET /v1/fills`), oldest first, read on from a cursor. */
  readonly fills = {
    /**
     * One page of your fills in the key's environment, oldest first, each with `market_title`;
     * filter by `market_id`, `order_id`, `since`, and read on with `after: meta.next_after` while
     * `meta.has_more`.
     * @example const { data, meta } = await client.fills.list({ since: "2026-11-01T00:00:00Z", limit: 100 });
     */
    list: async (query?: FillQuery): Promise<FillPage> => {
      const body = (await this.http.request("get", "/v1/fills", query ? { query } : {})) as FillPage;
      return { data: body.data, meta: body.meta };
    },
    /**
     * Every fill from `after` (a fill id) or `since` on, page after page (following
     * `meta.next_after`), as an async iterator that ends when caught up.
     * @example for await (const f of client.fills.all({ since: "2026-11-01T00:00:00Z" })) console.log(f.market_title ?? f.market_id, f.side, f.size, f.price);
     */
    all: (options: FillsAllOptions = {}): AsyncGenerator<Fill> => this.#allFills(options),
  };

  async *#allFills(options: FillsAllOptions): AsyncGenerator<Fill> {
    const { pageSize, ...filters } = options;
    let after = filters.after;
    for (;;) {
      const page = await this.fills.list({
        ...filters,
        ...(after !== undefined ? { after } : {}),
        limit: pageSize ?? 100,
      });
      yield* page.data;
      // next_after stays put on an empty page: stop there, or the loop would ask forever.
      if (!page.meta.has_more || page.data.length === 0 || page.meta.next_after === null) return;
      after = page.meta.next_after;
    }
  }

  /** Your positions, with PnL. */
  readonly positions = {
    /** Positions with PnL. @example const { data } = await client.positions.list(); */
    list: (query?: Query<"/v1/positions", "get">): Promise<Page<Position>> =>
      this.#page("/v1/positions", query ? { query } : {}),
    /** One position. @example const p = await client.positions.get("pos_…"); */
    get: (id: string): Promise<Position> => this.#data("get", "/v1/positions/{id}", { params: { id } }),
  };

  /** Available, locked and total balance of the key's environment. @example const b = await client.balance(); */
  balance(): Promise<Balance> {
    return this.#data("get", "/v1/balance");
  }

  /** Fake money for the sandbox: deposit, withdraw, reset. */
  readonly sandbox = {
    /** Adds fake USDC to the sandbox balance. @example await client.sandbox.deposit(1000); */
    deposit: (amount: number) =>
      this.#data("post", "/v1/sandbox/deposit", { body: { amount } as Body<"/v1/sandbox/deposit", "post"> }),
    /** Takes fake USDC out. @example await client.sandbox.withdraw(100); */
    withdraw: (amount: number) =>
      this.#data("post", "/v1/sandbox/withdraw", {
        body: { amount } as Body<"/v1/sandbox/withdraw", "post">,
      }),
    /** Cancels everything and resets the sandbox balance. @example await client.sandbox.reset(); */
    reset: (body?: Body<"/v1/sandbox/reset", "post">) =>
      this.#data("post", "/v1/sandbox/reset", body ? { body } : {}),
  };

  /** Pairs of markets on two venues that resolve together. */
  readonly matches = {
    /** Matched pairs. @example const { data } = await client.matches.list({ status: "verified", relation: "identity" }); */
    list: (query?: Query<"/v1/matches", "get">): Promise<Page<Match>> =>
      this.#page("/v1/matches", query ? { query } : {}),
    /** One pair with its reasons. @example const m = await client.matches.get("mat_…"); */
    get: (id: string): Promise<Match> => this.#data("get", "/v1/matches/{id}", { params: { id } }),
  };

  /** Cross-venue events: the matched markets of one question. */
  readonly events = {
    /** Cross-venue events. @example const { data } = await client.events.list({ status: "verified" }); */
    list: (query?: Query<"/v1/events", "get">): Promise<Page<Event>> =>
      this.#page("/v1/events", query ? { query } : {}),
    /** One cross-venue event. @example const e = await client.events.get("xev_…"); */
    get: (id: string): Promise<Event> =>
      this.#data("get", "/v1/events/{event_id}", { params: { event_id: id } }),
  };

  /** Cross-venue arbitrage: every verified pair whose live books pay after both venues' fees. */
  readonly arbitrage = {
    /**
     * Current opportunities, highest `profit` first: each with its event, the pair's two markets,
     * the legs to buy and the figures at its most profitable size of at least `min_size` (those of
     * `prices.compare` for that pair). Filters: `min_profit`, `min_edge`, `min_size`, `venue`,
     * `category`, `limit`; `meta` says how many pairs were scanned and priced.
     * @example const { data } = await client.arbitrage.list({ min_profit: 1 }); for (const o of data) console.log(o.event.title, o.size, o.profit);
     */
    list: async (query?: Query<"/v1/arbitrage", "get">): Promise<ArbitrageList> => {
      const body = (await this.http.request("get", "/v1/arbitrage", query ? { query } : {})) as ArbitrageList;
      return { data: body.data, meta: body.meta };
    },
  };

  /** Server-side price alerts. */
  readonly alerts = {
    /** Creates a server-side price alert. @example await client.alerts.create({ market_id: id, condition: "price_above", threshold: 0.6 }); */
    create: (body: Body<"/v1/alerts", "post">) => this.#data("post", "/v1/alerts", { body }),
    /** Your alerts. @example const { data } = await client.alerts.list(); */
    list: (query?: Query<"/v1/alerts", "get">): Promise<Page<Alert>> =>
      this.#page("/v1/alerts", query ? { query } : {}),
    /** One alert. @example const a = await client.alerts.get("alt_…"); */
    get: (id: string): Promise<Alert> => this.#data("get", "/v1/alerts/{id}", { params: { id } }),
    /** Deletes an alert. @example await client.alerts.delete("alt_…"); */
    delete: (id: string) => this.#data("delete", "/v1/alerts/{id}", { params: { id } }),
  };

  /** Webhooks: the service posts your account's events to your URL. */
  readonly webhooks = {
    /** Registers an HTTPS endpoint; the secret is returned once. @example const w = await client.webhooks.create({ url, events: ["order.filled"] }); */
    create: (body: Body<"/v1/webhooks", "post">) => this.#data("post", "/v1/webhooks", { body }),
    /** Your webhooks. @example const list = await client.webhooks.list(); */
    list: (): Promise<Webhook[]> => this.#data("get", "/v1/webhooks"),
    /** One webhook. @example const w = await client.webhooks.get("wh_…"); */
    get: (id: string): Promise<Webhook> => this.#data("get", "/v1/webhooks/{id}", { params: { id } }),
    /** Changes events, URL or secret, or re-enables. @example await client.webhooks.update(id, { status: "active" }); */
    update: (id: string, body: Body<"/v1/webhooks/{id}", "patch">) =>
      this.#data("patch", "/v1/webhooks/{id}", { params: { id }, body }),
    /** Deletes a webhook. @example await client.webhooks.delete("wh_…"); */
    delete: (id: string) => this.#data("delete", "/v1/webhooks/{id}", { params: { id } }),
    /** Sends a webhook.test event now. @example const delivery = await client.webhooks.test("wh_…"); */
    test: (id: string) => this.#data("post", "/v1/webhooks/{id}/test", { params: { id } }),
    /** Recent deliveries, newest first. @example const d = await client.webhooks.deliveries("wh_…", { limit: 20 }); */
    deliveries: (
      id: string,
      query?: Query<"/v1/webhooks/{id}/deliveries", "get">,
    ): Promise<WebhookDelivery[]> =>
      this.#data("get", "/v1/webhooks/{id}/deliveries", { params: { id }, ...(query ? { query } : {}) }),
  };

  /**
   * Backtests a strategy on the service's candles (`GET /v1/prices/history`, paged) unless you
   * pass your own `source` (a file of candles, an array, a tape). Reading from the service, it
   * also reads each market's title (`GET /v1/markets/{id}`) for the report, unless you pass `titles`.
   * @example
   * const result = await client.backtest({ strategy, markets: [id], interval: "1h", from: "2026-10-01", to: "2026-11-01", initialCash: 1000 });
   * await writeReport(result, "report.html");
   */
  async backtest(
    options: Omit<BacktestOptions, "source"> & { source?: BacktestOptions["source"] },
  ): Promise<BacktestResult> {
    if (options.source) return backtest({ ...options, source: options.source });
    const source = historySource(async (market_id, interval, start, end, limit) => {
      const page = await this.prices.history({ market_id, interval, start, end, limit } as never);
      return page as never;
    });
    const titles = options.titles ?? (await this.#titles(options.markets));
    return backtest({ ...options, source, titles });
  }

  /** Titles of these markets by id; one that cannot be read is left out (the report shows its id). */
  async #titles(marketIds: readonly string[]): Promise<Record<string, string>> {
    // Bad `markets` are for backtest() to refuse, with its own message.
    const unique = Array.isArray(marketIds)
      ? [...new Set(marketIds.filter((id) => typeof id === "string"))]
      : [];
    const read: Array<string | undefined> = [];
    let next = 0;
    const worker = async () => {
      while (next < unique.length) {
        const i = next++;
        read[i] = await this.markets.get(unique[i]!).then(
          (m) => m.title,
          () => undefined,
        );
      }
    };
    // A few at a time, as the candles are read: a run over many markets is no burst of requests.
    await Promise.all(Array.from({ length: Math.min(4, unique.length) }, worker));
    return Object.fromEntries(unique.flatMap((id, i) => (read[i] ? [[id, read[i]!]] : [])));
  }

  /**
   * Your account's events in the key's environment (orders, fills, positions, transfers), oldest
   * first, read on from a cursor so none is missed across restarts. A cursor older than the
   * service keeps (EVENT_RETENTION_DAYS) throws a CrossbookApiError with code CURSOR_EXPIRED.
   * @example
   * const cursor = new FileCursorStore("./state/events.json");
   * for await (const event of client.accountEvents({ cursor, follow: true, types: ["order.filled"] }))
   *   console.log(event.seq, event.type, event.data);
   */
  async *accountEvents(options: AccountEventsOptions = {}): AsyncGenerator<AccountEvent> {
    const types = options.types && options.types.length > 0 ? options.types.join(",") : undefined;
    let after: number | string | undefined = options.after ?? (await options.cursor?.load());
    for (;;) {
      const query = {
        ...(after !== undefined ? { after: String(after) } : {}),
        ...(types ? { types } : {}),
        limit: options.pageSize ?? 100,
      } as Query<"/v1/account/events", "get">;
      const page = (await this.http.request("get", "/v1/account/events", {
        query,
        ...(options.signal ? { signal: options.signal } : {}),
      })) as { data: AccountEvent[]; meta: { next_after: number | null; has_more: boolean } };
      for (const event of page.data) {
        yield event;
        // Reached only when the caller asks for the next event: this one was handled.
        after = event.seq;
        await options.cursor?.save(event.seq);
      }
      if (page.meta.has_more) continue;
      if (!options.follow || options.signal?.aborted) return;
      await pause(options.pollMs ?? 1_000, options.signal);
      if (options.signal?.aborted) return;
    }
  }

  /**
   * Your account's events pushed live over a WebSocket (`/v1/account/stream`): replayed from a
   * cursor, then live, in order; after every reconnect it resumes from the last event received, so
   * none is missed or repeated. A refused key makes a `for await` loop throw; see `AccountStream`.
   * @example
   * const cursor = new FileCursorStore("./state/events.json");
   * for await (const event of client.accountStream({ cursor, types: ["order.filled"] }))
   *   console.log(event.seq, event.type, event.data);
   */
  accountStream(options: Omit<AccountStreamOptions, "baseUrl" | "apiKey"> = {}): AccountStream {
    return new AccountStream({ baseUrl: this.http.baseUrl, apiKey: this.#apiKey, ...options });
  }

  /**
   * Every item of a paginated list, page by page (offset pagination, `limit` per page).
   * @example for await (const m of client.paginate((q) => client.markets.list({ ...q, venue: "kalshi" }))) console.log(m.id);
   */
  async *paginate<T>(
    fetchPage: (q: { limit: number; offset: number }) => Promise<{ data: T[]; meta: PageMeta }>,
    limit = 100,
  ): AsyncGenerator<T> {
    for (let offset = 0; ; offset += limit) {
      const { data, meta } = await fetchPage({ limit, offset });
      yield* data;
      const total = typeof meta.total === "number" ? meta.total : undefined;
      if (data.length < limit || (total !== undefined && offset + data.length >= total)) return;
    }
  }
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

export type { Schemas };
