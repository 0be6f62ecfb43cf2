/**
 * bench/orders: sandbox `POST /v1/orders` end to end — auth and rate limit, validation, the market
 * lookup, the sandbox exchange (walking the real book or resting in the engine), the durable write
 * of the order, its fills, position and balance, and the outbox events, all in one transaction —
 * as a ratio against a bare Fastify POST route that parses and echoes the same bodies, same run.
 * Half the orders rest (a GTC bid under the market), half take liquidity at once (a buy at the ask,
 * filled, opening or growing a position). Target (issue 5): ratio >= 0.3.
 *
 *   npm run bench:orders [-- --duration 5 --connections 50 --rounds 5]
 */
import { fileURLToPath } from "node:url";
import { announce, runPaired, serveBare } from "./support/paired";

const MARKET = "kalshi:KXBENCH-26DEC31-T1000";

const BODIES = [
  JSON.stringify({ market_id: MARKET, side: "buy", price: 0.4, amount: 1 }),
  JSON.stringify({ market_id: MARKET, side: "buy", price: 0.51, amount: 1, time_in_force: "IOC" }),
];

async function serveFull(): Promise<void> {
  const { seedBenchMarkets, startBenchApp } = await import("./support/app");
  const { TestVenue, testMarket } = await import("../test/support/fake-venue");
  // An in-process venue whose REST book has deep liquidity at 0.49 / 0.51: the exchange reads it
  // as it would a real venue's (cached for a moment by the prices service).
  const venue = new TestVenue("kalshi");
  venue.set(testMarket("kalshi", MARKET.slice("kalshi:".length)));
  venue.books.set(MARKET, {
    marketId: MARKET,
    yes: { bids: [{ price: 490_000, size: 1e12 }], asks: [{ price: 510_000, size: 1e12 }] },
    no: { bids: [{ price: 490_000, size: 1e12 }], asks: [{ price: 510_000, size: 1e12 }] },
    timestamp: new Date().toISOString(),
    sequence: null,
  });
  const { runtime, app, services, secret, accountId } = await startBenchApp({
    key: { type: "trading", environment: "sandbox" },
    build: { venues: new Map([["kalshi", venue]]) },
    account: { plan: "enterprise", agent_rate_limit_per_minute: 100_000_000 },
  });
  await seedBenchMarkets(runtime, [MARKET]);
  await services.prices.reload();
  // Enough fake USDC for every order the run can place.
  await services.sandbox.deposit({ accountId, environment: "sandbox" }, 1_000_000_000 * 1_000_000);

  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/v1/orders`;
  const headers = { authorization: `Bearer ${secret}` };
  let sample = "";
  for (const body of BODIES) {
    const response = await fetch(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body,
    });
    sample = await response.text();
    if (response.status !== 201) throw new Error(`full stack answered ${response.status}: ${sample}`);
  }
  announce({ url, headers, body: sample, requestBodies: BODIES });
}

const child = process.argv.indexOf("--child");
if (child >= 0) {
  await (process.argv[child + 1] === "full" ? serveFull() : serveBare("/v1/orders", { post: true }));
} else {
  await runPaired({
    script: fileURLToPath(import.meta.url),
    name: "bench/orders",
    label: "sandbox POST /v1/orders (half resting, half filled at once)",
    target: 0.3,
  });
}
