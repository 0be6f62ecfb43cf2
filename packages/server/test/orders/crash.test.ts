/**
 * Crash safety of order placement: a real `crossbook serve` process on a SQLite file, trading in the
 * sandbox against the fake Kalshi, is killed with SIGKILL in the middle of a burst of placements.
 * After a restart, every placement is retried with its idempotency key. Exactly one order exists
 * per key, every key answered before the crash answers with the same order again, and the ledger
 * identity holds for the account.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe } from "../support/serve";

const BURST = 300;

let kalshi: KalshiFake;
let dir: string;
let env: NodeJS.ProcessEnv;
let ticker: string;

beforeAll(async () => {
  kalshi = await startKalshiFake();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-crash-"));
  env = {
    PATH: process.env["PATH"],
    HOME: process.env["HOME"],
    DATABASE_URL: `sqlite:${path.join(dir, "crossbook.db")}`,
    CROSSBOOK_DATA_DIR: dir,
    PASSWORD_HASH_COST: "10",
    LOG_LEVEL: "info",
    PORT: "0",
    HOST: "127.0.0.1",
    CROSSBOOK_VENUES: "kalshi",
    KALSHI_API_URL: kalshi.apiUrl,
    KALSHI_WS_URL: kalshi.wsUrl,
  };
});

/** Every server started, so none outlives a failed test. */
const servers: ChildProcess[] = [];

afterAll(async () => {
  for (const server of servers)
    if (server.exitCode === null && server.signalCode === null) server.kill("SIGKILL");
  await kalshi.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function startServer(): Promise<{ server: ChildProcess; url: string }> {
  const served = await startServe(env);
  servers.push(served.server);
  return served;
}

// biome-ignore lint/suspicious/noExplicitAny: the test reads JSON answers loosely
type Body = Record<string, any>;

async function json(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Body };
}

function bodyOf(i: number) {
  // Alternate resting bids and orders that take the asks at once.
  return i % 2 === 0
    ? { market_id: `kalshi:${ticker}`, side: "buy", price: 0.3, amount: 2 }
    : { market_id: `kalshi:${ticker}`, side: "buy", price: 0.55, amount: 3, time_in_force: "IOC" };
}

describe("kill -9 during a burst of placements", { timeout: 180_000 }, () => {
  it("leaves exactly one order per idempotency key and a balanced ledger", async () => {
    let { server, url } = await startServer();
    const signup = await json(`${url}/v1/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "crash@example.com", password: "correct horse battery staple" }),
    });
    const session = signup.body["data"].session.token as string;
    const accountId = signup.body["data"].account.id as string;
    const created = await json(`${url}/v1/api-keys`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${session}` },
      // An agent key: the burst and its retries fit in its 1,000 requests a minute.
      body: JSON.stringify({
        name: "bot",
        type: "agent",
        permissions: ["read", "trade", "manage_orders"],
        environment: "sandbox",
      }),
    });
    const key = created.body["data"].key as string;
    const headers = { "content-type": "application/json", authorization: `Bearer ${key}` };
    // The catalog syncs at start; trade its first Kalshi market once it is there.
    for (let i = 0; ; i++) {
      const listed = await json(`${url}/v1/markets?venue=kalshi&limit=1`, { headers });
      if (listed.status === 200 && listed.body["data"].length > 0) {
        ticker = listed.body["data"][0].venue_market_id;
        break;
      }
      if (i > 360) throw new Error(`no market: ${JSON.stringify(listed.body)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    // Deep liquidity at 0.55 (YES asks come from NO bids at 0.45), some bids at 0.45.
    kalshi.script.setBook(ticker, { yes: [[0.45, 100]], no: [[0.45, 100_000]] });

    const place = (base: string, i: number) =>
      fetch(`${base}/v1/orders`, {
        method: "POST",
        headers: { ...headers, "idempotency-key": `burst-${i}` },
        body: JSON.stringify(bodyOf(i)),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Body }));

    // The burst; SIGKILL once a fifth of it has been answered.
    const before = new Map<number, string>();
    let killed = false;
    const burst = Array.from({ length: BURST }, (_, i) =>
      place(url, i)
        .then((r) => {
          if (r.status === 201) before.set(i, r.body["data"].id);
          if (!killed && before.size >= BURST / 5) {
            killed = true;
            server.kill("SIGKILL");
          }
        })
        .catch(() => {}),
    );
    await Promise.all(burst);
    if (!killed) server.kill("SIGKILL");
    await new Promise((resolve) =>
      server.exitCode !== null || server.signalCode !== null ? resolve(null) : server.on("exit", resolve),
    );
    expect(before.size).toBeGreaterThan(0);
    expect(before.size).toBeLessThan(BURST);

    ({ server, url } = await startServer());
    try {
      const after = new Map<number, string>();
      for (let i = 0; i < BURST; i += 25) {
        const answers = await Promise.all(Array.from({ length: 25 }, (_, j) => place(url, i + j)));
        answers.forEach((r, j) => {
          expect(r.status, JSON.stringify(r.body)).toBe(201);
          after.set(i + j, r.body["data"].id);
        });
      }
      for (const [i, id] of before) expect(after.get(i), `key burst-${i}`).toBe(id);
      expect(new Set(after.values()).size).toBe(BURST);
      const listed = await json(`${url}/v1/orders?status=all&limit=1`, { headers });
      expect(listed.body["meta"].total).toBe(BURST);
      const balance = (await json(`${url}/v1/balance`, { headers })).body["data"];
      expect(balance.total).toBeCloseTo(balance.available + balance.locked + balance.positions_cost, 6);
    } finally {
      const exited = new Promise((resolve) => server.on("exit", resolve));
      server.kill("SIGTERM");
      await exited;
    }

    // The ledger identity, read from the file after the server stopped.
    const db = new BetterSqlite3(path.join(dir, "crossbook.db"), { readonly: true });
    try {
      const b = db
        .prepare("select * from balances where account_id = ? and environment = 'sandbox'")
        .get(accountId) as Record<string, number>;
      const cost = (
        db
          .prepare("select coalesce(sum(cost_basis), 0) as c from positions where account_id = ?")
          .get(accountId) as {
          c: number;
        }
      ).c;
      expect(b["available"]! + b["locked"]! + cost).toBe(
        b["deposits"]! - b["withdrawals"]! - b["fees"]! + b["realized_pnl"]!,
      );
      const locked = (
        db
          .prepare(
            "select coalesce(sum(locked), 0) as l from orders where account_id = ? and status in ('open','pending')",
          )
          .get(accountId) as { l: number }
      ).l;
      expect(b["locked"]).toBe(locked);
      const perKey = db
        .prepare("select count(*) as n from idempotency_keys where account_id = ?")
        .get(accountId) as { n: number };
      expect(perKey.n).toBe(BURST);
      // Every created order has its order.created event, once.
      const created = db.prepare("select count(*) as n from events where type = 'order.created'").get() as {
        n: number;
      };
      expect(created.n).toBe(BURST);
      // The burst both rested orders and filled some against the venue's book.
      const fills = db.prepare("select count(*) as n from fills").get() as { n: number };
      expect(fills.n).toBeGreaterThan(0);
      const resting = db.prepare("select count(*) as n from orders where status = 'open'").get() as {
        n: number;
      };
      expect(resting.n).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });
});
