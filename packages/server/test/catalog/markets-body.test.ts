/**
 * GET /v1/markets and GET /v1/markets/{market_id} send JSON they write themselves
 * (catalog/market-json.ts: each market's static fields serialized once, pages joined and kept by
 * catalog/listing.ts), and Fastify sends a built body as it is: the routes' declared response
 * schemas never see it. These tests hold those bodies to the declared schemas over random markets
 * (unicode and control characters, nulls, extreme numbers, fee schedules, live quotes): each one
 * valid with no undeclared field, and byte for byte what the app's own serializer writes for the
 * same value from the declared schema. Without `fields=`, also byte for byte what the routes'
 * former schema (every market in full) wrote: the default answer did not change.
 */
import { kalshiSchedule, polymarketSchedule } from "@crossbook/fees";
import fc from "fast-check";
import type { TSchema } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MARKET_FIELDS } from "../../src/catalog/market-json";
import { MarketListItem, MarketSchema } from "../../src/catalog/schemas";
import { Envelope, PagedEnvelope, PageMeta } from "../../src/http/envelope";
import type { VenueId, VenueMarket } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, setAccount, signup, type TestApp } from "../support/app";
import { TestVenue, testMarket } from "../support/fake-venue";
import { closed, describeErrors, type JsonSchema, SchemaValidator } from "../support/openapi";

/** The declared answers, and the former ones (every market in full). */
const SCHEMAS = {
  list: PagedEnvelope(MarketListItem, PageMeta),
  one: Envelope(MarketListItem),
  formerList: PagedEnvelope(MarketSchema, PageMeta),
  formerOne: Envelope(MarketSchema),
} satisfies Record<string, TSchema>;
type SchemaName = keyof typeof SCHEMAS;

const validator = new SchemaValidator();
const closedSchemas = Object.fromEntries(
  Object.entries(SCHEMAS).map(([name, schema]) => [name, closed(schema) as JsonSchema]),
) as Record<SchemaName, JsonSchema>;

let t: TestApp;
let key: string;
const kalshi = new TestVenue("kalshi");

beforeAll(async () => {
  t = await createTestApp({
    venues: new Map<VenueId, Venue>([["kalshi", kalshi]]),
    config: { feedMaxMarketsPerVenue: 1_000 },
    // A value sent back through the serializer Fastify compiles from each schema: what the routes
    // would send if they let Fastify serialize.
    register: (app) => {
      for (const [name, schema] of Object.entries(SCHEMAS)) {
        app.post(
          `/v1/_probe/markets-serializer/${name}`,
          { config: { auth: "none" }, schema: { hide: true, response: { 200: schema } } },
          async (request) => request.body as object,
        );
      }
    },
  });
  const { session, accountId } = await signup(t.app);
  await setAccount(t.services, accountId, { tier: "enterprise", rate_limit_per_minute: 100_000_000 });
  key = (await createKey(t.app, session, { type: "read_only" })).key;
});
afterAll(() => t.close());

async function serialized(name: SchemaName, value: unknown): Promise<string> {
  const response = await t.app.inject({
    method: "POST",
    url: `/v1/_probe/markets-serializer/${name}`,
    payload: value as object,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.body;
}

/** Whether `body` is valid against the schema, with no undeclared field, and what it serializes to. */
async function conforms(name: SchemaName, body: string): Promise<boolean> {
  const value = JSON.parse(body);
  return (
    validator.errors(closedSchemas[name], value).length === 0 && body === (await serialized(name, value))
  );
}

/** One answer, checked against the declared schema (and `former`, for an answer without fields=). */
async function getChecked(url: string, declared: SchemaName, former?: SchemaName) {
  const response = await t.app.inject({ method: "GET", url, headers: bearer(key) });
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
  const body = response.body;
  const value = JSON.parse(body);
  for (const name of former ? [declared, former] : [declared]) {
    expect(describeErrors(validator.errors(closedSchemas[name], value)), body).toEqual([]);
    expect(body, name).toBe(await serialized(name, value));
  }
  return value;
}

// --- random markets -------------------------------------------------------------------------------

/** Any text a venue may send: unicode, quotes, backslashes, control characters (not NUL: PostgreSQL refuses it). */
const text = fc
  .oneof(fc.string({ unit: "grapheme", maxLength: 40 }), fc.string({ unit: "binary", maxLength: 20 }))
  .map((s) => s.replaceAll("\u0000", ""));
const micros = fc.oneof(
  fc.integer({ min: 0, max: 1_000_000 }),
  fc.constantFrom(0, 1, 999_999, 1_000_000),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 3 });
const iso = fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms).toISOString());
const fees = fc.oneof(
  fc.constant(null),
  fc
    .tuple(
      fc.constantFrom("quadratic", "quadratic_with_maker_fees", "flat", "something_new"),
      fc.double({ min: 0, max: 10, noNaN: true }),
    )
    .map(([feeType, multiplier]) => kalshiSchedule(feeType, multiplier)),
  fc
    .record({
      rate: fc.double({ min: 0, max: 1, noNaN: true }),
      exponent: fc.double({ min: 0, max: 4, noNaN: true }),
      takerOnly: fc.boolean(),
      capBps: maybe(fc.integer({ min: 0, max: 10_000 })),
    })
    .map((f) => polymarketSchedule(f)),
);
const listing = fc.record({
  key: fc.stringMatching(/^[A-Z0-9][A-Z0-9._-]{0,20}$/),
  title: text,
  question: text,
  rules: maybe(text),
  settlementSource: maybe(text),
  eventId: maybe(fc.constantFrom("kalshi:E1", "kalshi:E2", 'kalshi:"odd" \\ event')),
  yes: text,
  no: text,
  openTime: maybe(iso),
  closeTime: maybe(iso),
  tickSize: micros,
  minSize: micros,
  volume: micros,
  volume24h: micros,
  liquidity: micros,
  url: maybe(text),
  lastPrice: maybe(micros),
  bestBid: maybe(micros),
  bestAsk: maybe(micros),
  fees,
  live: fc.option(fc.record({ bestBid: maybe(micros), bestAsk: maybe(micros), lastPrice: maybe(micros) }), {
    nil: null,
    freq: 2,
  }),
});

let run = 0;

describe("GET /v1/markets bodies against the routes' response schemas", () => {
  it("are valid and byte for byte what the declared (and, in full, the former) schema serializes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(listing, { minLength: 1, maxLength: 6, selector: (l) => l.key }),
        fc.subarray(MARKET_FIELDS, { minLength: 1 }),
        async (listings, fields) => {
          // Fresh ids each run (the markets of earlier runs are delisted: closed), and a later instant.
          run++;
          t.clock.advance(1_000);
          const markets: VenueMarket[] = listings.map((l) =>
            testMarket("kalshi", `${run}-${l.key}`, {
              title: l.title,
              question: l.question,
              rules: l.rules,
              settlementSource: l.settlementSource,
              eventId: l.eventId,
              outcomes: {
                yes: { label: l.yes, venueTokenId: l.yes },
                no: { label: l.no, venueTokenId: l.no },
              },
              openTime: l.openTime,
              closeTime: l.closeTime,
              tickSize: l.tickSize,
              minSize: l.minSize,
              volume: l.volume,
              volume24h: l.volume24h,
              liquidity: l.liquidity,
              url: l.url,
              lastPrice: l.lastPrice,
              bestBid: l.bestBid,
              bestAsk: l.bestAsk,
              fees: l.fees,
            }),
          );
          kalshi.markets.clear();
          kalshi.set(...markets);
          await t.services.catalog.syncVenue("kalshi");
          const listed = await getChecked("/v1/markets?venue=kalshi&limit=100", "list", "formerList");
          expect(listed.data.map((m: { id: string }) => m.id).sort()).toEqual(
            markets.map((m) => m.id).sort(),
          );
          // Live quotes: the markets already written are written again with their new prices.
          listings.forEach((l, i) => {
            if (!l.live) return;
            t.services.live.ingest("kalshi", {
              kind: "quote",
              marketId: markets[i]!.id,
              bestBid: l.live.bestBid,
              bestAsk: l.live.bestAsk,
              lastPrice: l.live.lastPrice,
              timestamp: "t",
            });
          });
          const full = await getChecked("/v1/markets?venue=kalshi&limit=100", "list", "formerList");
          for (const [i, l] of listings.entries()) {
            const shown = full.data.find((m: { id: string }) => m.id === markets[i]!.id);
            const bid = l.live ? l.live.bestBid : l.bestBid;
            expect(shown.best_bid).toBe(bid === null ? null : bid / 1_000_000);
          }
          // The kept page: the same bytes again.
          await getChecked("/v1/markets?venue=kalshi&limit=100", "list", "formerList");
          const light = await getChecked(
            `/v1/markets?venue=kalshi&limit=100&fields=${[...fields].reverse().join(",")}`,
            "list",
          );
          light.data.forEach((market: Record<string, unknown>, i: number) => {
            expect(Object.keys(market)).toEqual(fields);
            expect(market).toEqual(Object.fromEntries(fields.map((f) => [f, full.data[i][f]])));
          });
          const id = encodeURIComponent(markets[0]!.id);
          await getChecked(`/v1/markets/${id}`, "one", "formerOne");
          await getChecked(`/v1/markets/${id}?fields=${fields.join(",")}`, "one");
          // A text search (here one with no words: every market) is written from the store's rows.
          const searched = await getChecked("/v1/markets?venue=kalshi&limit=100&q=%25", "list", "formerList");
          expect(searched.data.map((m: { id: string }) => m.id)).toEqual(
            full.data.map((m: { id: string }) => m.id),
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it("the checks reject a body with a renamed, mistyped, missing, extra or moved field", async () => {
    kalshi.markets.clear();
    kalshi.set(testMarket("kalshi", "CHECKED", { fees: kalshiSchedule("quadratic", 1) }));
    await t.services.catalog.syncVenue("kalshi");
    const response = await t.app.inject({
      method: "GET",
      url: "/v1/markets?venue=kalshi",
      headers: bearer(key),
    });
    const good = response.body;
    expect(await conforms("list", good)).toBe(true);
    expect(await conforms("formerList", good)).toBe(true);
    for (const bad of [
      good.replace('"best_bid"', '"bestBid"'),
      good.replace(/"volume_24h":[^,]+/, '"volume_24h":"100"'),
      good.replace('"updated_at"', '"extra":1,"updated_at"'),
      good.replace(/"best_bid":([^,]+),"best_ask":([^,]+)/, '"best_ask":$2,"best_bid":$1'),
      good.replace('"taker_only":true', '"taker_only":"true"'),
      good.replace('"total":1', '"total":"1"'),
    ]) {
      expect(bad).not.toBe(good);
      expect(await conforms("list", bad), bad).toBe(false);
    }
    // A market missing a property is a projection's (fields=), never a full market.
    const partial = good.replace(/"tick_size":[^,]+,/, "");
    expect(partial).not.toBe(good);
    expect(await conforms("list", partial)).toBe(true);
    expect(await conforms("formerList", partial)).toBe(false);
  });
});
