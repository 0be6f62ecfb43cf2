/**
 * The MCP server as a client sees it: spoken to over stdio as a raw JSON-RPC peer (newline-delimited
 * messages, not through our own code or the SDK's client), against the demo. It answers
 * `initialize`, lists its tools with input schemas and annotations, calls them (search, place and
 * cancel a sandbox order, a refused order as a tool error with the service's code), reads a market
 * resource, and refuses a live key's money-moving call without --allow-live.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Crossbook } from "../src/index";
import { startMcpHttp } from "../src/mcp/http";
import { type Demo, startDemo } from "./support/demo";

// biome-ignore lint/suspicious/noExplicitAny: JSON-RPC answers, checked field by field by the assertions
type Json = Record<string, any>;

const CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url));

/** A raw JSON-RPC peer on a child's stdin/stdout. */
class Peer {
  #buffer = "";
  #next = 1;
  readonly #waiting = new Map<number, (message: Record<string, unknown>) => void>();
  readonly stderr: string[] = [];

  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      this.#buffer += chunk;
      for (let nl = this.#buffer.indexOf("\n"); nl >= 0; nl = this.#buffer.indexOf("\n")) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        if (!line.trim()) continue;
        const message = JSON.parse(line) as Record<string, unknown>;
        const id = message["id"];
        if (typeof id === "number") this.#waiting.get(id)?.(message);
      }
    });
    child.stderr!.on("data", (chunk) => this.stderr.push(String(chunk)));
  }

  request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.#next++;
    const answered = new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no answer to ${method}: ${this.stderr.join("")}`)),
        20_000,
      );
      this.#waiting.set(id, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
    this.child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return answered;
  }

  notify(method: string, params: Record<string, unknown> = {}): void {
    this.child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", method, params })}\n`);
  }

  /** tools/call, its text content parsed. */
  async call(name: string, args: Record<string, unknown>) {
    const answer = await this.request("tools/call", { name, arguments: args });
    const result = answer["result"] as { content: Array<{ text: string }>; isError?: boolean };
    return {
      isError: result.isError === true,
      value: JSON.parse(result.content[0]!.text) as Json,
    };
  }

  async initialize() {
    const answer = await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw-json-rpc-test", version: "0" },
    });
    this.notify("notifications/initialized");
    return answer["result"] as Json;
  }

  close() {
    this.child.stdin!.end();
    this.child.kill();
  }
}

function startPeer(demo: Demo, apiKey: string, flags: string[] = []): Peer {
  const child = spawn(
    process.execPath,
    ["--conditions=crossbook-source", "--import", "tsx", CLI, "mcp", ...flags],
    {
      env: { ...process.env, CROSSBOOK_API_KEY: apiKey, CROSSBOOK_BASE_URL: demo.url },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  return new Peer(child);
}

describe("the MCP server over stdio", () => {
  let demo: Demo;
  let sandbox: Peer;
  let marketId: string;

  beforeAll(async () => {
    demo = await startDemo({ tickMs: 500 });
    const client = new Crossbook({ apiKey: demo.sandboxKey, environment: "sandbox", baseUrl: demo.url });
    for (let i = 0; i < 100 && !marketId; i++) {
      const { data } = await client.markets.list({ venue: "kalshi", status: "open", limit: 20 });
      const m = data.find((x) => x.best_bid !== null && x.best_bid > 0.05);
      if (m) marketId = m.id;
      else await new Promise((r) => setTimeout(r, 200));
    }
    sandbox = startPeer(demo, demo.sandboxKey);
  }, 120_000);

  afterAll(async () => {
    sandbox?.close();
    await demo?.close();
  });

  it("answers initialize and lists its tools with schemas and annotations", async () => {
    const init = await sandbox.initialize();
    expect(init["serverInfo"].name).toBe("crossbook");
    expect(init["capabilities"].tools).toBeDefined();
    const listed = (await sandbox.request("tools/list"))["result"] as { tools: Array<Json> };
    const names = listed.tools.map((t) => t["name"]).sort();
    expect(names).toEqual(
      [
        "search_markets",
        "get_market",
        "get_prices",
        "get_price_history",
        "list_matches",
        "compare_prices",
        "get_balance",
        "list_positions",
        "list_orders",
        "get_order",
        "place_order",
        "cancel_order",
        "cancel_all_orders",
        "list_alerts",
        "create_alert",
        "get_account_events",
      ].sort(),
    );
    const byName = new Map(listed.tools.map((t) => [t["name"], t]));
    expect(byName.get("get_balance")!["annotations"]).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
    });
    expect(byName.get("place_order")!["annotations"]).toMatchObject({
      readOnlyHint: false,
      idempotentHint: true,
    });
    expect(byName.get("cancel_all_orders")!["annotations"]).toMatchObject({ destructiveHint: true });
    expect(byName.get("place_order")!["inputSchema"]).toMatchObject({
      type: "object",
      required: ["market_id", "side", "amount"],
    });
  });

  it("searches, places and cancels a sandbox order, and reads a market resource", async () => {
    const found = await sandbox.call("search_markets", { venue: "kalshi", limit: 5 });
    expect(found.isError).toBe(false);
    expect(found.value["data"].length).toBeGreaterThan(0);
    const placed = await sandbox.call("place_order", {
      market_id: marketId,
      side: "buy",
      price: 0.02,
      amount: 5,
      idempotency_key: "mcp-test-order-1",
    });
    expect(placed.isError, JSON.stringify(placed.value)).toBe(false);
    expect(placed.value["status"]).toBe("open");
    // The same idempotency key again: the same order, not a second one.
    const again = await sandbox.call("place_order", {
      market_id: marketId,
      side: "buy",
      price: 0.02,
      amount: 5,
      idempotency_key: "mcp-test-order-1",
    });
    expect(again.value["id"]).toBe(placed.value["id"]);
    const refreshed = await sandbox.call("get_order", { order_id: placed.value["id"], refresh: true });
    expect(refreshed.value).toMatchObject({ id: placed.value["id"], status: "open" });
    const cancelled = await sandbox.call("cancel_order", { order_id: placed.value["id"] });
    expect(cancelled.value["status"]).toBe("cancelled");
    const read = (await sandbox.request("resources/read", { uri: `crossbook://market/${marketId}` }))[
      "result"
    ] as {
      contents: Array<{ text: string }>;
    };
    expect(JSON.parse(read.contents[0]!.text).id).toBe(marketId);
  });

  it("returns the service's refusals as tool errors with its code", async () => {
    const refused = await sandbox.call("place_order", {
      market_id: marketId,
      side: "buy",
      price: 0.5,
      amount: 50_000,
    });
    expect(refused.isError).toBe(true);
    expect(refused.value["error"].code, JSON.stringify(refused.value)).toBe("INSUFFICIENT_BALANCE");
    const missing = await sandbox.call("get_order", {});
    expect(missing).toMatchObject({ isError: true, value: { error: { code: "VALIDATION_ERROR" } } });
    const unknown = await sandbox.call("get_order", { order_id: "ord_nope" });
    expect(unknown.value["error"].code).toBe("ORDER_NOT_FOUND");
  });

  it("refuses a live key's money-moving calls without --allow-live, and still reads", async () => {
    const live = startPeer(demo, demo.liveKey);
    try {
      await live.initialize();
      const refused = await live.call("place_order", {
        market_id: marketId,
        side: "buy",
        price: 0.02,
        amount: 1,
      });
      expect(refused).toMatchObject({ isError: true, value: { error: { code: "LIVE_TRADING_DISABLED" } } });
      expect((await live.call("cancel_all_orders", {})).value["error"].code).toBe("LIVE_TRADING_DISABLED");
      expect((await live.call("get_market", { market_id: marketId })).isError).toBe(false);
    } finally {
      live.close();
    }
  });
});

describe("the MCP server over streamable HTTP", () => {
  let demo: Demo;

  beforeAll(async () => {
    demo = await startDemo({ tickMs: 1000 });
  }, 120_000);
  afterAll(() => demo?.close());

  /** One JSON-RPC request by POST; the answer may come as JSON or as one server-sent event. */
  async function post(
    url: string,
    body: unknown,
    host?: string,
  ): Promise<{ status: number; message?: Json }> {
    const { request } = await import("node:http");
    const target = new URL(url);
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: "POST",
          headers: {
            host: host ?? target.host,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "content-length": Buffer.byteLength(payload),
          },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk) => {
            text += chunk;
          });
          res.on("end", () => {
            const data = /^data: (.*)$/m.exec(text)?.[1] ?? (text.trim().startsWith("{") ? text : undefined);
            resolve({ status: res.statusCode ?? 0, ...(data ? { message: JSON.parse(data) as Json } : {}) });
          });
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  it("answers on loopback at /mcp, and refuses another Host (DNS rebinding)", async () => {
    const client = new Crossbook({ apiKey: demo.sandboxKey, environment: "sandbox", baseUrl: demo.url });
    const served = await startMcpHttp({ client }, 0);
    try {
      expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const init = await post(served.url, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "raw", version: "0" },
        },
      });
      expect(init.status).toBe(200);
      expect(init.message!["result"].serverInfo.name).toBe("crossbook");
      const balance = await post(served.url, {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "get_balance", arguments: {} },
      });
      expect(JSON.parse(balance.message!["result"].content[0].text).environment).toBe("sandbox");
      const rebound = await post(served.url, { jsonrpc: "2.0", id: 3, method: "tools/list" }, "evil.example");
      expect(rebound.status).toBe(403);
    } finally {
      await served.close();
    }
  });
});
