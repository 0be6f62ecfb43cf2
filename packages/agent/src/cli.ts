/**
 * `crossbook-agent`: the library's command line. `dashboard` serves the local web dashboard.
 *
 *   npx crossbook-agent dashboard --api-key cb_test_… [--base-url http://127.0.0.1:8080] [--port 4000]
 *     [--host 127.0.0.1] [--allow-host name[:port],…] [--markets id,id] [--environment sandbox|production]
 *
 * The dashboard prints its URL with the sign-in token (`?token=…`); see dashboard/server.ts.
 */
import { Command, InvalidArgumentError } from "commander";
import { Crossbook, type Environment, keyEnvironment } from "./client.js";
import { startDashboard } from "./dashboard/server.js";

const program = new Command("crossbook-agent").description("crossbook's client library for trading agents");

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("a port number 0-65535");
  return n;
}

program
  .command("dashboard")
  .description("serve a local web dashboard: balance, positions with live PnL, orders, prices, alerts, risk")
  .option("--api-key <key>", "API key (or CROSSBOOK_API_KEY)", process.env.CROSSBOOK_API_KEY)
  .option(
    "--base-url <url>",
    "crossbook service address (or CROSSBOOK_URL)",
    process.env.CROSSBOOK_URL ?? "http://127.0.0.1:8080",
  )
  .option("--environment <env>", "production or sandbox (default: the key's own)")
  .option("--port <port>", "port to listen on (0: any free port)", port, 4000)
  .option(
    "--host <host>",
    "address or name to listen on; its name is also accepted in the Host header",
    "127.0.0.1",
  )
  .option(
    "--allow-host <hosts>",
    "comma-separated extra Host header values to answer to: name (with --port) or name:port",
    "",
  )
  .option("--markets <ids>", "comma-separated market ids to watch", "")
  .action(
    async (opts: {
      apiKey?: string;
      baseUrl: string;
      environment?: string;
      port: number;
      host: string;
      allowHost: string;
      markets: string;
    }) => {
      if (!opts.apiKey) program.error("--api-key (or CROSSBOOK_API_KEY) is required");
      const environment = (opts.environment ?? keyEnvironment(opts.apiKey!)) as Environment | undefined;
      const client = new Crossbook({
        apiKey: opts.apiKey!,
        ...(environment ? { environment } : {}),
        baseUrl: opts.baseUrl,
      });
      const list = (value: string) =>
        value
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
      const dashboard = await startDashboard({
        client,
        markets: list(opts.markets),
        port: opts.port,
        host: opts.host,
        allowedHosts: list(opts.allowHost),
      });
      process.stdout.write(`crossbook-agent dashboard: ${dashboard.openUrl}\n`);
      const stop = async () => {
        await dashboard.close();
        process.exit(0);
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    },
  );

await program.parseAsync(process.argv);
