/**
 * Webhook chaos: a real `crossbook serve` process on a SQLite file delivers a burst of 10,000 events
 * (2,500 for each of 4 accounts, one webhook each) to a real HTTPS receiver in this process, and is
 * killed with SIGKILL again and again while it does: half the kills from inside the receiver while
 * it holds a delivery unanswered (the attempt is certainly in flight and its success never
 * recorded), the others at a random moment (fan-out, claim, send, or recording the outcome). The
 * events are recorded by this process, through the service's own store and outbox, into the same
 * file while the server runs, dies and restarts.
 *
 * The receiver's ledger then shows, per webhook: every event arrived at least once; arrivals follow
 * the recorded order (each arrival is the latest event again or the next one, never an older one or
 * a gap); a repeated arrival carries the delivery id of the first (receivers deduplicate on it);
 * nothing reached another account's webhook; every signature verifies. The file agrees: 10,000
 * deliveries, all `success`, with the delivery ids the receiver saw.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { generate } from "selfsigned";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config";
import { Outbox } from "../../src/events/outbox";
import { systemClock } from "../../src/infra/clock";
import { openStore, type Store } from "../../src/infra/db/store";
import { verifySpecSignature } from "../../src/webhooks/signing";

const BIN = path.resolve(__dirname, "../../bin/crossbook.mjs");
const ACCOUNTS = 4;
const PER_ACCOUNT = 2_500;
const TOTAL = ACCOUNTS * PER_ACCOUNT;
/** Events per recording transaction, and the pause between transactions (the burst lasts ~20 s). */
const BATCH = 50;
const PACE_MS = 100;
const MIN_KILLS = 4;
/** Arrivals a server life delivers before it is killed: at least MIN_LIFE, up to twice that. */
const MIN_LIFE = 1_000;
const lifeShare = () => MIN_LIFE + Math.floor(Math.random() * MIN_LIFE);
const LEASE_SECONDS = 6;
const DRAIN_TIMEOUT_MS = 120_000;
const MASTER_KEY = "3c".repeat(32);

type Pem = { key: string; cert: string };

interface Arrival {
  /** The webhook the request came to (the n of /hook/<n>), which is account n's. */
  hook: number;
  deliveryId: string;
  /** From data.transfer_id `trf_<account>_<n>`: the event's account and its place in that account's order. */
  account: number;
  n: number;
  /** Which server process sent it (0 = the first). */
  life: number;
  at: number;
}

interface Running {
  proc: ChildProcess;
  url: string;
  life: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  killedByUs: boolean;
  output: string[];
}

let dir: string;
let caFile: string;
let env: NodeJS.ProcessEnv;
let receiver: Server;
let receiverPort: number;

const secrets: string[] = Array.from({ length: ACCOUNTS }, (_, i) => `chaos-webhook-secret-${i}-0123456789`);
const ledger: Arrival[] = [];
const firsts = new Map<string, Arrival>();
const problems: string[] = [];
let badSignatures = 0;
let life = 0;
/** Set while a kill from inside the receiver is armed: the next request is held, the server killed. */
let killOnNextRequest: ((deliveryId: string) => Promise<void>) | undefined;

async function makeCa(): Promise<{ ca: Pem; leaf: Pem }> {
  const ca = await generate([{ name: "commonName", value: "crossbook chaos test CA" }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const caPem = { key: ca.private, cert: ca.cert };
  const leaf = await generate([{ name: "commonName", value: "127.0.0.1" }], {
    keyType: "ec",
    algorithm: "sha256",
    ca: caPem,
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] },
    ],
  });
  return { ca: caPem, leaf: { key: leaf.private, cert: leaf.cert } };
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function startReceiver(pem: Pem): Promise<void> {
  receiver = createServer({ key: pem.key, cert: pem.cert, keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const hook = Number(/^\/hook\/(\d+)$/.exec(req.url ?? "")?.[1] ?? Number.NaN);
      const deliveryId = header(req.headers["x-service-delivery-id"]) ?? "";
      const secret = secrets[hook];
      if (
        secret === undefined ||
        !verifySpecSignature(
          secret,
          header(req.headers["x-service-timestamp"]),
          raw,
          header(req.headers["x-service-signature"]),
        )
      ) {
        badSignatures++;
        res.writeHead(401).end();
        return;
      }
      let body: { id?: string; type?: string; data?: { transfer_id?: string } };
      try {
        body = JSON.parse(raw);
      } catch {
        problems.push(`unparsable body on ${req.url}: ${raw.slice(0, 100)}`);
        res.writeHead(400).end();
        return;
      }
      const match = /^trf_(\d+)_(\d{5})$/.exec(body.data?.transfer_id ?? "");
      if (!match || body.id !== deliveryId || body.type !== "deposit.completed") {
        problems.push(`unexpected delivery ${deliveryId} on ${req.url}: ${raw.slice(0, 200)}`);
        res.writeHead(400).end();
        return;
      }
      const arrival: Arrival = {
        hook,
        deliveryId,
        account: Number(match[1]),
        n: Number(match[2]),
        life,
        at: Date.now(),
      };
      ledger.push(arrival);
      const key = `${hook}:${arrival.n}`;
      if (!firsts.has(key)) firsts.set(key, arrival);
      const kill = killOnNextRequest;
      if (kill) {
        // Hold the answer until the sender is dead: this attempt's success is never recorded.
        killOnNextRequest = undefined;
        void kill(deliveryId).finally(() => res.destroy());
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end('{"received":true}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    receiver.once("error", reject);
    receiver.listen(0, "127.0.0.1", () => resolve());
  });
  receiverPort = (receiver.address() as AddressInfo).port;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-webhook-chaos-"));
  const { ca, leaf } = await makeCa();
  caFile = path.join(dir, "ca.pem");
  fs.writeFileSync(caFile, ca.cert);
  await startReceiver(leaf);
  env = {
    PATH: process.env["PATH"],
    HOME: process.env["HOME"],
    DATABASE_URL: `sqlite:${path.join(dir, "crossbook.db")}`,
    CROSSBOOK_DATA_DIR: dir,
    CROSSBOOK_VENUES: "none",
    CROSSBOOK_MASTER_KEY: MASTER_KEY,
    PASSWORD_HASH_COST: "10",
    LOG_LEVEL: "info",
    PORT: "0",
    HOST: "127.0.0.1",
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_LEASE_SECONDS: String(LEASE_SECONDS),
    NODE_EXTRA_CA_CERTS: caFile,
  };
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

async function startServer(): Promise<Running> {
  const proc = spawn(process.execPath, [BIN, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
  const running: Running = {
    proc,
    url: "",
    life,
    killedByUs: false,
    output: [],
    exited: new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal }))),
  };
  let pending = "";
  const onData = (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      running.output.push(line);
      if (running.output.length > 200) running.output.shift();
      const match = /"address":"(http:\/\/[^"]+)"/.exec(line);
      if (match && !running.url) running.url = match[1]!;
    }
  };
  proc.stdout!.on("data", onData);
  proc.stderr!.on("data", onData);
  void running.exited.then(({ code, signal }) => {
    if (!running.killedByUs) {
      problems.push(`server life ${running.life} exited on its own (${code ?? signal}):\n${tail(running)}`);
    }
  });
  const up = await waitFor(() => running.url !== "" || proc.exitCode !== null, 30_000);
  if (!up || !running.url) throw new Error(`server did not start:\n${tail(running)}`);
  return running;
}

function tail(running: Running): string {
  return running.output.slice(-30).join("\n");
}

async function killServer(running: Running): Promise<void> {
  running.killedByUs = true;
  running.proc.kill("SIGKILL");
  const { signal } = await running.exited;
  expect(signal).toBe("SIGKILL");
}

// biome-ignore lint/suspicious/noExplicitAny: the test reads JSON answers loosely
type Body = Record<string, any>;

async function json(url: string, init: RequestInit & { token?: string } = {}) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (init.token) headers["authorization"] = `Bearer ${init.token}`;
  const response = await fetch(url, { ...init, headers });
  return { status: response.status, body: (await response.json()) as Body };
}

/** Four accounts, a sandbox read-only key each, and a webhook each on the receiver. */
async function setUp(url: string): Promise<Array<{ accountId: string; webhookId: string }>> {
  const accounts: Array<{ accountId: string; webhookId: string }> = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const signup = await json(`${url}/v1/auth/signup`, {
      method: "POST",
      body: JSON.stringify({ email: `chaos${i}@example.com`, password: "correct horse battery staple" }),
    });
    expect(signup.status, JSON.stringify(signup.body)).toBe(201);
    const session = signup.body["data"].session.token as string;
    const created = await json(`${url}/v1/api-keys`, {
      method: "POST",
      token: session,
      body: JSON.stringify({ name: "hooks", type: "read_only", environment: "sandbox" }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const webhook = await json(`${url}/v1/webhooks`, {
      method: "POST",
      token: created.body["data"].key,
      body: JSON.stringify({
        url: `https://127.0.0.1:${receiverPort}/hook/${i}`,
        events: ["deposit.completed"],
        secret: secrets[i],
      }),
    });
    expect(webhook.status, JSON.stringify(webhook.body)).toBe(200);
    accounts.push({ accountId: signup.body["data"].account.id, webhookId: webhook.body["data"].id });
  }
  return accounts;
}

/** Records the 10,000 events in this process, BATCH per transaction, accounts shuffled. */
async function recordBurst(store: Store, accountIds: string[], progress: { recorded: number }) {
  const outbox = new Outbox(store.dialect, systemClock);
  const order = Array.from({ length: TOTAL }, (_, i) => i % ACCOUNTS);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const next = new Array<number>(ACCOUNTS).fill(0);
  for (let start = 0; start < TOTAL; start += BATCH) {
    await store.db.transaction().execute(async (trx) => {
      for (const account of order.slice(start, start + BATCH)) {
        const n = ++next[account]!;
        await outbox.record(trx, {
          type: "deposit.completed",
          accountId: accountIds[account]!,
          environment: "sandbox",
          data: {
            transfer_id: `trf_${account}_${String(n).padStart(5, "0")}`,
            amount: n,
            currency: "USDC",
            balance: n,
            environment: "sandbox",
            completed_at: new Date().toISOString(),
          },
        });
      }
    });
    progress.recorded += BATCH;
    await sleep(PACE_MS);
  }
}

interface Kill {
  life: number;
  mode: "mid-request" | "random";
  /** Arrivals during the life that ended with this kill. */
  arrivals: number;
  /** Recorded events when it happened. */
  recorded: number;
  /** For a mid-request kill: the delivery held unanswered. */
  heldDelivery?: string;
}

describe("webhook delivery under repeated kill -9", { timeout: 300_000 }, () => {
  it("delivers every event at least once, in order per webhook, duplicates only under the same delivery id", async () => {
    const started = Date.now();
    let running = await startServer();
    const accounts = await setUp(running.url);

    // The burst, from this process, into the file the server is using.
    const config = loadConfig(env);
    const store = await openStore(config.database);
    const progress = { recorded: 0 };
    const burst = recordBurst(
      store,
      accounts.map((a) => a.accountId),
      progress,
    );

    const complete = () => firsts.size === TOTAL;
    const kills: Kill[] = [];
    let stopCode: number | null = null;
    try {
      // Kill after a random share of the deliveries, all through the burst, until what is left is
      // less than the next life's share: the last life delivers the rest.
      for (let share = lifeShare(); firsts.size + share < TOTAL; share = lifeShare()) {
        const base = ledger.length;
        // Let this life deliver (leases left by the previous one expire after LEASE_SECONDS).
        const delivered = await waitFor(() => ledger.length - base >= share, 60_000);
        if (!delivered) throw new Error(`life ${life} delivered ${ledger.length - base} in 60 s`);
        const mode: Kill["mode"] = kills.length % 2 === 0 ? "mid-request" : "random";
        const kill: Kill = { life, mode, arrivals: 0, recorded: progress.recorded };
        if (mode === "mid-request") {
          const victim = running;
          const held = new Promise<void>((resolve) => {
            killOnNextRequest = async (deliveryId) => {
              kill.heldDelivery = deliveryId;
              await killServer(victim);
              resolve();
            };
          });
          // If nothing arrives (everything delivered), kill anyway.
          const arrived = await Promise.race([held.then(() => true), sleep(3_000).then(() => false)]);
          if (!arrived) {
            killOnNextRequest = undefined;
            kill.mode = "random";
            await killServer(victim);
          }
        } else {
          await sleep(Math.floor(Math.random() * 200));
          await killServer(running);
        }
        kill.arrivals = ledger.length - base;
        kills.push(kill);
        life++;
        running = await startServer();
      }
      await burst;
      // The last life delivers the rest.
      const drained = await waitFor(complete, DRAIN_TIMEOUT_MS);
      if (!drained) {
        const missing = Array.from({ length: ACCOUNTS }, (_, hook) => {
          let got = 0;
          for (let n = 1; n <= PER_ACCOUNT; n++) if (firsts.has(`${hook}:${n}`)) got++;
          return `hook ${hook}: ${got}/${PER_ACCOUNT}`;
        });
        throw new Error(`not everything arrived in time: ${missing.join(", ")}\n${tail(running)}`);
      }
    } finally {
      killOnNextRequest = undefined;
      await burst.catch(() => {});
      await store.close();
      if (running.proc.exitCode === null && running.proc.signalCode === null) {
        running.killedByUs = true;
        running.proc.kill("SIGTERM");
        stopCode = (await running.exited).code;
      }
    }
    // The last life stopped gracefully.
    expect(stopCode).toBe(0);
    const elapsed = Date.now() - started;

    // --- the ledger -------------------------------------------------------------------------------
    expect(problems).toEqual([]);
    expect(badSignatures).toBe(0);
    expect(kills.length).toBeGreaterThanOrEqual(MIN_KILLS);
    for (const kill of kills) expect(kill.arrivals, `life ${kill.life}`).toBeGreaterThanOrEqual(MIN_LIFE);
    // Some while the burst was still being recorded (typically 2 or 3).
    expect(kills.filter((k) => k.recorded < TOTAL).length).toBeGreaterThanOrEqual(1);

    let duplicates = 0;
    for (let hook = 0; hook < ACCOUNTS; hook++) {
      const arrivals = ledger.filter((a) => a.hook === hook);
      // Nothing of another account's.
      expect(arrivals.filter((a) => a.account !== hook)).toEqual([]);
      // In order: an arrival is never ahead of the next event due (no gaps). After a kill the
      // dispatcher resends what it had sent but not yet recorded, so an arrival may also replay
      // recent events again, in order and under their first delivery ids.
      let latest = 0;
      const violations: string[] = [];
      const idOf = new Map<number, string>();
      for (const a of arrivals) {
        if (a.n > latest + 1) {
          violations.push(`event ${a.n} arrived after ${latest} (life ${a.life}, ${a.deliveryId})`);
        }
        latest = Math.max(latest, a.n);
        const first = idOf.get(a.n);
        if (first === undefined) idOf.set(a.n, a.deliveryId);
        else {
          duplicates++;
          if (first !== a.deliveryId) {
            violations.push(`event ${a.n} arrived as ${first} and again as ${a.deliveryId}`);
          }
        }
      }
      expect(violations, `hook ${hook}`).toEqual([]);
      // Every event, at least once; first arrivals strictly in the recorded order.
      const order = arrivals.filter((a) => firsts.get(`${hook}:${a.n}`) === a).map((a) => a.n);
      expect(order).toEqual(Array.from({ length: PER_ACCOUNT }, (_, i) => i + 1));
    }
    // One delivery id per (webhook, event), never shared between events.
    const ids = new Set(ledger.map((a) => a.deliveryId));
    expect(ids.size).toBe(TOTAL);
    // A delivery held unanswered when its sender died was sent again, under the same id.
    for (const kill of kills.filter((k) => k.heldDelivery)) {
      const again = ledger.filter((a) => a.deliveryId === kill.heldDelivery);
      expect(again.length, `held delivery ${kill.heldDelivery}`).toBeGreaterThanOrEqual(2);
      expect(again.at(-1)!.life).toBeGreaterThan(kill.life);
      // Not before the dead sender's lease ran out (it was claimed just before it first arrived).
      expect(again[1]!.at - again[0]!.at).toBeGreaterThanOrEqual((LEASE_SECONDS - 2) * 1000);
    }

    // --- the file ---------------------------------------------------------------------------------
    const db = new BetterSqlite3(path.join(dir, "crossbook.db"), { readonly: true });
    try {
      const rows = db
        .prepare(
          `select d.id, d.webhook_id, d.status, e.data
             from webhook_deliveries d join events e on e.id = d.event_id`,
        )
        .all() as Array<{ id: string; webhook_id: string; status: string; data: string }>;
      expect(rows.length).toBe(TOTAL);
      expect(rows.filter((r) => r.status !== "success")).toEqual([]);
      const hookOf = new Map(accounts.map((a, i) => [a.webhookId, i]));
      for (const row of rows) {
        const n = Number(/_(\d{5})$/.exec(JSON.parse(row.data).transfer_id)![1]);
        const first = firsts.get(`${hookOf.get(row.webhook_id)}:${n}`);
        expect(first?.deliveryId, `delivery ${row.id}`).toBe(row.id);
      }
      const events = db
        .prepare("select count(*) as n from events where type = 'deposit.completed'")
        .get() as {
        n: number;
      };
      expect(events.n).toBe(TOTAL);
      const statuses = db.prepare("select status from webhooks").pluck().all();
      expect(statuses).toEqual(Array(ACCOUNTS).fill("active"));
    } finally {
      db.close();
    }

    const firstAt = ledger[0]!.at;
    const lastFirstAt = Math.max(...[...firsts.values()].map((a) => a.at));
    console.log(
      `webhook chaos: ${TOTAL} events, ${ledger.length} arrivals (${duplicates} duplicates), ` +
        `${kills.length} kills (${kills.map((k) => `${k.mode} after ${k.arrivals} arrivals, ${k.recorded} recorded`).join("; ")}), ` +
        `first to last delivery ${((lastFirstAt - firstAt) / 1000).toFixed(1)} s, whole run ${(elapsed / 1000).toFixed(1)} s`,
    );
  });
});
