/**
 * `GET /v1/prices/stream` as a WebSocket: upgrade handling on the app's HTTP server, key checks
 * (on the upgrade's Authorization header, or later from the first message for browsers), plan
 * limits, and the hub wired to the bus. A plain GET (no upgrade) answers 426 with the envelope.
 */
import { type IncomingMessage, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import { WebSocketServer } from "ws";
import { limitsFor } from "../accounts/limits";
import type { ApiKeysService } from "../apikeys/service";
import type { Config } from "../config";
import { bearerToken, rateLimitMessage } from "../http/auth";
import { ERROR_CATALOG, type ErrorCode } from "../http/errors";
import type { Bus } from "../infra/bus/bus";
import type { Clock } from "../infra/clock";
import { newId } from "../infra/ids";
import type { RateLimiter } from "../infra/limiter/limiter";
import type { ConnectionSlots } from "../infra/slots/slots";
import { type PricesService, QUOTE_CHANNEL, type QuoteUpdate } from "../prices/service";
import { type AuthOutcome, type HubOptions, StreamHub } from "./hub";

export const STREAM_PATH = "/v1/prices/stream";

export interface StreamDeps {
  config: Config;
  clock: Clock;
  bus: Bus;
  limiter: RateLimiter;
  slots: ConnectionSlots;
  apiKeys: ApiKeysService;
  prices: PricesService;
  hubOptions?: Partial<HubOptions>;
}

export interface StreamServer {
  hub: StreamHub;
  close(): Promise<void>;
}

/** Refuses an upgrade with a plain HTTP answer carrying the usual error envelope. */
function refuse(socket: Duplex, code: ErrorCode, message: string, headers: Record<string, string> = {}) {
  const status = ERROR_CATALOG[code].status;
  const reason = STATUS_CODES[status] ?? "Error";
  const body = JSON.stringify({ success: false, error: { code, message } });
  const lines = [
    `HTTP/1.1 ${status} ${reason}`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${newId("req")}`,
    "Connection: close",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`);
}

function destroyOnError(this: Duplex): void {
  this.destroy();
}

export async function attachStream(app: FastifyInstance, deps: StreamDeps): Promise<StreamServer> {
  const { clock, prices } = deps;

  /** Key -> principal, with the route rules of REST: `read` needed, one request off the budget. */
  async function authenticate(secret: string): Promise<AuthOutcome & { retryAfter?: number }> {
    const found = deps.apiKeys.authenticateCached(secret) ?? (await deps.apiKeys.authenticate(secret));
    if (!found) return { ok: false, code: "UNAUTHORIZED", message: "Invalid or revoked API key" };
    const limits = limitsFor(found.account, found.key.type, deps.config);
    const decision = await deps.limiter.consume(
      `key:${found.key.id}`,
      limits.requests_per_minute,
      clock.now(),
    );
    if (!decision.allowed) {
      return {
        ok: false,
        code: "RATE_LIMITED",
        message: rateLimitMessage(decision),
        retryAfter: decision.resetSeconds,
      };
    }
    if (!found.permissions.has("read")) {
      return { ok: false, code: "FORBIDDEN", message: "This key lacks the 'read' permission" };
    }
    return {
      ok: true,
      principal: {
        keyId: found.key.id,
        accountId: found.account.id,
        connectionsAllowed: limits.websocket_connections,
        marketsPerSubscription: limits.markets_per_subscription,
      },
    };
  }

  const hub = new StreamHub(
    {
      clock,
      slots: deps.slots,
      authenticate,
      async resolveMarkets(ids) {
        const { markets, missing } = await prices.resolve(ids);
        return { found: markets.map((m) => m.id), missing };
      },
      snapshot(marketId) {
        const market = prices.market(marketId);
        return market ? prices.update(market) : undefined;
      },
      watch: (ids) => prices.watch(ids.flatMap((id) => prices.market(id) ?? [])),
      log: app.log,
    },
    deps.hubOptions,
  );
  const unsubscribe = await deps.bus.subscribe(QUOTE_CHANNEL, (message) =>
    hub.publish(message as QuoteUpdate),
  );
  const revoked = deps.apiKeys.onRevoked((keyId) => hub.closeKey(keyId, "API key revoked"));

  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    clientTracking: false,
    maxPayload: 64 * 1024,
  });

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // A plain function, not a closure: a closure here would share this scope's context and keep the
    // upgrade request (headers and all) alive for as long as the connection lives.
    socket.on("error", destroyOnError);
    const path = (request.url ?? "").split("?")[0];
    if (path !== STREAM_PATH) {
      refuse(socket, "NOT_FOUND", `No WebSocket endpoint at ${path}; the price stream is ${STREAM_PATH}`);
      return;
    }
    const token = bearerToken(request.headers.authorization);
    const upgrade = (principal: Parameters<StreamHub["attach"]>[2], slot: string | null) => {
      wss.handleUpgrade(request, socket, head, (ws) => hub.attach(ws, socket, principal, slot));
    };
    if (!token) {
      upgrade(null, null);
      return;
    }
    authenticate(token)
      .then(async (outcome) => {
        if (!outcome.ok) {
          refuse(
            socket,
            outcome.code,
            outcome.message,
            outcome.retryAfter ? { "Retry-After": String(outcome.retryAfter) } : {},
          );
          return;
        }
        const { principal } = outcome;
        const slot = await deps.slots.acquire(principal.keyId, principal.connectionsAllowed, clock.now());
        if (!slot) {
          refuse(
            socket,
            "CONNECTION_LIMIT",
            `This key already holds its plan's ${principal.connectionsAllowed} stream connections`,
          );
          return;
        }
        if (socket.destroyed) {
          await deps.slots.release(principal.keyId, slot);
          return;
        }
        upgrade(principal, slot);
      })
      .catch((error) => {
        app.log.error({ err: error }, "stream upgrade failed");
        refuse(socket, "INTERNAL_ERROR", "Something went wrong on our side");
      });
  };
  app.server.on("upgrade", onUpgrade);

  // Revocations made by another process on the same store (the CLI) are not announced on the bus:
  // check the keys behind open connections once a minute.
  const revocationCheck = setInterval(() => {
    const ids = hub.keyIds();
    if (ids.length === 0) return;
    deps.apiKeys
      .revokedAmong(ids)
      .then((revokedIds) => {
        for (const id of revokedIds) hub.closeKey(id, "API key revoked");
      })
      .catch((error) => app.log.warn({ err: error }, "could not check stream keys for revocation"));
  }, 60_000);
  revocationCheck.unref();

  return {
    hub,
    async close() {
      clearInterval(revocationCheck);
      app.server.off("upgrade", onUpgrade);
      revoked();
      await unsubscribe();
      await hub.close();
      wss.close();
    },
  };
}
