/**
 * The answers made outside any route still use the envelope: the router's refusals (bad
 * percent-escape, overlong path parameter), Node's HTTP parser errors (malformed request line,
 * oversized URL or headers, bad Content-Length or Transfer-Encoding, truncated body, timeout), a
 * missing Host, CONNECT, an unknown Expect, and non-finite numbers that Ajv's coercion lets through.
 * The parser cases need raw bytes on a real socket, which `inject()` cannot send.
 */
import net from "node:net";
import type { Duplex } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CATALOG } from "../../src/http/errors";
import { serverOptions } from "../../src/http/plumbing";
import { bearer, createKey, createTestApp, expectError, signup, type TestApp } from "../support/app";

let t: TestApp;
let key: string;
let port: number;

beforeAll(async () => {
  t = await createTestApp();
  const { session } = await signup(t.app);
  key = (await createKey(t.app, session, { type: "read_only" })).key;
  const address = await t.app.listen({ host: "127.0.0.1", port: 0 });
  port = Number(new URL(address).port);
});
afterAll(() => t.close());

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends raw bytes, half-closes after `endAfterMs`, and parses the one answer that comes back. */
function exchange(data: string, endAfterMs = 300): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.end(), endAfterMs);
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      if (split === -1) return reject(new Error(`no HTTP answer: ${JSON.stringify(text)}`));
      const [statusLine, ...headerLines] = text.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers["content-length"] ?? Number.NaN);
      const rest = Buffer.from(text.slice(split + 4), "utf8");
      const body = Number.isNaN(length) ? rest.toString("utf8") : rest.subarray(0, length).toString("utf8");
      resolve({ status: Number(statusLine?.split(" ")[1]), headers, body });
    });
    socket.write(data, "latin1");
  });
}

/** Asserts the raw answer is the error envelope with this status and code; returns `error`. */
function expectRawError(response: RawResponse, status: number, code: keyof typeof ERROR_CATALOG) {
  expect({ status: response.status, type: response.headers["content-type"] }).toEqual({
    status,
    type: "application/json; charset=utf-8",
  });
  expect(response.headers["x-request-id"]).toMatch(/^req_/);
  const body = JSON.parse(response.body);
  expect(body).toMatchObject({ success: false, error: { code, message: expect.any(String) } });
  expect(ERROR_CATALOG[code].status).toBe(status);
  return body.error as { code: string; message: string; details?: { fields?: Record<string, string> } };
}

describe("answers of the router, through inject()", () => {
  it("a path parameter over 100 characters is a 414 URI_TOO_LONG", async () => {
    const response = await t.app.inject({
      method: "GET",
      url: `/v1/orders/${"a".repeat(101)}`,
      headers: bearer(key),
    });
    expect(expectError(response, 414, "URI_TOO_LONG").message).toContain("100 characters");
  });

  it("a bad percent-escape in the path is a 400 naming the path", async () => {
    for (const url of ["/v1/orders/%zz", "/v1/orders/%E0%A4%A", "/v1/or%zzders"]) {
      const response = await t.app.inject({ method: "GET", url, headers: bearer(key) });
      expect(expectError(response, 400, "VALIDATION_ERROR").details).toEqual({
        fields: { path: "is not a valid URL" },
      });
    }
  });

  it("a query number that coerces to Infinity is a 400, not a 500", async () => {
    for (const [query, field] of [
      ["limit=1e309", "query.limit"],
      ["offset=-Infinity", "query.offset"],
    ] as const) {
      const response = await t.app.inject({
        method: "GET",
        url: `/v1/orders?${query}`,
        headers: bearer(key),
      });
      expect(expectError(response, 400, "VALIDATION_ERROR").details).toEqual({
        fields: { [field]: "must be a finite number" },
      });
    }
    const confidence = await t.app.inject({
      method: "GET",
      url: "/v1/matches?min_confidence=Infinity",
      headers: bearer(key),
    });
    expectError(confidence, 400, "VALIDATION_ERROR");
  });

  it("methods Fastify does not route (OPTIONS, PROPFIND, TRACE) are a 405 with Allow", async () => {
    for (const method of ["OPTIONS", "PROPFIND", "TRACE"] as const) {
      const response = await t.app.inject({ method, url: "/v1/orders", headers: bearer(key) });
      expectError(response, 405, "METHOD_NOT_ALLOWED");
      expect(response.headers["allow"]).toBe("GET, POST, DELETE");
    }
  });
});

describe("answers of Node's HTTP parser, over a socket", () => {
  it("a malformed request line or an unknown method is a 400", async () => {
    expectRawError(await exchange("GARBAGE\r\n\r\n"), 400, "VALIDATION_ERROR");
    const method = expectRawError(
      await exchange("FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
      400,
      "VALIDATION_ERROR",
    );
    expect(method.details?.fields).toEqual({ method: "is not an HTTP method" });
    expectRawError(await exchange("GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n"), 400, "VALIDATION_ERROR");
    expectRawError(await exchange("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"), 400, "VALIDATION_ERROR");
    const header = expectRawError(
      await exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n"),
      400,
      "VALIDATION_ERROR",
    );
    expect(header.details?.fields).toEqual({ header: "has a malformed name or value" });
  });

  it("an overlong URL is a 414, overlong headers a 431", async () => {
    expectRawError(
      await exchange(`GET /v1/markets?q=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
      414,
      "URI_TOO_LONG",
    );
    expectRawError(
      await exchange(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`),
      431,
      "REQUEST_HEADER_FIELDS_TOO_LARGE",
    );
  });

  it("a bad Content-Length or Transfer-Encoding is a 400 naming the header", async () => {
    for (const lengths of [
      "Content-Length: abc",
      "Content-Length: -1",
      "Content-Length: 2\r\nContent-Length: 3",
    ]) {
      const error = expectRawError(
        await exchange(`POST /v1/auth/login HTTP/1.1\r\nHost: x\r\n${lengths}\r\n\r\n{}`),
        400,
        "VALIDATION_ERROR",
      );
      expect(Object.keys(error.details?.fields ?? {})).toEqual(["header.content-length"]);
    }
    const both = expectRawError(
      await exchange(
        "POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}",
      ),
      400,
      "VALIDATION_ERROR",
    );
    expect(Object.keys(both.details?.fields ?? {})).toEqual(["header.transfer-encoding"]);
  });

  it("a body shorter than its Content-Length is a 400 once the client stops sending", async () => {
    const error = expectRawError(
      await exchange(
        "POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{}",
        100,
      ),
      400,
      "VALIDATION_ERROR",
    );
    expect(error.details?.fields).toEqual({ body: "ended before the request was complete" });
  });

  it("a percent-escape the router cannot decode is a 400 over a socket too", async () => {
    const error = expectRawError(
      await exchange("GET /v1/orders/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
      400,
      "VALIDATION_ERROR",
    );
    expect(error.details?.fields).toEqual({ path: "is not a valid URL" });
  });

  it("an HTTP/1.1 request without Host is a 400 naming the header", async () => {
    const error = expectRawError(
      await exchange("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"),
      400,
      "VALIDATION_ERROR",
    );
    expect(error.details?.fields).toEqual({ "header.host": "is required in HTTP/1.1" });
    // HTTP/1.0 has no Host requirement.
    const old = await exchange("GET /healthz HTTP/1.0\r\n\r\n");
    expect(old.status).toBe(200);
  });

  it("CONNECT is a 405: this is not a proxy", async () => {
    expectRawError(
      await exchange("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
      405,
      "METHOD_NOT_ALLOWED",
    );
  });

  it("an unknown Expect value is ignored and the request served", async () => {
    const response = await exchange(
      "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n",
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: "ok" });
  });

  it("a request that does not arrive in time is a 408 REQUEST_TIMEOUT", () => {
    // Node's headers and request timeouts are checked every 30 s; the handler is called directly.
    const socket = {
      writable: true,
      destroyed: false,
      written: "",
      write(data: string) {
        this.written += data;
        return true;
      },
      destroy() {
        this.destroyed = true;
      },
    };
    const timeout = Object.assign(new Error("Request timeout"), { code: "ERR_HTTP_REQUEST_TIMEOUT" });
    serverOptions.clientErrorHandler.call(t.app, timeout, socket as unknown as Duplex);
    expect(socket.written).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(socket.written).toContain('{"success":false,"error":{"code":"REQUEST_TIMEOUT"');
    expect(socket.destroyed).toBe(true);
  });
});
