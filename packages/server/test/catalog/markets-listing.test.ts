/**
 * GET /v1/markets answered from memory (catalog/listing.ts) against the store: for every filter and
 * page the answer is byte for byte what the route sent when it read each page from the store and
 * let Fastify serialize it (`storeAnswer` below: the store's rows, serialized by the route's former
 * schema), and stays so as syncs change markets, live quotes arrive and are flushed, and venue feeds
 * report statuses. Also `fields=`, and (PostgreSQL + Redis) a second instance that learns of syncs
 * and quotes over the bus.
 */
import { kalshiSchedule } from "@crossbook/fees";
import type { FastifyInstance } from "fastify";
import type { Static } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { marketView } from "../../src/catalog/market-json";
import * as repo from "../../src/catalog/repo";
import { MarketSchema } from "../../src/catalog/schemas";
import { PagedEnvelope, PageMeta, pageMeta } from "../../src/http/envelope";
import type { VenueId, VenueMarket } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import {
  bearer,
  createKey,
  createTestApp,
  expectError,
  setAccount,
  signup,
  type TestApp,
} from "../support/app";
import { INFRA_BACKENDS, STORE_BACKENDS } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";
import { until } from "../support/until";

/** The listing as the route declared it before `fields=`: what its answers were serialized with. */
const FormerListing = PagedEnvelope(MarketSchema, PageMeta);
const SERIALIZER = "/v1/_probe/markets-serializer";

interface Query {
  venue?: string;
  status?: string;
  event_id?: string;
  limit?: number;
  offset?: number;
}

const queryString = (query: Query & { fields?: string }) =>
  Object.entries(query)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join("&");

async function harness(t: TestApp) {
  const { session, accountId } = await signup(t.app);
  // Hundreds of requests a test: past the free tier's minute.
  await setAccount(t.services, accountId, { tier: "enterprise", rate_limit_per_minute: 100_000_000 });
  const key = (await createKey(t.app, session, { type: "read_only" })).key;
  const get = (url: string) => t.app.inject({ method: "GET", url, headers: bearer(key) });
  /** The answer as the route made it before: one page of stored rows, serialized by the schema. */
  const storeAnswer = async (query: Query): Promise<string> => {
    const { limit = 50, offset = 0, status = "open", venue, event_id } = query;
    const { rows, total } = await repo.listMarkets(
      t.runtime.store.db,
      {
        ...(venue ? { venue } : {}),
        ...(status !== "all" ? { status } : {}),
        ...(event_id ? { eventId: event_id } : {}),
      },
      { limit, offset },
    );
    const value = { success: true, data: rows.map(marketView), meta: pageMeta(offset, limit, total) };
    const response = await t.app.inject({ method: "POST", url: SERIALIZER, payload: value });
    expect(response.statusCode, response.body).toBe(200);
    return response.body;
  };
  const listed = async (query: Query & { fields?: string }) => {
    const response = await get(`/v1/markets?${queryString(query)}`);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
    return response.body;
  };
  /** The listing answers `query` as the store would. */
  const expectStoreAnswer = async (query: Query) => {
    const expected = await storeAnswer(query);
    expect(await listed(query), JSON.stringify(query)).toBe(expected);
  };
  return { get, storeAnswer, listed, expectStoreAnswer };
}

/** The serializer probe: a value sent back through the listing's former declared schema. */
function registerSerializer(app: FastifyInstance): void {
  app.post(
    SERIALIZER,
    { config: { auth: "none" }, schema: { hide: true, response: { 200: FormerListing } } },
    async (request) => request.body as Static<typeof FormerListing>,
  );
}

const ids = (body: string) => (JSON.parse(body).data as Array<{ id: string }>).map((m) => m.id);

describe.each(STORE_BACKENDS)("GET /v1/markets from memory on %s", (store) => {
  let t: TestApp;
  let h: Awaited<ReturnType<typeof harness>>;
  const kalshi = new TestVenue("kalshi");
  const poly = new TestVenue("polymarket");

  /** Kalshi tickers in an order where case and punctuation matter (the store's collation decides). */
  const KALSHI_KEYS = [
    "A-1",
    "A_1",
    "A1",
    "a-1",
    "B",
    "b",
    "KX-26DEC-T1",
    "KX-26DEC-T10",
    "KX-26DEC-T2",
    "Z~",
    "ZZ",
  ];
  const kalshiMarket = (key: string, i: number, overrides: Partial<VenueMarket> = {}) =>
    testMarket("kalshi", key, {
      eventId: i % 3 === 0 ? "kalshi:E1" : i % 3 === 1 ? "kalshi:E2" : null,
      fees: i % 2 === 0 ? kalshiSchedule("quadratic_with_maker_fees", 1) : null,
      rules: i % 4 === 0 ? null : `Resolves "Yes" if ${key} happens.\nSee \\rules.`,
      lastPrice: i % 5 === 0 ? null : 400_000 + i * 1_000,
      ...overrides,
    });

  beforeAll(async () => {
    KALSHI_KEYS.forEach((key, i) => {
      kalshi.set(kalshiMarket(key, i));
    });
    for (let i = 0; i < 12; i++) {
      poly.set(
        testMarket("polymarket", `0x${i.toString(16).padStart(4, "0")}`, { eventId: `polymarket:P${i % 2}` }),
      );
    }
    t = await createTestApp({
      store,
      venues: new Map<VenueId, Venue>([
        ["kalshi", kalshi],
        ["polymarket", poly],
      ]),
      register: registerSerializer,
    });
    h = await harness(t);
    await t.services.catalog.syncVenue("kalshi");
    await t.services.catalog.syncVenue("polymarket");
    // Some close and resolve (they drop out of the open listing and are looked up one by one).
    t.clock.advance(60_000);
    kalshi.set(
      kalshiMarket("A1", 2, { status: "closed" }),
      kalshiMarket("b", 5, { status: "resolved", resolution: "yes" }),
      kalshiMarket("KX-26DEC-T10", 7, { status: "resolved", resolution: "no" }),
    );
    poly.set(testMarket("polymarket", "0x0003", { status: "closed", eventId: "polymarket:P1" }));
    await t.services.catalog.syncVenue("kalshi");
    await t.services.catalog.syncVenue("polymarket");
  });
  afterAll(() => t.close());

  it("answers every filter and page as the store does, byte for byte, twice in a row", async () => {
    let checked = 0;
    for (const venue of [undefined, "kalshi", "polymarket"]) {
      for (const status of [undefined, "open", "closed", "resolved", "all"]) {
        for (const event_id of [undefined, "kalshi:E1", "kalshi:E2", "polymarket:P1", "nope"]) {
          for (const page of [
            {},
            { limit: 4 },
            { limit: 4, offset: 4 },
            { limit: 100, offset: 9 },
            { offset: 500 },
          ]) {
            const query: Query = {
              ...(venue ? { venue } : {}),
              ...(status ? { status } : {}),
              ...(event_id ? { event_id } : {}),
              ...page,
            };
            await h.expectStoreAnswer(query);
            // The kept page, sent again.
            await h.expectStoreAnswer(query);
            checked++;
          }
        }
      }
    }
    expect(checked).toBe(375);
    // The filters did cut: a venue's markets only, one status only, pages that cross venues.
    expect(ids(await h.listed({ venue: "polymarket", status: "all" }))).toHaveLength(12);
    expect(new Set(ids(await h.listed({ status: "resolved" })))).toEqual(
      new Set(["kalshi:KX-26DEC-T10", "kalshi:b"]),
    );
    const crossing = ids(await h.listed({ limit: 3, offset: 7 }));
    expect(crossing[0]).toMatch(/^kalshi:/);
    expect(crossing[2]).toMatch(/^polymarket:/);
  });

  it("shows what a sync changed in the next answer: a title, a new market, a closed and a delisted one", async () => {
    const before = await h.listed({ venue: "kalshi", status: "all", limit: 100 });
    t.clock.advance(60_000);
    kalshi.set(
      kalshiMarket("A-1", 0, { title: "A-1, renamed" }),
      kalshiMarket("A2", 11),
      kalshiMarket("B", 4, { status: "closed" }),
    );
    kalshi.markets.delete("kalshi:ZZ");
    await t.services.catalog.syncVenue("kalshi");
    const after = await h.listed({ venue: "kalshi", status: "all", limit: 100 });
    expect(after).not.toBe(before);
    const byId = new Map((JSON.parse(after).data as Array<{ id: string }>).map((m) => [m.id, m]));
    expect(byId.get("kalshi:A-1")).toMatchObject({ title: "A-1, renamed" });
    expect(byId.get("kalshi:A2")).toMatchObject({ status: "open" });
    expect(byId.get("kalshi:B")).toMatchObject({ status: "closed" });
    expect(byId.get("kalshi:ZZ")).toMatchObject({ status: "closed" });
    expect(ids(await h.listed({ venue: "kalshi" }))).not.toContain("kalshi:B");
    for (const status of ["open", "closed", "all"]) {
      await h.expectStoreAnswer({ venue: "kalshi", status, limit: 100 });
      await h.expectStoreAnswer({ status, event_id: "kalshi:E2" });
      await h.expectStoreAnswer({ status, limit: 5, offset: 8 });
    }
  });

  it("shows a live quote at once, as the store has it after the flush", async () => {
    const market = "kalshi:KX-26DEC-T1";
    const query = { venue: "kalshi", limit: 100 };
    t.clock.advance(1_000);
    t.services.live.ingest("kalshi", {
      kind: "quote",
      marketId: market,
      bestBid: 610_000,
      bestAsk: 630_000,
      lastPrice: 620_000,
      timestamp: "t",
    });
    const shown = () =>
      h
        .listed(query)
        .then((body) => (JSON.parse(body).data as Array<{ id: string }>).find((m) => m.id === market));
    // Before the flush: the quote already (the store still has the listing's prices).
    expect(await shown()).toMatchObject({
      best_bid: 0.61,
      best_ask: 0.63,
      last_price: 0.62,
      updated_at: new Date(t.clock.now()).toISOString(),
    });
    expect(await h.listed(query)).not.toBe(await h.storeAnswer(query));
    // The flush writes the same prices (at the same instant here): the store's answer, byte for byte.
    expect(await t.services.live.flush()).toBe(1);
    await h.expectStoreAnswer(query);

    // A quote without a trade keeps the last price; a book moves bid and ask.
    t.services.live.ingest("kalshi", {
      kind: "book",
      book: {
        marketId: market,
        yes: { bids: [{ price: 550_000, size: 1_000_000 }], asks: [] },
        no: { bids: [], asks: [] },
        timestamp: "t",
        sequence: null,
      },
    });
    expect(await shown()).toMatchObject({ best_bid: 0.55, best_ask: null, last_price: 0.62 });
    await t.services.live.flush();
    await h.expectStoreAnswer(query);
  });

  it("keeps a later sync's prices over an older quote", async () => {
    const market = "kalshi:A_1";
    t.services.live.ingest("kalshi", {
      kind: "quote",
      marketId: market,
      bestBid: 100_000,
      bestAsk: 120_000,
      lastPrice: 110_000,
      timestamp: "t",
    });
    await t.services.live.flush();
    t.clock.advance(60_000);
    kalshi.set(kalshiMarket("A_1", 1, { bestBid: 200_000, bestAsk: 220_000, lastPrice: 210_000 }));
    await t.services.catalog.syncVenue("kalshi");
    const data = JSON.parse(await h.listed({ venue: "kalshi", limit: 100 })).data as Array<{ id: string }>;
    expect(data.find((m) => m.id === market)).toMatchObject({
      best_bid: 0.2,
      best_ask: 0.22,
      last_price: 0.21,
    });
    await h.expectStoreAnswer({ venue: "kalshi", limit: 100 });
  });

  it("shows a status a venue's feed reports before the next sync, as the store records it", async () => {
    const market = "kalshi:Z~";
    expect(ids(await h.listed({ venue: "kalshi", limit: 100 }))).toContain(market);
    t.services.live.ingest("kalshi", {
      kind: "status",
      marketId: market,
      status: "resolved",
      resolution: "yes",
    });
    expect(ids(await h.listed({ venue: "kalshi", limit: 100 }))).not.toContain(market);
    expect(ids(await h.listed({ status: "resolved" }))).toContain(market);
    // The producer records it in the store (orders' settleMarket): then both answer alike.
    await until(async () => (await repo.findMarket(t.runtime.store.db, market))?.status === "resolved");
    for (const status of ["open", "resolved", "all"]) await h.expectStoreAnswer({ status, limit: 100 });
  });

  it("with fields= shows the named properties only, in the full market's order, for lists and one market", async () => {
    const full = JSON.parse(await h.listed({ status: "all", limit: 100 })).data as Array<
      Record<string, unknown>
    >;
    const light = JSON.parse(
      await h.listed({
        status: "all",
        limit: 100,
        fields: "best_ask, title,id,status,best_bid,,last_price,id",
      }),
    );
    expect(light.meta).toEqual({ page: 1, limit: 100, total: full.length });
    expect(light.data).toHaveLength(full.length);
    light.data.forEach((market: Record<string, unknown>, i: number) => {
      expect(Object.keys(market)).toEqual(["id", "title", "status", "last_price", "best_bid", "best_ask"]);
      const { id, title, status, last_price, best_bid, best_ask } = full[i]!;
      expect(market).toEqual({ id, title, status, last_price, best_bid, best_ask });
    });
    // Every field named is the full answer.
    const every = Object.keys(MarketSchema.properties).join(",");
    expect(await h.listed({ status: "all", limit: 100, fields: every })).toBe(
      await h.listed({ status: "all", limit: 100 }),
    );
    // One market, and a text search (answered by the store).
    const one = (await h.get("/v1/markets/kalshi:A-1?fields=id,rules,fees")).json();
    expect(one).toEqual({
      success: true,
      data: {
        id: "kalshi:A-1",
        rules: full.find((m) => m["id"] === "kalshi:A-1")!["rules"],
        fees: expect.anything(),
      },
    });
    const searched = JSON.parse(await h.listed({ q: "renamed", fields: "id,title" } as Query));
    expect(searched.data).toEqual([{ id: "kalshi:A-1", title: "A-1, renamed" }]);
  });

  it("refuses an unknown or empty fields= with a field message", async () => {
    const unknown = expectError(await h.get("/v1/markets?fields=id,price,titel"), 400, "VALIDATION_ERROR");
    expect(unknown.details?.["fields"]).toEqual({
      "query.fields": expect.stringContaining('unknown fields "price", "titel"'),
    });
    expect(
      expectError(await h.get("/v1/markets?fields=,"), 400, "VALIDATION_ERROR").details?.["fields"],
    ).toHaveProperty("query.fields");
    expect(
      expectError(await h.get("/v1/markets/kalshi:A-1?fields=nope"), 400, "VALIDATION_ERROR").details?.[
        "fields"
      ],
    ).toHaveProperty("query.fields");
    expect(
      expectError(await h.get(`/v1/markets?fields=${"id,".repeat(200)}`), 400, "VALIDATION_ERROR").details?.[
        "fields"
      ],
    ).toHaveProperty("query.fields");
  });
});

const scaledOut = INFRA_BACKENDS.includes("redis") && STORE_BACKENDS.includes("postgres");

describe.runIf(scaledOut)("GET /v1/markets on a second instance (PostgreSQL + Redis)", () => {
  let one: TestApp & { schema?: string; redisPrefix: string };
  let two: TestApp;
  let h: Awaited<ReturnType<typeof harness>>;
  const kalshiOne = new TestVenue("kalshi").set(testMarket("kalshi", "X"), testMarket("kalshi", "Y"));
  const kalshiTwo = new TestVenue("kalshi");

  beforeAll(async () => {
    one = await createTestApp({
      store: "postgres",
      infra: "redis",
      venues: new Map<VenueId, Venue>([["kalshi", kalshiOne]]),
      config: { instanceId: "one" },
    });
    two = await createTestApp({
      store: "postgres",
      infra: "redis",
      venues: new Map<VenueId, Venue>([["kalshi", kalshiTwo]]),
      config: { instanceId: "two" },
      shareWith: { schema: one.schema!, redisPrefix: one.redisPrefix },
      register: registerSerializer,
    });
    await two.services.catalog.listen();
    // One produces Kalshi's market data and forwards it; two folds it in.
    await one.services.live.join({ bus: one.runtime.bus, instanceId: "one", produces: () => true });
    await two.services.live.join({ bus: two.runtime.bus, instanceId: "two", produces: () => false });
    h = await harness(two);
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
  });

  it("shows the other instance's syncs and forwarded quotes", async () => {
    const query = { venue: "kalshi", status: "all", limit: 100 };
    expect(ids(await h.listed(query))).toEqual([]);
    await one.services.catalog.syncVenue("kalshi");
    await until(async () => ids(await h.listed(query)).length === 2, { what: "the other instance's sync" });
    await h.expectStoreAnswer(query);

    kalshiOne.set(testMarket("kalshi", "X", { title: "X, renamed" }), testMarket("kalshi", "Z"));
    await one.services.catalog.syncVenue("kalshi");
    await until(async () => ids(await h.listed(query)).length === 3, { what: "the second sync" });
    await h.expectStoreAnswer(query);

    one.services.live.ingest("kalshi", {
      kind: "quote",
      marketId: "kalshi:Y",
      bestBid: 710_000,
      bestAsk: 730_000,
      lastPrice: 720_000,
      timestamp: "t",
    });
    const y = async () =>
      (JSON.parse(await h.listed(query)).data as Array<{ id: string; best_bid: number }>)[1];
    await until(async () => (await y())?.best_bid === 0.71, { what: "the forwarded quote" });
    await one.services.live.flush();
    await h.expectStoreAnswer(query);
  });
});
