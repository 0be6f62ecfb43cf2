/**
 * `/metrics` on an address of its own (`METRICS_LISTEN`, e.g. 127.0.0.1:9464), so that the API can
 * face the internet while Prometheus scrapes from inside. A bare node:http server: it answers only
 * `GET /metrics` (with the same optional token as the API's `/metrics`), everything else 404, each
 * error in the envelope.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Metrics } from "./metrics";
import { metricsAuthorized } from "./routes";

export interface MetricsServer {
  /** `http://host:port` it listens on. */
  url: string;
  close(): Promise<void>;
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  res
    .writeHead(status, { "content-type": "application/json; charset=utf-8" })
    .end(JSON.stringify({ success: false, error: { code, message } }));
}

export async function startMetricsServer(
  metrics: Metrics,
  options: { host: string; port: number; token?: string | undefined },
): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") return refuse(res, 404, "NOT_FOUND", `No route ${req.method} ${path}`);
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", "GET");
      return refuse(
        res,
        405,
        "METHOD_NOT_ALLOWED",
        `${req.method} is not allowed on this path; allowed: GET`,
      );
    }
    if (!metricsAuthorized(options.token, req.headers.authorization)) {
      return refuse(res, 401, "UNAUTHORIZED", "/metrics needs Authorization: Bearer <METRICS_TOKEN>");
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text),
      () => refuse(res, 500, "INTERNAL_ERROR", "Something went wrong on our side"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
