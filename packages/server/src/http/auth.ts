/**
 * What an authenticated request carries (`request.auth`) and the helpers routes use to read it.
 * The plugin that fills it in (keys, sessions, permissions, rate limits) lives next to the keys it
 * checks, in apikeys/auth-plugin.ts; this file stays free of services so every domain may use it.
 *
 * Each route says what it needs in `config`:
 *   auth: "none"        public (health, docs, sign-up, sign-in)
 *   auth: "key"         an API key (`cb_live_…`/`cb_test_…`) holding `permission` (default: read)
 *   auth: "session"     a sign-in session token (`cbs_…`), or an API key holding `permission`
 * `permission: "operator"` is not a key permission but a role: a live admin key of an account the
 * CLI made an operator (`crossbook accounts update --operator`). It guards global data (matches),
 * which no ordinary account may rewrite for every other tenant.
 */
import type { FastifyRequest } from "fastify";
import type { KeyLimits } from "../access/limits";
import type { Owner } from "../access/owner";
import type { Permission } from "../access/permissions";
import type { Account, Session } from "../accounts/service";
import type { ApiKey } from "../apikeys/service";
import type { LimitDecision } from "../infra/limiter/limiter";
import { AppError } from "./errors";

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
export function keyOwner(request: FastifyRequest, refusal: string): Owner {
  const auth = requireAuth(request);
  if (auth.kind !== "key") throw new AppError("UNAUTHORIZED", refusal);
  return { accountId: auth.account.id, environment: auth.key.environment };
}

/** Orders, positions and balances belong to the account and the environment of the key. */
export const tradingOwner = (request: FastifyRequest): Owner => keyOwner(request, "Trading uses an API key");

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
