/**
 * The dashboard's access rules over real HTTP, with the Host, Origin and Cookie headers a browser
 * (or a DNS-rebinding page, or a page on another local port) would send. The client is a stub:
 * these tests are about who may talk to the dashboard, not what it shows.
 */
import { request } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dashboard, startDashboard } from "../src/dashboard/server";
import type { Crossbook } from "../src/index";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request to 127.0.0.1:port with exactly the headers given (Host included). */
function send(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method: options.method ?? "GET", headers: options.headers },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
          // The event stream never ends: its first frame is enough.
          if (res.headers["content-type"] === "text/event-stream") res.destroy();
        });
        res.on("close", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

function stubClient() {
  const cancelled: string[] = [];
  const client = {
    balance: async () => ({ available: 100, locked: 0, total: 100, environment: "sandbox" }),
    positions: { list: async () => ({ data: [] }) },
    orders: {
      list: async () => ({ data: [] }),
      cancel: async (id: string) => {
        cancelled.push(id);
        return { id, status: "cancelled" };
      },
    },
    fills: { list: async () => ({ data: [], meta: { next_after: null, has_more: false } }) },
    alerts: { list: async () => ({ data: [] }) },
    prices: { stream: () => ({ on() {}, subscribe() {}, close() {} }) },
  } as unknown as Crossbook;
  return { client, cancelled };
}

describe("dashboard access", () => {
  let dashboard: Dashboard;
  let port: number;
  let host: string;
  let cookie: string;
  const stub = stubClient();

  beforeAll(async () => {
    dashboard = await startDashboard({ client: stub.client, port: 0, refreshMs: 60_000 });
    port = Number(new URL(dashboard.url).port);
    host = `127.0.0.1:${port}`;
    const signIn = await send(port, `/?token=${dashboard.token}`, { headers: { host } });
    cookie = String(signIn.headers["set-cookie"]).split(";")[0]!;
  });
  afterAll(() => dashboard?.close());

  it("generates a token on loopback too and prints it once in the start URL", () => {
    expect(dashboard.token.length).toBeGreaterThanOrEqual(32);
    expect(dashboard.url).toBe(`http://127.0.0.1:${port}/`);
    expect(dashboard.openUrl).toBe(`${dashboard.url}?token=${dashboard.token}`);
  });

  it("answers 401 without the token, or with a wrong one", async () => {
    for (const path of ["/", "/api/state", "/api/events"])
      expect((await send(port, path, { headers: { host } })).status).toBe(401);
    expect((await send(port, "/?token=wrong", { headers: { host } })).status).toBe(401);
    expect((await send(port, "/", { headers: { host, cookie: `${cookie}x` } })).status).toBe(401);
    expect(
      (await send(port, "/api/state", { headers: { host, cookie: `crossbook_dashboard_${port}=` } })).status,
    ).toBe(401);
  });

  it("trades the token in the URL for an HttpOnly SameSite=Strict cookie and redirects to the clean URL", async () => {
    const res = await send(port, `/?token=${dashboard.token}`, { headers: { host } });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe("/");
    const setCookie = String(res.headers["set-cookie"]);
    expect(setCookie).toMatch(new RegExp(`^crossbook_dashboard_${port}=`));
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Strict");
    expect(setCookie).toContain("Path=/");
    // A redirect that keeps other query parameters, and never one to another host.
    const other = await send(port, `//evil.example/?a=1&token=${dashboard.token}`, { headers: { host } });
    expect(other.headers.location).toBe("/?a=1");
  });

  it("moves on with a self-refreshing page when the link was followed from another site", async () => {
    // A browser does not send a SameSite=Strict cookie along a redirect that a cross-site click
    // started; it does on the navigation this page starts itself.
    const res = await send(port, `/?token=${dashboard.token}`, {
      headers: { host, "sec-fetch-site": "cross-site" },
    });
    expect(res.status).toBe(200);
    expect(String(res.headers["set-cookie"])).toContain("SameSite=Strict");
    expect(res.body).toContain('<meta http-equiv="refresh" content="0; url=/">');
    expect(res.body).not.toContain(dashboard.token);
  });

  it("serves the page, the state and the event stream by the cookie alone", async () => {
    const page = await send(port, "/", { headers: { host, cookie } });
    expect(page.status).toBe(200);
    expect(page.body).toContain("crossbook agent");
    expect(page.body).not.toContain(dashboard.token);
    const state = await send(port, "/api/state", { headers: { host, cookie } });
    expect(state.status).toBe(200);
    expect(JSON.parse(state.body).balance.total).toBe(100);
    const events = await send(port, "/api/events", { headers: { host, cookie } });
    expect(events.status).toBe(200);
    expect(events.body).toContain("event: state");
    // Scripts may send the token in a header instead.
    const script = await send(port, "/api/state", {
      headers: { host, "x-dashboard-token": dashboard.token },
    });
    expect(script.status).toBe(200);
  });

  it("answers only to its own Host names (403 to a DNS-rebinding name, even with the cookie)", async () => {
    for (const name of [`localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`])
      expect((await send(port, "/api/state", { headers: { host: name, cookie } })).status).toBe(200);
    for (const name of [`evil.example:${port}`, "evil.example", `127.0.0.1:${port + 1}`, "127.0.0.1"]) {
      const res = await send(port, "/api/state", { headers: { host: name, cookie } });
      expect(res.status, name).toBe(403);
      expect(res.body).not.toContain("balance");
    }
    // HTTP/1.0 lets a client leave Host out altogether.
    const bare = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () =>
        socket.write(`GET /api/state HTTP/1.0\r\nCookie: ${cookie}\r\n\r\n`),
      );
      let raw = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => (raw += chunk));
      socket.on("end", () => resolve(raw));
      socket.on("error", reject);
    });
    expect(bare).toMatch(/^HTTP\/1\.1 403/);
    const signIn = await send(port, `/?token=${dashboard.token}`, {
      headers: { host: `evil.example:${port}` },
    });
    expect(signIn.status).toBe(403);
    expect(signIn.headers["set-cookie"]).toBeUndefined();
  });

  it("refuses a state-changing request from another origin with 403", async () => {
    const cancel = (headers: Record<string, string>) =>
      send(port, "/api/orders/ord_1/cancel", { method: "POST", headers: { host, cookie, ...headers } });
    const foreign: Array<Record<string, string>> = [
      { origin: "http://evil.example" },
      { origin: `http://127.0.0.1:${port + 1}` }, // another port of the same host: same site
      { origin: `http://localhost:${port}` }, // not the origin this request is addressed to
      { origin: "null" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "cross-site" },
      { referer: "http://evil.example/page" },
      {}, // cookie only, nothing telling where it came from
    ];
    for (const headers of foreign) {
      const res = await cancel(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
    }
    expect(stub.cancelled).toEqual([]);
  });

  it("runs a state-changing request from its own origin", async () => {
    const cancel = (headers: Record<string, string>) =>
      send(port, "/api/orders/ord_1/cancel", { method: "POST", headers: { host, ...headers } });
    expect((await cancel({ cookie, origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect((await cancel({ cookie, "sec-fetch-site": "same-origin" })).status).toBe(200);
    expect((await cancel({ cookie, referer: `http://127.0.0.1:${port}/` })).status).toBe(200);
    // A script with the token header and no browser headers at all.
    expect((await cancel({ "x-dashboard-token": dashboard.token })).status).toBe(200);
    expect(stub.cancelled).toEqual(["ord_1", "ord_1", "ord_1", "ord_1"]);
    // Without the token, a same-origin POST is still 401.
    expect((await cancel({ origin: `http://127.0.0.1:${port}` })).status).toBe(401);
  });

  it("forbids framing on every response, and the page's CSP allows only its nonce-tagged inline code", async () => {
    const answers = [
      await send(port, "/", { headers: { host, cookie } }),
      await send(port, "/api/state", { headers: { host, cookie } }),
      await send(port, "/", { headers: { host } }),
      await send(port, "/", { headers: { host: "evil.example" } }),
      await send(port, `/?token=${dashboard.token}`, { headers: { host } }),
    ];
    for (const res of answers) {
      expect(res.headers["x-frame-options"]).toBe("DENY");
      expect(res.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    }
    const page = answers[0]!;
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'self'");
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(page.body).toContain(`<script nonce="${nonce}">`);
    expect(page.body).toContain(`<style nonce="${nonce}">`);
    const again = await send(port, "/", { headers: { host, cookie } });
    expect(again.headers["content-security-policy"]).not.toContain(nonce);
  });
});

describe("dashboard options", () => {
  it("answers to the --host name and allowedHosts, with the port", async () => {
    const { client } = stubClient();
    const dashboard = await startDashboard({
      client,
      port: 0,
      host: "localhost",
      allowedHosts: ["dash.example", "proxy.example:8443"],
      refreshMs: 60_000,
    });
    try {
      const port = Number(new URL(dashboard.url).port);
      expect(dashboard.url).toBe(`http://localhost:${port}/`);
      const headers = { "x-dashboard-token": dashboard.token };
      const status = async (host: string) =>
        await new Promise<number>((resolve, reject) => {
          // localhost may listen on ::1 only: connect to the name.
          const req = request(
            { host: "localhost", port, path: "/api/state", headers: { ...headers, host } },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on("error", reject);
          req.end();
        });
      expect(await status(`localhost:${port}`)).toBe(200);
      expect(await status(`dash.example:${port}`)).toBe(200);
      expect(await status("proxy.example:8443")).toBe(200);
      expect(await status(`proxy.example:${port}`)).toBe(403);
      expect(await status("dash.example:1")).toBe(403);
    } finally {
      await dashboard.close();
    }
  });

  it("refuses a weak token", async () => {
    const { client } = stubClient();
    await expect(startDashboard({ client, port: 0, token: "short" })).rejects.toThrow(/token/);
  });
});
