/**
 * Client-side helpers for the fake Polymarket tests: L1/L2 header builders and a CLOB V2 order
 * signer written from VENUES.md §1.5–1.6 with viem, independent of the fake's own verifier code.
 */
import { createHmac } from "node:crypto";
import { concat, domainSeparator, hashStruct, numberToHex, type PrivateKeyAccount, stringToHex } from "viem";
import WebSocket from "ws";

/** Wire payloads in tests are explored field by field; the fake's own code is fully typed. */
// biome-ignore lint/suspicious/noExplicitAny: test-side view of arbitrary JSON payloads
export type Json = any;

export const HARDHAT0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80" as const;
export const HARDHAT1 = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" as const;

export interface Creds {
  apiKey: string;
  secret: string;
  passphrase: string;
}

export const nowS = () => Math.floor(Date.now() / 1000);

export async function l1Headers(
  account: PrivateKeyAccount,
  opts: { chainId?: number; ts?: number; nonce?: number } = {},
) {
  const ts = String(opts.ts ?? nowS());
  const nonce = opts.nonce ?? 0;
  const signature = await account.signTypedData({
    domain: { name: "ClobAuthDomain", version: "1", chainId: opts.chainId ?? 137 },
    types: {
      ClobAuth: [
        { name: "address", type: "address" },
        { name: "timestamp", type: "string" },
        { name: "nonce", type: "uint256" },
        { name: "message", type: "string" },
      ],
    },
    primaryType: "ClobAuth",
    message: {
      address: account.address,
      timestamp: ts,
      nonce: BigInt(nonce),
      message: "This message attests that I control the given wallet",
    },
  });
  return {
    POLY_ADDRESS: account.address,
    POLY_SIGNATURE: signature,
    POLY_TIMESTAMP: ts,
    POLY_NONCE: String(nonce),
  };
}

export function hmac(secret: string, message: string): string {
  const key = Buffer.from(secret, "base64");
  return createHmac("sha256", key).update(message).digest("base64").replace(/\+/g, "-").replace(/\//g, "_");
}

export function l2Headers(
  creds: Creds,
  address: string,
  method: string,
  path: string,
  body = "",
  ts = nowS(),
) {
  return {
    POLY_ADDRESS: address,
    POLY_SIGNATURE: hmac(creds.secret, `${ts}${method}${path}${body}`),
    POLY_TIMESTAMP: String(ts),
    POLY_API_KEY: creds.apiKey,
    POLY_PASSPHRASE: creds.passphrase,
  };
}

export async function createCreds(clobUrl: string, account: PrivateKeyAccount): Promise<Creds> {
  const res = await fetch(`${clobUrl}/auth/api-key`, { method: "POST", headers: await l1Headers(account) });
  if (res.status !== 200) throw new Error(`create api key: ${res.status} ${await res.text()}`);
  return (await res.json()) as Creds;
}

/** An L2-signed request; `path` may carry a query string (it is not signed). */
export async function l2Fetch(
  clobUrl: string,
  creds: Creds,
  address: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Json; headers: Headers }> {
  const text = body === undefined ? "" : JSON.stringify(body);
  const headers: Record<string, string> = l2Headers(creds, address, method, path.split("?")[0]!, text);
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${clobUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: text }),
  });
  const raw = await res.text();
  let json: Json = raw;
  try {
    json = JSON.parse(raw);
  } catch {}
  return { status: res.status, json, headers: res.headers };
}

const EXCHANGES = {
  v2: "0xE111180000d2663C0091e4f400237545B87B996B",
  v2neg: "0xe2222d279d744050d28e00520010520000310F59",
  v3: "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa",
} as const;

export const ZERO32 = `0x${"0".repeat(64)}` as const;

export interface OrderSpec {
  tokenId: string;
  side: "BUY" | "SELL";
  /** Raw 6-decimal amounts. */
  makerAmount: bigint;
  takerAmount: bigint;
  negRisk?: boolean;
  version?: 2 | 3;
  chainId?: number;
  maker?: `0x${string}`;
  /** 3: a deposit wallet's order (maker = signer = `maker`), signed by its owner with ERC-7739 wrapping. */
  signatureType?: 0 | 1 | 2 | 3;
  salt?: number;
  expiration?: string;
  /** Overrides the exchange address (another chain's contracts). */
  verifyingContract?: `0x${string}`;
}

/** Amounts of a limit order: BUY pays size·price pUSD for size shares; SELL the reverse. */
export function limitAmounts(side: "BUY" | "SELL", price: number, size: number) {
  const shares = BigInt(Math.round(size * 1e6));
  const cash = BigInt(Math.round(size * price * 1e6));
  return side === "BUY"
    ? { makerAmount: cash, takerAmount: shares }
    : { makerAmount: shares, takerAmount: cash };
}

let saltCounter = 1000;

export async function signOrder(account: PrivateKeyAccount, spec: OrderSpec) {
  const version = spec.version ?? 2;
  const verifyingContract =
    spec.verifyingContract ?? (version === 3 ? EXCHANGES.v3 : spec.negRisk ? EXCHANGES.v2neg : EXCHANGES.v2);
  saltCounter += 1;
  const deposit = spec.signatureType === 3;
  const order = {
    salt: spec.salt ?? saltCounter,
    maker: spec.maker ?? account.address,
    signer: deposit && spec.maker ? spec.maker : account.address,
    tokenId: spec.tokenId,
    makerAmount: spec.makerAmount.toString(),
    takerAmount: spec.takerAmount.toString(),
    side: spec.side,
    signatureType: spec.signatureType ?? 0,
    timestamp: String(Date.now()),
    expiration: spec.expiration ?? "0",
    metadata: ZERO32,
    builder: ZERO32,
  };
  const domain = {
    name: "Polymarket CTF Exchange",
    version: String(version),
    chainId: spec.chainId ?? 137,
    verifyingContract,
  } as const;
  const message = {
    salt: BigInt(order.salt),
    maker: order.maker,
    signer: order.signer,
    tokenId: BigInt(order.tokenId),
    makerAmount: spec.makerAmount,
    takerAmount: spec.takerAmount,
    side: spec.side === "BUY" ? 0 : 1,
    signatureType: order.signatureType,
    timestamp: BigInt(order.timestamp),
    metadata: ZERO32,
    builder: ZERO32,
  };
  if (!deposit) {
    const signature = await account.signTypedData({
      domain,
      types: { Order: ORDER_FIELDS },
      primaryType: "Order",
      message,
    });
    return { ...order, signature };
  }
  // ERC-7739: the owner signs TypedDataSign{contents: order, the wallet's own domain fields} under
  // the exchange's domain; the wallet gets the pieces to rebuild both hashes.
  const inner = await account.signTypedData({
    domain,
    types: {
      TypedDataSign: [
        { name: "contents", type: "Order" },
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
        { name: "verifyingContract", type: "address" },
        { name: "salt", type: "bytes32" },
      ],
      Order: ORDER_FIELDS,
    },
    primaryType: "TypedDataSign",
    message: {
      contents: message,
      name: "DepositWallet",
      version: "1",
      chainId: BigInt(domain.chainId),
      verifyingContract: order.signer,
      salt: ZERO32,
    },
  });
  const typeString = `Order(${ORDER_FIELDS.map((f) => `${f.type} ${f.name}`).join(",")})`;
  const signature = concat([
    inner,
    domainSeparator({ domain }),
    hashStruct({ data: message, primaryType: "Order", types: { Order: ORDER_FIELDS } }),
    stringToHex(typeString),
    numberToHex(typeString.length, { size: 2 }),
  ]);
  return { ...order, signature };
}

const ORDER_FIELDS = [
  { name: "salt", type: "uint256" },
  { name: "maker", type: "address" },
  { name: "signer", type: "address" },
  { name: "tokenId", type: "uint256" },
  { name: "makerAmount", type: "uint256" },
  { name: "takerAmount", type: "uint256" },
  { name: "side", type: "uint8" },
  { name: "signatureType", type: "uint8" },
  { name: "timestamp", type: "uint256" },
  { name: "metadata", type: "bytes32" },
  { name: "builder", type: "bytes32" },
] as const;

/** A WebSocket that queues every parsed message so tests can wait for a matching one. */
export class WsProbe {
  readonly messages: Json[] = [];
  readonly raw: string[] = [];
  private waiters: { pred: (m: Json) => boolean; resolve: (m: Json) => void }[] = [];
  readonly ws: WebSocket;
  closed = false;

  private constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on("message", (data) => {
      const text = data.toString();
      this.raw.push(text);
      let parsed: Json;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
        this.messages.push(m);
        for (const w of [...this.waiters])
          if (w.pred(m)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(m);
          }
      }
    });
    this.ws.on("close", () => {
      this.closed = true;
    });
  }

  static async open(url: string): Promise<WsProbe> {
    const p = new WsProbe(url);
    await new Promise<void>((resolve, reject) => {
      p.ws.once("open", () => resolve());
      p.ws.once("error", reject);
    });
    return p;
  }

  /** Forget what arrived so far (to wait for the next update only). */
  clear() {
    this.messages.length = 0;
  }

  send(msg: unknown) {
    this.ws.send(typeof msg === "string" ? msg : JSON.stringify(msg));
  }

  next(pred: (m: Json) => boolean, timeoutMs = 3000): Promise<Json> {
    const found = this.messages.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timed out waiting for a WS message")), timeoutMs);
      this.waiters.push({
        pred,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });
  }

  waitClosed(timeoutMs = 3000): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("socket did not close")), timeoutMs);
      this.ws.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  close() {
    this.ws.close();
  }
}
