/** Sign-up, sign-in, sign-out and "who am I". */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { effectivePermissions } from "../apikeys/permissions";
import type { Config } from "../config";
import { requireAuth } from "../http/auth";
import { Envelope, ok } from "../http/envelope";
import { AppError } from "../http/errors";
import type { Clock } from "../infra/clock";
import type { RateLimiter } from "../infra/limiter/limiter";
import { AccountSchema, LoginBody, SessionResult, SignupBody, WhoAmI } from "./schemas";
import type { Account, AccountsService } from "./service";

export interface AccountRoutesDeps {
  accounts: AccountsService;
  limiter: RateLimiter;
  clock: Clock;
  config: Config;
}

const publicAccount = (a: Account) => ({
  id: a.id,
  email: a.email,
  tier: a.tier,
  plan: a.plan,
  created_at: a.created_at,
});

export const accountRoutes: FastifyPluginAsyncTypebox<AccountRoutesDeps> = async (app, deps) => {
  /** Slows password guessing: a per-address budget on sign-in and sign-up attempts. */
  async function throttle(ip: string) {
    const decision = await deps.limiter.consume(
      `login:${ip}`,
      deps.config.loginAttemptsPerMinute,
      deps.clock.now(),
    );
    if (!decision.allowed) {
      throw new AppError("RATE_LIMITED", "Too many sign-in attempts; wait and retry", {
        limit: decision.limit,
        remaining: decision.remaining,
        reset_seconds: decision.resetSeconds,
      }).withHeaders({ "Retry-After": String(decision.resetSeconds) });
    }
  }

  app.post(
    "/v1/auth/signup",
    {
      config: { auth: "none" },
      schema: {
        tags: ["account"],
        summary: "Create an account (free tier, standard plan) and sign in",
        body: SignupBody,
        response: { 201: Envelope(SessionResult) },
      },
    },
    async (request, reply) => {
      await throttle(request.ip);
      const account = await deps.accounts.create({
        email: request.body.email,
        password: request.body.password,
      });
      const { token, session } = await deps.accounts.openSession(account.id);
      return reply
        .code(201)
        .send(ok({ account: publicAccount(account), session: { token, expires_at: session.expires_at } }));
    },
  );

  app.post(
    "/v1/auth/login",
    {
      config: { auth: "none" },
      schema: {
        tags: ["account"],
        summary: "Sign in; returns a session token that authorizes API-key management",
        body: LoginBody,
        response: { 200: Envelope(SessionResult) },
      },
    },
    async (request) => {
      await throttle(request.ip);
      const { account, token, session } = await deps.accounts.login(
        request.body.email,
        request.body.password,
      );
      return ok({ account: publicAccount(account), session: { token, expires_at: session.expires_at } });
    },
  );

  app.post(
    "/v1/auth/logout",
    {
      config: { auth: "session", permission: "manage_keys" },
      schema: {
        tags: ["account"],
        summary: "End the current sign-in session",
        response: { 200: Envelope(Type.Object({ logged_out: Type.Boolean() })) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      if (auth.kind !== "session")
        throw new AppError("FORBIDDEN", "Sign out with a session token, not an API key");
      await deps.accounts.logout(auth.session.id);
      return ok({ logged_out: true });
    },
  );

  app.get(
    "/v1/account",
    {
      config: { auth: "key", permission: "any" },
      schema: {
        tags: ["account"],
        summary: "The calling key, its account and the limits that apply to it",
        response: { 200: Envelope(WhoAmI) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      if (auth.kind !== "key") throw new AppError("UNAUTHORIZED");
      return ok({
        account: publicAccount(auth.account),
        key: {
          id: auth.key.id,
          name: auth.key.name,
          type: auth.key.type,
          permissions: [...effectivePermissions(auth.key.permissions)],
          environment: auth.key.environment,
        },
        limits: auth.limits,
      });
    },
  );
};

export { AccountSchema };
