/**
 * `crossbook serve`: build the runtime, the venue adapters and the app, listen, start background
 * work (catalog sync), and shut down gracefully on SIGTERM or SIGINT (stop accepting, finish
 * in-flight requests, stop syncing, flush key usage, close the store). A second signal exits at once.
 * A start-up problem a person fixes from one line (a busy port) is told in that line, no stack.
 */
import type { FastifyInstance } from "fastify";
import { buildApp, type Services } from "./app";
import type { Config } from "./config";
import type { Logger } from "./infra/log";
import { type MetricsServer, startMetricsServer } from "./ops/metrics-server";
import { createRuntime, type Runtime } from "./runtime";
import { createVenues, venueUrlsInUse } from "./venues/registry";

/**
 * A reason the service cannot start that a person fixes from one line (a busy port, the demo's key
 * cap): printed as `crossbook: <message>` without a stack, and the process exits with status 1.
 */
export class StartupError extends Error {
  override name = "StartupError";
}

/** How to choose another port, for `serve` (its only knob is PORT). */
const PORT_ADVICE = (next: number) => `run with PORT=${next}, or PORT=0 for any free port`;

/**
 * A listen failure a person can act on, as a StartupError; anything else as it was. `what` names
 * the listener ("port", "METRICS_LISTEN port"), `advice` says how to choose another port.
 */
export function listenProblem(
  error: unknown,
  listener: { host: string; port: number; what?: string; advice?: (next: number) => string },
): unknown {
  const { host, port, what = "port", advice = PORT_ADVICE } = listener;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const next = port >= 65535 ? port - 1 : port + 1;
  if (code === "EADDRINUSE") return new StartupError(`${what} ${port} is in use: ${advice(next)}`);
  if (code === "EACCES")
    return new StartupError(`${what} ${port} needs privileges this user does not have: ${advice(next)}`);
  if (code === "EADDRNOTAVAIL")
    return new StartupError(`${host} is not an address of this machine (${what} ${port})`);
  return error;
}

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
  /** How to choose another port when the configured one is busy (default: PORT, for `serve`). */
  portAdvice?: (next: number) => string;
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
    const address = await app.listen({ host: config.host, port: config.port }).catch((error) => {
      throw listenProblem(error, {
        host: config.host,
        port: config.port,
        ...(hooks.portAdvice ? { advice: hooks.portAdvice } : {}),
      });
    });
    app.log.info({ address }, "crossbook listening");
    if (config.metricsListen) {
      const { host, port } = config.metricsListen;
      metricsServer = await startMetricsServer(metrics, {
        ...config.metricsListen,
        token: config.metricsToken,
      }).catch((error) => {
        throw listenProblem(error, {
          host,
          port,
          what: "METRICS_LISTEN port",
          advice: (next) =>
            `set METRICS_LISTEN=${host.includes(":") ? `[${host}]` : host}:${next}, or port 0 for any free port`,
        });
      });
      app.log.info({ address: `${metricsServer.url}/metrics` }, "metrics listening");
    }
    await hooks.onListening?.({ app, services, runtime, address });
  } catch (error) {
    // A problem a person fixes from one line gets that line, not a logged stack.
    if (error instanceof StartupError) process.stderr.write(`crossbook: ${error.message}\n`);
    else app.log.error({ err: error }, "could not start");
    // Holds the process open through the clean-up (with nothing else left to wait on, Node would end
    // it early with status 13) and ends it should the clean-up hang.
    setTimeout(() => process.exit(1), 10_000);
    await app.close().catch(() => {});
    await runtime.close();
    await hooks.onShutdown?.();
    process.exit(1);
  }
}
