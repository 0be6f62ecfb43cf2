/**
 * Shared helpers for the fake Kalshi tests: an RSA key pair, a signing fetch that follows
 * VENUES.md §2.5 (timestamp ms + METHOD + path without query, RSA-PSS SHA-256, digest-length salt),
 * a WebSocket client that queues messages, and a generated world big enough to need several pages.
 */
import { constants, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import WebSocket from "ws";
import type { SeedMarket } from "../src/world/seed";

export interface TestKey {
  keyId: string;
  privateKey: KeyObject;
  publicKeyPem: string;
}

export function makeKey(keyId: string): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { keyId, privateKey, publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString() };
}

export function signHeaders(
  key: TestKey,
  method: string,
  path: string,
  tsMs = Date.now(),
): Record<string, string> {
  const signature = sign("sha256", Buffer.from(`${tsMs}${method}${path}`), {
    key: key.privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
  }).toString("base64");
  return {
    "KALSHI-ACCESS-KEY": key.keyId,
    "KALSHI-ACCESS-SIGNATURE": signature,
    "KALSHI-ACCESS-TIMESTAMP": String(tsMs),
  };
}

/** Wire JSON as tests inspect it: shapes are asserted, not assumed. */
// biome-ignore lint/suspicious/noExplicitAny: the fakes' responses are checked field by field in each test.
export type Wire = any;

export interface Res {
  status: number;
  headers: Headers;
  body: Wire;
}

/** Plain or signed call against `apiUrl`; `path` is relative to the API base and may carry a query. */
export async function call(
  apiUrl: string,
  method: string,
  path: string,
  options: { key?: TestKey; body?: unknown; tsMs?: number } = {},
): Promise<Res> {
  const url = new URL(apiUrl + path);
  const headers: Record<string, string> = {};
  if (options.key) Object.assign(headers, signHeaders(options.key, method, url.pathname, options.tsMs));
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, {
    method,
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // left as text
  }
  return { status: res.status, headers: res.headers, body };
}

/** A WebSocket client that buffers every message and waits for ones matching a predicate. */
export class WsClient {
  readonly messages: Wire[] = [];
  private waiters: { pred: (m: Wire) => boolean; resolve: (m: Wire) => void }[] = [];
  closed = false;
  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const m = JSON.parse(data.toString());
      this.messages.push(m);
      this.waiters = this.waiters.filter((w) => {
        if (!w.pred(m)) return true;
        w.resolve(m);
        return false;
      });
    });
    ws.on("close", () => {
      this.closed = true;
    });
  }

  static open(wsUrl: string, key?: TestKey): Promise<WsClient> {
    const headers = key ? signHeaders(key, "GET", new URL(wsUrl).pathname) : {};
    const ws = new WebSocket(wsUrl, { headers });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new WsClient(ws)));
      ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once("error", reject);
    });
  }

  send(cmd: unknown): void {
    this.ws.send(JSON.stringify(cmd));
  }

  /** Resolves with the first message (already received or future) matching `pred`. */
  next(pred: (m: Wire) => boolean, timeoutMs = 3000): Promise<Wire> {
    const seen = this.messages.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("timed out waiting for a WS message")), timeoutMs);
      this.waiters.push({
        pred,
        resolve: (m) => {
          clearTimeout(t);
          resolve(m);
        },
      });
    });
  }

  /** Waits until `n` messages match. */
  async count(pred: (m: Wire) => boolean, n: number, timeoutMs = 3000): Promise<Wire[]> {
    const start = Date.now();
    while (Date.now() - start < timeoutMs) {
      const found = this.messages.filter(pred);
      if (found.length >= n) return found;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`timed out waiting for ${n} WS messages`);
  }

  close(): void {
    this.ws.close();
  }
}

/** `n` open Kalshi markets across `n / 2` events, for pagination tests. */
export function bigWorld(n: number): SeedMarket[] {
  return Array.from({ length: n }, (_, i) => ({
    venue: "kalshi" as const,
    key: `KXTEST-${String(Math.floor(i / 2)).padStart(3, "0")}-M${i}`,
    eventKey: `KXTEST-${String(Math.floor(i / 2)).padStart(3, "0")}`,
    eventTitle: `Generated event ${Math.floor(i / 2)}`,
    category: "economics" as const,
    question: `Generated market ${i}?`,
    rules: `Resolves Yes if generated condition ${i} holds.`,
    settlementSource: "Generator",
    closeTime: "2027-03-01T00:00:00Z",
    yesPrice: 0.2 + (i % 60) / 100,
    tickSize: 0.01 as const,
  }));
}
