/**
 * Prometheus metrics: request counts and latencies by route and status. Each app gets its own
 * registry so several apps in one process (tests) do not collide.
 *
 * The two per-request metrics are kept here, not in prom-client's Counter and Histogram: those hash
 * the label set on every observation, which cost more than the rest of the metrics hook together on
 * the hot path (bench/http). Here a request finds its series through the route's own config object
 * and the status code, and adds to plain numbers; prom-client formats them at scrape time, beside
 * its default process metrics.
 */
import type { FastifyContextConfig, FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { ClusterJobs } from "../cluster/jobs";
import { routeConfig } from "../http/route-context";
import type { CheckpointStats } from "../infra/db/checkpointer";

/** What prom-client's registry reads from a metric at scrape time (`get()`). */
interface Exported {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  values: Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>;
}

const REQUESTS_METRIC = "crossbook_http_requests_total";
const LATENCY_METRIC = "crossbook_http_request_duration_seconds";
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** One (method, route, status) series: its count, and latencies per bucket (not cumulative). */
interface Series {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket; the last slot is above the largest bound (+Inf only). */
  buckets: Float64Array;
}

/** The request count and latency histogram, by method, route and status. */
export class RequestMetrics {
  /** Series by route config (one object per route, for the app's life), then by status code. */
  readonly #byRoute = new Map<FastifyContextConfig | string, Map<number, Series>>();
  readonly #series: Series[] = [];

  observe(
    method: string,
    routeKey: FastifyContextConfig | string,
    route: string,
    status: number,
    seconds: number,
  ): void {
    let byStatus = this.#byRoute.get(routeKey);
    if (!byStatus) {
      byStatus = new Map();
      this.#byRoute.set(routeKey, byStatus);
    }
    let series = byStatus.get(status);
    if (!series) {
      series = {
        labels: { method, route, status: String(status) },
        count: 0,
        sum: 0,
        buckets: new Float64Array(LATENCY_BUCKETS.length + 1),
      };
      byStatus.set(status, series);
      this.#series.push(series);
    }
    series.count++;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++;
    series.buckets[bucket]!++;
  }

  /** The counter in prom-client's export shape. */
  requests(): Exported {
    return {
      name: REQUESTS_METRIC,
      help: "HTTP requests by method, route and status",
      type: "counter",
      aggregator: "sum",
      values: this.#series.map((s) => ({ labels: { ...s.labels }, value: s.count })),
    };
  }

  /** The histogram in prom-client's export shape: cumulative `_bucket`s, `_sum` and `_count`. */
  latency(): Exported {
    const name = LATENCY_METRIC;
    const values: Exported["values"] = [];
    for (const s of this.#series) {
      let cumulative = 0;
      for (let i = 0; i <= LATENCY_BUCKETS.length; i++) {
        cumulative += s.buckets[i]!;
        const le = i < LATENCY_BUCKETS.length ? LATENCY_BUCKETS[i]! : "+Inf";
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${name}_bucket` });
      }
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${name}_count` });
    }
    return {
      name,
      help: "HTTP request latency by method, route and status",
      type: "histogram",
      aggregator: "sum",
      values,
    };
  }

  reset(): void {
    this.#byRoute.clear();
    this.#series.length = 0;
  }
}

/** A metric prom-client's registry can hold: it asks `get()` at scrape time. */
function exported(name: string, get: () => Exported, reset: () => void) {
  return { name, get: async () => get(), reset };
}

export interface MetricsSources {
  /** The SQLite store's background checkpoints, when it has them (infra/db/checkpointer.ts). */
  checkpoints?: () => CheckpointStats | undefined;
  /** Distinct differences seen between live positions and the venues' (portfolio/holdings.ts). */
  positionMismatches?: () => number;
  /** The cluster-wide jobs: which run here, and how often this instance took one over. */
  jobs?: Pick<ClusterJobs, "status" | "takeovers">;
}

export function createMetrics(sources: MetricsSources = {}) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "crossbook_" });
  const checkpoints = sources.checkpoints;
  if (checkpoints?.()) {
    // A WAL that keeps growing, or a backlog that never drains, means checkpoints are not keeping up.
    new Gauge({
      name: "crossbook_sqlite_wal_frames",
      help: "Frames in the SQLite WAL at the latest background checkpoint",
      registers: [registry],
      collect() {
        this.set(checkpoints()?.walFrames ?? 0);
      },
    });
    new Gauge({
      name: "crossbook_sqlite_wal_backlog_frames",
      help: "WAL frames not yet copied into the database at the latest background checkpoint",
      registers: [registry],
      collect() {
        const stats = checkpoints();
        this.set(stats ? stats.walFrames - stats.checkpointedFrames : 0);
      },
    });
    new Gauge({
      name: "crossbook_sqlite_checkpoint_failing",
      help: "1 while the latest background checkpoint failed (its error is in the store's stats)",
      registers: [registry],
      collect() {
        this.set(checkpoints()?.lastError === undefined ? 0 : 1);
      },
    });
  }
  const positionMismatches = sources.positionMismatches;
  if (positionMismatches) {
    registry.registerMetric(
      exported(
        "crossbook_venue_position_mismatches_total",
        () => ({
          name: "crossbook_venue_position_mismatches_total",
          help: "Differences seen between a live position and what the venue holds (each distinct one once)",
          type: "counter",
          aggregator: "sum",
          values: [{ labels: {}, value: positionMismatches() }],
        }),
        () => {},
      ) as unknown as Parameters<Registry["registerMetric"]>[0],
    );
  }
  const jobs = sources.jobs;
  if (jobs) {
    new Gauge({
      name: "crossbook_job_running",
      help: "1 while this instance runs the cluster-wide job (holds its lease), 0 while it stands by",
      labelNames: ["job"],
      registers: [registry],
      collect() {
        for (const [job, state] of Object.entries(jobs.status()))
          this.set({ job }, state === "running" ? 1 : 0);
      },
    });
    registry.registerMetric(
      exported(
        "crossbook_job_takeovers_total",
        () => ({
          name: "crossbook_job_takeovers_total",
          help: "Times this instance took a cluster-wide job over from another holder (whose lease had expired)",
          type: "counter",
          aggregator: "sum",
          values: Object.entries(jobs.takeovers()).map(([job, value]) => ({ labels: { job }, value })),
        }),
        () => {},
      ) as unknown as Parameters<Registry["registerMetric"]>[0],
    );
  }
  const requests = new RequestMetrics();
  const reset = () => requests.reset();
  for (const metric of [
    exported(REQUESTS_METRIC, () => requests.requests(), reset),
    exported(LATENCY_METRIC, () => requests.latency(), reset),
  ]) {
    registry.registerMetric(metric as unknown as Parameters<Registry["registerMetric"]>[0]);
  }
  return { registry, requests };
}

export type Metrics = ReturnType<typeof createMetrics>;

export const metricsPlugin = fp<{ metrics: Metrics }>(
  async (app: FastifyInstance, { metrics }) => {
    // Callback-style hook: no promise per request on the hot path.
    app.addHook("onResponse", (request, reply, done) => {
      const route = request.route ?? routeConfig(request);
      // Unknown paths share one label (per method) so scanners cannot blow up the series count.
      const matched = route.url !== undefined;
      metrics.requests.observe(
        request.method,
        matched ? route : request.method,
        route.url ?? "unmatched",
        reply.statusCode,
        reply.elapsedTime / 1000,
      );
      done();
    });
  },
  { name: "crossbook-metrics" },
);
