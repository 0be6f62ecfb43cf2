import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Demo, startDemo } from "./support/demo";

const run = promisify(execFile);
const example = (name: string) => fileURLToPath(new URL(`../examples/${name}.ts`, import.meta.url));

/** The example agents, each run for a few seconds against `crossbook demo`, and the webhook receiver. */
describe("examples run against crossbook demo", () => {
  let demo: Demo;
  beforeAll(async () => {
    demo = await startDemo({ tickMs: 100 });
  }, 90_000);
  afterAll(async () => {
    await demo?.close();
  });

  const start = (name: string, ...args: string[]) =>
    // The source condition: in this repository `@crossbook/agent` resolves to src/, not a build.
    run(process.execPath, ["--conditions=crossbook-source", "--import", "tsx", example(name), "4", ...args], {
      env: { ...process.env, CROSSBOOK_URL: demo.url, CROSSBOOK_API_KEY: demo.sandboxKey },
      timeout: 60_000,
    });

  it("market maker quotes both sides and cleans up", async () => {
    const { stdout } = await start("market-maker");
    expect(stdout).toMatch(/making kalshi:/);
    expect(stdout).toMatch(/bid placed at [\d.]+, ask placed at [\d.]+/);
    expect(stdout).toMatch(/stopped: cancelled \d+ quote/);
  }, 60_000);

  it("arbitrageur reads the verified events and their edges", async () => {
    const { stdout } = await start("arbitrageur");
    expect(stdout).toMatch(/spread [\d.]+, edge/);
    expect(stdout).toMatch(/positions: \d+/);
  }, 60_000);

  it("fill-driven agent trades from its private stream alone, and resumes from its cursor file", async () => {
    const folder = mkdtempSync(path.join(tmpdir(), "crossbook-fill-driven-"));
    try {
      const cursorFile = path.join(folder, "cursor.json");
      const first = (await start("fill-driven", cursorFile)).stdout;
      expect(first).toMatch(/bid 5 @ [\d.]+ \(ord_/);
      expect(first).toMatch(/filled buy 5 @ [\d.]+ \(event \d+, from the stream\)/);
      expect(first).toMatch(/offer 5 @ [\d.]+/);
      expect(first).toMatch(
        /stopped after \d+ round trip\(s\): cancelled \d+ resting order\(s\); cursor at \d+/,
      );
      // Started again: it replays what happened after its cursor (its own cancellations at exit).
      const second = (await start("fill-driven", cursorFile)).stdout;
      expect(second).toMatch(/caught up: [1-9]\d* event\(s\) replayed/);
      expect(second).toMatch(/filled buy 5 @/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it("webhook receiver on loopback gets the demo's events, every signature verified", async () => {
    // Up to 30 s to wait for the events; it stops as soon as the deposit, order and fill arrived.
    const { stdout } = await run(
      process.execPath,
      ["--conditions=crossbook-source", "--import", "tsx", example("webhook-receiver"), "30"],
      {
        env: { ...process.env, CROSSBOOK_URL: demo.url, CROSSBOOK_API_KEY: demo.sandboxKey },
        timeout: 60_000,
      },
    );
    expect(stdout).toMatch(/receiving at http:\/\/127\.0\.0\.1:\d+\/\S+ \(webhook wh_/);
    const order = /placed (ord_\S+) on/.exec(stdout)?.[1];
    expect(order).toBeDefined();
    // onEvent runs only for a delivery whose signature and timestamp verified.
    expect(stdout).toMatch(/received deposit\.completed 100 USDC \(delivery whd_\S+, signature verified\)/);
    for (const type of ["order.created", "order.filled"])
      expect(stdout).toContain(`received ${type} ${order} (delivery whd_`);
    expect(stdout).not.toContain("refused a delivery");
    expect(stdout).not.toContain("out of time");
    expect(stdout).toMatch(/done: \d+ event\(s\) received \(.*\), 0 delivery\(ies\) refused/);
  }, 90_000);

  it("momentum trader follows the stream and exits", async () => {
    const { stdout } = await start("momentum");
    expect(stdout).toMatch(/done; balance/);
  }, 60_000);
});
