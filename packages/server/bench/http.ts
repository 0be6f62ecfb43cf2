/**
 * bench/http: throughput of an authenticated, rate-limited GET through the full crossbook stack
 * (auth with a real key, rate limiter, permission check, envelope, metrics, request id), as a ratio
 * against a bare Fastify route returning the same bytes, measured in the same run with autocannon.
 * Target (issue 2): ratio >= 0.6.
 *
 *   npm run bench:http [-- --duration 5 --connections 50 --rounds 5]
 */
import { fileURLToPath } from "node:url";
import { announce, runPaired, serveBare } from "./support/paired";

async function serveFull(): Promise<void> {
  // Imported here, not at the top: the bare server child loads none of the app.
  const { startBenchApp } = await import("./support/app");
  const { app, secret } = await startBenchApp();
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
