/**
 * The package as npm publishes it: `npm pack` builds dist/ (prepack) and ships it without the
 * TypeScript sources; a project that installs the tarball imports it with plain Node (no tsx), runs
 * its CLI, and type-checks against its declarations under Node's own module resolution.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL("..", import.meta.url));
const repoModules = fileURLToPath(new URL("../../../node_modules", import.meta.url));

describe("the published package", () => {
  let consumer: string;
  let files: string[];
  // `npm pack` builds dist/ in the package: leave the tree as it was found.
  const dist = path.join(packageDir, "dist");
  const hadBuild = fs.existsSync(dist);
  beforeAll(async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "cb-agent-pack-"));
    consumer = path.join(root, "consumer");
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", root], {
      cwd: packageDir,
      timeout: 120_000,
    });
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf("["))) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    files = packed!.files.map((f) => f.path);
    const installed = path.join(consumer, "node_modules", "@crossbook", "agent");
    fs.mkdirSync(installed, { recursive: true });
    await run("tar", ["-xzf", path.join(root, packed!.filename), "-C", installed, "--strip-components=1"]);
    // Its dependencies (and Node's types, for the type check) as npm would install them.
    for (const dep of ["ws", "commander", "@modelcontextprotocol", "@types"]) {
      fs.symlinkSync(path.join(repoModules, dep), path.join(consumer, "node_modules", dep));
    }
    fs.writeFileSync(path.join(consumer, "package.json"), JSON.stringify({ type: "module", private: true }));
  }, 180_000);
  afterAll(() => {
    if (consumer) fs.rmSync(path.dirname(consumer), { recursive: true, force: true });
    if (!hadBuild) fs.rmSync(dist, { recursive: true, force: true });
  });

  it("ships the build, the CLI and the README, not the sources or tests", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "dist/index.js",
        "dist/index.d.ts",
        "dist/cli.js",
        "bin/crossbook-agent.mjs",
        "README.md",
        // The fee rules the server uses too, compiled and bundled (bundleDependencies).
        "node_modules/@crossbook/fees/package.json",
        "node_modules/@crossbook/fees/dist/index.js",
        "node_modules/@crossbook/fees/dist/index.d.ts",
      ]),
    );
    expect(
      files.filter(
        (f) => f.startsWith("src/") || f.startsWith("test/") || (f.endsWith(".ts") && !f.endsWith(".d.ts")),
      ),
    ).toEqual([]);
  });

  it("imports with plain Node", async () => {
    const script =
      'import { Crossbook, Executor, createRiskChain, verifyWebhook, backtest, polymarketFee } from "@crossbook/agent";' +
      'const client = new Crossbook({ apiKey: "cb_test_example", baseUrl: "http://127.0.0.1:1" });' +
      "console.log([Crossbook, Executor, createRiskChain, verifyWebhook, backtest].map((x) => typeof x).join(), typeof client.prices.get," +
      " polymarketFee(0.5, 100, { rate: 0.05, exponent: 1 }));";
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: consumer,
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    // The bundled fee rules run under plain Node: $1.25 for 100 shares at 0.50, rate 0.05.
    expect(stdout.trim()).toBe("function,function,function,function,function function 1.25");
  });

  it("runs its CLI from the build", async () => {
    const { stdout } = await run(
      process.execPath,
      [path.join(consumer, "node_modules", "@crossbook", "agent", "bin", "crossbook-agent.mjs"), "--help"],
      { cwd: consumer, env: { ...process.env, NODE_OPTIONS: "" } },
    );
    expect(stdout).toMatch(/Usage: crossbook-agent/);
    expect(stdout).toMatch(/dashboard/);
  });

  it("type-checks a consumer under Node's module resolution, with real types (not any)", async () => {
    fs.writeFileSync(
      path.join(consumer, "agent.ts"),
      [
        'import { Crossbook, CrossbookApiError } from "@crossbook/agent";',
        'const client = new Crossbook({ apiKey: "cb_test_example" });',
        'export const prices = client.prices.get(["kalshi:A"], { orderbook: true });',
        "export const isApiError = (e: unknown) => e instanceof CrossbookApiError;",
        "// @ts-expect-error: the options require an API key (an unused directive fails if types were any)",
        "export const bad = new Crossbook({});",
        "",
      ].join("\n"),
    );
    const tsc = path.join(repoModules, "typescript", "bin", "tsc");
    const result = await run(
      process.execPath,
      [
        tsc,
        "--noEmit",
        "--strict",
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        "--target",
        "es2022",
        "--types",
        "node",
        "agent.ts",
      ],
      { cwd: consumer },
    ).then(
      ({ stdout }) => ({ ok: true, output: stdout }),
      (error: { stdout: string; stderr: string }) => ({ ok: false, output: error.stdout + error.stderr }),
    );
    expect(result).toEqual({ ok: true, output: "" });
  }, 60_000);
});
