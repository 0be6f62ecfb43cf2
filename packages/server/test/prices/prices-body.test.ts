/**
 * GET /v1/prices sends JSON it builds itself (cached per-market fragments from the prices service,
 * joined in routes.ts; with include_orderbook, one JSON.stringify), and Fastify sends a built body
 * as it is: the route's declared response schema never sees it. These tests hold those bodies to
 * that schema over random markets and quotes (unicode ids, nulls, extreme numbers, live and listed
 * quotes, cached and rebuilt answers): each one valid with no undeclared field, and byte for byte
 * what the app's own serializer writes for the same value from the declared schema.
 */
import fc from "fast-check";
import type { Static } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PriceEntryFields } from "../../src/prices/schemas";
import { PricesResponse } from "../../src/prices/schemas";
import type { PriceEntry } from "../../src/prices/service";
import { VenueError } from "../../src/venues/errors";
import type { OrderBook, VenueId, VenueMarket } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, signup, type TestApp } from "../support/app";
import { TestVenue, testMarket } from "../support/fake-venue";
import { closed, describeErrors, type JsonSchema, SchemaValidator } from "../support/openapi";

// The entry the service computes is the declared one (tsc checks this line).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const entryIsDeclared: Same<PriceEntry, Static<typeof PriceEntryFields>> = true;

const SERIALIZER = "/v1/_probe/prices-serializer";
const validator = new SchemaValidator();
const declared = closed(PricesResponse) as JsonSchema;

let t: TestApp;
let key: string;
const kalshi = new TestVenue("kalshi");

beforeAll(async () => {
  t = await createTestApp({
    venues: new Map<VenueId, Venue>([["kalshi", kalshi]]),
    config: { feedMaxMarketsPerVenue: 1_000 },
    // The value a body holds, sent back through the serializer Fastify compiles from the route's
    // declared schema: what /v1/prices would send if it let Fastify serialize.
    register: (app) => {
      app.post(
        SERIALIZER,
        { config: { auth: "none" }, schema: { hide: true, response: { 200: PricesResponse } } },
        async (request) => request.body as Static<typeof PricesResponse>,
      );
    },
  });
  key = (await createKey(t.app, (await signup(t.app)).session, { type: "read_only" })).key;
});
afterAll(() => t.close());

async function serialized(value: unknown): Promise<string> {
  const response = await t.app.inject({ method: "POST", url: SERIALIZER, payload: value as object });
  expect(response.statusCode, response.body).toBe(200);
  return response.body;
}

/** One answer of GET /v1/prices, checked against the declared schema; returns its value. */
async function getChecked(query: string): Promise<Static<typeof PricesResponse>> {
  const response = await t.app.inject({ method: "GET", url: `/v1/prices?${query}`, headers: bearer(key) });
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
  const body = response.body;
  const value = JSON.parse(body) as Static<typeof PricesResponse>;
  expect(describeErrors(validator.errors(declared, value)), body).toEqual([]);
  expect(body).toBe(await serialized(value));
  return value;
}

// --- random markets and quotes ----------------------------------------------------------------------

/**
 * A venue market key: any unicode but a comma (the list separator) and line terminators, not
 * starting or ending in blanks. Venue keys are single-line (tickers, numbers, hex ids), and the
 * declared map's key pattern (TypeBox's `^.*$`) does not match a line terminator, so the reference
 * serializer would drop such a key where the route keeps it.
 */
const marketKey = fc
  .string({ unit: "grapheme", minLength: 1, maxLength: 24 })
  .filter((s) => !s.includes(",") && !/[\n\r\u2028\u2029]/.test(s) && s.trim() === s && s.length > 0);
const micros = fc.oneof(
  fc.integer({ min: 0, max: 1_000_000 }),
  fc.constantFrom(0, 1, 999_999, 1_000_000),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
);
const maybeMicros = fc.option(micros, { nil: null, freq: 3 });
const listing = fc.record({
  key: marketKey,
  title: fc.string({ unit: "grapheme", maxLength: 80 }),
  lastPrice: maybeMicros,
  bestBid: maybeMicros,
  bestAsk: maybeMicros,
  price24hAgo: fc.option(fc.oneof(micros, fc.constant(1)), { nil: null }),
  volume24h: micros,
  live: fc.option(
    fc.record({
      bids: fc.array(fc.record({ price: micros, size: micros }), { maxLength: 4 }),
      asks: fc.array(fc.record({ price: micros, size: micros }), { maxLength: 4 }),
      trade: fc.option(fc.record({ price: micros, size: micros }), { nil: null }),
    }),
    { nil: null, freq: 2 },
  ),
});

const book = (
  marketId: string,
  bids: OrderBook["yes"]["bids"],
  asks: OrderBook["yes"]["asks"],
): OrderBook => ({
  marketId,
  yes: { bids, asks },
  no: { bids: [], asks: [] },
  timestamp: "2026-11-22T12:00:00.000Z",
  sequence: null,
});

let run = 0;

describe("GET /v1/prices bodies against the route's response schema", () => {
  it("the entry type the service uses is the declared one", () => {
    expect(entryIsDeclared).toBe(true);
  });

  it("are valid and byte for byte what the declared schema serializes, for random markets and quotes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(listing, { minLength: 1, maxLength: 6, selector: (l) => l.key }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 100 }),
        fc.boolean(),
        async (listings, picks, depth, venueDown) => {
          // Fresh ids each run (the catalog keeps what earlier runs synced), and a fresh minute.
          run++;
          t.clock.advance(61_000);
          const markets: VenueMarket[] = listings.map((l) =>
            testMarket("kalshi", `${run}-${l.key}`, {
              title: l.title,
              lastPrice: l.lastPrice,
              bestBid: l.bestBid,
              bestAsk: l.bestAsk,
              price24hAgo: l.price24hAgo,
              volume24h: l.volume24h,
            }),
          );
          kalshi.markets.clear();
          kalshi.set(...markets);
          await t.services.catalog.syncVenue("kalshi");
          listings.forEach((l, i) => {
            const id = markets[i]!.id;
            if (!l.live) return;
            kalshi.books.set(id, book(id, l.live.bids, l.live.asks));
            kalshi.emit({ kind: "book", book: book(id, l.live.bids, l.live.asks) });
            if (l.live.trade) {
              kalshi.emit({
                kind: "trade",
                trade: {
                  marketId: id,
                  outcome: "yes",
                  price: l.live.trade.price,
                  size: l.live.trade.size,
                  takerSide: "buy",
                  timestamp: "2026-11-22T12:00:00.000Z",
                  venueTradeId: String(run),
                },
              });
            }
          });
          const asked = picks.map((p) => markets[p % markets.length]!.id);
          const query = `market_ids=${encodeURIComponent(asked.join(","))}`;
          const distinct = [...new Set(asked)];

          const first = await getChecked(query);
          expect(Object.keys(first.data)).toEqual(distinct);
          for (const id of distinct)
            expect(first.data[id]).toEqual(t.services.prices.entry(t.services.prices.market(id)!));
          // The same millisecond: the cached answer; the next one: the cached data, a new timestamp.
          expect(await getChecked(query)).toEqual(first);
          t.clock.advance(1);
          expect((await getChecked(query)).data).toEqual(first.data);
          // A quote changes: that market's fragment is rebuilt.
          const changed = distinct[0]!;
          kalshi.emit({
            kind: "book",
            book: book(changed, [{ price: 1, size: 1 }], [{ price: 999_999, size: 1 }]),
          });
          const after = await getChecked(query);
          expect(after.data[changed]).toEqual(t.services.prices.entry(t.services.prices.market(changed)!));
          // With books (null where the venue cannot be reached and no feed has one): built by
          // JSON.stringify, still only what the schema declares.
          if (venueDown) kalshi.failWith = new VenueError("kalshi", "unavailable", "down");
          const withBooks = await getChecked(`${query}&include_orderbook=true&depth=${depth}`);
          kalshi.failWith = undefined;
          for (const id of distinct) {
            const orderbook = withBooks.data[id]!.orderbook;
            expect(orderbook === null || orderbook!.bids.length <= depth).toBe(true);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("the checks reject a body with a renamed, mistyped, missing or extra field", async () => {
    kalshi.set(testMarket("kalshi", "CHECKED"));
    await t.services.catalog.syncVenue("kalshi");
    t.clock.advance(61_000);
    const response = await t.app.inject({
      method: "GET",
      url: "/v1/prices?market_ids=kalshi:CHECKED",
      headers: bearer(key),
    });
    const good = response.body;
    const check = async (body: string) => {
      const value = JSON.parse(body);
      return validator.errors(declared, value).length === 0 && body === (await serialized(value));
    };
    expect(await check(good)).toBe(true);
    for (const bad of [
      good.replace('"best_bid"', '"bestBid"'),
      good.replace(/"volume_24h":[^,]+/, '"volume_24h":"100"'),
      good.replace(/"price":[^,]+,/, ""),
      good.replace('"updated_at"', '"extra":1,"updated_at"'),
      good.replace(/"best_ask":([^,]+),"spread":([^,]+)/, '"spread":$2,"best_ask":$1'),
      good.replace('"success":true', '"success":"true"'),
      good.replace('"timestamp"', '"time"'),
    ]) {
      expect(bad).not.toBe(good);
      expect(await check(bad), bad).toBe(false);
    }
  });
});
