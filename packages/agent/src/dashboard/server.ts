/**
 * The local dashboard: a small HTTP server that holds the API key (the browser never sees it) and
 * serves one page plus its data: the account's balance, positions with live PnL, open orders (with
 * a cancel button), live prices and charts of watched markets, alerts, the risk chain's limits with
 * their current use, and recent fills, by market title. A refresh that fails (a revoked key, a
 * service that does not answer) keeps the last data, marked with when it was read, and says why. Prices reach the page over Server-Sent Events from a `PriceStream`. The account's data
 * follows the private account stream (`AccountStream`): an order, position, transfer or alert event
 * refreshes the parts it touches (an order event: open orders, fills, balance…) and the new state is
 * pushed over the same Server-Sent Events. A full refresh still runs every `safetyRefreshMs` as a
 * safety net, and every `refreshMs` while the account stream is not live (or with `watch: "poll"`).
 *
 * It can cancel orders with a trading key, so every request is checked, loopback or not:
 * - the Host header is one the dashboard answers to (loopback names with its port, the `host` it
 *   listens on, `allowedHosts`), else 403: a DNS-rebinding page on another name gets nothing;
 * - a token, always: the printed URL carries it once (`?token=`), that visit trades it for an
 *   HttpOnly SameSite=Strict cookie and redirects to the clean URL (303; a small self-refreshing
 *   page when the link was followed from another site); later requests authenticate by the cookie
 *   (or an `X-Dashboard-Token` header, for scripts), else 401;
 * - a state-changing request (any method but GET/HEAD) must come from the dashboard's own origin
 *   (Origin, or without it Sec-Fetch-Site / Referer), else 403: SameSite does not separate ports of
 *   one host, so a page on another local port could otherwise post with the cookie;
 * - every response forbids framing (`X-Frame-Options: DENY`, CSP `frame-ancestors 'none'`), and
 *   the page's CSP runs only its own nonce-tagged inline style and script.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { AccountStream, AccountStreamError } from "../account-stream.js";
import type { AccountEvent, Crossbook } from "../client.js";
import { CrossbookApiError } from "../errors.js";
import type { RiskConfig } from "../risk/config.js";
import type { PriceStream, PriceUpdate } from "../stream.js";
import type { Fill } from "../types.js";
import { dashboardPage } from "./page.js";
import { describeFailure, type FailureView, riskView } from "./view.js";

/**
 * What the dashboard shows about risk: any object with a JSON-able `status()`; with a `config` too
 * (a `RiskChain` has both) each configured limit is shown with its current use.
 */
export interface RiskStatusSource {
  status(): unknown;
  readonly config?: Readonly<RiskConfig>;
}

export interface DashboardOptions {
  client: Crossbook;
  /** Markets to watch besides those with positions or open orders. */
  markets?: string[];
  /**
   * Address to listen on (default `127.0.0.1`). A name or address other than loopback and the
   * wildcards (`0.0.0.0`, `::`) is also accepted in the Host header, with the port.
   */
  host?: string;
  port?: number;
  /**
   * More Host header values to answer to besides `127.0.0.1`, `localhost` and `[::1]` with the
   * port: `"name"` (with the dashboard's port) or `"name:port"` (e.g. behind a port mapping).
   */
  allowedHosts?: string[];
  /**
   * How the account's data (balance, positions, orders, fills, alerts) is kept fresh: `"stream"`
   * (default) refreshes what an event on the account stream touches, as it arrives; `"poll"`
   * refreshes everything every `refreshMs`. A client without `accountStream` always polls.
   */
  watch?: "stream" | "poll";
  /** Full refresh period in ms while the account stream is not live, or with `watch: "poll"` (default 2,000). */
  refreshMs?: number;
  /** Full refresh period in ms while the account stream is live: a safety net only (default 30,000). */
  safetyRefreshMs?: number;
  /**
   * The access token, at least 16 of `A-Z a-z 0-9 - _ . ~` (default: 32 random bytes, base64url).
   */
  token?: string;
  risk?: RiskStatusSource;
}

export interface Dashboard {
  /** The dashboard's address, without the token. */
  url: string;
  /** The address with `?token=…`: opening it once signs the browser in (a cookie) and redirects to `url`. */
  openUrl: string;
  /** The access token (also accepted in an `X-Dashboard-Token` header). */
  token: string;
  server: Server;
  close(): Promise<void>;
}

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];
const WILDCARDS = new Set(["0.0.0.0", "::", "[::]"]);
const TOKEN_FORMAT = /^[A-Za-z0-9._~-]{16,}$/;
/** How far back "recent fills" starts when the dashboard opens. */
const FILLS_WINDOW_MS = 86_400_000;
/** Recent fills kept and shown, newest first. */
const RECENT_FILLS = 20;

interface History {
  points: Array<[number, number]>;
}

/** The parts of the account's data the page shows, each refreshed on its own. */
type Part = "balance" | "positions" | "orders" | "fills" | "alerts";
const ALL_PARTS: readonly Part[] = ["balance", "positions", "orders", "fills", "alerts"];

/** What each account event touches. */
const EVENT_PARTS: Record<string, readonly Part[]> = {
  "order.created": ["orders", "balance"],
  "order.filled": ["orders", "fills", "balance", "positions"],
  "order.partially_filled": ["orders", "fills", "balance", "positions"],
  "order.cancelled": ["orders", "fills", "balance"],
  "position.opened": ["positions", "balance"],
  "position.closed": ["positions", "balance"],
  "position.resolved": ["positions", "balance"],
  "deposit.completed": ["balance"],
  "withdrawal.completed": ["balance"],
  "price.alert": ["alerts"],
};

/** Events of one transaction (a fill's order and position events) arrive together: one refresh. */
const COALESCE_MS = 20;

/**
 * Where the account's data comes from: `live` (account stream acknowledged and caught up),
 * `connecting`, `down` (reconnecting, or refused), `off` (polling by choice or for want of a stream).
 */
type AccountFeed = "live" | "connecting" | "down" | "off";

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
  if (options.token !== undefined && !TOKEN_FORMAT.test(options.token))
    throw new TypeError("token: at least 16 characters of A-Z a-z 0-9 - _ . ~");
  const token = options.token ?? randomBytes(32).toString("base64url");
  const tokenDigest = digest(token);
  /** Filled in once listening: the port is known only then. */
  const allowedHosts = new Set<string>();
  let cookieName = "";
  const watched = new Set(options.markets ?? []);
  const history = new Map<string, History>();
  const latest = new Map<string, PriceUpdate>();
  const clients = new Set<ServerResponse>();
  let state: Record<string, unknown> = { loading: true };
  let stream: PriceStream | undefined;
  let accountStream: AccountStream | undefined;
  let feed: AccountFeed = "off";
  let closed = false;
  const data: Partial<Record<Part, unknown>> = {};
  /** When each part was last read successfully (ISO 8601): the page's "as of" once data is stale. */
  const asOf: Partial<Record<Part, string>> = {};
  let failure: (FailureView & { since: string }) | undefined;
  /** Market titles by id: from positions, orders and fills, else asked once per watched market. */
  const titles = new Map<string, string>();
  const askedTitles = new Set<string>();
  /** The fills cursor (`GET /v1/fills` reads on from it) and the newest fills read, oldest first. */
  let fillsAfter: string | undefined;
  let recentFills: Fill[] = [];

  const push = (event: string, payload: unknown) => {
    if (closed) return;
    const frame = `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
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

  const fetchers: Record<Part, () => Promise<unknown>> = {
    balance: () => client.balance(),
    positions: async () => (await client.positions.list({ status: "open", limit: 100 } as never)).data,
    orders: async () => (await client.orders.list({ status: "open", limit: 100 })).data,
    fills: async () => {
      // Read on from the cursor: each refresh asks only for fills it has not seen (a bounded number
      // of pages per refresh; the next one goes on from where this one stopped).
      for (let pages = 0; pages < 20; pages++) {
        const page = await client.fills.list({
          ...(fillsAfter !== undefined
            ? { after: fillsAfter }
            : { since: new Date(Date.now() - FILLS_WINDOW_MS).toISOString() }),
          limit: 100,
        });
        recentFills = [...recentFills, ...page.data].slice(-RECENT_FILLS);
        if (page.meta.next_after !== null) fillsAfter = page.meta.next_after;
        if (!page.meta.has_more || page.data.length === 0) break;
      }
      return [...recentFills].reverse();
    },
    alerts: async () => (await client.alerts.list().catch(() => ({ data: [] }))).data,
  };

  const positionsHeld = () => (data.positions as Parameters<typeof riskView>[2] | undefined) ?? [];
  const ordersOpen = () => (data.orders as Parameters<typeof riskView>[3] | undefined) ?? [];
  const buildState = (): Record<string, unknown> => {
    const risk = options.risk?.status() ?? null;
    return {
      ...data,
      risk,
      risk_view: options.risk
        ? riskView(
            options.risk.config,
            risk,
            positionsHeld(),
            ordersOpen(),
            (id) => latest.get(id)?.price ?? null,
          )
        : null,
      titles: Object.fromEntries(titles),
      watched: [...watched],
      account_stream: feed,
      as_of: { ...asOf },
      updated_at: new Date().toISOString(),
      ...(failure !== undefined
        ? {
            error: failure.reason,
            error_kind: failure.kind,
            error_detail: failure.detail,
            error_since: failure.since,
          }
        : {}),
    };
  };
  const pushState = () => {
    state = buildState();
    push("state", state);
  };

  const fail = (error: unknown) => {
    const view = describeFailure(error);
    // Since the first failure in a row: the page says how long the data has been stale.
    failure = { ...view, since: failure?.since ?? new Date().toISOString() };
  };

  /** Titles of watched markets nothing held names: asked once each, a failure left as the id. */
  const learnTitles = async () => {
    const missing = [...watched].filter((id) => !titles.has(id) && !askedTitles.has(id));
    await Promise.all(
      missing.map(async (id) => {
        askedTitles.add(id);
        try {
          const market = await client.markets.get(id);
          if (market.title) titles.set(id, market.title);
        } catch {
          // Cosmetic: the page shows the id instead.
        }
      }),
    );
  };

  /** Fetches some parts and pushes the new state; on failure the last data stays, with `error`. */
  const load = async (parts: Part[]) => {
    // Parts are read independently: one that fails leaves the others fresh.
    const results = await Promise.allSettled(parts.map((part) => fetchers[part]()));
    const now = new Date().toISOString();
    let firstError: unknown;
    parts.forEach((part, i) => {
      const result = results[i]!;
      if (result.status === "fulfilled") {
        data[part] = result.value;
        asOf[part] = now;
      } else if (firstError === undefined) firstError = result.reason;
    });
    // Alerts are read leniently (a key may not reach them): only another part proves the service is back.
    const proven = parts.some((part, i) => part !== "alerts" && results[i]!.status === "fulfilled");
    if (firstError !== undefined) fail(firstError);
    else if (proven) failure = undefined;
    const held = [...positionsHeld(), ...ordersOpen()];
    for (const x of [...held, ...recentFills]) if (x.market_title) titles.set(x.market_id, x.market_title);
    // Prices are followed for what is held or resting.
    if (!closed) follow(held.map((x) => x.market_id));
    if (firstError === undefined && !closed) await learnTitles();
    pushState();
  };

  // Refreshes never overlap: parts asked for while one runs are fetched right after it, together.
  const pending = new Set<Part>();
  let waiting: Array<() => void> = [];
  let running = false;
  let startTimer: NodeJS.Timeout | undefined;
  const run = async () => {
    startTimer = undefined;
    running = true;
    while (pending.size > 0 && !closed) {
      const parts = [...pending];
      pending.clear();
      const done = waiting;
      waiting = [];
      await load(parts);
      for (const resolve of done) resolve();
    }
    running = false;
    for (const resolve of waiting.splice(0)) resolve();
  };
  /** Refreshes these parts (after `delay` ms, so that a burst of events makes one refresh). */
  const refresh = (parts: readonly Part[] = ALL_PARTS, delay = 0): Promise<void> =>
    new Promise((resolve) => {
      if (closed) return resolve();
      for (const part of parts) pending.add(part);
      waiting.push(resolve);
      if (!running && !startTimer) startTimer = setTimeout(() => void run(), delay);
    });

  // The safety net: a full refresh every safetyRefreshMs while the account stream is live, else
  // every refreshMs.
  let safetyTimer: NodeJS.Timeout | undefined;
  const scheduleSafety = () => {
    clearTimeout(safetyTimer);
    if (closed) return;
    const every = feed === "live" ? (options.safetyRefreshMs ?? 30_000) : (options.refreshMs ?? 2_000);
    safetyTimer = setTimeout(() => {
      void refresh();
      scheduleSafety();
    }, every);
    safetyTimer.unref?.();
  };
  const setFeed = (next: AccountFeed) => {
    if (feed === next) return;
    feed = next;
    scheduleSafety();
    pushState();
  };

  // The risk chain's status is local and cheap: re-read it every refreshMs, pushed when it changed.
  let riskTimer: NodeJS.Timeout | undefined;
  if (options.risk) {
    let lastRisk = JSON.stringify(options.risk.status() ?? null);
    riskTimer = setInterval(() => {
      const now = JSON.stringify(options.risk?.status() ?? null);
      if (now !== lastRisk) {
        lastRisk = now;
        pushState();
      }
    }, options.refreshMs ?? 2_000);
    riskTimer.unref?.();
  }

  /** Opens the account stream: each event refreshes what it touches. */
  const followAccount = () => {
    const source = client as Partial<Crossbook>;
    if (options.watch === "poll" || typeof source.accountStream !== "function") return;
    let opened: AccountStream;
    try {
      opened = client.accountStream({ types: Object.keys(EVENT_PARTS) });
    } catch {
      return;
    }
    accountStream = opened;
    feed = "connecting";
    let acknowledged = false;
    opened.on("event", (event: AccountEvent) => {
      const parts = EVENT_PARTS[event.type];
      if (parts) void refresh(parts, COALESCE_MS);
    });
    opened.on("subscribed", () => {
      if (acknowledged) return;
      acknowledged = true;
      // Started from now: what happened before the subscription was not seen. Live once re-read.
      void refresh().then(() => setFeed("live"));
    });
    opened.on("resumed", () => {
      acknowledged = true;
      // A resume replays what was missed while down: nothing to re-read.
      setFeed("live");
    });
    opened.on("expired", () => void refresh()); // events in between are gone: re-read everything
    opened.on("close", () => {
      if (closed) return;
      setFeed("down");
      // Re-read at once: a refused key (revoked) should turn the page red now, not at the next poll.
      void refresh();
    });
    opened.on("error", (err: AccountStreamError | Error) => {
      const code = (err as AccountStreamError).code;
      if (closed || (code !== "UNAUTHORIZED" && code !== "FORBIDDEN")) return;
      // The stream has stopped for good; the next refresh says whether the key itself is refused.
      void refresh();
    });
  };

  /** Constant time whatever the given value's length: both sides are hashed first. */
  const isToken = (given: string | undefined) =>
    given !== undefined && timingSafeEqual(digest(given), tokenDigest);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    const hostHeader = (req.headers.host ?? "").toLowerCase();
    if (!allowedHosts.has(hostHeader)) {
      text(res, 403, "unexpected Host header: open the dashboard by the address it printed");
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://dashboard");
    } catch {
      text(res, 400, "bad request target");
      return;
    }
    const isRead = req.method === "GET" || req.method === "HEAD";

    // The printed URL: trade the token for the cookie, then drop it from the address bar (and from
    // history and any Referer) with a redirect.
    if (isRead && url.searchParams.has("token")) {
      if (!isToken(url.searchParams.get("token") ?? undefined)) {
        text(res, 401, "wrong token: open the URL the dashboard printed");
        return;
      }
      url.searchParams.delete("token");
      res.setHeader("set-cookie", `${cookieName}=${token}; Path=/; HttpOnly; SameSite=Strict`);
      // The path starts with exactly one slash: "//host" would send the browser elsewhere.
      const clean = url.pathname.replace(/^\/+/, "/") + url.search;
      if (req.headers["sec-fetch-site"] === "cross-site") {
        // Opened from a link on another site: the browser would not send a SameSite=Strict cookie
        // along that navigation's redirect, but does on a navigation this page starts itself.
        const target = escapeHtml(clean);
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(
          `<!doctype html><meta http-equiv="refresh" content="0; url=${target}"><a href="${target}">continue</a>`,
        );
      } else res.writeHead(303, { location: clean }).end();
      return;
    }

    const headerToken = req.headers["x-dashboard-token"];
    const byHeader = typeof headerToken === "string" && isToken(headerToken);
    if (!byHeader && !isToken(readCookie(req.headers.cookie, cookieName))) {
      text(res, 401, "not signed in: open the URL the dashboard printed (the one with ?token=…)");
      return;
    }
    if (!isRead && !sameOrigin(req, `http://${hostHeader}`, byHeader)) {
      text(res, 403, "cross-origin request refused");
      return;
    }

    try {
      if (req.method === "GET" && url.pathname === "/") {
        const nonce = randomBytes(16).toString("base64");
        res.writeHead(200, {
          "content-type": "text/html; charset=utf-8",
          "content-security-policy": pagePolicy(nonce),
        });
        res.end(dashboardPage(nonce));
      } else if (req.method === "GET" && url.pathname === "/api/state") {
        json(res, 200, {
          ...state,
          prices: Object.fromEntries(latest),
          history: Object.fromEntries(history),
        });
      } else if (req.method === "GET" && url.pathname === "/api/events") {
        res.writeHead(200, { "content-type": "text/event-stream", connection: "keep-alive" });
        res.write(`event: state\ndata: ${JSON.stringify(state)}\n\n`);
        clients.add(res);
        req.on("close", () => clients.delete(res));
      } else if (req.method === "POST" && /^\/api\/orders\/[^/]+\/cancel$/.test(url.pathname)) {
        const id = decodeURIComponent(url.pathname.split("/")[3]!);
        const cancelled = await client.orders.cancel(id);
        json(res, 200, cancelled);
        void refresh(["orders", "fills", "balance"]);
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
  };
  const server = createServer((req, res) => void handle(req, res));

  if (watched.size > 0) follow([...watched]);
  /** Stops the streams and timers (the HTTP server is closed by the caller). */
  const stop = () => {
    closed = true;
    clearTimeout(safetyTimer);
    clearTimeout(startTimer);
    clearInterval(riskTimer);
    for (const resolve of waiting.splice(0)) resolve();
    accountStream?.close();
    stream?.close();
  };
  followAccount();
  try {
    await refresh();
    scheduleSafety();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 4000, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (failure) {
    stop(); // e.g. the port is taken: leave no stream or timer behind
    throw failure;
  }
  const { port } = server.address() as AddressInfo;
  // Cookies are not told apart by port: one name per port keeps two dashboards from clashing.
  cookieName = `crossbook_dashboard_${port}`;
  const listenName = hostName(host);
  for (const name of [...LOOPBACK_NAMES, listenName, ...(options.allowedHosts ?? [])])
    if (!WILDCARDS.has(name)) for (const value of hostValues(name, port)) allowedHosts.add(value);
  const base = `http://${WILDCARDS.has(listenName) ? "127.0.0.1" : listenName}:${port}/`;
  return {
    url: base,
    openUrl: `${base}?token=${token}`,
    token,
    server,
    async close() {
      stop();
      for (const res of clients) res.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Sent with every response; the page's own response replaces the CSP with `pagePolicy`. */
const SECURITY_HEADERS = {
  "x-frame-options": "DENY",
  "content-security-policy":
    "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/** Same-origin fetches and SSE only; the page's inline style and script by this response's nonce. */
function pagePolicy(nonce: string): string {
  return [
    "default-src 'self'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * Whether a state-changing request comes from the dashboard's own origin. Browsers send Origin on
 * every POST; without it, Sec-Fetch-Site or Referer decide. A request with none of the three is a
 * script (curl), accepted only when it authenticated with the X-Dashboard-Token header, which a
 * page on another origin cannot add without a CORS preflight the dashboard never grants.
 */
function sameOrigin(req: IncomingMessage, self: string, byHeader: boolean): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined) return origin.toLowerCase() === self;
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined) return site === "same-origin";
  const referer = req.headers.referer;
  if (referer !== undefined) {
    try {
      return new URL(referer).origin === self;
    } catch {
      return false;
    }
  }
  return byHeader;
}

/** A host as written in a URL and a Host header: lower case, an IPv6 address in brackets. */
function hostName(host: string): string {
  const name = host.trim().toLowerCase();
  return name.includes(":") && !name.startsWith("[") ? `[${name}]` : name;
}

/** The Host header values for a name (with its own port, or the dashboard's); port 80 may be left out. */
function hostValues(entry: string, port: number): string[] {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(entry.trim().toLowerCase());
  if (match) return [`${match[1]}:${match[2]}`, ...(match[2] === "80" ? [match[1]!] : [])];
  const name = hostName(entry);
  return [`${name}:${port}`, ...(port === 80 ? [name] : [])];
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

function text(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(message);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
