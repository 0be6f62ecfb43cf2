/**
 * The composition root: builds the Fastify app and the services from a runtime (store, bus,
 * limiter, clock, secret box). Tests build it exactly as `serve` does, then use `app.inject()`.
 */
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyInstance, LogController } from "fastify";
import { Type } from "typebox";
import { LoginGuard } from "./accounts/login-guard";
import { accountRoutes } from "./accounts/routes";
import { AccountsService } from "./accounts/service";
import { alertRoutes } from "./alerts/routes";
import { AlertsService } from "./alerts/service";
import { authPlugin } from "./apikeys/auth-plugin";
import { apiKeyRoutes } from "./apikeys/routes";
import { ApiKeysService } from "./apikeys/service";
import { KeyUsage } from "./apikeys/usage";
import { catalogRoutes } from "./catalog/routes";
import { CatalogService } from "./catalog/service";
import { type ClusterJob, ClusterJobs } from "./cluster/jobs";
import { LocalLeases, StoreLeases } from "./cluster/leases";
import { CONSOLE_PAGES } from "./console/pages";
import { consolePlugin } from "./console/plugin";
import { credentialRoutes } from "./credentials/routes";
import { CredentialsService } from "./credentials/service";
import { AccountEvents } from "./events/account-events";
import { AccountEventTail } from "./events/live-tail";
import { Outbox } from "./events/outbox";
import { accountEventRoutes } from "./events/routes";
import { AuthFailures } from "./http/auth-failures";
import { trustFunction } from "./http/client-address";
import { lazyChildLoggerFactory } from "./http/lazy-logger";
import { plumbing, serverOptions } from "./http/plumbing";
import { parseQuerystring } from "./http/querystring";
import { newId } from "./infra/ids";
import { type Logger, silentLogger } from "./infra/log";
import { liveOpenOrderCount } from "./ledger/orders-repo";
import { Matcher } from "./matching/matcher";
import { matchingRoutes } from "./matching/routes";
import type { MatcherLike } from "./matching/runner";
import { MatchingService } from "./matching/service";
import { createMetrics, type Metrics, metricsPlugin } from "./ops/metrics";
import { opsRoutes, type Probe } from "./ops/routes";
import type { Executions } from "./orders/execution";
import { VenueRouter } from "./orders/live";
import type { TradableMarket } from "./orders/markets";
import { orderRoutes } from "./orders/routes";
import { OrdersService } from "./orders/service";
import { VenueHoldings } from "./portfolio/holdings";
import { portfolioRoutes } from "./portfolio/routes";
import { PortfolioService } from "./portfolio/service";
import { CandleBuilder } from "./prices/candles";
import { CompareService } from "./prices/compare";
import { PriceHistoryService } from "./prices/history";
import { priceHistoryRoutes } from "./prices/history-routes";
import { LiveMarkets } from "./prices/ingest";
import { pricesRoutes } from "./prices/routes";
import { ArbitrageScanner } from "./prices/scanner";
import { arbitrageScannerRoutes } from "./prices/scanner-routes";
import { PricesService } from "./prices/service";
import type { Runtime } from "./runtime";
import { SandboxExchange } from "./sandbox/exchange";
import { SandboxExecution } from "./sandbox/execution";
import { sandboxRoutes } from "./sandbox/routes";
import { SandboxAccounts } from "./sandbox/service";
import type { HubOptions } from "./stream/hub";
import { streamRoutes } from "./stream/routes";
import { attachStream, type StreamServer } from "./stream/server";
import type { VenueId } from "./venues/model";
import { canTrade, type MarketDataVenue } from "./venues/venue";
import { type DispatcherOptions, WebhookDispatcher } from "./webhooks/dispatcher";
import { webhookRoutes } from "./webhooks/routes";
import { WebhooksService } from "./webhooks/service";

export interface Services {
  accounts: AccountsService;
  apiKeys: ApiKeysService;
  /** Requests per key and minute, admitted and refused (the console's usage page). */
  keyUsage: KeyUsage;
  outbox: Outbox;
  catalog: CatalogService;
  live: LiveMarkets;
  alerts: AlertsService;
  credentials: CredentialsService;
  prices: PricesService;
  candles: CandleBuilder;
  history: PriceHistoryService;
  venues: ReadonlyMap<VenueId, MarketDataVenue>;
  exchange: SandboxExchange;
  sandbox: SandboxAccounts;
  orders: OrdersService;
  venueRouter: VenueRouter;
  /** What live accounts' linked venue accounts hold (positions beside crossbook's, sells of them). */
  holdings: VenueHoldings;
  portfolio: PortfolioService;
  webhookDispatcher: WebhookDispatcher;
  webhooks: WebhooksService;
  accountEvents: AccountEvents;
  /** Matched markets and cross-venue events; also the CrossEventLookup of compare. */
  matching: MatchingService;
  /** Price comparison and arbitrage of one cross-venue event (`GET /v1/prices/compare`). */
  compare: CompareService;
  /** The background jobs that run once per cluster, on the instance holding each one's lease. */
  clusterJobs: ClusterJobs;
}

export interface BuiltApp {
  app: FastifyInstance;
  services: Services;
  /** The WebSocket price stream attached to the app's HTTP server. */
  stream: StreamServer;
  /** The app's Prometheus registry (served at /metrics, or on METRICS_LISTEN by `serve`). */
  metrics: Metrics;
}

export const API_VERSION = "0.1.0";
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface ServiceOptions {
  /** Webhook dispatcher tuning (tests inject the sender, the DNS lookup and short timers). */
  webhooks?: Partial<DispatcherOptions>;
  /** The venue adapters to use (built from config by `venues/registry.ts` in production). */
  venues?: ReadonlyMap<VenueId, MarketDataVenue>;
  log?: Logger;
  /** The matcher the matching service feeds (tests inject fakes); a new Matcher by default. */
  matcher?: MatcherLike;
  /** Background work goes by cluster leases from the start (see ClusterJobs.clustered). */
  clustered?: boolean;
}

export function createServices(runtime: Runtime, options: ServiceOptions = {}): Services {
  const log = options.log ?? silentLogger;
  const accounts = new AccountsService(runtime.store.db, runtime.clock, runtime.config);
  const apiKeys = new ApiKeysService(
    runtime.store.db,
    runtime.store.dialect,
    () => runtime.store.externalChangeCounter(),
    runtime.clock,
    runtime.bus,
    accounts,
    log,
  );
  const keyUsage = new KeyUsage(runtime.store.db, runtime.clock, runtime.config, log);
  const outbox = new Outbox(runtime.store.dialect, runtime.clock);
  const venues = options.venues ?? new Map<VenueId, MarketDataVenue>();
  const catalog = new CatalogService(
    runtime.store.db,
    venues,
    runtime.clock,
    runtime.bus,
    log,
    { intervalSeconds: runtime.config.catalogSyncIntervalSeconds },
    runtime.config.instanceId,
  );
  const live = new LiveMarkets(runtime.store.db, venues, catalog, runtime.clock, log, {
    maxMarketsPerVenue: runtime.config.feedMaxMarketsPerVenue,
    flushIntervalMs: 2_000,
  });
  const alerts = new AlertsService(runtime.store.db, outbox, live, runtime.clock, runtime.bus, log, {
    reloadIntervalMs: 60_000,
    dialect: runtime.store.dialect,
  });
  live.onQuote((quote, _cause, _venue, here) => alerts.onQuote(quote, here));
  const prices = new PricesService(runtime.store.db, live, venues, runtime.clock, runtime.bus, log);
  // Market summaries first, then the feed: a feed's first quotes must find their market (its venue
  // 24 h volume) or they go out on the bus with crossbook's own partial count.
  // (On every instance, whichever synced the venue.)
  catalog.onChanged((venue) => prices.reload(venue));
  catalog.onChanged((venue) => live.refresh(venue));
  const candles = new CandleBuilder(runtime.store.db, log, { flushIntervalMs: 5_000 });
  // Candles are written by the instance producing the venue's quotes.
  live.onQuote((quote, cause, _venue, here) => {
    if (here) candles.onQuote(quote, cause);
  });
  const history = new PriceHistoryService(runtime.store.db, venues, candles, runtime.clock, log);
  const credentials = new CredentialsService(
    runtime.store.db,
    runtime.secretBox,
    runtime.clock,
    (accountId, venue) => liveOpenOrderCount(runtime.store.db, accountId, venue),
  );
  const exchange = new SandboxExchange(runtime.store.db, outbox, live, runtime.clock, log, runtime.bus);
  const sandbox = new SandboxAccounts(runtime.store.db, outbox, exchange, runtime.clock);
  const book = (market: TradableMarket) => prices.orderBook(market);
  const holdings = new VenueHoldings({
    venues,
    credentials,
    clock: runtime.clock,
    log: log,
    maxAgeMs: runtime.config.venuePositionsMaxAgeSeconds * 1000,
  });
  // Live keys' orders go to the venues with the account's linked credentials (orders/live.ts).
  const venueRouter = new VenueRouter({
    db: runtime.store.db,
    outbox,
    clock: runtime.clock,
    venues,
    credentials,
    log: log,
    holdings,
    book,
  });
  // Where orders execute, and where each environment's cash and venue holdings are read: the sandbox
  // exchange for sandbox keys, each venue that trades for live keys (a data-only venue's markets are
  // refused for live orders).
  const executions: Executions = {
    sandbox: new SandboxExecution({
      db: runtime.store.db,
      outbox,
      clock: runtime.clock,
      exchange,
      accounts: sandbox,
      book,
    }),
    live: new Map(
      [...venues].filter(([, venue]) => canTrade(venue)).map(([id]) => [id, venueRouter.at(id)] as const),
    ),
  };
  const orders = new OrdersService({
    db: runtime.store.db,
    outbox,
    clock: runtime.clock,
    venues,
    executions,
  });
  // A market that closed or resolved: sandbox orders on it are cancelled, positions settle.
  live.onFeedEvent((event, venue) => {
    // Every instance sees the event; the one producing the venue's data settles (once, not N times).
    if (event.kind === "status" && event.status !== "open" && live.produces(venue)) {
      void orders
        .settleMarket(event.marketId, { status: event.status, resolution: event.resolution })
        .catch((error) => log.warn({ err: error, market_id: event.marketId }, "could not settle a market"));
    }
  });
  // Settlements write the store: on the instance that synced. The others drop cached market state.
  catalog.onSynced(() => orders.settleFromCatalog());
  catalog.onChanged(() => orders.invalidateMarkets());
  const portfolio = new PortfolioService(
    runtime.store.db,
    executions,
    (marketId) => prices.priceMicros(marketId),
    holdings,
    (ids) => orders.marketTitles(ids),
  );
  const webhookDispatcher = new WebhookDispatcher(
    runtime.store.db,
    runtime.store.dialect,
    outbox,
    runtime.secretBox,
    runtime.clock,
    log,
    {
      concurrency: runtime.config.webhookConcurrency,
      accountConcurrency: runtime.config.webhookAccountConcurrency,
      leaseMs: runtime.config.webhookLeaseSeconds * 1000,
      allowPrivateNetworks: runtime.config.webhookAllowPrivateNetworks,
      allowLoopback: runtime.config.webhookAllowLoopback,
      ...options.webhooks,
    },
  );
  const accountEvents = new AccountEvents(
    runtime.store.db,
    runtime.store.dialect,
    runtime.clock,
    runtime.config.eventRetentionDays,
  );
  const webhooks = new WebhooksService(
    runtime.store.db,
    runtime.secretBox,
    runtime.clock,
    webhookDispatcher,
    {
      allowPrivateNetworks: runtime.config.webhookAllowPrivateNetworks,
      allowLoopback: runtime.config.webhookAllowLoopback,
      ...(options.webhooks?.lookup ? { lookup: options.webhooks.lookup } : {}),
    },
  );
  const matching = new MatchingService({
    db: runtime.store.db,
    dialect: runtime.store.dialect,
    outbox,
    clock: runtime.clock,
    log: log,
    matcher: options.matcher ?? new Matcher(),
    priceMicros: (marketId) => prices.priceMicros(marketId),
  });
  // New and changed markets are matched after each sync, in the background (the sync does not wait).
  const compare = new CompareService(runtime.store.db, prices, matching, log, {
    minContracts: runtime.config.arbitrageMinContracts,
  });
  // Leases in PostgreSQL when instances share it and Redis (whose bus carries what the job holders
  // produce to the others); otherwise every instance runs every job, as one process does.
  const shared = runtime.store.dialect === "postgres" && runtime.bus.kind === "redis";
  const clusterJobs = new ClusterJobs(shared ? new StoreLeases(runtime.store.db) : new LocalLeases(), {
    instanceId: runtime.config.instanceId,
    leaseMs: runtime.config.jobLeaseSeconds * 1000,
    log,
    clustered: options.clustered ?? false,
  });
  // The matcher runs where its cluster job runs, after any instance's sync of any venue. With the
  // background work not started (tests, tools), a sync here triggers it, as in one process.
  if (runtime.config.matchingEnabled) {
    catalog.onChanged((_venue, where) => {
      const here = clusterJobs.clustered ? clusterJobs.runs(MATCHING_JOB) : where === "here";
      if (here) void matching.refresh();
    });
  }
  return {
    accounts,
    apiKeys,
    keyUsage,
    outbox,
    catalog,
    live,
    alerts,
    credentials,
    prices,
    candles,
    history,
    venues,
    exchange,
    sandbox,
    orders,
    venueRouter,
    holdings,
    portfolio,
    webhookDispatcher,
    webhooks,
    accountEvents,
    matching,
    compare,
    clusterJobs,
  };
}

/**
 * A piece of work with a life of its own. `prepare` runs before the app serves (always); `start`
 * begins background work (`serve` asks for it, tests drive services by hand); `stop` runs when the
 * app closes. Jobs start in list order and stop in reverse, so a job is listed after what its
 * stopping must wait for.
 */
export interface LifecycleJob {
  name: string;
  prepare?: () => Promise<void>;
  start?: () => void;
  stop?: () => Promise<void> | void;
}

/** A timer that runs `work` every `ms` from before the app serves until it closes. */
function every(name: string, ms: number, work: () => Promise<unknown>, log: Logger): LifecycleJob {
  const job = periodic(name, ms, work, log);
  return { name, prepare: async () => job.start(), stop: job.stop };
}

/** Everything that starts and stops with the app, in start order. */
export function lifecycleJobs(
  services: Services,
  config: Runtime["config"],
  log: Logger,
  bus: Runtime["bus"],
): LifecycleJob[] {
  addClusterJobs(services, config, log);
  return [
    { name: "api keys", prepare: () => services.apiKeys.start(), stop: () => services.apiKeys.stop() },
    {
      name: "alerts",
      prepare: () => services.alerts.start(),
      start: () => services.alerts.startReloading(),
      stop: () => services.alerts.stop(),
    },
    // Stops after the feeds, so its final flush holds every update.
    { name: "candles", start: () => services.candles.start(), stop: () => services.candles.stop() },
    // Market data from the instances producing each venue (a venue's feed is a cluster job, below).
    {
      name: "quote ingest",
      prepare: () =>
        services.live.join({
          bus,
          instanceId: config.instanceId,
          produces: (venue) =>
            services.clusterJobs.clustered ? services.clusterJobs.runs(feedJob(venue)) : true,
        }),
      start: () => services.live.start(),
      stop: () => services.live.stop(),
    },
    {
      name: "prices",
      prepare: () => services.prices.listen(),
      start: () => services.prices.start(),
      stop: () => services.prices.stop(),
    },
    // Other instances' catalog syncs (each venue's sync is a cluster job, below).
    { name: "catalog", prepare: () => services.catalog.listen(), stop: () => services.catalog.unlisten() },
    {
      name: "webhook delivery",
      start: () => services.webhookDispatcher.start(),
      stop: () => services.webhookDispatcher.stop(),
    },
    // Every instance plans sandbox orders against the live books; the resting ones are held by the
    // `sandbox matching` job's holder (below). Unclustered, they are back on their simulated books
    // here before the app serves.
    {
      name: "sandbox exchange",
      prepare: async () => {
        await services.exchange.start();
        if (!services.clusterJobs.clustered) await services.exchange.hold();
      },
      stop: () => services.exchange.stop(),
    },
    every("key usage flush", 15_000, () => services.apiKeys.flushUsage(), log),
    // Request counts per key and minute: written every 5 s, and once more after the last request.
    { name: "request counts", stop: () => services.keyUsage.flush() },
    every("request count flush", 5_000, () => services.keyUsage.flush(), log),
    // Jobs that run once per cluster (on the instance holding each one's lease; all of them here on
    // the embedded store); stopped first, so another instance may take them over at once.
    {
      name: "cluster jobs",
      start: () => void services.clusterJobs.start(),
      stop: () => services.clusterJobs.stop(),
    },
  ];
}

const MATCHING_JOB = "matching";
const feedJob = (venue: VenueId) => `venue feed: ${venue}`;

/** The cluster-wide jobs (cluster/jobs.ts), added once per app. */
function addClusterJobs(services: Services, config: Runtime["config"], log: Logger): void {
  const jobs = services.clusterJobs;
  // Each venue's catalog is listed by one instance per sync interval; the others reload from the store.
  // Its feed runs on one instance too, which forwards the events to the others on the bus.
  for (const venue of services.venues.keys()) {
    jobs.add({
      name: feedJob(venue),
      start: () => services.live.startFeed(venue),
      stop: () => services.live.stopFeed(venue),
    });
    jobs.add({
      name: `catalog sync: ${venue}`,
      start: () => services.catalog.startVenue(venue),
      stop: () => services.catalog.stopVenue(venue),
    });
  }
  // The matcher: indexes the stored markets when it starts, then runs after every catalog sync.
  if (config.matchingEnabled) {
    jobs.add({
      name: MATCHING_JOB,
      start: () => services.matching.start(),
      stop: () => services.matching.stop(),
    });
  }
  // Polls the venues for the fills of open live orders: once per cluster, not once per instance.
  jobs.add({
    name: "live fill poller",
    start: () => services.venueRouter.start(),
    stop: () => services.venueRouter.stop(),
  });
  // Resting sandbox orders are filled by one instance, whichever accepted them (sandbox/exchange.ts).
  jobs.add({
    name: "sandbox matching",
    start: () => services.exchange.hold(),
    stop: () => services.exchange.release(),
  });
  // GTD sandbox orders whose time is up are cancelled once, not by every instance.
  jobs.add(periodic("sandbox order expiry", 1_000, () => services.orders.expireDue(), log));
  // Expired sessions are useless; swept hourly so the table stays small.
  jobs.add(periodic("session sweep", 3_600_000, () => services.accounts.deleteExpiredSessions(), log));
  // Events older than EVENT_RETENTION_DAYS, once every outbox consumer has read them.
  jobs.add(periodic("event pruning", 3_600_000, () => services.accountEvents.prune(), log));
}

/** Runs `work` every `ms` once started; stopping waits for a run under way (a cluster job's fence). */
function periodic(name: string, ms: number, work: () => Promise<unknown>, log: Logger): ClusterJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  return {
    name,
    start: () => {
      timer = setInterval(() => {
        running = work().catch((error) => log.warn({ err: error }, `${name} failed`));
      }, ms);
      timer.unref();
    },
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

export interface BuildOptions {
  /** Extra routes registered before the app is sealed (tests use it for probe routes). */
  register?: (app: FastifyInstance) => Promise<void> | void;
  venues?: ReadonlyMap<VenueId, MarketDataVenue>;
  /** Base URLs each venue adapter was built with, for `GET /v1/venues`. */
  venueUrls?: Record<string, Record<string, string>>;
  /** Stream hub tuning (tests shorten timers and buffers). */
  streamOptions?: Partial<HubOptions>;
  /** Webhook dispatcher tuning (tests). */
  webhooks?: Partial<DispatcherOptions>;
  /** Start background work (catalog sync). `serve` does; tests drive it by hand. */
  startBackground?: boolean;
  /**
   * Background work goes by cluster leases from the start, before it is started (default: with
   * `startBackground`): the instance produces a venue's market data only once it holds its feed.
   */
  clustered?: boolean;
  /** The matcher behind matching (tests inject fakes). */
  matcher?: MatcherLike;
}

export async function buildApp(runtime: Runtime, options: BuildOptions = {}): Promise<BuiltApp> {
  const { config } = runtime;
  const app = Fastify({
    // No secret reaches a log line: Fastify's request serializer logs method, URL and addresses,
    // never headers or bodies, and no code here logs a key, token or password. (pino's redact
    // option would tax every request's log line for fields we never log.)
    logger: { level: config.logLevel },
    childLoggerFactory: lazyChildLoggerFactory,
    // Per-request access lines only at debug: at info they would cost more than the request itself.
    logController: new LogController({
      disableRequestLogging: config.logLevel !== "debug" && config.logLevel !== "trace",
    }),
    bodyLimit: config.bodyLimitBytes,
    // Only the named proxies' X-Forwarded-For is believed (http/client-address.ts).
    trustProxy: config.trustProxy === false ? false : trustFunction(config.trustProxy),
    routerOptions: { querystringParser: parseQuerystring },
    // Router refusals and Node's parser errors answer in the envelope too (http/plumbing.ts).
    ...serverOptions,
    // genReqId reads X-Request-Id itself, keeping a caller's id only when it is well formed.
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers["x-request-id"];
      return typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : newId("req");
    },
    ajv: {
      customOptions: {
        // Reject unknown fields instead of silently dropping them: a typo must fail loudly.
        removeAdditional: false,
        allErrors: true,
        coerceTypes: "array",
        useDefaults: true,
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const services = createServices(runtime, {
    clustered: options.clustered ?? options.startBackground ?? false,
    ...(options.venues ? { venues: options.venues } : {}),
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    ...(options.matcher ? { matcher: options.matcher } : {}),
    log: app.log,
  });
  const jobs = lifecycleJobs(services, config, app.log, runtime.bus);
  // State the app needs is loaded before it serves, background work or not (tests see it too).
  for (const job of jobs) await job.prepare?.();
  app.addHook("onClose", async () => {
    for (const job of [...jobs].reverse()) await job.stop?.();
  });

  await app.register(plumbing);
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "crossbook API",
        version: API_VERSION,
        description:
          "Prediction-market aggregation and trading across Polymarket and Kalshi. Every response uses the " +
          "envelope {success, data | error, meta?}; errors carry a stable machine code.",
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: "http",
            scheme: "bearer",
            description:
              "An API key (cb_live_… or cb_test_…) or, for key management, a session token (cbs_…)",
          },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const auth = (route.config as { auth?: string } | undefined)?.auth ?? "key";
      const transformed = { ...(schema as Record<string, unknown>) };
      if (auth !== "none") transformed["security"] = [{ bearerAuth: [] }];
      return { schema: transformed as typeof schema, url };
    },
  });
  // Failed authentication per client address, counted by REST and the price stream together.
  const authFailures = new AuthFailures(runtime.limiter, runtime.clock, config.authFailuresPerMinute);
  await app.register(authPlugin, {
    config,
    clock: runtime.clock,
    limiter: runtime.limiter,
    apiKeys: services.apiKeys,
    accounts: services.accounts,
    authFailures,
    usage: services.keyUsage,
  });
  const metrics = createMetrics({
    checkpoints: () => runtime.store.checkpointStats(),
    positionMismatches: () => services.holdings.mismatchCount,
    jobs: services.clusterJobs,
  });
  await app.register(metricsPlugin, { metrics });

  const probes: Probe[] = [{ name: "store", check: () => runtime.store.ping() }];
  const redisPing = (runtime.limiter as { ping?: () => Promise<void> }).ping;
  if (redisPing) probes.push({ name: "redis", check: () => redisPing.call(runtime.limiter) });

  await app.register(opsRoutes, {
    metrics,
    probes,
    cluster: services.clusterJobs,
    metricsToken: config.metricsToken,
    // With METRICS_LISTEN, `serve` puts /metrics on that address instead (ops/metrics-server.ts).
    serveMetrics: config.metricsListen === undefined,
  });
  // One guard for the API's and the console's sign-ins: a guesser gains nothing by alternating.
  const loginGuard = new LoginGuard(runtime.limiter, runtime.clock, config.loginAttemptsPerMinute);
  await app.register(accountRoutes, { accounts: services.accounts, guard: loginGuard });
  await app.register(apiKeyRoutes, { apiKeys: services.apiKeys });
  await app.register(catalogRoutes, {
    db: runtime.store.db,
    catalog: services.catalog,
    venues: services.venues,
    urlsInUse: options.venueUrls ?? {},
    live: services.live,
    clock: runtime.clock,
  });

  await app.register(pricesRoutes, {
    prices: services.prices,
    compare: services.compare,
    clock: runtime.clock,
  });
  // Arbitrage over every verified pair, from this instance's live books (prices/scanner.ts).
  const scanner = new ArbitrageScanner({
    db: runtime.store.db,
    events: services.matching,
    prices: services.prices,
    live: services.live,
    compare: services.compare,
    catalog: services.catalog,
    clock: runtime.clock,
    log: app.log,
  });
  await app.register(arbitrageScannerRoutes, { scanner });
  await app.register(priceHistoryRoutes, { history: services.history });
  await app.register(streamRoutes);
  // One reader of the shared outbox per instance hands account events to this instance's streams.
  const accountTail = new AccountEventTail(runtime.store.db, runtime.store.dialect, app.log, {
    pollMs: config.accountStreamPollMs,
  });
  const stopHints = services.outbox.onAccountEvent(() => accountTail.hint());
  const stream = await attachStream(app, {
    config,
    clock: runtime.clock,
    bus: runtime.bus,
    limiter: runtime.limiter,
    slots: runtime.slots,
    apiKeys: services.apiKeys,
    authFailures,
    prices: services.prices,
    accountFeed: { tail: accountTail, events: services.accountEvents, log: app.log, limits: {} },
    hubOptions: { flushIntervalMs: config.streamFlushIntervalMs, ...options.streamOptions },
  });
  // Before the HTTP server closes: it would otherwise wait for every open stream connection.
  app.addHook("preClose", async () => {
    await stream.close();
    stopHints();
    accountTail.close();
  });
  await app.register(alertRoutes, { alerts: services.alerts });
  await app.register(credentialRoutes, { credentials: services.credentials });
  await app.register(orderRoutes, { orders: services.orders });
  await app.register(portfolioRoutes, { portfolio: services.portfolio });
  await app.register(sandboxRoutes, { sandbox: services.sandbox, portfolio: services.portfolio });
  await app.register(webhookRoutes, { webhooks: services.webhooks });
  await app.register(accountEventRoutes, { events: services.accountEvents });
  await app.register(matchingRoutes, { matching: services.matching });

  app.get(
    "/v1/openapi.json",
    {
      config: { auth: "none" },
      schema: { tags: ["ops"], summary: "This OpenAPI 3.1 document", response: { 200: Type.Any() } },
    },
    async () => app.swagger(),
  );
  await app.register(async (scope) => {
    // The documentation viewer is public, like the document it shows.
    scope.addHook("onRoute", (route) => {
      route.config = { ...(route.config ?? {}), auth: "none" };
      route.schema = { ...(route.schema ?? {}), hide: true };
    });
    await scope.register(swaggerUi, { routePrefix: "/docs" });
  });

  // The account console: server-rendered pages over the same services (console/plugin.ts).
  await app.register(consolePlugin(CONSOLE_PAGES), {
    prefix: "/console",
    clock: runtime.clock,
    guard: loginGuard,
    accounts: services.accounts,
    apiKeys: services.apiKeys,
    usage: services.keyUsage,
    webhooks: services.webhooks,
    credentials: services.credentials,
    sandbox: services.sandbox,
    orders: services.orders,
    portfolio: services.portfolio,
    matching: services.matching,
  });

  if (options.register) await options.register(app);

  await app.ready();
  if (options.startBackground) for (const job of jobs) job.start?.();
  return { app, services, stream, metrics };
}
