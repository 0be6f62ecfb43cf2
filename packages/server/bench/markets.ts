/**
 * bench/markets: the 100-market listing `GET /v1/markets?venue=kalshi&limit=100` (full rules text)
 * through the full crossbook stack, against bare Fastify routes sending the same bytes, measured in
 * the same run with autocannon: requests a second, their ratio, and the CPU each server process
 * spends per request (its process.cpuUsage across the run / the requests answered). Two baselines:
 * the body as a string, as bench:http's (Node encodes it on every send), and the body as one Buffer
 * made at start (the least any server can do for this answer).
 *
 * The catalog holds 5,000 Kalshi-like markets (Kalshi-length rules text, events, fee schedules, a
 * tenth closed and a tenth resolved) and 1,000 Polymarket ones; while the load runs, the quotes of
 * the listed markets change 1,000 times a second (`--quotes`) through the feed path and are written
 * to the store every two seconds, as a live venue's would be.
 *
 * Targets (issue 26): ratio >= 0.5, CPU <= 0.2 ms a request; and >= 2 x pmxt's sidecar (which
 * answered about 1,750 req/s on the same listing, on its machine: compare req/s only on the same one).
 *
 *   npm run bench:markets [-- --duration 5 --connections 50 --rounds 5 --markets 5000 --quotes 1000]
 */
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { median, pass } from "./support/compare";
import { announce, arg, likeFromParent, type Ready, startChild } from "./support/paired";

const LISTING = "/v1/markets?venue=kalshi&limit=100";
/** Where each server child tells its own CPU time (user + system, microseconds) so far. */
const CPU_PATH = "/_bench/cpu";
/** Quote changes a second on the listed markets while the load runs (`--quotes`; 0: a still page). */
const QUOTES_PER_SECOND = arg("quotes", 1_000);
const TARGET_RATIO = 0.5;
const TARGET_CPU_MS = 0.2;

const cpuNow = () => {
  const used = process.cpuUsage();
  return { micros: used.user + used.system };
};

// --- the catalog -----------------------------------------------------------------------------------

const CITIES = ["NY", "CHI", "MIA", "AUS", "DEN", "LAX", "PHIL", "SEA"];

/** A Kalshi-length rules text (rules_primary, a blank line, rules_secondary: ~700 characters). */
function kalshiRules(city: string, low: number, day: string): string {
  return (
    `If the highest temperature recorded in ${city} for ${day}, as reported by the National Weather ` +
    `Service's Climatological Report (Daily), is between ${low}° and ${low + 1}° inclusive, then the market ` +
    `resolves to Yes. Outcome verified from the NWS Climatological Report (Daily). \n\n` +
    "Not all weather data is the same. While checking the source data before the Climatological Report " +
    "is released can be helpful, the information in the report itself is final. The market will be " +
    "settled using the first complete report released after the end of the day, and revisions published " +
    "after expiration will not be considered. If no report is published within 7 days, the market " +
    "resolves according to the rulebook's provisions for an unavailable source."
  );
}

async function seedCatalog(
  runtime: Awaited<ReturnType<typeof import("../src/runtime").createRuntime>>,
  kalshiMarkets: number,
): Promise<string[]> {
  const { kalshiSchedule, polymarketSchedule } = await import("@crossbook/fees");
  const catalogRepo = await import("../src/catalog/repo");
  const { marketRow } = await import("../src/catalog/service");
  const now = new Date().toISOString();
  const rows: Array<ReturnType<typeof marketRow>> = [];
  const openKalshi: string[] = [];
  for (let i = 0; i < kalshiMarkets; i++) {
    const city = CITIES[i % CITIES.length]!;
    const day = `26JAN${String(10 + ((i >> 3) % 20)).padStart(2, "0")}`;
    const low = 30 + (i % 40);
    const event = `KXHIGH${city}-${day}`;
    const ticker = `${event}-B${low}.5-${String(i).padStart(5, "0")}`;
    const status = i % 10 === 3 ? "closed" : i % 10 === 7 ? "resolved" : "open";
    const id = `kalshi:${ticker}`;
    if (status === "open") openKalshi.push(id);
    rows.push(
      marketRow(
        {
          id,
          venue: "kalshi",
          venueMarketId: ticker,
          eventId: `kalshi:${event}`,
          title: `Will the high temp in ${city} be ${low}-${low + 1}° on ${day}?`,
          question: `Highest temperature in ${city} on ${day}: ${low}° to ${low + 1}°`,
          rules: kalshiRules(city, low, day),
          settlementSource: "National Weather Service",
          outcomes: {
            yes: { label: "Yes", venueTokenId: "yes" },
            no: { label: "No", venueTokenId: "no" },
          },
          status,
          resolution: status === "resolved" ? "no" : null,
          openTime: "2026-01-01T15:00:00.000Z",
          closeTime: "2026-01-30T04:59:00.000Z",
          tickSize: 10_000,
          minSize: 1_000_000,
          volume: 1_000_000_000 + i * 1_000_000,
          volume24h: 50_000_000 + i * 10_000,
          liquidity: 10_000_000_000,
          url: `https://kalshi.com/markets/${event.toLowerCase()}`,
          lastPrice: 500_000,
          bestBid: 490_000,
          bestAsk: 510_000,
          price24hAgo: 480_000,
          negRisk: false,
          fees: kalshiSchedule(i % 3 === 0 ? "quadratic" : "quadratic_with_maker_fees", 1),
          updatedAt: now,
        },
        now,
      ),
    );
  }
  for (let i = 0; i < kalshiMarkets / 5; i++) {
    const condition = `0x${i.toString(16).padStart(64, "0")}`;
    rows.push(
      marketRow(
        {
          id: `polymarket:${condition}`,
          venue: "polymarket",
          venueMarketId: condition,
          eventId: `polymarket:event-${i >> 2}`,
          title: `Polymarket market ${i}`,
          question: `Will polymarket market ${i} resolve Yes?`,
          rules: kalshiRules("London", i % 40, "Jan 12"),
          settlementSource: null,
          outcomes: {
            yes: { label: "Yes", venueTokenId: `${i}1` },
            no: { label: "No", venueTokenId: `${i}2` },
          },
          status: "open",
          resolution: null,
          openTime: null,
          closeTime: null,
          tickSize: 10_000,
          minSize: 5_000_000,
          volume: 1_000_000_000,
          volume24h: 50_000_000,
          liquidity: 10_000_000_000,
          url: null,
          lastPrice: 300_000,
          bestBid: 290_000,
          bestAsk: 310_000,
          price24hAgo: null,
          negRisk: false,
          fees: polymarketSchedule({ rate: 0.05, exponent: 1, capBps: 1000 }),
          updatedAt: now,
        },
        now,
      ),
    );
  }
  await runtime.store.db.transaction().execute(async (trx) => {
    for (const row of rows) await catalogRepo.upsertMarket(trx, row);
  });
  return openKalshi.sort();
}

// --- the servers -------------------------------------------------------------------------------------

async function serveFull(): Promise<void> {
  // Imported here, not at the top: the bare server child loads none of the app.
  const { startBenchApp } = await import("./support/app");
  const { runtime, app, services, secret } = await startBenchApp({
    build: {
      register: (instance) => {
        instance.get(CPU_PATH, { config: { auth: "none" }, schema: { hide: true } }, async () => cpuNow());
      },
    },
  });
  const open = await seedCatalog(runtime, arg("markets", 5_000));
  // The listed page: the first 100 open Kalshi markets by id. Their quotes move while the load runs.
  const listed = open.slice(0, 100);
  const stamp = new Date().toISOString();
  let tick = 0;
  const quote = () => {
    const marketId = listed[tick % listed.length]!;
    const cents = 40 + ((tick * 7) % 20);
    tick++;
    services.live.ingest("kalshi", {
      kind: "quote",
      marketId,
      bestBid: cents * 10_000,
      bestAsk: (cents + 2) * 10_000,
      lastPrice: (cents + 1) * 10_000,
      timestamp: stamp,
    });
  };
  setInterval(() => {
    for (let i = 0; i < QUOTES_PER_SECOND / 100; i++) quote();
  }, 10).unref();
  // Changed prices are written to the store every two seconds, as in production.
  services.live.start();

  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}${LISTING}`;
  const sample = await fetch(url, { headers: { authorization: `Bearer ${secret}` } });
  const body = await sample.text();
  if (sample.status !== 200) throw new Error(`full stack answered ${sample.status}: ${body}`);
  const data = (JSON.parse(body) as { data: Array<{ id: string; rules: string | null }> }).data;
  if (data.length !== 100 || data[0]!.id !== listed[0] || !data[0]!.rules)
    throw new Error("expected the first 100 open Kalshi markets, with their rules");
  announce({ url, headers: { authorization: `Bearer ${secret}` }, body });
}

/**
 * A plain Fastify route answering the full stack's sample bytes: as a string, as bench:http's
 * baseline does (encoded to UTF-8 on every send), or as a Buffer made once (`bare-bytes`: the least a
 * server can do for the answer).
 */
async function serveBare(asBuffer: boolean): Promise<void> {
  const text = likeFromParent().body;
  const body = asBuffer ? Buffer.from(text) : text;
  const Fastify = (await import("fastify")).default;
  const app = Fastify({ logger: false });
  app.get("/v1/markets", async (_request, reply) =>
    reply.header("content-type", "application/json; charset=utf-8").send(body),
  );
  app.get(CPU_PATH, async () => cpuNow());
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = (app.server.address() as { port: number }).port;
  announce({ url: `http://127.0.0.1:${port}${LISTING}`, headers: {}, body: text });
}

// --- the load ----------------------------------------------------------------------------------------

interface Server {
  child: ChildProcess;
  ready: Ready;
}

type Mode = "full" | "bare" | "bare-bytes";

function startServer(script: string, mode: Mode, like?: Ready): Promise<Server> {
  return startChild(script, mode, like);
}

async function cpuMicros(server: Server): Promise<number> {
  const response = await fetch(new URL(CPU_PATH, server.ready.url));
  return ((await response.json()) as { micros: number }).micros;
}

interface Run {
  perSecond: number;
  /** CPU milliseconds the server spent per request answered. */
  cpuMs: number;
}

async function load(server: Server, duration: number, connections: number): Promise<Run> {
  const before = await cpuMicros(server);
  const result = await autocannon({
    url: server.ready.url,
    headers: server.ready.headers,
    duration,
    connections,
    pipelining: 1,
  });
  const after = await cpuMicros(server);
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`load run had ${result.non2xx} non-2xx responses and ${result.errors} errors`);
  }
  const answered = result["2xx"];
  return { perSecond: result.requests.average, cpuMs: (after - before) / 1000 / answered };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

const SIDES = ["bare", "bare-bytes", "full"] as const;
type Side = (typeof SIDES)[number];

async function main(): Promise<void> {
  const script = fileURLToPath(import.meta.url);
  const duration = arg("duration", 5);
  const connections = arg("connections", 50);
  const rounds = arg("rounds", 5);
  const servers: Partial<Record<Side, Server>> = {};
  try {
    const full = await startServer(script, "full");
    servers.full = full;
    servers.bare = await startServer(script, "bare", full.ready);
    servers["bare-bytes"] = await startServer(script, "bare-bytes", full.ready);
    // Warm-up: the full stack has more code for V8 to optimize; give each time to reach steady state.
    await load(full, 6, connections);
    for (const side of ["bare", "bare-bytes"] as const) await load(servers[side]!, 3, connections);
    const runs: Array<Record<Side, Run>> = [];
    for (let round = 1; round <= rounds; round++) {
      // Rotate which side goes first, so a neighbour's load drifting does not always land on one.
      const order = SIDES.map((_, i) => SIDES[(i + round) % SIDES.length]!);
      const run: Partial<Record<Side, Run>> = {};
      for (const side of order) run[side] = await load(servers[side]!, duration, connections);
      const r = run as Record<Side, Run>;
      runs.push(r);
      const line = (side: Side) =>
        `${r[side].perSecond.toFixed(0)} req/s (${r[side].cpuMs.toFixed(3)} ms CPU each)`;
      console.log(
        `round ${round}: bare ${line("bare")}, bare bytes ${line("bare-bytes")}, crossbook ${line("full")}, ` +
          `ratio ${(r.full.perSecond / r.bare.perSecond).toFixed(3)} (bytes ${(r.full.perSecond / r["bare-bytes"].perSecond).toFixed(3)})`,
      );
    }
    const rate = (side: Side) => median(runs.map((r) => r[side].perSecond)).toFixed(0);
    const cpuOf = (side: Side) => median(runs.map((r) => r[side].cpuMs));
    const ratio = median(runs.map((r) => r.full.perSecond / r.bare.perSecond));
    const bytesRatio = median(runs.map((r) => r.full.perSecond / r["bare-bytes"].perSecond));
    const cpu = cpuOf("full");
    const name = "bench/markets";
    const of = `median of ${rounds}`;
    console.log(
      `${name} response body: ${Buffer.byteLength(full.ready.body)} bytes, ${QUOTES_PER_SECOND} quote changes/s on the listed markets, ` +
        `${connections} connections, ${duration} s per run`,
    );
    console.log(
      `${name} authenticated GET ${LISTING}: ${rate("full")} req/s, ${cpu.toFixed(3)} ms CPU a request (${of})`,
    );
    console.log(
      `${name} bare Fastify, same bytes as a string: ${rate("bare")} req/s, ${cpuOf("bare").toFixed(3)} ms CPU a request (${of})`,
    );
    console.log(
      `${name} bare Fastify, same bytes as one Buffer: ${rate("bare-bytes")} req/s, ${cpuOf("bare-bytes").toFixed(3)} ms CPU a request (${of})`,
    );
    console.log(
      `${name} ratio ${ratio.toFixed(3)} against the string baseline, ${bytesRatio.toFixed(3)} against the Buffer one (${of} rounds; target >= ${TARGET_RATIO}) ${pass(ratio >= TARGET_RATIO)}`,
    );
    console.log(
      `${name} CPU ${cpu.toFixed(3)} ms a request (${of}; target <= ${TARGET_CPU_MS} ms) ${pass(cpu <= TARGET_CPU_MS)}`,
    );
  } finally {
    await Promise.all(Object.values(servers).map((server) => stop(server.child)));
  }
}

const child = process.argv.indexOf("--child");
if (child >= 0) {
  const mode = process.argv[child + 1] as Mode;
  await (mode === "full" ? serveFull() : serveBare(mode === "bare-bytes"));
} else {
  await main();
}
