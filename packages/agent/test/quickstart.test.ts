/**
 * The README's quick start, followed as written: its setup commands in a fresh folder, its `bot.ts`,
 * its run commands with the address and agent key `crossbook demo` printed, and the output it
 * promises. The one step that cannot run here as written is the registry: the `npm` the commands
 * see sends `install` to support/offline-install.ts (the packed tarball, and the repository's own
 * copies of the other packages) and everything else to the real npm.
 */
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Crossbook } from "../src/index";
import { CROSSBOOK_BIN, type Demo, startDemo } from "./support/demo";
import { PACKAGE_DIR, packAgent, REPO_MODULES } from "./support/pack";

const run = promisify(execFile);
const README = path.join(PACKAGE_DIR, "README.md");
const INSTALLER = fileURLToPath(new URL("./support/offline-install.ts", import.meta.url));

/** The fenced blocks of the quick start that follow a `<!-- quickstart: name -->` line, dedented. */
function quickstartBlocks(readme: string): Map<string, string> {
  const start = readme.indexOf("## Five-minute quick start");
  const end = readme.indexOf("\n## ", start + 1);
  const lines = readme.slice(start, end === -1 ? undefined : end).split("\n");
  const blocks = new Map<string, string>();
  for (let i = 0; i < lines.length; i++) {
    const name = /^\s*<!-- quickstart: (\S+) -->\s*$/.exec(lines[i]!)?.[1];
    if (!name) continue;
    let open = i + 1;
    while (lines[open]!.trim() === "") open++;
    const fence = /^(\s*)```/.exec(lines[open]!);
    if (!fence) throw new Error(`no code block after the quickstart: ${name} marker`);
    const indent = fence[1]!.length;
    const body: string[] = [];
    for (let j = open + 1; !/^\s*```\s*$/.test(lines[j]!); j++) body.push(lines[j]!.slice(indent));
    blocks.set(name, `${body.join("\n")}\n`);
  }
  return blocks;
}

/** An output line of the README as a pattern: `…` stands for any text. */
function linePattern(line: string): RegExp {
  const parts = line.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".+")}$`);
}

describe("the README's quick start", () => {
  const blocks = quickstartBlocks(fs.readFileSync(README, "utf8"));
  const block = (name: string) => {
    const text = blocks.get(name);
    if (text === undefined)
      throw new Error(`README.md's quick start has no <!-- quickstart: ${name} --> block`);
    return text;
  };
  let root: string;
  let project: string;
  let demo: Demo;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "cb-quickstart-"));
    const home = path.join(root, "home");
    const work = path.join(root, "work");
    const bin = path.join(root, "bin");
    for (const dir of [home, work, bin]) fs.mkdirSync(dir);
    const [packed, started] = await Promise.all([packAgent(root), startDemo()]);
    demo = started;

    // A fresh user's shell: no npm or Node settings inherited from the test runner, an empty home.
    const npm = execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim();
    const tsx = path.join(REPO_MODULES, "tsx", "dist", "cli.mjs");
    fs.writeFileSync(
      path.join(bin, "npm"),
      [
        "#!/bin/sh",
        `if [ "$1" = install ]; then shift; exec "${process.execPath}" "${tsx}" "${INSTALLER}" "$@"; fi`,
        `exec "${npm}" "$@"`,
        "",
      ].join("\n"),
      { mode: 0o755 },
    );
    env = {
      PATH: `${bin}${path.delimiter}${process.env.PATH}`,
      HOME: home,
      TMPDIR: os.tmpdir(),
      QUICKSTART_TARBALL: packed.tarball,
    };

    // Step 3, as written, in an empty folder.
    await run("sh", ["-e", "-c", block("setup")], { cwd: work, env, timeout: 120_000 });
    const made = fs.readdirSync(work);
    expect(made, "the setup makes one folder for the bot").toHaveLength(1);
    project = path.join(work, made[0]!);

    // The bot needs an open market with a book: wait for the demo's first catalog sync, as a
    // person reading the steps would have.
    const client = new Crossbook({ apiKey: demo.sandboxKey, baseUrl: demo.url, log: false });
    for (let i = 0; i < 150; i++) {
      const { data } = await client.markets.list({ venue: "kalshi", status: "open", limit: 50 });
      if (data.some((m) => (m.best_bid ?? 0) >= 0.05)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 300_000);

  afterAll(async () => {
    await demo?.close();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it("starts crossbook with the command it gives", () => {
    expect(blocks.size).toBeGreaterThan(0);
    const readme = fs.readFileSync(README, "utf8");
    const quickstart = readme.slice(readme.indexOf("## Five-minute quick start"));
    expect(quickstart).toMatch(/```sh\n\s*npx crossbook demo\n/);
    // `npx crossbook` in the repository is the server's bin, the one the test's demo runs.
    expect(fs.realpathSync(path.join(REPO_MODULES, ".bin", "crossbook"))).toBe(
      fs.realpathSync(CROSSBOOK_BIN),
    );
  });

  it("sets up an ES module project with the package installed", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(project, "package.json"), "utf8"));
    expect(manifest.type).toBe("module");
    expect(Object.keys(manifest.dependencies)).toEqual(expect.arrayContaining(["@crossbook/agent"]));
    expect(fs.existsSync(path.join(project, "node_modules", "@crossbook", "agent", "dist", "index.js"))).toBe(
      true,
    );
  });

  it("runs bot.ts with the demo's address and agent key, prints what it says, and exits", async () => {
    fs.writeFileSync(path.join(project, "bot.ts"), block("bot.ts"));
    expect(demo.agentKey, "crossbook demo printed no agent key").toMatch(/^cb_test_/);
    const values: Record<string, string> = { CROSSBOOK_URL: demo.url, CROSSBOOK_API_KEY: demo.agentKey! };
    const set = new Set<string>();
    // The README's placeholders become this demo's values (it listens on a free port, not 8080).
    const script = block("run")
      .split("\n")
      .map((line) => {
        const assignment = /^export (\w+)=(\S+)/.exec(line);
        if (!assignment) return line;
        const [, name, placeholder] = assignment as unknown as [string, string, string];
        expect(Object.keys(values), `the quick start sets ${name}`).toContain(name);
        if (name === "CROSSBOOK_URL") {
          expect(placeholder).toBe("http://127.0.0.1:8080"); // what the demo prints by default
          expect(demo.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        } else expect(placeholder).toMatch(/^cb_test_/);
        set.add(name);
        return `export ${name}='${values[name]}'`;
      })
      .join("\n");
    expect([...set].sort()).toEqual(["CROSSBOOK_API_KEY", "CROSSBOOK_URL"]);

    const result = await run("sh", ["-e", "-c", script], { cwd: project, env, timeout: 90_000 }).catch(
      (error: { code?: number; stdout?: string; stderr?: string }) => {
        throw new Error(`the quick start failed (exit ${error.code}):\n${error.stdout}\n${error.stderr}`);
      },
    );
    const printed = result.stdout.trimEnd().split("\n");
    const promised = block("output").trimEnd().split("\n");
    // Each printed line that fits the README's is shown as the README's: a diff shows the others.
    const fitted = printed.map((line, i) =>
      promised[i] !== undefined && linePattern(promised[i]).test(line) ? promised[i] : line,
    );
    expect(fitted).toEqual(promised);
    // The price it reads is the market's it traded.
    const market = /^market: (\S+) /.exec(printed.find((l) => l.startsWith("market:")) ?? "")?.[1];
    expect(printed.find((l) => l.startsWith("price:"))).toContain(`price: ${market} `);
  }, 120_000);

  it("type-checks as written (strict, Node's module resolution, the package's declarations)", async () => {
    fs.writeFileSync(path.join(project, "bot.ts"), block("bot.ts"));
    const tsc = path.join(REPO_MODULES, "typescript", "bin", "tsc");
    const args = [tsc, "--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext"];
    args.push(
      "--target",
      "es2022",
      "--typeRoots",
      path.join(REPO_MODULES, "@types"),
      "--types",
      "node",
      "bot.ts",
    );
    const result = await run(process.execPath, args, { cwd: project }).then(
      ({ stdout }) => stdout,
      (error: { stdout: string; stderr: string }) => error.stdout + error.stderr,
    );
    expect(result).toBe("");
  }, 60_000);
});
