/**
 * Issue 25 part 1: demos that cannot trip each other. Each `crossbook demo` has its own data (a
 * temporary folder by default, removed when it stops; `--data-dir` keeps one), revokes only keys it
 * created, prints an agent key, and a busy port is one clear line, for `serve` too.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { BIN } from "./support/serve";
import { until } from "./support/until";

const run = promisify(execFile);
// Every demo runs from here: were it to fall back on ./data, two demos would share this folder's.
const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "cb-demo-data-"));
afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));

/** The environment of a person's shell: no data folder or database chosen. */
const baseEnv = {
  PATH: process.env["PATH"],
  HOME: process.env["HOME"],
  TMPDIR: os.tmpdir(),
  PASSWORD_HASH_COST: "10",
  LOG_LEVEL: "warn",
};

interface RunningDemo {
  child: ChildProcess;
  address: string;
  keys: { live: string; sandbox: string; agent: string };
  dataDir: string;
  output(): string;
  stop(): Promise<number | null>;
}

async function startDemo(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<RunningDemo> {
  const child = spawn(process.execPath, [BIN, "demo", "--tick-ms", "200", ...args], {
    cwd,
    env: { ...baseEnv, PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (c) => {
    out += c;
  });
  child.stderr!.on("data", (c) => {
    out += c;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGINT");
    return exited;
  };
  try {
    await until(() => /agent key\s+cb_test_\S+/.test(out) || child.exitCode !== null, {
      timeoutMs: 60_000,
      what: () => `the demo banner:\n${out}`,
    });
    const field = (pattern: RegExp) => {
      const found = pattern.exec(out)?.[1];
      if (!found) throw new Error(`no ${pattern} in the demo's output:\n${out}`);
      return found;
    };
    return {
      child,
      address: field(/service\s+(http:\/\/\S+)/),
      keys: {
        live: field(/live key\s+(cb_live_\S+)/),
        sandbox: field(/sandbox key\s+(cb_test_\S+)/),
        agent: field(/agent key\s+(cb_test_\S+)/),
      },
      dataDir: field(/^\s+data\s+(\/\S+)/m),
      output: () => out,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function call(demo: RunningDemo, key: string, url: string, body?: object) {
  const response = await fetch(`${demo.address}${url}`, {
    method: body ? "POST" : "GET",
    headers: {
      authorization: `Bearer ${key}`,
      ...(body ? { "content-type": "application/json" } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as { data: Record<string, unknown> } };
}

const available = async (demo: RunningDemo) =>
  (await call(demo, demo.keys.sandbox, "/v1/balance")).body.data["available"];

async function cli(args: string[], env: NodeJS.ProcessEnv) {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      cwd,
      env: { ...baseEnv, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("crossbook demo's data", { timeout: 180_000 }, () => {
  it("two demos at once keep their own keys and balances, and each removes its temporary folder", async () => {
    const first = await startDemo();
    let second: RunningDemo | undefined;
    try {
      expect(first.output()).toMatch(/data\s+\S+\s+\(temporary: removed when the demo stops/);
      expect(first.dataDir.startsWith(os.tmpdir())).toBe(true);
      expect(fs.existsSync(path.join(first.dataDir, "crossbook.db"))).toBe(true);
      const deposit = await call(first, first.keys.sandbox, "/v1/sandbox/deposit", { amount: 500 });
      expect(deposit.status).toBe(200);
      const firstBalance = await available(first);

      second = await startDemo();
      expect(second.dataDir).not.toBe(first.dataDir);
      // The first demo's keys still work after the second started.
      for (const key of Object.values(first.keys)) {
        expect((await call(first, key, "/v1/account")).status).toBe(200);
      }
      // And neither demo knows the other's keys, or its deposit.
      expect((await call(second, first.keys.sandbox, "/v1/account")).status).toBe(401);
      expect((await call(first, second.keys.sandbox, "/v1/account")).status).toBe(401);
      expect(await available(first)).toBe(firstBalance);
      expect(await available(second)).toBe((firstBalance as number) - 500);

      // The agent key: an agent-type sandbox key at the agent plan's rate, not the tier's 300.
      const agent = (await call(second, second.keys.agent, "/v1/account")).body.data as {
        key: { type: string; environment: string; permissions: string[] };
        limits: { requests_per_minute: number };
      };
      expect(agent.key).toMatchObject({ type: "agent", environment: "sandbox" });
      expect(agent.key.permissions).toEqual(expect.arrayContaining(["read", "trade", "manage_orders"]));
      expect(agent.limits.requests_per_minute).toBe(10_000);
      expect(second.output()).toMatch(
        /agent key\s+cb_test_\S+\s+\(sandbox agent key: read, trade, manage_orders; 10,000 requests\/min/,
      );
      expect(second.output()).toMatch(/webhooks\s+receivers on this machine are allowed/);
    } finally {
      expect(await first.stop()).toBe(0);
      if (second) expect(await second.stop()).toBe(0);
    }
    expect(fs.existsSync(first.dataDir)).toBe(false);
    expect(fs.existsSync(second!.dataDir)).toBe(false);
    // Nothing fell back on the working directory's ./data.
    expect(fs.existsSync(path.join(cwd, "data"))).toBe(false);
  });

  it("--data-dir keeps the data across runs and revokes only the keys its earlier run created", async () => {
    const dataDir = path.join(cwd, "kept");
    const first = await startDemo(["--data-dir", dataDir]);
    let balance: unknown;
    try {
      expect(first.output()).toMatch(/\(kept: account, keys and balances carry over/);
      expect((await call(first, first.keys.sandbox, "/v1/sandbox/deposit", { amount: 250 })).status).toBe(
        200,
      );
      balance = await available(first);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    expect(fs.existsSync(path.join(dataDir, "crossbook.db"))).toBe(true);
    // A key someone made for the demo account between runs (named like the demo's own).
    const env = { DATABASE_URL: `sqlite:${path.join(dataDir, "crossbook.db")}`, CROSSBOOK_DATA_DIR: dataDir };
    const made = await cli(
      [
        "keys",
        "create",
        "--email",
        "demo@crossbook.local",
        "--name",
        "demo mine",
        "--type",
        "read_only",
        "--json",
      ],
      env,
    );
    expect(made.code, made.stderr).toBe(0);
    const mine = JSON.parse(made.stdout) as { key: string };

    const second = await startDemo(["--data-dir", dataDir]);
    try {
      expect(second.output()).toContain("demo@crossbook.local (existing)");
      for (const key of Object.values(first.keys)) {
        expect((await call(second, key, "/v1/account")).status).toBe(401);
      }
      expect((await call(second, mine.key, "/v1/account")).status).toBe(200);
      expect(await available(second)).toBe(balance);
    } finally {
      expect(await second.stop()).toBe(0);
    }
    expect(fs.existsSync(path.join(dataDir, "crossbook.db"))).toBe(true);

    // No room under the key cap once its own keys are revoked: it says so rather than revoking others'.
    expect(
      (await cli(["accounts", "update", "--email", "demo@crossbook.local", "--tier", "free"], env)).code,
    ).toBe(0);
    const full = await cli(["demo", "--data-dir", dataDir, "--port", "0"], {});
    expect(full.code).toBe(1);
    expect(full.stderr).toContain(
      "crossbook: the demo account demo@crossbook.local has 1 active API key and its free tier allows 2; the demo needs 3 and revokes only keys it created itself.",
    );
    expect(full.stderr).not.toMatch(/^\s+at /m);
  });

  it("a busy port is one line naming it and how to choose another, for demo and serve", async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    // The demo's temporary folder goes here, to see that it is removed.
    const tmp = fs.mkdtempSync(path.join(cwd, "tmp-"));
    try {
      const demo = await cli(["demo", "--port", String(port)], { TMPDIR: tmp });
      expect(demo.code).toBe(1);
      expect(demo.stderr).toContain(
        `crossbook: port ${port} is in use: run with --port ${port + 1}, or PORT=0 for any free port\n`,
      );
      expect(demo.stderr).not.toMatch(/^\s+at /m);
      expect(demo.stdout).not.toContain("could not start");

      const serve = await cli(["serve"], {
        PORT: String(port),
        CROSSBOOK_VENUES: "none",
        CROSSBOOK_DATA_DIR: path.join(cwd, "serve"),
      });
      expect(serve.code).toBe(1);
      expect(serve.stderr).toContain(
        `crossbook: port ${port} is in use: run with PORT=${port + 1}, or PORT=0 for any free port\n`,
      );
      expect(serve.stderr).not.toMatch(/^\s+at /m);
    } finally {
      blocker.close();
    }
    // The demo that could not start left no temporary folder behind.
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it("a Ctrl-C while the demo starts still removes its temporary folder", async () => {
    const tmp = fs.mkdtempSync(path.join(cwd, "tmp-"));
    const child = spawn(process.execPath, [BIN, "demo"], {
      cwd,
      env: { ...baseEnv, PORT: "0", TMPDIR: tmp },
      stdio: "ignore",
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    // As soon as the folder exists: long before the service is up and has its own signal handlers.
    await until(() => fs.readdirSync(tmp).length > 0 || child.exitCode !== null, { timeoutMs: 30_000 });
    child.kill("SIGINT");
    expect([0, 130]).toContain(await exited);
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it("demo --help documents --port and PORT, --data-dir, a busy port, and the agent key", async () => {
    const help = await cli(["demo", "--help"], {});
    expect(help.code).toBe(0);
    for (const text of [
      "--port <port>",
      "--data-dir <path>",
      "PORT",
      "temporary folder",
      "is in use",
      "PORT=0 for any free",
      "agent key",
      "Webhook",
    ]) {
      expect(help.stdout).toContain(text);
    }
  });
});
