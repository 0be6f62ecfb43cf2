/**
 * bench/agent: what the SDK costs on top of a plain `fetch`, and how fast the backtester replays.
 *
 * 1. SDK overhead. Against a running `crossbook demo` (spawned here), the same calls made through
 *    `Crossbook` (typing, envelope unwrapping, error mapping, retry bookkeeping) and through raw
 *    `fetch` with the same headers, in alternating rounds so both see the same server and machine:
 *    GET /v1/balance, GET /v1/markets/{id}, GET /v1/prices for 10 markets. Printed: median time per
 *    call of each, and their ratio (target ≤ 1.1×).
 * 2. Backtest speed: bench/backtest.ts (candles/s, target ≥ 1,000,000), run after.
 *
 *   npm run bench:agent [-- --calls 300 --rounds 5]
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Crossbook } from "../src/index";
import { startDemo } from "../test/support/demo";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const CALLS = arg("calls", 300);
const ROUNDS = arg("rounds", 5);
const TARGET = 1.1;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const demo = await startDemo({ tickMs: 1000, requestsPerMinute: 10_000_000 });
try {
  const client = new Crossbook({ apiKey: demo.sandboxKey, environment: "sandbox", baseUrl: demo.url });
  let ids: string[] = [];
  for (let i = 0; i < 100 && ids.length < 10; i++) {
    ids = (await client.markets.list({ status: "open", limit: 10 })).data.map((m) => m.id);
    if (ids.length < 10) await new Promise((r) => setTimeout(r, 200));
  }
  const headers = { authorization: `Bearer ${demo.sandboxKey}`, accept: "application/json" };
  const raw = async (path: string) => {
    const res = await fetch(`${demo.url}${path}`, { headers });
    if (!res.ok) throw new Error(`${res.status}`);
    return ((await res.json()) as { data: unknown }).data;
  };
  const calls: Array<[string, () => Promise<unknown>, () => Promise<unknown>]> = [
    ["GET /v1/balance", () => client.balance(), () => raw("/v1/balance")],
    [
      "GET /v1/markets/{id}",
      () => client.markets.get(ids[0]!),
      () => raw(`/v1/markets/${encodeURIComponent(ids[0]!)}`),
    ],
    [
      "GET /v1/prices (10)",
      () => client.prices.get(ids),
      () => raw(`/v1/prices?market_ids=${encodeURIComponent(ids.join(","))}`),
    ],
  ];
  console.log(
    `bench/agent: SDK vs raw fetch, ${CALLS} sequential calls per round, ${ROUNDS} alternating rounds`,
  );
  const ratios: number[] = [];
  for (const [name, sdk, plain] of calls) {
    for (let i = 0; i < 50; i++) {
      await sdk();
      await plain();
    }
    const sdkTimes: number[] = [];
    const rawTimes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // ABBA order: neither side always runs first (warm caches, GC debt).
      const pair = [
        [plain, rawTimes],
        [sdk, sdkTimes],
      ] as const;
      for (const [fn, out] of round % 2 === 0 ? pair : [...pair].reverse()) {
        const start = performance.now();
        for (let i = 0; i < CALLS; i++) await fn();
        out.push((performance.now() - start) / CALLS);
      }
    }
    const ratio = median(sdkTimes) / median(rawTimes);
    ratios.push(ratio);
    console.log(
      `  ${name.padEnd(22)} sdk ${(median(sdkTimes) * 1000).toFixed(0)} µs/call, raw fetch ${(median(rawTimes) * 1000).toFixed(0)} µs/call: ${ratio.toFixed(3)}x`,
    );
  }
  const worst = Math.max(...ratios);
  console.log(
    `  SDK overhead (worst of the calls): ${worst.toFixed(3)}x (target <= ${TARGET}x): ${worst <= TARGET ? "PASS" : "MISS"}`,
  );
} finally {
  await demo.close();
}

const backtest = fileURLToPath(new URL("./backtest.ts", import.meta.url));
if (existsSync(backtest))
  process.stdout.write(execFileSync(process.execPath, ["--import", "tsx", backtest], { encoding: "utf8" }));
