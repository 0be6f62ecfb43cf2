/**
 * The fake Polymarket as the venue behaves for issue 19: POLY_1271 deposit wallets (type 3) checked
 * under ERC-1271 against the wallet's owner, the FAK/FOK amount precision (maker ≤ 2 decimals,
 * taker ≤ 4, whatever the tick), partial FAK answers, the tick served by the CLOB while Gamma keeps
 * the listing tick, and Amoy's own ExchangeV3.
 */
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  AMOY_EXCHANGE_V3,
  ORDER_TYPES,
  orderDomain,
  type PolymarketFake,
  startPolymarketFake,
} from "../src/polymarket/index";
import {
  type Creds,
  createCreds,
  HARDHAT0,
  HARDHAT1,
  type Json,
  l1Headers,
  l2Fetch,
  limitAmounts,
  signOrder,
} from "./polymarket-helpers";

const owner = privateKeyToAccount(HARDHAT0);
const stranger = privateKeyToAccount(HARDHAT1);
const WALLET = "0x5FbDB2315678afecb367f032d93F642f64180aa3" as const;
const SHUTDOWN = "us-government-shutdown-by-december-31-2026";
const FED_CHAIR = "fed-chair-announces-resignation-by-december-31-2026"; // a 0.001-tick market

describe("fake Polymarket — deposit wallets, precision, tick", () => {
  let fake: PolymarketFake;
  let ownerCreds: Creds;
  let strangerCreds: Creds;

  beforeAll(async () => {
    fake = await startPolymarketFake({ seed: 31 });
    ownerCreds = await createCreds(fake.clobUrl, owner);
    strangerCreds = await createCreds(fake.clobUrl, stranger);
    fake.script.registerWallet({ address: owner.address, funder: WALLET, signatureType: 3, collateral: 500 });
  });
  afterAll(() => fake.close());
  beforeEach(async () => {
    fake.script.setBook(SHUTDOWN, { bids: [[0.18, 100]], asks: [[0.21, 100]] });
    await l2Fetch(fake.clobUrl, ownerCreds, owner.address, "DELETE", "/cancel-all");
  });

  const post = (creds: Creds, address: string, order: unknown, orderType = "GTC") =>
    l2Fetch(fake.clobUrl, creds, address, "POST", "/order", { order, owner: creds.apiKey, orderType });

  describe("POLY_1271 deposit wallets", () => {
    it("accepts an order the wallet's owner signed for the wallet, funded by the wallet", async () => {
      const m = fake.script.market(SHUTDOWN);
      const order = await signOrder(owner, {
        tokenId: m.yesTokenId,
        side: "BUY",
        ...limitAmounts("BUY", 0.15, 10),
        maker: WALLET,
        signatureType: 3,
      });
      expect(order.signer).toBe(WALLET);
      // 65-byte owner signature, two hashes, the 186-character type string and its length.
      expect((order.signature.length - 2) / 2).toBe(65 + 32 + 32 + 186 + 2);
      const res = await post(ownerCreds, owner.address, order);
      expect(res.json).toMatchObject({ success: true, status: "live" });
      const balance = await l2Fetch(
        fake.clobUrl,
        ownerCreds,
        owner.address,
        "GET",
        "/balance-allowance?asset_type=COLLATERAL&signature_type=3",
      );
      expect(balance.json.balance).toBe("500000000");
    });

    it("refuses a wrong signer, a plain EOA signature, a maker other than the wallet and a stranger's key", async () => {
      const m = fake.script.market(SHUTDOWN);
      const spec = {
        tokenId: m.yesTokenId,
        side: "BUY" as const,
        ...limitAmounts("BUY", 0.15, 10),
        maker: WALLET,
        signatureType: 3 as const,
      };
      // Signed by someone who does not own the wallet, sent with the owner's API key.
      const forged = await signOrder(stranger, spec);
      expect((await post(ownerCreds, owner.address, forged)).json.error).toBe("invalid signature");
      // The owner's plain EIP-712 signature of the very order is not what the wallet's ERC-1271 check takes.
      const wrapped = await signOrder(owner, spec);
      const plain = await owner.signTypedData({
        domain: orderDomain(2, false, 137),
        types: ORDER_TYPES,
        primaryType: "Order",
        message: {
          salt: BigInt(wrapped.salt),
          maker: WALLET,
          signer: WALLET,
          tokenId: BigInt(wrapped.tokenId),
          makerAmount: BigInt(wrapped.makerAmount),
          takerAmount: BigInt(wrapped.takerAmount),
          side: 0,
          signatureType: 3,
          timestamp: BigInt(wrapped.timestamp),
          metadata: wrapped.metadata,
          builder: wrapped.builder,
        },
      });
      const unwrapped = { ...wrapped, signature: plain };
      expect((await post(ownerCreds, owner.address, unwrapped)).json.error).toBe("invalid signature");
      // The wallet signs as itself: maker and signer are both the wallet.
      const otherMaker = { ...wrapped, maker: owner.address };
      expect((await post(ownerCreds, owner.address, otherMaker)).json.error).toBe("invalid signature");
      // A key that is neither the wallet nor its owner.
      const res = await post(strangerCreds, stranger.address, await signOrder(owner, spec));
      expect(res.json.error).toBe("the order signer address has to be the address of the API KEY");
      // An unregistered wallet is no deposit wallet.
      const unknown = await signOrder(stranger, {
        ...spec,
        maker: "0x00000000000000000000000000000000000b0b0b",
      });
      expect((await post(strangerCreds, stranger.address, unknown)).status).toBe(400);
    });
  });

  describe("FAK/FOK precision", () => {
    it("takes a market order's maker amount to 2 decimals and its taker amount to 4, whatever the tick", async () => {
      const m = fake.script.market(FED_CHAIR);
      expect(m.tickSize).toBe(0.001);
      fake.script.setBook(FED_CHAIR, { bids: [[0.5, 100]], asks: [[0.533, 100]] });
      fake.script.registerWallet({ address: stranger.address, collateral: 100 });
      const fak = (makerAmount: bigint, takerAmount: bigint) =>
        signOrder(stranger, { tokenId: m.yesTokenId, side: "BUY", makerAmount, takerAmount });
      // 7 @ 0.533 as a limit order's amounts: $3.731 has 3 decimals.
      const exact = await post(strangerCreds, stranger.address, await fak(3_731_000n, 7_000_000n), "FAK");
      expect(exact.status).toBe(400);
      expect(exact.json.error).toBe(
        "invalid amounts, the market buy orders maker amount supports a max accuracy of 2 decimals, taker amount a max of 4 decimals",
      );
      // 5 decimals of shares fit a 0.001-tick limit order, not a FAK.
      const fine = await post(strangerCreds, stranger.address, await fak(3_730_000n, 6_998_120n), "FAK");
      expect(fine.json.error).toMatch(/taker amount a max of 4 decimals/);
      // Rounded down: $3.73 for 6.9981 shares.
      const rounded = await post(strangerCreds, stranger.address, await fak(3_730_000n, 6_998_100n), "FAK");
      expect(rounded.json).toMatchObject({ success: true, status: "matched" });
      expect(Number(rounded.json.makingAmount)).toBeCloseTo(3.73, 5);
      // The sell side: maker shares to 2 decimals, taker cash to 4.
      const sell = await signOrder(stranger, {
        tokenId: m.yesTokenId,
        side: "SELL",
        makerAmount: 2_000_000n,
        takerAmount: 1_000_050n,
      });
      expect((await post(strangerCreds, stranger.address, sell, "FOK")).json.error).toBe(
        "invalid amounts, the market sell orders maker amount supports a max accuracy of 2 decimals, taker amount a max of 4 decimals",
      );
    });

    it("answers a partly matched FAK with the amounts that matched and the trade's id", async () => {
      const m = fake.script.market(SHUTDOWN);
      fake.script.registerWallet({ address: stranger.address, collateral: 100 });
      // $21 at ≤ 0.21 for 100 shares; the book holds 40 there.
      fake.script.setBook(SHUTDOWN, { bids: [[0.18, 100]], asks: [[0.21, 40]] });
      const fak = await signOrder(stranger, {
        tokenId: m.yesTokenId,
        side: "BUY",
        makerAmount: 21_000_000n,
        takerAmount: 100_000_000n,
      });
      const res = await post(strangerCreds, stranger.address, fak, "FAK");
      expect(res.json).toMatchObject({
        success: true,
        status: "matched",
        takingAmount: "40",
        makingAmount: "8.4",
      });
      expect(res.json.tradeIDs).toHaveLength(1);
      const order = await l2Fetch(
        fake.clobUrl,
        strangerCreds,
        stranger.address,
        "GET",
        `/data/order/${res.json.orderID}`,
      );
      expect(order.json).toMatchObject({ status: "CANCELED", size_matched: "40" });
    });
  });

  describe("tick size", () => {
    it("serves the current tick from the CLOB while Gamma keeps the listing tick", async () => {
      const m = fake.script.market("bitcoin-above-100k-on-december-31-2026");
      expect(m.tickSize).toBe(0.01);
      fake.script.setTickSize(m.key, 0.001);
      try {
        const clob = (await (await fetch(`${fake.clobUrl}/clob-markets/${m.conditionId}`)).json()) as Json;
        expect(clob.mts).toBe(0.001);
        const tick = (await (
          await fetch(`${fake.clobUrl}/tick-size?token_id=${m.yesTokenId}`)
        ).json()) as Json;
        expect(tick).toEqual({ minimum_tick_size: 0.001 });
        const gamma = (await (await fetch(`${fake.gammaUrl}/markets/slug/${m.slug}`)).json()) as Json;
        expect(gamma.orderPriceMinTickSize).toBe(0.01);
      } finally {
        fake.script.setTickSize(m.key, 0.01);
      }
    });
  });
});

describe("fake Polymarket on Amoy", () => {
  it("verifies orders against Amoy's ExchangeV3, not Polygon's", async () => {
    const fake = await startPolymarketFake({ seed: 32, chainId: 80002, exchangeVersion: 3 });
    try {
      const trader = privateKeyToAccount(HARDHAT1);
      const creds = await createAmoyCreds(fake.clobUrl, trader);
      const m = fake.script.market(SHUTDOWN);
      const spec = { tokenId: m.yesTokenId, side: "BUY" as const, ...limitAmounts("BUY", 0.15, 10) };
      const post = async (order: unknown) =>
        (
          await l2Fetch(fake.clobUrl, creds, trader.address, "POST", "/order", {
            order,
            owner: creds.apiKey,
            orderType: "GTC",
          })
        ).json;
      const polygon = await signOrder(trader, { ...spec, version: 3, chainId: 80002 });
      expect((await post(polygon)).error).toBe("invalid signature");
      const amoy = await signOrder(trader, {
        ...spec,
        version: 3,
        chainId: 80002,
        verifyingContract: AMOY_EXCHANGE_V3,
      });
      expect(await post(amoy)).toMatchObject({ success: true, status: "live" });
    } finally {
      await fake.close();
    }
  });
});

async function createAmoyCreds(clobUrl: string, account: typeof owner): Promise<Creds> {
  const res = await fetch(`${clobUrl}/auth/api-key`, {
    method: "POST",
    headers: await l1Headers(account, { chainId: 80002 }),
  });
  if (res.status !== 200) throw new Error(`create api key: ${res.status}`);
  return (await res.json()) as Creds;
}
