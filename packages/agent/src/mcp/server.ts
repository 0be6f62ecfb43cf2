/**
 * crossbook as an MCP server for LLM agents (`crossbook-agent mcp`), built on the official MCP
 * TypeScript SDK: the tools of tools.ts over stdio (or streamable HTTP on loopback), and resources
 * for a market (`crossbook://market/{market_id}`) and a cross-venue event
 * (`crossbook://event/{event_id}`).
 *
 * Guards on the tools that move money: a live key's call is refused unless the server was started
 * with `allowLive`; with a risk configuration the order first passes the risk chain; every placement
 * carries an idempotency key (the caller's, or one made per call). The service's errors come back as
 * tool errors (`isError`) with its code and message, so the model can read and act on them.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Crossbook } from "../client.js";
import { CrossbookApiError, CrossbookNetworkError } from "../errors.js";
import type { OrderIntent, RiskChain } from "../risk/index.js";
import { TOOLS, type ToolArgs, type ToolDefinition } from "./tools.js";

export interface McpOptions {
  client: Crossbook;
  /** Let money-moving tools run with a live key (default: sandbox keys only). */
  allowLive?: boolean;
  /** Orders pass this risk chain before they are placed. */
  risk?: RiskChain;
  /** Reported to the client in `initialize`. */
  version?: string;
}

type ToolResult = { content: Array<{ type: "text"; text: string }>; isError?: boolean };

function result(value: unknown): ToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }] };
}

function failure(code: string, message: string, details?: unknown): ToolResult {
  return {
    isError: true,
    content: [
      { type: "text", text: JSON.stringify({ error: { code, message, ...(details ? { details } : {}) } }) },
    ],
  };
}

/** Required arguments present and of the declared JSON type (the service checks the rest). */
function argumentProblems(tool: ToolDefinition, args: ToolArgs): string[] {
  const schema = tool.inputSchema as unknown as {
    properties: Record<string, { type?: string }>;
    required: string[];
  };
  const problems = schema.required
    .filter((name) => args[name] === undefined)
    .map((name) => `${name} is required`);
  for (const [name, value] of Object.entries(args)) {
    const declared = schema.properties[name];
    if (!declared) {
      problems.push(`${name} is not an argument of ${tool.name}`);
      continue;
    }
    const type = Array.isArray(value) ? "array" : typeof value;
    const expected = declared.type === "integer" ? "number" : declared.type;
    if (expected && type !== expected) problems.push(`${name} must be ${declared.type}`);
  }
  return problems;
}

export function createMcpServer(options: McpOptions): Server {
  const { client } = options;
  const server = new Server(
    { name: "crossbook", version: options.version ?? "0.1.0" },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        "crossbook: prediction markets on Polymarket and Kalshi through one API. Read tools are safe; place_order, cancel_order and cancel_all_orders move money (sandbox keys trade fake USDC).",
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { title: t.title, ...t.annotations },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<ToolResult> => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (!tool) return failure("UNKNOWN_TOOL", `No tool named ${request.params.name}`);
    const args = (request.params.arguments ?? {}) as ToolArgs;
    const problems = argumentProblems(tool, args);
    if (problems.length > 0) return failure("VALIDATION_ERROR", problems.join("; "));
    if (tool.moves && client.environment === "production" && !options.allowLive) {
      return failure(
        "LIVE_TRADING_DISABLED",
        `${tool.name} moves real money with a live key; this MCP server was started without --allow-live, so it only trades in the sandbox`,
      );
    }
    try {
      if (tool.name === "place_order" && options.risk) {
        const decision = await options.risk.check(args as unknown as OrderIntent);
        if (!decision.allowed)
          return failure("RISK_REJECTED", `The risk chain refused the order: ${decision.reason}`, decision);
      }
      return result(await tool.run(client, args));
    } catch (error) {
      if (error instanceof CrossbookApiError)
        return failure(error.code, error.message.replace(/^\d{3} [A-Z_]+: /, ""), error.details);
      if (error instanceof CrossbookNetworkError) return failure("NETWORK_ERROR", error.message);
      throw error;
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: "crossbook://market/{market_id}",
        name: "market",
        title: "A market",
        description: "One market in full (question, rules, outcomes and prices), as JSON",
        mimeType: "application/json",
      },
      {
        uriTemplate: "crossbook://event/{event_id}",
        name: "event",
        title: "A cross-venue event",
        description: "One cross-venue event with its matched markets, as JSON",
        mimeType: "application/json",
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    const match = /^crossbook:\/\/(market|event)\/(.+)$/.exec(uri);
    if (!match)
      throw new Error(`Unknown resource ${uri}: expected crossbook://market/{id} or crossbook://event/{id}`);
    const id = decodeURIComponent(match[2]!);
    const value = match[1] === "market" ? await client.markets.get(id) : await client.events.get(id);
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(value, null, 2) }] };
  });
  return server;
}

/** Serves `server` over `transport` until the transport closes. */
export async function serveMcp(server: Server, transport: Transport): Promise<void> {
  await server.connect(transport);
}
