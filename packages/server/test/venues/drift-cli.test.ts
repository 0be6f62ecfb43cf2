/**
 * `crossbook venues check` as a user runs it: the real CLI process, pointed at the fake venues
 * through the environment, prints progress on stderr and the report on stdout, and exits 0 when
 * every field is there, 1 when the fake drops one.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN } from "../support/serve";

const run = promisify(execFile);

let polymarket: PolymarketFake;
let kalshi: KalshiFake;
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  polymarket = await startPolymarketFake();
  kalshi = await startKalshiFake();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-drift-"));
  const key = await kalshi.feedKey();
  const keyFile = path.join(dir, "kalshi-feed.pem");
  fs.writeFileSync(keyFile, key.privateKeyPem, { mode: 0o600 });
  env = {
    PATH: process.env["PATH"],
    HOME: process.env["HOME"],
    CROSSBOOK_DATA_DIR: dir,
    CROSSBOOK_VENUES: "polymarket,kalshi",
    POLYMARKET_GAMMA_URL: polymarket.gammaUrl,
    POLYMARKET_CLOB_URL: polymarket.clobUrl,
    POLYMARKET_WS_URL: polymarket.wsUrl,
    POLYMARKET_DATA_URL: polymarket.dataUrl,
    KALSHI_API_URL: kalshi.apiUrl,
    KALSHI_WS_URL: kalshi.wsUrl,
    KALSHI_FEED_KEY_ID: key.keyId,
    KALSHI_FEED_PRIVATE_KEY_FILE: keyFile,
  };
});

afterAll(async () => {
  await Promise.all([polymarket.close(), kalshi.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...env, ...extraEnv },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// Real processes on a small, busy machine: generous timeouts.
describe("crossbook venues check (CLI)", { timeout: 120_000 }, () => {
  it("reports every endpoint of both fakes clear as one JSON object, with progress on stderr, and exits 0", async () => {
    const result = await cli(["venues", "check", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.exit_code).toBe(0);
    const endpoints = report.venues.flatMap((v: { endpoints: unknown[] }) => v.endpoints);
    expect(endpoints).toHaveLength(16);
    for (const e of endpoints) expect(e.status, `${e.venue} ${e.endpoint}`).toBe("ok");
    expect(result.stderr).toContain("crossbook: polymarket markets: GET {gamma}/markets/keyset");
    expect(result.stderr).toContain("crossbook: kalshi ws: ok");
  });

  it("names a field the venue stopped sending in its table and exits 1", async () => {
    polymarket.script.malformNext(1, "missing-fields", "/markets/keyset");
    const result = await cli(["venues", "check", "--venue", "polymarket", "--timeout-ms", "5000"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^venue\s+endpoint\s+status/);
    expect(result.stdout).toMatch(/polymarket\s+markets\s+drift/);
    expect(result.stdout).toContain("MISSING markets[].conditionId");
    expect(result.stdout).not.toContain("kalshi");
  });

  it("skips Kalshi's WebSocket without a feed key and says why", async () => {
    const result = await cli(["venues", "check", "--venue", "kalshi"], {
      KALSHI_FEED_KEY_ID: "",
      KALSHI_FEED_PRIVATE_KEY_FILE: "",
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/kalshi\s+ws\s+skipped/);
    expect(result.stdout).toContain("needs KALSHI_FEED_KEY_ID");
  });
});
