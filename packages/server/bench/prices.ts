/**
 * bench/prices: throughput of an authenticated, rate-limited `GET /v1/prices` for 50 markets through
 * the full crossbook stack, as a ratio against a bare Fastify route returning the same bytes, in the
 * same run. The 50 markets are live: their quotes change 2,000 times a second (40 per market) while
 * the load runs, so answers are rebuilt as they would be in production, not served from a warm
 * cache. Target (issue 4): ratio >= 0.5.
 *
 *   npm run bench:prices [-- --duration 5 --connections 50 --rounds 5]
 */
import { fileURLToPath } from "node:url";
import { announce, runPaired, serveBare } from "./support/paired";

const MARKETS = 50;
const UPDATES_PER_SECOND = 2_000;

async function serveFull(): Promise<void> {
  // Imported here, not at the top: the bare server child loads none of the app.
  const { seedBenchMarkets, startBenchApp } = await import("./support/app");
  const { runtime, app, services, secret } = await startBenchApp();
  const now = new Date().toISOString();
  const ids = Array.from({ length: MARKETS }, (_, i) => `kalshi:KXBENCH-26DEC31-T${1000 + i}`);
  await seedBenchMarkets(runtime, ids);
  await services.prices.reload();
  // Quotes change while the load runs: books and trades through the same path feed events take.
  let tick = 0;
  const ingest = () => {
    const id = ids[tick % MARKETS]!;
    const cents = 40 + ((tick * 7) % 20);
    tick++;
    if (tick % 10 === 0) {
      services.live.ingest("kalshi", {
        kind: "trade",
        trade: {
          marketId: id,
          outcome: "yes",
          price: cents * 10_000,
          size: 5_000_000,
          takerSide: "buy",
          timestamp: now,
          venueTradeId: null,
        },
      });
    } else {
      services.live.ingest("kalshi", {
        kind: "book",
        book: {
          marketId: id,
          yes: {
            bids: [{ price: cents * 10_000, size: 100_000_000 }],
            asks: [{ price: (cents + 2) * 10_000, size: 100_000_000 }],
          },
          no: { bids: [], asks: [] },
          timestamp: now,
          sequence: null,
        },
      });
    }
  };
  for (let i = 0; i < MARKETS * 2; i++) ingest();
  setInterval(() => {
    for (let i = 0; i < UPDATES_PER_SECOND / 100; i++) ingest();
  }, 10);

  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/v1/prices?market_ids=${ids.join(",")}`;
  const sample = await fetch(url, { headers: { authorization: `Bearer ${secret}` } });
  const body = await sample.text();
  if (sample.status !== 200) throw new Error(`full stack answered ${sample.status}: ${body}`);
  if (Object.keys(JSON.parse(body).data).length !== MARKETS)
    throw new Error("expected 50 markets in the answer");
  announce({ url, headers: { authorization: `Bearer ${secret}` }, body });
}

const child = process.argv.indexOf("--child");
if (child >= 0) {
  await (process.argv[child + 1] === "full" ? serveFull() : serveBare("/v1/prices"));
} else {
  await runPaired({
    script: fileURLToPath(import.meta.url),
    name: "bench/prices",
    label: `authenticated GET /v1/prices, ${MARKETS} live markets`,
    target: 0.5,
  });
}
