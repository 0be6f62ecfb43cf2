/**
 * Polymarket signing, kept free of I/O so it can be checked against known-answer vectors:
 * L1 EIP-712 `ClobAuth` (create/derive API keys), L2 HMAC-SHA256 request headers, and the CLOB V2
 * EIP-712 order (struct, domain, 6-decimal amounts). VENUES.md §1.5 and §1.6.
 */
import { createHmac } from "node:crypto";
import { type Hex, hashTypedData } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { MICROS, type Micros } from "../decimal";

// ---------------------------------------------------------------------------------------------
// L1 — VENUES.md §1.5 "L1 (wallet)"
// ---------------------------------------------------------------------------------------------

export const CLOB_AUTH_MESSAGE = "This message attests that I control the given wallet";
export const CLOB_AUTH_TYPES = {
  ClobAuth: [
    { name: "address", type: "address" },
    { name: "timestamp", type: "string" },
    { name: "nonce", type: "uint256" },
    { name: "message", type: "string" },
  ],
} as const;

export function clobAuthTypedData(address: Hex, timestampS: number, nonce: number, chainId: number) {
  return {
    domain: { name: "ClobAuthDomain", version: "1", chainId },
    types: CLOB_AUTH_TYPES,
    primaryType: "ClobAuth" as const,
    message: { address, timestamp: String(timestampS), nonce: BigInt(nonce), message: CLOB_AUTH_MESSAGE },
  };
}

/** Headers for `POST /auth/api-key` and `GET /auth/derive-api-key`. */
export async function l1Headers(
  privateKey: Hex,
  options: { timestampS: number; nonce?: number; chainId: number },
): Promise<Record<string, string>> {
  const account = privateKeyToAccount(privateKey);
  const nonce = options.nonce ?? 0;
  const signature = await account.signTypedData(
    clobAuthTypedData(account.address, options.timestampS, nonce, options.chainId),
  );
  return {
    POLY_ADDRESS: account.address,
    POLY_SIGNATURE: signature,
    POLY_TIMESTAMP: String(options.timestampS),
    POLY_NONCE: String(nonce),
  };
}

// ---------------------------------------------------------------------------------------------
// L2 — VENUES.md §1.5 "L2 (API key)"
// ---------------------------------------------------------------------------------------------

export interface ApiCredentials {
  apiKey: string;
  secret: string;
  passphrase: string;
}

/**
 * base64url(HMAC_SHA256(base64decode(secret), timestamp + METHOD + path + body)), "=" padding kept.
 * The secret arrives base64url; we accept standard base64 too.
 */
export function hmacSignature(
  secret: string,
  timestampS: number | string,
  method: string,
  requestPath: string,
  body = "",
): string {
  const key = Buffer.from(secret.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  const message = `${timestampS}${method}${requestPath}${body}`;
  return createHmac("sha256", key).update(message).digest("base64").replace(/\+/g, "-").replace(/\//g, "_");
}

/** The five L2 headers; `requestPath` is the path WITHOUT its query string. */
export function l2Headers(
  creds: ApiCredentials,
  address: string,
  request: { timestampS: number; method: string; requestPath: string; body: string },
): Record<string, string> {
  return {
    POLY_ADDRESS: address,
    POLY_SIGNATURE: hmacSignature(
      creds.secret,
      request.timestampS,
      request.method,
      request.requestPath,
      request.body,
    ),
    POLY_TIMESTAMP: String(request.timestampS),
    POLY_API_KEY: creds.apiKey,
    POLY_PASSPHRASE: creds.passphrase,
  };
}

// ---------------------------------------------------------------------------------------------
// CLOB V2 orders — VENUES.md §1.6
// ---------------------------------------------------------------------------------------------

/** Polygon (137) verifying contracts. */
export const EXCHANGES = {
  v2: "0xE111180000d2663C0091e4f400237545B87B996B",
  negRiskV2: "0xe2222d279d744050d28e00520010520000310F59",
  v3: "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa",
} as const satisfies Record<string, Hex>;

export const ZERO_BYTES32: Hex = `0x${"0".repeat(64)}`;

/** Field order matters: it is the EIP-712 type string `Order(uint256 salt,address maker,...)`. */
export const ORDER_TYPES = {
  Order: [
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
  ],
} as const;

export interface OrderDomain {
  name: "Polymarket CTF Exchange";
  version: string;
  chainId: number;
  verifyingContract: Hex;
}

/** Domain for exchange version `version` (from `GET /version`); V3 has no separate neg-risk exchange. */
export function orderDomain(version: number, negRisk: boolean, chainId = 137): OrderDomain {
  const verifyingContract = version >= 3 ? EXCHANGES.v3 : negRisk ? EXCHANGES.negRiskV2 : EXCHANGES.v2;
  return { name: "Polymarket CTF Exchange", version: String(version), chainId, verifyingContract };
}

export interface OrderStruct {
  salt: bigint;
  maker: Hex;
  signer: Hex;
  tokenId: bigint;
  makerAmount: bigint;
  takerAmount: bigint;
  /** 0 BUY, 1 SELL. */
  side: 0 | 1;
  signatureType: 0 | 1 | 2;
  /** ms since epoch. */
  timestamp: bigint;
  metadata: Hex;
  builder: Hex;
}

export function orderTypedData(order: OrderStruct, domain: OrderDomain) {
  return { domain, types: ORDER_TYPES, primaryType: "Order" as const, message: order };
}

export function orderHash(order: OrderStruct, domain: OrderDomain): Hex {
  return hashTypedData(orderTypedData(order, domain));
}

export async function signOrder(privateKey: Hex, order: OrderStruct, domain: OrderDomain): Promise<Hex> {
  return privateKeyToAccount(privateKey).signTypedData(orderTypedData(order, domain));
}

/** Per-tick rounding (price / size / amount decimals), VENUES.md §1.6 "Amounts". */
export const TICK_ROUNDING: Record<number, { price: number; size: number; amount: number }> = {
  100000: { price: 1, size: 2, amount: 3 },
  10000: { price: 2, size: 2, amount: 4 },
  5000: { price: 3, size: 2, amount: 5 },
  2500: { price: 4, size: 2, amount: 6 },
  1000: { price: 3, size: 2, amount: 5 },
  100: { price: 4, size: 2, amount: 6 },
};

export type AmountProblem =
  | { kind: "tick"; message: string }
  | { kind: "size"; message: string }
  | { kind: "min_size"; message: string };

/**
 * 6-decimal maker/taker amounts of a limit order (pUSD and shares are both 6-decimal, exactly our
 * micro-units). BUY: maker gives size·price pUSD, takes size shares; SELL: the reverse. Price must
 * sit on the tick within [tick, 1 − tick] and size on 2 decimals; we refuse rather than round so an
 * order never trades at a price or size the user did not ask for.
 */
export function orderAmounts(
  side: "buy" | "sell",
  price: Micros,
  size: Micros,
  market: { tickSize: Micros; minSize: Micros },
): { makerAmount: bigint; takerAmount: bigint } | AmountProblem {
  const { tickSize, minSize } = market;
  const rounding = TICK_ROUNDING[tickSize];
  if (!rounding) return { kind: "tick", message: `unsupported tick size ${tickSize / MICROS}` };
  if (price % tickSize !== 0 || price < tickSize || price > MICROS - tickSize)
    return {
      kind: "tick",
      message: `price ${price / MICROS} is not on tick ${tickSize / MICROS} within [${tickSize / MICROS}, ${(MICROS - tickSize) / MICROS}]`,
    };
  const sizeStep = 10 ** (6 - rounding.size);
  if (size <= 0 || size % sizeStep !== 0)
    return {
      kind: "size",
      message: `size ${size / MICROS} must be positive with at most ${rounding.size} decimals`,
    };
  if (size < minSize)
    return { kind: "min_size", message: `size ${size / MICROS} is below the minimum ${minSize / MICROS}` };
  const shares = BigInt(size);
  const cash = (BigInt(size) * BigInt(price)) / BigInt(MICROS);
  // Exact: size has 2 decimals and price at most 4, so size·price has at most 6.
  return side === "buy"
    ? { makerAmount: cash, takerAmount: shares }
    : { makerAmount: shares, takerAmount: cash };
}

/** The `order` object of `POST /order` (VENUES.md §1.6): salt a JSON number, big numbers as strings. */
export function orderJson(order: OrderStruct, signature: Hex, expirationS: number) {
  return {
    salt: Number(order.salt),
    maker: order.maker,
    signer: order.signer,
    tokenId: order.tokenId.toString(),
    makerAmount: order.makerAmount.toString(),
    takerAmount: order.takerAmount.toString(),
    side: order.side === 0 ? "BUY" : "SELL",
    signatureType: order.signatureType,
    timestamp: order.timestamp.toString(),
    expiration: String(expirationS),
    metadata: order.metadata,
    builder: order.builder,
    signature,
  };
}
