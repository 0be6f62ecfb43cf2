/**
 * The account console at /console: the spec's account settings as server-rendered pages (see the
 * README's console section for why: no framework, no build step, every page works without script).
 *
 * Everything the console does goes through the same services as the API, as the signed-in account
 * in the environment the user chose (sandbox or live). It signs in with the API's accounts and
 * sessions: the session token lives in an HttpOnly, SameSite=Strict cookie (Secure over HTTPS), and
 * every form carries a CSRF token (csrf.ts). Console routes are outside the API: no API key, no
 * envelope, not in the OpenAPI document.
 */

import { parse as parseQuery } from "fast-querystring";
import type { FastifyError, FastifyInstance, FastifyPluginAsync } from "fastify";
import type { LoginGuard } from "../accounts/login-guard";
import type { AccountsService } from "../accounts/service";
import type { ApiKeysService } from "../apikeys/service";
import type { KeyUsage } from "../apikeys/usage";
import type { CredentialsService } from "../credentials/service";
import { AppError } from "../http/errors";
import type { Clock } from "../infra/clock";
import type { MatchingService } from "../matching/service";
import type { OrdersService } from "../orders/service";
import type { PortfolioService } from "../portfolio/service";
import type { SandboxAccounts } from "../sandbox/service";
import type { WebhooksService } from "../webhooks/service";
import { ASSETS_PATH, registerAssets } from "./assets";
import { registerAuthPages } from "./auth-pages";
import { formOf, notFound, render } from "./context";
import { ENVIRONMENT_COOKIE, FORM_COOKIE, readCookies, SESSION_COOKIE } from "./cookies";
import { CSRF_FIELD, crossSiteReason, sameToken, sessionCsrfToken } from "./csrf";
import { html } from "./html";
import type { ConsoleEnvironment } from "./layout";

export interface ConsoleDeps {
  clock: Clock;
  /** The API's login guard: sign-ins here count against the same limits. */
  guard: LoginGuard;
  accounts: AccountsService;
  apiKeys: ApiKeysService;
  /** Requests per key and minute (the usage page). */
  usage: KeyUsage;
  webhooks: WebhooksService;
  credentials: CredentialsService;
  sandbox: SandboxAccounts;
  orders: OrdersService;
  portfolio: PortfolioService;
  matching: MatchingService;
}

/**
 * A page module: registers its routes on the console's scope, which is mounted at /console (a route
 * `/keys` answers /console/keys; links in pages are written in full).
 */
export type ConsolePages = (app: FastifyInstance, deps: ConsoleDeps) => void;

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/** Forms are small: a webhook secret or a Kalshi private key is the largest field. */
const FORM_BODY_LIMIT = 64 * 1024;

export function consolePlugin(pages: ConsolePages[]): FastifyPluginAsync<ConsoleDeps> {
  return async (app, deps) => {
    // Outside the API: no key, no envelope, not documented in the OpenAPI document.
    app.addHook("onRoute", (route) => {
      route.config = { ...(route.config ?? {}), auth: "none" };
      route.schema = { ...(route.schema ?? {}), hide: true };
    });
    app.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: FORM_BODY_LIMIT },
      (_request, body, done) => done(null, parseQuery(body as string)),
    );
    app.decorateRequest("consoleUser", null);

    app.addHook("onRequest", async (request) => {
      if (request.url.startsWith(ASSETS_PATH)) return;
      const cookies = readCookies(request);
      const token = cookies[SESSION_COOKIE];
      if (!token) return;
      const session = await deps.accounts.resolveSession(token);
      const account = session ? await deps.accounts.get(session.account_id) : undefined;
      if (!session || !account) return;
      const environment: ConsoleEnvironment = cookies[ENVIRONMENT_COOKIE] === "live" ? "live" : "sandbox";
      request.consoleUser = {
        account,
        session,
        csrf: sessionCsrfToken(token),
        environment,
        owner: { accountId: account.id, environment },
      };
    });

    // Every state change is a POST, and every POST must come from a console page.
    app.addHook("preHandler", async (request, reply) => {
      if (request.method !== "POST") return;
      const crossSite = crossSiteReason(request);
      const sent = formOf(request)[CSRF_FIELD];
      const token = typeof sent === "string" ? sent : undefined;
      const expected = request.consoleUser?.csrf ?? readCookies(request)[FORM_COOKIE];
      if (crossSite === null && sameToken(token, expected)) return;
      request.log.warn({ reason: crossSite ?? "csrf token missing or wrong" }, "console form refused");
      return render(
        request,
        reply,
        {
          title: "Request refused",
          body: html`<div class="card narrow"><h1>Request refused</h1>
            <p>${
              crossSite
                ? `This form was sent from another site (${crossSite}), so it was refused.`
                : "This form has expired or did not come from the console. Go back, reload the page and try again."
            }</p><p><a href="/console">Back to the console</a></p></div>`,
        },
        403,
      );
    });

    app.addHook("onSend", async (request, reply, payload) => {
      reply
        .header("content-security-policy", CONTENT_SECURITY_POLICY)
        .header("x-content-type-options", "nosniff")
        .header("x-frame-options", "DENY")
        .header("referrer-policy", "same-origin");
      if (!request.url.startsWith(ASSETS_PATH)) reply.header("cache-control", "no-store");
      return payload;
    });

    app.setErrorHandler((error: FastifyError, request, reply) => {
      const known = error instanceof AppError ? error : undefined;
      const status = known?.status ?? (error.statusCode && error.statusCode < 500 ? error.statusCode : 500);
      if (status >= 500) request.log.error({ err: error }, "console page failed");
      if (known) for (const [name, value] of Object.entries(known.headers)) reply.header(name, value);
      const message =
        known?.message ??
        (status === 413
          ? "That form was too large."
          : status < 500
            ? "That request could not be understood."
            : "Something went wrong on our side; try again in a moment.");
      return render(
        request,
        reply,
        {
          title: status >= 500 ? "Error" : "Not possible",
          body: html`<div class="card narrow"><h1>${status === 404 ? "Not found" : "That did not work"}</h1>
            <p>${message}</p><p><a href="/console">Back to the console</a></p></div>`,
        },
        status,
      );
    });

    app.setNotFoundHandler((request, reply) => notFound(request, reply));

    registerAssets(app);
    registerAuthPages(app, deps);
    for (const register of pages) register(app, deps);
  };
}
