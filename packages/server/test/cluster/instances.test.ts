/**
 * Three `crossbook serve` processes on one PostgreSQL schema and one Redis namespace, against the
 * fake Kalshi (REST behind a counting proxy, its signed WebSocket feed direct), with the settings
 * docker-compose.yml uses: the venue's catalog is listed once, not three times; a stream client on
 * each instance receives the same price update once; a sandbox order accepted by one instance rests
 * on the holder of the matching job and a real print fills it once; one resting through one instance
 * is cancelled through another; and when the instance holding the jobs is killed with SIGKILL,
 * others take them over once the lease has expired: the venue is listed again, the feed resumes on
 * every instance's streams, and the resting order's next print fills it once more. What is checked
 * is who does what and how often, never how fast.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamClient } from "../stream/client";
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
    const clients: StreamClient[] = [];
    let keyFolder: string;

    beforeAll(async () => {
      kalshi = await startKalshiFake();
      // The venue's WebSocket needs a signed upgrade: a market-data key the fake accepts.
      const feedKey = await kalshi.feedKey();
      keyFolder = await mkdtemp(path.join(tmpdir(), "crossbook-cluster-"));
      const keyFile = path.join(keyFolder, "kalshi-feed.pem");
      await writeFile(keyFile, feedKey.privateKeyPem, { mode: 0o600 });
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
        // As behind the compose file's proxy: forwarded addresses are believed from loopback only.
        TRUST_PROXY: "127.0.0.1",
        CROSSBOOK_VENUES: "kalshi",
        KALSHI_API_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${target.pathname}`,
        KALSHI_WS_URL: kalshi.wsUrl,
        KALSHI_FEED_KEY_ID: feedKey.keyId,
        KALSHI_FEED_PRIVATE_KEY_FILE: keyFile,
      };
      // One after the other: the first takes every job, the others stand by.
      for (const id of ["one", "two", "three"]) {
        const served = await startServe({ ...env, INSTANCE_ID: id });
        servers.push({ id, server: served.server, url: served.url });
        await waitFor(`${id} ready`, async () => (await json(`${served.url}/readyz`)).status === 200);
      }
    }, 120_000);

    afterAll(async () => {
      for (const client of clients) client.ws.terminate();
      for (const { server } of servers)
        if (server.exitCode === null && server.signalCode === null) server.kill("SIGKILL");
      await kalshi?.close();
      await new Promise((resolve) => proxy?.close(resolve));
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
      if (keyFolder) await rm(keyFolder, { recursive: true, force: true });
    });

    const jobsOf = async (url: string) =>
      (await json(`${url}/readyz`)).body["jobs"] as Record<string, string>;

    /** Keys made through the first instance (every instance knows them): an agent key that trades. */
    let account: { session: string; headers: Record<string, string> } | undefined;
    const makeKey = async (session: string, body: Record<string, unknown>) => {
      const created = await json(`${servers[0]!.url}/v1/api-keys`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${session}` },
        body: JSON.stringify(body),
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body["data"].key as string;
    };
    const authorized = async () => {
      if (account) return account.headers;
      const signup = await json(`${servers[0]!.url}/v1/auth/signup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "cluster@example.com", password: "correct horse battery staple" }),
      });
      const session = signup.body["data"].session.token as string;
      const key = await makeKey(session, {
        name: "bot",
        type: "agent",
        environment: "sandbox",
        permissions: ["read", "trade", "manage_orders"],
      });
      account = { session, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } };
      return account.headers;
    };
    /** Open markets' tickers, each test its own (books and prints of one do not reach another). */
    let known: string[] = [];
    const tickers = () => known;
    const loadTickers = async () => {
      const { body } = await json(`${servers[0]!.url}/v1/markets?venue=kalshi&status=open&limit=5`, {
        headers: await authorized(),
      });
      known = (body["data"] as Body[]).map((m) => (m["id"] as string).slice("kalshi:".length));
      expect(known.length).toBeGreaterThanOrEqual(3);
    };
    /** A sandbox buy at `price` with nothing ahead of it: the fake's book is emptied first. */
    const restingBuy = async (url: string, ticker: string, price: number, amount: number) => {
      kalshi.script.setBook(ticker, { yes: [], no: [] });
      const placed = await json(`${url}/v1/orders`, {
        method: "POST",
        headers: await authorized(),
        body: JSON.stringify({ market_id: `kalshi:${ticker}`, side: "buy", price, amount }),
      });
      expect(placed.status, JSON.stringify(placed.body)).toBe(201);
      expect(placed.body["data"]).toMatchObject({ status: "open", filled_amount: 0 });
      return placed.body["data"].id as string;
    };
    const fillsOf = async (orderId: string) =>
      (await json(`${servers[1]!.url}/v1/orders/${orderId}/fills`, { headers: await authorized() })).body[
        "data"
      ] as Body[];
    const filledOf = async (orderId: string) =>
      (await json(`${servers[1]!.url}/v1/orders/${orderId}`, { headers: await authorized() })).body["data"]
        .filled_amount as number;

    it("runs each cluster job on one instance and lists the venue once, not once per instance", async () => {
      await waitFor("the first listing", () => listings >= 1);
      const jobs = await Promise.all(servers.map((s) => jobsOf(s.url)));
      expect(jobs[0]).toMatchObject({ "catalog sync: kalshi": "running", "live fill poller": "running" });
      expect(jobs[0]).toMatchObject({ "venue feed: kalshi": "running", "sandbox matching": "running" });
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

    it("sends the same price update once to a stream client on each instance", async () => {
      await loadTickers();
      const ticker = tickers()[0]!;
      const marketId = `kalshi:${ticker}`;
      // The free tier's two keys, two stream connections each: the agent key, and one to read.
      const reader = await makeKey(account!.session, { name: "stream", type: "read_only" });
      const keys = [(await authorized()).authorization!.slice("Bearer ".length), reader, reader];
      for (const [index, { url }] of servers.entries()) {
        const key = keys[index]!;
        const client = await StreamClient.connect(`${url.replace("http", "ws")}/v1/prices/stream`, key);
        clients.push(client);
        client.send({ action: "subscribe", market_ids: [marketId] });
        await client.next((m) => m.type === "subscribed");
      }
      // The fake sends the change as two deltas (YES, then NO): each instance may conflate the
      // first into the second, but every client ends on the same book, told once.
      kalshi.script.setBook(ticker, { yes: [[0.37, 50]], no: [[0.6, 40]] });
      const final = (m: { type: string; [field: string]: unknown }) =>
        m.type === "price_update" && m["best_bid"] === 0.37 && m["best_ask"] === 0.4;
      for (const client of clients) await client.next(final, 0, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const client of clients) {
        expect(client.updates(marketId).filter(final)).toHaveLength(1);
        expect(client.updates(marketId).at(-1)).toMatchObject({ best_bid: 0.37, best_ask: 0.4 });
      }
    });

    it("rests an order accepted by a standby instance on the matching job's holder, and fills it once", async () => {
      const ticker = tickers()[1]!;
      const orderId = await restingBuy(servers[1]!.url, ticker, 0.3, 10);
      // A real print of 5 at 0.30, nothing queued ahead: half the order fills, once.
      kalshi.script.printTrade(ticker, { side: "no", count: 5, price: 0.3 });
      await waitFor("the first fill", async () => (await filledOf(orderId)) === 5);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await fillsOf(orderId)).toHaveLength(1);
      expect(await filledOf(orderId)).toBe(5);
    });

    it("cancels through one instance a sandbox order resting through another", async () => {
      const [one, two] = servers;
      const orderId = await restingBuy(one!.url, tickers()[2]!, 0.01, 5);
      const cancelled = await json(`${two!.url}/v1/orders/${orderId}`, {
        method: "DELETE",
        headers: { authorization: (await authorized()).authorization! },
      });
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      const seen = await json(`${one!.url}/v1/orders/${orderId}`, { headers: await authorized() });
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

      // The feed resumed: the survivors' stream clients see the next book change, once each.
      const ticker = tickers()[0]!;
      const survivors = clients.slice(1);
      const from = survivors.map((c) => c.messages.length);
      kalshi.script.setBook(ticker, { yes: [[0.33, 50]], no: [[0.6, 40]] });
      for (const [index, client] of survivors.entries()) {
        await client.next((m) => m.type === "price_update" && m["best_bid"] === 0.33, from[index], 10_000);
      }
      // The order half filled before the kill rests on the new holder: the next print fills the rest.
      const resting = (
        await json(`${rest[0]!.url}/v1/orders?market_id=kalshi:${tickers()[1]!}`, {
          headers: await authorized(),
        })
      ).body["data"] as Body[];
      expect(resting).toHaveLength(1);
      const orderId = resting[0]!["id"] as string;
      await waitFor(
        "the feed to carry prints again",
        async () => {
          kalshi.script.printTrade(tickers()[1]!, { side: "no", count: 5, price: 0.3 });
          return (await filledOf(orderId)) === 10;
        },
        1_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await fillsOf(orderId)).toHaveLength(2);
      expect(await filledOf(orderId)).toBe(10);
    });
  },
);
