/**
 * CLOB V2 trading: EIP-712 order verification (domain per chain, exchange version and neg-risk
 * flag; signature types EOA / proxy / safe with a funder, and POLY_1271 deposit wallets checked
 * the way the wallet contract checks them under ERC-1271), the venue's order checks (owner, signer,
 * tick, amount precision, minimum size, expiration, post-only, balance, duplicates), matching
 * against the book and other users' orders, cancels, and the L2 read endpoints. Wire format:
 * VENUES.md §1.6 and §1.7; wallets and precision in this folder's README.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  size as byteLength,
  concat,
  encodeAbiParameters,
  type Hex,
  hashTypedData,
  isAddress,
  keccak256,
  recoverAddress,
  recoverTypedDataAddress,
  slice,
  stringToHex,
  toHex,
} from "viem";
import { type ApiKeyRecord, type ApiKeyStore, type AuthOptions, requireL2 } from "./auth";
import { CURSOR_END, cursorPage, NO_BOOK } from "./clob";
import {
  type OrderType,
  type PmMarket,
  type PolymarketState,
  type RestingOrder,
  remaining,
  type Side,
  type TradeRecord,
} from "./state";
import { fmtPrice, fmtSize, PRICE_SCALE } from "./units";

/** Polygon exchange contracts (VENUES.md §1.6). */
export const EXCHANGE_V2 = "0xE111180000d2663C0091e4f400237545B87B996B" as const;
export const NEG_RISK_EXCHANGE_V2 = "0xe2222d279d744050d28e00520010520000310F59" as const;
export const EXCHANGE_V3 = "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa" as const;
/** Amoy (80002) has the same V2 exchanges and its own ExchangeV3 (clob-client-v2 `config.js`). */
export const AMOY_EXCHANGE_V3 = "0x9fE6e61422AdB6F610d8597F9684b16912D50C3D" as const;
const MAX_ALLOWANCE = "115792089237316195423570985008687907853269984665640564039457584007913129639935";

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

/** Messages of the docs' create-order error table (VENUES.md §1.7). */
export const ORDER_ERRORS = {
  INVALID_ORDER_MIN_TICK_SIZE: "order is invalid. Price breaks minimum tick size rules",
  INVALID_ORDER_MIN_SIZE: "order is invalid. Size lower than the minimum",
  INVALID_ORDER_DUPLICATED:
    "order is invalid. Duplicated. Same order has already been placed, can't be placed again",
  INVALID_ORDER_NOT_ENOUGH_BALANCE: "not enough balance / allowance",
  INVALID_ORDER_EXPIRATION: "order is invalid. Expiration is before now",
  INVALID_ORDER_ERROR: "could not insert order",
  INVALID_POST_ONLY_ORDER_TYPE: "invalid post-only order: only GTC and GTD orders may be post only",
  INVALID_POST_ONLY_ORDER: "invalid post-only order: order crosses book",
  FOK_ORDER_NOT_FILLED_ERROR: "order couldn't be fully filled. FOK orders are fully filled or killed.",
  FAK_NO_MATCH:
    "no orders found to match with FAK order. FAK orders are partially filled or killed if no match is found.",
  MARKET_NOT_READY: "the market is not yet ready to process new orders",
} as const;

export interface SignedOrderJson {
  salt: number | string;
  maker: string;
  signer: string;
  tokenId: string;
  makerAmount: string;
  takerAmount: string;
  side: Side;
  signatureType: number;
  timestamp: string;
  expiration?: string;
  metadata: string;
  builder: string;
  signature: string;
}

export interface PostOrderBody {
  order: SignedOrderJson;
  owner: string;
  orderType?: OrderType;
  deferExec?: boolean;
  postOnly?: boolean;
}

export interface TradingContext {
  state: PolymarketState;
  keys: ApiKeyStore;
  auth: AuthOptions;
  version: () => number;
  /**
   * `${signer}:${signatureType}` (lowercase) → funder address for proxy / safe wallets; for a
   * deposit wallet (type 3) the signer is the wallet's owner and the funder the wallet.
   */
  funders: Map<string, string>;
  ordersPageSize: number;
}

/** EIP-712 domain of the exchange an order is signed for (VENUES.md §1.6), per chain. */
export function orderDomain(version: number, negRisk: boolean, chainId: number) {
  const v3 = chainId === 80002 ? AMOY_EXCHANGE_V3 : EXCHANGE_V3;
  const verifyingContract = version >= 3 ? v3 : negRisk ? NEG_RISK_EXCHANGE_V2 : EXCHANGE_V2;
  return { name: "Polymarket CTF Exchange", version: String(version), chainId, verifyingContract } as const;
}

/** The owner of a registered deposit wallet (lowercase), if `wallet` is one. */
function depositWalletOwner(funders: Map<string, string>, wallet: string): string | undefined {
  const w = wallet.toLowerCase();
  for (const [key, funder] of funders) {
    if (funder === w && key.endsWith(":3")) return key.slice(0, -2);
  }
  return undefined;
}

const ORDER_TYPE_STRING =
  "Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)";

/**
 * ERC-1271 `isValidSignature(hash, signature)` of a deposit wallet owned by `owner`, as an ERC-7739
 * wallet answers it: the signature is `ownerSig(65) ‖ appDomainSeparator ‖ contents ‖
 * contentsType ‖ uint16(len(contentsType))`; the wallet checks that `hash` is the app-domain hash
 * of `contents`, then that the owner signed `TypedDataSign(contents, the wallet's own domain fields
 * name "DepositWallet", version "1", chainId, the wallet's address, salt 0)` under the app domain.
 */
async function depositWalletAccepts(
  wallet: string,
  owner: string,
  hash: Hex,
  signature: Hex,
  chainId: number,
): Promise<boolean> {
  try {
    const total = byteLength(signature);
    if (total < 65 + 64 + 2) return false;
    const typeLength = Number.parseInt(slice(signature, total - 2).slice(2), 16);
    const typeStart = total - 2 - typeLength;
    if (typeStart !== 65 + 64) return false;
    const ownerSig = slice(signature, 0, 65);
    const appSeparator = slice(signature, 65, 97);
    const contents = slice(signature, 97, 129);
    const contentsType = Buffer.from(slice(signature, typeStart, total - 2).slice(2), "hex").toString("utf8");
    if (contentsType !== ORDER_TYPE_STRING) return false;
    if (keccak256(concat(["0x1901", appSeparator, contents])) !== hash) return false;
    const contentsName = contentsType.slice(0, contentsType.indexOf("("));
    const typeHash = keccak256(
      stringToHex(
        `TypedDataSign(${contentsName} contents,string name,string version,uint256 chainId,address verifyingContract,bytes32 salt)${contentsType}`,
      ),
    );
    const structHash = keccak256(
      encodeAbiParameters(
        [
          { type: "bytes32" },
          { type: "bytes32" },
          { type: "bytes32" },
          { type: "bytes32" },
          { type: "uint256" },
          { type: "address" },
          { type: "bytes32" },
        ],
        [
          typeHash,
          contents,
          keccak256(stringToHex("DepositWallet")),
          keccak256(stringToHex("1")),
          BigInt(chainId),
          wallet as Hex,
          toHex(0, { size: 32 }),
        ],
      ),
    );
    const digest = keccak256(concat(["0x1901", appSeparator, structHash]));
    const recovered = await recoverAddress({ hash: digest, signature: ownerSig });
    return recovered.toLowerCase() === owner.toLowerCase();
  } catch {
    return false;
  }
}

export function orderMessage(o: SignedOrderJson) {
  return {
    salt: BigInt(o.salt),
    maker: o.maker as `0x${string}`,
    signer: o.signer as `0x${string}`,
    tokenId: BigInt(o.tokenId),
    makerAmount: BigInt(o.makerAmount),
    takerAmount: BigInt(o.takerAmount),
    side: o.side === "BUY" ? 0 : 1,
    signatureType: o.signatureType,
    timestamp: BigInt(o.timestamp),
    metadata: o.metadata as `0x${string}`,
    builder: o.builder as `0x${string}`,
  };
}

class Reject extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const uintStr = (v: unknown): v is string => typeof v === "string" && /^\d+$/.test(v);
const bytes32 = (v: unknown): v is string => typeof v === "string" && /^0x[0-9a-fA-F]{64}$/.test(v);

function validateShape(b: unknown): PostOrderBody {
  const body = b as PostOrderBody;
  const o = body?.order;
  const ok =
    o &&
    typeof body.owner === "string" &&
    (typeof o.salt === "number" || uintStr(o.salt)) &&
    typeof o.maker === "string" &&
    isAddress(o.maker) &&
    typeof o.signer === "string" &&
    isAddress(o.signer) &&
    uintStr(o.tokenId) &&
    uintStr(o.makerAmount) &&
    uintStr(o.takerAmount) &&
    (o.side === "BUY" || o.side === "SELL") &&
    Number.isInteger(o.signatureType) &&
    uintStr(o.timestamp) &&
    (o.expiration === undefined || uintStr(o.expiration)) &&
    bytes32(o.metadata) &&
    bytes32(o.builder) &&
    typeof o.signature === "string" &&
    /^0x[0-9a-fA-F]+$/.test(o.signature) &&
    (body.orderType === undefined || ["GTC", "GTD", "FOK", "FAK"].includes(body.orderType));
  if (!ok) throw new Reject("Invalid order payload");
  return body;
}

/** Whether the order's signature is valid for its signer: ECDSA for types 0–2, ERC-1271 for 3. */
async function recovers(
  o: SignedOrderJson,
  version: number,
  negRisk: boolean,
  chainId: number,
  depositOwner?: string,
): Promise<boolean> {
  if (o.signatureType === 3) {
    if (!depositOwner) return false;
    const hash = hashTypedData({
      domain: orderDomain(version, negRisk, chainId),
      types: ORDER_TYPES,
      primaryType: "Order",
      message: orderMessage(o),
    });
    return depositWalletAccepts(o.signer, depositOwner, hash, o.signature as Hex, chainId);
  }
  try {
    const addr = await recoverTypedDataAddress({
      domain: orderDomain(version, negRisk, chainId),
      types: ORDER_TYPES,
      primaryType: "Order",
      message: orderMessage(o),
      signature: o.signature as `0x${string}`,
    });
    return addr.toLowerCase() === o.signer.toLowerCase();
  } catch {
    return false;
  }
}

export interface OrderResult {
  success: boolean;
  errorMsg: string;
  orderID: string;
  status: "matched" | "live" | "delayed" | "unmatched" | "";
  takingAmount: string;
  makingAmount: string;
  tradeIDs: string[];
  transactionsHashes: string[];
}

/** Verify, check and execute one order; throws Reject with the venue's message. */
async function placeOrder(ctx: TradingContext, key: ApiKeyRecord, raw: unknown): Promise<OrderResult> {
  const { state } = ctx;
  const body = validateShape(raw);
  const o = body.order;
  const orderType: OrderType = body.orderType ?? "GTC";
  if (body.owner !== key.apiKey) throw new Reject("the order owner has to be the owner of the API KEY");
  // A deposit wallet signs as itself; its API key is the owner's, derived with the owner's L1
  // signature as the official client does (whether the venue binds it so is unverified: README).
  const depositOwner = o.signatureType === 3 ? depositWalletOwner(ctx.funders, o.signer) : undefined;
  if (o.signer.toLowerCase() !== key.address.toLowerCase() && depositOwner !== key.address.toLowerCase())
    throw new Reject("the order signer address has to be the address of the API KEY");
  const m = state.byToken.get(o.tokenId);
  if (m?.status !== "open") throw new Reject(NO_BOOK);

  // Signature type and funder (VENUES.md §1.6: maker = funder, signer = EOA; for a deposit wallet
  // maker = signer = the wallet).
  if (o.signatureType === 0) {
    if (o.maker.toLowerCase() !== o.signer.toLowerCase()) throw new Reject("invalid signature");
  } else if (o.signatureType === 1 || o.signatureType === 2) {
    const funder = ctx.funders.get(`${o.signer.toLowerCase()}:${o.signatureType}`);
    if (!funder || funder !== o.maker.toLowerCase()) throw new Reject("invalid signature");
  } else if (o.signatureType === 3) {
    if (!depositOwner || o.maker.toLowerCase() !== o.signer.toLowerCase())
      throw new Reject("invalid signature");
  } else {
    throw new Reject("invalid signature");
  }

  const version = ctx.version();
  if (!(await recovers(o, version, m.negRisk, ctx.auth.chainId, depositOwner))) {
    const other = version >= 3 ? 2 : 3;
    if (await recovers(o, other, m.negRisk, ctx.auth.chainId, depositOwner))
      throw new Reject("order_version_mismatch");
    throw new Reject("invalid signature");
  }
  const orderID = hashTypedData({
    domain: orderDomain(version, m.negRisk, ctx.auth.chainId),
    types: ORDER_TYPES,
    primaryType: "Order",
    message: orderMessage(o),
  });
  if (state.orders.has(orderID)) throw new Reject(ORDER_ERRORS.INVALID_ORDER_DUPLICATED);

  const nowS = Math.floor(state.clock() / 1000);
  const expiration = Number(o.expiration ?? "0");
  if (orderType === "GTD") {
    if (expiration < nowS + 60) throw new Reject(ORDER_ERRORS.INVALID_ORDER_EXPIRATION);
  } else if (expiration !== 0) {
    throw new Reject(ORDER_ERRORS.INVALID_ORDER_EXPIRATION);
  }
  const postOnly = body.postOnly === true;
  if (postOnly && orderType !== "GTC" && orderType !== "GTD")
    throw new Reject(ORDER_ERRORS.INVALID_POST_ONLY_ORDER_TYPE);

  const makerAmount = BigInt(o.makerAmount);
  const takerAmount = BigInt(o.takerAmount);
  if (makerAmount <= 0n || takerAmount <= 0n) throw new Reject("Invalid order payload");
  const buy = o.side === "BUY";
  const shares = buy ? takerAmount : makerAmount;
  const cash = buy ? makerAmount : takerAmount;
  const scale = BigInt(PRICE_SCALE);
  const market = orderType === "FOK" || orderType === "FAK";
  let limit: number;
  if (market) {
    // Marketable orders carry a worst acceptable price; amounts are rounded, so compare exactly.
    limit = buy ? Number((cash * scale) / shares) : Number((cash * scale + shares - 1n) / shares);
    if (limit < m.tick || limit > PRICE_SCALE - m.tick)
      throw new Reject(`${ORDER_ERRORS.INVALID_ORDER_MIN_TICK_SIZE}: price out of range`);
  } else {
    if ((cash * scale) % shares !== 0n) throw new Reject(tickMessage(m, Number(cash) / Number(shares)));
    limit = Number((cash * scale) / shares);
    if (limit % m.tick !== 0 || limit < m.tick || limit > PRICE_SCALE - m.tick)
      throw new Reject(tickMessage(m, limit / PRICE_SCALE));
    if (shares < BigInt(m.minSize))
      throw new Reject(`${ORDER_ERRORS.INVALID_ORDER_MIN_SIZE}: ${fmtSize(shares)} < ${fmtSize(m.minSize)}`);
  }
  checkAccuracy(m, o.side, market, makerAmount, takerAmount);

  // Balance: pUSD for buys, outcome tokens for sells, net of what live orders already reserve.
  const wallet = state.wallet(o.maker);
  const reserved = state.reserved(o.maker);
  if (buy) {
    if (wallet.collateral - reserved.cash < cash)
      throw new Reject(ORDER_ERRORS.INVALID_ORDER_NOT_ENOUGH_BALANCE);
  } else {
    const held = (wallet.positions.get(o.tokenId) ?? 0n) - (reserved.shares.get(o.tokenId) ?? 0n);
    if (held < shares) throw new Reject(ORDER_ERRORS.INVALID_ORDER_NOT_ENOUGH_BALANCE);
  }

  const yesToken = o.tokenId === m.yesTokenId;
  if (postOnly && state.crosses(m, yesToken, o.side, limit))
    throw new Reject(ORDER_ERRORS.INVALID_POST_ONLY_ORDER);

  const takerSpec = {
    yesToken,
    side: o.side,
    limit,
    ...(market && buy ? { budget: cash } : { shares: Number(shares) }),
  };
  if (orderType === "FOK") {
    const dry = state.match(m, takerSpec, true);
    // Per-level rounding can leave a micro-unit or so of the budget unspent: that still counts as full.
    const left = dry.budgetLeft ?? 0n;
    const full = buy
      ? left * scale < BigInt(limit) || left <= BigInt(dry.fills.length)
      : BigInt(dry.shares) === shares;
    if (!full) throw new Reject(ORDER_ERRORS.FOK_ORDER_NOT_FILLED_ERROR);
  }
  if (orderType === "FAK" && state.match(m, takerSpec, true).fills.length === 0)
    throw new Reject(ORDER_ERRORS.FAK_NO_MATCH);

  const order: RestingOrder = {
    id: orderID,
    owner: key.apiKey,
    makerAddress: o.maker,
    signer: o.signer,
    market: m,
    tokenId: o.tokenId,
    yesToken,
    side: o.side,
    price: limit,
    originalSize: Number(shares),
    matched: 0,
    orderType,
    expiration,
    createdAt: nowS,
    status: "LIVE",
    associateTrades: [],
    seq: state.nextSeq(),
  };
  state.orders.set(orderID, order);

  const { result, trade } = state.mutate(m, () => {
    const r = state.match(m, takerSpec);
    order.originalSize = Math.max(order.originalSize, r.shares);
    order.matched = r.shares;
    const t = state.recordTrade(
      m,
      { orderId: orderID, owner: key.apiKey, address: o.maker, tokenId: o.tokenId, yesToken, side: o.side },
      r.fills,
    );
    if (t) order.associateTrades.push(t.id);
    if (market || remaining(order) === 0) order.status = remaining(order) === 0 ? "MATCHED" : "CANCELED";
    else (yesToken === (o.side === "BUY") ? m.bids : m.asks).push(order);
    return { result: r, trade: t };
  });
  if (order.status === "LIVE") state.emit({ kind: "order", order, type: "PLACEMENT" });

  const filled = result.shares > 0;
  return {
    success: true,
    errorMsg: "",
    orderID,
    status: order.status === "LIVE" ? "live" : "matched",
    takingAmount: filled ? (buy ? fmtSize(result.shares) : fmtSize(result.cash)) : "",
    makingAmount: filled ? (buy ? fmtSize(result.cash) : fmtSize(result.shares)) : "",
    tradeIDs: trade ? [trade.id] : [],
    transactionsHashes: trade && !market ? [trade.transactionHash] : [],
  };
}

/** Decimal places of a 6-decimal integer amount. */
function decimalsOf(micro: bigint): number {
  let d = 6;
  let v = micro;
  while (d > 0 && v % 10n === 0n) {
    v /= 10n;
    d -= 1;
  }
  return d;
}

/**
 * Amount precision. Limit orders follow the rounding table (VENUES.md §1.6 "Amounts"): the share
 * amount at most 2 decimals, the cash amount at most price decimals + 2 for the tick. FAK/FOK
 * ("market") orders: the maker amount at most 2 decimals and the taker amount at most 4, whatever
 * the tick (the venue's error text, quoted in public issues: README).
 */
function checkAccuracy(
  m: PmMarket,
  side: Side,
  market: boolean,
  makerAmount: bigint,
  takerAmount: bigint,
): void {
  const amountDecimals = tickDecimals(m.tick) + 2;
  const [makerDec, takerDec] = market ? [2, 4] : side === "SELL" ? [2, amountDecimals] : [amountDecimals, 2];
  if (decimalsOf(makerAmount) > makerDec || decimalsOf(takerAmount) > takerDec) {
    const kind = `${market ? "market " : ""}${side === "BUY" ? "buy" : "sell"}`;
    throw new Reject(
      `invalid amounts, the ${kind} orders maker amount supports a max accuracy of ${makerDec} decimals, taker amount a max of ${takerDec} decimals`,
    );
  }
}

/** Decimal places of a tick in price units (100 → 2, 10 → 3, 1000 → 1, 1 → 4). */
function tickDecimals(tick: number): number {
  let d = 4;
  let t = tick;
  while (d > 0 && t % 10 === 0) {
    t /= 10;
    d -= 1;
  }
  return d;
}

function tickMessage(m: PmMarket, price: number): string {
  return `${ORDER_ERRORS.INVALID_ORDER_MIN_TICK_SIZE}: price (${price}), min tick size (${fmtPrice(m.tick)})`;
}

/** OpenOrder — VENUES.md §1.6 "Reads". */
export function openOrderJson(o: RestingOrder): Record<string, unknown> {
  const m = o.market;
  return {
    id: o.id,
    status: o.status,
    owner: o.owner ?? "",
    maker_address: o.makerAddress,
    market: m.conditionId,
    asset_id: o.tokenId,
    side: o.side,
    original_size: fmtSize(o.originalSize),
    size_matched: fmtSize(o.matched),
    price: fmtPrice(o.price),
    associate_trades: [...o.associateTrades],
    outcome: m.outcomes[m.tokenIds.indexOf(o.tokenId)],
    created_at: o.createdAt,
    expiration: String(o.expiration),
    order_type: o.orderType,
  };
}

const outcomeOf = (m: PmMarket, tokenId: string) => m.outcomes[m.tokenIds.indexOf(tokenId)];

/** Trade — VENUES.md §1.4 user channel `trade` and §1.6 `/data/trades`. */
export function tradeJson(t: TradeRecord, viewer: string | null): Record<string, unknown> {
  const m = t.market;
  return {
    id: t.id,
    taker_order_id: t.takerOrderId,
    market: m.conditionId,
    asset_id: t.tokenId,
    side: t.side,
    size: fmtSize(t.size),
    fee_rate_bps: "0",
    price: fmtPrice(t.price),
    status: t.status,
    match_time: String(t.matchTime),
    last_update: String(t.lastUpdate),
    outcome: outcomeOf(m, t.tokenId),
    bucket_index: 0,
    owner: t.takerOwner,
    maker_address: t.takerAddress,
    maker_orders: t.makers.map((f) => ({
      order_id: f.order.id,
      owner: f.order.owner ?? "",
      maker_address: f.order.makerAddress,
      matched_amount: fmtSize(f.amount),
      price: fmtPrice(f.price),
      fee_rate_bps: "0",
      asset_id: f.order.tokenId,
      outcome: outcomeOf(m, f.order.tokenId),
      side: f.order.side,
    })),
    transaction_hash: t.transactionHash,
    trader_side: viewer !== null && viewer === t.takerOwner ? "TAKER" : "MAKER",
  };
}

type Q = Record<string, string | undefined>;

export async function tradingRoutes(app: FastifyInstance, ctx: TradingContext): Promise<void> {
  const { state, keys, auth } = ctx;
  const l2 = (req: FastifyRequest, reply: FastifyReply) => requireL2(req, reply, keys, auth);

  app.post("/order", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    try {
      return await placeOrder(ctx, key, req.body);
    } catch (err) {
      if (err instanceof Reject) return reply.code(err.status).send({ error: err.message });
      throw err;
    }
  });

  app.post("/orders", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    if (!Array.isArray(req.body)) return reply.code(400).send({ error: "Invalid order payload" });
    const out: OrderResult[] = [];
    for (const item of req.body) {
      try {
        out.push(await placeOrder(ctx, key, item));
      } catch (err) {
        if (!(err instanceof Reject)) throw err;
        out.push({
          success: false,
          errorMsg: err.message,
          orderID: "",
          status: "",
          takingAmount: "",
          makingAmount: "",
          tradeIDs: [],
          transactionsHashes: [],
        });
      }
    }
    return out;
  });

  const cancel = (key: ApiKeyRecord, ids: string[]) => {
    const canceled: string[] = [];
    const notCanceled: Record<string, string> = {};
    for (const id of ids) {
      const o = state.orders.get(id);
      if (!o || o.owner !== key.apiKey) notCanceled[id] = "order not found";
      else if (o.status !== "LIVE") notCanceled[id] = "already canceled or matched";
      else {
        state.mutate(o.market, () => state.cancelOrder(o));
        canceled.push(id);
      }
    }
    return { canceled, not_canceled: notCanceled };
  };
  const liveOf = (key: ApiKeyRecord) =>
    [...state.orders.values()].filter((o) => o.owner === key.apiKey && o.status === "LIVE");

  app.delete("/order", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    const id = (req.body as { orderID?: string } | undefined)?.orderID;
    if (typeof id !== "string") return reply.code(400).send({ error: "Invalid order payload" });
    return cancel(key, [id]);
  });

  app.delete("/orders", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    const ids = req.body;
    if (!Array.isArray(ids) || ids.some((x) => typeof x !== "string"))
      return reply.code(400).send({ error: "Invalid order payload" });
    if (ids.length > 1000) return reply.code(400).send({ error: "too many orders, max 1000" });
    return cancel(key, ids as string[]);
  });

  app.delete("/cancel-all", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    return cancel(
      key,
      liveOf(key).map((o) => o.id),
    );
  });

  app.delete("/cancel-market-orders", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    const b = (req.body ?? {}) as { market?: string; asset_id?: string };
    const ids = liveOf(key)
      .filter(
        (o) =>
          (!b.market || o.market.conditionId === b.market.toLowerCase()) &&
          (!b.asset_id || o.tokenId === b.asset_id),
      )
      .map((o) => o.id);
    return cancel(key, ids);
  });

  app.get("/data/orders", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    const q = req.query as Q;
    if (q.next_cursor === CURSOR_END)
      return { data: [], next_cursor: CURSOR_END, limit: ctx.ordersPageSize, count: 0 };
    const rows = liveOf(key)
      .filter(
        (o) => (!q.id || o.id === q.id) && (!q.market || o.market.conditionId === q.market.toLowerCase()),
      )
      .filter((o) => !q.asset_id || o.tokenId === q.asset_id)
      .sort((a, b) => a.seq - b.seq)
      .map(openOrderJson);
    return (
      cursorPage(rows, q.next_cursor, ctx.ordersPageSize) ??
      reply.code(400).send({ error: "invalid next_cursor" })
    );
  });

  app.get("/data/order/:id", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    const o = state.orders.get((req.params as { id: string }).id);
    if (!o || o.owner !== key.apiKey) return reply.code(404).send({ error: "order not found" });
    return openOrderJson(o);
  });

  app.get("/data/trades", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    const q = req.query as Q;
    if (q.next_cursor === CURSOR_END)
      return { data: [], next_cursor: CURSOR_END, limit: ctx.ordersPageSize, count: 0 };
    const rows = state.trades
      .filter((t) => t.takerOwner === key.apiKey || t.makers.some((f) => f.order.owner === key.apiKey))
      .filter((t) => !q.id || t.id === q.id)
      .filter((t) => !q.market || t.market.conditionId === q.market.toLowerCase())
      .filter(
        (t) =>
          !q.asset_id || t.tokenId === q.asset_id || t.makers.some((f) => f.order.tokenId === q.asset_id),
      )
      .filter(
        (t) =>
          !q.maker_address ||
          t.takerAddress.toLowerCase() === q.maker_address.toLowerCase() ||
          t.makers.some((f) => f.order.makerAddress.toLowerCase() === q.maker_address!.toLowerCase()),
      )
      .filter((t) => !q.before || t.matchTime < Number(q.before))
      .filter((t) => !q.after || t.matchTime > Number(q.after))
      .map((t) => tradeJson(t, key.apiKey));
    return (
      cursorPage(rows, q.next_cursor, ctx.ordersPageSize) ??
      reply.code(400).send({ error: "invalid next_cursor" })
    );
  });

  const balance = (key: ApiKeyRecord, q: Q, reply: FastifyReply) => {
    const sigType = q.signature_type ?? "0";
    const funder = sigType === "0" ? undefined : ctx.funders.get(`${key.address.toLowerCase()}:${sigType}`);
    const w = state.wallet(funder ?? key.address);
    const exchanges = [EXCHANGE_V2, NEG_RISK_EXCHANGE_V2, EXCHANGE_V3];
    const allowances = Object.fromEntries(exchanges.map((e) => [e, MAX_ALLOWANCE]));
    if (q.asset_type === "COLLATERAL") return { balance: w.collateral.toString(), allowances };
    if (q.asset_type === "CONDITIONAL") {
      if (!q.token_id || !state.byToken.has(q.token_id))
        return reply.code(400).send({ error: "invalid token_id" });
      return { balance: (w.positions.get(q.token_id) ?? 0n).toString(), allowances };
    }
    return reply.code(400).send({ error: "invalid asset_type" });
  };

  app.get("/balance-allowance", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    return balance(key, req.query as Q, reply);
  });

  app.get("/balance-allowance/update", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    return balance(key, req.query as Q, reply);
  });

  app.post("/v1/heartbeats", async (req, reply) => {
    const key = l2(req, reply);
    if (!key) return reply;
    const id = (req.body as { heartbeat_id?: string } | undefined)?.heartbeat_id;
    return { heartbeat_id: id || `${key.apiKey.slice(0, 8)}-hb` };
  });
}
