/**
 * The auth plugin: authentication, permission and rate limiting, in that order, before a request body is even
 * parsed: an anonymous caller gets 401 and a caller without the permission gets 403 before any
 * resource is looked up (so a 403/404 difference cannot reveal what exists).
 *
 * What a route asks for (`config.auth`, `config.permission`) is described in http/auth.ts.
 * Every authenticated response carries the IETF RateLimit-* headers and their X-RateLimit-*
 * twins; `*-Reset` is in seconds.
 *
 * Failed authentication (an unknown or revoked key, an invalid session) is counted per client
 * address (auth-failures.ts): past AUTH_FAILURES_PER_MINUTE the address gets 429 for the rest of
 * the minute, answered before any store look-up, while keys it already proved stay served.
 */
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { limitsFor } from "../access/limits";
import type { Permission } from "../access/permissions";
import type { AccountsService } from "../accounts/service";
import { SESSION_TOKEN_PREFIX } from "../accounts/service";
import type { Config } from "../config";
import {
  type AuthContext,
  type AuthMode,
  bearerToken,
  operatorRefusal,
  rateLimitMessage,
} from "../http/auth";
import type { AuthFailures } from "../http/auth-failures";
import { AppError } from "../http/errors";
import { routeConfig } from "../http/route-context";
import type { Clock } from "../infra/clock";
import type { LimitDecision, RateLimiter } from "../infra/limiter/limiter";
import type { ApiKeysService, AuthenticatedKey } from "./service";
import type { KeyUsage } from "./usage";

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
  /** Requests per key and minute, admitted and refused (the console's usage page). */
  usage: KeyUsage;
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
      const now = deps.clock.now();
      // Keys' requests are counted per minute for the console's usage page (an increment, no I/O).
      const keyId = auth.kind === "key" ? auth.key.id : undefined;
      if (deps.limiter.consumeSync) {
        const decision = deps.limiter.consumeSync(subject, budget, now);
        if (keyId !== undefined) deps.usage.record(keyId, decision.allowed, now);
        done(admit(config, reply, auth, decision));
        return;
      }
      deps.limiter.consume(subject, budget, now).then(
        (decision) => {
          if (keyId !== undefined) deps.usage.record(keyId, decision.allowed, now);
          done(admit(config, reply, auth, decision));
        },
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
