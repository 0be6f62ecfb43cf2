/** Liveness, readiness and metrics for operators and orchestrators. Unauthenticated. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { Metrics } from "./metrics";

export interface Probe {
  name: string;
  check(): Promise<void>;
}

export const opsRoutes: FastifyPluginAsyncTypebox<{ metrics: Metrics; probes: Probe[] }> = async (
  app,
  deps,
) => {
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
        summary: "Readiness: the store (and Redis, when configured) answer",
        response: {
          200: Type.Object({
            status: Type.Literal("ready"),
            checks: Type.Record(Type.String(), Type.String()),
          }),
          503: Type.Object({
            status: Type.Literal("not_ready"),
            checks: Type.Record(Type.String(), Type.String()),
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
      if (!ready) return reply.code(503).send({ status: "not_ready" as const, checks });
      return { status: "ready" as const, checks };
    },
  );

  app.get(
    "/metrics",
    {
      config: { auth: "none" },
      schema: { tags: ["ops"], summary: "Prometheus metrics", hide: true },
    },
    async (_request, reply) => {
      reply.header("Content-Type", deps.metrics.registry.contentType);
      return deps.metrics.registry.metrics();
    },
  );
};
