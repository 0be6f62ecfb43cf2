import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type PolymarketFake, startPolymarketFake } from "../src/polymarket/index";
import { createCreds, HARDHAT0, type Json, WsProbe } from "./polymarket-helpers";

const GOV = "us-government-shutdown-by-december-31-2026";

describe("fake Polymarket — WebSocket channels", () => {
  let fake: PolymarketFake;
  beforeAll(async () => {
    fake = await startPolymarketFake({ seed: 31 });
  });
  afterAll(() => fake.close());

  it("exposes the channels under the ws base", () => {
    expect(fake.wsMarketUrl).toBe(`${fake.wsUrl}/market`);
    expect(fake.wsUserUrl).toBe(`${fake.wsUrl}/user`);
  });

  it("sends the initial book dump on subscribe, with NO as the complement of YES", async () => {
    const m = fake.script.market(GOV);
    const ws = await WsProbe.open(fake.wsMarketUrl);
    ws.send({ assets_ids: [m.yesTokenId, m.noTokenId], type: "market", custom_feature_enabled: false });
    const yes = await ws.next((x) => x.event_type === "book" && x.asset_id === m.yesTokenId);
    const no = await ws.next((x) => x.event_type === "book" && x.asset_id === m.noTokenId);
    expect(Array.isArray(JSON.parse(ws.raw[0]!))).toBe(true);
    expect(yes.market).toBe(m.conditionId);
    expect(yes.timestamp).toMatch(/^\d{13}$/);
    expect(yes.tick_size).toBe("0.01");
    const bids = yes.bids.map((l: Json) => Number(l.price));
    expect(bids).toEqual([...bids].sort((a, b) => a - b));
    expect(no.bids.at(-1).price).toBe(String(Math.round((1 - Number(yes.asks.at(-1).price)) * 100) / 100));
    expect(no.bids).not.toEqual(yes.bids);
    ws.close();
  });

  it("answers PING with PONG", async () => {
    const ws = await WsProbe.open(fake.wsMarketUrl);
    ws.send("PING");
    expect(await ws.next((x) => x === "PONG")).toBe("PONG");
    ws.close();
  });

  it("streams price_change and last_trade_price when a trade prints", async () => {
    const m = fake.script.market(GOV);
    fake.script.setBook(GOV, {
      bids: [[0.18, 100]],
      asks: [
        [0.22, 50],
        [0.23, 80],
      ],
    });
    const ws = await WsProbe.open(fake.wsMarketUrl);
    ws.send({ assets_ids: [m.yesTokenId], type: "market" });
    await ws.next((x) => x.event_type === "book");
    fake.script.printTrade(GOV, { price: 0.22, size: 20, side: "BUY" });
    const ltp = await ws.next((x) => x.event_type === "last_trade_price");
    expect(ltp).toMatchObject({
      asset_id: m.yesTokenId,
      market: m.conditionId,
      price: "0.22",
      size: "20",
      side: "BUY",
    });
    expect(ltp.transaction_hash).toMatch(/^0x[0-9a-f]{64}$/);
    const pc = await ws.next((x) => x.event_type === "price_change");
    expect(pc.market).toBe(m.conditionId);
    expect(pc.price_changes).toEqual([
      expect.objectContaining({
        asset_id: m.yesTokenId,
        price: "0.22",
        size: "30",
        side: "SELL",
        best_bid: "0.18",
        best_ask: "0.22",
      }),
    ]);
    // NO-only subscribers get the complementary view
    ws.send({ assets_ids: [m.noTokenId], operation: "subscribe" });
    await ws.next((x) => x.event_type === "book" && x.asset_id === m.noTokenId);
    ws.send({ assets_ids: [m.yesTokenId], operation: "unsubscribe" });
    await new Promise((r) => setTimeout(r, 30));
    ws.clear();
    fake.script.printTrade(GOV, { price: 0.22, size: 30, side: "BUY" });
    const pc2 = await ws.next((x) => x.event_type === "price_change");
    expect(pc2.price_changes).toEqual([
      expect.objectContaining({
        asset_id: m.noTokenId,
        price: "0.78",
        size: "0",
        side: "BUY",
        best_bid: "0.77",
      }),
    ]);
    expect(ws.messages.some((x) => x.asset_id === m.yesTokenId)).toBe(false);
    ws.close();
  });

  it("sends tick_size_change when the book goes beyond 0.96, and custom-feature events", async () => {
    const m = fake.script.market("top-grossing-movie-of-2026-avatar-fire-and-ash");
    const ws = await WsProbe.open(fake.wsMarketUrl);
    ws.send({ assets_ids: [m.yesTokenId], type: "market", custom_feature_enabled: true });
    await ws.next((x) => x.event_type === "book");
    fake.script.setBook(m.key, { bids: [[0.97, 10]], asks: [[0.98, 10]] });
    const tsc = await ws.next((x) => x.event_type === "tick_size_change");
    expect(tsc).toMatchObject({ asset_id: m.yesTokenId, old_tick_size: "0.01", new_tick_size: "0.001" });
    const bba = await ws.next((x) => x.event_type === "best_bid_ask");
    expect(bba).toMatchObject({ best_bid: "0.97", best_ask: "0.98", spread: "0.01" });
    const tick = await (await fetch(`${fake.clobUrl}/tick-size?token_id=${m.yesTokenId}`)).json();
    expect(tick).toEqual({ minimum_tick_size: 0.001 });
    fake.script.resolveMarket(m.key, "yes");
    const resolved = await ws.next((x) => x.event_type === "market_resolved");
    expect(resolved).toMatchObject({
      market: m.conditionId,
      winning_asset_id: m.yesTokenId,
      winning_outcome: "Yes",
    });
    ws.close();
  });

  it("announces a scripted new listing to custom-feature subscribers and lists it in Gamma", async () => {
    const ws = await WsProbe.open(fake.wsMarketUrl);
    ws.send({ assets_ids: [], type: "market", custom_feature_enabled: true });
    await new Promise((r) => setTimeout(r, 30));
    const info = fake.script.addMarket({
      venue: "polymarket",
      key: "will-it-snow-in-nyc-on-christmas-2026",
      eventKey: "snow-in-nyc-christmas-2026",
      eventTitle: "Snow in NYC on Christmas 2026?",
      category: "weather",
      question: "Will it snow in NYC on December 25, 2026?",
      rules: "Resolves Yes if Central Park records measurable snowfall on December 25, 2026.",
      settlementSource: "NWS Central Park",
      closeTime: "2026-12-26T05:00:00Z",
      yesPrice: 0.12,
      tickSize: 0.01,
    });
    const msg = await ws.next((x) => x.event_type === "new_market");
    expect(msg).toMatchObject({
      market: info.conditionId,
      slug: info.slug,
      assets_ids: info.tokenIds,
      outcomes: ["Yes", "No"],
    });
    expect(msg.event_message.slug).toBe("snow-in-nyc-christmas-2026");
    const g = (await (await fetch(`${fake.gammaUrl}/markets/slug/${info.slug}`)).json()) as Json;
    expect(JSON.parse(g.clobTokenIds)).toEqual(info.tokenIds);
    ws.close();
  });

  it("malforms scripted WebSocket frames", async () => {
    const m = fake.script.market(GOV);
    const ws = await WsProbe.open(fake.wsMarketUrl);
    fake.script.malformNextWs(1, "truncated");
    ws.send({ assets_ids: [m.yesTokenId], type: "market" });
    await new Promise((r) => setTimeout(r, 50));
    expect(ws.raw).toHaveLength(1);
    expect(() => JSON.parse(ws.raw[0]!)).toThrow();
    fake.script.injectUnexpectedFields(true);
    ws.send({ assets_ids: [m.noTokenId], operation: "subscribe" });
    const book = await ws.next((x) => x.event_type === "book" && x.asset_id === m.noTokenId);
    fake.script.injectUnexpectedFields(false);
    expect(book.unexpectedField).toBe("surprise");
    ws.close();
  });

  it("delivers user-channel events only with valid credentials", async () => {
    const bad = await WsProbe.open(fake.wsUserUrl);
    bad.send({ auth: { apiKey: "x", secret: "y", passphrase: "z" }, markets: [], type: "user" });
    await bad.waitClosed();

    const account = privateKeyToAccount(HARDHAT0);
    const creds = await createCreds(fake.clobUrl, account);
    const good = await WsProbe.open(fake.wsUserUrl);
    good.send({ auth: creds, markets: [], type: "user" });
    good.send("PING");
    expect(await good.next((x) => x === "PONG")).toBe("PONG");
    expect(good.closed).toBe(false);
    good.close();
  });

  it("drops sockets on demand and refuses new ones while down", async () => {
    const ws = await WsProbe.open(fake.wsMarketUrl);
    fake.script.dropWebSockets();
    await ws.waitClosed();
    fake.script.goDown(true);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const s = new WebSocket(fake.wsMarketUrl);
        s.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
        s.on("open", () => reject(new Error("opened while down")));
        s.on("error", () => {});
      });
      expect(status).toBe(503);
    } finally {
      fake.script.goDown(false);
    }
    const again = await WsProbe.open(fake.wsMarketUrl);
    again.close();
  });
});
