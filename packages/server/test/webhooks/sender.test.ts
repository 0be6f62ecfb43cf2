/**
 * One delivery attempt against real local HTTPS servers. Certificates come from a CA made in the
 * test; the URL host is `receiver.test` (reserved, never in real DNS) and the guard's lookup is
 * injected, so reaching a server at all proves the sender connected to the checked address with no
 * DNS lookup of its own, while SNI and certificate checks still used the URL's hostname.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { generate } from "selfsigned";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  closeWebhookAgents,
  parseRetryAfter,
  sendWebhook,
  withoutAddresses,
} from "../../src/webhooks/sender";
import { deliveryHeaders } from "../../src/webhooks/signing";
import type { LookupFn, ResolvedAddress } from "../../src/webhooks/ssrf";

const SENDER_PATH = fileURLToPath(new URL("../../src/webhooks/sender.ts", import.meta.url));
const SERVER_PACKAGE = fileURLToPath(new URL("../..", import.meta.url));

type Pem = { key: string; cert: string };
let ca: Pem;
let receiverCert: Pem; // receiver.test, signed by ca
let otherNameCert: Pem; // other.test, signed by ca
let rogueCert: Pem; // receiver.test, self-signed: not trusted

async function leaf(name: string, signer?: Pem): Promise<Pem> {
  const pems = await generate([{ name: "commonName", value: name }], {
    keyType: "ec",
    algorithm: "sha256",
    ...(signer ? { ca: signer } : {}),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: [{ type: 2, value: name }] },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

beforeAll(async () => {
  const pems = await generate([{ name: "commonName", value: "crossbook webhooks test CA" }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  ca = { key: pems.private, cert: pems.cert };
  [receiverCert, otherNameCert, rogueCert] = await Promise.all([
    leaf("receiver.test", ca),
    leaf("other.test", ca),
    leaf("receiver.test"),
  ]);
});

type Seen = {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  servername: string | false;
};
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type TestServer = { port: number; requests: Seen[]; connections: () => number; close: () => Promise<void> };

const servers: TestServer[] = [];

async function startServer(
  handler: Handler,
  options: { pem?: Pem; host?: string; port?: number } = {},
): Promise<TestServer> {
  const pem = options.pem ?? receiverCert;
  const requests: Seen[] = [];
  let connections = 0;
  const server: Server = createServer({ key: pem.key, cert: pem.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const socket = req.socket as IncomingMessage["socket"] & { servername?: string | false };
      requests.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        servername: socket.servername ?? false,
      });
      handler(req, res);
    });
  });
  server.on("secureConnection", () => {
    connections += 1;
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const testServer: TestServer = {
    port: (server.address() as AddressInfo).port,
    requests,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(testServer);
  return testServer;
}

afterEach(async () => {
  await closeWebhookAgents();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

afterAll(closeWebhookAgents);

function pinTo(...addresses: string[]): LookupFn & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(lookup, { calls });
}

const BODY = '{"id":"whd_01","type":"order.filled","timestamp":"2026-01-01T00:00:00.000Z","data":{}}';
const HEADERS = deliveryHeaders({
  secret: "my-webhook-secret",
  deliveryId: "whd_01",
  eventType: "order.filled",
  timestampSeconds: 1_767_225_600,
  rawBody: BODY,
});

function send(port: number, overrides: Partial<Parameters<typeof sendWebhook>[0]> = {}) {
  return sendWebhook({
    url: `https://receiver.test:${port}/hooks/in?src=cb`,
    headers: HEADERS,
    body: BODY,
    allowPrivate: true,
    lookup: pinTo("127.0.0.1"),
    ca: ca.cert,
    ...overrides,
  });
}

const answer =
  (status: number, headers: Record<string, string> = {}, body = ""): Handler =>
  (_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  };

describe("sendWebhook", () => {
  it("delivers to the checked address with SNI and Host of the URL, and reports a 2xx as ok", async () => {
    const server = await startServer(answer(204));
    const lookup = pinTo("127.0.0.1");
    const result = await send(server.port, { lookup });

    expect(result).toEqual({
      ok: true,
      status: 204,
      responseTimeMs: expect.any(Number),
      error: null,
      retryAfterSeconds: null,
    });
    expect(Number.isInteger(result.responseTimeMs)).toBe(true);
    expect(lookup.calls).toEqual(["receiver.test"]);
    expect(server.requests).toHaveLength(1);
    const seen = server.requests[0]!;
    expect(seen.method).toBe("POST");
    expect(seen.url).toBe("/hooks/in?src=cb");
    expect(seen.servername).toBe("receiver.test");
    expect(seen.headers.host).toBe(`receiver.test:${server.port}`);
  });

  it("sends exactly the given headers and body, plus only the transport headers", async () => {
    const server = await startServer(answer(200));
    await send(server.port);
    const seen = server.requests[0]!;
    expect(seen.body).toBe(BODY);
    for (const [name, value] of Object.entries(HEADERS)) expect(seen.headers[name], name).toBe(value);
    const transport = ["host", "connection", "content-length"];
    expect(Object.keys(seen.headers).sort()).toEqual([...Object.keys(HEADERS), ...transport].sort());
    expect(seen.headers["content-length"]).toBe(String(Buffer.byteLength(BODY)));
  });

  it("reports a 500 as a failure with its status", async () => {
    const server = await startServer(answer(500, {}, "boom"));
    const result = await send(server.port);
    expect(result).toMatchObject({ ok: false, status: 500, error: "HTTP 500", retryAfterSeconds: null });
  });

  it("does not follow a redirect: a 302 is a failure and the target gets no request", async () => {
    const target = await startServer(answer(200));
    const location = `https://receiver.test:${target.port}/elsewhere`;
    const server = await startServer(answer(302, { location }));
    const result = await send(server.port);
    expect(result).toMatchObject({ ok: false, status: 302, error: `redirect to ${location} not followed` });
    expect(server.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });

  it("times out a receiver that never answers", async () => {
    const server = await startServer(() => {});
    const result = await send(server.port, { timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, status: null, error: "timeout after 300 ms", timedOut: true });
    expect(result.responseTimeMs).toBeGreaterThanOrEqual(290);
    expect(server.requests).toHaveLength(1);
  });

  it("times out a receiver that sends a 200 but never finishes the body", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial");
    });
    const result = await send(server.port, { timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, status: 200, error: "timeout after 300 ms", timedOut: true });
  });

  it("reads a large answer only up to its limit and still reports the 2xx", async () => {
    const server = await startServer(answer(200, {}, "x".repeat(4 * 1024 * 1024)));
    const result = await send(server.port);
    expect(result).toMatchObject({ ok: true, status: 200, error: null });
  });

  it("refuses a certificate from an untrusted issuer, sending nothing", async () => {
    const server = await startServer(answer(200), { pem: rogueCert });
    const result = await send(server.port);
    expect(result).toMatchObject({ ok: false, status: null, error: expect.stringMatching(/^TLS error: /) });
    expect(server.requests).toHaveLength(0);
  });

  it("refuses a trusted certificate issued for another host name", async () => {
    const server = await startServer(answer(200), { pem: otherNameCert });
    const result = await send(server.port);
    expect(result).toMatchObject({
      ok: false,
      status: null,
      error: "TLS error: certificate is not valid for receiver.test",
    });
    expect(server.requests).toHaveLength(0);
  });

  it("refuses plain HTTP on the other end with a short TLS error", async () => {
    const plain = createHttpServer((_req, res) => res.end("ok"));
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", () => resolve()));
    try {
      const result = await send((plain.address() as AddressInfo).port);
      expect(result).toMatchObject({ ok: false, status: null, error: expect.stringMatching(/^TLS error: /) });
    } finally {
      plain.closeAllConnections();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });

  it("reports a refused connection", async () => {
    const server = await startServer(answer(200));
    const port = server.port;
    await server.close();
    const result = await send(port);
    expect(result).toMatchObject({ ok: false, status: null, error: "connection refused" });
  });

  it("passes on Retry-After of a 429 (seconds) and a 503 (HTTP date)", async () => {
    const limited = await startServer(answer(429, { "retry-after": "120" }));
    expect(await send(limited.port)).toMatchObject({ ok: false, status: 429, retryAfterSeconds: 120 });

    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 90_000).toUTCString();
    const unavailable = await startServer(answer(503, { "retry-after": at }));
    const result = await send(unavailable.port);
    expect(result).toMatchObject({ ok: false, status: 503 });
    expect(result.retryAfterSeconds).toBeGreaterThanOrEqual(85);
    expect(result.retryAfterSeconds).toBeLessThanOrEqual(91);

    const other = await startServer(answer(500, { "retry-after": "120" }));
    expect(await send(other.port)).toMatchObject({ status: 500, retryAfterSeconds: null });
  });

  it("runs the SSRF guard on every attempt and sends nothing to a refused address", async () => {
    const server = await startServer(answer(200));
    const lookup = pinTo("127.0.0.1");
    const result = await send(server.port, { allowPrivate: false, lookup });
    expect(result).toMatchObject({
      ok: false,
      status: null,
      error:
        "refused by SSRF guard: receiver.test resolves to a private or reserved address; webhooks may only reach public addresses (a self-hosted server can allow others with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true)",
    });
    expect(lookup.calls).toEqual(["receiver.test"]);
    expect(server.requests).toHaveLength(0);

    const http = await send(server.port, { url: `http://receiver.test:${server.port}/` });
    expect(http).toMatchObject({ ok: false, error: expect.stringMatching(/https/) });
  });

  it("judges an IP-literal URL on every attempt, under that attempt's allowPrivate", async () => {
    const server = await startServer(answer(200));
    const url = `https://127.0.0.1:${server.port}/hooks/in`;
    const refused = {
      ok: false,
      status: null,
      error: expect.stringMatching(/^refused by SSRF guard: 127\.0\.0\.1/),
    };
    expect(await send(server.port, { url, allowPrivate: false })).toMatchObject(refused);
    // Allowed, it connects (the certificate is for receiver.test, so TLS then refuses the IP).
    expect(await send(server.port, { url, allowPrivate: true })).toMatchObject({
      ok: false,
      error: "TLS error: certificate is not valid for 127.0.0.1",
    });
    expect(await send(server.port, { url, allowPrivate: false })).toMatchObject(refused);
    expect(server.requests).toHaveLength(0);
  });

  it("reuses the connection for the same host and checked address", async () => {
    const server = await startServer(answer(200));
    expect((await send(server.port)).ok).toBe(true);
    // undici frees the connection for the next request one turn of the event loop after the body ends.
    await new Promise((resolve) => setImmediate(resolve));
    expect((await send(server.port)).ok).toBe(true);
    expect(server.requests).toHaveLength(2);
    expect(server.connections()).toBe(1);
  });

  it("follows the address checked now, not the one a pooled connection was pinned to", async () => {
    // DNS rebinding between attempts: same URL, the name now points elsewhere. Both are loopback
    // (127.0.0.2 is loopback on Linux) so the test needs no network.
    const first = await startServer(answer(200));
    const second = await startServer(answer(201), { host: "127.0.0.2", port: first.port });
    expect(await send(first.port, { lookup: pinTo("127.0.0.1") })).toMatchObject({ ok: true, status: 200 });
    expect(await send(first.port, { lookup: pinTo("127.0.0.2") })).toMatchObject({ ok: true, status: 201 });
    expect(first.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(1);
    expect(second.requests[0]!.servername).toBe("receiver.test");
  });

  it("tries the next checked address when one refuses the connection", async () => {
    const server = await startServer(answer(200));
    const lookup = pinTo("127.0.0.3", "127.0.0.1"); // nothing listens on 127.0.0.3
    expect(await send(server.port, { lookup })).toMatchObject({ ok: true, status: 200 });
    expect(server.requests).toHaveLength(1);
  });

  it("trusts a CA given by NODE_EXTRA_CA_CERTS (production path, no `ca` option)", async () => {
    const server = await startServer(answer(200));
    const dir = await mkdtemp(join(tmpdir(), "cb-webhook-ca-"));
    try {
      const caPath = join(dir, "ca.pem");
      await writeFile(caPath, ca.cert);
      const script = join(dir, "deliver.mts"); // .mts: ESM (top-level await) outside any package
      await writeFile(
        script,
        [
          `import { closeWebhookAgents, sendWebhook } from ${JSON.stringify(SENDER_PATH)};`,
          "const result = await sendWebhook({",
          `  url: "https://receiver.test:${server.port}/hooks/in",`,
          `  headers: { "content-type": "application/json" },`,
          `  body: "{}",`,
          "  allowPrivate: true,",
          `  lookup: async () => [{ address: "127.0.0.1", family: 4 }],`,
          "});",
          "await closeWebhookAgents();",
          "process.stdout.write(JSON.stringify(result));",
        ].join("\n"),
      );
      const run = async (extraCa: string | undefined) => {
        const env = { ...process.env };
        delete env.NODE_EXTRA_CA_CERTS;
        if (extraCa) env.NODE_EXTRA_CA_CERTS = extraCa;
        const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
          cwd: SERVER_PACKAGE,
          env,
          timeout: 15_000,
        });
        return JSON.parse(stdout) as { ok: boolean; status: number | null; error: string | null };
      };
      // Without the extra CA the same delivery fails: the test can tell the two apart.
      expect(await run(undefined)).toMatchObject({ ok: false, error: expect.stringMatching(/^TLS error: /) });
      expect(await run(caPath)).toMatchObject({ ok: true, status: 200, error: null });
      expect(server.requests).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("parseRetryAfter", () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);
  it("reads delay-seconds and HTTP dates, and ignores garbage", () => {
    expect(parseRetryAfter("120", now)).toBe(120);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter(["30", "60"], now)).toBe(30);
    expect(parseRetryAfter("Thu, 01 Jan 2026 12:02:00 GMT", now)).toBe(120);
    expect(parseRetryAfter("Thu, 01 Jan 2026 11:00:00 GMT", now)).toBe(0);
    for (const value of [undefined, "", "-5", "1.5", "soon", "99999999999999999999"]) {
      expect(parseRetryAfter(value, now), String(value)).toBeNull();
    }
  });
});

describe("withoutAddresses", () => {
  it("takes every IP address out of an error message, and nothing else", () => {
    expect(withoutAddresses("connect ECONNREFUSED 10.0.0.5:443")).toBe("connect ECONNREFUSED <address>");
    expect(withoutAddresses("attempted address: 10.0.0.5:443, timeout: 10000ms")).toBe(
      "attempted address: <address>, timeout: 10000ms",
    );
    expect(withoutAddresses("to [fd00::1]:8443 and fe80::1 or ::ffff:127.0.0.1.")).toBe(
      "to <address> and <address> or <address>",
    );
    expect(withoutAddresses("Error: socket hang up after 1.5 s (v1.2.3)")).toBe(
      "Error: socket hang up after 1.5 s (v1.2.3)",
    );
  });
});
