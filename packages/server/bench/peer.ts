/**
 * bench/peer: crossbook against pmxt (npm `pmxt-core`, the server behind `pmxtjs`), both pointed at
 * the same fake Polymarket and Kalshi, measured in the same run on the same machine.
 *
 * Processes: the fake venues (their own child), `crossbook serve` as production runs it (SQLite, the
 * venue feeds, catalog sync; its own child, built by scripts/bench.mjs with the bench), and pmxt's
 * sidecar (`pmxt-server`, which pmxtjs starts and talks to over HTTP and WebSocket) twice: with its
 * throttle off (`enableRateLimit = false`) and as shipped. pmxt is installed at run time into a
 * temporary folder with npm (pinned in bench/peer/pmxt.ts; never a dependency of ours, nothing of it
 * committed, the folder removed at the end). pmxt's venue URLs are set where it has a setting and
 * redirected at load time where it hard-codes them; the output lists each redirect.
 *
 * Jobs (the same market on both sides):
 *   book-<venue>     crossbook GET /v1/prices?include_orderbook=true&depth=100 (the YES book);
 *                    pmxt fetchOrderBook (YES outcome)
 *   price-<venue>    crossbook GET /v1/prices (price, best bid/ask); pmxt has no price call: its live
 *                    bid/ask is fetchOrderBook
 *   markets-kalshi   the first 100 markets: GET /v1/markets?venue=kalshi&limit=100; fetchMarkets({limit: 100})
 *   history-<venue>  the last 24 one-hour candles: GET /v1/prices/history?interval=1h&limit=24;
 *                    fetchOHLCV(outcome, {resolution: "1h", limit: 24})
 *   freshness-<venue> a book change on the fake (a new best bid) until a client sees it: crossbook's
 *                    price stream against pmxt's watchOrderBook on the sidecar's /ws; `--samples`
 *                    changes a side (default 10), in blocks crossbook, pmxt, pmxt, crossbook with one
 *                    side's client connected at a time (pmxt's Kalshi watcher subscribes again on every
 *                    update it delivers, which floods the fake and this process); the median
 *
 * Each request job: a warm-up of each side, then `--rounds` rounds (default 3) of `--seconds` each
 * (default 10) per side, alternating which side goes first, `--connections` keep-alive connections
 * (default 32) from autocannon in this process. Printed per run: requests/s, latency p50/p99, and the
 * CPU time per request of the server process (from /proc) and of the fake venues' process. The
 * figure is the median over rounds of crossbook's requests/s over pmxt's (throttle off), each
 * counting only answers that succeeded (a side that fails every request has none). Before the
 * rounds both sides are asked once and their answers compared (best bid/ask of a book, the number of
 * markets, candles); disagreements are printed. At the end pmxt as shipped is run once per job
 * (`--shipped-seconds`, default 3), for information.
 *
 * Targets (issue 26): book >= 5x on both venues, markets >= 2x, history >= 1.5x, freshness <= 10 ms
 * median on both venues; price, as book. Loopback favours the side that calls the venue on every
 * request (pmxt): a venue round trip here costs well under a millisecond.
 *
 *   npm run bench:peer [-- --seconds 10 --rounds 3 --connections 32 --samples 10 --jobs book-kalshi,markets-kalshi]
 *                      [-- --profile <dir>]   (CPU profiles of the crossbook and pmxt servers)
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import WebSocket from "ws";
import { installPmxt, PMXT_VERSION, type Sidecar, startSidecar } from "./peer/pmxt";
import { arg, loaderArgs } from "./support/child";
import { median } from "./support/compare";

const ROUNDS = Math.max(1, arg("rounds", 3));
const SECONDS = arg("seconds", 10);
const CONNECTIONS = arg("connections", 32);
const WARMUP_SECONDS = arg("warmup", 2);
const SHIPPED_SECONDS = arg("shipped-seconds", 3);
/**
 * Connections for pmxt as shipped: its throttle passes one venue call per 100-200 ms whatever the
 * concurrency, and more connections only queue behind it (and drain after the run).
 */
const SHIPPED_CONNECTIONS = Math.min(CONNECTIONS, 8);
const SAMPLES = arg("samples", 10);
const FRESH_TIMEOUT_MS = arg("fresh-timeout", 2_000);
/** `--profile <dir>`: the crossbook and pmxt servers write V8 CPU profiles there (--cpu-prof). */
const PROFILE_DIR = (() => {
  const i = process.argv.indexOf("--profile");
  return i >= 0 ? path.resolve(process.argv[i + 1]!) : undefined;
})();
const profileFlags = (name: string) =>
  PROFILE_DIR ? ["--cpu-prof", "--cpu-prof-dir", PROFILE_DIR, "--cpu-prof-name", `${name}.cpuprofile`] : [];
const JOBS_ASKED = (() => {
  const i = process.argv.indexOf("--jobs");
  return i >= 0 ? new Set(process.argv[i + 1]!.split(",")) : undefined;
})();

const SCRIPT = fileURLToPath(import.meta.url);
type Venue = "kalshi" | "polymarket";

// ------------------------------------------------------------------------------------------------
// Child: the fake venues

interface VenuesReady {
  cmd: "ready";
  kalshi: { apiUrl: string; wsUrl: string };
  polymarket: { gammaUrl: string; clobUrl: string; dataUrl: string; wsUrl: string };
  feedKey: { keyId: string; file: string; privateKeyPem: string };
  markets: {
    kalshi: { ticker: string };
    polymarket: { conditionId: string; yesTokenId: string; slug: string };
  };
}

async function venuesChild(): Promise<void> {
  const { startKalshiFake } = await import("@crossbook/fakes/kalshi");
  const { startPolymarketFake } = await import("@crossbook/fakes/polymarket");
  const { DEFAULT_WORLD } = await import("@crossbook/fakes/world");
  const { generatedMarkets, KALSHI_MARKET, kalshiBook, polymarketBook } = await import("./peer/world");
  const world = [...DEFAULT_WORLD, ...generatedMarkets()];
  const kalshi = await startKalshiFake({ world });
  const polymarket = await startPolymarketFake({ world });
  const key = await kalshi.feedKey();
  const file = path.join(process.env["BENCH_PEER_DIR"]!, "kalshi-feed.pem");
  fs.writeFileSync(file, key.privateKeyPem, { mode: 0o600 });
  const twin = world.find((m) => m.venue === "kalshi" && m.key === KALSHI_MARKET)?.sameAs;
  if (!twin) throw new Error(`bench/peer: ${KALSHI_MARKET} has no Polymarket twin in the world`);
  const pm = polymarket.script.market(twin);
  process.on("message", (message: { cmd: string; id: number; venue: Venue; bid: number }) => {
    if (message.cmd !== "book") return;
    if (message.venue === "kalshi") kalshi.script.setBook(KALSHI_MARKET, kalshiBook(message.bid));
    else polymarket.script.setBook(pm.yesTokenId, polymarketBook(message.bid));
    process.send!({ cmd: "booked", id: message.id });
  });
  process.once("SIGTERM", () => {
    void Promise.allSettled([kalshi.close(), polymarket.close()]).finally(() => process.exit(0));
  });
  const ready: VenuesReady = {
    cmd: "ready",
    kalshi: { apiUrl: kalshi.apiUrl, wsUrl: kalshi.wsUrl },
    polymarket: {
      gammaUrl: polymarket.gammaUrl,
      clobUrl: polymarket.clobUrl,
      dataUrl: polymarket.dataUrl,
      wsUrl: polymarket.wsUrl,
    },
    feedKey: { keyId: key.keyId, file, privateKeyPem: key.privateKeyPem },
    markets: {
      kalshi: { ticker: KALSHI_MARKET },
      polymarket: { conditionId: pm.conditionId, yesTokenId: pm.yesTokenId, slug: pm.slug },
    },
  };
  process.send!(ready);
}

// ------------------------------------------------------------------------------------------------
// Child: crossbook serve

async function crossbookChild(): Promise<void> {
  const { loadConfig } = await import("../src/config");
  const { serve } = await import("../src/serve");
  const env = JSON.parse(process.env["BENCH_PEER_CROSSBOOK_ENV"]!) as Record<string, string>;
  await serve(loadConfig(env), {
    async onListening({ services, address }) {
      // An account whose limits the run cannot exhaust (the limiter still counts every request).
      const account = await services.accounts.create({
        email: "bench-peer@example.com",
        password: "bench peer password 123",
      });
      await services.accounts.update(account.id, {
        tier: "enterprise",
        plan: "enterprise",
        rate_limit_per_minute: 100_000_000,
      });
      const { secret } = await services.apiKeys.create(account.id, { name: "bench/peer", type: "read_only" });
      process.send!({ cmd: "ready", url: address, key: secret });
    },
  });
}

// ------------------------------------------------------------------------------------------------
// Parent: processes

function startChild(mode: string, env: Record<string, string>, nodeFlags: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeFlags, ...loaderArgs(SCRIPT), SCRIPT, "--child", mode], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

function nextMessage<T>(child: ChildProcess, cmd: string, what: string, timeoutMs = 120_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bench/peer: ${what} did not start`)), timeoutMs);
    const onMessage = (message: { cmd: string }) => {
      if (message.cmd !== cmd) return;
      cleanup();
      resolve(message as T);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`bench/peer: ${what} exited with ${code}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system) a process has used, from /proc; undefined where there is none. */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ------------------------------------------------------------------------------------------------
// Parent: requests

interface Target {
  method: "GET" | "POST";
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** What it is, as printed. */
  label: string;
}

interface Sides {
  crossbook: { url: string; key: string; pid: number };
  pmxt: Sidecar;
  shipped: Sidecar;
  venuesPid: number;
}

function crossbookGet(sides: Sides, pathAndQuery: string): Target {
  return {
    method: "GET",
    url: `${sides.crossbook.url}${pathAndQuery}`,
    headers: { authorization: `Bearer ${sides.crossbook.key}` },
    label: `GET ${pathAndQuery}`,
  };
}

function pmxtCall(sidecar: Sidecar, exchange: Venue, method: string, args: unknown[]): Target {
  // As pmxtjs calls the sidecar: POST /api/<exchange>/<method> with {args}.
  return {
    method: "POST",
    url: `${sidecar.url}/api/${exchange}/${method}`,
    headers: { "content-type": "application/json", "x-pmxt-access-token": sidecar.token },
    body: JSON.stringify({ args }),
    label: `${method}(${args.map((a) => JSON.stringify(a)).join(", ")})`,
  };
}

async function ask(target: Target): Promise<{ status: number; body: unknown }> {
  const response = await fetch(target.url, {
    method: target.method,
    headers: target.headers,
    ...(target.body ? { body: target.body } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, body };
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  failed: number;
  /** ms of the server's CPU per request answered. */
  cpuMs: number | undefined;
  venueCpuMs: number | undefined;
}

async function load(
  target: Target,
  seconds: number,
  serverPid: number | undefined,
  venuesPid: number,
  connections = CONNECTIONS,
) {
  const cpu0 = cpuSeconds(serverPid);
  const venue0 = cpuSeconds(venuesPid);
  const result = await autocannon({
    url: target.url,
    method: target.method,
    headers: target.headers,
    ...(target.body ? { body: target.body } : {}),
    connections,
    pipelining: 1,
    duration: seconds,
    timeout: 30,
  });
  const cpu1 = cpuSeconds(serverPid);
  const venue1 = cpuSeconds(venuesPid);
  const answered = result.requests.total;
  const perRequest = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined || answered === 0 ? undefined : ((b - a) * 1000) / answered;
  const run: Run = {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: answered,
    failed: result.non2xx + result.errors + result.timeouts,
    cpuMs: perRequest(cpu0, cpu1),
    venueCpuMs: perRequest(venue0, venue1),
  };
  await sleep(200);
  return run;
}

const fmtRps = (v: number) => (v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(1));
const fmtMs = (v: number | undefined) =>
  v === undefined ? "n/a" : v >= 100 ? v.toFixed(0) : v.toFixed(v < 1 ? 3 : 1);
/** autocannon's latencies are whole milliseconds: 0 is under one. */
const fmtLatency = (v: number) => (v < 1 ? "<1" : fmtMs(v));
const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");

function runLine(label: string, run: Run): string {
  return (
    `${label.padEnd(22)} ${fmtRps(run.rps).padStart(8)} req/s  p50 ${fmtLatency(run.p50).padStart(4)} ms  p99 ${fmtLatency(run.p99).padStart(4)} ms  ` +
    `CPU ${fmtMs(run.cpuMs)} ms/req (venues ${fmtMs(run.venueCpuMs)})` +
    (run.failed > 0 ? `  ${run.failed} of ${run.requests} failed` : "")
  );
}

// ------------------------------------------------------------------------------------------------
// Parent: answers compared

type Check = (crossbook: unknown, pmxt: unknown) => { line: string; pmxtFailed?: string };

const num = (v: unknown) => (typeof v === "number" ? v : typeof v === "string" ? Number(v) : Number.NaN);
const same = (a: number | null, b: number | null) =>
  (a === null && b === null) || (a !== null && b !== null && Math.abs(a - b) < 1e-9);
const show = (v: number | null) => (v === null ? "none" : String(v));

function pmxtData(body: unknown): { data?: unknown; error?: string } {
  const b = body as { success?: boolean; data?: unknown; error?: unknown };
  if (b && b.success === true) return { data: b.data };
  const error = b?.error as { message?: string } | string | undefined;
  return {
    error: typeof error === "string" ? error : (error?.message ?? JSON.stringify(body).slice(0, 200)),
  };
}

/** pmxt's book top: {bids: [{price}], asks: [{price}]}, best first. */
function pmxtTop(data: unknown): { bid: number | null; ask: number | null } {
  const book = data as { bids?: Array<{ price: unknown }>; asks?: Array<{ price: unknown }> };
  const bid = book?.bids?.length ? Math.max(...book.bids.map((l) => num(l.price))) : null;
  const ask = book?.asks?.length ? Math.min(...book.asks.map((l) => num(l.price))) : null;
  return { bid, ask };
}

function bookCheck(marketId: string, fromBook: boolean): Check {
  return (cb, pm) => {
    const entry = (
      cb as {
        data?: Record<
          string,
          {
            best_bid: number | null;
            best_ask: number | null;
            orderbook?: { bids: number[][]; asks: number[][] } | null;
          }
        >;
      }
    )?.data?.[marketId];
    let cbTop: { bid: number | null; ask: number | null };
    if (fromBook) {
      const book = entry?.orderbook;
      cbTop = { bid: book?.bids[0]?.[0] ?? null, ask: book?.asks[0]?.[0] ?? null };
    } else cbTop = { bid: entry?.best_bid ?? null, ask: entry?.best_ask ?? null };
    const p = pmxtData(pm);
    if (p.error !== undefined) return { line: `pmxt failed: ${p.error}`, pmxtFailed: p.error };
    const pmTop = pmxtTop(p.data);
    const levels = (p.data as { bids?: unknown[]; asks?: unknown[] }) ?? {};
    const cbLevels = entry?.orderbook
      ? ` (levels: crossbook ${entry.orderbook.bids.length}/${entry.orderbook.asks.length}, pmxt ${levels.bids?.length ?? 0}/${levels.asks?.length ?? 0})`
      : "";
    if (same(cbTop.bid, pmTop.bid) && same(cbTop.ask, pmTop.ask))
      return { line: `same best bid/ask on both: ${show(cbTop.bid)} / ${show(cbTop.ask)}${cbLevels}` };
    return {
      line: `DISAGREE: best bid/ask crossbook ${show(cbTop.bid)} / ${show(cbTop.ask)}, pmxt ${show(pmTop.bid)} / ${show(pmTop.ask)}${cbLevels}`,
    };
  };
}

const marketsCheck: Check = (cb, pm) => {
  const cbCount = ((cb as { data?: unknown[] })?.data ?? []).length;
  const p = pmxtData(pm);
  if (p.error !== undefined) return { line: `pmxt failed: ${p.error}`, pmxtFailed: p.error };
  const list = (p.data as Array<{ description?: string }>) ?? [];
  const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
  return {
    line: `markets: crossbook ${cbCount} (${bytes(cb)} bytes), pmxt ${list.length} (${bytes(pm)} bytes)`,
  };
};

const historyCheck: Check = (cb, pm) => {
  const candles = ((cb as { data?: Array<{ close: number }> })?.data ?? []).map((c) => c.close);
  const p = pmxtData(pm);
  const cbLine = `crossbook ${candles.length} candles (last close ${show(candles.at(-1) ?? null)})`;
  if (p.error !== undefined) return { line: `${cbLine}; pmxt failed: ${p.error}`, pmxtFailed: p.error };
  const pmCloses = ((p.data as Array<{ close: unknown }>) ?? []).map((c) => num(c.close));
  const zero = pmCloses.length > 0 && pmCloses.every((c) => c === 0);
  const line = `${cbLine}; pmxt ${pmCloses.length} candles (last close ${show(pmCloses.at(-1) ?? null)})`;
  if (pmCloses.length === 0) return { line: `${line}: pmxt returned no candle`, pmxtFailed: "no candles" };
  if (zero) return { line: `${line}: every pmxt close is 0`, pmxtFailed: "every close 0" };
  return { line };
};

// ------------------------------------------------------------------------------------------------
// Parent: jobs

interface RequestJob {
  kind: "requests";
  name: string;
  target: number;
  crossbook: Target;
  pmxt: Target;
  shipped: Target;
  check: Check;
}

interface JobResult {
  name: string;
  crossbook: Run[];
  pmxt: Run[];
  shipped?: Run;
  ratio: number;
  target: number;
  ok: boolean;
  note?: string;
}

async function requestJob(job: RequestJob, sides: Sides): Promise<JobResult> {
  console.log(`\n${job.name}: crossbook ${job.crossbook.label}; pmxt ${job.pmxt.label}`);
  const [cbAnswer, pmAnswer] = await Promise.all([ask(job.crossbook), ask(job.pmxt)]);
  if (cbAnswer.status !== 200)
    throw new Error(
      `bench/peer ${job.name}: crossbook answered ${cbAnswer.status}: ${JSON.stringify(cbAnswer.body).slice(0, 300)}`,
    );
  const checked = job.check(cbAnswer.body, pmAnswer.body);
  console.log(`  check: ${checked.line}${pmAnswer.status !== 200 ? ` (pmxt HTTP ${pmAnswer.status})` : ""}`);
  // Warm-up (JIT, caches: pmxt's Kalshi market cache, crossbook's history backfill).
  await load(job.pmxt, WARMUP_SECONDS, sides.pmxt.process.pid, sides.venuesPid);
  await load(job.crossbook, WARMUP_SECONDS, sides.crossbook.pid, sides.venuesPid);
  const cb: Run[] = [];
  const pm: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (["pmxt", "crossbook"] as const) : (["crossbook", "pmxt"] as const);
    for (const side of order) {
      const run =
        side === "crossbook"
          ? await load(job.crossbook, SECONDS, sides.crossbook.pid, sides.venuesPid)
          : await load(job.pmxt, SECONDS, sides.pmxt.process.pid, sides.venuesPid);
      (side === "crossbook" ? cb : pm).push(run);
      console.log(`  ${runLine(`round ${round + 1} ${side}`, run)}`);
    }
  }
  // pmxt's answers that are failures are not the job done: only its successful answers count.
  const okRps = (r: Run) =>
    r.requests === 0 ? 0 : (r.rps * (r.requests - Math.min(r.failed, r.requests))) / r.requests;
  const ratios = cb.map((c, i) => okRps(c) / okRps(pm[i]!));
  const ratio = median(ratios);
  const pmFailed = pm.every((r) => r.failed >= r.requests) || checked.pmxtFailed !== undefined;
  const cbFailed = cb.some((r) => r.failed > 0);
  const ok = !cbFailed && ratio >= job.target;
  const medianRun = (runs: Run[]) => ({
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cpuMs: runs.every((r) => r.cpuMs !== undefined) ? median(runs.map((r) => r.cpuMs!)) : undefined,
    venueCpuMs: runs.every((r) => r.venueCpuMs !== undefined)
      ? median(runs.map((r) => r.venueCpuMs!))
      : undefined,
    requests: runs.reduce((s, r) => s + r.requests, 0),
    failed: runs.reduce((s, r) => s + r.failed, 0),
  });
  console.log(`  ${runLine("median crossbook", medianRun(cb))}`);
  console.log(`  ${runLine("median pmxt", medianRun(pm))}`);
  const note = pmFailed
    ? `pmxt answered no request correctly (${checked.pmxtFailed ?? "HTTP errors"})`
    : undefined;
  const shown = Number.isFinite(ratio) ? ratio.toFixed(2) : "inf";
  console.log(
    `bench/peer ${job.name} ratio ${shown} (crossbook/pmxt req/s, median of ${ROUNDS} rounds${note ? `; ${note}` : ""}) ` +
      `(target >= ${job.target}) ${verdict(ok)}`,
  );
  return {
    name: job.name,
    crossbook: cb,
    pmxt: pm,
    ratio,
    target: job.target,
    ok,
    ...(note ? { note } : {}),
  };
}

// --- freshness ------------------------------------------------------------------------------------

interface Watcher {
  /** Resolves with ms from `t0` until a best bid of `bid` is seen, or null after the timeout. */
  waitFor(bid: number, t0: number): Promise<number | null>;
  close(): void;
  /** Messages received (for the report). */
  messages: () => number;
}

function watcher(socket: WebSocket, bestBid: (message: unknown) => number | null | undefined): Watcher {
  let waiting: {
    bid: number;
    t0: number;
    resolve: (v: number | null) => void;
    timer: NodeJS.Timeout;
  } | null = null;
  let count = 0;
  socket.on("message", (data) => {
    count++;
    let message: unknown;
    try {
      message = JSON.parse(data.toString());
    } catch {
      return;
    }
    const bid = bestBid(message);
    if (waiting && bid !== undefined && bid !== null && Math.abs(bid - waiting.bid) < 1e-9) {
      const w = waiting;
      waiting = null;
      clearTimeout(w.timer);
      w.resolve(performance.now() - w.t0);
    }
  });
  return {
    waitFor(bid, t0) {
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiting = null;
          resolve(null);
        }, FRESH_TIMEOUT_MS);
        waiting = { bid, t0, resolve, timer };
      });
    },
    close: () => socket.close(),
    messages: () => count,
  };
}

async function openSocket(url: string, headers: Record<string, string>, first: string): Promise<WebSocket> {
  const socket = new WebSocket(url, { headers, perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  socket.send(first);
  return socket;
}

interface FreshResult {
  name: string;
  crossbook: Array<number | null>;
  pmxt: Array<number | null>;
  ok: boolean;
}

async function freshnessJob(
  venue: Venue,
  sides: Sides,
  venues: ChildProcess,
  ids: { crossbook: string; pmxt: string },
): Promise<FreshResult> {
  const name = `freshness-${venue}`;
  const half = Math.ceil(SAMPLES / 2);
  console.log(
    `\n${name}: the fake's book gets a new best bid; time until crossbook's /v1/prices/stream or pmxt's ` +
      `watchOrderBook (sidecar /ws) shows it; ${SAMPLES} changes a side in blocks crossbook, pmxt, pmxt, crossbook ` +
      `(one side's client connected at a time); not seen within ${FRESH_TIMEOUT_MS} ms = never`,
  );
  let bookId = 0;
  let current = 0;
  const setBook = async (bid: number) => {
    const id = ++bookId;
    const done = new Promise<void>((resolve) => {
      const on = (message: { cmd: string; id: number }) => {
        if (message.cmd === "booked" && message.id === id) {
          venues.off("message", on);
          resolve();
        }
      };
      venues.on("message", on);
    });
    venues.send({ cmd: "book", id, venue, bid });
    current = bid;
    await done;
  };
  const open = async (side: "crossbook" | "pmxt") => {
    if (side === "crossbook") {
      const socket = await openSocket(
        `${sides.crossbook.url.replace(/^http/, "ws")}/v1/prices/stream`,
        { authorization: `Bearer ${sides.crossbook.key}` },
        JSON.stringify({ action: "subscribe", market_ids: [ids.crossbook] }),
      );
      return {
        watch: watcher(socket, (m) => {
          const u = m as { type?: string; market_id?: string; best_bid?: number | null };
          return u.type === "price_update" && u.market_id === ids.crossbook ? u.best_bid : undefined;
        }),
        error: () => undefined,
      };
    }
    const socket = await openSocket(
      sides.pmxt.wsUrl,
      {},
      JSON.stringify({
        id: "fresh",
        action: "subscribe",
        exchange: venue,
        method: "watchOrderBook",
        args: [ids.pmxt],
      }),
    );
    let error: string | undefined;
    return {
      watch: watcher(socket, (m) => {
        const u = m as { event?: string; data?: unknown; error?: { message?: string } };
        if (u.event === "error") error = u.error?.message ?? "error";
        return u.event === "data" ? pmxtTop(u.data).bid : undefined;
      }),
      error: () => error,
    };
  };
  const times = { crossbook: [] as Array<number | null>, pmxt: [] as Array<number | null> };
  const messages = { crossbook: 0, pmxt: 0 };
  const errors = new Set<string>();
  const blocks = [
    ["crossbook", half],
    ["pmxt", half],
    ["pmxt", SAMPLES - half],
    ["crossbook", SAMPLES - half],
  ] as const;
  for (const [side, count] of blocks) {
    if (count === 0) continue;
    const client = await open(side);
    // Subscribed, and a first book known to the client (or the timeout), before the measured changes.
    await sleep(500);
    const first = current === 0.41 ? 0.4 : 0.41;
    const settled = client.watch.waitFor(first, performance.now());
    await setBook(first);
    await settled;
    for (let i = 0; i < count; i++) {
      const bid = current === 0.41 ? 0.4 : 0.41;
      const seen = client.watch.waitFor(bid, performance.now());
      await setBook(bid);
      times[side].push(await seen);
      await sleep(100);
    }
    messages[side] += client.watch.messages();
    const error = client.error();
    if (error) errors.add(error);
    client.watch.close();
    // The closed client's subscriptions end before the other side is measured.
    await sleep(500);
  }
  const summary = (list: Array<number | null>) => {
    const seen = list.filter((t): t is number => t !== null);
    return seen.length === 0
      ? `never (0 of ${list.length} seen)`
      : `median ${fmtMs(median(seen))} ms, max ${fmtMs(Math.max(...seen))} ms, seen ${seen.length} of ${list.length}`;
  };
  console.log(
    `  crossbook stream      ${summary(times.crossbook)} (${messages.crossbook} messages received)`,
  );
  console.log(
    `  pmxt watchOrderBook   ${summary(times.pmxt)} (${messages.pmxt} messages received` +
      `${errors.size ? `; errors: ${[...errors].join("; ")}` : ""})`,
  );
  const cbSeen = times.crossbook.filter((t): t is number => t !== null);
  const cbMedian = cbSeen.length === times.crossbook.length ? median(cbSeen) : Number.POSITIVE_INFINITY;
  const pmSeen = times.pmxt.filter((t): t is number => t !== null);
  const ok = cbMedian <= 10;
  const pmShown =
    pmSeen.length === 0
      ? `never: 0 of ${times.pmxt.length} seen within ${FRESH_TIMEOUT_MS} ms`
      : `${fmtMs(median(pmSeen))} ms, ${pmSeen.length} of ${times.pmxt.length} seen`;
  console.log(
    `bench/peer ${name} median ${Number.isFinite(cbMedian) ? `${fmtMs(cbMedian)} ms` : "never"} (pmxt: ${pmShown}) (target <= 10 ms) ${verdict(ok)}`,
  );
  return { name, crossbook: times.crossbook, pmxt: times.pmxt, ok };
}

// ------------------------------------------------------------------------------------------------
// Parent: main

function versionOf(file: string): string {
  try {
    return (JSON.parse(fs.readFileSync(file, "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

function crossbookVersion(): string {
  let dir = path.dirname(SCRIPT);
  while (
    !fs.existsSync(path.join(dir, "package.json")) ||
    !fs.existsSync(path.join(dir, "bin", "crossbook.mjs"))
  ) {
    const parent = path.dirname(dir);
    if (parent === dir) return "unknown";
    dir = parent;
  }
  let commit = "";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: dir,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {}
  return `${versionOf(path.join(dir, "package.json"))}${commit ? ` (${commit})` : ""}`;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-bench-peer-"));
  const children: ChildProcess[] = [];
  const cleanUp = async () => {
    await Promise.allSettled(children.map((c) => stopProcess(c)));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const interrupted = () => void cleanUp().finally(() => process.exit(130));
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    const cpus = os.cpus();
    const loadAtStart = os.loadavg()[0]!;
    console.log(
      `bench/peer: crossbook ${crossbookVersion()} against pmxt-core ${PMXT_VERSION} (npm, installed for this run), ` +
        `both on the same fake Polymarket and Kalshi; Node ${process.version}, ${cpus.length} cores (${cpus[0]?.model.trim() ?? "unknown"}), ` +
        `${new Date().toISOString().slice(0, 10)}; ${ROUNDS} rounds x ${SECONDS} s a side, ${CONNECTIONS} connections`,
    );
    const venues = startChild("venues", { BENCH_PEER_DIR: dir });
    children.push(venues);
    const installing = installPmxt(dir);
    // Awaited below; until then a failure must not end the process as an unhandled rejection.
    installing.catch(() => {});
    const ready = await nextMessage<VenuesReady>(venues, "ready", "the fake venues");
    const pmId = `polymarket:${ready.markets.polymarket.conditionId}`;
    const kxId = `kalshi:${ready.markets.kalshi.ticker}`;

    const crossbookDir = path.join(dir, "crossbook");
    fs.mkdirSync(crossbookDir);
    const crossbook = startChild(
      "crossbook",
      {
        BENCH_PEER_CROSSBOOK_ENV: JSON.stringify({
          DATABASE_URL: `sqlite:${path.join(crossbookDir, "crossbook.db")}`,
          CROSSBOOK_DATA_DIR: crossbookDir,
          HOST: "127.0.0.1",
          PORT: "0",
          LOG_LEVEL: "error",
          PASSWORD_HASH_COST: "10",
          CROSSBOOK_MASTER_KEY: randomBytes(32).toString("hex"),
          CROSSBOOK_VENUES: "polymarket,kalshi",
          KALSHI_API_URL: ready.kalshi.apiUrl,
          KALSHI_WS_URL: ready.kalshi.wsUrl,
          KALSHI_FEED_KEY_ID: ready.feedKey.keyId,
          KALSHI_FEED_PRIVATE_KEY_FILE: ready.feedKey.file,
          POLYMARKET_GAMMA_URL: ready.polymarket.gammaUrl,
          POLYMARKET_CLOB_URL: ready.polymarket.clobUrl,
          POLYMARKET_DATA_URL: ready.polymarket.dataUrl,
          POLYMARKET_WS_URL: ready.polymarket.wsUrl,
        }),
      },
      profileFlags("crossbook"),
    );
    children.push(crossbook);
    const cbReady = await nextMessage<{ url: string; key: string }>(crossbook, "ready", "crossbook serve");

    const root = await installing;
    const kalshiHost = new URL(ready.kalshi.apiUrl);
    const sidecarEnv = {
      // pmxt's own settings for venue URLs.
      KALSHI_BASE_URL: `${kalshiHost.protocol}//${kalshiHost.host}`,
      POLYMARKET_GAMMA_URL: `${ready.polymarket.gammaUrl}/events`,
      POLYMARKET_GAMMA_MARKETS_URL: `${ready.polymarket.gammaUrl}/markets`,
      POLYMARKET_GAMMA_SEARCH_URL: `${ready.polymarket.gammaUrl}/public-search`,
      POLYMARKET_CLOB_URL: ready.polymarket.clobUrl,
      POLYMARKET_DATA_URL: ready.polymarket.dataUrl,
      // Its Kalshi key (signed order book calls and the WebSocket): the fake's market-data key.
      KALSHI_API_KEY: ready.feedKey.keyId,
      KALSHI_PRIVATE_KEY: ready.feedKey.privateKeyPem,
    };
    // What pmxt hard-codes, redirected at load time.
    const redirect = {
      "https://clob.polymarket.com": ready.polymarket.clobUrl,
      "https://gamma-api.polymarket.com": ready.polymarket.gammaUrl,
      "https://data-api.polymarket.com": ready.polymarket.dataUrl,
      "wss://ws-subscriptions-clob.polymarket.com/ws": ready.polymarket.wsUrl,
      "wss://api.elections.kalshi.com": ready.kalshi.wsUrl.replace(/\/trade-api\/ws\/v2$/, ""),
      "https://api.elections.kalshi.com": `${kalshiHost.protocol}//${kalshiHost.host}`,
    };
    const pmxt = await startSidecar({
      root,
      home: path.join(dir, "pmxt-off"),
      redirect,
      env: sidecarEnv,
      throttle: "off",
      nodeFlags: profileFlags("pmxt"),
    });
    children.push(pmxt.process);
    const shipped = await startSidecar({
      root,
      home: path.join(dir, "pmxt-shipped"),
      redirect,
      env: sidecarEnv,
      throttle: "shipped",
    });
    children.push(shipped.process);
    const sides: Sides = {
      crossbook: { url: cbReady.url, key: cbReady.key, pid: crossbook.pid! },
      pmxt,
      shipped,
      venuesPid: venues.pid!,
    };
    console.log(
      `pmxt sidecar (pmxt-server) on ${pmxt.url} with throttle off (enableRateLimit = false on each exchange it creates, ` +
        `set at load time: it has no setting), and as shipped on ${shipped.url}; venue URLs from its settings ` +
        `${Object.keys(sidecarEnv)
          .filter((k) => k.endsWith("_URL"))
          .join(", ")}; hard-coded URLs redirected at load time (below)`,
    );
    console.log(
      `crossbook serve on ${cbReady.url} (SQLite, both venue feeds), an enterprise key at 100,000,000 requests/min`,
    );

    // crossbook ready: both venues listed and both markets' books live.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const listing = await ask(crossbookGet(sides, "/v1/markets?venue=kalshi&limit=100")).catch(
        () => undefined,
      );
      const prices = await ask(crossbookGet(sides, `/v1/prices?market_ids=${kxId},${pmId}`)).catch(
        () => undefined,
      );
      const data = (prices?.body as { data?: Record<string, { best_bid: number | null }> } | undefined)?.data;
      if (
        ((listing?.body as { data?: unknown[] } | undefined)?.data?.length ?? 0) >= 100 &&
        data?.[kxId]?.best_bid != null &&
        data?.[pmId]?.best_bid != null
      )
        break;
      if (Date.now() > deadline)
        throw new Error("bench/peer: crossbook did not list the venues within 120 s");
      await sleep(500);
    }

    const K = ready.markets.kalshi.ticker;
    const P = ready.markets.polymarket.yesTokenId;
    const markets = [
      ["polymarket", pmId, P],
      ["kalshi", kxId, K],
    ] as const;
    const jobs: RequestJob[] = [];
    for (const [venue, id, outcome] of markets) {
      jobs.push({
        kind: "requests",
        name: `book-${venue}`,
        target: 5,
        crossbook: crossbookGet(sides, `/v1/prices?market_ids=${id}&include_orderbook=true&depth=100`),
        pmxt: pmxtCall(pmxt, venue, "fetchOrderBook", [outcome]),
        shipped: pmxtCall(shipped, venue, "fetchOrderBook", [outcome]),
        check: bookCheck(id, true),
      });
    }
    for (const [venue, id, outcome] of markets) {
      jobs.push({
        kind: "requests",
        name: `price-${venue}`,
        target: 5,
        crossbook: crossbookGet(sides, `/v1/prices?market_ids=${id}`),
        pmxt: pmxtCall(pmxt, venue, "fetchOrderBook", [outcome]),
        shipped: pmxtCall(shipped, venue, "fetchOrderBook", [outcome]),
        check: bookCheck(id, false),
      });
    }
    jobs.push({
      kind: "requests",
      name: "markets-kalshi",
      target: 2,
      crossbook: crossbookGet(sides, "/v1/markets?venue=kalshi&limit=100"),
      pmxt: pmxtCall(pmxt, "kalshi", "fetchMarkets", [{ limit: 100 }]),
      shipped: pmxtCall(shipped, "kalshi", "fetchMarkets", [{ limit: 100 }]),
      check: marketsCheck,
    });
    for (const [venue, id, outcome] of markets) {
      jobs.push({
        kind: "requests",
        name: `history-${venue}`,
        target: 1.5,
        crossbook: crossbookGet(sides, `/v1/prices/history?market_id=${id}&interval=1h&limit=24`),
        pmxt: pmxtCall(pmxt, venue, "fetchOHLCV", [outcome, { resolution: "1h", limit: 24 }]),
        shipped: pmxtCall(shipped, venue, "fetchOHLCV", [outcome, { resolution: "1h", limit: 24 }]),
        check: historyCheck,
      });
    }

    const results: JobResult[] = [];
    for (const job of jobs) {
      if (JOBS_ASKED && !JOBS_ASKED.has(job.name)) continue;
      results.push(await requestJob(job, sides));
    }
    const fresh: FreshResult[] = [];
    for (const venue of ["polymarket", "kalshi"] as const) {
      if (JOBS_ASKED && !JOBS_ASKED.has(`freshness-${venue}`)) continue;
      fresh.push(
        await freshnessJob(venue, sides, venues, {
          crossbook: venue === "kalshi" ? kxId : pmId,
          pmxt: venue === "kalshi" ? K : P,
        }),
      );
    }

    // pmxt as shipped (its throttle on), once per job, for information.
    if (SHIPPED_SECONDS > 0 && results.length > 0) {
      console.log(
        `\npmxt as shipped (enableRateLimit on: Kalshi one venue call per 100 ms, Polymarket per 200 ms), ` +
          `${SHIPPED_SECONDS} s per job, ${SHIPPED_CONNECTIONS} connections:`,
      );
      for (const result of results) {
        const job = jobs.find((j) => j.name === result.name)!;
        result.shipped = await load(
          job.shipped,
          SHIPPED_SECONDS,
          shipped.process.pid,
          sides.venuesPid,
          SHIPPED_CONNECTIONS,
        );
        console.log(`  ${runLine(result.name, result.shipped)}`);
        // Requests still queued in its throttle when the run ended drain before the next job.
        await sleep(SHIPPED_CONNECTIONS * 250);
      }
    }

    const lines = [...new Set([...pmxt.redirects(), ...shipped.redirects()])];
    console.log(`\npmxt's hard-coded venue URLs redirected at load time (bench/peer/pmxt.ts preload):`);
    for (const line of lines) console.log(`  ${line}`);

    console.log("\nbench/peer summary (req/s: median of rounds; CPU: ms of the server process per request)");
    console.log(
      "| job | crossbook req/s | pmxt req/s (throttle off) | pmxt as shipped | crossbook CPU/req | pmxt CPU/req | ratio | target | |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for (const r of results) {
      const cbRps = median(r.crossbook.map((x) => x.rps));
      const pmRps = median(r.pmxt.map((x) => x.rps));
      const cpu = (runs: Run[]) =>
        runs.every((x) => x.cpuMs !== undefined) ? `${fmtMs(median(runs.map((x) => x.cpuMs!)))} ms` : "n/a";
      console.log(
        `| ${r.name} | ${fmtRps(cbRps)} | ${fmtRps(pmRps)}${r.note ? " (failed)" : ""} | ${r.shipped ? fmtRps(r.shipped.rps) : "-"} | ` +
          `${cpu(r.crossbook)} | ${cpu(r.pmxt)} | ${Number.isFinite(r.ratio) ? `${r.ratio.toFixed(2)}x` : "pmxt failed"} | >= ${r.target}x | ${verdict(r.ok)} |`,
      );
    }
    for (const f of fresh) {
      const cbSeen = f.crossbook.filter((t): t is number => t !== null);
      const pmSeen = f.pmxt.filter((t): t is number => t !== null);
      console.log(
        `| ${f.name} | ${cbSeen.length ? `${fmtMs(median(cbSeen))} ms` : "never"} | ${pmSeen.length ? `${fmtMs(median(pmSeen))} ms (${pmSeen.length}/${f.pmxt.length})` : `never (0/${f.pmxt.length})`} | - | - | - | - | <= 10 ms | ${verdict(f.ok)} |`,
      );
    }
    console.log(
      `machine load average (1 min): ${os.loadavg()[0]!.toFixed(2)} at the end, ${loadAtStart.toFixed(2)} at the start ` +
        `(this bench keeps about two processes busy; more means a neighbour shared the cores)`,
    );
    const all = [...results.map((r) => r.ok), ...fresh.map((f) => f.ok)];
    console.log(`bench/peer ${all.filter(Boolean).length} of ${all.length} jobs PASS`);
  } finally {
    await cleanUp();
  }
}

const mode = process.argv.includes("--child") ? process.argv[process.argv.indexOf("--child") + 1] : undefined;
if (mode === "venues") await venuesChild();
else if (mode === "crossbook") await crossbookChild();
else await main();
