/**
 * bench/stream: the price stream under load. 2,000 WebSocket clients, each subscribed to 50 of
 * 1,000 markets, while quotes change 20,000 times a second. Two runs on the same clients and the
 * same update sequence:
 *
 *   crossbook  updates enter as venue feed events (LiveMarkets -> QuoteBook -> bus -> StreamHub) and
 *              reach clients authenticated with an API key, with per-connection `seq`;
 *   baseline   a bare `ws` server broadcasting the same messages (serialized once per update,
 *              `ws.send` to each subscriber; no `seq`, so its frames are ~10 bytes shorter).
 *
 * Printed: delivered messages/s (crossbook as a ratio of the baseline), ingest-to-client latency
 * p50/p99 (from each message's `timestamp`, the moment the update was ingested or generated), and
 * server memory per idle connection (heap + external, after a GC, connected and subscribed).
 * Targets (issue 4): ratio >= 0.8, p99 <= 50 ms, <= 16 KB per idle connection.
 *
 * Same load for both, and what happens when a side cannot take it: the updates are generated inside
 * each server's process, on its event loop, as a venue feed would deliver them, so a server that
 * falls behind generates fewer updates (and later) instead of queueing them, and its latency (taken
 * from generation) would silently cover only what it kept up with. Each side therefore also reports
 * the updates/s it actually ingested while measured and its ingest lag (how late updates were
 * produced against the schedule); the latency target counts only if crossbook ingested the offered
 * rate. On a small machine the bare broadcast (one socket write per message) takes a few percent of
 * 20,000 updates/s, so the throughput ratio at the default rate compares the two servers'
 * capacities, not the same load; `--rate 1000` is closer to a load both can take.
 *
 * The server under test, the clients and this coordinator are separate processes; the clients
 * speak raw WebSocket frames (a real client library would spend more CPU than the server and
 * measure itself). `--pairs N` runs N baseline/crossbook pairs, alternating which goes first, and
 * prints medians (a neighbour's load drifting during a run then lands on both sides);
 * `--only crossbook|baseline` runs one side.
 *
 *   npm run bench:stream [-- --clients 2000 --markets 1000 --per-client 50 --rate 20000 --seconds 10]
 *                        [-- --pairs 3] [-- --only crossbook] [-- --flush-ms 10]
 */
import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { seededRandom } from "@crossbook/fakes/random";
import { loaderArgs } from "./support/child";

const here = fileURLToPath(import.meta.url);

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

const CLIENTS = arg("clients", 2_000);
const MARKETS = arg("markets", 1_000);
const PER_CLIENT = arg("per-client", 50);
const RATE = arg("rate", 20_000);
const SECONDS = arg("seconds", 10);
const WARMUP_SECONDS = 3;
/** The hub's flush interval; unset = the service default. */
const FLUSH_MS = process.argv.includes("--flush-ms") ? arg("flush-ms", 10) : undefined;

type Message = Record<string, unknown> & { cmd: string };

const marketIds = Array.from({ length: MARKETS }, (_, i) => `kalshi:KXBENCH-26DEC31-T${10_000 + i}`);

function subscriptionsOf(client: number): string[] {
  const rnd = seededRandom(1_000 + client);
  const chosen = new Set<string>();
  while (chosen.size < PER_CLIENT) chosen.add(marketIds[Math.floor(rnd() * MARKETS)]!);
  return [...chosen];
}

/** The load generator's progress in a server child; "mark" opens the measured window. */
const progress = {
  sent: 0,
  measuring: false,
  sentAtMark: 0,
  markedAt: 0,
  /** Sampled ingest lags (ms): how long after it was due each update was produced. */
  lags: [] as number[],
};
const LAG_SAMPLE_EVERY = 16;

/**
 * Produces `RATE` updates a second in 10 ms bursts, catching up when a timer fires late so the
 * offered load does not drop when the server is busy. The generator shares the server's event
 * loop (as a venue feed does), so a server that cannot keep up produces fewer updates than offered
 * and each one late: both are measured (the generated rate and the ingest lag, due -> produced), so
 * a server never looks fast by taking only part of the load.
 */
function generate(emit: (marketIndex: number, step: number) => void, seconds: number): Promise<number> {
  const rnd = seededRandom(7);
  const started = performance.now();
  const msPerUpdate = 1000 / RATE;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      if (elapsed >= seconds) {
        clearInterval(timer);
        resolve(progress.sent);
        return;
      }
      const due = Math.min(Math.floor(elapsed * RATE), progress.sent + RATE / 10);
      while (progress.sent < due) {
        const step = progress.sent++;
        if (progress.measuring && step % LAG_SAMPLE_EVERY === 0) {
          progress.lags.push(performance.now() - (started + step * msPerUpdate));
        }
        emit(Math.floor(rnd() * MARKETS), step);
      }
    }, 10);
  });
}

/** What a server child reports when its load ends. */
function loaded(cpuStart: NodeJS.CpuUsage): Message {
  const seconds = (performance.now() - progress.markedAt) / 1000;
  return {
    cmd: "loaded",
    cpu: cpuSince(cpuStart),
    measuredSeconds: seconds,
    updatesPerSecond: (progress.sent - progress.sentAtMark) / seconds,
    lags: progress.lags,
  };
}

function mark(): void {
  progress.measuring = true;
  progress.sentAtMark = progress.sent;
  progress.markedAt = performance.now();
}

/** CPU seconds (user + system) this process used since `start`. */
function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

function memoryNow(): number {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

// ------------------------------------------------------------------------------------------------
// Server child: crossbook

async function crossbookServer(): Promise<void> {
  // Imported here, not at the top: the client and baseline children need none of the app.
  const { seedBenchMarkets, startBenchApp } = await import("./support/app");
  const { runtime, app, services, secret } = await startBenchApp({
    account: {
      plan: "enterprise",
      ws_connections: CLIENTS * 2,
      markets_per_subscription: PER_CLIENT,
    },
    ...(FLUSH_MS !== undefined ? { build: { streamOptions: { flushIntervalMs: FLUSH_MS } } } : {}),
  });
  await seedBenchMarkets(runtime, marketIds);
  const now = new Date().toISOString();
  await services.prices.reload();
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const baseline = memoryNow();

  process.on("message", async (message: Message) => {
    if (message.cmd === "memory") {
      process.send!({ cmd: "memory", bytes: memoryNow() - baseline });
    } else if (message.cmd === "load") {
      // Each update moves a market's best bid by a tick: a real change, through the feed path.
      await generate((m, step) => {
        const cents = 30 + (step % 40);
        services.live.ingest("kalshi", {
          kind: "book",
          book: {
            marketId: marketIds[m]!,
            yes: {
              bids: [{ price: cents * 10_000, size: 100_000_000 }],
              asks: [{ price: 800_000 + (step % 7) * 10_000, size: 100_000_000 }],
            },
            no: { bids: [], asks: [] },
            timestamp: now,
            sequence: null,
          },
        });
      }, message["seconds"] as number);
      process.send!(loaded(cpuStart));
    } else if (message.cmd === "mark") {
      cpuStart = process.cpuUsage();
      mark();
    }
  });
  let cpuStart = process.cpuUsage();
  process.send!({ cmd: "ready", port, path: "/v1/prices/stream", key: secret });
}

// ------------------------------------------------------------------------------------------------
// Server child: baseline (bare ws broadcast)

async function baselineServer(): Promise<void> {
  const { WebSocketServer } = await import("ws");
  const subscribers = new Map<string, Set<import("ws").WebSocket>>();
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  wss.on("connection", (ws) => {
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString()) as { market_ids: string[] };
      for (const id of message.market_ids) {
        let set = subscribers.get(id);
        if (!set) {
          set = new Set();
          subscribers.set(id, set);
        }
        set.add(ws);
      }
      ws.send(JSON.stringify({ type: "subscribed", market_ids: message.market_ids, rejected: [] }));
    });
    ws.on("close", () => {
      for (const set of subscribers.values()) set.delete(ws);
    });
  });
  const port = (wss.address() as { port: number }).port;
  const baseline = memoryNow();
  process.on("message", async (message: Message) => {
    if (message.cmd === "memory") {
      process.send!({ cmd: "memory", bytes: memoryNow() - baseline });
    } else if (message.cmd === "load") {
      await generate((m, step) => {
        const id = marketIds[m]!;
        const bid = (30 + (step % 40)) / 100;
        const ask = (80 + (step % 7)) / 100;
        const payload = Buffer.from(
          JSON.stringify({
            type: "price_update",
            market_id: id,
            price: Math.round(((bid + ask) / 2) * 1e6) / 1e6,
            best_bid: bid,
            best_ask: ask,
            volume_24h: 0,
            timestamp: new Date().toISOString(),
          }),
        );
        const set = subscribers.get(id);
        if (set) for (const ws of set) ws.send(payload, { binary: false });
      }, message["seconds"] as number);
      process.send!(loaded(cpuStart));
    } else if (message.cmd === "mark") {
      cpuStart = process.cpuUsage();
      mark();
    }
  });
  let cpuStart = process.cpuUsage();
  process.send!({ cmd: "ready", port, path: "/", key: null });
}

// ------------------------------------------------------------------------------------------------
// Client child: raw WebSocket clients

interface ClientStats {
  frames: number;
  latencies: number[];
}

function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const length = payload.length;
  const header = length < 126 ? 2 : 4;
  const frame = Buffer.alloc(header + 4 + length);
  frame[0] = 0x81;
  if (length < 126) frame[1] = 0x80 | length;
  else {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(length, 2);
  }
  const mask = randomBytes(4);
  mask.copy(frame, header);
  for (let i = 0; i < length; i++) frame[header + 4 + i] = payload[i]! ^ mask[i & 3]!;
  return frame;
}

const TIMESTAMP = Buffer.from('"timestamp":"');

function openClient(
  port: number,
  urlPath: string,
  key: string | null,
  markets: string[],
  stats: ClientStats,
  sampleEvery: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.setNoDelay(true);
    let upgraded = false;
    let subscribed = false;
    let pending: Buffer | null = null;
    let counter = 0;
    socket.on("connect", () => {
      socket.write(
        `GET ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n` +
          (key ? `Authorization: Bearer ${key}\r\n` : "") +
          "\r\n",
      );
    });
    socket.on("error", reject);
    socket.on("data", (chunk: Buffer) => {
      let data = pending ? Buffer.concat([pending, chunk]) : chunk;
      pending = null;
      if (!upgraded) {
        const end = data.indexOf("\r\n\r\n");
        if (end < 0) {
          pending = data;
          return;
        }
        const head = data.subarray(0, end).toString();
        if (!head.startsWith("HTTP/1.1 101")) {
          reject(new Error(`upgrade refused: ${head.split("\r\n")[0]}`));
          socket.destroy();
          return;
        }
        upgraded = true;
        socket.write(maskedTextFrame(JSON.stringify({ action: "subscribe", market_ids: markets })));
        data = data.subarray(end + 4);
      }
      let offset = 0;
      while (data.length - offset >= 2) {
        const opcode = data[offset]! & 0x0f;
        let length = data[offset + 1]! & 0x7f;
        let start = offset + 2;
        if (length === 126) {
          if (data.length - offset < 4) break;
          length = data.readUInt16BE(offset + 2);
          start = offset + 4;
        } else if (length === 127) {
          if (data.length - offset < 10) break;
          length = Number(data.readBigUInt64BE(offset + 2));
          start = offset + 10;
        }
        if (data.length < start + length) break;
        if (opcode === 0x1) {
          if (!subscribed) {
            subscribed = true; // the first text frame is the subscription ack
            resolve();
          } else {
            stats.frames++;
            if (++counter % sampleEvery === 0) {
              const at = data.indexOf(TIMESTAMP, start);
              if (at >= 0 && at < start + length) {
                const from = at + TIMESTAMP.length;
                const sent = Date.parse(data.toString("latin1", from, from + 24));
                stats.latencies.push(Date.now() - sent);
              }
            }
          }
        } else if (opcode === 0x9) {
          // Answer pings (masked pong with the same payload).
          const payload = data.subarray(start, start + length);
          const pong = Buffer.alloc(6 + payload.length);
          pong[0] = 0x8a;
          pong[1] = 0x80 | payload.length;
          payload.copy(pong, 6); // zero mask: payload unchanged
          socket.write(pong);
        }
        offset = start + length;
      }
      if (offset < data.length) pending = data.subarray(offset);
    });
  });
}

async function clientsChild(): Promise<void> {
  const stats: ClientStats = { frames: 0, latencies: [] };
  let cpuStart = process.cpuUsage();
  process.on("message", async (message: Message) => {
    if (message.cmd === "connect") {
      const {
        port,
        path: urlPath,
        key,
      } = message as unknown as { port: number; path: string; key: string | null };
      const batch = 100;
      for (let i = 0; i < CLIENTS; i += batch) {
        await Promise.all(
          Array.from({ length: Math.min(batch, CLIENTS - i) }, (_, j) =>
            openClient(port, urlPath, key, subscriptionsOf(i + j), stats, 50),
          ),
        );
      }
      // Snapshots sent on subscribe are not part of the measurement.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      process.send!({ cmd: "connected" });
    } else if (message.cmd === "reset") {
      stats.frames = 0;
      stats.latencies = [];
      cpuStart = process.cpuUsage();
    } else if (message.cmd === "report") {
      process.send!({
        cmd: "report",
        frames: stats.frames,
        latencies: stats.latencies,
        cpu: cpuSince(cpuStart),
      });
    }
  });
  process.send!({ cmd: "started" });
}

// ------------------------------------------------------------------------------------------------
// Coordinator

function start(role: string): ChildProcess {
  return fork(here, ["--child", role, ...process.argv.slice(2)], {
    execArgv: [
      ...(process.env["BENCH_PROFILE"] === role ? ["--cpu-prof", "--cpu-prof-dir=/tmp/streamprof"] : []),
      "--expose-gc",
      ...loaderArgs(here),
    ],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

function next(child: ChildProcess, cmd: string): Promise<Message> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Message) => {
      if (message.cmd !== cmd) return;
      child.off("message", onMessage);
      resolve(message);
    };
    child.on("message", onMessage);
    child.once("exit", (code) => reject(new Error(`child exited with ${code} while waiting for ${cmd}`)));
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

interface RunResult {
  messagesPerSecond: number;
  p50: number;
  p99: number;
  bytesPerConnection: number;
  /** Updates the generator produced per second while measured (RATE if the server kept up). */
  updatesPerSecond: number;
  /** How late updates were produced (ms): the generator waits for a busy event loop. */
  lagP50: number;
  lagP99: number;
  /** Share of one core the server and the clients used while measured. */
  serverCpu: number;
  clientCpu: number;
}

async function run(role: "crossbook" | "baseline"): Promise<RunResult> {
  const server = start(role);
  const clients = start("clients");
  try {
    const ready = await next(server, "ready");
    await next(clients, "started");
    const connecting = next(clients, "connected");
    clients.send({ cmd: "connect", port: ready["port"], path: ready["path"], key: ready["key"] });
    await connecting;
    const memory = next(server, "memory");
    server.send({ cmd: "memory" });
    const bytes = (await memory)["bytes"] as number;

    const loadEnded = next(server, "loaded");
    server.send({ cmd: "load", seconds: WARMUP_SECONDS + SECONDS });
    await new Promise((resolve) => setTimeout(resolve, WARMUP_SECONDS * 1000));
    clients.send({ cmd: "reset" });
    server.send({ cmd: "mark" });
    const measuredFrom = performance.now();
    const loadedMessage = await loadEnded;
    const serverCpu = loadedMessage["cpu"] as number;
    const loadSeconds = loadedMessage["measuredSeconds"] as number;
    const lags = (loadedMessage["lags"] as number[]).sort((a, b) => a - b);
    // Let what is in flight arrive (it still counts against the window it was sent in).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const report = next(clients, "report");
    clients.send({ cmd: "report" });
    const { frames, latencies, cpu } = (await report) as unknown as {
      frames: number;
      latencies: number[];
      cpu: number;
    };
    const seconds = (performance.now() - measuredFrom) / 1000;
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      messagesPerSecond: frames / seconds,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      bytesPerConnection: bytes / CLIENTS,
      updatesPerSecond: loadedMessage["updatesPerSecond"] as number,
      lagP50: percentile(lags, 0.5),
      lagP99: percentile(lags, 0.99),
      serverCpu: serverCpu / loadSeconds,
      clientCpu: cpu / seconds,
    };
  } finally {
    // A clean exit first (a profiled child writes its profile on exit), then make sure.
    for (const child of [server, clients]) if (child.connected) child.send({ cmd: "exit" });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    server.kill("SIGKILL");
    clients.kill("SIGKILL");
  }
}

async function main(): Promise<void> {
  const childIndex = process.argv.indexOf("--child");
  if (childIndex >= 0) {
    process.on("message", (message: Message) => {
      if (message.cmd === "exit") process.exit(0);
    });
    const role = process.argv[childIndex + 1];
    if (role === "crossbook") return crossbookServer();
    if (role === "baseline") return baselineServer();
    return clientsChild();
  }
  console.log(
    `${CLIENTS} clients x ${PER_CLIENT} of ${MARKETS} markets, ${RATE} updates/s offered, ${SECONDS} s measured after ${WARMUP_SECONDS} s`,
  );
  const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
  const line = (name: string, r: RunResult) =>
    console.log(
      `${name.padEnd(10)} ${r.messagesPerSecond.toFixed(0)} msg/s delivered, ${r.updatesPerSecond.toFixed(0)} of ${RATE} updates/s ingested ` +
        `(ingest lag p99 ${ms(r.lagP99)} ms), latency p50 ${r.p50} ms p99 ${r.p99} ms, ` +
        `${(r.bytesPerConnection / 1024).toFixed(1)} KB per idle connection, ` +
        `CPU server ${(r.serverCpu * 100).toFixed(0)}% clients ${(r.clientCpu * 100).toFixed(0)}%`,
    );
  const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
  if (only === "crossbook" || only === "baseline") {
    line(only, await run(only));
    return;
  }
  // Pairs alternate which side runs first, so a neighbour's load drifting during the run does not
  // always land on the same side; the summary takes medians over pairs.
  const PAIRS = arg("pairs", 1);
  const pairs: Array<{ base: RunResult; ours: RunResult }> = [];
  for (let i = 0; i < PAIRS; i++) {
    let base: RunResult;
    let ours: RunResult;
    if (i % 2 === 0) {
      base = await run("baseline");
      line("baseline", base);
      ours = await run("crossbook");
      line("crossbook", ours);
    } else {
      ours = await run("crossbook");
      line("crossbook", ours);
      base = await run("baseline");
      line("baseline", base);
    }
    pairs.push({ base, ours });
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const ratio = median(pairs.map((p) => p.ours.messagesPerSecond / p.base.messagesPerSecond));
  const p50 = median(pairs.map((p) => p.ours.p50));
  const p99 = median(pairs.map((p) => p.ours.p99));
  const bytes = median(pairs.map((p) => p.ours.bytesPerConnection));
  const ingested = median(pairs.map((p) => p.ours.updatesPerSecond));
  const baseIngested = median(pairs.map((p) => p.base.updatesPerSecond));
  // Kept up: produced (near enough) every offered update. A latency taken at part of the load is not
  // a latency "under" the load.
  const keptUp = (updatesPerSecond: number) => updatesPerSecond >= 0.98 * RATE;
  const pass = (ok: boolean) => (ok ? "PASS" : "BELOW TARGET");
  const of = PAIRS > 1 ? ` (median of ${PAIRS} pairs)` : "";
  console.log(
    `bench/stream  throughput ratio ${ratio.toFixed(3)}${of} (target >= 0.8) ${pass(ratio >= 0.8)}` +
      (keptUp(baseIngested)
        ? ""
        : `; the baseline ingested only ${baseIngested.toFixed(0)} of ${RATE} updates/s, so this compares capacities, not the same load`),
  );
  console.log(
    `bench/stream  latency p50 ${p50} ms, p99 ${p99} ms${of} (target p99 <= 50 ms under the full load) ` +
      pass(p99 <= 50 && keptUp(ingested)) +
      (keptUp(ingested) ? "" : ` (ingested only ${ingested.toFixed(0)} of ${RATE} updates/s)`),
  );
  console.log(
    `bench/stream  memory ${(bytes / 1024).toFixed(1)} KB per idle connection${of} (target <= 16 KB) ${pass(bytes <= 16 * 1024)}`,
  );
}

await main();
