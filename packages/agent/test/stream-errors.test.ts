/**
 * A stream that cannot connect says so as the HTTP client does: a CrossbookNetworkError naming the
 * WebSocket URL, the cause and where the fix likely lies, and that it goes on trying.
 */
import net from "node:net";
import { describe, expect, it } from "vitest";
import { AccountStream } from "../src/account-stream.js";
import { CrossbookNetworkError } from "../src/errors.js";
import { PriceStream } from "../src/stream.js";

/** A port on this machine nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function firstError(stream: { once(event: "error", listener: (error: Error) => void): unknown }) {
  return new Promise<Error>((resolve) => stream.once("error", resolve));
}

describe("stream connection errors", () => {
  it("the price stream names its URL, the refused connection and the fix", async () => {
    const port = await closedPort();
    const stream = new PriceStream({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: "cb_test_x",
      reconnectDelayMs: 60_000,
    });
    try {
      const error = await firstError(stream);
      expect(error).toBeInstanceOf(CrossbookNetworkError);
      const network = error as CrossbookNetworkError;
      expect(network.url).toBe(`ws://127.0.0.1:${port}/v1/prices/stream`);
      expect(network.method).toBe("GET");
      expect(network.code).toBe("ECONNREFUSED");
      expect(network.cause).toBeInstanceOf(Error);
      expect(network.message).toBe(
        `GET ws://127.0.0.1:${port}/v1/prices/stream failed: ECONNREFUSED 127.0.0.1:${port} — is crossbook running? (start it with \`npx crossbook demo\` or \`npx crossbook serve\`); reconnecting`,
      );
    } finally {
      stream.close();
    }
  });

  it("the account stream too", async () => {
    const port = await closedPort();
    const stream = new AccountStream({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: "cb_test_x",
      reconnectDelayMs: 60_000,
    });
    try {
      const error = (await firstError(stream)) as CrossbookNetworkError;
      expect(error).toBeInstanceOf(CrossbookNetworkError);
      expect(error.url).toBe(`ws://127.0.0.1:${port}/v1/account/stream`);
      expect(error.code).toBe("ECONNREFUSED");
      expect(error.message).toMatch(/failed: ECONNREFUSED .* is crossbook running\?.*; reconnecting$/);
    } finally {
      stream.close();
    }
  });
});
