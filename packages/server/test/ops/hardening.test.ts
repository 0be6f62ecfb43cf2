/**
 * What an operator's machine exposes: `/metrics` behind a token or on its own address, the master
 * key file's permissions checked at start, and the SQLite file created readable by its owner only.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig, testConfig } from "../../src/config";
import { startMetricsServer } from "../../src/ops/metrics-server";
import { createRuntime } from "../../src/runtime";
import { createTestApp, expectError, type TestApp } from "../support/app";

const TOKEN = "metrics-token-0123456789";
let t: TestApp | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-hardening-"));
  dirs.push(dir);
  return dir;
}

describe("/metrics", () => {
  it("asks for METRICS_TOKEN when one is set, compared in constant time", async () => {
    t = await createTestApp({ config: { metricsToken: TOKEN } });
    const scrape = (authorization?: string) =>
      t!.app.inject({ method: "GET", url: "/metrics", headers: authorization ? { authorization } : {} });
    expectError(await scrape(), 401, "UNAUTHORIZED");
    expectError(await scrape(`Bearer ${TOKEN}x`), 401, "UNAUTHORIZED");
    expectError(await scrape(`Bearer ${TOKEN.slice(0, -1)}`), 401, "UNAUTHORIZED");
    const ok = await scrape(`Bearer ${TOKEN}`);
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain("crossbook_http_requests_total");
  });

  it("moves to its own address with METRICS_LISTEN, off the API's", async () => {
    t = await createTestApp({
      config: { metricsListen: { host: "127.0.0.1", port: 0 }, metricsToken: TOKEN },
    });
    expectError(await t.app.inject({ method: "GET", url: "/metrics" }), 404, "NOT_FOUND");
    const server = await startMetricsServer(t.metrics, { host: "127.0.0.1", port: 0, token: TOKEN });
    try {
      await t.app.inject({ method: "GET", url: "/healthz" });
      const refused = await fetch(`${server.url}/metrics`);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ success: false, error: { code: "UNAUTHORIZED" } });
      const scraped = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toMatch(/crossbook_http_requests_total\{method="GET",route="\/healthz"/);
      const other = await fetch(`${server.url}/v1/account`);
      expect(other.status).toBe(404);
      expect(((await other.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    } finally {
      await server.close();
    }
  });

  it("reads METRICS_TOKEN and METRICS_LISTEN from the environment, refusing weak or malformed values", () => {
    expect(loadConfig({ METRICS_TOKEN: TOKEN, METRICS_LISTEN: "127.0.0.1:9464" })).toMatchObject({
      metricsToken: TOKEN,
      metricsListen: { host: "127.0.0.1", port: 9464 },
    });
    expect(loadConfig({ METRICS_LISTEN: "[::1]:9464" }).metricsListen).toEqual({ host: "::1", port: 9464 });
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(() => loadConfig({ METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN is not valid/);
    expect(() => loadConfig({ METRICS_LISTEN: "9464" })).toThrow(/METRICS_LISTEN="9464" is not valid/);
    expect(() => loadConfig({ METRICS_LISTEN: "localhost:99999" })).toThrow(/METRICS_LISTEN/);
  });
});

describe("files at rest", () => {
  it("creates the SQLite file readable by its owner only, and its WAL the same", async () => {
    const dir = tempDir();
    const file = path.join(dir, "nested", "crossbook.db");
    const runtime = await createRuntime(
      testConfig({ database: { kind: "sqlite", file }, dataDir: dir, masterKey: Buffer.alloc(32, 1) }),
      { store: { backgroundCheckpoints: false } },
    );
    try {
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(`${file}-wal`).mode & 0o777).toBe(0o600);
    } finally {
      await runtime.close();
    }
  });

  it("warns at start when the master key file is readable by others, and not when it is 0600", async () => {
    const dir = tempDir();
    const config = testConfig({ dataDir: dir, masterKey: undefined });
    const quiet: string[] = [];
    await (await createRuntime(config, { log: (m) => quiet.push(m) })).close();
    expect(quiet.join("\n")).toMatch(/generated a master key/);
    expect(fs.statSync(path.join(dir, "master.key")).mode & 0o777).toBe(0o600);
    const again: string[] = [];
    await (await createRuntime(config, { log: (m) => again.push(m) })).close();
    expect(again.join("\n")).not.toMatch(/WARNING/);

    fs.chmodSync(path.join(dir, "master.key"), 0o644);
    const warned: string[] = [];
    await (await createRuntime(config, { log: (m) => warned.push(m) })).close();
    expect(warned.join("\n")).toMatch(
      /WARNING: .*master\.key is readable by every user \(mode 0644\).*chmod 600/,
    );
  });
});
