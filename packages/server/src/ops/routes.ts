/**
 * Liveness, readiness and metrics for operators and orchestrators, outside API-key auth. `/metrics`
 * tells a lot about the service (routes, volumes, process), so it can ask for a token
 * (`METRICS_TOKEN`) or move to another address (`METRICS_LISTEN`, served by metrics-server.ts).
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { ClusterJobs } from "../cluster/jobs";
import { bearerToken } from "../http/auth";
import { StringEnum } from "../http/envelope";
import { AppError } from "../http/errors";
import { constantTimeEqual } from "../infra/hashing";
import type { Metrics } from "./metrics";

export interface Probe {
  name: string;
  check(): Promise<void>;
}

/** Whether a scrape may read the metrics: any caller without a token set, else the token holder. */
export function metricsAuthorized(token: string | undefined, authorization: string | undefined): boolean {
  if (token === undefined) return true;
  const given = bearerToken(authorization);
  return given !== undefined && constantTimeEqual(given, token);
}

export interface OpsDeps {
  metrics: Metrics;
  probes: Probe[];
  /** Required as `Authorization: Bearer <token>` on `/metrics` when set. */
  metricsToken?: string | undefined;
  /** false: `/metrics` is served on its own address (METRICS_LISTEN), not here. */
  serveMetrics?: boolean;
  /** This instance and its cluster-wide jobs, for /readyz. */
  cluster?: Pick<ClusterJobs, "instanceId" | "status">;
}

const JobStates = Type.Record(Type.String(), StringEnum(["running", "standby"] as const), {
  description: "Each cluster-wide job: running here (this instance holds its lease) or standby",
});

export const opsRoutes: FastifyPluginAsyncTypebox<OpsDeps> = async (app, deps) => {
  app.get(
    "/healthz",
    {
      config: { auth: "none" },
      schema: {
        tags: ["ops"],
        summary: "Liveness: the process is serving",
        response: { 200: Type.Object({ status: Type.Literal("ok") }) },
      },
    },
    async () => ({ status: "ok" as const }),
  );

  app.get(
    "/readyz",
    {
      config: { auth: "none" },
      schema: {
        tags: ["ops"],
        summary:
          "Readiness: the store (and Redis, when configured) answer; which cluster-wide jobs run on this instance",
        response: {
          200: Type.Object({
            status: Type.Literal("ready"),
            checks: Type.Record(Type.String(), Type.String()),
            instance_id: Type.String(),
            jobs: JobStates,
          }),
          503: Type.Object({
            status: Type.Literal("not_ready"),
            checks: Type.Record(Type.String(), Type.String()),
            instance_id: Type.String(),
            jobs: JobStates,
          }),
        },
      },
    },
    async (_request, reply) => {
      const checks: Record<string, string> = {};
      let ready = true;
      await Promise.all(
        deps.probes.map(async (probe) => {
          try {
            await Promise.race([
              probe.check(),
              new Promise((_, reject) =>
                setTimeout(() => reject(new Error("timed out after 2 s")), 2000).unref(),
              ),
            ]);
            checks[probe.name] = "ok";
          } catch (error) {
            ready = false;
            // The reason goes to the log, not to an unauthenticated caller.
            app.log.warn({ err: error, probe: probe.name }, "readiness probe failed");
            checks[probe.name] = "unreachable";
          }
        }),
      );
      const cluster = { instance_id: deps.cluster?.instanceId ?? "", jobs: deps.cluster?.status() ?? {} };
      if (!ready) return reply.code(503).send({ status: "not_ready" as const, checks, ...cluster });
      return { status: "ready" as const, checks, ...cluster };
    },
  );

  if (deps.serveMetrics === false) return;
  app.get(
    "/metrics",
    {
      config: { auth: "none" },
      schema: { tags: ["ops"], summary: "Prometheus metrics", hide: true },
    },
    async (request, reply) => {
      if (!metricsAuthorized(deps.metricsToken, request.headers.authorization)) {
        throw new AppError("UNAUTHORIZED", "/metrics needs Authorization: Bearer <METRICS_TOKEN>");
      }
      reply.header("Content-Type", deps.metrics.registry.contentType);
      return deps.metrics.registry.metrics();
    },
  );
};
