/** The outbound client: budgets, timeouts, retries with backoff, Retry-After, and error mapping. */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/infra/clock";
import { VenueError } from "../../src/venues/errors";
import { TokenBucket, VenueHttp } from "../../src/venues/http";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
let handler: Handler = (_req, res) => res.end("{}");
let server: http.Server;
let baseUrl: string;
const seen: Array<{ method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function client(overrides: Partial<ConstructorParameters<typeof VenueHttp>[0]> = {}) {
  const sleeps: number[] = [];
  const venueHttp = new VenueHttp({
    venue: "kalshi",
    baseUrl,
    rateLimit: { requests: 1000, windowMs: 1000 },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 1,
    describeError: (body) => {
      const error = (body as { error?: { code?: string; message?: string } })?.error;
      return {
        ...(error?.message ? { message: error.message } : {}),
        ...(error?.code ? { code: error.code } : {}),
      };
    },
    ...overrides,
  });
  return { venueHttp, sleeps };
}

describe("VenueHttp", () => {
  it("sends query, JSON body and signed headers, and parses JSON", async () => {
    seen.length = 0;
    handler = (_req, res) => res.end('{"ok":true}');
    const { venueHttp } = client();
    const response = await venueHttp.request("POST", "/trade-api/v2/orders", {
      query: { limit: 5, cursor: undefined, status: "open" },
      body: { count: "1.00" },
      sign: ({ method, path, body }) => ({ "x-sig": `${method} ${path} ${body}` }),
    });
    expect(response.body).toEqual({ ok: true });
    expect(seen[0]).toMatchObject({
      method: "POST",
      url: "/trade-api/v2/orders?limit=5&status=open",
      body: '{"count":"1.00"}',
    });
    expect(seen[0]!.headers["x-sig"]).toBe('POST /trade-api/v2/orders {"count":"1.00"}');
  });

  it("retries a 429 no sooner than Retry-After, then succeeds", async () => {
    let calls = 0;
    handler = (_req, res) => {
      calls++;
      if (calls === 1) {
        res
          .writeHead(429, { "retry-after": "3", "content-type": "application/json" })
          .end('{"error":{"code":"too_many"}}');
      } else res.end('{"n":2}');
    };
    const { venueHttp, sleeps } = client();
    expect((await venueHttp.request("GET", "/x")).body).toEqual({ n: 2 });
    expect(sleeps).toEqual([3000]);
  });

  it("retries 5xx on reads with growing backoff and gives up with an unavailable error", async () => {
    handler = (_req, res) => res.writeHead(503).end("down");
    const { venueHttp, sleeps } = client({ maxRetries: 3, backoffBaseMs: 100 });
    const error = await venueHttp.request("GET", "/x").catch((e) => e);
    expect(error).toBeInstanceOf(VenueError);
    expect(error).toMatchObject({ kind: "unavailable", retryable: true });
    expect(sleeps).toEqual([100, 200, 400]);
  });

  it("does not retry a write after a 5xx (the venue may have acted)", async () => {
    let calls = 0;
    handler = (_req, res) => {
      calls++;
      res.writeHead(500).end();
    };
    const { venueHttp } = client();
    await expect(venueHttp.request("POST", "/orders", { body: {} })).rejects.toMatchObject({
      kind: "unavailable",
    });
    expect(calls).toBe(1);
  });

  it("keeps the venue's reason on a rejection and does not retry it", async () => {
    let calls = 0;
    handler = (_req, res) => {
      calls++;
      res
        .writeHead(400, { "content-type": "application/json" })
        .end('{"error":{"code":"invalid_price","message":"price must be a multiple of tick"}}');
    };
    const { venueHttp } = client();
    const error = (await venueHttp.request("GET", "/x").catch((e) => e)) as VenueError;
    expect(error.kind).toBe("rejected");
    expect(error.retryable).toBe(false);
    expect(error.details).toMatchObject({
      status: 400,
      venueCode: "invalid_price",
      venueMessage: "price must be a multiple of tick",
    });
    expect(calls).toBe(1);
  });

  it("maps auth failures and not-found", async () => {
    handler = (req, res) => res.writeHead(req.url === "/a" ? 401 : 404).end();
    const { venueHttp } = client();
    await expect(venueHttp.request("GET", "/a")).rejects.toMatchObject({
      kind: "auth_failed",
      retryable: false,
    });
    await expect(venueHttp.request("GET", "/b")).rejects.toMatchObject({ kind: "not_found" });
  });

  it("times out a slow venue", async () => {
    handler = (_req, res) => setTimeout(() => res.end("{}"), 500);
    const { venueHttp } = client({ timeoutMs: 50, maxRetries: 0 });
    await expect(venueHttp.request("GET", "/slow")).rejects.toMatchObject({
      kind: "timeout",
      retryable: true,
    });
  });

  it("reports garbage as a bad response", async () => {
    handler = (_req, res) => res.end("<html>oops</html>");
    const { venueHttp } = client();
    await expect(venueHttp.request("GET", "/x")).rejects.toMatchObject({ kind: "bad_response" });
  });

  it("reports a refused connection as unavailable", async () => {
    // A port that was free a moment ago: nothing listens there now.
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const { venueHttp } = client({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 });
    await expect(venueHttp.request("GET", "/x")).rejects.toMatchObject({
      kind: "unavailable",
      message: expect.stringContaining("ECONNREFUSED"),
    });
  });
});

describe("TokenBucket", () => {
  it("lets a burst through, then spaces requests at the refill rate", async () => {
    const clock = new ManualClock(0);
    const waits: number[] = [];
    const bucket = new TokenBucket({ requests: 2, windowMs: 1000 }, clock, async (ms) => {
      waits.push(ms);
      clock.advance(ms);
    });
    await bucket.take();
    await bucket.take();
    expect(waits).toEqual([]);
    await bucket.take();
    expect(waits).toEqual([500]);
  });
});
