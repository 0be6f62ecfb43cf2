/**
 * Prometheus metrics: request counts and latencies by route and status. Each app gets its own
 * registry so several apps in one process (tests) do not collide.
 */
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "crossbook_" });
  const requests = new Counter({
    name: "crossbook_http_requests_total",
    help: "HTTP requests by method, route and status",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "crossbook_http_request_duration_seconds",
    help: "HTTP request latency by method, route and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return { registry, requests, latency };
}

export type Metrics = ReturnType<typeof createMetrics>;

export const metricsPlugin = fp<{ metrics: Metrics }>(
  async (app: FastifyInstance, { metrics }) => {
    // Resolved label children by "method route status": prom-client otherwise hashes the label
    // object on every observation.
    const children = new Map<string, { count: { inc(): void }; latency: { observe(v: number): void } }>();
    // Callback-style hook: no promise per request on the hot path.
    app.addHook("onResponse", (request, reply, done) => {
      // Unknown paths share one label so scanners cannot blow up the series count.
      const route = (request.route ?? request.routeOptions).url ?? "unmatched";
      const id = `${request.method} ${route} ${reply.statusCode}`;
      let child = children.get(id);
      if (!child) {
        const labels = { method: request.method, route, status: String(reply.statusCode) };
        child = { count: metrics.requests.labels(labels), latency: metrics.latency.labels(labels) };
        children.set(id, child);
      }
      child.count.inc();
      child.latency.observe(reply.elapsedTime / 1000);
      done();
    });
  },
  { name: "crossbook-metrics" },
);
