/**
 * bench/arbitrage: the cost of one `GET /v1/arbitrage` scan over 200 verified pairs (400 markets on
 * live books) against the cost of `GET /v1/prices` for the same 400 markets (four requests of 100,
 * its most), both through the full stack (auth, rate limit, envelope) of one server, in the same run.
 * The books change 2,000 times a second (5 a second per market) while the load runs, through the
 * venue feed's path, so scans reprice the pairs whose books moved and prices rebuild their entries.
 *
 * Cost = time per answer under load (1 / throughput, autocannon): the scan's, over the four prices
 * requests'. Each round loads /v1/prices, then /v1/arbitrage; the figure is the median of the
 * rounds' ratios. The scan asks `min_size=1&limit=100`, so about half the pairs pay and the answer
 * is full. Target: ratio <= 3. A scan walks both outcomes' books of two markets per pair and
 * prices them after fees where /v1/prices copies one cached quote per market, so it costs more; but
 * a client scanning by itself would need at least those prices (in fact both books of every
 * market) on every poll, so a scan worth no more than three polls of the prices keeps serving it
 * from crossbook the cheaper way. Printed for information: one scan right after all 400 books
 * changed, when no pair's figures can be reused (in-process, before the load): what a scan costs
 * when books move faster than scans come.
 *
 *   npm run bench:arbitrage [-- --duration 5 --connections 20 --rounds 5]
 */
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { arg } from "./support/child";
import { announce, type Ready, startChild, stop } from "./support/paired";

const PAIRS = 200;
const PRICES_BATCH = 100;
const UPDATES_PER_SECOND = 2_000;
const TARGET = 3;

interface ArbitrageReady extends Ready {
  /** The /v1/prices paths that cover the same markets. */
  pricesPaths: string[];
  arbitragePath: string;
  /** The sample scan's size and opportunities (its body is too large to announce on one line read). */
  scanBytes: number;
  opportunities: number;
  /** Median ms of an in-process scan right after every book changed. */
  repriceAllMs: number;
}

/** Ask levels from `top` up, a cent apart, `size` contracts each, in micro-units. */
function asks(top: number, size: number) {
  return Array.from({ length: 5 }, (_, i) => ({ price: (top + i) * 10_000, size: size * 1_000_000 }));
}

async function serveFull(): Promise<void> {
  // Imported here, not at the top: the parent process loads none of the app.
  const { startBenchApp } = await import("./support/app");
  const { TestVenue, testMarket } = await import("../test/support/fake-venue");
  const polymarket = new TestVenue("polymarket");
  const kalshi = new TestVenue("kalshi");
  const pm = Array.from({ length: PAIRS }, (_, i) => `polymarket:BENCH${i}`);
  const kx = Array.from({ length: PAIRS }, (_, i) => `kalshi:KXBENCH-${i}`);
  for (let i = 0; i < PAIRS; i++) {
    polymarket.set(testMarket("polymarket", `BENCH${i}`, { title: `Bench question ${i}?` }));
    kalshi.set(testMarket("kalshi", `KXBENCH-${i}`, { title: `Bench question ${i}` }));
  }
  const { app, services, secret, accountId } = await startBenchApp({
    build: {
      venues: new Map([
        ["polymarket", polymarket],
        ["kalshi", kalshi],
      ]),
    },
    // Every market on the feed; pairs are made below, not by the matcher.
    env: { FEED_MAX_MARKETS_PER_VENUE: String(PAIRS), MATCHING_ENABLED: "false" },
  });
  await services.catalog.syncVenue("polymarket");
  await services.catalog.syncVenue("kalshi");
  for (let i = 0; i < PAIRS; i++) {
    await services.matching.create(
      { market_ids: [pm[i]!, kx[i]!], relation: "identity" },
      { accountId, keyId: null },
    );
  }

  // YES on Polymarket from 44–49 cents + NO on Kalshi from 48–53: pairs 0.92–1.02 at the top, so
  // about half pay after fees; every tick moves one market's book by a cent.
  let tick = 0;
  const now = new Date().toISOString();
  const push = (i: number, shift: number) => {
    const yesTop = 44 + ((i + shift) % 6);
    const noTop = 48 + ((i * 7 + shift) % 6);
    const book = (marketId: string, yes: number, no: number) => ({
      marketId,
      yes: { bids: [{ price: (99 - no) * 10_000, size: 50_000_000 }], asks: asks(yes, 50) },
      no: { bids: [{ price: (99 - yes) * 10_000, size: 50_000_000 }], asks: asks(no, 50) },
      timestamp: now,
      sequence: null,
    });
    polymarket.emit({ kind: "book", book: book(pm[i]!, yesTop, 100 - yesTop + 2) });
    kalshi.emit({ kind: "book", book: book(kx[i]!, 100 - noTop + 2, noTop) });
  };
  for (let i = 0; i < PAIRS; i++) push(i, 0);
  // For information: a scan right after every book changed reprices every pair (no figure reused).
  const repriceAll: number[] = [];
  for (let round = 0; round < 7; round++) {
    for (let i = 0; i < PAIRS; i++) push(i, round % 2);
    const started = performance.now();
    const response = await app.inject({
      method: "GET",
      url: "/v1/arbitrage?min_size=1&limit=100",
      headers: { authorization: `Bearer ${secret}` },
    });
    if (response.statusCode !== 200) throw new Error(`the scan answered ${response.statusCode}`);
    repriceAll.push(performance.now() - started);
  }
  setInterval(() => {
    // Two books per push: 20 pushes every 10 ms is 2,000 book updates a second.
    for (let n = 0; n < UPDATES_PER_SECOND / 200; n++) {
      const i = tick % PAIRS;
      push(i, Math.floor(tick / PAIRS) % 2);
      tick++;
    }
  }, 10);

  await app.listen({ host: "127.0.0.1", port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const headers = { authorization: `Bearer ${secret}` };
  const all = [...pm, ...kx];
  const pricesPaths: string[] = [];
  for (let i = 0; i < all.length; i += PRICES_BATCH) {
    pricesPaths.push(`/v1/prices?market_ids=${all.slice(i, i + PRICES_BATCH).join(",")}`);
  }
  const arbitragePath = "/v1/arbitrage?min_size=1&limit=100";
  const sample = await fetch(`${base}${arbitragePath}`, { headers });
  const body = await sample.text();
  if (sample.status !== 200) throw new Error(`the scan answered ${sample.status}: ${body}`);
  const { data, meta } = JSON.parse(body) as { data: unknown[]; meta: { priced: number } };
  if (meta.priced !== PAIRS) throw new Error(`expected ${PAIRS} priced pairs, got ${JSON.stringify(meta)}`);
  if (data.length === 0) throw new Error("expected opportunities in the scan");
  const ready: ArbitrageReady = {
    url: base,
    headers,
    body: "",
    pricesPaths,
    arbitragePath,
    scanBytes: body.length,
    opportunities: data.length,
    repriceAllMs: repriceAll.sort((a, b) => a - b)[Math.floor(repriceAll.length / 2)]!,
  };
  announce(ready);
}

/** Requests a second over `duration` seconds, cycling through `paths`. */
async function load(ready: ArbitrageReady, paths: string[], duration: number, connections: number) {
  const result = await autocannon({
    url: ready.url,
    headers: ready.headers,
    duration,
    connections,
    pipelining: 1,
    requests: paths.map((path) => ({ method: "GET" as const, path })),
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`load run had ${result.non2xx} non-2xx responses and ${result.errors} errors`);
  }
  return result.requests.average;
}

async function run(): Promise<void> {
  const duration = arg("duration", 5);
  const connections = arg("connections", 20);
  const rounds = arg("rounds", 5);
  const server = await startChild(fileURLToPath(import.meta.url), "full");
  const ready = server.ready as ArbitrageReady;
  const batches = ready.pricesPaths.length;
  try {
    // Warm-up: both routes reach steady state (V8 optimisation, caches) before anything counts.
    await load(ready, ready.pricesPaths, 3, connections);
    await load(ready, [ready.arbitragePath], 3, connections);
    const ratios: number[] = [];
    const scanMs: number[] = [];
    const pricesMs: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      // One scan covers what `batches` prices requests cover.
      const prices = (1000 * batches) / (await load(ready, ready.pricesPaths, duration, connections));
      const scan = 1000 / (await load(ready, [ready.arbitragePath], duration, connections));
      ratios.push(scan / prices);
      scanMs.push(scan);
      pricesMs.push(prices);
      console.log(
        `round ${round}: /v1/prices for ${2 * PAIRS} markets ${prices.toFixed(3)} ms, ` +
          `/v1/arbitrage over ${PAIRS} pairs ${scan.toFixed(3)} ms, ratio ${(scan / prices).toFixed(3)}`,
      );
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const ratio = median(ratios);
    const name = "bench/arbitrage".padEnd(12);
    console.log(
      `scan answer: ${ready.scanBytes} bytes, ${ready.opportunities} opportunities; ${connections} connections, ${duration} s per run; ` +
        "cost = time per answer under load (1 / throughput)",
    );
    console.log(
      `${name} GET /v1/arbitrage, ${PAIRS} pairs on live books: ${median(scanMs).toFixed(3)} ms (median)`,
    );
    console.log(
      `${name} GET /v1/prices, same ${2 * PAIRS} markets (${batches} requests): ${median(pricesMs).toFixed(3)} ms (median)`,
    );
    console.log(
      `${name} for information: one scan right after all ${2 * PAIRS} books changed (every pair repriced), ` +
        `in-process, idle server: ${ready.repriceAllMs.toFixed(1)} ms (median of 7)`,
    );
    console.log(
      `${name} ratio ${ratio.toFixed(3)} (median of ${rounds} paired runs; target <= ${TARGET}) ${ratio <= TARGET ? "PASS" : "MISS"}`,
    );
  } finally {
    await stop(server.child);
  }
}

const child = process.argv.indexOf("--child");
if (child >= 0) await serveFull();
else await run();
