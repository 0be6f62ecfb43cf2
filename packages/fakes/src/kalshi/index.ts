/**
 * The fake Kalshi (Trade API v2, REST + WebSocket) for tests, benchmarks and `crossbook demo`.
 * `startKalshiFake()` serves the seeded world on loopback under the documented paths
 * (`/trade-api/v2`, `/trade-api/ws/v2`; VENUES.md §2.1) and hands back a scripting API.
 */
import { generateKeyPair } from "node:crypto";
import { promisify } from "node:util";
import Fastify from "fastify";
import { FairValues } from "../fair";
import { DEFAULT_WORLD, type SeedMarket } from "../world/seed";
import { type Ctx, errorBody } from "./context";
import { registerDiscovery } from "./discovery";
import { KalshiError, tick } from "./engine";
import { installFaults, newFaults } from "./faults";
import { registerHistorical } from "./historical";
import { registerOrderbook } from "./orderbook";
import { registerPortfolio } from "./portfolio";
import { createScript, type KalshiScript } from "./script";
import { KalshiState } from "./state";
import { attachWs, WS_PATH } from "./ws";

export type { MalformKind } from "./context";
export type { KalshiScript } from "./script";

export const API_BASE = "/trade-api/v2";

export interface KalshiFakeOptions {
  port?: number;
  host?: string;
  /** Seed markets; only `venue: "kalshi"` ones are served. Default: DEFAULT_WORLD. */
  world?: SeedMarket[];
  seed?: number;
  /** Run `tick()` on an interval (default 1000 ms when `true`). */
  autoplay?: boolean | { intervalMs: number };
  /** Accepted clock skew for KALSHI-ACCESS-TIMESTAMP. Default 30 s. */
  authToleranceMs?: number;
  /**
   * Refuse unsigned WebSocket upgrades (401). Default true, as on the venue: "authentication is
   * required to establish the connection" (docs.kalshi.com/websockets/websocket-connection). A
   * client signs with a key from `script.addApiKey`, or with `feedKey()`.
   */
  wsRequireAuth?: boolean;
  /**
   * The historical cutoff (unix ms or ISO time): markets settled, fills created and orders closed
   * before it are served only under `/historical/*`. Default: none (nothing archived).
   */
  historicalCutoff?: number | string;
  /** Server heartbeat ping period. Default 10 s, as on the venue. */
  wsPingIntervalMs?: number;
}

export interface KalshiFake {
  /** REST base including `/trade-api/v2`. */
  apiUrl: string;
  /** WebSocket URL (`.../trade-api/ws/v2`). */
  wsUrl: string;
  script: KalshiScript;
  /**
   * A market-data key the fake accepts (its own account, no money): an RSA key generated on the
   * first call and registered, for clients that need a signed WebSocket (`KALSHI_FEED_KEY_ID`).
   */
  feedKey(): Promise<{ keyId: string; privateKeyPem: string }>;
  close(): Promise<void>;
}

const generateKeyPairAsync = promisify(generateKeyPair);

export async function startKalshiFake(options: KalshiFakeOptions = {}): Promise<KalshiFake> {
  const world = options.world ?? DEFAULT_WORLD;
  const seed = options.seed ?? 1;
  const state = new KalshiState(world, seed, Date.now, new FairValues(world, seed));
  const ctx: Ctx = {
    state,
    faults: newFaults(),
    base: API_BASE,
    authToleranceMs: options.authToleranceMs ?? 30_000,
    wsRequireAuth: options.wsRequireAuth ?? true,
    wsPingIntervalMs: options.wsPingIntervalMs ?? 10_000,
  };
  if (options.historicalCutoff !== undefined) {
    const ms =
      typeof options.historicalCutoff === "number"
        ? options.historicalCutoff
        : Date.parse(options.historicalCutoff);
    if (!Number.isFinite(ms)) throw new Error("fake kalshi: historicalCutoff is not a time");
    state.historicalCutoffMs = ms;
  }
  const app = Fastify({ logger: false });
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === "") return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new KalshiError(400, "invalid_parameters", "request body is not valid JSON"), undefined);
    }
  });
  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof KalshiError) return reply.code(err.status).send(errorBody(err.code, err.message));
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500)
      return reply.code(status).send(errorBody("bad_request", (err as Error).message));
    return reply.code(500).send(errorBody("internal_server_error", "internal server error"));
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send(errorBody("not_found", "not found")));
  installFaults(app, ctx);
  await app.register(
    async (api) => {
      registerDiscovery(api, ctx);
      registerOrderbook(api, ctx);
      registerPortfolio(api, ctx);
      registerHistorical(api, ctx);
    },
    { prefix: API_BASE },
  );
  await app.listen({ port: options.port ?? 0, host: options.host ?? "127.0.0.1" });
  const ws = attachWs(app.server, ctx);
  const addr = app.server.address();
  const port = typeof addr === "object" && addr ? addr.port : options.port;
  const host = options.host ?? "127.0.0.1";
  const script = createScript(ctx, ws);
  let timer: NodeJS.Timeout | null = null;
  if (options.autoplay) {
    const interval = typeof options.autoplay === "object" ? options.autoplay.intervalMs : 1000;
    timer = setInterval(() => tick(state), interval);
    timer.unref();
  }
  let feedKey: Promise<{ keyId: string; privateKeyPem: string }> | undefined;
  return {
    apiUrl: `http://${host}:${port}${API_BASE}`,
    wsUrl: `ws://${host}:${port}${WS_PATH}`,
    script,
    feedKey() {
      feedKey ??= generateKeyPairAsync("rsa", { modulusLength: 2048 }).then(({ publicKey, privateKey }) => {
        const keyId = "fake-feed-key";
        script.addApiKey({
          keyId,
          publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
          balanceCents: 0,
        });
        return { keyId, privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
      });
      return feedKey;
    },
    async close() {
      if (timer) clearInterval(timer);
      await ws.close();
      await app.close();
    },
  };
}
