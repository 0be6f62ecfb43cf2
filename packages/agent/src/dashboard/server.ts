/**
 * The local dashboard: a small HTTP server that holds the API key (the browser never sees it) and
 * serves one page plus its data: the account's balance, positions with live PnL, open orders (with
 * a cancel button), live prices and charts of watched markets, alerts, risk status and recent
 * fills. Prices reach the page over Server-Sent Events from a `PriceStream`; the rest is refreshed
 * every `refreshMs` and pushed the same way.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Crossbook } from "../client.js";
import { CrossbookApiError } from "../errors.js";
import type { PriceStream, PriceUpdate } from "../stream.js";
import { DASHBOARD_HTML } from "./page.js";

/** What the dashboard shows about risk: any object with a JSON-able `status()`. */
export interface RiskStatusSource {
  status(): unknown;
}

export interface DashboardOptions {
  client: Crossbook;
  /** Markets to watch besides those with positions or open orders. */
  markets?: string[];
  host?: string;
  port?: number;
  /** Data refresh period in ms (default 2,000). */
  refreshMs?: number;
  /** Required to open the page when listening beyond loopback (generated when absent). */
  token?: string;
  risk?: RiskStatusSource;
}

export interface Dashboard {
  url: string;
  /** The URL with the access token, when one is required. */
  openUrl: string;
  server: Server;
  close(): Promise<void>;
}

interface History {
  points: Array<[number, number]>;
}

/**
 * Starts the dashboard.
 *
 * @example
 * const dash = await startDashboard({ client, markets: ["kalshi:KXFED-26DEC-T4.00"], port: 4000 });
 * console.log("open", dash.openUrl);
 */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const { client } = options;
  const host = options.host ?? "127.0.0.1";
  const loopback = host === "127.0.0.1" || host === "localhost" || host === "::1";
  const token = options.token ?? (loopback ? undefined : randomBytes(16).toString("hex"));
  const watched = new Set(options.markets ?? []);
  const history = new Map<string, History>();
  const latest = new Map<string, PriceUpdate>();
  const clients = new Set<ServerResponse>();
  let state: Record<string, unknown> = { loading: true };
  let stream: PriceStream | undefined;

  const push = (event: string, data: unknown) => {
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const res of clients) res.write(frame);
  };

  const follow = (ids: string[]) => {
    const fresh = ids.filter((id) => !watched.has(id) || !stream);
    for (const id of ids) watched.add(id);
    if (!stream) {
      stream = client.prices.stream([...watched]);
      stream.on("update", (u: PriceUpdate) => {
        latest.set(u.market_id, u);
        if (u.price !== null) {
          const h = history.get(u.market_id) ?? { points: [] };
          h.points.push([Date.parse(u.timestamp) || Date.now(), u.price]);
          if (h.points.length > 500) h.points.splice(0, h.points.length - 500);
          history.set(u.market_id, h);
        }
        push("price", u);
      });
    } else if (fresh.length > 0) stream.subscribe(fresh);
  };

  const refresh = async () => {
    try {
      const [balance, positions, orders, alerts] = await Promise.all([
        client.balance(),
        client.positions.list({ status: "open", limit: 100 } as never),
        client.orders.list({ status: "open", limit: 100 }),
        client.alerts.list().catch(() => ({ data: [] })),
      ]);
      const recent = await client.orders.list({ status: "all", limit: 20 });
      const fills = recent.data.filter((o) => o.filled_amount > 0);
      follow([...positions.data.map((p) => p.market_id), ...orders.data.map((o) => o.market_id)]);
      state = {
        balance,
        positions: positions.data,
        orders: orders.data,
        fills,
        alerts: alerts.data,
        risk: options.risk?.status() ?? null,
        watched: [...watched],
        updated_at: new Date().toISOString(),
      };
      push("state", state);
    } catch (error) {
      state = { ...state, error: error instanceof Error ? error.message : String(error) };
      push("state", state);
    }
  };

  const authorized = (req: IncomingMessage, url: URL) => {
    if (!token) return true;
    const given =
      url.searchParams.get("token") ?? (req.headers["x-dashboard-token"] as string | undefined) ?? "";
    const a = Buffer.from(given);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://dashboard");
    if (!authorized(req, url)) {
      res
        .writeHead(401, { "content-type": "text/plain" })
        .end("open the URL the dashboard printed (it has the token)");
      return;
    }
    try {
      if (req.method === "GET" && url.pathname === "/") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
        res.end(DASHBOARD_HTML);
      } else if (req.method === "GET" && url.pathname === "/api/state") {
        json(res, 200, {
          ...state,
          prices: Object.fromEntries(latest),
          history: Object.fromEntries(history),
        });
      } else if (req.method === "GET" && url.pathname === "/api/events") {
        res.writeHead(200, {
          "content-type": "text/event-stream",
          "cache-control": "no-store",
          connection: "keep-alive",
        });
        res.write(`event: state\ndata: ${JSON.stringify(state)}\n\n`);
        clients.add(res);
        req.on("close", () => clients.delete(res));
      } else if (req.method === "POST" && /^\/api\/orders\/[^/]+\/cancel$/.test(url.pathname)) {
        const id = decodeURIComponent(url.pathname.split("/")[3]!);
        const cancelled = await client.orders.cancel(id);
        json(res, 200, cancelled);
        void refresh();
      } else if (req.method === "POST" && url.pathname === "/api/watch") {
        const id = url.searchParams.get("market_id");
        if (!id) return json(res, 400, { error: "market_id is required" });
        follow([id]);
        json(res, 200, { watched: [...watched] });
      } else json(res, 404, { error: "not found" });
    } catch (error) {
      if (error instanceof CrossbookApiError)
        json(res, error.status, { error: error.message, code: error.code });
      else json(res, 500, { error: error instanceof Error ? error.message : String(error) });
    }
  });

  if (watched.size > 0) follow([...watched]);
  await refresh();
  const timer = setInterval(() => void refresh(), options.refreshMs ?? 2_000);
  timer.unref?.();
  await new Promise<void>((resolve) => server.listen(options.port ?? 4000, host, resolve));
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const base = `http://${shown}:${address.port}/`;
  return {
    url: base,
    openUrl: token ? `${base}?token=${token}` : base,
    server,
    async close() {
      clearInterval(timer);
      stream?.close();
      for (const res of clients) res.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
