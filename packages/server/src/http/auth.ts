/**
 * Authentication, permission and rate limiting, in that order, before a request body is even
 * parsed: an anonymous caller gets 401 and a caller without the permission gets 403 before any
 * resource is looked up (so a 403/404 difference cannot reveal what exists).
 *
 * Each route says what it needs in `config`:
 *   auth: "none"        public (health, docs, sign-up, sign-in)
 *   auth: "key"         an API key (`cb_live_…`/`cb_test_…`) holding `permission` (default: read)
 *   auth: "session"     a sign-in session token (`cbs_…`), or an API key holding `permission`
 * `permission: "operator"` is not a key permission but a role: a live admin key of an account the
 * CLI made an operator (`crossbook accounts update --operator`). It guards global data (matches),
 * which no ordinary account may rewrite for every other tenant.
 * Every authenticated response carries the IETF RateLimit-* headers and their X-RateLimit-*
 * twins; `*-Reset` is in seconds.
 *
 * Failed authentication (an unknown or revoked key, an invalid session) is counted per client
 * address (auth-failures.ts): past AUTH_FAILURES_PER_MINUTE the address gets 429 for the rest of
 * the minute, answered before any store look-up, while keys it already proved stay served.
 */
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { type KeyLimits, limitsFor } from "../accounts/limits";
import type { Account, AccountsService, Session } from "../accounts/service";
import { SESSION_TOKEN_PREFIX } from "../accounts/service";
import type { KeyEnvironment, Permission } from "../apikeys/permissions";
import type { ApiKey, ApiKeysService, AuthenticatedKey } from "../apikeys/service";
import type { Config } from "../config";
import type { Clock } from "../infra/clock";
import type { LimitDecision, RateLimiter } from "../infra/limiter/limiter";
import type { AuthFailures } from "./auth-failures";
import { AppError } from "./errors";
import { routeConfig } from "./route-context";

export type AuthMode = "none" | "key" | "session";

export type AuthContext =
  | {
      kind: "key";
      account: Account;
      key: ApiKey;
      permissions: Set<Permission>;
      limits: KeyLimits;
      /** Whose request budget a request spends (`key:<id>`), built once per context. */
      rateSubject: string;
    }
  | {
      kind: "session";
      account: Account;
      session: Session;
      permissions: Set<Permission>;
      limits: KeyLimits;
      rateSubject: string;
    };

declare module "fastify" {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** What the route needs; "any" accepts every authenticated caller. */
    permission?: Permission | "any" | "operator";
  }
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

/** What a session token may do: manage keys and read its own account, nothing on the market side. */
const SESSION_PERMISSIONS = new Set<Permission>(["manage_keys"]);

export interface AuthDeps {
  config: Config;
  clock: Clock;
  limiter: RateLimiter;
  apiKeys: ApiKeysService;
  accounts: AccountsService;
  /** Failed authentication per client address, shared with the price stream. */
  authFailures: AuthFailures;
}

/** The token of an `Authorization: Bearer <token>` header (HTTP requests and stream upgrades). */
export function bearerToken(header: string | undefined): string | undefined {
  if (typeof header !== "string") return undefined;
  // The usual form, "Bearer <token>", checked without a capture group (every request comes here).
  if (BEARER_TOKEN.test(header)) return header.slice(7);
  return BEARER.exec(header)?.[1];
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
/** After "Bearer ": one run of visible characters, nothing else. */
const BEARER_TOKEN = /^Bearer [!-~]+$/;

/** What a caller over its budget is told, on REST and on the stream alike. */
export function rateLimitMessage(decision: LimitDecision): string {
  return `Rate limit of ${decision.limit} requests per minute exceeded; retry in ${decision.resetSeconds} s`;
}

/**
 * Who owns what an API key creates or reads (orders, positions, alerts, webhooks, venue links): its
 * account, in the key's environment. A session token is refused with 401 and `refusal`.
 */
export function keyOwner(
  request: FastifyRequest,
  refusal: string,
): { accountId: string; environment: KeyEnvironment } {
  const auth = requireAuth(request);
  if (auth.kind !== "key") throw new AppError("UNAUTHORIZED", refusal);
  return { accountId: auth.account.id, environment: auth.key.environment };
}

/**
 * Why a caller may not act as an operator, or undefined when it may: a live key holding `admin`, of
 * an account marked operator. Sandbox keys never curate: they are handed to test bots.
 */
export function operatorRefusal(auth: AuthContext): AppError | undefined {
  if (auth.kind === "key" && auth.account.operator && auth.permissions.has("admin")) {
    if (auth.key.environment === "live") return undefined;
  }
  return new AppError(
    "FORBIDDEN",
    "Curating matches is for operators: a live admin key of an account made operator with `crossbook accounts update --operator`",
    { required_permission: "operator" },
  );
}

/** The authenticated context of a request; throws 401 if there is none (route misconfigured). */
export function requireAuth(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new AppError("UNAUTHORIZED");
  return request.auth;
}

export const authPlugin = fp<AuthDeps>(
  async (app: FastifyInstance, deps: AuthDeps) => {
    app.decorateRequest("auth", null);

    /** Counts a failed authentication against the client's address; answers 401, or 429 past it. */
    function authFailed(request: FastifyRequest, error: Error, done: (error?: Error) => void): void {
      deps.authFailures.record(request.ip).then(
        (refusal) => done(refusal ?? error),
        () => done(error),
      );
    }

    /** The context of a live session token, or null when it is unknown, expired or revoked. */
    async function resolveSession(token: string): Promise<AuthContext | null> {
      const session = await deps.accounts.resolveSession(token);
      const account = session ? await deps.accounts.get(session.account_id) : undefined;
      if (!session || !account) return null;
      return {
        kind: "session",
        account,
        session,
        permissions: SESSION_PERMISSIONS,
        limits: limitsFor(account, null, deps.config),
        rateSubject: `session:${session.id}`,
      };
    }

    // One context per verified key (the key cache hands out the same object for its TTL), so the
    // limits are not recomputed per request.
    const contexts = new WeakMap<AuthenticatedKey, AuthContext>();
    function keyContext(found: AuthenticatedKey): AuthContext {
      let context = contexts.get(found);
      if (!context) {
        context = {
          kind: "key",
          account: found.account,
          key: found.key,
          permissions: found.permissions,
          limits: limitsFor(found.account, found.key.type, deps.config),
          rateSubject: `key:${found.key.id}`,
        };
        contexts.set(found, context);
      }
      return context;
    }

    /** Rate limit, then permission; returns the error to fail with, if any. */
    function admit(
      config: FastifyContextConfig,
      reply: FastifyReply,
      auth: AuthContext,
      decision: LimitDecision,
    ): AppError | undefined {
      const limit = String(decision.limit);
      const remaining = String(decision.remaining);
      const reset = String(decision.resetSeconds);
      reply
        .header("ratelimit-limit", limit)
        .header("ratelimit-remaining", remaining)
        .header("ratelimit-reset", reset)
        .header("x-ratelimit-limit", limit)
        .header("x-ratelimit-remaining", remaining)
        .header("x-ratelimit-reset", reset);
      if (!decision.allowed) {
        return new AppError("RATE_LIMITED", rateLimitMessage(decision), {
          limit: decision.limit,
          remaining: decision.remaining,
          reset_seconds: decision.resetSeconds,
        }).withHeaders({ "Retry-After": reset });
      }
      const permission = config.permission ?? (config.auth === "session" ? "manage_keys" : "read");
      if (permission === "operator") return operatorRefusal(auth);
      if (permission !== "any" && !auth.permissions.has(permission)) {
        return new AppError("FORBIDDEN", `This key lacks the '${permission}' permission`, {
          required_permission: permission,
        });
      }
      return undefined;
    }

    function limit(
      request: FastifyRequest,
      config: FastifyContextConfig,
      reply: FastifyReply,
      auth: AuthContext,
      done: (error?: Error) => void,
    ) {
      request.auth = auth;
      const subject = auth.rateSubject;
      const budget = auth.limits.requests_per_minute;
      if (deps.limiter.consumeSync) {
        done(admit(config, reply, auth, deps.limiter.consumeSync(subject, budget, deps.clock.now())));
        return;
      }
      deps.limiter.consume(subject, budget, deps.clock.now()).then(
        (decision) => done(admit(config, reply, auth, decision)),
        (error) => done(error),
      );
    }

    // Callback style with a synchronous fast path (cached key, in-memory limiter): no promise per
    // request unless the store or Redis must be asked.
    app.addHook("onRequest", (request, reply, done) => {
      const config = request.route ?? routeConfig(request);
      // Unknown routes (404/405 handler) have no auth config: answer them without asking for a key.
      if (!config.url) return done();
      const mode: AuthMode = config.auth ?? "key";
      if (mode === "none") return done();

      const token = bearerToken(request.headers.authorization);
      if (!token) return done(new AppError("UNAUTHORIZED", "Missing Authorization: Bearer <API key> header"));

      const cached = token.startsWith(SESSION_TOKEN_PREFIX) ? null : deps.apiKeys.authenticateCached(token);
      if (cached) return limit(request, config, reply, keyContext(cached), done);
      // Past here the store is asked: an address that keeps failing is refused before that.
      const refusal = deps.authFailures.blocked(request.ip);
      if (refusal) return done(refusal);
      if (token.startsWith(SESSION_TOKEN_PREFIX)) {
        if (mode !== "session") {
          return done(
            new AppError(
              "UNAUTHORIZED",
              "A sign-in session token only manages API keys; use an API key here",
            ),
          );
        }
        resolveSession(token).then((auth) => {
          if (auth) return limit(request, config, reply, auth, done);
          authFailed(
            request,
            new AppError("UNAUTHORIZED", "Session expired or invalid; sign in again"),
            done,
          );
        }, done);
        return;
      }
      deps.apiKeys.authenticate(token).then((found) => {
        if (!found)
          return authFailed(request, new AppError("UNAUTHORIZED", "Invalid or revoked API key"), done);
        limit(request, config, reply, keyContext(found), done);
      }, done);
    });
  },
  { name: "crossbook-auth" },
);
