/**
 * Signing vectors: the published known answers from VENUES.md §1.5 (ClobAuth, HMAC) and §1.6 (V2
 * order), plus an order digest rebuilt by hand from the documented type string, so a change in
 * field order or type fails here rather than at the venue.
 */
import { concat, encodeAbiParameters, type Hex, keccak256, recoverTypedDataAddress, toHex } from "viem";
import { describe, expect, it } from "vitest";
import {
  clobAuthTypedData,
  hmacSignature,
  immediateOrderAmounts,
  l1Headers,
  l2Headers,
  ORDER_TYPE_STRING,
  type OrderStruct,
  orderAmounts,
  orderDomain,
  orderHash,
  orderJson,
  orderTypedData,
  signOrder,
  ZERO_BYTES32,
} from "../../../src/venues/polymarket/signing";

const HARDHAT_KEY: Hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const HARDHAT_ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

describe("L1 ClobAuth (VENUES.md §1.5)", () => {
  it("matches the published known-answer signature", async () => {
    const headers = await l1Headers(HARDHAT_KEY, { timestampS: 10000000, nonce: 23, chainId: 80002 });
    expect(headers).toEqual({
      POLY_ADDRESS: HARDHAT_ADDRESS,
      POLY_SIGNATURE:
        "0xf62319a987514da40e57e2f4d7529f7bac38f0355bd88bb5adbb3768d80de6c1682518e0af677d5260366425f4361e7b70c25ae232aff0ab2331e2b164a1aedc1b",
      POLY_TIMESTAMP: "10000000",
      POLY_NONCE: "23",
    });
  });

  it("recovers to the signer on Polygon with the default nonce", async () => {
    const headers = await l1Headers(HARDHAT_KEY, { timestampS: 1_790_000_000, chainId: 137 });
    expect(headers.POLY_NONCE).toBe("0");
    const recovered = await recoverTypedDataAddress({
      ...clobAuthTypedData(HARDHAT_ADDRESS, 1_790_000_000, 0, 137),
      signature: headers.POLY_SIGNATURE as Hex,
    });
    expect(recovered).toBe(HARDHAT_ADDRESS);
  });
});

describe("L2 HMAC (VENUES.md §1.5)", () => {
  it("matches the published known answer", () => {
    expect(
      hmacSignature(
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        1000000,
        "test-sign",
        "/orders",
        '{"hash": "0x123"}',
      ),
    ).toBe("ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=");
  });

  it("accepts a base64url secret and emits url-safe output with padding", () => {
    // 0xfb 0xff … encodes to "+/" in standard base64 and "-_" in base64url: both must give one key.
    const raw = Buffer.alloc(32, 0xfb);
    const std = raw.toString("base64");
    const url = raw.toString("base64url");
    expect(std).toContain("+");
    const a = hmacSignature(std, 1, "GET", "/data/orders");
    const b = hmacSignature(url, 1, "GET", "/data/orders");
    expect(a).toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_-]+=$/);
  });

  it("builds the five headers from the exact body text", () => {
    const creds = {
      apiKey: "k-uuid",
      secret: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
      passphrase: "pp",
    };
    const headers = l2Headers(creds, HARDHAT_ADDRESS, {
      timestampS: 1000000,
      method: "test-sign",
      requestPath: "/orders",
      body: '{"hash": "0x123"}',
    });
    expect(headers).toEqual({
      POLY_ADDRESS: HARDHAT_ADDRESS,
      POLY_SIGNATURE: "ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=",
      POLY_TIMESTAMP: "1000000",
      POLY_API_KEY: "k-uuid",
      POLY_PASSPHRASE: "pp",
    });
  });
});

describe("CLOB V2 order (VENUES.md §1.6)", () => {
  const order: OrderStruct = {
    salt: 123456789n,
    maker: HARDHAT_ADDRESS,
    signer: HARDHAT_ADDRESS,
    tokenId: 1234n,
    makerAmount: 50000000n,
    takerAmount: 100000000n,
    side: 0,
    signatureType: 0,
    timestamp: 1713398400000n,
    metadata: ZERO_BYTES32,
    builder: ZERO_BYTES32,
  };
  const domain = orderDomain(2, false, 137);

  it("uses the documented domains", () => {
    expect(domain).toEqual({
      name: "Polymarket CTF Exchange",
      version: "2",
      chainId: 137,
      verifyingContract: "0xE111180000d2663C0091e4f400237545B87B996B",
    });
    expect(orderDomain(2, true).verifyingContract).toBe("0xe2222d279d744050d28e00520010520000310F59");
    expect(orderDomain(3, true)).toMatchObject({
      version: "3",
      verifyingContract: "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa",
    });
  });

  it("matches the documented known-answer signature and recovers to the signer", async () => {
    const signature = await signOrder(HARDHAT_KEY, order, domain);
    expect(signature).toBe(
      "0x0e4ca7f648857ad2df950f0fa85b9122c07dabf4682558d4e812002ee9c9cdcf55d3609d2b523c842b613875fb09eeca0a36eca70825387eec8403749637e1fb1b",
    );
    const recovered = await recoverTypedDataAddress({ ...orderTypedData(order, domain), signature });
    expect(recovered).toBe(HARDHAT_ADDRESS);
  });

  it("hashes exactly like a digest rebuilt by hand from the documented type string", () => {
    const typeHash = keccak256(
      toHex(
        "Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 takerAmount," +
          "uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)",
      ),
    );
    const structHash = keccak256(
      encodeAbiParameters(
        [
          { type: "bytes32" },
          { type: "uint256" },
          { type: "address" },
          { type: "address" },
          { type: "uint256" },
          { type: "uint256" },
          { type: "uint256" },
          { type: "uint8" },
          { type: "uint8" },
          { type: "uint256" },
          { type: "bytes32" },
          { type: "bytes32" },
        ],
        [
          typeHash,
          123456789n,
          HARDHAT_ADDRESS,
          HARDHAT_ADDRESS,
          1234n,
          50000000n,
          100000000n,
          0,
          0,
          1713398400000n,
          ZERO_BYTES32,
          ZERO_BYTES32,
        ],
      ),
    );
    const domainSeparator = keccak256(
      encodeAbiParameters(
        [
          { type: "bytes32" },
          { type: "bytes32" },
          { type: "bytes32" },
          { type: "uint256" },
          { type: "address" },
        ],
        [
          keccak256(
            toHex("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
          ),
          keccak256(toHex("Polymarket CTF Exchange")),
          keccak256(toHex("2")),
          137n,
          "0xE111180000d2663C0091e4f400237545B87B996B",
        ],
      ),
    );
    const expected = keccak256(concat(["0x1901", domainSeparator, structHash]));
    expect(orderHash(order, domain)).toBe(expected);
  });

  it("serializes the POST /order object as documented", () => {
    const json = orderJson(order, "0xabc", 0);
    expect(json).toEqual({
      salt: 123456789,
      maker: HARDHAT_ADDRESS,
      signer: HARDHAT_ADDRESS,
      tokenId: "1234",
      makerAmount: "50000000",
      takerAmount: "100000000",
      side: "BUY",
      signatureType: 0,
      timestamp: "1713398400000",
      expiration: "0",
      metadata: ZERO_BYTES32,
      builder: ZERO_BYTES32,
      signature: "0xabc",
    });
  });
});

describe("order amounts (VENUES.md §1.6 Amounts)", () => {
  const market = { tickSize: 10_000, minSize: 5_000_000 };
  it("BUY gives pUSD and takes shares; SELL the reverse, 6-decimal integers", () => {
    expect(orderAmounts("buy", 500_000, 100_000_000, market)).toEqual({
      makerAmount: 50_000_000n,
      takerAmount: 100_000_000n,
    });
    expect(orderAmounts("sell", 530_000, 12_340_000, market)).toEqual({
      makerAmount: 12_340_000n,
      takerAmount: 6_540_200n,
    });
    expect(orderAmounts("buy", 1_200, 10_550_000, { tickSize: 100, minSize: 0 })).toEqual({
      makerAmount: 12_660n,
      takerAmount: 10_550_000n,
    });
  });

  it("refuses off-tick prices, prices outside [tick, 1 - tick], odd sizes and sizes under the minimum", () => {
    expect(orderAmounts("buy", 505_000, 10_000_000, market)).toMatchObject({ kind: "tick" });
    expect(orderAmounts("buy", 1_000_000, 10_000_000, market)).toMatchObject({ kind: "tick" });
    expect(orderAmounts("buy", 0, 10_000_000, market)).toMatchObject({ kind: "tick" });
    expect(orderAmounts("buy", 500_000, 10_001_000, market)).toMatchObject({ kind: "size" });
    expect(orderAmounts("buy", 500_000, 4_990_000, market)).toMatchObject({ kind: "min_size" });
    expect(orderAmounts("buy", 500_000, 10_000_000, { tickSize: 3_000, minSize: 0 })).toMatchObject({
      kind: "tick",
    });
  });
});

/**
 * Known answers produced by running the official client's own order code (@polymarket/clob-client-v2
 * 1.1.0, `createOrder` with a viem wallet client) outside this repository, with Hardhat key #0 as the
 * deposit wallet's owner, `0x5FbD…0aa3` as the deposit wallet, salt 123456789 and timestamp
 * 1713398400000. Only the resulting facts are kept here.
 */
describe("POLY_1271 deposit wallet orders (official client known answers)", () => {
  const WALLET: Hex = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
  const TYPE_TAIL = `${toHex(ORDER_TYPE_STRING).slice(2)}00ba`;
  const base: OrderStruct = {
    salt: 123456789n,
    maker: WALLET,
    signer: WALLET,
    tokenId: 1234n,
    makerAmount: 50000000n,
    takerAmount: 100000000n,
    side: 0,
    signatureType: 3,
    timestamp: 1713398400000n,
    metadata: ZERO_BYTES32,
    builder: ZERO_BYTES32,
  };

  it("wraps a V2 BUY (0.5 × 100, tick 0.01) exactly as the official client does", async () => {
    const signature = await signOrder(HARDHAT_KEY, base, orderDomain(2, false, 137));
    expect(signature).toBe(
      "0x11280ff75a073e7084e1190648b1515ff43df8967a553248aec9feff9527faef13abf69421cca49d9b2db1649c7db7d545cdbf49e22e90845b0c267d071dd4a21c" +
        "3264e159346253e26a64e00b69032db0e7d32f94628de3e6eecb50304d7af3d2" +
        "a478923344a6ba590a9e227ea646b44ae314e85e41f0af88e3a407978aaeeed2" +
        TYPE_TAIL,
    );
    // The pieces after the owner's signature are the exchange's domain separator and the order's
    // struct hash: together they give the order hash the exchange asks the wallet about.
    const domainSeparator = `0x${signature.slice(132, 196)}`;
    const structHash = `0x${signature.slice(196, 260)}`;
    expect(keccak256(concat(["0x1901", domainSeparator as Hex, structHash as Hex]))).toBe(
      orderHash(base, orderDomain(2, false, 137)),
    );
  });

  it("wraps a neg-risk V2 SELL (7 @ 0.533, tick 0.001) and a V3 BUY exactly as the official client does", async () => {
    const sell = await signOrder(
      HARDHAT_KEY,
      { ...base, makerAmount: 7000000n, takerAmount: 3731000n, side: 1 },
      orderDomain(2, true, 137),
    );
    expect(sell).toBe(
      "0x503b0a36ef9fa94426784b5b36121468786eafafbc5432aa8b4014ec07c631e300ee0d929b0f7fbc87d55715039cc89912ee344260d4cd4a06e5a9546f5590531c" +
        "9b858f53327b0bd13af8ec14cfb35234fb9eb7b0504d1a4e61f433840d30e81a" +
        "52fce52ddfa99cde98bb242d4ebd403301cc073aacc482743d77f7a0cf363212" +
        TYPE_TAIL,
    );
    const v3 = await signOrder(HARDHAT_KEY, base, orderDomain(3, false, 137));
    expect(v3).toBe(
      "0x1d9422bbefe89b9c5ca0ea99d0cd817c45658f0819256cd3efe0d8bcd6c1c7160840a7f0d11f22aae7f097f117e812c9b28a72d3563349d07a6ca8fe67b108761c" +
        "466c63910185bbd55e8679264200c4e0abdcbb0c6264eb3d41d13326022e095b" +
        "a478923344a6ba590a9e227ea646b44ae314e85e41f0af88e3a407978aaeeed2" +
        TYPE_TAIL,
    );
  });
});

describe("Amoy (80002) contracts (clob-client-v2 1.1.0 config.js)", () => {
  it("signs V3 orders for Amoy's own ExchangeV3 and V2 orders for the shared V2 exchanges", async () => {
    expect(orderDomain(3, false, 80002).verifyingContract).toBe("0x9fE6e61422AdB6F610d8597F9684b16912D50C3D");
    expect(orderDomain(3, true, 80002).verifyingContract).toBe("0x9fE6e61422AdB6F610d8597F9684b16912D50C3D");
    expect(orderDomain(2, false, 80002).verifyingContract).toBe("0xE111180000d2663C0091e4f400237545B87B996B");
    expect(orderDomain(2, true, 80002).verifyingContract).toBe("0xe2222d279d744050d28e00520010520000310F59");
    expect(() => orderDomain(3, false, 1)).toThrowError(/chain 1/);
    const order: OrderStruct = {
      salt: 123456789n,
      maker: HARDHAT_ADDRESS,
      signer: HARDHAT_ADDRESS,
      tokenId: 1234n,
      makerAmount: 50000000n,
      takerAmount: 100000000n,
      side: 0,
      signatureType: 0,
      timestamp: 1713398400000n,
      metadata: ZERO_BYTES32,
      builder: ZERO_BYTES32,
    };
    // The official client's answer for this order on Amoy, exchange version 3.
    expect(await signOrder(HARDHAT_KEY, order, orderDomain(3, false, 80002))).toBe(
      "0xf7e51362fcee5d409bb692b4e95a085d9281889a593de7f7416f83ac5e5ca34b72f2cbff3aca8f0bf628fc819ea53764902def33ab4594db91458deebdb9a3381b",
    );
    const wallet: Hex = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    const deposit = await signOrder(
      HARDHAT_KEY,
      { ...order, maker: wallet, signer: wallet, signatureType: 3 },
      orderDomain(3, false, 80002),
    );
    expect(deposit.slice(0, 132)).toBe(
      "0xe8bbba64b2fd06b34b75cc6afebffed05952eb9ba1a7d682edf8d80134d6c9fd779d2c50b85e8655fdc6a2aec48167ac9a8a7dc7c83740fee11ffff91a0e71c61b",
    );
  });
});

describe("immediate (FAK/FOK) amounts: maker ≤ 2 decimals, taker ≤ 4, whatever the tick", () => {
  const fine = { tickSize: 1_000 };
  it("BUY pays the cost rounded down to the cent for the shares it buys at the limit, to 4 decimals", () => {
    expect(immediateOrderAmounts("buy", 533_000, 7_000_000, fine)).toEqual({
      makerAmount: 3_730_000n,
      takerAmount: 6_998_100n,
      size: 6_998_100,
    });
    // Already whole cents: unchanged.
    expect(immediateOrderAmounts("buy", 530_000, 10_000_000, { tickSize: 10_000 })).toEqual({
      makerAmount: 5_300_000n,
      takerAmount: 10_000_000n,
      size: 10_000_000,
    });
  });

  it("SELL keeps its shares and asks the proceeds rounded down to 4 decimals", () => {
    expect(immediateOrderAmounts("sell", 533_000, 7_010_000, fine)).toEqual({
      makerAmount: 7_010_000n,
      takerAmount: 3_736_300n,
      size: 7_010_000,
    });
    expect(immediateOrderAmounts("sell", 533_100, 1_010_000, { tickSize: 100 })).toEqual({
      makerAmount: 1_010_000n,
      takerAmount: 538_400n,
      size: 1_010_000,
    });
  });

  it("refuses what rounding would empty or move by a tick, and keeps the limit-order checks", () => {
    expect(immediateOrderAmounts("buy", 533_000, 10_000, fine)).toMatchObject({ kind: "precision" });
    expect(immediateOrderAmounts("sell", 533_100, 10_000, { tickSize: 100 })).toMatchObject({
      kind: "precision",
    });
    expect(immediateOrderAmounts("buy", 533_500, 7_000_000, fine)).toMatchObject({ kind: "tick" });
    expect(immediateOrderAmounts("buy", 533_000, 7_001_000, fine)).toMatchObject({ kind: "size" });
  });
});
