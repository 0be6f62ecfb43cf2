import { recoverTypedDataAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ORDER_TYPES, orderDomain, type PolymarketFake, startPolymarketFake } from "../src/polymarket/index";
import {
  type Creds,
  createCreds,
  HARDHAT0,
  HARDHAT1,
  type Json,
  l2Fetch,
  limitAmounts,
  signOrder,
  WsProbe,
  ZERO32,
} from "./polymarket-helpers";

const alice = privateKeyToAccount(HARDHAT0);
const bob = privateKeyToAccount(HARDHAT1);
const SHUTDOWN = "us-government-shutdown-by-december-31-2026";

describe("fake Polymarket — CLOB V2 orders", () => {
  let fake: PolymarketFake;
  let aliceCreds: Creds;
  let bobCreds: Creds;

  beforeAll(async () => {
    fake = await startPolymarketFake({ seed: 21, ordersPageSize: 2 });
    aliceCreds = await createCreds(fake.clobUrl, alice);
    bobCreds = await createCreds(fake.clobUrl, bob);
  });
  afterAll(() => fake.close());
  beforeEach(async () => {
    fake.script.setExchangeVersion(2);
    // a known book: YES bids 0.18/0.19, asks 0.21/0.22
    fake.script.setBook(SHUTDOWN, {
      bids: [
        [0.18, 100],
        [0.19, 50],
      ],
      asks: [
        [0.21, 40],
        [0.22, 100],
      ],
    });
    await l2Fetch(fake.clobUrl, aliceCreds, alice.address, "DELETE", "/cancel-all");
    await l2Fetch(fake.clobUrl, bobCreds, bob.address, "DELETE", "/cancel-all");
  });

  const post = async (who: typeof alice, creds: Creds, order: unknown, extra: Record<string, unknown> = {}) =>
    l2Fetch(fake.clobUrl, creds, who.address, "POST", "/order", {
      order,
      owner: creds.apiKey,
      orderType: "GTC",
      ...extra,
    });
  const limit = (
    who: typeof alice,
    tokenId: string,
    side: "BUY" | "SELL",
    price: number,
    size: number,
    more = {},
  ) => signOrder(who, { tokenId, side, ...limitAmounts(side, price, size), ...more });
  const book = async (tokenId: string) =>
    (await (await fetch(`${fake.clobUrl}/book?token_id=${tokenId}`)).json()) as Json;

  it("signs like the self-computed known-answer vector and the fake's domain recovers it", async () => {
    const message = {
      salt: 123456789n,
      maker: alice.address,
      signer: alice.address,
      tokenId: 1234n,
      makerAmount: 50000000n,
      takerAmount: 100000000n,
      side: 0,
      signatureType: 0,
      timestamp: 1713398400000n,
      metadata: ZERO32,
      builder: ZERO32,
    };
    const domain = orderDomain(2, false, 137);
    const sig = await alice.signTypedData({ domain, types: ORDER_TYPES, primaryType: "Order", message });
    expect(sig).toBe(
      "0x0e4ca7f648857ad2df950f0fa85b9122c07dabf4682558d4e812002ee9c9cdcf55d3609d2b523c842b613875fb09eeca0a36eca70825387eec8403749637e1fb1b",
    );
    expect(
      await recoverTypedDataAddress({
        domain,
        types: ORDER_TYPES,
        primaryType: "Order",
        message,
        signature: sig,
      }),
    ).toBe(alice.address);
  });

  it("accepts a viem-signed resting order: live, in the book, in /data/orders and on the user channel", async () => {
    const m = fake.script.market(SHUTDOWN);
    const user = await WsProbe.open(fake.wsUserUrl);
    user.send({ auth: aliceCreds, markets: [m.conditionId], type: "user" });
    const otherMarket = await WsProbe.open(fake.wsUserUrl);
    otherMarket.send({
      auth: aliceCreds,
      markets: [fake.script.market("nba-lal-bos-2026-12-25").conditionId],
      type: "user",
    });
    const otherKey = await WsProbe.open(fake.wsUserUrl);
    otherKey.send({ auth: bobCreds, markets: [], type: "user" });
    await new Promise((r) => setTimeout(r, 50));
    const order = await limit(alice, m.yesTokenId, "BUY", 0.15, 10);
    const res = await post(alice, aliceCreds, order);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, errorMsg: "", status: "live", tradeIDs: [] });
    expect(res.json.orderID).toMatch(/^0x[0-9a-f]{64}$/);
    const b = await book(m.yesTokenId);
    expect(b.bids[0]).toEqual({ price: "0.15", size: "10" });
    const open = await l2Fetch(fake.clobUrl, aliceCreds, alice.address, "GET", "/data/orders");
    expect(open.json.data[0]).toMatchObject({
      id: res.json.orderID,
      status: "LIVE",
      side: "BUY",
      price: "0.15",
      original_size: "10",
      size_matched: "0",
      asset_id: m.yesTokenId,
      market: m.conditionId,
      outcome: "Yes",
      order_type: "GTC",
    });
    const placement = await user.next((x) => x.event_type === "order" && x.type === "PLACEMENT");
    expect(placement).toMatchObject({
      id: res.json.orderID,
      status: "LIVE",
      price: "0.15",
      original_size: "10",
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(otherMarket.messages).toEqual([]); // filtered by condition id
    expect(otherKey.messages).toEqual([]); // another key's orders are not visible
    user.close();
    otherMarket.close();
    otherKey.close();
  });

  it("rejects a tampered order and a forged signer", async () => {
    const m = fake.script.market(SHUTDOWN);
    const order = await limit(alice, m.yesTokenId, "BUY", 0.15, 10);
    const tampered = { ...order, makerAmount: "1600000" };
    const res = await post(alice, aliceCreds, tampered);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "invalid signature" });
    const bobsOrder = await limit(bob, m.yesTokenId, "BUY", 0.15, 10);
    const res2 = await post(alice, aliceCreds, bobsOrder);
    expect(res2.status).toBe(400);
    expect(res2.json.error).toContain("signer");
    const res3 = await l2Fetch(fake.clobUrl, aliceCreds, alice.address, "POST", "/order", {
      order,
      owner: bobCreds.apiKey,
      orderType: "GTC",
    });
    expect(res3.json.error).toContain("owner");
  });

  it("verifies the neg-risk exchange domain and the exchange version", async () => {
    const fed = fake.script.market("fed-decision-december-2026-25-bps-cut");
    const wrongExchange = await limit(alice, fed.yesTokenId, "BUY", 0.5, 10); // signed for the normal exchange
    expect((await post(alice, aliceCreds, wrongExchange)).json).toEqual({ error: "invalid signature" });
    const right = await limit(alice, fed.yesTokenId, "BUY", 0.5, 10, { negRisk: true });
    expect((await post(alice, aliceCreds, right)).json.success).toBe(true);

    const m = fake.script.market(SHUTDOWN);
    const v3 = await limit(alice, m.yesTokenId, "BUY", 0.1, 10, { version: 3 });
    expect((await post(alice, aliceCreds, v3)).json.error).toContain("order_version_mismatch");
    fake.script.setExchangeVersion(3);
    expect((await (await fetch(`${fake.clobUrl}/version`)).json()) as Json).toEqual({ version: 3 });
    expect((await post(alice, aliceCreds, v3)).json.success).toBe(true);
  });

  it("rejects off-tick prices, sizes under the minimum, bad expirations and duplicates", async () => {
    const m = fake.script.market(SHUTDOWN);
    const offTick = await limit(alice, m.yesTokenId, "BUY", 0.155, 10);
    const r1 = await post(alice, aliceCreds, offTick);
    expect(r1.status).toBe(400);
    expect(r1.json.error).toContain("minimum tick size");
    const fine = fake.script.market("fed-chair-announces-resignation-by-december-31-2026"); // 0.001 tick
    const onFineTick = await limit(alice, fine.yesTokenId, "BUY", 0.055, 10);
    expect((await post(alice, aliceCreds, onFineTick)).json.success).toBe(true);

    const precise = await limit(alice, m.yesTokenId, "BUY", 0.15, 10.123);
    expect((await post(alice, aliceCreds, precise)).json.error).toBe(
      "invalid amounts, the buy orders maker amount supports a max accuracy of 4 decimals, taker amount a max of 2 decimals",
    );

    const small = await limit(alice, m.yesTokenId, "BUY", 0.15, 2);
    expect((await post(alice, aliceCreds, small)).json.error).toContain("lower than the minimum");

    const gtdSoon = await limit(alice, m.yesTokenId, "BUY", 0.15, 10, {
      expiration: String(Math.floor(Date.now() / 1000) + 10),
    });
    const r3 = await post(alice, aliceCreds, gtdSoon, { orderType: "GTD" });
    expect(r3.json.error).toContain("xpiration");

    const once = await limit(alice, m.yesTokenId, "BUY", 0.12, 10);
    expect((await post(alice, aliceCreds, once)).json.success).toBe(true);
    expect((await post(alice, aliceCreds, once)).json.error).toContain("Duplicated");
  });

  it("fills a marketable order against the book and reports the trade everywhere", async () => {
    const m = fake.script.market(SHUTDOWN);
    const market = await WsProbe.open(fake.wsMarketUrl);
    market.send({ assets_ids: [m.yesTokenId, m.noTokenId], type: "market" });
    await market.next((x) => x.event_type === "book");
    const user = await WsProbe.open(fake.wsUserUrl);
    user.send({ auth: bobCreds, markets: [], type: "user" });
    await new Promise((r) => setTimeout(r, 50));

    const before = await l2Fetch(
      fake.clobUrl,
      bobCreds,
      bob.address,
      "GET",
      "/balance-allowance?asset_type=COLLATERAL",
    );
    const order = await limit(bob, m.yesTokenId, "BUY", 0.21, 10);
    const res = await post(bob, bobCreds, order);
    expect(res.json).toMatchObject({
      success: true,
      status: "matched",
      takingAmount: "10",
      makingAmount: "2.1",
    });
    expect(res.json.tradeIDs).toHaveLength(1);

    const b = await book(m.yesTokenId);
    expect(b.asks.at(-1)).toEqual({ price: "0.21", size: "30" });
    expect(b.last_trade_price).toBe("0.21");

    const after = await l2Fetch(
      fake.clobUrl,
      bobCreds,
      bob.address,
      "GET",
      "/balance-allowance?asset_type=COLLATERAL",
    );
    expect(BigInt(before.json.balance) - BigInt(after.json.balance)).toBe(2_100_000n);
    const pos = await l2Fetch(
      fake.clobUrl,
      bobCreds,
      bob.address,
      "GET",
      `/balance-allowance?asset_type=CONDITIONAL&token_id=${m.yesTokenId}`,
    );
    expect(pos.json.balance).toBe("10000000");

    const trades = await l2Fetch(fake.clobUrl, bobCreds, bob.address, "GET", "/data/trades");
    expect(trades.json.data[0]).toMatchObject({
      id: res.json.tradeIDs[0],
      taker_order_id: res.json.orderID,
      side: "BUY",
      size: "10",
      price: "0.21",
      status: "MATCHED",
      trader_side: "TAKER",
      asset_id: m.yesTokenId,
    });

    const userTrade = await user.next((x) => x.event_type === "trade");
    expect(userTrade).toMatchObject({
      id: res.json.tradeIDs[0],
      status: "MATCHED",
      size: "10",
      price: "0.21",
    });
    const yesPrint = await market.next(
      (x) => x.event_type === "last_trade_price" && x.asset_id === m.yesTokenId,
    );
    expect(yesPrint).toMatchObject({ price: "0.21", size: "10", side: "BUY" });
    const noPrint = await market.next(
      (x) => x.event_type === "last_trade_price" && x.asset_id === m.noTokenId,
    );
    expect(noPrint).toMatchObject({ price: "0.79", side: "SELL" });
    const change = await market.next((x) => x.event_type === "price_change");
    expect(change.price_changes).toContainEqual(
      expect.objectContaining({
        asset_id: m.yesTokenId,
        price: "0.21",
        size: "30",
        side: "SELL",
        best_ask: "0.21",
      }),
    );

    fake.script.tick();
    fake.script.tick();
    const confirmed = await user.next((x) => x.event_type === "trade" && x.status === "CONFIRMED");
    expect(confirmed.id).toBe(res.json.tradeIDs[0]);

    const positions = (await (await fetch(`${fake.dataUrl}/positions?user=${bob.address}`)).json()) as Json[];
    expect(positions.find((p) => p.asset === m.yesTokenId)).toMatchObject({
      conditionId: m.conditionId,
      size: 10,
      outcome: "Yes",
      outcomeIndex: 0,
      oppositeAsset: m.noTokenId,
    });

    // now bob holds YES and can sell it
    fake.script.setBook(SHUTDOWN, { bids: [[0.18, 100]], asks: [[0.25, 100]] });
    const sell = await limit(bob, m.yesTokenId, "SELL", 0.18, 10);
    expect((await post(bob, bobCreds, sell)).json).toMatchObject({
      success: true,
      status: "matched",
      takingAmount: "1.8",
    });
    const sellAgain = await limit(bob, m.yesTokenId, "SELL", 0.18, 10);
    expect((await post(bob, bobCreds, sellAgain)).json.error).toBe("not enough balance / allowance");
    market.close();
    user.close();
  });

  it("charges the taker the market's fee in pUSD (shares × rate × p(1 − p)); the maker pays nothing", async () => {
    const FED = "fed-decision-december-2026-no-change"; // feeSchedule rate 0.05, exponent 1
    const m = fake.script.market(FED);
    fake.script.setBook(FED, { bids: [[0.1, 100]], asks: [[0.4, 100]] });
    const balance = async (who: typeof alice, creds: Creds) =>
      BigInt(
        (await l2Fetch(fake.clobUrl, creds, who.address, "GET", "/balance-allowance?asset_type=COLLATERAL"))
          .json.balance as string,
      );
    const [aliceBefore, bobBefore] = [await balance(alice, aliceCreds), await balance(bob, bobCreds)];
    // alice rests a NO bid at 0.75 (a YES ask at 0.25); bob takes 8 YES at 0.25
    expect(
      (
        await post(
          alice,
          aliceCreds,
          await limit(alice, m.noTokenId, "BUY", 0.75, 20, { negRisk: m.negRisk }),
        )
      ).json.status,
    ).toBe("live");
    const res = await post(
      bob,
      bobCreds,
      await limit(bob, m.yesTokenId, "BUY", 0.25, 8, { negRisk: m.negRisk }),
    );
    expect(res.json).toMatchObject({ status: "matched", takingAmount: "8", makingAmount: "2" });
    // bob: 8 × 0.25 = 2.00 plus 8 × 0.05 × 0.25 × 0.75 = 0.075 in fees
    expect(bobBefore - (await balance(bob, bobCreds))).toBe(2_075_000n);
    // alice (maker, taker-only schedule): her 8 × 0.75 and no fee
    expect(aliceBefore - (await balance(alice, aliceCreds))).toBe(6_000_000n);
  });

  it("matches a NO buyer with a YES buyer across tokens (complementary prices)", async () => {
    const m = fake.script.market(SHUTDOWN);
    fake.script.setBook(SHUTDOWN, { bids: [[0.1, 100]], asks: [[0.4, 100]] });
    const aliceUser = await WsProbe.open(fake.wsUserUrl);
    aliceUser.send({ auth: aliceCreds, markets: [m.conditionId], type: "user" });
    await new Promise((r) => setTimeout(r, 50));
    // alice bids 0.75 for NO, which shows as a YES ask at 0.25
    const noBid = await limit(alice, m.noTokenId, "BUY", 0.75, 20);
    const rested = await post(alice, aliceCreds, noBid);
    expect(rested.json.status).toBe("live");
    expect((await book(m.yesTokenId)).asks.at(-1)).toEqual({ price: "0.25", size: "20" });
    expect((await book(m.noTokenId)).bids.at(-1)).toEqual({ price: "0.75", size: "20" });

    const yesBuy = await limit(bob, m.yesTokenId, "BUY", 0.25, 8);
    const res = await post(bob, bobCreds, yesBuy);
    expect(res.json).toMatchObject({ status: "matched", takingAmount: "8", makingAmount: "2" });
    const update = await aliceUser.next((x) => x.event_type === "order" && x.type === "UPDATE");
    expect(update).toMatchObject({ id: rested.json.orderID, size_matched: "8", status: "LIVE" });
    const makerTrade = await aliceUser.next((x) => x.event_type === "trade");
    expect(makerTrade.trader_side).toBe("MAKER");
    expect(makerTrade.maker_orders[0]).toMatchObject({
      order_id: rested.json.orderID,
      price: "0.75",
      matched_amount: "8",
    });
    const alicePos = await l2Fetch(
      fake.clobUrl,
      aliceCreds,
      alice.address,
      "GET",
      `/balance-allowance?asset_type=CONDITIONAL&token_id=${m.noTokenId}`,
    );
    expect(alicePos.json.balance).toBe("8000000");
    aliceUser.close();
  });

  it("handles FOK, FAK and post-only like the venue", async () => {
    const m = fake.script.market(SHUTDOWN);
    // FOK BUY: spend $20 at ≤ 0.22 — the book only has 40@0.21 + 100@0.22 = $30.4, so $20 fills
    const fok = await signOrder(bob, {
      tokenId: m.yesTokenId,
      side: "BUY",
      makerAmount: 20_000_000n,
      takerAmount: 90_909_000n,
    });
    const r = await post(bob, bobCreds, fok, { orderType: "FOK" });
    expect(r.json).toMatchObject({ success: true, status: "matched" });
    expect(Number(r.json.makingAmount)).toBeCloseTo(20, 4);
    const tooBig = await signOrder(bob, {
      tokenId: m.yesTokenId,
      side: "BUY",
      makerAmount: 500_000_000n,
      takerAmount: 2_272_727_200n,
    });
    const r2 = await post(bob, bobCreds, tooBig, { orderType: "FOK" });
    expect(r2.status).toBe(400);
    expect(r2.json.error).toContain("FOK");
    const fak = await signOrder(bob, {
      tokenId: m.yesTokenId,
      side: "BUY",
      makerAmount: 500_000_000n,
      takerAmount: 2_272_727_200n,
    });
    const r3 = await post(bob, bobCreds, fak, { orderType: "FAK" });
    expect(r3.json.success).toBe(true);
    expect(r3.json.transactionsHashes).toEqual([]);
    expect((await book(m.yesTokenId)).asks).toEqual([]);

    fake.script.setBook(SHUTDOWN, { bids: [[0.18, 100]], asks: [[0.21, 100]] });
    const crossing = await limit(alice, m.yesTokenId, "BUY", 0.21, 10);
    expect((await post(alice, aliceCreds, crossing, { postOnly: true })).json.error).toContain("crosses");
    const passive = await limit(alice, m.yesTokenId, "BUY", 0.2, 10);
    expect((await post(alice, aliceCreds, passive, { postOnly: true })).json.status).toBe("live");
    const badType = await limit(alice, m.yesTokenId, "BUY", 0.2, 11);
    expect(
      (await post(alice, aliceCreds, badType, { postOnly: true, orderType: "FOK" })).json.error,
    ).toContain("post-only");
  });

  it("cancels one, many, by market and all; pages /data/orders with next_cursor", async () => {
    const m = fake.script.market(SHUTDOWN);
    const ids: string[] = [];
    for (const p of [0.11, 0.12, 0.13, 0.14, 0.15]) {
      const res = await post(alice, aliceCreds, await limit(alice, m.yesTokenId, "BUY", p, 10));
      ids.push(res.json.orderID);
    }
    const seen: string[] = [];
    let cursor = "MA==";
    let pages = 0;
    while (cursor !== "LTE=") {
      const page = await l2Fetch(
        fake.clobUrl,
        aliceCreds,
        alice.address,
        "GET",
        `/data/orders?next_cursor=${cursor}`,
      );
      seen.push(...page.json.data.map((o: Json) => o.id));
      cursor = page.json.next_cursor;
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);

    const one = await l2Fetch(fake.clobUrl, aliceCreds, alice.address, "DELETE", "/order", {
      orderID: ids[0],
    });
    expect(one.json).toEqual({ canceled: [ids[0]], not_canceled: {} });
    const twice = await l2Fetch(fake.clobUrl, aliceCreds, alice.address, "DELETE", "/order", {
      orderID: ids[0],
    });
    expect(twice.json.not_canceled[ids[0]!]).toBe("already canceled or matched");
    const byBob = await l2Fetch(fake.clobUrl, bobCreds, bob.address, "DELETE", "/order", { orderID: ids[1] });
    expect(byBob.json.canceled).toEqual([]);
    const many = await l2Fetch(fake.clobUrl, aliceCreds, alice.address, "DELETE", "/orders", [
      ids[1],
      ids[2],
    ]);
    expect(many.json.canceled).toEqual([ids[1], ids[2]]);
    const mkt = await l2Fetch(fake.clobUrl, aliceCreds, alice.address, "DELETE", "/cancel-market-orders", {
      market: m.conditionId,
      asset_id: m.yesTokenId,
    });
    expect(mkt.json.canceled).toEqual([ids[3], ids[4]]);
    const status = await l2Fetch(fake.clobUrl, aliceCreds, alice.address, "GET", `/data/order/${ids[0]}`);
    expect(status.json.status).toBe("CANCELED");
    expect((await book(m.yesTokenId)).bids.map((l: Json) => l.price)).toEqual(["0.18", "0.19"]);
  });

  it("accepts proxy/safe orders only for a registered funder", async () => {
    const m = fake.script.market(SHUTDOWN);
    const safe = "0x1111111111111111111111111111111111111111" as const;
    const unregistered = await limit(bob, m.yesTokenId, "BUY", 0.15, 10, { maker: safe, signatureType: 2 });
    expect((await post(bob, bobCreds, unregistered)).json.error).toBe("invalid signature");
    fake.script.registerWallet({ address: bob.address, funder: safe, signatureType: 2, collateral: 100 });
    const registered = await limit(bob, m.yesTokenId, "BUY", 0.15, 10, { maker: safe, signatureType: 2 });
    expect((await post(bob, bobCreds, registered)).json.success).toBe(true);
    const bal = await l2Fetch(
      fake.clobUrl,
      bobCreds,
      bob.address,
      "GET",
      "/balance-allowance?asset_type=COLLATERAL&signature_type=2",
    );
    expect(bal.json.balance).toBe("100000000");
    const tooMuch = await limit(bob, m.yesTokenId, "BUY", 0.15, 1000, { maker: safe, signatureType: 2 });
    expect((await post(bob, bobCreds, tooMuch)).json.error).toBe("not enough balance / allowance");
  });

  it("answers a batch with per-order success and errorMsg", async () => {
    const m = fake.script.market(SHUTDOWN);
    const good = await limit(alice, m.yesTokenId, "BUY", 0.16, 10);
    const bad = await limit(alice, m.yesTokenId, "BUY", 0.165, 10);
    const res = await l2Fetch(fake.clobUrl, aliceCreds, alice.address, "POST", "/orders", [
      { order: good, owner: aliceCreds.apiKey, orderType: "GTC" },
      { order: bad, owner: aliceCreds.apiKey, orderType: "GTC" },
    ]);
    expect(res.status).toBe(200);
    expect(res.json[0]).toMatchObject({ success: true, status: "live" });
    expect(res.json[1].success).toBe(false);
    expect(res.json[1].errorMsg).toContain("minimum tick size");
  });
});
