/**
 * Runs `crossbook demo` (the service against the local fake Polymarket and Kalshi) as a child
 * process on free ports with a throwaway database, and reads the address and keys it prints: the
 * "running crossbook with the fake venues" every agent test talks to over real HTTP and WebSocket.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const CROSSBOOK_BIN = fileURLToPath(new URL("../../../server/bin/crossbook.mjs", import.meta.url));

export interface Demo {
  url: string;
  liveKey: string;
  sandboxKey: string;
  /** The sandbox agent key (read, trade, manage_orders; the plan's rate), when this demo prints one. */
  agentKey: string | undefined;
  process: ChildProcess;
  output(): string;
  /** Runs `crossbook <args>` on this demo's database (e.g. `keys revoke`) and returns its stdout. */
  cli(args: readonly string[]): string;
  close(): Promise<void>;
}

export async function startDemo(
  options: {
    tickMs?: number;
    timeoutMs?: number;
    /** Lift the demo account's request limit (benches make thousands of calls a minute). */
    requestsPerMinute?: number;
  } = {},
): Promise<Demo> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cb-agent-"));
  const env = {
    ...process.env,
    HOST: "127.0.0.1",
    PORT: "0",
    CROSSBOOK_DATA_DIR: dir,
    DATABASE_URL: `sqlite:${path.join(dir, "demo.db")}`,
    LOG_LEVEL: "warn",
    PASSWORD_HASH_COST: "10",
  };
  const child = spawn(process.execPath, [CROSSBOOK_BIN, "demo", "--tick-ms", String(options.tickMs ?? 200)], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr!.on("data", (chunk) => {
    output += chunk;
  });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const found = await new Promise<{ url: string; live: string; sandbox: string }>((resolve, reject) => {
      const timer = setTimeout(() => {
        clearInterval(check);
        reject(new Error(`crossbook demo did not start:\n${output}`));
      }, options.timeoutMs ?? 60_000);
      const check = setInterval(() => {
        const url = /service\s+(http:\/\/\S+)/.exec(output)?.[1];
        const live = /live key\s+(cb_live_\S+)/.exec(output)?.[1];
        const sandbox = /sandbox key\s+(cb_test_\S+)/.exec(output)?.[1];
        if (url && live && sandbox) {
          clearInterval(check);
          clearTimeout(timer);
          resolve({ url, live, sandbox });
        } else if (child.exitCode !== null) {
          clearInterval(check);
          clearTimeout(timer);
          reject(new Error(`crossbook demo exited (${child.exitCode}):\n${output}`));
        }
      }, 25);
    });
    if (options.requestsPerMinute) {
      const limit = String(options.requestsPerMinute);
      execFileSync(
        process.execPath,
        [
          CROSSBOOK_BIN,
          "accounts",
          "update",
          "--email",
          "demo@crossbook.local",
          "--tier",
          "enterprise",
          "--rate-limit",
          limit,
          "--plan",
          "enterprise",
          "--agent-rate-limit",
          limit,
        ],
        { env, stdio: "pipe" },
      );
    }
    return {
      url: found.url,
      liveKey: found.live,
      sandboxKey: found.sandbox,
      agentKey: /agent key\s+(cb_test_\S+)/.exec(output)?.[1],
      process: child,
      output: () => output,
      cli: (args) => execFileSync(process.execPath, [CROSSBOOK_BIN, ...args], { env, encoding: "utf8" }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
