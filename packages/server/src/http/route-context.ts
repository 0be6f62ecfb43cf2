/**
 * A request's route config: what the route declared in `config`, plus Fastify's `url` and
 * `method`. Read through Fastify's public `request.routeOptions`; plumbing.ts reads it once per
 * request into `request.route` for the later hooks (auth, metrics).
 */
import type { FastifyContextConfig, FastifyRequest } from "fastify";

export type RouteConfig = FastifyContextConfig & {
  /** The route's path pattern; undefined for the not-found handler. */
  url?: string;
  method?: string;
};

export function routeConfig(request: FastifyRequest): RouteConfig {
  return request.routeOptions.config as RouteConfig;
}
