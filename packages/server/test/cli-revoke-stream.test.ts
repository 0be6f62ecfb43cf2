/**
 * Issue 25 part 8: `crossbook keys revoke`, run as its own process against the database of a
 * single `crossbook serve` without Redis, closes the key's open streams (close code 4001), as the
 * README promises: the serving instance watches the store for revocations it did not make.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { BIN, type Served, startServe } from "./support/serve";

const run = promisify(execFile);
let dir: string;
let env: NodeJS.ProcessEnv;
let served: Served;

async function cli(args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [BIN, ...args], { env, timeout: 30_000 });
  return stdout;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-revoke-"));
  env = {
    PATH: process.env["PATH"],
    HOME: process.env["HOME"],
    DATABASE_URL: `sqlite:${path.join(dir, "crossbook.db")}`,
    CROSSBOOK_DATA_DIR: dir,
    CROSSBOOK_VENUES: "none",
    PASSWORD_HASH_COST: "10",
    LOG_LEVEL: "info",
  };
  served = await startServe({ ...env, PORT: "0" });
}, 60_000);

afterAll(async () => {
  if (served) {
    const exited = new Promise((resolve) => served.server.once("exit", resolve));
    served.server.kill("SIGTERM");
    await exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Opens a stream with the key and resolves once it is open; `closed` resolves with its close. */
function openStream(path: string, key: string) {
  const ws = new WebSocket(`${served.url.replace(/^http/, "ws")}${path}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const opened = new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("unexpected-response", (_request, response) =>
      reject(new Error(`stream refused: ${response.statusCode}`)),
    );
    ws.once("error", reject);
  });
  return { ws, opened, closed };
}

/** Resolves with what it is given, or with "still open" once `ms` have passed. */
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<"still open">((resolve) => setTimeout(resolve, ms, "still open"))]);

describe("crossbook keys revoke from another process", { timeout: 120_000 }, () => {
  it("closes the key's open price and account streams with 4001; other keys' streams stay open", async () => {
    await cli([
      "accounts",
      "create",
      "--email",
      "bot@example.com",
      "--password",
      "a long password",
      "--tier",
      "pro",
    ]);
    const create = async (name: string) =>
      JSON.parse(
        await cli([
          "keys",
          "create",
          "--email",
          "bot@example.com",
          "--name",
          name,
          "--type",
          "trading",
          "--sandbox",
          "--json",
        ]),
      ) as { id: string; key: string };
    const revoked = await create("to revoke");
    const kept = await create("to keep");

    const prices = openStream("/v1/prices/stream", revoked.key);
    const account = openStream("/v1/account/stream", revoked.key);
    const other = openStream("/v1/prices/stream", kept.key);
    await Promise.all([prices.opened, account.opened, other.opened]);

    expect(await cli(["keys", "revoke", revoked.id])).toContain(`revoked ${revoked.id}`);

    // Generous: the instance notices within about a second; the limit only stops a hung test.
    expect(await within(prices.closed, 10_000)).toEqual({ code: 4001, reason: "API key revoked" });
    expect(await within(account.closed, 10_000)).toEqual({ code: 4001, reason: "API key revoked" });
    expect(other.ws.readyState).toBe(WebSocket.OPEN);
    other.ws.close();
    // And the key is refused from then on.
    const refused = await fetch(`${served.url}/v1/account`, {
      headers: { authorization: `Bearer ${revoked.key}` },
    });
    expect(refused.status).toBe(401);
  });
});
