/**
 * `crossbook-agent`: the library's command line. `dashboard` serves the local web dashboard.
 *
 *   npx crossbook-agent dashboard --api-key cb_test_… [--base-url http://127.0.0.1:8080] [--port 4000]
 *     [--host 127.0.0.1] [--allow-host name[:port],…] [--markets id,id] [--environment sandbox|production]
 *
 * The dashboard prints its URL with the sign-in token (`?token=…`); see dashboard/server.ts.
 *
 *   npx crossbook-agent mcp [--api-key cb_test_…] [--base-url …] [--allow-live] [--risk risk.json] [--http 3333]
 *
 * serves the MCP server (mcp/server.ts) on stdio, or streamable HTTP on loopback.
 */
import { Command, InvalidArgumentError } from "commander";
import { Crossbook, type Environment, keyEnvironment } from "./client.js";
import { startDashboard } from "./dashboard/server.js";
import { createRiskChain, liveRiskState, loadRiskConfig } from "./risk/index.js";

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
  .option("--risk <file>", "a risk configuration (JSON): its limits are shown with their current use")
  .action(
    async (opts: {
      apiKey?: string;
      baseUrl: string;
      environment?: string;
      port: number;
      host: string;
      allowHost: string;
      markets: string;
      risk?: string;
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
      // Limits only: the kill switch and breaker live in the bot's own chain, in the bot's process.
      const risk = opts.risk ? { config: await loadRiskConfig(opts.risk), status: () => null } : undefined;
      const dashboard = await startDashboard({
        client,
        markets: list(opts.markets),
        port: opts.port,
        host: opts.host,
        allowedHosts: list(opts.allowHost),
        ...(risk ? { risk } : {}),
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

program
  .command("mcp")
  .description(
    "serve crossbook to LLM agents over the Model Context Protocol (stdio; --http for streamable HTTP on loopback)",
  )
  .option("--api-key <key>", "API key (or CROSSBOOK_API_KEY)", process.env.CROSSBOOK_API_KEY)
  .option(
    "--base-url <url>",
    "crossbook service address (or CROSSBOOK_BASE_URL / CROSSBOOK_URL)",
    process.env.CROSSBOOK_BASE_URL ?? process.env.CROSSBOOK_URL ?? "http://127.0.0.1:8080",
  )
  .option("--allow-live", "let place_order and the cancel tools run with a live key", false)
  .option("--risk <file>", "a risk configuration (JSON) every order passes first")
  .option("--http <port>", "serve streamable HTTP on 127.0.0.1:<port>/mcp instead of stdio", port)
  .action(
    async (opts: { apiKey?: string; baseUrl: string; allowLive: boolean; risk?: string; http?: number }) => {
      if (!opts.apiKey) program.error("--api-key (or CROSSBOOK_API_KEY) is required");
      const environment = keyEnvironment(opts.apiKey!);
      if (!environment) program.error("the API key is not a crossbook key (cb_live_… or cb_test_…)");
      const client = new Crossbook({
        apiKey: opts.apiKey!,
        environment: environment!,
        baseUrl: opts.baseUrl,
      });
      const risk = opts.risk
        ? createRiskChain(await loadRiskConfig(opts.risk), {
            state: liveRiskState(client),
            cancelAll: () => client.orders.cancelAll(),
          })
        : undefined;
      const options = { client, allowLive: opts.allowLive, ...(risk ? { risk } : {}) };
      // Loaded here: the MCP SDK is only needed by this command.
      const { createMcpServer } = await import("./mcp/server.js");
      // stdout carries the protocol on stdio: everything for people goes to stderr.
      const note = `crossbook-agent mcp: ${environment} key, ${opts.baseUrl}${
        environment === "production" && !opts.allowLive
          ? " (money-moving tools refused: no --allow-live)"
          : ""
      }`;
      if (opts.http !== undefined) {
        const { startMcpHttp } = await import("./mcp/http.js");
        const served = await startMcpHttp(options, opts.http);
        process.stderr.write(`${note}; streamable HTTP at ${served.url}\n`);
        const stop = async () => {
          await served.close();
          process.exit(0);
        };
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
        return;
      }
      const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
      process.stderr.write(`${note}; speaking MCP on stdio\n`);
      await createMcpServer(options).connect(new StdioServerTransport());
    },
  );

await program.parseAsync(process.argv);
