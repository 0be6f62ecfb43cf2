/**
 * bench/http: throughput of an authenticated, rate-limited GET through the full crossbook stack
 * (auth with a real key, rate limiter, permission check, envelope, metrics, request id), as a ratio
 * against a bare Fastify route returning the same bytes, measured in the same run with autocannon.
 * Target (issue 2): ratio >= 0.6.
 *
 *   npm run bench:http [-- --duration 5 --connections 50 --rounds 5]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { announce, runPaired, serveBare } from "./support/paired";

async function serveFull(): Promise<void> {
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
  announce({ url, headers: { authorization: `Bearer ${secret}` }, body });
}

const child = process.argv.indexOf("--child");
if (child >= 0) {
  await (process.argv[child + 1] === "full" ? serveFull() : serveBare("/v1/account"));
} else {
  await runPaired({
    script: fileURLToPath(import.meta.url),
    name: "bench/http",
    label: "full-stack authenticated GET /v1/account",
    target: 0.6,
  });
}
