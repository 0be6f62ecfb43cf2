import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PolymarketFake, startPolymarketFake } from "../src/polymarket/index";
import {
  createCreds,
  HARDHAT1,
  type Json,
  l2Fetch,
  limitAmounts,
  signOrder,
  WsProbe,
} from "./polymarket-helpers";

const GOV = "us-government-shutdown-by-december-31-2026";

describe("fake Polymarket — scripting API and failure modes", () => {
  let fake: PolymarketFake;
  beforeAll(async () => {
    fake = await startPolymarketFake({ seed: 41 });
  });
  afterAll(() => fake.close());

  const raw = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, text: await res.text(), headers: res.headers };
  };

  it("goes down with 503 on every endpoint and comes back", async () => {
    fake.script.goDown(true);
    for (const url of [
      `${fake.gammaUrl}/markets`,
      `${fake.clobUrl}/book?token_id=1`,
      `${fake.clobUrl}/order`,
    ]) {
      const r = await raw(url);
      expect(r.status).toBe(503);
    }
    fake.script.goDown(false);
    expect((await raw(`${fake.gammaUrl}/markets`)).status).toBe(200);
  });

  it("answers 429 with Retry-After for the next n requests", async () => {
    fake.script.rateLimitNext(2, 7);
    const a = await raw(`${fake.gammaUrl}/events`);
    const b = await raw(`${fake.clobUrl}/time`);
    const c = await raw(`${fake.clobUrl}/time`);
    expect([a.status, b.status, c.status]).toEqual([429, 429, 200]);
    expect(a.headers.get("retry-after")).toBe("7");
  });

  it("malforms the next answers: garbage, truncated, missing, unexpected, wrong types", async () => {
    const url = `${fake.gammaUrl}/markets?limit=1`;
    fake.script.malformNext(1, "garbage");
    const g = await raw(url);
    expect(g.status).toBe(200);
    expect(() => JSON.parse(g.text)).toThrow();

    fake.script.malformNext(1, "truncated");
    const t = await raw(url);
    expect(() => JSON.parse(t.text)).toThrow();

    fake.script.malformNext(1, "missing-fields");
    const missing = JSON.parse((await raw(url)).text);
    expect(missing[0].clobTokenIds).toBeUndefined();
    expect(missing[0].outcomes).toBeUndefined();
    expect(missing[0].question).toBeDefined();

    fake.script.malformNext(1, "wrong-types");
    const wrong = JSON.parse((await raw(url)).text);
    expect(typeof wrong[0].volume).toBe("number");
    expect(typeof wrong[0].volumeNum).toBe("string");

    // only the matching route is affected
    fake.script.malformNext(1, "unexpected-fields", "/clob/book");
    const untouched = JSON.parse((await raw(url)).text);
    expect(untouched[0].unexpectedField).toBeUndefined();
    const m = fake.script.market(GOV);
    const book = JSON.parse((await raw(`${fake.clobUrl}/book?token_id=${m.yesTokenId}`)).text);
    expect(book.unexpectedField).toBe("surprise");
    expect(book.bids[0].unexpectedField).toBe("surprise");

    const normal = JSON.parse((await raw(url)).text);
    expect(normal[0].unexpectedField).toBeUndefined();
    expect(typeof normal[0].clobTokenIds).toBe("string");
  });

  it("adds unknown fields to every answer while switched on", async () => {
    fake.script.injectUnexpectedFields(true);
    const events = JSON.parse((await raw(`${fake.gammaUrl}/events?limit=1`)).text);
    expect(events[0].x_fake_extension).toEqual({ nested: [1, "two", null], enabled: true });
    expect(events[0].markets[0].unexpectedField).toBe("surprise");
    fake.script.injectUnexpectedFields(false);
    expect(
      JSON.parse((await raw(`${fake.gammaUrl}/events?limit=1`)).text)[0].x_fake_extension,
    ).toBeUndefined();
  });

  it("delays answers by the scripted latency", async () => {
    fake.script.setLatency(150);
    const started = performance.now();
    await raw(`${fake.clobUrl}/time`);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    fake.script.setLatency(0);
  });

  it("counts requests per endpoint, and trading calls separately", async () => {
    fake.script.resetRequests();
    const m = fake.script.market(GOV);
    await raw(`${fake.clobUrl}/book?token_id=${m.yesTokenId}`);
    await raw(`${fake.clobUrl}/book?token_id=${m.noTokenId}`);
    await raw(`${fake.gammaUrl}/markets/slug/${GOV}`);
    expect(fake.script.requestCount("GET /clob/book")).toBe(2);
    expect(fake.script.requestCount("GET /gamma/markets/slug/:slug")).toBe(1);
    expect(fake.script.tradingRequestCount()).toBe(0);
    const bob = privateKeyToAccount(HARDHAT1);
    const creds = await createCreds(fake.clobUrl, bob);
    await l2Fetch(fake.clobUrl, creds, bob.address, "GET", "/data/orders");
    await l2Fetch(fake.clobUrl, creds, bob.address, "POST", "/order", {});
    expect(fake.script.requestCount("POST /clob/order")).toBe(1);
    expect(fake.script.tradingRequestCount()).toBe(3);
    const market = await WsProbe.open(fake.wsMarketUrl);
    expect(fake.script.requestCount("WS /clob/ws/market")).toBe(1);
    expect(fake.script.tradingRequestCount()).toBe(3);
    const user = await WsProbe.open(fake.wsUserUrl);
    expect(fake.script.tradingRequestCount()).toBe(4);
    market.close();
    user.close();
  });

  it("resolves and closes markets, visible in Gamma and the CLOB", async () => {
    const shutdown = fake.script.market(GOV);
    fake.script.resolveMarket(GOV, "no");
    const g = (await (await fetch(`${fake.gammaUrl}/markets/slug/${GOV}`)).json()) as Json;
    expect(g.closed).toBe(true);
    expect(JSON.parse(g.outcomePrices)).toEqual(["0", "1"]);
    expect(g.umaResolutionStatus).toBe("resolved");
    expect((await raw(`${fake.clobUrl}/book?token_id=${shutdown.yesTokenId}`)).status).toBe(404);
    const clobMarket = (await (
      await fetch(`${fake.clobUrl}/markets/${shutdown.conditionId}`)
    ).json()) as Json;
    expect(clobMarket.tokens.find((t: Json) => t.winner).token_id).toBe(shutdown.noTokenId);

    const cpi = "november-2026-cpi-3pt0-or-higher";
    fake.script.closeMarket(cpi);
    const c = (await (await fetch(`${fake.gammaUrl}/markets/slug/${cpi}`)).json()) as Json;
    expect(c.closed).toBe(true);
    expect(c.acceptingOrders).toBe(false);
    expect(c.umaResolutionStatus).toBeUndefined();
  });

  it("moves books with simulated trades over time, deterministically for a seed", async () => {
    const a = await startPolymarketFake({ seed: 1234 });
    const b = await startPolymarketFake({ seed: 1234 });
    const c = await startPolymarketFake({ seed: 999 });
    try {
      const snapshot = async (f: PolymarketFake) => {
        const out: unknown[] = [];
        for (const info of f.script.markets().filter((x) => x.status === "open")) {
          const book = (await (await fetch(`${f.clobUrl}/book?token_id=${info.yesTokenId}`)).json()) as Json;
          out.push([book.bids, book.asks, book.last_trade_price]);
        }
        return out;
      };
      const initial = await snapshot(a);
      a.script.tick(20);
      b.script.tick(20);
      c.script.tick(20);
      const sa = await snapshot(a);
      expect(sa).toEqual(await snapshot(b));
      expect(sa).not.toEqual(initial);
      expect(sa).not.toEqual(await snapshot(c));
      const info = a.script.markets()[0]!;
      const last = (await (
        await fetch(`${a.clobUrl}/last-trade-price?token_id=${info.yesTokenId}`)
      ).json()) as Json;
      expect(last.side === "BUY" || last.side === "SELL").toBe(true);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it("keeps every book uncrossed and NO the complement of YES through many ticks with user orders", async () => {
    const sim = await startPolymarketFake({ seed: 77 });
    try {
      const bob = privateKeyToAccount(HARDHAT1);
      const creds = await createCreds(sim.clobUrl, bob);
      const m = sim.script.market(GOV);
      for (const p of [0.17, 0.18, 0.19]) {
        const order = await signOrder(bob, {
          tokenId: m.yesTokenId,
          side: "BUY",
          ...limitAmounts("BUY", p, 20),
        });
        await l2Fetch(sim.clobUrl, creds, bob.address, "POST", "/order", {
          order,
          owner: creds.apiKey,
          orderType: "GTC",
        });
      }
      sim.script.tick(200);
      for (const info of sim.script.markets().filter((x) => x.status === "open")) {
        const yes = (await (await fetch(`${sim.clobUrl}/book?token_id=${info.yesTokenId}`)).json()) as Json;
        const no = (await (await fetch(`${sim.clobUrl}/book?token_id=${info.noTokenId}`)).json()) as Json;
        if (yes.bids.length && yes.asks.length)
          expect(Number(yes.bids.at(-1).price)).toBeLessThan(Number(yes.asks.at(-1).price));
        const comp = (levels: Json[]) =>
          levels.map((l) => ({
            price: String(Math.round((1 - Number(l.price)) * 10000) / 10000),
            size: l.size,
          }));
        expect(no.bids).toEqual(comp(yes.asks));
        expect(no.asks).toEqual(comp(yes.bids));
      }
      const trades = await l2Fetch(sim.clobUrl, creds, bob.address, "GET", "/data/trades");
      expect(trades.json.data.length).toBeGreaterThan(0); // the simulated flow hit bob's resting bids
      for (const t of trades.json.data) expect(t.trader_side).toBe("MAKER");
    } finally {
      await sim.close();
    }
  });

  it("expires GTD orders on tick using the injected clock", async () => {
    let nowMs = Date.now();
    const timed = await startPolymarketFake({ seed: 8, now: () => nowMs });
    try {
      const bob = privateKeyToAccount(HARDHAT1);
      const creds = await createCreds(timed.clobUrl, bob);
      const m = timed.script.market(GOV);
      const expiration = String(Math.floor(nowMs / 1000) + 90);
      const order = await signOrder(bob, {
        tokenId: m.yesTokenId,
        side: "BUY",
        ...limitAmounts("BUY", 0.1, 10),
        expiration,
      });
      const placed = await l2Fetch(timed.clobUrl, creds, bob.address, "POST", "/order", {
        order,
        owner: creds.apiKey,
        orderType: "GTD",
      });
      expect(placed.json.status).toBe("live");
      const user = await WsProbe.open(timed.wsUserUrl);
      user.send({ auth: creds, markets: [m.conditionId], type: "user" });
      await new Promise((r) => setTimeout(r, 30));
      timed.script.tick();
      expect(user.messages.some((x) => x.type === "CANCELLATION")).toBe(false);
      nowMs += 100_000;
      timed.script.tick();
      const cancel = await user.next((x) => x.event_type === "order" && x.type === "CANCELLATION");
      expect(cancel).toMatchObject({ id: placed.json.orderID, status: "CANCELED" });
      const t = (await (await fetch(`${timed.clobUrl}/time`)).json()) as number;
      expect(t).toBe(Math.floor(nowMs / 1000));
      user.close();
    } finally {
      await timed.close();
    }
  });

  it("autoplays ticks on an interval", async () => {
    const auto = await startPolymarketFake({ seed: 5, autoplay: { intervalMs: 20 } });
    try {
      const info = auto.script.market(GOV);
      await new Promise((r) => setTimeout(r, 300));
      const last = (await (
        await fetch(`${auto.clobUrl}/last-trade-price?token_id=${info.yesTokenId}`)
      ).json()) as Json;
      expect(last.side).not.toBe("");
    } finally {
      await auto.close();
    }
  });
});
