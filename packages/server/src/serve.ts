/**
 * `crossbook serve`: build the runtime and the app, listen, and shut down gracefully on SIGTERM or
 * SIGINT (stop accepting, finish in-flight requests, flush key usage, close the store). A second
 * signal exits at once.
 */
import { buildApp } from "./app";
import type { Config } from "./config";
import { createRuntime } from "./runtime";

export async function serve(config: Config): Promise<void> {
  const runtime = await createRuntime(config, {
    log: (message) => process.stderr.write(`crossbook: ${message}\n`),
  });
  const { app } = await buildApp(runtime);
  app.log.info(
    {
      store: config.database.kind,
      bus: runtime.bus.kind,
      limiter: runtime.limiter.kind,
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
      await app.close();
      await runtime.close();
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
  } catch (error) {
    app.log.error({ err: error }, "could not listen");
    await runtime.close();
    process.exit(1);
  }
}
