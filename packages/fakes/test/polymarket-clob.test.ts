import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PolymarketFake, startPolymarketFake } from "../src/polymarket/index";
import type { Json } from "./polymarket-helpers";

describe("fake Polymarket — CLOB market data", () => {
  let fake: PolymarketFake;
  beforeAll(async () => {
    fake = await startPolymarketFake({ seed: 11 });
  });
  afterAll(() => fake.close());

  const get = async (path: string) => {
    const res = await fetch(`${fake.clobUrl}${path}`);
    const text = await res.text();
    let json: Json = text;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, json };
  };
  const fed = () => fake.script.market("fed-decision-december-2026-25-bps-cut");

  it("serves an OrderBookSummary with string numbers and the best price last on both sides", async () => {
    const { yesTokenId, conditionId } = fed();
    const { status, json: book } = await get(`/book?token_id=${yesTokenId}`);
    expect(status).toBe(200);
    expect(book.market).toBe(conditionId);
    expect(book.asset_id).toBe(yesTokenId);
    expect(book.timestamp).toMatch(/^\d{13}$/);
    expect(book.hash).toMatch(/^[0-9a-f]{40}$/);
    expect(book.tick_size).toBe("0.01");
    expect(book.min_order_size).toBe("5");
    expect(book.neg_risk).toBe(true);
    expect(book.bids.length).toBeGreaterThan(3);
    expect(book.asks.length).toBeGreaterThan(3);
    for (const l of [...book.bids, ...book.asks]) {
      expect(typeof l.price).toBe("string");
      expect(typeof l.size).toBe("string");
    }
    const bids = book.bids.map((l: Json) => Number(l.price));
    const asks = book.asks.map((l: Json) => Number(l.price));
    expect(bids).toEqual([...bids].sort((a, b) => a - b)); // ascending: best bid last
    expect(asks).toEqual([...asks].sort((a, b) => b - a)); // descending: best ask last
    expect(bids.at(-1)).toBeLessThan(asks.at(-1)!);
    // seeded around yesPrice 0.6
    expect((bids.at(-1)! + asks.at(-1)!) / 2).toBeCloseTo(0.6, 2);
  });

  it("makes the NO book the complement of YES, never a copy", async () => {
    const { yesTokenId, noTokenId } = fed();
    const yes = (await get(`/book?token_id=${yesTokenId}`)).json;
    const no = (await get(`/book?token_id=${noTokenId}`)).json;
    expect(no.bids).not.toEqual(yes.bids);
    const comp = (levels: Json[]) =>
      levels.map((l) => ({ price: String(Math.round((1 - Number(l.price)) * 10000) / 10000), size: l.size }));
    expect(no.bids).toEqual(comp(yes.asks));
    expect(no.asks).toEqual(comp(yes.bids));
    const nb = no.bids.map((l: Json) => Number(l.price));
    expect(nb).toEqual([...nb].sort((a, b) => a - b));
  });

  it("answers /price with BUY = best bid and SELL = best ask, plus midpoint and spread", async () => {
    const { yesTokenId, noTokenId } = fed();
    const book = (await get(`/book?token_id=${yesTokenId}`)).json;
    const bestBid = book.bids.at(-1).price;
    const bestAsk = book.asks.at(-1).price;
    expect((await get(`/price?token_id=${yesTokenId}&side=BUY`)).json).toEqual({ price: bestBid });
    expect((await get(`/price?token_id=${yesTokenId}&side=SELL`)).json).toEqual({ price: bestAsk });
    expect((await get(`/price?token_id=${yesTokenId}&side=UP`)).status).toBe(400);
    expect((await get(`/midpoint?token_id=${yesTokenId}`)).json).toEqual({ mid: "0.6" });
    expect((await get(`/midpoint?token_id=${noTokenId}`)).json).toEqual({ mid: "0.4" });
    expect((await get(`/spread?token_id=${yesTokenId}`)).json).toEqual({ spread: "0.02" });
    const prices = (await get(`/prices?token_ids=${yesTokenId},${noTokenId}`)).json;
    expect(prices[yesTokenId]).toEqual({ BUY: bestBid, SELL: bestAsk });
    const res = await fetch(`${fake.clobUrl}/books`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ token_id: yesTokenId }, { token_id: noTokenId }]),
    });
    const books = (await res.json()) as Json[];
    expect(books.map((b) => b.asset_id)).toEqual([yesTokenId, noTokenId]);
  });

  it("takes a scripted NO book and shows its YES complement", async () => {
    const m = fake.script.market("bitcoin-above-100k-on-december-31-2026");
    fake.script.setBook(m.noTokenId, {
      bids: [
        [0.3, 10],
        [0.31, 12],
      ],
      asks: [[0.4, 5]],
    });
    const yes = (await get(`/book?token_id=${m.yesTokenId}`)).json;
    expect(yes.bids).toEqual([{ price: "0.6", size: "5" }]);
    expect(yes.asks).toEqual([
      { price: "0.7", size: "10" },
      { price: "0.69", size: "12" },
    ]);
    const no = (await get(`/book?token_id=${m.noTokenId}`)).json;
    expect(no.bids).toEqual([
      { price: "0.3", size: "10" },
      { price: "0.31", size: "12" },
    ]);
  });

  it("answers 404 with the venue's message for unknown tokens and closed markets", async () => {
    const unknown = await get("/book?token_id=123");
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ error: "No orderbook exists for the requested token id" });
    const snow = fake.script.market("will-it-snow-in-london-on-november-20-2026");
    expect((await get(`/book?token_id=${snow.yesTokenId}`)).status).toBe(404);
  });

  it("serves tick size, neg-risk, fee rate, version, time and ok", async () => {
    const snow = fake.script.market("fed-chair-announces-resignation-by-december-31-2026");
    expect((await get(`/tick-size?token_id=${snow.yesTokenId}`)).json).toEqual({ minimum_tick_size: 0.001 });
    expect((await get(`/neg-risk?token_id=${fed().yesTokenId}`)).json).toEqual({ neg_risk: true });
    expect((await get(`/neg-risk?token_id=${snow.yesTokenId}`)).json).toEqual({ neg_risk: false });
    // The base fee: 1000 on a fee-enabled market (a cap, not the rate), 0 on a fee-free one.
    expect((await get(`/fee-rate?token_id=${snow.yesTokenId}`)).json).toEqual({ base_fee: 1000 });
    const free = fake.script.market("us-government-shutdown-by-december-31-2026");
    expect((await get(`/fee-rate?token_id=${free.yesTokenId}`)).json).toEqual({ base_fee: 0 });
    expect((await get("/version")).json).toEqual({ version: 2 });
    const t = (await get("/time")).json;
    expect(typeof t).toBe("number");
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(5);
    expect((await get("/ok")).status).toBe(200);
  });

  it("generates the same price history for the same seed, complementary for NO", async () => {
    const { yesTokenId, noTokenId } = fed();
    const end = Math.floor(Date.now() / 1000) - 3600;
    const start = end - 86_400;
    const path = (t: string) => `/prices-history?market=${t}&startTs=${start}&endTs=${end}&fidelity=60`;
    const yes = (await get(path(yesTokenId))).json.history as { t: number; p: number }[];
    expect(yes.length).toBeGreaterThanOrEqual(24);
    for (const pt of yes) {
      expect(typeof pt.t).toBe("number");
      expect(typeof pt.p).toBe("number");
      expect(pt.p).toBeGreaterThan(0);
      expect(pt.p).toBeLessThan(1);
    }
    const no = (await get(path(noTokenId))).json.history as { t: number; p: number }[];
    expect(no.map((x, i) => x.p + yes[i]!.p).every((s) => Math.abs(s - 1) < 1e-9)).toBe(true);
    const again = await startPolymarketFake({ seed: 11 });
    try {
      const res = await fetch(`${again.clobUrl}${path(yesTokenId)}`);
      expect(((await res.json()) as Json).history).toEqual(yes);
    } finally {
      await again.close();
    }
    const interval = (await get(`/prices-history?market=${yesTokenId}&interval=1d&fidelity=60`)).json.history;
    expect(interval.length).toBeGreaterThanOrEqual(23);
    expect((await get(`/prices-history?market=${yesTokenId}&interval=3y`)).status).toBe(400);
  });

  it("lists CLOB markets with cursor pagination ending at LTE=", async () => {
    const first = (await get("/markets")).json;
    expect(first.next_cursor).toBe("LTE=");
    expect(first.count).toBe(first.data.length);
    const m = first.data.find((x: Json) => x.market_slug === "will-ethereum-reach-5000-in-2026");
    expect(m.tokens.map((t: Json) => t.outcome)).toEqual(["No", "Yes"]);
    const one = (await get(`/markets/${m.condition_id}`)).json;
    expect(one.minimum_tick_size).toBe(0.01);
    expect(one.tokens[1].token_id).toBe(fake.script.market("will-ethereum-reach-5000-in-2026").yesTokenId);
    const compact = (await get(`/clob-markets/${m.condition_id}`)).json;
    expect(compact.c).toBe(m.condition_id);
    expect(compact.t.map((x: Json) => x.o)).toEqual(["No", "Yes"]);
  });
});
