/**
 * The `crossbook` CLI as a user runs it: help on every command, accounts and keys against the same
 * database a running server uses, `serve` answering HTTP and stopping cleanly on SIGTERM.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, startServe } from "./support/serve";

const run = promisify(execFile);

let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-cli-"));
  env = {
    PATH: process.env["PATH"],
    HOME: process.env["HOME"],
    DATABASE_URL: `sqlite:${path.join(dir, "crossbook.db")}`,
    CROSSBOOK_DATA_DIR: dir,
    PASSWORD_HASH_COST: "10",
    LOG_LEVEL: "info",
  };
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...env, ...extraEnv },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// Every test here starts real processes: generous timeouts, because CI machines are small and busy.
describe("crossbook CLI", { timeout: 120_000 }, () => {
  it("has --help on every command", async () => {
    const commands = [
      [],
      ["serve"],
      ["demo"],
      ["migrate"],
      ["openapi"],
      ["accounts"],
      ["accounts", "create"],
      ["accounts", "update"],
      ["keys"],
      ["keys", "create"],
      ["keys", "list"],
      ["keys", "revoke"],
      ["venues"],
      ["venues", "check"],
    ];
    // A few at a time: each is a Node process compiling the CLI, and CI has two cores.
    const results: Awaited<ReturnType<typeof cli>>[] = [];
    for (let i = 0; i < commands.length; i += 3) {
      results.push(...(await Promise.all(commands.slice(i, i + 3).map((c) => cli([...c, "--help"])))));
    }
    results.forEach((result, i) => {
      expect(result.code, commands[i]!.join(" ")).toBe(0);
      expect(result.stdout, commands[i]!.join(" ")).toContain("Usage: crossbook");
    });
  });

  it("migrates, then reports the schema up to date", async () => {
    expect((await cli(["migrate"])).stdout).toContain("applied: 001_foundation");
    expect((await cli(["migrate"])).stdout).toContain("up to date");
    // The master key file was generated with mode 0600.
    expect(fs.statSync(path.join(dir, "master.key")).mode & 0o777).toBe(0o600);
  });

  it("creates accounts and keys, lists and revokes them", async () => {
    const account = await cli([
      "accounts",
      "create",
      "--email",
      "ops@example.com",
      "--tier",
      "pro",
      "--plan",
      "agent",
      "--json",
    ]);
    expect(account.code).toBe(0);
    const created = JSON.parse(account.stdout);
    expect(created).toMatchObject({ email: "ops@example.com", tier: "pro", plan: "agent" });
    expect(created.password).toMatch(/.{12,}/);

    const key = JSON.parse(
      (
        await cli([
          "keys",
          "create",
          "--email",
          "ops@example.com",
          "--name",
          "bot",
          "--type",
          "agent",
          "--permissions",
          "read,trade",
          "--sandbox",
          "--json",
        ])
      ).stdout,
    );
    expect(key).toMatchObject({ type: "agent", permissions: ["read", "trade"], environment: "sandbox" });
    expect(key.key).toMatch(/^cb_test_/);
    expect(key.id).toMatch(/^key_/);

    const human = await cli([
      "keys",
      "create",
      "--email",
      "ops@example.com",
      "--name",
      "ro",
      "--type",
      "read_only",
    ]);
    expect(human.stdout).toMatch(/key: cb_live_[0-9A-Za-z]{40}/);

    const listed = JSON.parse((await cli(["keys", "list", "--email", "ops@example.com", "--json"])).stdout);
    expect(listed.map((k: { name: string }) => k.name)).toEqual(["bot", "ro"]);
    expect(JSON.stringify(listed)).not.toContain(key.key);

    const revoked = await cli(["keys", "revoke", key.id]);
    expect(revoked.stdout).toContain(`revoked ${key.id}`);
    const text = (await cli(["keys", "list", "--email", "ops@example.com"])).stdout;
    expect(text).toContain("revoked");
  });

  it("makes an account an operator and takes the role away; nothing else can", async () => {
    await cli(["accounts", "create", "--email", "curator@example.com", "--password", "long enough 123"]);
    expect(
      JSON.parse((await cli(["accounts", "update", "--email", "curator@example.com", "--json"])).stdout),
    ).toMatchObject({ operator: false });
    const made = await cli(["accounts", "update", "--email", "curator@example.com", "--operator"]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain("operator=true");
    // Other changes leave the role as it is.
    const tier = await cli([
      "accounts",
      "update",
      "--email",
      "curator@example.com",
      "--tier",
      "pro",
      "--json",
    ]);
    expect(JSON.parse(tier.stdout)).toMatchObject({ tier: "pro", operator: true });
    const dropped = await cli([
      "accounts",
      "update",
      "--email",
      "curator@example.com",
      "--no-operator",
      "--json",
    ]);
    expect(JSON.parse(dropped.stdout)).toMatchObject({ operator: false });
  });

  it("explains bad input and bad configuration", async () => {
    const badType = await cli([
      "keys",
      "create",
      "--email",
      "ops@example.com",
      "--name",
      "x",
      "--type",
      "root",
    ]);
    expect(badType.code).not.toBe(0);
    expect(badType.stderr).toContain("Allowed choices are read_only, trading, admin, agent");
    const noAccount = await cli(["keys", "list", "--email", "ghost@example.com"]);
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain("no account with email ghost@example.com");
    const badConfig = await cli(["migrate"], { PORT: "eighty" });
    expect(badConfig.code).toBe(2);
    expect(badConfig.stderr).toContain('PORT="eighty" is not valid');
  });

  it("serves HTTP while the CLI manages keys on the same database, and stops on SIGTERM", async () => {
    const {
      server,
      url: address,
      output,
    } = await startServe({ ...env, PORT: "0", METRICS_LISTEN: "127.0.0.1:0" }, 20_000);
    try {
      // METRICS_LISTEN: /metrics on its own address, not the API's.
      const metricsLine = /"address":"(http:\/\/[^"]+\/metrics)","msg":"metrics listening"/;
      await expect.poll(() => metricsLine.exec(output())?.[1], { timeout: 10_000 }).toBeDefined();
      const metricsUrl = metricsLine.exec(output())?.[1];
      expect((await fetch(metricsUrl!)).status).toBe(200);
      expect((await fetch(`${address}/metrics`)).status).toBe(404);
      await cli(["accounts", "create", "--email", "live@example.com", "--password", "a long password"]);
      const key = JSON.parse(
        (
          await cli([
            "keys",
            "create",
            "--email",
            "live@example.com",
            "--name",
            "k",
            "--type",
            "trading",
            "--json",
          ])
        ).stdout,
      );
      const whoami = await fetch(`${address}/v1/account`, {
        headers: { authorization: `Bearer ${key.key}` },
      });
      expect(whoami.status).toBe(200);
      expect(((await whoami.json()) as { data: { account: { email: string } } }).data.account.email).toBe(
        "live@example.com",
      );
      await cli(["keys", "revoke", key.id]);
      // Revoked by another process: the very next request is refused.
      expect(
        (await fetch(`${address}/v1/account`, { headers: { authorization: `Bearer ${key.key}` } })).status,
      ).toBe(401);
      expect(output()).not.toContain(key.key);
    } finally {
      const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)));
      server.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(output()).toContain("shutting down");
    }
  });
});
