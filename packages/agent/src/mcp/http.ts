/**
 * The MCP server over streamable HTTP, on loopback only (`crossbook-agent mcp --http <port>`): one
 * stateless server per request at `/mcp`, with the SDK's DNS-rebinding protection limited to this
 * address's Host values, since any web page the user opens could otherwise reach it.
 */
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpServer, type McpOptions } from "./server.js";

export interface McpHttp {
  url: string;
  close(): Promise<void>;
}

export async function startMcpHttp(options: McpOptions, port: number): Promise<McpHttp> {
  let allowedHosts: string[] = [];
  const http: HttpServer = createServer((request, response) => {
    if (!request.url || new URL(request.url, "http://localhost").pathname !== "/mcp") {
      response.writeHead(404, { "content-type": "text/plain" }).end("Not found: the MCP endpoint is /mcp\n");
      return;
    }
    const server = createMcpServer(options);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableDnsRebindingProtection: true,
      allowedHosts,
    });
    response.on("close", () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch((error: unknown) => {
        process.stderr.write(`crossbook-agent mcp: ${String(error)}\n`);
        if (!response.headersSent) response.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, "127.0.0.1", resolve);
  });
  const bound = (http.address() as AddressInfo).port;
  allowedHosts = [`127.0.0.1:${bound}`, `localhost:${bound}`];
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}
