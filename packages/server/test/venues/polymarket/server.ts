/** A tiny scripted node:http server for adapter tests: routes by "METHOD /path", records requests. */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Route = (req: Seen) => { status?: number; body?: unknown; headers?: Record<string, string> };

export async function startScriptedServer() {
  const routes = new Map<string, Route>();
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const entry: Seen = {
        method: req.method ?? "GET",
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
      };
      seen.push(entry);
      const route = routes.get(`${entry.method} ${entry.path}`);
      if (!route) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"no route"}');
        return;
      }
      const out = route(entry);
      res
        .writeHead(out.status ?? 200, { "content-type": "application/json", ...out.headers })
        .end(
          out.body === undefined ? "" : typeof out.body === "string" ? out.body : JSON.stringify(out.body),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    routes,
    on(method: string, path: string, route: Route) {
      routes.set(`${method} ${path}`, route);
    },
    reset() {
      routes.clear();
      seen.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
