/** Sign-up, sign-in, sign-out, the account's sign-ins, and "who am I". */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { effectivePermissions } from "../access/permissions";
import { requireAuth } from "../http/auth";
import { Envelope, ok } from "../http/envelope";
import { AppError } from "../http/errors";
import type { LoginGuard } from "./login-guard";
import {
  AccountSchema,
  LoginBody,
  RevokeSessionsQuery,
  SessionResult,
  SessionSummarySchema,
  SignupBody,
  WhoAmI,
} from "./schemas";
import type { Account, AccountsService, SignInClient } from "./service";

export interface AccountRoutesDeps {
  accounts: AccountsService;
  /** Slows password guessing before any password is hashed; shared with the console's sign-in. */
  guard: LoginGuard;
}

const publicAccount = (a: Account) => ({
  id: a.id,
  email: a.email,
  tier: a.tier,
  plan: a.plan,
  operator: a.operator,
  created_at: a.created_at,
});

const client = (request: FastifyRequest): SignInClient => ({
  ip: request.ip,
  userAgent: request.headers["user-agent"],
});

/** Sign-ins are managed with a session token only: an API key must not list or end them. */
function sessionOf(request: FastifyRequest) {
  const auth = requireAuth(request);
  if (auth.kind !== "session") {
    throw new AppError("FORBIDDEN", "Sign-ins are managed with a session token (cbs_…), not an API key");
  }
  return auth;
}

export const accountRoutes: FastifyPluginAsyncTypebox<AccountRoutesDeps> = async (app, deps) => {
  const guard = deps.guard;

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
      await guard.admit(request.ip);
      const account = await deps.accounts.create({
        email: request.body.email,
        password: request.body.password,
      });
      const { token, session } = await deps.accounts.openSession(account.id, client(request));
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
      const { email, password } = request.body;
      const { account, token, session } = await guard.signIn(request.ip, email, () =>
        deps.accounts.login(email, password, client(request)),
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
    "/v1/auth/sessions",
    {
      config: { auth: "session", permission: "manage_keys" },
      schema: {
        tags: ["account"],
        summary: "The account's live sign-ins (session token only), newest first",
        response: { 200: Envelope(Type.Array(SessionSummarySchema)) },
      },
    },
    async (request) => {
      const auth = sessionOf(request);
      const sessions = await deps.accounts.listSessions(auth.account.id);
      return ok(sessions.map((s) => ({ ...s, current: s.id === auth.session.id })));
    },
  );

  app.delete(
    "/v1/auth/sessions",
    {
      config: { auth: "session", permission: "manage_keys" },
      schema: {
        tags: ["account"],
        summary: "Sign out everywhere: end every sign-in of the account (this one too, unless keep_current)",
        querystring: RevokeSessionsQuery,
        response: { 200: Envelope(Type.Object({ revoked_count: Type.Integer() })) },
      },
    },
    async (request) => {
      const auth = sessionOf(request);
      const keep = request.query.keep_current === true ? auth.session.id : undefined;
      return ok({ revoked_count: await deps.accounts.revokeAllSessions(auth.account.id, keep) });
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
