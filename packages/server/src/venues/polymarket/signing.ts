/**
 * Polymarket signing, kept free of I/O so it can be checked against known-answer vectors:
 * L1 EIP-712 `ClobAuth` (create/derive API keys), L2 HMAC-SHA256 request headers, and the CLOB V2
 * EIP-712 order (struct, domain per chain, 6-decimal amounts, the FAK/FOK precision rule, and the
 * ERC-7739 wrapped signature of POLY_1271 deposit wallets). VENUES.md §1.5 and §1.6; the wallet
 * and precision facts are in this folder's README with their sources.
 */
import { createHmac } from "node:crypto";
import { concat, domainSeparator, type Hex, hashStruct, hashTypedData, numberToHex, toHex } from "viem";
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

/**
 * Verifying contracts per chain (clob-client-v2 1.1.0 `config.js`): Amoy (80002) shares the V2
 * exchanges with Polygon but has its own ExchangeV3.
 */
export const EXCHANGES_BY_CHAIN: Record<number, { v2: Hex; negRiskV2: Hex; v3: Hex }> = {
  137: EXCHANGES,
  80002: {
    v2: EXCHANGES.v2,
    negRiskV2: EXCHANGES.negRiskV2,
    v3: "0x9fE6e61422AdB6F610d8597F9684b16912D50C3D",
  },
};

/** 0 EOA, 1 POLY_PROXY, 2 POLY_GNOSIS_SAFE, 3 POLY_1271 (deposit wallet). */
export type SignatureType = 0 | 1 | 2 | 3;
export const POLY_1271 = 3;

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

/**
 * Domain for exchange version `version` (from `GET /version`) on `chainId`; V3 has no separate
 * neg-risk exchange. A chain without known contracts is refused rather than signed for Polygon.
 */
export function orderDomain(version: number, negRisk: boolean, chainId = 137): OrderDomain {
  const exchanges = EXCHANGES_BY_CHAIN[chainId];
  if (!exchanges) throw new Error(`no Polymarket exchange contracts known for chain ${chainId}`);
  const verifyingContract = version >= 3 ? exchanges.v3 : negRisk ? exchanges.negRiskV2 : exchanges.v2;
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
  signatureType: SignatureType;
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

/** The EIP-712 type string of `Order`, which a POLY_1271 signature carries verbatim. */
export const ORDER_TYPE_STRING =
  "Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 takerAmount," +
  "uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)";

/** ERC-7739 `TypedDataSign` wrapping the order, as the deposit wallet re-hashes it (its own domain fields). */
const TYPED_DATA_SIGN_TYPES = {
  TypedDataSign: [
    { name: "contents", type: "Order" },
    { name: "name", type: "string" },
    { name: "version", type: "string" },
    { name: "chainId", type: "uint256" },
    { name: "verifyingContract", type: "address" },
    { name: "salt", type: "bytes32" },
  ],
  Order: ORDER_TYPES.Order,
} as const;

/** The deposit wallet's own EIP-712 domain name and version (clob-client-v2 1.1.0). */
export const DEPOSIT_WALLET_DOMAIN = { name: "DepositWallet", version: "1" } as const;

/**
 * The order signature. Types 0–2: the EOA's EIP-712 signature of the order. Type 3 (POLY_1271):
 * the exchange asks the deposit wallet (the order's `signer`) through ERC-1271, so the owner signs
 * an ERC-7739 `TypedDataSign` nesting the order under the wallet's own domain fields, and the
 * wallet gets what it needs to check that against the order's hash: owner signature (65 bytes) ‖
 * exchange domain separator ‖ order struct hash ‖ the `Order` type string ‖ its length (uint16).
 */
export async function signOrder(privateKey: Hex, order: OrderStruct, domain: OrderDomain): Promise<Hex> {
  const account = privateKeyToAccount(privateKey);
  if (order.signatureType !== POLY_1271) return account.signTypedData(orderTypedData(order, domain));
  const inner = await account.signTypedData({
    domain,
    types: TYPED_DATA_SIGN_TYPES,
    primaryType: "TypedDataSign",
    message: {
      contents: order,
      ...DEPOSIT_WALLET_DOMAIN,
      chainId: BigInt(domain.chainId),
      verifyingContract: order.signer,
      salt: ZERO_BYTES32,
    },
  });
  const typeString = toHex(ORDER_TYPE_STRING);
  return concat([
    inner,
    domainSeparator({ domain }),
    hashStruct({ data: order, primaryType: "Order", types: ORDER_TYPES }),
    typeString,
    numberToHex(ORDER_TYPE_STRING.length, { size: 2 }),
  ]);
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
  | { kind: "min_size"; message: string }
  | { kind: "precision"; message: string };

/** Price on the tick within [tick, 1 − tick], size positive on the tick's size decimals. */
function priceAndSizeProblem(price: Micros, size: Micros, tickSize: Micros): AmountProblem | undefined {
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
  return undefined;
}

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
  const problem = priceAndSizeProblem(price, size, tickSize);
  if (problem) return problem;
  if (size < minSize)
    return { kind: "min_size", message: `size ${size / MICROS} is below the minimum ${minSize / MICROS}` };
  const shares = BigInt(size);
  const cash = (BigInt(size) * BigInt(price)) / BigInt(MICROS);
  // Exact: size has 2 decimals and price at most 4, so size·price has at most 6.
  return side === "buy"
    ? { makerAmount: cash, takerAmount: shares }
    : { makerAmount: shares, takerAmount: cash };
}

/** FAK/FOK amounts: the maker amount at most 2 decimals, the taker amount at most 4, whatever the tick. */
export const IMMEDIATE_MAKER_DECIMALS = 2;
export const IMMEDIATE_TAKER_DECIMALS = 4;

export interface ImmediateAmounts {
  makerAmount: bigint;
  takerAmount: bigint;
  /** Shares the signed order is for: below the request's size when a BUY had to be rounded down. */
  size: Micros;
}

/**
 * Amounts of an immediate (FAK/FOK) order. The CLOB takes these only with the maker amount on 2
 * decimals and the taker amount on 4 (README "Order precision"), which `size × price` often is not
 * (7 × 0.533 = 3.731). So the amounts are rounded down, as the official client rounds its market
 * orders: a BUY pays the cost rounded down to the cent for the shares that cost buys at the limit,
 * rounded down to 4 decimals (fewer shares than asked: `size` says how many); a SELL sells every
 * share asked for and asks the proceeds rounded down to 4 decimals. Either way the implied price
 * moves towards the book by less than one tick, so no level beyond the limit can match; an order
 * too small for that to hold (or rounded to nothing) is refused instead.
 */
export function immediateOrderAmounts(
  side: "buy" | "sell",
  price: Micros,
  size: Micros,
  market: { tickSize: Micros },
): ImmediateAmounts | AmountProblem {
  const { tickSize } = market;
  const problem = priceAndSizeProblem(price, size, tickSize);
  if (problem) return problem;
  const M = BigInt(MICROS);
  const p = BigInt(price);
  const tick = BigInt(tickSize);
  const makerStep = 10n ** BigInt(6 - IMMEDIATE_MAKER_DECIMALS);
  const takerStep = 10n ** BigInt(6 - IMMEDIATE_TAKER_DECIMALS);
  const tooSmall: AmountProblem = {
    kind: "precision",
    message:
      `${size / MICROS} @ ${price / MICROS} is too small for Polymarket's FAK/FOK precision ` +
      `(cash to ${side === "buy" ? IMMEDIATE_MAKER_DECIMALS : IMMEDIATE_TAKER_DECIMALS} decimals, ` +
      `shares to ${side === "buy" ? IMMEDIATE_TAKER_DECIMALS : IMMEDIATE_MAKER_DECIMALS}) without moving the price by a tick`,
  };
  if (side === "buy") {
    const cash = ((BigInt(size) * p) / M / makerStep) * makerStep;
    const shares = ((cash * M) / p / takerStep) * takerStep;
    // Implied price cash / shares is at least the limit; it must stay below the next tick.
    if (cash <= 0n || shares <= 0n || cash * M >= (p + tick) * shares) return tooSmall;
    return { makerAmount: cash, takerAmount: shares, size: Number(shares) };
  }
  const shares = BigInt(size);
  const cash = ((shares * p) / M / takerStep) * takerStep;
  // Implied price cash / shares is at most the limit; it must stay above the tick below.
  if (cash <= 0n || cash * M <= (p - tick) * shares) return tooSmall;
  return { makerAmount: shares, takerAmount: cash, size };
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
