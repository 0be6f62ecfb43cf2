/**
 * `GET /v1/prices/stream` as a WebSocket: upgrade handling on the app's HTTP server, key checks
 * (on the upgrade's Authorization header, or later from the first message for browsers), plan
 * limits, and the hub wired to the bus. A plain GET (no upgrade) answers 426 with the envelope.
 *
 * Abuse limits: a connection opened without a key costs nothing until it authenticates, so those
 * waiting for their `auth` message are capped per client address and in total (past either cap the
 * upgrade is refused with 429 `CONNECTION_LIMIT`); every subscribe and unsubscribe message spends a
 * request of the key's budget, as a REST request does; and market ids found unknown are remembered
 * for a while (`unknown-markets.ts`), so repeating bogus ids does not query the store each time.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import { WebSocketServer } from "ws";
import { limitsFor } from "../access/limits";
import type { ApiKeysService } from "../apikeys/service";
import type { Config } from "../config";
import { bearerToken, rateLimitMessage } from "../http/auth";
import type { AuthFailures } from "../http/auth-failures";
import { addressBucket, clientAddress } from "../http/client-address";
import { AppError, type ErrorCode } from "../http/errors";
import { rawAnswer } from "../http/plumbing";
import type { Bus } from "../infra/bus/bus";
import type { Clock } from "../infra/clock";
import type { LimitDecision, RateLimiter } from "../infra/limiter/limiter";
import type { ConnectionSlots } from "../infra/slots/slots";
import { type PricesService, QUOTE_CHANNEL, type QuoteUpdate } from "../prices/service";
import type { AccountFeedDeps } from "./account-feed";
import { DEFAULT_HUB_OPTIONS, type HubOptions, StreamHub } from "./hub";
import type { AuthOutcome, SpendOutcome, StreamKind, StreamPrincipal } from "./session";
import { UnknownMarkets } from "./unknown-markets";

export const STREAM_PATH = "/v1/prices/stream";
/** The account stream: the key's account events only (account-feed.ts), same handshake and limits. */
export const ACCOUNT_STREAM_PATH = "/v1/account/stream";

const STREAM_KINDS = new Map<string, StreamKind>([
  [STREAM_PATH, "prices"],
  [ACCOUNT_STREAM_PATH, "account"],
]);

export interface StreamDeps {
  config: Config;
  clock: Clock;
  bus: Bus;
  limiter: RateLimiter;
  slots: ConnectionSlots;
  apiKeys: ApiKeysService;
  /** Failed authentication per client address, shared with REST (http/auth-failures.ts). */
  authFailures: AuthFailures;
  prices: PricesService;
  /** Account events for `/v1/account/stream` and the price stream's private actions. */
  accountFeed?: AccountFeedDeps;
  hubOptions?: Partial<HubOptions>;
}

export interface StreamServer {
  hub: StreamHub;
  close(): Promise<void>;
}

/** Refuses an upgrade with a plain HTTP answer carrying the usual error envelope. */
function refuse(
  socket: Duplex,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
  details?: Record<string, unknown>,
) {
  socket.end(rawAnswer(new AppError(code, message, details).withHeaders(headers)));
}

function destroyOnError(this: Duplex): void {
  this.destroy();
}

/** The form of a WebSocket key (RFC 6455: 16 random bytes in base64), as `ws` checks it. */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;

/**
 * Why an upgrade request is not a WebSocket handshake `ws` would accept, checked before any key
 * look-up or connection slot is spent on it, so the refusal is our envelope and never leaks a slot.
 */
function refuseBadHandshake(request: IncomingMessage, socket: Duplex): boolean {
  const field = (name: string, problem: string, headers: Record<string, string> = {}) => {
    refuse(socket, "VALIDATION_ERROR", `Not a WebSocket handshake: ${name} ${problem}`, headers, {
      fields: { [`header.${name}`]: problem },
    });
    return true;
  };
  if (request.method !== "GET") {
    refuse(socket, "METHOD_NOT_ALLOWED", `${request.method} is not allowed on a stream; allowed: GET`, {
      Allow: "GET",
    });
    return true;
  }
  if (request.headers.upgrade?.toLowerCase() !== "websocket") return field("upgrade", "must be websocket");
  const key = request.headers["sec-websocket-key"];
  if (typeof key !== "string" || !WEBSOCKET_KEY.test(key)) {
    return field("sec-websocket-key", "must be 16 bytes in base64");
  }
  const version = request.headers["sec-websocket-version"];
  if (version !== "13" && version !== "8") {
    return field("sec-websocket-version", "must be 13", { "Sec-WebSocket-Version": "13, 8" });
  }
  return false;
}

/**
 * Connections opened without a key and waiting for their `auth` message, counted per client
 * address and in total. `take` hands out the release of one place (idempotent), which is called
 * when the connection authenticates or its socket closes, whichever comes first.
 */
class WaitingForAuth {
  readonly #byAddress = new Map<string, number>();
  #total = 0;

  constructor(
    readonly perAddress: number,
    readonly max: number,
  ) {}

  take(address: string): (() => void) | "address" | "total" {
    if (this.#total >= this.max) return "total";
    const count = this.#byAddress.get(address) ?? 0;
    if (count >= this.perAddress) return "address";
    this.#byAddress.set(address, count + 1);
    this.#total++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#total--;
      const left = (this.#byAddress.get(address) ?? 1) - 1;
      if (left > 0) this.#byAddress.set(address, left);
      else this.#byAddress.delete(address);
    };
  }
}

const ALLOWED: SpendOutcome = { allowed: true };

/** A 429 of the failed-authentication limit, as the hub and the upgrade answer it. */
function failedOutcome(refusal: AppError): AuthOutcome & { retryAfter?: number } {
  const retryAfter = Number(refusal.headers["Retry-After"]);
  return { ok: false, code: "RATE_LIMITED", message: refusal.message, retryAfter };
}

function spendOutcome(decision: LimitDecision): SpendOutcome {
  return decision.allowed ? ALLOWED : { allowed: false, message: rateLimitMessage(decision) };
}

export async function attachStream(app: FastifyInstance, deps: StreamDeps): Promise<StreamServer> {
  const { clock, prices } = deps;

  /**
   * Key -> principal, with the route rules of REST: `read` needed, one request off the budget, and
   * an unknown key counted against the client's address (blocked addresses are not looked up).
   */
  async function authenticate(
    secret: string,
    address: string,
  ): Promise<AuthOutcome & { retryAfter?: number }> {
    let found = deps.apiKeys.authenticateCached(secret);
    if (!found) {
      const blocked = deps.authFailures.blocked(address);
      if (blocked) return failedOutcome(blocked);
      found = (await deps.apiKeys.authenticate(secret)) ?? null;
    }
    if (!found) {
      const refusal = await deps.authFailures.record(address);
      if (refusal) return failedOutcome(refusal);
      return { ok: false, code: "UNAUTHORIZED", message: "Invalid or revoked API key" };
    }
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
        environment: found.key.environment,
        connectionsAllowed: limits.websocket_connections,
        marketsPerSubscription: limits.markets_per_subscription,
        requestsPerMinute: limits.requests_per_minute,
      },
    };
  }

  /** A subscribe/unsubscribe message: one request off the key's budget, the subject REST spends. */
  function spend(principal: StreamPrincipal): SpendOutcome | Promise<SpendOutcome> {
    const subject = `key:${principal.keyId}`;
    const budget = principal.requestsPerMinute;
    if (deps.limiter.consumeSync) return spendOutcome(deps.limiter.consumeSync(subject, budget, clock.now()));
    return deps.limiter.consume(subject, budget, clock.now()).then(spendOutcome);
  }

  const unknownMarkets = new UnknownMarkets(() => prices.version);
  const waiting = new WaitingForAuth(
    deps.config.streamUnauthenticatedPerAddress,
    deps.config.streamUnauthenticatedMax,
  );
  const authTimeoutSeconds = String(
    Math.ceil((deps.hubOptions?.authTimeoutMs ?? DEFAULT_HUB_OPTIONS.authTimeoutMs) / 1000),
  );

  const hub = new StreamHub(
    {
      clock,
      slots: deps.slots,
      authenticate,
      spend,
      async resolveMarkets(ids) {
        const now = clock.now();
        const known: string[] = [];
        const lookup: string[] = [];
        for (const id of ids) (unknownMarkets.has(id, now) ? known : lookup).push(id);
        if (lookup.length === 0) return { found: [], missing: known };
        const version = prices.version;
        const { markets, missing } = await prices.resolve(lookup);
        unknownMarkets.add(missing, clock.now(), version);
        return {
          found: markets.map((m) => m.id),
          missing: known.length > 0 ? [...known, ...missing] : missing,
        };
      },
      snapshot(marketId) {
        const market = prices.market(marketId);
        return market ? prices.update(market) : undefined;
      },
      watch: (ids) => prices.watch(ids.flatMap((id) => prices.market(id) ?? [])),
      ...(deps.accountFeed ? { accountFeed: deps.accountFeed } : {}),
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
  // A handshake `ws` still refuses after refuseBadHandshake (a malformed protocol or extension
  // header) is answered in the envelope too, and gives back the connection slot it was handed.
  const slotsInUpgrade = new WeakMap<Duplex, { keyId: string; slot: string }>();
  wss.on("wsClientError", (error: Error, socket: Duplex) => {
    const held = slotsInUpgrade.get(socket);
    if (held) void deps.slots.release(held.keyId, held.slot).catch(() => {});
    refuse(socket, "VALIDATION_ERROR", `Not a WebSocket handshake: ${error.message}`);
  });

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // A plain function, not a closure: a closure here would share this scope's context and keep the
    // upgrade request (headers and all) alive for as long as the connection lives.
    socket.on("error", destroyOnError);
    const path = (request.url ?? "").split("?")[0] ?? "";
    const kind = STREAM_KINDS.get(path);
    if (!kind) {
      refuse(
        socket,
        "NOT_FOUND",
        `No WebSocket endpoint at ${path}; the price stream is ${STREAM_PATH}, the account stream ${ACCOUNT_STREAM_PATH}`,
      );
      return;
    }
    if (refuseBadHandshake(request, socket)) return;
    const token = bearerToken(request.headers.authorization);
    const address = clientAddress(request, deps.config.trustProxy);
    const upgrade = (principal: StreamPrincipal, slot: string) => {
      slotsInUpgrade.set(socket, { keyId: principal.keyId, slot });
      wss.handleUpgrade(request, socket, head, (ws) => {
        slotsInUpgrade.delete(socket);
        hub.attach(ws, socket, principal, slot, undefined, "", kind);
      });
    };
    if (!token) {
      // Counted per address (IPv6 per /64), the address as Fastify's request.ip would give it.
      const release = waiting.take(addressBucket(address));
      if (typeof release === "string") {
        refuse(
          socket,
          "CONNECTION_LIMIT",
          release === "address"
            ? `This address already has ${waiting.perAddress} stream connections waiting for their auth message; authenticate those first, or send the key in the Authorization header`
            : "Too many stream connections are waiting for their auth message; retry shortly, or send the key in the Authorization header",
          { "Retry-After": authTimeoutSeconds },
        );
        return;
      }
      // The release itself is the listener (no closure over this scope): the place is given back
      // when the socket closes, whether the upgrade completed or not.
      socket.once("close", release);
      wss.handleUpgrade(request, socket, head, (ws) =>
        hub.attach(ws, socket, null, null, release, address, kind),
      );
      return;
    }
    authenticate(token, address)
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

  // Revocations made by another process (the CLI) reach onRevoked through the bus (Redis) or the
  // api-keys store watch (in-process bus); a backstop for anything missed: check the keys behind
  // open connections once a minute.
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
