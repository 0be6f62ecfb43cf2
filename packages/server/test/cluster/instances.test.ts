/**
 * Three `crossbook serve` processes on one PostgreSQL schema and one Redis namespace, against the
 * fake Kalshi behind a counting proxy: the venue's catalog is listed once, not three times; a sandbox
 * order resting through one instance is cancelled through another; and when the instance holding
 * the jobs is killed with SIGKILL, another takes them over once the lease has expired and lists the
 * venue again. What is checked is who does what and how often, never how fast.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POSTGRES_URL, REDIS_URL, uniqueName } from "../support/backends";
import { startServe } from "../support/serve";
import { until } from "../support/until";

const scaledOut = POSTGRES_URL !== undefined && REDIS_URL !== undefined;

// biome-ignore lint/suspicious/noExplicitAny: the test reads JSON answers loosely
type Body = Record<string, any>;

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Body }> {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Body };
}

/** Waits for `what`, asking every 100 ms (API calls spend the key's 60 requests a minute). */
const waitFor = (what: string, condition: () => boolean | Promise<boolean>, everyMs = 100) =>
  until(condition, { what, timeoutMs: 30_000, everyMs });

describe.runIf(scaledOut)(
  "three instances as one service (processes, PostgreSQL + Redis)",
  { timeout: 180_000 },
  () => {
    let kalshi: KalshiFake;
    let proxy: http.Server;
    /** First pages of catalog listings the fake was asked for (one per sync). */
    let listings = 0;
    const schema = uniqueName("cluster");
    const servers: Array<{ id: string; server: ChildProcess; url: string }> = [];

    beforeAll(async () => {
      kalshi = await startKalshiFake();
      const target = new URL(kalshi.apiUrl);
      proxy = http.createServer((request, response) => {
        const url = new URL(request.url ?? "/", "http://proxy");
        if (url.pathname.endsWith("/trade-api/v2/markets") && !url.searchParams.get("cursor")) listings++;
        const upstream = http.request(
          {
            host: target.hostname,
            port: target.port,
            path: request.url,
            method: request.method,
            headers: request.headers,
          },
          (answer) => {
            response.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(response);
          },
        );
        upstream.on("error", () => response.destroy());
        request.pipe(upstream);
      });
      await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
      const env = {
        PATH: process.env["PATH"],
        HOME: process.env["HOME"],
        DATABASE_URL: POSTGRES_URL,
        DATABASE_SCHEMA: schema,
        REDIS_URL,
        REDIS_KEY_PREFIX: `${schema}:`,
        CROSSBOOK_MASTER_KEY: randomBytes(32).toString("hex"),
        PASSWORD_HASH_COST: "10",
        LOG_LEVEL: "info",
        PORT: "0",
        HOST: "127.0.0.1",
        JOB_LEASE_SECONDS: "3",
        CROSSBOOK_VENUES: "kalshi",
        KALSHI_API_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${target.pathname}`,
        KALSHI_WS_URL: kalshi.wsUrl,
      };
      // One after the other: the first takes every job, the others stand by.
      for (const id of ["one", "two", "three"]) {
        const served = await startServe({ ...env, INSTANCE_ID: id });
        servers.push({ id, server: served.server, url: served.url });
        await waitFor(`${id} ready`, async () => (await json(`${served.url}/readyz`)).status === 200);
      }
    }, 120_000);

    afterAll(async () => {
      for (const { server } of servers)
        if (server.exitCode === null && server.signalCode === null) server.kill("SIGKILL");
      await kalshi?.close();
      await new Promise((resolve) => proxy?.close(resolve));
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    });

    const jobsOf = async (url: string) =>
      (await json(`${url}/readyz`)).body["jobs"] as Record<string, string>;

    /** A sandbox trading key, made through the first instance (every instance knows it). */
    let headers: Record<string, string> | undefined;
    const authorized = async () => {
      if (headers) return headers;
      const url = servers[0]!.url;
      const signup = await json(`${url}/v1/auth/signup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "cluster@example.com", password: "correct horse battery staple" }),
      });
      const created = await json(`${url}/v1/api-keys`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${signup.body["data"].session.token}`,
        },
        body: JSON.stringify({ name: "bot", type: "trading", environment: "sandbox" }),
      });
      headers = { authorization: `Bearer ${created.body["data"].key}`, "content-type": "application/json" };
      return headers;
    };

    it("runs each cluster job on one instance and lists the venue once, not once per instance", async () => {
      await waitFor("the first listing", () => listings >= 1);
      const jobs = await Promise.all(servers.map((s) => jobsOf(s.url)));
      expect(jobs[0]).toMatchObject({ "catalog sync: kalshi": "running", "live fill poller": "running" });
      for (const standby of jobs.slice(1)) {
        expect(Object.values(standby).every((state) => state === "standby")).toBe(true);
      }
      // Every instance knows how the venue's sync went, those that did not list it included (the
      // later ones asked for the venues' health when they started).
      const auth = await authorized();
      await waitFor(
        "markets on every instance",
        async () => {
          for (const { url } of servers) {
            const { body } = await json(`${url}/v1/venues`, { headers: auth });
            if (body["data"]?.[0]?.health?.status !== "ok") return false;
          }
          return true;
        },
        1_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(listings).toBe(1);
    });

    it("cancels through one instance a sandbox order resting through another", async () => {
      const [one, two] = servers;
      const auth = await authorized();
      const markets = await json(`${two!.url}/v1/markets?venue=kalshi&status=open&limit=50`, {
        headers: auth,
      });
      const market = (markets.body["data"] as Body[]).find(
        (m) => m["best_bid"] !== null && m["best_bid"] > 0.05,
      );
      expect(market, "an open market with a bid").toBeDefined();
      const placed = await json(`${one!.url}/v1/orders`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ market_id: market!["id"], side: "buy", price: 0.01, amount: 5 }),
      });
      expect(placed.status, JSON.stringify(placed.body)).toBe(201);
      expect(placed.body["data"].status).toBe("open");
      const cancelled = await json(`${two!.url}/v1/orders/${placed.body["data"].id}`, {
        method: "DELETE",
        headers: { authorization: auth.authorization! },
      });
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      const seen = await json(`${one!.url}/v1/orders/${placed.body["data"].id}`, { headers: auth });
      expect(seen.body["data"].status).toBe("cancelled");
    });

    it("after kill -9 of the jobs' holder, another instance takes them over and lists the venue again", async () => {
      const [holder, ...rest] = servers;
      const before = listings;
      holder!.server.kill("SIGKILL");
      const names = Object.keys(await jobsOf(rest[0]!.url));
      const runnersOf = async () => {
        const jobs = await Promise.all(rest.map((s) => jobsOf(s.url)));
        return names.map((name) => jobs.filter((j) => j[name] === "running").length);
      };
      // Every job has a new holder (each lease expires and is taken on its own, so two instances may
      // share them), and no job runs twice.
      await waitFor("new holders", async () => (await runnersOf()).every((count) => count === 1));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await runnersOf()).toEqual(names.map(() => 1));
      await waitFor("the new holder's listing", () => listings === before + 1);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(listings).toBe(before + 1);
    });
  },
);
