/**
 * `crossbook demo` as a newcomer runs it: offline, it starts the fake venues and the service,
 * prints a demo account's keys, shows real-looking markets from both venues within seconds, and
 * stops everything on Ctrl-C.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const BIN = path.resolve(__dirname, "../bin/crossbook.mjs");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-demo-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe("crossbook demo", { timeout: 120_000 }, () => {
  it("serves markets from both fake venues, then stops cleanly", async () => {
    const child: ChildProcess = spawn(process.execPath, [BIN, "demo", "--tick-ms", "200"], {
      env: {
        PATH: process.env["PATH"],
        HOME: process.env["HOME"],
        PORT: "0",
        DATABASE_URL: `sqlite:${path.join(dir, "demo.db")}`,
        CROSSBOOK_DATA_DIR: dir,
        PASSWORD_HASH_COST: "10",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout!.on("data", (c) => {
      out += c;
    });
    child.stderr!.on("data", (c) => {
      out += c;
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      const { address, key } = await until("the demo banner", async () => {
        const a = /service\s+(http:\/\/\S+)/.exec(out)?.[1];
        const k = /live key\s+(cb_live_\S+)/.exec(out)?.[1];
        return a && k ? { address: a, key: k } : undefined;
      });
      expect(out).toMatch(/sandbox key\s+cb_test_/);
      const headers = { authorization: `Bearer ${key}` };
      // The demo account curates the demo's matches.
      const whoami = (await (await fetch(`${address}/v1/account`, { headers })).json()) as {
        data: { account: { operator: boolean } };
      };
      expect(whoami.data.account.operator).toBe(true);
      // The console is printed with the account's password, and that password signs in.
      expect(out).toContain(`console      ${address}/console`);
      const password = /password: (\S+)/.exec(out)?.[1];
      expect(password).toBeTruthy();
      const signin = await fetch(`${address}/console/signin`);
      const formCookie = /cb_form=[^;]+/.exec(signin.headers.get("set-cookie") ?? "")![0];
      const token = /name="_csrf" value="([^"]+)"/.exec(await signin.text())![1]!;
      const signedIn = await fetch(`${address}/console/signin`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: formCookie },
        body: new URLSearchParams({
          _csrf: token,
          email: "demo@crossbook.local",
          password: password!,
        }).toString(),
      });
      expect(signedIn.status).toBe(303);
      expect(signedIn.headers.get("set-cookie")).toMatch(/cb_session=cbs_/);
      const venues = await until("both venues synced", async () => {
        const body = (await (await fetch(`${address}/v1/venues`, { headers })).json()) as {
          data: Array<{ id: string; health: { status: string; last_sync_markets: number } }>;
        };
        return body.data.every((v) => v.health.status === "ok") ? body.data : undefined;
      });
      expect(venues.map((v) => v.id).sort()).toEqual(["kalshi", "polymarket"]);
      for (const venue of ["polymarket", "kalshi"]) {
        const markets = (await (await fetch(`${address}/v1/markets?venue=${venue}`, { headers })).json()) as {
          data: Array<{ id: string; last_price: number | null; rules: string | null }>;
          meta: { total: number };
        };
        expect(markets.meta.total, venue).toBeGreaterThan(3);
        expect(markets.data[0]!.id.startsWith(`${venue}:`)).toBe(true);
      }
    } finally {
      child.kill("SIGINT");
      expect(await exited).toBe(0);
    }
    expect(out).toContain("stopped");
  });
});
