/**
 * The package as npm publishes it: `npm pack` builds dist/ (prepack) and ships it without the
 * TypeScript sources; a project that installs the tarball imports it with plain Node (no tsx), runs
 * its CLI, and type-checks against its declarations under Node's own module resolution.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installTarball, linkFromRepo, PACKAGE_DIR, packAgent, REPO_MODULES } from "./support/pack";

const run = promisify(execFile);

/** The relative link targets of a Markdown file's `[text](target)` links, without their `#anchor`. */
function relativeLinks(markdown: string): string[] {
  const targets = [...markdown.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
  return targets
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith("#"))
    .map((t) => t.replace(/#.*$/, ""));
}

describe("the published package", () => {
  let root: string;
  let consumer: string;
  let files: string[];
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "cb-agent-pack-"));
    consumer = path.join(root, "consumer");
    const packed = await packAgent(root);
    files = packed.files;
    fs.mkdirSync(consumer);
    fs.writeFileSync(path.join(consumer, "package.json"), JSON.stringify({ type: "module", private: true }));
    await installTarball(consumer, packed.tarball);
    // Node's types, for the type check.
    linkFromRepo(consumer, "@types");
  }, 300_000);
  afterAll(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
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
    // From src/ only the READMEs the package's README links to: no code, no tests.
    expect(
      files.filter(
        (f) =>
          (f.startsWith("src/") && !f.endsWith("/README.md")) ||
          f.startsWith("test/") ||
          (f.endsWith(".ts") && !f.endsWith(".d.ts")),
      ),
    ).toEqual([]);
  });

  it("ships every file its README links to", () => {
    const readme = fs.readFileSync(path.join(PACKAGE_DIR, "README.md"), "utf8");
    const links = relativeLinks(readme);
    expect(links).toEqual(expect.arrayContaining(["src/risk/README.md", "src/backtest/README.md"]));
    const missing = links.filter((link) => !files.includes(path.posix.normalize(link)));
    expect(missing, "linked from README.md but not in the tarball").toEqual([]);
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
    const tsc = path.join(REPO_MODULES, "typescript", "bin", "tsc");
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
