/**
 * `crossbook serve`: build the runtime, the venue adapters and the app, listen, start background
 * work (catalog sync), and shut down gracefully on SIGTERM or SIGINT (stop accepting, finish
 * in-flight requests, stop syncing, flush key usage, close the store). A second signal exits at once.
 */
import type { FastifyInstance } from "fastify";
import { buildApp, type Services } from "./app";
import type { Config } from "./config";
import type { Logger } from "./infra/log";
import { type MetricsServer, startMetricsServer } from "./ops/metrics-server";
import { createRuntime, type Runtime } from "./runtime";
import { createVenues, venueUrlsInUse } from "./venues/registry";

export interface ServeHooks {
  /** Called once the server listens (the demo creates its account and keys here). */
  onListening?: (context: {
    app: FastifyInstance;
    services: Services;
    runtime: Runtime;
    address: string;
  }) => Promise<void>;
  /** Called after the server and store have closed. */
  onShutdown?: () => Promise<void>;
}

export async function serve(config: Config, hooks: ServeHooks = {}): Promise<void> {
  // The runtime and the venue adapters are built before the app whose logger they write to.
  let appRef: FastifyInstance | undefined;
  const log: Logger = {
    info: (obj, msg) => appRef?.log.info(obj, msg),
    warn: (obj, msg) => appRef?.log.warn(obj, msg),
    error: (obj, msg) => appRef?.log.error(obj, msg),
  };
  const runtime = await createRuntime(config, {
    log: (message) => process.stderr.write(`crossbook: ${message}\n`),
    logger: log,
  });
  const venues = createVenues(config, runtime.clock, log);
  const { app, services, metrics } = await buildApp(runtime, {
    venues,
    venueUrls: venueUrlsInUse(config),
    startBackground: true,
  });
  appRef = app;
  let metricsServer: MetricsServer | undefined;
  app.log.info(
    {
      store: config.database.kind,
      bus: runtime.bus.kind,
      limiter: runtime.limiter.kind,
      venues: config.venues,
    },
    "crossbook starting",
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      app.log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    app.log.info({ signal }, "shutting down");
    const force = setTimeout(() => {
      app.log.error("shutdown took longer than 10 s; exiting");
      process.exit(1);
    }, 10_000);
    force.unref();
    try {
      await metricsServer?.close();
      await app.close();
      await runtime.close();
      await hooks.onShutdown?.();
      app.log.info("stopped");
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, "error during shutdown");
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  try {
    const address = await app.listen({ host: config.host, port: config.port });
    app.log.info({ address }, "crossbook listening");
    if (config.metricsListen) {
      metricsServer = await startMetricsServer(metrics, {
        ...config.metricsListen,
        token: config.metricsToken,
      });
      app.log.info({ address: `${metricsServer.url}/metrics` }, "metrics listening");
    }
    await hooks.onListening?.({ app, services, runtime, address });
  } catch (error) {
    app.log.error({ err: error }, "could not start");
    await app.close().catch(() => {});
    await runtime.close();
    await hooks.onShutdown?.();
    process.exit(1);
  }
}
