/**
 * A request's route config (what the route declared in `config`, plus Fastify's `url` and
 * `method`), read without `request.routeOptions`.
 *
 * Why: `routeOptions` is a getter that builds a new object of a dozen fields on every access, and
 * every request needs the route's config (auth mode, permission, metrics label). Reading it was a
 * tenth of the full stack's time per request in bench/http. Fastify keeps the route's context on
 * the request under the `kRouteContext` symbol (lib/symbols.js), whose `config` is the very object
 * `routeOptions.config` returns. Should a Fastify release move it, `routeConfig` falls back to the
 * getter, and the route tests (auth and metrics depend on this) say so.
 */
import type { FastifyContextConfig, FastifyRequest } from "fastify";
import fastifySymbols from "fastify/lib/symbols.js";

export type RouteConfig = FastifyContextConfig & {
  /** The route's path pattern; undefined for the not-found handler. */
  url?: string;
  method?: string;
};

const ROUTE_CONTEXT: symbol | undefined = (fastifySymbols as { kRouteContext?: symbol }).kRouteContext;

export function routeConfig(request: FastifyRequest): RouteConfig {
  const context =
    ROUTE_CONTEXT === undefined
      ? undefined
      : (request as unknown as Record<symbol, { config?: RouteConfig } | undefined>)[ROUTE_CONTEXT];
  return context?.config ?? (request.routeOptions.config as RouteConfig);
}
