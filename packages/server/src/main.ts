/**
 * The `crossbook` command line: serve, migrate, accounts, keys, openapi, venues check. It works against the same
 * DATABASE_URL as the server, while the server runs (SQLite in WAL mode allows it; PostgreSQL too).
 * Results go to stdout (`--json` for one machine-readable object); diagnostics go to stderr.
 */

import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { Command, InvalidArgumentError, Option } from "commander";
import { PLANS, TIERS } from "./access/limits";
import { AGENT_PERMISSIONS, KEY_TYPES } from "./access/permissions";
import { createServices } from "./app";
import { ConfigError, loadConfig } from "./config";
import { AppError } from "./http/errors";
import { migrate } from "./infra/db/store";
import { generateOpenApi } from "./openapi";
import { createRuntime, type Runtime } from "./runtime";
import { serve } from "./serve";

const stderr = (message: string) => process.stderr.write(`${message}\n`);
const stdout = (message: string) => process.stdout.write(`${message}\n`);

async function withRuntime<T>(fn: (runtime: Runtime) => Promise<T>, migrateOnOpen = true): Promise<T> {
  const runtime = await createRuntime(loadConfig(), {
    migrate: migrateOnOpen,
    log: (m) => stderr(`crossbook: ${m}`),
    // A command runs for a moment: its few writes need no checkpoint thread.
    store: { backgroundCheckpoints: false },
  });
  try {
    return await fn(runtime);
  } finally {
    await runtime.close();
  }
}

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new InvalidArgumentError("expected a whole number ≥ 1");
  return Number(value);
}

function portNumber(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new InvalidArgumentError("expected a port number from 0 to 65535 (0: any free port)");
  return Number(value);
}

function permissionList(value: string): string[] {
  const list = value
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  const unknown = list.filter((p) => !(AGENT_PERMISSIONS as readonly string[]).includes(p));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(
      `unknown permission ${unknown.join(", ")}; choose from ${AGENT_PERMISSIONS.join(", ")}`,
    );
  }
  return list;
}

const program = new Command()
  .name("crossbook")
  .description("crossbook: prediction-market aggregation and trading service")
  .showHelpAfterError()
  .configureHelp({ sortSubcommands: true });

program
  .command("serve")
  .description("start the HTTP service (HOST, PORT, DATABASE_URL, REDIS_URL, … from the environment)")
  .addHelpText(
    "after",
    `
If PORT (default 8080) is taken, it stops at once with one line naming it, e.g. "port 8080 is in
use: run with PORT=8081, or PORT=0 for any free port", and exits with status 1.`,
  )
  .action(async () => {
    await serve(loadConfig());
  });

program
  .command("demo")
  .description(
    "run the service offline against local fake Polymarket and Kalshi venues, with a demo account and keys",
  )
  .option("--tick-ms <ms>", "how often the fake venues trade and move their books", positiveInt, 1000)
  .option("--port <port>", "the service's port, instead of PORT (0: any free port)", portNumber)
  .option(
    "--data-dir <path>",
    "keep the demo's data (database, master key, the ids of its keys) in this folder across runs; " +
      "default: a fresh temporary folder, removed when the demo stops",
  )
  .addHelpText(
    "after",
    `
Every demo has its own data, so two demos at once never share a database or revoke each other's
keys. Without --data-dir (or CROSSBOOK_DATA_DIR) a demo starts empty in a temporary folder that is
removed when it stops. With --data-dir the account, its keys and sandbox balances carry over, and a
run revokes only the keys the previous run on that folder created. DATABASE_URL, when set, is used
as is (its data stays after the demo stops). The other settings come from the environment, as for
\`crossbook serve\` (HOST, PORT, LOG_LEVEL, …).

The service listens on PORT (default 8080) or --port. If that port is taken, the demo stops at once
with one line naming it, e.g. "port 8080 is in use: run with --port 8081, or PORT=0 for any free
port", and exits with status 1; the address it got is printed when it starts.

It prints a live key, a sandbox key (a trading key, at the account tier's request rate) and a
sandbox agent key (read, trade, manage_orders, at the agent plan's rate: for bots). Webhook
receivers on this machine (127.0.0.1, ::1, localhost) are allowed, over http too.`,
  )
  .action(async (options: { tickMs: number; port?: number; dataDir?: string }) => {
    const { demo } = await import("./demo");
    await demo({
      tickMs: options.tickMs,
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    });
  });

program
  .command("migrate")
  .description("bring the database schema up to date (also done automatically at start)")
  .action(async () => {
    await withRuntime(async (runtime) => {
      const { applied } = await migrate(runtime.store);
      stdout(applied.length === 0 ? "schema is up to date" : `applied: ${applied.join(", ")}`);
    }, false);
  });

program
  .command("openapi")
  .description("print the OpenAPI 3.1 document (or write it with --out)")
  .option("--out <file>", "write to this file instead of stdout")
  .action(async (options: { out?: string }) => {
    const text = `${JSON.stringify(await generateOpenApi(), null, 2)}\n`;
    if (options.out) {
      writeFileSync(options.out, text);
      stderr(`wrote ${options.out}`);
    } else {
      process.stdout.write(text);
    }
  });

const accounts = program.command("accounts").description("manage accounts");

accounts
  .command("create")
  .description("create an account (prints a generated password when none is given)")
  .requiredOption("--email <email>", "sign-in email")
  .option("--password <password>", "password (at least 10 characters); generated if absent")
  .addOption(new Option("--tier <tier>", "request-rate tier").choices([...TIERS]).default("free"))
  .addOption(new Option("--plan <plan>", "agent plan").choices([...PLANS]).default("standard"))
  .option("--json", "print one JSON object")
  .action(
    async (options: { email: string; password?: string; tier: string; plan: string; json?: boolean }) => {
      await withRuntime(async (runtime) => {
        const { accounts: service } = createServices(runtime);
        const password = options.password ?? randomBytes(12).toString("base64url");
        const account = await service.create({
          email: options.email,
          password,
          tier: options.tier as (typeof TIERS)[number],
          plan: options.plan as (typeof PLANS)[number],
        });
        const generated = options.password === undefined;
        if (options.json) {
          stdout(JSON.stringify({ ...account, ...(generated ? { password } : {}) }));
        } else {
          stdout(
            `created account ${account.id} <${account.email}> tier=${account.tier} plan=${account.plan}`,
          );
          if (generated) stdout(`password: ${password}   (shown once)`);
        }
      });
    },
  );

accounts
  .command("update")
  .description("change an account's tier, plan, operator role or custom (enterprise) limits")
  .requiredOption("--email <email>", "the account's email")
  .addOption(new Option("--tier <tier>", "request-rate tier").choices([...TIERS]))
  .addOption(new Option("--plan <plan>", "agent plan").choices([...PLANS]))
  .option("--rate-limit <n>", "requests/min for enterprise-tier keys", positiveInt)
  .option("--agent-rate-limit <n>", "requests/min for enterprise-plan agent keys", positiveInt)
  .option("--ws-connections <n>", "stream connections per key (enterprise plan)", positiveInt)
  .option("--markets-per-subscription <n>", "markets per stream subscription (enterprise plan)", positiveInt)
  .option(
    "--operator",
    "make the account an operator: its live admin keys curate matched markets (global data)",
  )
  .option("--no-operator", "take the operator role away")
  .option("--json", "print one JSON object")
  .action(
    async (options: {
      operator?: boolean;
      email: string;
      tier?: string;
      plan?: string;
      rateLimit?: number;
      agentRateLimit?: number;
      wsConnections?: number;
      marketsPerSubscription?: number;
      json?: boolean;
    }) => {
      await withRuntime(async (runtime) => {
        const { accounts: service } = createServices(runtime);
        const account = await service.getByEmail(options.email);
        if (!account) throw new AppError("ACCOUNT_NOT_FOUND", `no account with email ${options.email}`);
        const updated = await service.update(account.id, {
          ...(options.tier ? { tier: options.tier as (typeof TIERS)[number] } : {}),
          ...(options.plan ? { plan: options.plan as (typeof PLANS)[number] } : {}),
          ...(options.rateLimit ? { rate_limit_per_minute: options.rateLimit } : {}),
          ...(options.agentRateLimit ? { agent_rate_limit_per_minute: options.agentRateLimit } : {}),
          ...(options.wsConnections ? { ws_connections: options.wsConnections } : {}),
          ...(options.marketsPerSubscription
            ? { markets_per_subscription: options.marketsPerSubscription }
            : {}),
          ...(options.operator === undefined ? {} : { operator: options.operator }),
        });
        stdout(
          options.json
            ? JSON.stringify(updated)
            : `updated ${updated.id} tier=${updated.tier} plan=${updated.plan} operator=${updated.operator}`,
        );
      });
    },
  );

const venues = program.command("venues").description("check the venues crossbook reads");

venues
  .command("check")
  .description(
    "ask each enabled venue's public endpoints (markets, events, one event, book, history, WebSocket) and " +
      "report per endpoint whether every field the adapters read is there with its type, and which fields " +
      "are new or not seen; exit 0 all there, 1 drift, 2 a venue unreachable. Run it first when a venue changes",
  )
  .addOption(
    new Option("--venue <venue>", "check only this venue (even if CROSSBOOK_VENUES leaves it out)").choices([
      "polymarket",
      "kalshi",
    ]),
  )
  .option("--timeout-ms <ms>", "timeout of every call and of each WebSocket wait", positiveInt, 10_000)
  .option("--json", "print one JSON object")
  .action(async (options: { venue?: "polymarket" | "kalshi"; timeoutMs: number; json?: boolean }) => {
    const { formatDriftReport, runDriftCheck } = await import("./venues/drift");
    const report = await runDriftCheck({
      config: loadConfig(),
      ...(options.venue ? { venues: [options.venue] } : {}),
      timeoutMs: options.timeoutMs,
      progress: (line) => stderr(`crossbook: ${line}`),
    });
    const text = options.json ? JSON.stringify(report) : formatDriftReport(report);
    // Exit as soon as the report is written: idle keep-alive sockets must not hold the command open.
    process.stdout.write(`${text}\n`, () => process.exit(report.exit_code));
  });

const keys = program.command("keys").description("manage API keys");

keys
  .command("create")
  .description("create an API key and print its secret (shown once)")
  .requiredOption("--email <email>", "the owning account's email")
  .requiredOption("--name <name>", "a name to recognise the key by")
  .addOption(new Option("--type <type>", "key type").choices([...KEY_TYPES]).makeOptionMandatory())
  .option("--permissions <list>", "agent keys: comma-separated from read,trade,manage_orders", permissionList)
  .option("--sandbox", "a sandbox key (cb_test_…) instead of a live one")
  .option("--json", "print one JSON object")
  .action(
    async (options: {
      email: string;
      name: string;
      type: string;
      permissions?: string[];
      sandbox?: boolean;
      json?: boolean;
    }) => {
      await withRuntime(async (runtime) => {
        const services = createServices(runtime);
        const account = await services.accounts.getByEmail(options.email);
        if (!account) throw new AppError("ACCOUNT_NOT_FOUND", `no account with email ${options.email}`);
        const { apiKey, secret } = await services.apiKeys.create(account.id, {
          name: options.name,
          type: options.type,
          ...(options.permissions ? { permissions: options.permissions } : {}),
          environment: options.sandbox ? "sandbox" : "live",
        });
        if (options.json) {
          stdout(
            JSON.stringify({
              id: apiKey.id,
              key: secret,
              name: apiKey.name,
              type: apiKey.type,
              permissions: apiKey.permissions,
              environment: apiKey.environment,
              prefix: apiKey.prefix,
              created_at: apiKey.created_at,
            }),
          );
        } else {
          stdout(
            `created ${apiKey.type} key ${apiKey.id} (${apiKey.environment}): ${apiKey.permissions.join(", ")}`,
          );
          stdout(`key: ${secret}   (shown once; store it now)`);
        }
      });
    },
  );

keys
  .command("list")
  .description("list an account's API keys (never their secrets)")
  .requiredOption("--email <email>", "the owning account's email")
  .option("--json", "print a JSON array")
  .action(async (options: { email: string; json?: boolean }) => {
    await withRuntime(async (runtime) => {
      const services = createServices(runtime);
      const account = await services.accounts.getByEmail(options.email);
      if (!account) throw new AppError("ACCOUNT_NOT_FOUND", `no account with email ${options.email}`);
      const list = await services.apiKeys.list(account.id);
      if (options.json) {
        stdout(JSON.stringify(list.map(({ account_id: _, ...k }) => k)));
        return;
      }
      if (list.length === 0) stdout("no keys");
      for (const k of list) {
        const state = k.revoked_at ? `revoked ${k.revoked_at}` : `last used ${k.last_used_at ?? "never"}`;
        stdout(`${k.id}  ${k.prefix}…  ${k.type.padEnd(9)} ${k.environment.padEnd(7)} ${k.name}  (${state})`);
      }
    });
  });

keys
  .command("revoke")
  .description("revoke an API key by id; it stops working on the next request")
  .argument("<id>", "the key id (key_…)")
  .option("--json", "print one JSON object")
  .action(async (id: string, options: { json?: boolean }) => {
    await withRuntime(async (runtime) => {
      const key = await createServices(runtime).apiKeys.revokeById(id);
      stdout(options.json ? JSON.stringify(key) : `revoked ${key.id} at ${key.revoked_at}`);
    });
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof ConfigError) {
    stderr(error.message);
    process.exit(2);
  }
  if (error instanceof AppError) {
    stderr(`error: ${error.message}${error.details ? ` ${JSON.stringify(error.details)}` : ""}`);
    process.exit(1);
  }
  stderr(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
