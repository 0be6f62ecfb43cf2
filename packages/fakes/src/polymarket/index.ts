/**
 * Starts the fake Polymarket: one local HTTP server per venue host (Gamma, CLOB, Data API), each
 * serving from its root like the real hosts, with the CLOB WebSocket channels on the CLOB server
 * under `/ws/{market,user}`, so a client only swaps base URLs. Deterministic for a given `seed`.
 * See VENUES.md §1.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import { FairValues } from "../fair";
import { DEFAULT_WORLD, type SeedMarket, seedFor } from "../world/seed";
import { ApiKeyStore, authRoutes } from "./auth";
import { clobPublicRoutes } from "./clob";
import { dataRoutes } from "./data";
import { gammaRoutes } from "./gamma";
import { tradingRoutes } from "./orders";
import { createScript, Faults, installFaultHooks, type PolymarketScript, rewriteWsFrame } from "./script";
import { PolymarketState } from "./state";
import { MICRO } from "./units";
import { attachWebSockets, type WsHub } from "./ws";

export type { ApiCreds } from "./auth";
export { CLOB_AUTH_MESSAGE, CLOB_AUTH_TYPES, hmacSignature } from "./auth";
export {
  AMOY_EXCHANGE_V3,
  EXCHANGE_V2,
  EXCHANGE_V3,
  NEG_RISK_EXCHANGE_V2,
  ORDER_TYPES,
  orderDomain,
} from "./orders";
export type { BookInput, LevelInput, MalformKind, MarketInfo, PolymarketScript, WalletInput } from "./script";

export interface PolymarketFakeOptions {
  /** CLOB (+ WS) port; Gamma and Data API take the next two. 0 (default) picks free ports. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Markets to serve (only `venue: "polymarket"` entries are used); default the seeded world. */
  world?: SeedMarket[];
  /** Seed for books, history and the simulation; default 1. */
  seed?: number;
  /** Run `script.tick()` on an interval (default 1000 ms when `true`). */
  autoplay?: boolean | { intervalMs: number };
  /** EIP-712 chain id for L1 auth and orders; default 137 (Polygon). */
  chainId?: number;
  /** Exchange version served by `GET /version`; default 2. */
  exchangeVersion?: 2 | 3;
  /** Accepted clock skew of POLY_TIMESTAMP in seconds; default 300. */
  authWindowSeconds?: number;
  /** pUSD every unknown wallet starts with, in dollars; default 10,000. */
  defaultCollateral?: number;
  /** Page size of `/data/orders` and `/data/trades`; default 100. */
  ordersPageSize?: number;
  /** Clock in unix ms (default `Date.now`): timestamps, auth freshness, GTD expiry, history. */
  now?: () => number;
  /**
   * Largest `offset` the deprecated Gamma lists accept before 422 "offset too large"; default 10,000
   * (what third parties report; the venue's own figure is unverified).
   */
  gammaMaxOffset?: number;
}

export interface PolymarketFake {
  gammaUrl: string;
  clobUrl: string;
  dataUrl: string;
  /** Base of the CLOB WebSocket: append `/market` or `/user` (as with `wss://…/ws`). */
  wsUrl: string;
  wsMarketUrl: string;
  wsUserUrl: string;
  script: PolymarketScript;
  close(): Promise<void>;
}

export async function startPolymarketFake(options: PolymarketFakeOptions = {}): Promise<PolymarketFake> {
  const seed = options.seed ?? 1;
  // The whole world (both venues) defines which markets share a fair value; this fake lists its own.
  const fullWorld = options.world ?? DEFAULT_WORLD;
  const world = seedFor("polymarket", fullWorld);
  const clock = options.now ?? Date.now;
  const state = new PolymarketState(
    world,
    seed,
    BigInt(Math.round((options.defaultCollateral ?? 10_000) * MICRO)),
    clock,
  );
  const keys = new ApiKeyStore(seed);
  const faults = new Faults();
  const funders = new Map<string, string>();
  let version: 2 | 3 = options.exchangeVersion ?? 2;
  const auth = {
    chainId: options.chainId ?? 137,
    windowSeconds: options.authWindowSeconds ?? 300,
    seed,
    now: clock,
  };

  const host = options.host ?? "127.0.0.1";
  const basePort = options.port ?? 0;
  const ordersPageSize = options.ordersPageSize ?? 100;
  const clob = await serviceApp(faults, "clob", async (app) => {
    await clobPublicRoutes(app, { state, version: () => version });
    await authRoutes(app, { keys, auth });
    await tradingRoutes(app, {
      state,
      keys,
      auth,
      version: () => version,
      funders,
      ordersPageSize,
    });
  });
  const gamma = await serviceApp(faults, "gamma", (app) =>
    gammaRoutes(app, {
      state,
      ...(options.gammaMaxOffset !== undefined ? { maxOffset: options.gammaMaxOffset } : {}),
    }),
  );
  const data = await serviceApp(faults, "data", (app) => dataRoutes(app, { state }));

  let hub: WsHub | null = null;
  const script = createScript({
    state,
    faults,
    ws: () => hub,
    funders,
    setVersion: (v) => {
      version = v;
    },
    fair: new FairValues(fullWorld, seed),
  });

  let clobBase: string;
  let gammaBase: string;
  let dataBase: string;
  try {
    clobBase = await listen(clob, host, basePort);
    gammaBase = await listen(gamma, host, basePort && basePort + 1);
    dataBase = await listen(data, host, basePort && basePort + 2);
  } catch (err) {
    await Promise.allSettled([clob.close(), gamma.close(), data.close()]);
    throw err;
  }
  hub = attachWebSockets(clob.server, {
    state,
    keys,
    prefix: "/ws",
    isDown: () => faults.down,
    latencyMs: () => faults.latencyMs,
    rewrite: (text) => rewriteWsFrame(faults, text),
    count: (key) => faults.counts.set(key, (faults.counts.get(key) ?? 0) + 1),
  });
  const wsBase = `${clobBase.replace(/^http/, "ws")}/ws`;

  let timer: NodeJS.Timeout | null = null;
  if (options.autoplay) {
    const every = typeof options.autoplay === "object" ? options.autoplay.intervalMs : 1000;
    timer = setInterval(() => script.tick(), every);
    timer.unref();
  }

  return {
    gammaUrl: gammaBase,
    clobUrl: clobBase,
    dataUrl: dataBase,
    wsUrl: wsBase,
    wsMarketUrl: `${wsBase}/market`,
    wsUserUrl: `${wsBase}/user`,
    script,
    async close() {
      if (timer) clearInterval(timer);
      await hub?.close();
      await Promise.all([clob.close(), gamma.close(), data.close()]);
    },
  };
}

/** One Fastify app per venue host, with the raw-body parser, the venue's error body and the fault hooks. */
async function serviceApp(
  faults: Faults,
  service: string,
  routes: (app: FastifyInstance) => Promise<void>,
): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  // Keep the exact body text: the L2 HMAC covers it byte for byte.
  app.addContentTypeParser("application/json", { parseAs: "string" }, (req, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    (req as FastifyRequest & { rawBody?: string }).rawBody = text;
    if (text.trim() === "") return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      const err = new Error("Invalid JSON body") as Error & { statusCode: number };
      err.statusCode = 400;
      done(err, undefined);
    }
  });
  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    const status = err.statusCode && err.statusCode < 500 ? err.statusCode : 500;
    void reply.code(status).send({ error: status === 500 ? "Internal Server Error" : err.message });
  });
  app.setNotFoundHandler((_req, reply) => {
    void reply.code(404).send({ error: "Not Found" });
  });
  installFaultHooks(app, faults, service);
  await routes(app);
  return app;
}

async function listen(app: FastifyInstance, host: string, port: number): Promise<string> {
  await app.listen({ port, host });
  const address = app.server.address();
  const actual = typeof address === "object" && address ? address.port : port;
  return `http://${host.includes(":") ? `[${host}]` : host}:${actual}`;
}
