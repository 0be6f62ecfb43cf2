/**
 * The fake Polymarket's limits and deprecations, as the venue has them (VENUES-AUDIT #6, #8, #13):
 * deprecated Gamma offset lists with a 422 past their offset cap, keyset pages and id filters with
 * their caps, `/prices-history` windows of at most 15 days and nothing below 720-minute fidelity for
 * closed or resolved markets, `oneDayPriceChange` on the same history, and a market socket that can
 * stall while it still answers PING.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PolymarketFake, startPolymarketFake } from "../src/polymarket/index";
import { DEFAULT_WORLD, type SeedMarket } from "../src/world/seed";
import { type Json, WsProbe } from "./polymarket-helpers";

const EXTRA: SeedMarket[] = Array.from({ length: 150 }, (_, i) => ({
  venue: "polymarket",
  key: `limit-market-${i}`,
  eventKey: `limit-event-${i}`,
  eventTitle: `Limit event ${i}`,
  category: "crypto",
  question: `Limit question ${i}?`,
  rules: "Limit rules.",
  settlementSource: "Generator",
  closeTime: "2027-03-01T00:00:00Z",
  yesPrice: 0.4,
  tickSize: 0.01,
}));

describe("fake Polymarket — venue limits and deprecations", () => {
  let fake: PolymarketFake;
  beforeAll(async () => {
    fake = await startPolymarketFake({ seed: 5, world: [...DEFAULT_WORLD, ...EXTRA], gammaMaxOffset: 100 });
  });
  afterAll(() => fake.close());

  const gamma = async (path: string) => {
    const res = await fetch(`${fake.gammaUrl}${path}`);
    return { status: res.status, headers: res.headers, json: (await res.json()) as Json };
  };
  const clob = async (path: string) => {
    const res = await fetch(`${fake.clobUrl}${path}`);
    return { status: res.status, json: (await res.json()) as Json };
  };

  it("marks the offset lists deprecated and answers 422 past their offset cap", async () => {
    for (const [path, keyset] of [
      ["/markets", "/markets/keyset"],
      ["/events", "/events/keyset"],
    ] as const) {
      const ok = await gamma(`${path}?limit=10&offset=100`);
      expect(ok.status).toBe(200);
      expect(ok.headers.get("deprecation")).toBe("true");
      expect(ok.headers.get("sunset")).toBe("Fri, 01 May 2026 00:00:00 GMT");
      expect(ok.headers.get("warning")).toBe(`299 - "use ${keyset}"`);
      const past = await gamma(`${path}?limit=10&offset=101`);
      expect(past.status).toBe(422);
      expect(past.json).toEqual({ error: `offset too large, use ${keyset}` });
    }
    // The keyset endpoints carry no deprecation.
    expect((await gamma("/markets/keyset?limit=1")).headers.get("deprecation")).toBeNull();
  });

  it("pages /markets/keyset 100 at most, /events/keyset 500 at most, next_cursor absent at the end", async () => {
    const first = await gamma("/markets/keyset?limit=500");
    expect(first.json.markets).toHaveLength(100);
    let cursor: string | undefined = first.json.next_cursor;
    let seen = first.json.markets.length;
    while (cursor) {
      const page = await gamma(`/markets/keyset?limit=500&after_cursor=${cursor}`);
      seen += page.json.markets.length;
      cursor = page.json.next_cursor;
      if (!cursor) expect(page.json).not.toHaveProperty("next_cursor");
    }
    expect(seen).toBe(fake.script.markets().filter((m) => m.status === "open").length);
    const events = await gamma("/events/keyset?limit=1000");
    expect(events.json.events.length).toBeGreaterThan(100);
    expect(events.json.events.length).toBeLessThanOrEqual(500);
  });

  it("looks markets up by condition_ids and clob_token_ids on keyset, 100 ids at most", async () => {
    const info = fake.script.market("limit-market-3");
    const byCondition = await gamma(`/markets/keyset?condition_ids=${info.conditionId}`);
    expect(byCondition.json.markets.map((m: Json) => m.conditionId)).toEqual([info.conditionId]);
    const byToken = await gamma(`/markets/keyset?clob_token_ids=${info.noTokenId}`);
    expect(byToken.json.markets.map((m: Json) => m.conditionId)).toEqual([info.conditionId]);
    const many = Array.from({ length: 101 }, (_, i) => `0x${i.toString(16).padStart(64, "0")}`).join(",");
    expect((await gamma(`/markets/keyset?condition_ids=${many}`)).status).toBe(422);
  });

  it("refuses a prices-history window over 15 days, and serves nothing after now", async () => {
    const info = fake.script.market("limit-market-4");
    const end = Math.floor(Date.now() / 1000) - 3600;
    const path = (start: number, stop: number, fidelity = 60) =>
      `/prices-history?market=${info.yesTokenId}&startTs=${start}&endTs=${stop}&fidelity=${fidelity}`;
    const ok = await clob(path(end - 1_296_000, end));
    expect(ok.status).toBe(200);
    expect(ok.json.history.length).toBeGreaterThan(300);
    const tooLong = await clob(path(end - 1_296_001, end));
    expect(tooLong.status).toBe(400);
    expect(tooLong.json).toEqual({ error: "invalid filters: 'startTs' and 'endTs' interval is too long" });
    const future = await clob(path(end, end + 7200, 1));
    const last = future.json.history.at(-1).t as number;
    expect(last).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it("has nothing below 720-minute fidelity for closed and resolved markets", async () => {
    const end = Math.floor(Date.now() / 1000) - 3600;
    const start = end - 5 * 86_400;
    for (const [key, finish] of [
      ["limit-market-5", (k: string) => fake.script.resolveMarket(k, "yes")],
      ["limit-market-6", (k: string) => fake.script.closeMarket(k)],
    ] as const) {
      const info = fake.script.market(key);
      const path = (fidelity: number) =>
        `/prices-history?market=${info.yesTokenId}&startTs=${start}&endTs=${end}&fidelity=${fidelity}`;
      expect((await clob(path(60))).json.history.length).toBeGreaterThan(0);
      finish(key);
      for (const fidelity of [1, 60, 719]) expect((await clob(path(fidelity))).json).toEqual({ history: [] });
      const coarse = (await clob(path(720))).json.history as Array<{ t: number }>;
      expect(coarse.length).toBe(10);
      expect(coarse[1]!.t - coarse[0]!.t).toBe(43_200);
    }
  });

  it("sends oneDayPriceChange as the displayed price minus the history's price 24 hours ago", async () => {
    const info = fake.script.market("limit-market-7");
    const [market] = (await gamma(`/markets/keyset?condition_ids=${info.conditionId}`)).json.markets;
    const prices = JSON.parse(market.outcomePrices) as string[];
    const yes = Number(prices[JSON.parse(market.outcomes).indexOf("Yes")]);
    const dayAgo = Math.floor(Date.now() / 1000) - 86_400;
    const around = (
      await clob(
        `/prices-history?market=${info.yesTokenId}&startTs=${dayAgo - 120}&endTs=${dayAgo + 120}&fidelity=1`,
      )
    ).json.history as Array<{ p: number }>;
    const then = yes - market.oneDayPriceChange;
    expect(Math.min(...around.map((p) => Math.abs(p.p - then)))).toBeLessThan(0.003);
  });

  it("stalls market sockets on demand: PONG still comes, market messages do not", async () => {
    const info = fake.script.market("limit-market-8");
    const ws = await WsProbe.open(fake.wsMarketUrl);
    ws.send({ assets_ids: [info.yesTokenId, info.noTokenId], type: "market" });
    await ws.next((m) => m.event_type === "book");
    expect(fake.script.marketSubscriptions()).toEqual([2]);
    expect(fake.script.stallMarketSockets()).toBe(1);
    const before = ws.messages.length;
    fake.script.printTrade(info.yesTokenId, { price: "0.45", size: "10", side: "BUY" });
    ws.send("PING");
    expect(await ws.next((m) => m === "PONG")).toBe("PONG");
    expect(ws.messages.slice(before)).toEqual(["PONG"]);
    ws.close();
    // A new connection is not stalled.
    const fresh = await WsProbe.open(fake.wsMarketUrl);
    fresh.send({ assets_ids: [info.yesTokenId], type: "market" });
    expect((await fresh.next((m) => m.event_type === "book")).asset_id).toBe(info.yesTokenId);
    fresh.close();
  });
});
