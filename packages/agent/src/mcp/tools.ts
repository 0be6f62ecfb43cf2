/**
 * The MCP server's tools: each a JSON input schema, MCP annotations (`readOnlyHint`,
 * `destructiveHint`, `idempotentHint`, `openWorldHint`) saying which only read and which move
 * money, and a call on the crossbook client. Money-moving tools (`moves: true`) are guarded by the
 * server (server.ts): sandbox keys only unless started with --allow-live, the risk chain first
 * when one is configured.
 */
import type { Crossbook } from "../client.js";
import type { OrderRequest } from "../order-types.js";

type JsonSchema = Record<string, unknown>;
export type ToolArgs = Record<string, unknown>;

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: "object" };
  annotations: {
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
  /** Places or cancels orders: guarded by environment and risk. */
  moves: boolean;
  run(client: Crossbook, args: ToolArgs): Promise<unknown>;
}

const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: "string",
  description,
  ...extra,
});
const int = (description: string, minimum: number, maximum: number): JsonSchema => ({
  type: "integer",
  description,
  minimum,
  maximum,
});
const object = (properties: Record<string, JsonSchema>, required: string[] = []) => ({
  type: "object" as const,
  properties,
  required,
  additionalProperties: false,
});

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** Only the arguments that were given (the service applies its own defaults). */
function given(args: ToolArgs, names: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of names) if (args[name] !== undefined) out[name] = args[name];
  return out;
}

const MARKET_ID = str("A crossbook market id, e.g. kalshi:KXFED-26DEC-T4.00 or polymarket:0x…");

export const TOOLS: ToolDefinition[] = [
  {
    name: "search_markets",
    title: "Search markets",
    description: "Markets on Polymarket and Kalshi whose title matches the text, with their current prices.",
    inputSchema: object({
      q: str("Text to look for in titles"),
      venue: str("Only this venue", { enum: ["polymarket", "kalshi"] }),
      status: str("Market status (default open)", { enum: ["open", "closed", "resolved", "all"] }),
      limit: int("How many (default 20)", 1, 100),
    }),
    annotations: READ,
    moves: false,
    run: (client, args) =>
      client.markets.list({ limit: 20, ...given(args, ["q", "venue", "status", "limit"]) } as never),
  },
  {
    name: "get_market",
    title: "Get a market",
    description: "One market in full: question, rules, outcomes with prices, close time, fees.",
    inputSchema: object({ market_id: MARKET_ID }, ["market_id"]),
    annotations: READ,
    moves: false,
    run: (client, args) => client.markets.get(String(args["market_id"])),
  },
  {
    name: "get_prices",
    title: "Get current prices",
    description: "Current prices of up to 100 markets, optionally with their order books.",
    inputSchema: object(
      {
        market_ids: { type: "array", items: MARKET_ID, minItems: 1, maxItems: 100 },
        orderbook: { type: "boolean", description: "Include each market's order book" },
      },
      ["market_ids"],
    ),
    annotations: READ,
    moves: false,
    run: (client, args) =>
      client.prices.get(args["market_ids"] as string[], { orderbook: args["orderbook"] === true }),
  },
  {
    name: "get_price_history",
    title: "Get price history",
    description: "Candles (open, high, low, close, volume) of one market.",
    inputSchema: object(
      {
        market_id: MARKET_ID,
        interval: str("Candle length (default 1h)", { enum: ["1m", "5m", "15m", "1h", "4h", "1d", "1w"] }),
        start: str("From (ISO 8601)"),
        end: str("To (ISO 8601)"),
        limit: int("At most this many candles", 1, 1000),
      },
      ["market_id"],
    ),
    annotations: READ,
    moves: false,
    run: (client, args) =>
      client.prices.history(given(args, ["market_id", "interval", "start", "end", "limit"]) as never),
  },
  {
    name: "list_matches",
    title: "List matched markets",
    description:
      "Pairs of markets on different venues that settle on the same question (identity) or its opposite (complement), with confidence and caveats.",
    inputSchema: object({
      q: str("Text to look for"),
      status: str("verified, candidate or rejected"),
      relation: str("identity, complement, …"),
      market_id: MARKET_ID,
      limit: int("How many (default 20)", 1, 100),
    }),
    annotations: READ,
    moves: false,
    run: (client, args) =>
      client.matches.list({
        limit: 20,
        ...given(args, ["q", "status", "relation", "market_id", "limit"]),
      } as never),
  },
  {
    name: "compare_prices",
    title: "Compare prices across venues",
    description:
      "Prices of an event's matched markets on every venue, with the arbitrage analysis after fees.",
    inputSchema: object({ event_id: str("A cross-venue event id (xev_…) or a market id") }, ["event_id"]),
    annotations: READ,
    moves: false,
    run: (client, args) => client.prices.compare(String(args["event_id"])),
  },
  {
    name: "get_balance",
    title: "Get balance",
    description: "Available, locked and total cash of the key's environment.",
    inputSchema: object({}),
    annotations: READ,
    moves: false,
    run: (client) => client.balance(),
  },
  {
    name: "list_positions",
    title: "List positions",
    description: "Positions with their marks and profit and loss.",
    inputSchema: object({
      status: str("open (default), closed, resolved or all"),
      market_id: MARKET_ID,
      limit: int("How many", 1, 100),
    }),
    annotations: READ,
    moves: false,
    run: (client, args) => client.positions.list(given(args, ["status", "market_id", "limit"]) as never),
  },
  {
    name: "list_orders",
    title: "List orders",
    description: "Orders, newest first (default: the open ones).",
    inputSchema: object({
      status: str("open (default), filled, cancelled, all, …"),
      market_id: MARKET_ID,
      limit: int("How many", 1, 100),
    }),
    annotations: READ,
    moves: false,
    run: (client, args) => client.orders.list(given(args, ["status", "market_id", "limit"]) as never),
  },
  {
    name: "get_order",
    title: "Get an order",
    description: "One order in full, with its fills so far.",
    inputSchema: object(
      {
        order_id: str("The order id (ord_…)"),
        refresh: {
          type: "boolean",
          description:
            "Ask a live order's venue now instead of waiting for crossbook's next poll (within 5 s); costs venue rate limit",
        },
      },
      ["order_id"],
    ),
    annotations: READ,
    moves: false,
    run: (client, args) =>
      client.orders.get(String(args["order_id"]), args["refresh"] === true ? { refresh: true } : undefined),
  },
  {
    name: "place_order",
    title: "Place an order",
    description:
      "Places a limit order (price given) or a market order (type market, with max_slippage). Moves money: with a live key only when the server was started with --allow-live. Pass the same idempotency_key to retry without placing twice.",
    inputSchema: object(
      {
        market_id: MARKET_ID,
        side: str("buy or sell", { enum: ["buy", "sell"] }),
        outcome: str("yes (default) or no", { enum: ["yes", "no"] }),
        type: str("limit (default) or market", { enum: ["limit", "market"] }),
        price: {
          type: "number",
          description: "Limit price per contract, between 0 and 1",
          exclusiveMinimum: 0,
          exclusiveMaximum: 1,
        },
        amount: { type: "number", description: "Contracts", exclusiveMinimum: 0 },
        time_in_force: str("GTC (default), IOC, FOK or GTD", { enum: ["GTC", "IOC", "FOK", "GTD"] }),
        max_slippage: {
          type: "number",
          description: "Market orders: how far past the best price, 0-1",
          minimum: 0,
          maximum: 1,
        },
        idempotency_key: str("Reuse on a retry so the order is placed once (one is made otherwise)", {
          maxLength: 255,
        }),
      },
      ["market_id", "side", "amount"],
    ),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    moves: true,
    run: (client, args) => {
      const order = given(args, [
        "market_id",
        "side",
        "outcome",
        "type",
        "price",
        "amount",
        "time_in_force",
        "max_slippage",
      ]);
      const key = typeof args["idempotency_key"] === "string" ? args["idempotency_key"] : undefined;
      return client.orders.place(order as unknown as OrderRequest, key ? { idempotencyKey: key } : {});
    },
  },
  {
    name: "cancel_order",
    title: "Cancel an order",
    description: "Cancels one open order. Moves money (releases what the order held).",
    inputSchema: object({ order_id: str("The order id (ord_…)") }, ["order_id"]),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    moves: true,
    run: (client, args) => client.orders.cancel(String(args["order_id"])),
  },
  {
    name: "cancel_all_orders",
    title: "Cancel all orders",
    description: "Cancels every open order, or those of one market and/or side.",
    inputSchema: object({ market_id: MARKET_ID, side: str("buy or sell", { enum: ["buy", "sell"] }) }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    moves: true,
    run: (client, args) => client.orders.cancelAll(given(args, ["market_id", "side"]) as never),
  },
  {
    name: "list_alerts",
    title: "List price alerts",
    description: "Your server-side price alerts.",
    inputSchema: object({}),
    annotations: READ,
    moves: false,
    run: (client) => client.alerts.list(),
  },
  {
    name: "create_alert",
    title: "Create a price alert",
    description:
      "A server-side alert fired (by webhook and event) when a market's price crosses a threshold.",
    inputSchema: object(
      {
        market_id: MARKET_ID,
        condition: str("What fires it", {
          enum: ["price_above", "price_below", "change_pct_24h_above", "change_pct_24h_below"],
        }),
        threshold: { type: "number", description: "A price (0-1), or a percentage for change_pct_24h_*" },
      },
      ["market_id", "condition", "threshold"],
    ),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    moves: false,
    run: (client, args) =>
      client.alerts.create(given(args, ["market_id", "condition", "threshold"]) as never),
  },
  {
    name: "get_account_events",
    title: "Get account events",
    description:
      "Your account's events (orders, fills, positions, transfers) oldest first after a cursor; pass meta.next_after back as after to read on.",
    inputSchema: object({
      after: str("An event's seq or id from an earlier answer (omit: from the oldest kept)"),
      types: { type: "array", items: { type: "string" }, description: "Only these event types" },
      limit: int("How many (default 100)", 1, 1000),
    }),
    annotations: READ,
    moves: false,
    run: (client, args) => {
      const types = Array.isArray(args["types"]) ? (args["types"] as string[]).join(",") : undefined;
      return client.http.request("get", "/v1/account/events", {
        query: { ...given(args, ["after", "limit"]), ...(types ? { types } : {}) } as never,
      });
    },
  },
];
