/**
 * `crossbook demo`: the whole thing offline in one command. Starts the fake Polymarket and Kalshi
 * (seeded world, books that move with trades) on free local ports, runs the service against them
 * with the same configuration as `serve` (HOST, PORT, DATABASE_URL, …), creates a demo account with
 * a live, a sandbox and an agent key, and prints how to use them and where the console is (the
 * password is printed when the account is created; a kept data folder keeps its password).
 * Stopping the demo stops the fakes.
 *
 * Each demo has its own data folder, so two demos never share a database: a fresh temporary one,
 * removed when the demo stops, unless `--data-dir` (or CROSSBOOK_DATA_DIR) names one to keep. A
 * demo revokes only keys it created itself, in an earlier run on the same folder (their ids are kept
 * in it): never another demo's keys, nor keys anyone else made for the demo account.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import { keysAllowed, limitsFor } from "./access/limits";
import type { Account } from "./accounts/service";
import type { Services } from "./app";
import { type Config, loadConfig } from "./config";
import { AppError } from "./http/errors";
import { StartupError, serve } from "./serve";

export const DEMO_EMAIL = "demo@crossbook.local";
/** In the data folder: the ids of the keys the demo created there, revoked by its next run. */
const KEYS_FILE = "demo-keys.json";
const DEMO_KEYS = 3;

/** The venue base URLs (config shape) that point the adapters at running fake venues. */
export function fakeVenueUrls(polymarket: PolymarketFake, kalshi: KalshiFake): Config["venueUrls"] {
  return {
    polymarket: {
      gamma: polymarket.gammaUrl,
      clob: polymarket.clobUrl,
      ws: polymarket.wsUrl,
      data: polymarket.dataUrl,
    },
    kalshi: { api: kalshi.apiUrl, ws: kalshi.wsUrl },
  };
}

export interface DemoOptions {
  /** How often the fake venues trade, ms (default 1000). */
  tickMs?: number;
  /** The data folder to keep across runs; a fresh temporary one (removed at exit) when absent. */
  dataDir?: string;
  /** The service's port, instead of PORT. */
  port?: number;
}

/** The demo's data folder: the one asked for (created if missing), else a fresh temporary one. */
function dataFolder(asked: string | undefined): { dir: string; temporary: boolean } {
  if (asked !== undefined && asked !== "") {
    const dir = path.resolve(asked);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return { dir, temporary: false };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "crossbook-demo-"));
  // Removed however the process exits (Ctrl-C, a start-up error, a second Ctrl-C); the store is
  // closed by then on the normal paths.
  process.on("exit", () => {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // nothing left to tell anyone: the process is exiting
    }
  });
  // A signal kills a process outright, skipping "exit", unless someone listens: until `serve` has
  // its own graceful handlers (then this one stands aside), a Ctrl-C during start-up exits here.
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    process.on(signal, () => {
      if (process.listenerCount(signal) === 1) process.exit(code);
    });
  }
  return { dir, temporary: true };
}

function readKeyIds(file: string): string[] {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as { key_ids?: unknown };
    return Array.isArray(parsed.key_ids) ? parsed.key_ids.filter((id) => typeof id === "string") : [];
  } catch {
    return []; // no file yet (a first run), or not ours to read: nothing to revoke
  }
}

/**
 * Revokes the keys this data folder's earlier run created, then creates the demo's three keys and
 * records their ids. Refuses with a clear line when the account's key cap leaves no room, rather
 * than revoking keys it did not make.
 */
async function demoKeys(services: Services, account: Account, dataDir: string) {
  const file = path.join(dataDir, KEYS_FILE);
  for (const id of readKeyIds(file)) {
    await services.apiKeys.revoke(account.id, id).catch((error: unknown) => {
      // Gone, or another account's (the database changed under the folder): not ours to revoke.
      if (!(error instanceof AppError && error.code === "API_KEY_NOT_FOUND")) throw error;
    });
  }
  const cap = keysAllowed(account.tier);
  const active = (await services.apiKeys.list(account.id)).filter((k) => !k.revoked_at).length;
  if (cap !== null && active + DEMO_KEYS > cap) {
    throw new StartupError(
      `the demo account ${DEMO_EMAIL} has ${active} active API key${active === 1 ? "" : "s"} and its ${account.tier} tier allows ${cap}; ` +
        `the demo needs ${DEMO_KEYS} and revokes only keys it created itself. Revoke some with ` +
        `\`crossbook keys list --email ${DEMO_EMAIL}\` and \`crossbook keys revoke <id>\` (same DATABASE_URL and data folder), ` +
        "or run the demo on fresh data (no --data-dir, no DATABASE_URL)",
    );
  }
  const live = await services.apiKeys.create(account.id, {
    name: "demo live",
    type: "trading",
    environment: "live",
  });
  const sandbox = await services.apiKeys.create(account.id, {
    name: "demo sandbox",
    type: "trading",
    environment: "sandbox",
  });
  // An agent key gets the account plan's request rate (the demo account's plan is "agent"), not the
  // tier's: bots driven by the demo are not throttled like a person's script.
  const agent = await services.apiKeys.create(account.id, {
    name: "demo agent",
    type: "agent",
    environment: "sandbox",
    permissions: ["read", "trade", "manage_orders"],
  });
  fs.writeFileSync(
    file,
    `${JSON.stringify({ account_id: account.id, key_ids: [live.apiKey.id, sandbox.apiKey.id, agent.apiKey.id] })}\n`,
    { mode: 0o600 },
  );
  return { live, sandbox, agent };
}

/** How to choose another port when the demo's is busy. */
const demoPortAdvice = (next: number) => `run with --port ${next}, or PORT=0 for any free port`;

export async function demo(options: DemoOptions = {}): Promise<void> {
  const env = process.env;
  const { dir: dataDir, temporary } = dataFolder(options.dataDir ?? env["CROSSBOOK_DATA_DIR"]);
  const config = loadConfig({
    ...env,
    CROSSBOOK_DATA_DIR: dataDir,
    ...(options.port !== undefined ? { PORT: String(options.port) } : {}),
  });
  const autoplay = { intervalMs: options.tickMs ?? 1000 };
  const polymarket = await startPolymarketFake({ autoplay });
  const kalshi = await startKalshiFake({ autoplay });
  const demoConfig: Config = {
    ...config,
    venues: ["polymarket", "kalshi"],
    venueUrls: fakeVenueUrls(polymarket, kalshi),
    // The fakes are local: sync often so changes show within seconds.
    catalogSyncIntervalSeconds: Math.min(config.catalogSyncIntervalSeconds, 15),
    // The fake Kalshi, like the real one, refuses an unsigned market-data WebSocket: sign with its key.
    kalshiFeedKey: await kalshi.feedKey(),
    // A bot's webhook receiver on this machine (the agent library's webhookReceiver) is the point.
    webhookAllowLoopback: true,
    // A temporary folder's secrets die with it: no master key file to generate and warn about.
    masterKey: config.masterKey ?? (temporary ? randomBytes(32) : undefined),
  };
  const databaseInFolder =
    demoConfig.database.kind === "sqlite" && demoConfig.database.file.startsWith(`${dataDir}${path.sep}`);
  await serve(demoConfig, {
    portAdvice: demoPortAdvice,
    async onListening({ services, address }) {
      let account = await services.accounts.getByEmail(DEMO_EMAIL);
      let password: string | undefined;
      if (!account) {
        password = `demo-${Math.random().toString(36).slice(2, 12)}`;
        account = await services.accounts.create({ email: DEMO_EMAIL, password, tier: "pro", plan: "agent" });
      }
      // The demo's own world: its account curates the fake venues' matches (a live admin key does).
      if (!account.operator) account = await services.accounts.update(account.id, { operator: true });
      const { live, sandbox, agent } = await demoKeys(services, account, dataDir);
      const rate = (type: "trading" | "agent") =>
        limitsFor(account, type, demoConfig).requests_per_minute.toLocaleString("en-US");
      const database = databaseInFolder
        ? []
        : [
            `  database     ${demoConfig.database.kind === "postgres" ? "PostgreSQL" : demoConfig.database.file} (DATABASE_URL: kept after the demo stops)`,
          ];
      const lines = [
        "",
        "crossbook demo is running, offline, against local fake venues:",
        `  service      ${address}   (docs: ${address}/docs)`,
        `  console      ${address}/console   (sign in with the account below)`,
        `  polymarket   ${polymarket.gammaUrl} (gamma), ${polymarket.clobUrl} (clob)`,
        `  kalshi       ${kalshi.apiUrl}`,
        `  data         ${dataDir}   ${temporary ? "(temporary: removed when the demo stops; --data-dir keeps one)" : "(kept: account, keys and balances carry over to the next run)"}`,
        ...database,
        `  webhooks     receivers on this machine are allowed, over http too (http://127.0.0.1:<port>/…)`,
        "",
        `  account      ${DEMO_EMAIL}${password ? `   password: ${password}` : " (existing)"}   (an operator: its live admin keys curate matches)`,
        `  live key     ${live.secret}`,
        `  sandbox key  ${sandbox.secret}   (${rate("trading")} requests/min)`,
        `  agent key    ${agent.secret}   (sandbox agent key: read, trade, manage_orders; ${rate("agent")} requests/min, for bots)`,
        "",
        "Try:",
        `  curl -s ${address}/v1/venues -H "authorization: Bearer ${live.secret}"`,
        `  curl -s "${address}/v1/markets?limit=5" -H "authorization: Bearer ${live.secret}"`,
        "Trade in the sandbox (10,000 fake USDC, filled against the fake venues' real-looking books):",
        `  curl -s ${address}/v1/balance -H "authorization: Bearer ${sandbox.secret}"`,
        `  curl -s ${address}/v1/orders -H "authorization: Bearer ${sandbox.secret}" -H 'content-type: application/json' \\`,
        `    -d '{"market_id":"<an id from /v1/markets>","side":"buy","price":0.5,"amount":10}'`,
        "",
        "Ctrl-C stops the service and the fake venues.",
        "",
      ];
      process.stdout.write(lines.join("\n"));
    },
    async onShutdown() {
      await Promise.allSettled([polymarket.close(), kalshi.close()]);
    },
  });
}
