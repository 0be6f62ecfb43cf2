/**
 * bench/http: throughput of an authenticated, rate-limited GET through the full crossbook stack
 * (auth with a real key, rate limiter, permission check, envelope, metrics, request id), as a ratio
 * against a bare Fastify route returning the same bytes, measured in the same run with autocannon.
 * Target (issue 2): ratio >= 0.6.
 *
 * Each server runs in its own child process and only one is under load at a time, so the load
 * generator (this process) and the loaded server have the machine's two cores.
 *
 *   npm run bench:http [-- --duration 5 --connections 50 --rounds 5]
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";

const here = fileURLToPath(import.meta.url);

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

interface Ready {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Child mode: start one server and report its URL on stdout. */
async function serveChild(mode: "bare" | "full"): Promise<void> {
  if (mode === "full") {
    const { loadConfig } = await import("../src/config");
    const { createRuntime } = await import("../src/runtime");
    const { buildApp } = await import("../src/app");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-bench-"));
    const config = loadConfig({
      DATABASE_URL: `sqlite:${path.join(dir, "bench.db")}`,
      CROSSBOOK_DATA_DIR: dir,
      LOG_LEVEL: "warn",
      PASSWORD_HASH_COST: "10",
    });
    const runtime = await createRuntime(config);
    const { app, services } = await buildApp(runtime);
    const account = await services.accounts.create({
      email: "bench@example.com",
      password: "bench password 123",
    });
    // A real budget that the run cannot exhaust: the limiter still counts every request.
    await services.accounts.update(account.id, { tier: "enterprise", rate_limit_per_minute: 100_000_000 });
    const { secret } = await services.apiKeys.create(account.id, { name: "bench", type: "read_only" });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/v1/account`;
    const sample = await fetch(url, { headers: { authorization: `Bearer ${secret}` } });
    const body = await sample.text();
    if (sample.status !== 200) throw new Error(`full stack answered ${sample.status}: ${body}`);
    process.stdout.write(
      `${JSON.stringify({ url, headers: { authorization: `Bearer ${secret}` }, body } satisfies Ready)}\n`,
    );
  } else {
    const body = process.env["BENCH_BODY"] ?? "{}";
    const Fastify = (await import("fastify")).default;
    const app = Fastify({ logger: false });
    app.get("/v1/account", async (_request, reply) =>
      reply.header("content-type", "application/json; charset=utf-8").send(body),
    );
    await app.listen({ host: "127.0.0.1", port: 0 });
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/v1/account`;
    process.stdout.write(`${JSON.stringify({ url, headers: {}, body } satisfies Ready)}\n`);
  }
}

async function startChild(
  mode: "bare" | "full",
  body?: string,
): Promise<{ child: ChildProcess; ready: Ready }> {
  const child = spawn(process.execPath, ["--import", "tsx", here, "--child", mode], {
    env: { ...process.env, ...(body ? { BENCH_BODY: body } : {}) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve(JSON.parse(line));
    });
    child.on("exit", (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  return { child, ready };
}

async function load(ready: Ready, duration: number, connections: number): Promise<number> {
  const result = await autocannon({
    url: ready.url,
    headers: ready.headers,
    duration,
    connections,
    pipelining: 1,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`load run had ${result.non2xx} non-2xx responses and ${result.errors} errors`);
  }
  return result.requests.average;
}

async function main(): Promise<void> {
  const childIndex = process.argv.indexOf("--child");
  if (childIndex >= 0) return serveChild(process.argv[childIndex + 1] as "bare" | "full");

  const duration = arg("duration", 5);
  const connections = arg("connections", 50);
  const rounds = arg("rounds", 5);
  // Both servers stay up; runs alternate bare/full so each pair sees the same machine load, and the
  // median of the pairs' ratios is the figure (robust to a noisy neighbour in one run).
  const full = await startChild("full");
  const bare = await startChild("bare", full.ready.body);
  try {
    // Warm-up: the full stack has more code for V8 to optimize; give both time to reach steady state.
    await load(full.ready, 6, connections);
    await load(bare.ready, 3, connections);
    const ratios: number[] = [];
    const fullRates: number[] = [];
    const bareRates: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      const bareRps = await load(bare.ready, duration, connections);
      const fullRps = await load(full.ready, duration, connections);
      ratios.push(fullRps / bareRps);
      fullRates.push(fullRps);
      bareRates.push(bareRps);
      console.log(
        `round ${round}: bare ${bareRps.toFixed(0)} req/s, full stack ${fullRps.toFixed(0)} req/s, ratio ${(fullRps / bareRps).toFixed(3)}`,
      );
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const ratio = median(ratios);
    console.log(
      `response body: ${full.ready.body.length} bytes, ${connections} connections, ${duration} s per run`,
    );
    console.log(
      `bench/http  full-stack authenticated GET /v1/account: ${median(fullRates).toFixed(0)} req/s (median)`,
    );
    console.log(
      `bench/http  bare Fastify, same bytes:                  ${median(bareRates).toFixed(0)} req/s (median)`,
    );
    console.log(
      `bench/http  ratio ${ratio.toFixed(3)} (median of ${rounds} paired runs; target >= 0.6) ${ratio >= 0.6 ? "PASS" : "BELOW TARGET"}`,
    );
  } finally {
    full.child.kill("SIGKILL");
    bare.child.kill("SIGKILL");
  }
}

await main();
