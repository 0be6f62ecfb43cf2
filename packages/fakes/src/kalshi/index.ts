/**
 * The fake Kalshi (Trade API v2, REST + WebSocket) for tests, benchmarks and `crossbook demo`.
 * `startKalshiFake()` serves the seeded world on loopback under the documented paths
 * (`/trade-api/v2`, `/trade-api/ws/v2`; VENUES.md §2.1) and hands back a scripting API.
 */
import Fastify from "fastify";
import { DEFAULT_WORLD, type SeedMarket } from "../world/seed";
import { type Ctx, errorBody } from "./context";
import { registerDiscovery } from "./discovery";
import { KalshiError, tick } from "./engine";
import { installFaults, newFaults } from "./faults";
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
  /** Refuse unsigned WebSocket upgrades. Default false (public channels open, `fill` needs auth). */
  wsRequireAuth?: boolean;
  /** Server heartbeat ping period. Default 10 s, as on the venue. */
  wsPingIntervalMs?: number;
}

export interface KalshiFake {
  /** REST base including `/trade-api/v2`. */
  apiUrl: string;
  /** WebSocket URL (`.../trade-api/ws/v2`). */
  wsUrl: string;
  script: KalshiScript;
  close(): Promise<void>;
}

export async function startKalshiFake(options: KalshiFakeOptions = {}): Promise<KalshiFake> {
  const state = new KalshiState(options.world ?? DEFAULT_WORLD, options.seed ?? 1);
  const ctx: Ctx = {
    state,
    faults: newFaults(),
    base: API_BASE,
    authToleranceMs: options.authToleranceMs ?? 30_000,
    wsRequireAuth: options.wsRequireAuth ?? false,
    wsPingIntervalMs: options.wsPingIntervalMs ?? 10_000,
  };
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
  return {
    apiUrl: `http://${host}:${port}${API_BASE}`,
    wsUrl: `ws://${host}:${port}${WS_PATH}`,
    script,
    async close() {
      if (timer) clearInterval(timer);
      await ws.close();
      await app.close();
    },
  };
}
