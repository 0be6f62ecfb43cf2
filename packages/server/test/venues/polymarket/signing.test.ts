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
  l1Headers,
  l2Headers,
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
