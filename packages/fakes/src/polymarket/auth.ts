/**
 * Polymarket's two auth levels, verified the way the venue does. L1: an EIP-712 `ClobAuth`
 * signature by the wallet, used only to create or derive API credentials. L2: HMAC-SHA256 over
 * `timestamp + METHOD + path + body` with the API secret, on every trading and account call.
 * Wire format: VENUES.md §1.5.
 */
import { createHmac } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { getAddress, isAddress, recoverTypedDataAddress } from "viem";
import { sha256Hex, uuidFrom } from "./units";

export const CLOB_AUTH_MESSAGE = "This message attests that I control the given wallet";
export const L2_UNAUTHORIZED = "Unauthorized/Invalid api key";
export const L1_INVALID = "Invalid L1 Request headers";

export const CLOB_AUTH_TYPES = {
  ClobAuth: [
    { name: "address", type: "address" },
    { name: "timestamp", type: "string" },
    { name: "nonce", type: "uint256" },
    { name: "message", type: "string" },
  ],
} as const;

export interface ApiCreds {
  apiKey: string;
  secret: string;
  passphrase: string;
}

export interface ApiKeyRecord extends ApiCreds {
  /** Checksummed signer (EOA) address. */
  address: `0x${string}`;
  nonce: string;
}

export interface AuthOptions {
  chainId: number;
  /** Max |now − POLY_TIMESTAMP| in seconds, for L1 and L2 alike. */
  windowSeconds: number;
  seed: number;
  /** Clock in unix ms. */
  now: () => number;
}

/** base64url HMAC-SHA256 with "=" padding kept (VENUES.md §1.5). */
export function hmacSignature(secret: string, message: string): string {
  const key = Buffer.from(secret.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  return createHmac("sha256", key).update(message).digest("base64").replace(/\+/g, "-").replace(/\//g, "_");
}

export class ApiKeyStore {
  readonly byKey = new Map<string, ApiKeyRecord>();
  private counter = 0;
  constructor(private readonly seed: number) {}

  find(address: string, nonce: string): ApiKeyRecord | undefined {
    const a = address.toLowerCase();
    for (const r of this.byKey.values()) if (r.address.toLowerCase() === a && r.nonce === nonce) return r;
    return undefined;
  }

  create(address: `0x${string}`, nonce: string): ApiKeyRecord {
    this.counter += 1;
    const basis = `${this.seed}:apikey:${address.toLowerCase()}:${nonce}:${this.counter}`;
    const rec: ApiKeyRecord = {
      apiKey: uuidFrom(basis),
      secret: Buffer.from(sha256Hex(`${basis}:secret`), "hex")
        .toString("base64")
        .replace(/\+/g, "-")
        .replace(/\//g, "_"),
      passphrase: sha256Hex(`${basis}:passphrase`),
      address,
      nonce,
    };
    this.byKey.set(rec.apiKey, rec);
    return rec;
  }

  delete(apiKey: string): void {
    this.byKey.delete(apiKey);
  }
}

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

function fresh(ts: string | undefined, opts: AuthOptions): boolean {
  if (!ts || !/^\d+$/.test(ts)) return false;
  return Math.abs(Math.floor(opts.now() / 1000) - Number(ts)) <= opts.windowSeconds;
}

/** L1: recover the `ClobAuth` signer and require it to be POLY_ADDRESS. */
export async function verifyL1(
  req: FastifyRequest,
  opts: AuthOptions,
): Promise<{ address: `0x${string}`; nonce: string } | null> {
  const address = header(req, "POLY_ADDRESS");
  const signature = header(req, "POLY_SIGNATURE");
  const timestamp = header(req, "POLY_TIMESTAMP");
  const nonce = header(req, "POLY_NONCE") ?? "0";
  if (!address || !isAddress(address) || !signature || !/^0x[0-9a-fA-F]+$/.test(signature)) return null;
  if (!fresh(timestamp, opts) || !/^\d+$/.test(nonce)) return null;
  try {
    const recovered = await recoverTypedDataAddress({
      domain: { name: "ClobAuthDomain", version: "1", chainId: opts.chainId },
      types: CLOB_AUTH_TYPES,
      primaryType: "ClobAuth",
      message: { address, timestamp: timestamp!, nonce: BigInt(nonce), message: CLOB_AUTH_MESSAGE },
      signature: signature as `0x${string}`,
    });
    if (recovered.toLowerCase() !== address.toLowerCase()) return null;
    return { address: getAddress(address), nonce };
  } catch {
    return null;
  }
}

/**
 * L2: the API key must exist, its passphrase and address must match, the timestamp must be fresh,
 * and the HMAC must cover `timestamp + METHOD + path (no query) + raw body`.
 */
export function verifyL2(
  req: FastifyRequest,
  keys: ApiKeyStore,
  opts: AuthOptions,
  path: string,
  rawBody: string,
): ApiKeyRecord | null {
  const apiKey = header(req, "POLY_API_KEY");
  const rec = apiKey ? keys.byKey.get(apiKey) : undefined;
  if (!rec) return null;
  if (header(req, "POLY_PASSPHRASE") !== rec.passphrase) return null;
  if (header(req, "POLY_ADDRESS")?.toLowerCase() !== rec.address.toLowerCase()) return null;
  const ts = header(req, "POLY_TIMESTAMP");
  if (!fresh(ts, opts)) return null;
  const given = header(req, "POLY_SIGNATURE");
  if (!given) return null;
  const expected = hmacSignature(rec.secret, `${ts}${req.method}${path}${rawBody}`);
  const norm = (s: string) => s.replace(/\+/g, "-").replace(/\//g, "_");
  return norm(given) === expected ? rec : null;
}

/** The request path the client signed: the URL path without the query string. */
export function signedPath(req: FastifyRequest): string {
  return req.url.split("?")[0] ?? "/";
}

export function rawBodyOf(req: FastifyRequest): string {
  return (req as FastifyRequest & { rawBody?: string }).rawBody ?? "";
}

/** Resolve L2 credentials or answer 401 with the venue's body. */
export function requireL2(
  req: FastifyRequest,
  reply: FastifyReply,
  keys: ApiKeyStore,
  opts: AuthOptions,
): ApiKeyRecord | null {
  const rec = verifyL2(req, keys, opts, signedPath(req), rawBodyOf(req));
  if (!rec) void reply.code(401).send({ error: L2_UNAUTHORIZED });
  return rec;
}

const credsOf = (r: ApiKeyRecord): ApiCreds => ({
  apiKey: r.apiKey,
  secret: r.secret,
  passphrase: r.passphrase,
});

export async function authRoutes(
  app: FastifyInstance,
  ctx: { keys: ApiKeyStore; auth: AuthOptions },
): Promise<void> {
  const { keys, auth } = ctx;

  app.post("/auth/api-key", async (req, reply) => {
    const who = await verifyL1(req, auth);
    if (!who) return reply.code(401).send({ error: L1_INVALID });
    if (keys.find(who.address, who.nonce)) return reply.code(400).send({ error: "Could not create api key" });
    return credsOf(keys.create(who.address, who.nonce));
  });

  app.get("/auth/derive-api-key", async (req, reply) => {
    const who = await verifyL1(req, auth);
    if (!who) return reply.code(401).send({ error: L1_INVALID });
    const rec = keys.find(who.address, who.nonce);
    if (!rec) return reply.code(400).send({ error: "Could not derive api key!" });
    return credsOf(rec);
  });

  app.get("/auth/api-keys", async (req, reply) => {
    const rec = requireL2(req, reply, keys, auth);
    if (!rec) return reply;
    const mine = [...keys.byKey.values()].filter((r) => r.address === rec.address).map((r) => r.apiKey);
    return { apiKeys: mine };
  });

  app.delete("/auth/api-key", async (req, reply) => {
    const rec = requireL2(req, reply, keys, auth);
    if (!rec) return reply;
    keys.delete(rec.apiKey);
    return "OK";
  });
}
