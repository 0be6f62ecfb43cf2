/**
 * The Kalshi adapter against the fake Kalshi (packages/fakes): discovery over several pages with
 * combos excluded, books, candles, the feed through a skipped sequence number and a dropped socket,
 * trading with RSA-PSS verified by the fake, and the fake's failure modes.
 */
import { generateKeyPairSync } from "node:crypto";
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKalshiVenue, type KalshiVenue } from "../../../src/venues/kalshi/adapter";
import type { FeedEvent, VenueCredentials } from "../../../src/venues/venue";

let fake: KalshiFake;
const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
const credentials: VenueCredentials = {
  venue: "kalshi",
  keyId: "it-key",
  privateKeyPem: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
};

beforeAll(async () => {
  fake = await startKalshiFake();
  fake.script.addApiKey({
    keyId: "it-key",
    publicKeyPem: pair.publicKey.export({ type: "spki", format: "pem" }).toString(),
    balanceCents: 50_000,
  });
});
afterAll(async () => {
  await fake?.close();
});

function venue(extra: Partial<Parameters<typeof createKalshiVenue>[0]> = {}): KalshiVenue {
  return createKalshiVenue({
    apiUrl: fake.apiUrl,
    wsUrl: fake.wsUrl,
    pageLimit: { markets: 3, events: 2 },
    http: { sleep: async () => {}, rateLimit: { requests: 10_000, windowMs: 1000 } },
    feed: { backoffBaseMs: 10, backoffCapMs: 50 },
    ...extra,
  });
}

async function until(check: () => boolean, what: string) {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const openTickers = () => fake.script.tickers({ openOnly: true, includeMve: false });

describe("discovery against the fake", () => {
  it("lists every open market across pages, combos excluded, and every open event", async () => {
    fake.script.resetRequestCounts();
    const v = venue();
    const events = await v.listEvents({ status: "open" });
    const markets = await v.listMarkets({ status: "open" });
    expect(markets.map((m) => m.venueMarketId).sort()).toEqual([...openTickers()].sort());
    expect(markets.length).toBeGreaterThan(3);
    expect(fake.script.requestCount("GET /markets")).toBe(Math.ceil(markets.length / 3));
    expect(markets.some((m) => m.venueMarketId.startsWith("KXMVE"))).toBe(false);
    expect(markets.every((m) => m.status === "open")).toBe(true);
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events.flatMap((e) => e.marketIds))).toEqual(new Set(markets.map((m) => m.id)));
    expect(markets.every((m) => m.settlementSource !== null)).toBe(true);
  });

  it("one market, its book (YES asks implied from NO bids) and its candles", async () => {
    const ticker = openTickers()[0]!;
    fake.script.setBook(ticker, {
      yes: [
        [0.4, 10],
        [0.38, 25],
      ],
      no: [[0.55, 7]],
    });
    const v = venue();
    const market = await v.getMarket(`kalshi:${ticker}`);
    expect(market).toMatchObject({ id: `kalshi:${ticker}`, bestBid: 400_000, bestAsk: 450_000 });
    const book = await v.getOrderBook(`kalshi:${ticker}`);
    expect(book.yes.bids).toEqual([
      { price: 400_000, size: 10_000_000 },
      { price: 380_000, size: 25_000_000 },
    ]);
    expect(book.yes.asks).toEqual([{ price: 450_000, size: 7_000_000 }]);
    expect(book.no.asks[0]).toEqual({ price: 600_000, size: 10_000_000 });
    const end = new Date();
    const start = new Date(end.getTime() - 6 * 3_600_000);
    const candles = await v.getPriceHistory(`kalshi:${ticker}`, {
      interval: "1h",
      start: start.toISOString(),
      end: end.toISOString(),
    });
    expect(candles.length).toBeGreaterThanOrEqual(5);
    for (const c of candles) {
      expect(c.low).toBeLessThanOrEqual(Math.min(c.open, c.close));
      expect(c.high).toBeGreaterThanOrEqual(Math.max(c.open, c.close));
      expect(Date.parse(c.timestamp) % 3_600_000).toBe(0);
    }
  });
});

describe("feed against the fake", () => {
  it("keeps the book from deltas, resnapshots after a skipped seq, and resubscribes after a drop", async () => {
    const ticker = openTickers()[1]!;
    fake.script.setBook(ticker, { yes: [[0.3, 10]], no: [[0.6, 10]] });
    const events: FeedEvent[] = [];
    // The fake, like Kalshi, refuses an unsigned market-data socket: sign with its feed key.
    const sub = await venue({ feedKey: await fake.feedKey() }).subscribe([`kalshi:${ticker}`], (e) =>
      events.push(e),
    );
    try {
      const books = () =>
        events.filter((e) => e.kind === "book").map((e) => (e as { book: { yes: unknown } }).book);
      await until(() => books().length >= 1, "snapshot");
      fake.script.setBook(ticker, { yes: [[0.31, 12]], no: [[0.6, 10]] });
      await until(() => JSON.stringify(books().at(-1)).includes('"price":310000'), "delta applied");
      const rest = await venue().getOrderBook(`kalshi:${ticker}`);
      expect((books().at(-1) as { yes: unknown }).yes).toEqual(rest.yes);

      fake.script.skipSequenceNext(ticker);
      fake.script.setBook(ticker, { yes: [[0.32, 5]], no: [[0.6, 10]] });
      await until(() => events.some((e) => e.kind === "connection" && e.state === "resynced"), "resynced");
      await until(() => JSON.stringify(books().at(-1)).includes('"price":320000'), "fresh snapshot");
      expect((books().at(-1) as { yes: unknown }).yes).toEqual(
        (await venue().getOrderBook(`kalshi:${ticker}`)).yes,
      );

      const before = books().length;
      fake.script.dropWebSockets();
      await until(
        () => events.filter((e) => e.kind === "connection" && e.state === "connected").length === 2,
        "reconnect",
      );
      await until(() => books().length > before, "snapshot after resubscribe");
      const states = events.filter((e) => e.kind === "connection").map((e) => (e as { state: string }).state);
      expect(states).toEqual(["connected", "resynced", "disconnected", "connected"]);
    } finally {
      await sub.close();
    }
  });
});

describe("trading against the fake (RSA-PSS verified by the fake)", () => {
  it("places, reads, lists and cancels an order; balance, positions and fills", async () => {
    const ticker = openTickers()[2]!;
    fake.script.setBook(ticker, { yes: [[0.4, 100]], no: [[0.5, 100]] });
    const v = venue();
    const balance = await v.getBalance(credentials);
    expect(balance).toBe(500_000_000);

    // A resting NO buy at 0.45 (YES ask at 0.55: does not cross the 0.40 YES bid).
    const resting = await v.placeOrder(credentials, {
      marketId: `kalshi:${ticker}`,
      outcome: "no",
      side: "buy",
      type: "limit",
      price: 450_000,
      size: 5_000_000,
      timeInForce: "GTC",
      clientOrderId: "it-1",
    });
    expect(resting).toMatchObject({ status: "open", filledSize: 0, clientOrderId: "it-1" });
    const read = await v.getOrder(credentials, resting.venueOrderId);
    expect(read).toMatchObject({ marketId: `kalshi:${ticker}`, size: 5_000_000 });
    // One direction bit: the venue keeps (no, ask) for a NO buy at 0.45, which is a YES sell at 0.55
    // on its one book, and that is how it reads back (crossbook's order row keeps the NO buy).
    expect(read).toMatchObject({ outcome: "yes", side: "sell", price: 550_000 });
    const open = await v.listOrders(credentials, { openOnly: true });
    expect(open.map((o) => o.venueOrderId)).toContain(resting.venueOrderId);
    const cancelled = await v.cancelOrder(credentials, resting.venueOrderId);
    expect(cancelled.status).toBe("cancelled");
    expect((await v.getOrder(credentials, resting.venueOrderId)).status).toBe("cancelled");

    // A crossing YES buy at 0.50 takes the NO bid at 0.50 (implied YES ask 0.50).
    const taken = await v.placeOrder(credentials, {
      marketId: `kalshi:${ticker}`,
      outcome: "yes",
      side: "buy",
      type: "limit",
      price: 500_000,
      size: 2_000_000,
      timeInForce: "IOC",
    });
    expect(taken).toMatchObject({ filledSize: 2_000_000, status: "filled" });
    const fills = await v.listFills(credentials, { marketId: `kalshi:${ticker}` });
    expect(fills.map((f) => [f.outcome, f.side, f.price, f.size])).toContainEqual([
      "yes",
      "buy",
      500_000,
      2_000_000,
    ]);
    const positions = await v.listPositions(credentials);
    expect(positions).toContainEqual(
      expect.objectContaining({ marketId: `kalshi:${ticker}`, outcome: "yes", size: 2_000_000 }),
    );
    expect(await v.getBalance(credentials)).toBeLessThan(balance);
  });

  it("a user's sell YES @ 0.60 comes back as sell YES @ 0.60 from getOrder, listOrders and fills", async () => {
    const ticker = openTickers()[3]!;
    fake.script.setBook(ticker, { yes: [[0.3, 50]], no: [[0.2, 50]] });
    const v = venue();
    const placed = await v.placeOrder(credentials, {
      marketId: `kalshi:${ticker}`,
      outcome: "yes",
      side: "sell",
      type: "limit",
      price: 600_000,
      size: 3_000_000,
      timeInForce: "GTC",
      clientOrderId: "sell-yes-1",
    });
    const shape = (o: { outcome: string; side: string; price: number }) => [o.outcome, o.side, o.price];
    expect(shape(placed)).toEqual(["yes", "sell", 600_000]);
    expect(shape(await v.getOrder(credentials, placed.venueOrderId))).toEqual(["yes", "sell", 600_000]);
    const listed = (await v.listOrders(credentials, { marketId: `kalshi:${ticker}` })).find(
      (o) => o.venueOrderId === placed.venueOrderId,
    );
    expect(shape(listed!)).toEqual(["yes", "sell", 600_000]);
    fake.script.printTrade(ticker, { side: "yes", count: 3, price: 0.6 }); // someone buys YES from us
    const fills = (await v.listFills(credentials, { marketId: `kalshi:${ticker}` })).filter(
      (f) => f.venueOrderId === placed.venueOrderId,
    );
    expect(fills.map((f) => [...shape(f), f.size])).toEqual([["yes", "sell", 600_000, 3_000_000]]);
  });

  it("a cancel of an order that filled is 'no longer resting' (the fake's 404); the next order still goes to V2", async () => {
    const ticker = openTickers()[2]!;
    fake.script.setBook(ticker, { yes: [[0.2, 100]], no: [[0.7, 100]] });
    const v = venue();
    const order = await v.placeOrder(credentials, {
      marketId: `kalshi:${ticker}`,
      outcome: "yes",
      side: "buy",
      type: "limit",
      price: 250_000,
      size: 1_000_000,
      timeInForce: "GTC",
    });
    fake.script.printTrade(ticker, { side: "no", count: 1, price: 0.25 }); // fills it
    fake.script.resetRequestCounts();
    // A fresh instance (a restart): its first venue call is that cancel.
    const restarted = venue();
    await expect(restarted.cancelOrder(credentials, order.venueOrderId)).rejects.toMatchObject({
      kind: "not_found",
    });
    const next = await restarted.placeOrder(credentials, {
      marketId: `kalshi:${ticker}`,
      outcome: "yes",
      side: "buy",
      type: "limit",
      price: 100_000,
      size: 1_000_000,
      timeInForce: "GTC",
    });
    expect(next.status).toBe("open");
    expect(fake.script.requestCount("POST /portfolio/events/orders")).toBe(1);
    expect(fake.script.requestCount("POST /portfolio/orders")).toBe(0);
    expect(fake.script.requestCount("DELETE /portfolio/orders/:order_id")).toBe(0);
    await restarted.cancelOrder(credentials, next.venueOrderId);
  });

  it("a wrong key is auth_failed", async () => {
    const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    await expect(
      venue().getBalance({
        ...credentials,
        privateKeyPem: stranger.export({ type: "pkcs8", format: "pem" }).toString(),
      }),
    ).rejects.toMatchObject({ kind: "auth_failed", retryable: false });
  });

  it("fractional counts where the market shows it trades them (no fractional_trading_enabled any more)", async () => {
    const [whole, fractional] = [openTickers()[4]!, openTickers()[5]!];
    fake.script.setFractional(fractional, true);
    fake.script.printTrade(fractional, { side: "yes", count: 2.5, price: 0.5 });
    const v = venue();
    const m = await v.getMarket(`kalshi:${fractional}`);
    expect(m.minSize).toBe(10_000);
    expect(fake.script.market(fractional)).not.toHaveProperty("fractional_trading_enabled");
    expect((await v.getMarket(`kalshi:${whole}`)).minSize).toBe(1_000_000);
    const placed = await v.placeOrder(credentials, {
      marketId: `kalshi:${fractional}`,
      outcome: "yes",
      side: "buy",
      type: "limit",
      price: 10_000,
      size: 1_500_000,
      timeInForce: "GTC",
    });
    expect(placed).toMatchObject({ size: 1_500_000, status: "open" });
    await v.cancelOrder(credentials, placed.venueOrderId);
  });
});

describe("historical tier against the fake", () => {
  it("an old settled market, its candles and the fills of an order on it come from /historical/*", async () => {
    const ticker = openTickers()[6]!;
    fake.script.setBook(ticker, { yes: [[0.4, 50]], no: [[0.5, 50]] });
    const v = venue();
    const bought = await v.placeOrder(credentials, {
      marketId: `kalshi:${ticker}`,
      outcome: "yes",
      side: "buy",
      type: "limit",
      price: 500_000,
      size: 2_000_000,
      timeInForce: "IOC",
    });
    expect(bought.status).toBe("filled");
    const placedAt = new Date(Date.now() - 120_000).toISOString();
    fake.script.resolveMarket(ticker, "yes");
    fake.script.setHistoricalCutoff(Date.now() + 1000);
    try {
      fake.script.resetRequestCounts();
      const fresh = venue();
      const market = await fresh.getMarket(`kalshi:${ticker}`);
      expect(market).toMatchObject({ status: "resolved", resolution: "yes" });
      expect(fake.script.requestCount("GET /historical/markets/:ticker")).toBe(1);
      const end = new Date();
      const candles = await fresh.getPriceHistory(`kalshi:${ticker}`, {
        interval: "1h",
        start: new Date(end.getTime() - 6 * 3_600_000).toISOString(),
        end: end.toISOString(),
      });
      expect(candles.length).toBeGreaterThanOrEqual(5);
      expect(fake.script.requestCount("GET /historical/markets/:ticker/candlesticks")).toBe(1);
      const fills = await fresh.listFills(credentials, { marketId: `kalshi:${ticker}`, since: placedAt });
      expect(fills.filter((f) => f.venueOrderId === bought.venueOrderId).map((f) => f.size)).toEqual([
        2_000_000,
      ]);
      const order = await fresh.getOrder(credentials, bought.venueOrderId, {
        marketId: `kalshi:${ticker}`,
        since: placedAt,
      });
      expect(order).toMatchObject({ status: "filled", filledSize: 2_000_000 });
    } finally {
      fake.script.setHistoricalCutoff(null);
    }
  });
});

describe("failure modes of the fake", () => {
  it("429 with Retry-After is waited out and retried", async () => {
    const sleeps: number[] = [];
    fake.script.rateLimitNext(2, 2);
    const v = venue({
      http: { sleep: async (ms) => void sleeps.push(ms), rateLimit: { requests: 10_000, windowMs: 1000 } },
    });
    await v.getMarket(`kalshi:${openTickers()[0]}`);
    expect(sleeps.length).toBeGreaterThanOrEqual(1);
    expect(sleeps.every((ms) => ms >= 2000)).toBe(true);
  });

  it("down -> unavailable after retries; garbage -> bad_response; malformed fields skipped or reported", async () => {
    fake.script.goDown(true);
    try {
      await expect(venue().listMarkets()).rejects.toMatchObject({ kind: "unavailable", retryable: true });
    } finally {
      fake.script.goDown(false);
    }
    fake.script.malformNext("garbage", { path: "/markets" });
    await expect(venue().listMarkets()).rejects.toMatchObject({ kind: "bad_response" });

    const v = venue();
    fake.script.malformNext("unknown_enum", { path: "/markets" });
    const markets = await v.listMarkets({ status: "open" });
    expect(markets.length).toBe(openTickers().length);
    expect(v.reporter.counts()["unknown_market_status"]).toBeGreaterThan(0);

    fake.script.injectUnexpectedFields(true);
    try {
      expect((await venue().listMarkets({ status: "open" })).length).toBe(openTickers().length);
    } finally {
      fake.script.injectUnexpectedFields(false);
    }
  });
});
