/**
 * bench/account-stream: the private stream `/v1/account/stream` under load. 500 connections spread
 * evenly over 100 accounts (5 per account, each with its own sandbox read key's connections), all
 * subscribed to every event type live, while 2,000 account events a second are recorded, round-robin
 * over the accounts. Two runs on the same clients and the same event sequence:
 *
 *   crossbook  each event is recorded through the real write path (`outbox.record` in its own
 *              transaction on the SQLite store, as a state change commits it), read back by the
 *              instance's AccountEventTail (every ACCOUNT_STREAM_POLL_MS) and sent to the streams of
 *              its account and environment;
 *   baseline   a bare `ws` server that builds the same event frame (same fields and sizes) from
 *              memory, once per event, and `ws.send`s it to each socket of the event's account.
 *
 * Printed: delivered messages/s (crossbook as a ratio of the baseline), recorded-to-delivered latency
 * p50/p99 (each event's payload carries the wall-clock time it was recorded, taken with
 * `performance.timeOrigin + performance.now()` in the server and in the client, on one machine),
 * and whether every connection received every event of its account. Targets: ratio >= 0.5, p99 <=
 * 50 ms at the full rate.
 *
 * As in bench/stream, the events are generated inside each server's process, on its event loop, in
 * 10 ms bursts: a server that falls behind records fewer events (and later) instead of queueing
 * them, so each side also reports the events/s it generated while measured and its generation lag
 * (how late events were produced against the schedule); the latency target counts only if
 * crossbook generated the offered rate. The server under test, the clients and this coordinator are
 * separate processes; the clients speak raw WebSocket frames (support/ws-client.ts). `--pairs N`
 * runs N baseline/crossbook pairs, alternating which goes first, and prints medians; `--only
 * crossbook|baseline` runs one side. `BENCH_PROFILE=<crossbook|baseline|clients>` writes that child's
 * CPU profile to /tmp/account-stream-prof.
 *
 *   npm run bench:account-stream [-- --streams 500 --accounts 100 --rate 2000 --seconds 10]
 *                                [-- --pairs 3] [-- --only crossbook]
 */
import { fileURLToPath } from "node:url";
import { arg } from "./support/child";
import { median, ms, pairMedians, pass, runSides } from "./support/compare";
import { runChild, type Side, type WindowFigures, withConnectedClients } from "./support/coordinator";
import { type ClientStats, LoadGenerator, openInBatches, serveClients, serveLoad } from "./support/load";
import { maskedTextFrame, openRawClient } from "./support/ws-client";

const STREAMS = arg("streams", 500);
const ACCOUNTS = arg("accounts", 100);
const RATE = arg("rate", 2_000);
const SECONDS = arg("seconds", 10);
const WARMUP_SECONDS = 3;
/** The most streams any account has (connections are dealt to the accounts in turn). */
const MAX_PER_ACCOUNT = Math.ceil(STREAMS / ACCOUNTS);
/** Messages the clients should receive a second: every event goes to each stream of its account. */
const OFFERED_MESSAGES = (RATE * STREAMS) / ACCOUNTS;
/** Latencies taken per client: every event up to about 10,000 messages/s, then a sample. */
const SAMPLE_EVERY = Math.max(1, Math.round(OFFERED_MESSAGES / 10_000));

/** The account a connection belongs to (dealt in turn: accounts get equal shares, +-1). */
const accountOf = (connection: number) => connection % ACCOUNTS;
/** Events `sent` in all, round-robin from account 0: how many were account `a`'s. */
const eventsOf = (a: number, sent: number) => (sent > a ? Math.ceil((sent - a) / ACCOUNTS) : 0);
/** The `webhook_id` of an account's events (same text, so same size, on both sides). */
const webhookIdOf = (a: number) => `whk_${String(a).padStart(26, "0")}`;
/** The moment of recording as the payload carries it (sub-millisecond wall clock). */
const wallClock = () => performance.timeOrigin + performance.now();

/** Where the clients connect: one per account, connection `i` to target `accountOf(i)`. */
interface Target {
  path: string;
  key: string | null;
}

// ------------------------------------------------------------------------------------------------
// Server child: crossbook
//
// Each server child generates its load on its own event loop (support/load.ts): `RATE` events a
// second, event `step` for account `step % ACCOUNTS`; the generator's lag is the generation lag.

async function crossbookServer(): Promise<void> {
  // Imported here, not at the top: the client and baseline children need none of the app.
  const { startBenchApp } = await import("./support/app");
  // Limits the run cannot reach: twice the streams an account opens, requests without end.
  const limits = {
    plan: "enterprise" as const,
    ws_connections: MAX_PER_ACCOUNT * 2,
    rate_limit_per_minute: 100_000_000,
  };
  const { runtime, app, services, secret, accountId } = await startBenchApp({
    account: limits,
    key: { type: "read_only", environment: "sandbox" },
  });
  const accountIds = [accountId];
  const targets: Target[] = [{ path: "/v1/account/stream", key: secret }];
  for (let a = 1; a < ACCOUNTS; a++) {
    const account = await services.accounts.create({
      email: `stream${a}@example.com`,
      password: "bench password 123",
    });
    await services.accounts.update(account.id, { tier: "enterprise", ...limits });
    const key = await services.apiKeys.create(account.id, {
      name: "bench",
      type: "read_only",
      environment: "sandbox",
    });
    accountIds.push(account.id);
    targets.push({ path: "/v1/account/stream", key: key.secret });
  }
  const webhookIds = accountIds.map((_, a) => webhookIdOf(a));
  const db = runtime.store.db;
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = (app.server.address() as { port: number }).port;
  // One transaction per event, as a state change commits its event.
  serveLoad(new LoadGenerator(RATE), async (step) => {
    const a = step % ACCOUNTS;
    await db.transaction().execute(async (trx) => {
      await services.outbox.record(trx, {
        type: "webhook.test",
        data: { webhook_id: webhookIds[a]!, message: String(wallClock()) },
        accountId: accountIds[a]!,
        environment: "sandbox",
      });
    });
  });
  process.send!({ cmd: "ready", port, targets });
}

// ------------------------------------------------------------------------------------------------
// Server child: baseline (bare ws, events from memory)

async function baselineServer(): Promise<void> {
  const { WebSocketServer } = await import("ws");
  const sockets = Array.from({ length: ACCOUNTS }, () => new Set<import("ws").WebSocket>());
  const events = new LoadGenerator(RATE);
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  wss.on("connection", (ws, request) => {
    const account = Number(new URL(request.url ?? "/", "http://localhost").searchParams.get("account"));
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString()) as { action: string; types: string[] };
      if (message.action !== "subscribe") return;
      sockets[account]!.add(ws);
      ws.send(JSON.stringify({ type: "subscribed", types: message.types, after: events.sent }));
    });
    ws.on("close", () => sockets[account]!.delete(ws));
  });
  const port = (wss.address() as { port: number }).port;
  serveLoad(events, (step) => {
    const a = step % ACCOUNTS;
    // The frame crossbook sends: ids and timestamp of the same lengths, the same payload.
    const data = JSON.stringify({ webhook_id: webhookIdOf(a), message: String(wallClock()) });
    const payload = Buffer.from(
      `{"type":"event","seq":${step + 1},"id":"evt_${String(step).padStart(26, "0")}",` +
        `"event_type":"webhook.test","timestamp":"${new Date().toISOString()}","data":${data}}`,
    );
    for (const ws of sockets[a]!) ws.send(payload, { binary: false });
  });
  const targets: Target[] = Array.from({ length: ACCOUNTS }, (_, a) => ({
    path: `/?account=${a}`,
    key: null,
  }));
  process.send!({ cmd: "ready", port, targets });
}

// ------------------------------------------------------------------------------------------------
// Client child: raw WebSocket clients

interface StreamStats extends ClientStats {
  /** Event frames each connection received since it subscribed. */
  received: number[];
  /** Frames after the ack that were not events (an error, a close notice): the first few. */
  unexpected: string[];
}

const SUBSCRIBE = JSON.stringify({ action: "subscribe", types: ["*"] });
const QUOTE = 0x22;

/**
 * Opens connection `index`, subscribes to every type and resolves on the ack. Each event frame is
 * counted; every `SAMPLE_EVERY`th one's latency is taken from its payload's `message` (the
 * recording time), which is the last string of the frame: `…,"message":"<ms>"}}`.
 */
function openStream(port: number, target: Target, index: number, stats: StreamStats): Promise<void> {
  return new Promise((resolve, reject) => {
    let subscribed = false;
    let counter = 0;
    stats.received[index] = 0;
    openRawClient({
      port,
      path: target.path,
      key: target.key,
      onOpen: (socket) => socket.write(maskedTextFrame(SUBSCRIBE)),
      onText: (data, start, end) => {
        const now = wallClock();
        // {"type":"event" : the type's first two letters sit 9 and 10 bytes in.
        const isEvent = data[start + 9] === 0x65 && data[start + 10] === 0x76;
        if (!subscribed) {
          const text = data.toString("utf8", start, end);
          if (!text.startsWith('{"type":"subscribed"')) {
            reject(new Error(`connection ${index}: expected the subscribe ack, got ${text}`));
            return;
          }
          subscribed = true;
          resolve();
          return;
        }
        if (!isEvent) {
          if (stats.unexpected.length < 5) stats.unexpected.push(data.toString("utf8", start, end));
          return;
        }
        stats.frames++;
        stats.received[index]!++;
        if (++counter % SAMPLE_EVERY === 0) {
          const close = end - 3; // the quote that ends the message
          const open = data.lastIndexOf(QUOTE, close - 1);
          if (data[close] === QUOTE && open > start) {
            const recorded = Number(data.toString("latin1", open + 1, close));
            if (Number.isFinite(recorded)) stats.latencies.push(now - recorded);
          }
        }
      },
      onError: reject,
    });
  });
}

function clientsChild(): void {
  const stats: StreamStats = { frames: 0, latencies: [], received: [], unexpected: [] };
  serveClients(stats, async (ready) => {
    const { port, targets } = ready as unknown as { port: number; targets: Target[] };
    await openInBatches(STREAMS, (i) => openStream(port, targets[accountOf(i)]!, i, stats));
    await new Promise((resolve) => setTimeout(resolve, 500));
  });
}

// ------------------------------------------------------------------------------------------------
// Coordinator

const children = { script: fileURLToPath(import.meta.url), profileDir: "/tmp/account-stream-prof" };

/**
 * A run's figures: latency (recorded -> delivered), generation lag and CPU as every stream bench's,
 * and these.
 */
interface RunResult extends WindowFigures {
  /** Event messages the clients received per second of the measured window. */
  messagesPerSecond: number;
  /** Events the generator produced per second while measured (RATE if the server kept up). */
  eventsPerSecond: number;
  /** Event messages owed to the connections (each its account's events) and not received. */
  undelivered: number;
  unexpected: string[];
}

function runSide(side: Side): Promise<RunResult> {
  return withConnectedClients(children, side, async (run) => {
    const { loaded, report, figures } = await run.measure<StreamStats>(WARMUP_SECONDS, SECONDS);
    let undelivered = 0;
    for (let i = 0; i < STREAMS; i++) {
      undelivered += eventsOf(accountOf(i), loaded.sent) - (report.received[i] ?? 0);
    }
    return {
      ...figures,
      messagesPerSecond: report.frames / loaded.measuredSeconds,
      eventsPerSecond: loaded.perSecond,
      undelivered,
      unexpected: report.unexpected,
    };
  });
}

async function main(): Promise<void> {
  if (await runChild({ crossbook: crossbookServer, baseline: baselineServer, clients: clientsChild })) return;
  const perAccount =
    STREAMS % ACCOUNTS === 0
      ? String(STREAMS / ACCOUNTS)
      : `${Math.floor(STREAMS / ACCOUNTS)}-${MAX_PER_ACCOUNT}`;
  console.log(
    `${STREAMS} streams over ${ACCOUNTS} account${ACCOUNTS === 1 ? "" : "s"} (${perAccount} per account), ${RATE} events/s offered ` +
      `(${OFFERED_MESSAGES.toFixed(0)} messages/s), ${SECONDS} s measured after ${WARMUP_SECONDS} s`,
  );
  const line = (name: string, r: RunResult) => {
    console.log(
      `${name.padEnd(10)} ${r.messagesPerSecond.toFixed(0)} msg/s delivered, ${r.eventsPerSecond.toFixed(0)} of ${RATE} events/s generated ` +
        `(generation lag p99 ${ms(r.lagP99)} ms), latency p50 ${ms(r.p50)} ms p99 ${ms(r.p99)} ms, ` +
        (r.undelivered === 0 ? "every event delivered, " : `${r.undelivered} messages NOT delivered, `) +
        `CPU server ${(r.serverCpu * 100).toFixed(0)}% clients ${(r.clientCpu * 100).toFixed(0)}%`,
    );
    for (const text of r.unexpected) console.log(`${"".padEnd(10)} unexpected frame: ${text}`);
  };
  const pairs = await runSides(runSide, line);
  if (pairs.length === 0) return; // --only: one run, no comparison
  const { ratio, p50, p99, of } = pairMedians(pairs);
  const complete = pairs.every((p) => p.ours.undelivered === 0);
  const generated = median(pairs.map((p) => p.ours.eventsPerSecond));
  const baseGenerated = median(pairs.map((p) => p.base.eventsPerSecond));
  // Kept up: produced (near enough) every offered event. A latency taken at part of the rate is not
  // a latency at the rate.
  const keptUp = (eventsPerSecond: number) => eventsPerSecond >= 0.98 * RATE;
  console.log(
    `bench/account-stream  throughput ratio ${ratio.toFixed(3)}${of} (target >= 0.5) ${pass(ratio >= 0.5 && complete)}` +
      (complete ? "" : "; crossbook did not deliver every event") +
      (keptUp(baseGenerated)
        ? ""
        : `; the baseline generated only ${baseGenerated.toFixed(0)} of ${RATE} events/s, so this compares capacities, not the same load`),
  );
  console.log(
    `bench/account-stream  latency p50 ${ms(p50)} ms, p99 ${ms(p99)} ms${of} (target p99 <= 50 ms at the full rate) ` +
      pass(p99 <= 50 && keptUp(generated)) +
      (keptUp(generated) ? "" : ` (generated only ${generated.toFixed(0)} of ${RATE} events/s)`),
  );
}

await main();
