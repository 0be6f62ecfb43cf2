/**
 * Positions as the venue has them (issue 19, part 5), through the API against the fake venues, which
 * serve positions as the real ones do (Polymarket's Data API defaults, Kalshi's cursor pages):
 * - a live key's `GET /v1/positions` lists what the linked venue accounts hold outside crossbook
 *   (`source: "venue"`), every page of it, small positions included;
 * - such a position can be sold through crossbook, and becomes crossbook's, at unknown cost;
 * - crossbook's own positions carry the venue's size, and a difference is reported (and counted),
 *   never written over;
 * - a venue that cannot be read leaves crossbook's positions as they are, flagged, never a 500;
 * - venue positions are read once per period, not on every GET; sandbox keys never read them.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import type { SeedMarket } from "@crossbook/fakes/world";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock, systemClock } from "../../src/infra/clock";
import { silentLogger } from "../../src/infra/log";
import { createKalshiVenue } from "../../src/venues/kalshi/adapter";
import type { VenueId } from "../../src/venues/model";
import { PolymarketVenue } from "../../src/venues/polymarket/adapter";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, expectError, signup, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { get, place, placed } from "./setup";

/** The venue's answer is kept this long (VENUE_POSITIONS_MAX_AGE_SECONDS). */
const MAX_AGE_S = 5;
/** Kalshi positions page size here, so a 120-position account spans three pages. */
const KALSHI_PAGE = 50;

const KALSHI_WORLD: SeedMarket[] = Array.from({ length: 140 }, (_, i) => ({
  venue: "kalshi",
  key: `KXHELD-${String(Math.floor(i / 2)).padStart(3, "0")}-M${i}`,
  eventKey: `KXHELD-${String(Math.floor(i / 2)).padStart(3, "0")}`,
  eventTitle: `Held event ${Math.floor(i / 2)}`,
  category: "economics",
  question: `Generated Kalshi market ${i}?`,
  rules: `Resolves Yes if generated condition ${i} holds.`,
  settlementSource: "Generator",
  closeTime: "2027-03-01T00:00:00Z",
  yesPrice: 0.4,
  tickSize: 0.01,
}));

const POLYMARKET_WORLD: SeedMarket[] = Array.from({ length: 90 }, (_, i) => ({
  venue: "polymarket",
  key: `held-pm-${i}`,
  eventKey: `held-pm-event-${i}`,
  eventTitle: `Held Polymarket event ${i}`,
  category: "economics",
  question: `Will held Polymarket thing ${i} happen?`,
  rules: `Resolves Yes if held thing ${i} happens.`,
  settlementSource: "Generator",
  closeTime: "2027-06-30T00:00:00Z",
  yesPrice: 0.4,
  tickSize: 0.01,
}));

describe.each(STORE_BACKENDS)("venue-held positions on %s", (store) => {
  let polymarket: PolymarketFake;
  let kalshi: KalshiFake;
  let t: TestApp;

  beforeAll(async () => {
    polymarket = await startPolymarketFake({ world: POLYMARKET_WORLD });
    kalshi = await startKalshiFake({ world: KALSHI_WORLD });
    const http = { backoffBaseMs: 1, backoffCapMs: 5 };
    const venues = new Map<VenueId, Venue>([
      [
        "polymarket",
        new PolymarketVenue({
          gammaUrl: polymarket.gammaUrl,
          clobUrl: polymarket.clobUrl,
          dataUrl: polymarket.dataUrl,
          wsUrl: polymarket.wsUrl,
          clock: systemClock,
          log: silentLogger,
          http,
        }),
      ],
      [
        "kalshi",
        createKalshiVenue({
          apiUrl: kalshi.apiUrl,
          wsUrl: kalshi.wsUrl,
          clock: systemClock,
          log: silentLogger,
          http,
          pageLimit: { positions: KALSHI_PAGE },
        }),
      ],
    ]);
    t = await createTestApp({
      store,
      venues,
      // The venues stamp fills with the real time; crossbook's clock starts there too.
      clock: new ManualClock(Date.now()),
      config: { loginAttemptsPerMinute: 1_000, venuePositionsMaxAgeSeconds: MAX_AGE_S },
    });
    await t.services.catalog.syncVenue("kalshi");
    await t.services.catalog.syncVenue("polymarket");
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await Promise.all([polymarket?.close(), kalshi?.close()]);
  });

  // Tickers 0–119 make up the many-pages account; each other test takes markets of its own.
  const tickers = () => kalshi.script.tickers({ openOnly: true, includeMve: false });
  let kalshiNext = 120;
  function kalshiMarket() {
    const ticker = tickers()[kalshiNext++]!;
    // YES bids at 0.30, YES asks at 0.50 (NO bids at 0.50).
    kalshi.script.setBook(ticker, { yes: [[0.3, 50]], no: [[0.5, 50]] });
    return { ticker, id: `kalshi:${ticker}` };
  }

  interface Trader {
    accountId: string;
    liveKey: string;
    sandboxKey: string;
    kalshiKeyId: string;
    polymarketAddress: string;
  }

  async function trader(): Promise<Trader> {
    const { session, accountId } = await signup(t.app);
    const liveKey = (await createKey(t.app, session, { type: "trading", environment: "live" })).key;
    const sandboxKey = (await createKey(t.app, session, { type: "trading", environment: "sandbox" })).key;
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const kalshiKeyId = `k-${randomUUID()}`;
    kalshi.script.addApiKey({
      keyId: kalshiKeyId,
      publicKeyPem: rsa.publicKey.export({ type: "spki", format: "pem" }).toString(),
      balanceCents: 50_000,
    });
    const privateKey = generatePrivateKey();
    const polymarketAddress = privateKeyToAccount(privateKey).address;
    polymarket.script.registerWallet({ address: polymarketAddress, collateral: 1000 });
    const pem = rsa.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    await link(liveKey, { venue: "kalshi", key_id: kalshiKeyId, private_key_pem: pem });
    await link(liveKey, { venue: "polymarket", private_key: privateKey });
    return { accountId, liveKey, sandboxKey, kalshiKeyId, polymarketAddress };
  }

  async function link(key: string, body: Record<string, unknown>) {
    const response = await t.app.inject({
      method: "POST",
      url: "/v1/venue-credentials",
      headers: bearer(key),
      payload: body,
    });
    if (response.statusCode !== 201) throw new Error(`link: ${response.statusCode} ${response.body}`);
  }

  const positions = (key: string, query = "") => get(t.app, key, `/v1/positions${query}`);
  const kalshiReads = () => kalshi.script.requestCount("GET /portfolio/positions");
  const polymarketReads = () => polymarket.script.requestCount("GET /data/positions");
  const mismatches = async () => {
    const text = await t.metrics.registry.metrics();
    return Number(/^crossbook_venue_position_mismatches_total (\d+)/m.exec(text)?.[1]);
  };

  it("lists a Polymarket wallet's half-share position and its 150th, held outside crossbook", async () => {
    const me = await trader();
    const tokens = polymarket.script.markets().flatMap((m) => [m.yesTokenId, m.noTokenId]);
    const held: Record<string, number> = {};
    for (let i = 0; i < 150; i++) held[tokens[i]!] = 10 + i;
    held[tokens[150]!] = 0.5;
    polymarket.script.registerWallet({ address: me.polymarketAddress, positions: held });

    const first = await positions(me.liveKey, "?limit=100");
    expect(first.meta).toMatchObject({ total: 151, page: 1, limit: 100 });
    expect(first.meta.venues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ venue: "polymarket", status: "ok", reason: null }),
        expect.objectContaining({ venue: "kalshi", status: "ok" }),
      ]),
    );
    expect(first.data).toHaveLength(100);
    const second = await positions(me.liveKey, "?limit=100&offset=100");
    expect(second.data).toHaveLength(51);
    const all = [...first.data, ...second.data];
    expect(all.every((p: { source: string }) => p.source === "venue")).toBe(true);
    expect(new Set(all.map((p: { id: string }) => p.id)).size).toBe(151);

    const half = all.find((p: { size: number }) => p.size === 0.5);
    expect(half).toMatchObject({
      platform: "polymarket",
      source: "venue",
      status: "open",
      environment: "live",
      size: 0.5,
      reserved: 0,
      unknown_cost_size: 0.5,
      average_price: null,
      cost_basis: 0,
      unrealized_pnl: null,
      opened_at: null,
      reconciliation: { status: "venue_only", venue_size: 0.5 },
    });
    expect(half.id).toMatch(/^vpos_/);
    expect(half.reconciliation.venue_average_price).toBeTypeOf("number");
    expect(all.find((p: { size: number }) => p.size === 10)).toBeDefined();
    // The same position, alone.
    expect((await get(t.app, me.liveKey, `/v1/positions/${half.id}`)).data).toEqual(half);
  });

  it("lists every page of a Kalshi account's positions, NO ones as NO", async () => {
    const me = await trader();
    const mine = tickers().slice(0, 120);
    mine.forEach((ticker, i) => {
      kalshi.script.setPosition(me.kalshiKeyId, ticker, { contracts: i % 2 === 0 ? i + 1 : -(i + 1) });
    });
    const before = kalshiReads();
    const first = await positions(me.liveKey, "?limit=100");
    // 120 positions at 50 a page: three signed requests.
    expect(kalshiReads() - before).toBe(3);
    expect(first.meta.total).toBe(120);
    const rest = await positions(me.liveKey, "?limit=100&offset=100");
    const all = [...first.data, ...rest.data];
    expect(all).toHaveLength(120);
    for (const [i, ticker] of mine.entries()) {
      expect(all).toContainEqual(
        expect.objectContaining({
          market_id: `kalshi:${ticker}`,
          outcome: i % 2 === 0 ? "yes" : "no",
          size: i + 1,
          source: "venue",
        }),
      );
    }
    // Filters apply to venue-held positions too.
    const no = await positions(me.liveKey, `?market_id=kalshi:${mine[1]}`);
    expect(no.data).toEqual([expect.objectContaining({ outcome: "no", size: 2 })]);
    expect((await positions(me.liveKey, "?status=closed")).meta.total).toBe(0);
  });

  it("sells a venue-held position through crossbook, which then keeps it at unknown cost", async () => {
    const me = await trader();
    const k = kalshiMarket();
    kalshi.script.setPosition(me.kalshiKeyId, k.ticker, { contracts: 10, averagePrice: 0.4 });
    const listed = (await positions(me.liveKey, `?market_id=${k.id}`)).data;
    expect(listed).toEqual([
      expect.objectContaining({
        source: "venue",
        size: 10,
        reconciliation: expect.objectContaining({ status: "venue_only", venue_average_price: 0.4 }),
      }),
    ]);
    const id = listed[0].id;

    // More than the venue holds: refused, saying what the venue holds.
    const tooMany = await place(t.app, me.liveKey, { market_id: k.id, side: "sell", price: 0.3, amount: 11 });
    expectError(tooMany, 422, "INSUFFICIENT_POSITION");
    expect(tooMany.json().error.details).toMatchObject({ venue_held: 10 });

    // The YES bid at 0.30 takes 4.
    const sell = await placed(t.app, me.liveKey, { market_id: k.id, side: "sell", price: 0.3, amount: 4 });
    expect(sell).toMatchObject({ status: "filled", filled_amount: 4, position_id: id });
    const position = (await get(t.app, me.liveKey, `/v1/positions/${id}`)).data;
    expect(position).toMatchObject({
      id,
      source: "crossbook",
      size: 6,
      reserved: 0,
      unknown_cost_size: 6,
      average_price: null,
      cost_basis: 0,
      // The cost of what was sold is unknown: nothing is realized.
      realized_pnl: 0,
      reconciliation: { status: "match", venue_size: 6 },
    });
    expect(position.opened_at).toBeTypeOf("string");
    // One position on the market, not a crossbook one and a venue one.
    expect((await positions(me.liveKey, `?market_id=${k.id}`)).data).toHaveLength(1);
    // The rest can be sold too.
    const rest = await placed(t.app, me.liveKey, { market_id: k.id, side: "sell", price: 0.3, amount: 6 });
    expect(rest.status).toBe("filled");
    expect((await get(t.app, me.liveKey, `/v1/positions/${id}`)).data).toMatchObject({
      status: "closed",
      size: 0,
      unknown_cost_size: 0,
    });
    expect((await positions(me.liveKey, `?market_id=${k.id}`)).meta.total).toBe(0);

    // Bought again outside crossbook: held at the venue under an id of its own, beside the closed one.
    kalshi.script.setPosition(me.kalshiKeyId, k.ticker, { contracts: 2 });
    t.services.holdings.invalidate(me.accountId, "kalshi");
    const both = (await positions(me.liveKey, `?market_id=${k.id}&status=all`)).data;
    expect(both).toHaveLength(2);
    const again = both.find((p: { source: string }) => p.source === "venue");
    expect(again).toMatchObject({ size: 2, status: "open" });
    expect(again.id).not.toBe(id);
    expect((await get(t.app, me.liveKey, `/v1/positions/${again.id}`)).data).toEqual(again);
    expect((await get(t.app, me.liveKey, `/v1/positions/${id}`)).data.status).toBe("closed");
  });

  it("sells a Polymarket position held outside crossbook", async () => {
    const me = await trader();
    const info = polymarket.script.markets().at(-1)!;
    const id = `polymarket:${info.conditionId.toLowerCase()}`;
    polymarket.script.registerWallet({ address: me.polymarketAddress, positions: { [info.noTokenId]: 20 } });
    // NO bids at 0.40 (the YES book's asks at 0.60).
    polymarket.script.setBook(info.yesTokenId, {
      bids: [{ price: "0.2", size: "100" }],
      asks: [{ price: "0.6", size: "100" }],
    });
    const held = (await positions(me.liveKey, `?market_id=${id}`)).data;
    expect(held).toEqual([expect.objectContaining({ source: "venue", outcome: "no", size: 20 })]);

    const sell = await placed(t.app, me.liveKey, {
      market_id: id,
      outcome: "no",
      side: "sell",
      price: 0.4,
      amount: 5,
    });
    expect(sell).toMatchObject({ status: "filled", filled_amount: 5, position_id: held[0].id });
    expect((await get(t.app, me.liveKey, `/v1/positions/${held[0].id}`)).data).toMatchObject({
      source: "crossbook",
      outcome: "no",
      size: 15,
      unknown_cost_size: 15,
      reconciliation: { status: "match", venue_size: 15 },
    });
  });

  it("sells contracts held both through crossbook and outside it, the outside ones first", async () => {
    const me = await trader();
    const k = kalshiMarket();
    const bought = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.5, amount: 4 });
    expect(bought.status).toBe("filled");
    // 3 more bought on Kalshi's own site.
    kalshi.script.setPosition(me.kalshiKeyId, k.ticker, { contracts: 7 });
    t.services.holdings.invalidate(me.accountId, "kalshi");
    const sell = await placed(t.app, me.liveKey, { market_id: k.id, side: "sell", price: 0.3, amount: 5 });
    expect(sell).toMatchObject({ status: "filled", position_id: bought.position_id });
    const position = (await get(t.app, me.liveKey, `/v1/positions/${bought.position_id}`)).data;
    expect(position).toMatchObject({
      source: "crossbook",
      size: 2,
      unknown_cost_size: 0,
      average_price: 0.5,
      cost_basis: 1,
      // 2 of known cost (0.50) sold at 0.30; the 3 of unknown cost realize nothing.
      realized_pnl: -0.4,
      reconciliation: { status: "match", venue_size: 2 },
    });
  });

  it("reports a position that differs from the venue's, without changing it", async () => {
    const me = await trader();
    const k = kalshiMarket();
    const bought = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.5, amount: 5 });
    expect(bought.status).toBe("filled");
    const matching = (await get(t.app, me.liveKey, `/v1/positions/${bought.position_id}`)).data;
    expect(matching.reconciliation).toMatchObject({ status: "match", venue_size: 5 });
    const before = await mismatches();

    // The account sells 2 on Kalshi's site: the venue holds 3, crossbook still 5.
    kalshi.script.setPosition(me.kalshiKeyId, k.ticker, { contracts: 3 });
    t.clock.advance((MAX_AGE_S + 1) * 1000);
    const listed = (await positions(me.liveKey, `?market_id=${k.id}`)).data;
    expect(listed).toEqual([
      expect.objectContaining({
        id: bought.position_id,
        source: "crossbook",
        size: 5,
        reconciliation: expect.objectContaining({ status: "mismatch", venue_size: 3 }),
      }),
    ]);
    expect(await mismatches()).toBe(before + 1);
    // Read again: the same difference, counted once.
    await positions(me.liveKey, `?market_id=${k.id}`);
    expect(await mismatches()).toBe(before + 1);
  });

  it("serves crossbook's positions, flagged, while a venue cannot be read", async () => {
    const me = await trader();
    const k = kalshiMarket();
    const bought = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.5, amount: 2 });
    const other = kalshiMarket();
    kalshi.script.setPosition(me.kalshiKeyId, other.ticker, { contracts: 4 });
    expect((await positions(me.liveKey)).meta.total).toBe(2);

    kalshi.script.goDown(true);
    try {
      t.clock.advance((MAX_AGE_S + 1) * 1000);
      const response = await t.app.inject({
        method: "GET",
        url: "/v1/positions",
        headers: bearer(me.liveKey),
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      // crossbook's own position, flagged; the venue-held one cannot be known now.
      expect(body.data).toEqual([
        expect.objectContaining({
          id: bought.position_id,
          size: 2,
          reconciliation: expect.objectContaining({ status: "unavailable", venue_size: null }),
        }),
      ]);
      expect(body.meta.venues).toContainEqual(
        expect.objectContaining({ venue: "kalshi", status: "unavailable", reason: "unavailable" }),
      );
      expect(body.meta.venues).toContainEqual(expect.objectContaining({ venue: "polymarket", status: "ok" }));
      const one = (await get(t.app, me.liveKey, `/v1/positions/${bought.position_id}`)).data;
      expect(one.reconciliation.status).toBe("unavailable");
      // A sell beyond crossbook's own contracts cannot be checked against the venue.
      expectError(
        await place(t.app, me.liveKey, { market_id: other.id, side: "sell", price: 0.3, amount: 1 }),
        503,
        "VENUE_UNAVAILABLE",
      );
    } finally {
      kalshi.script.goDown(false);
    }
    t.clock.advance((MAX_AGE_S + 1) * 1000);
    expect((await positions(me.liveKey)).meta.total).toBe(2);
  });

  it("reads the venues once per period, and afresh after crossbook's own fills", async () => {
    const me = await trader();
    const k = kalshiMarket();
    const [kalshiBefore, polymarketBefore] = [kalshiReads(), polymarketReads()];
    await positions(me.liveKey);
    await positions(me.liveKey);
    await positions(me.liveKey, "?status=all");
    expect(kalshiReads() - kalshiBefore).toBe(1);
    expect(polymarketReads() - polymarketBefore).toBe(1);

    t.clock.advance((MAX_AGE_S + 1) * 1000);
    await positions(me.liveKey);
    expect(kalshiReads() - kalshiBefore).toBe(2);

    // A fill through crossbook: the next read sees the venue's new size, not a stale one.
    const bought = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.5, amount: 3 });
    const after = (await get(t.app, me.liveKey, `/v1/positions/${bought.position_id}`)).data;
    expect(after.reconciliation).toMatchObject({ status: "match", venue_size: 3 });
    expect(kalshiReads() - kalshiBefore).toBe(3);
  });

  it("never reads a venue for a sandbox key", async () => {
    const me = await trader();
    kalshi.script.setPosition(me.kalshiKeyId, kalshiMarket().ticker, { contracts: 5 });
    const [kalshiBefore, polymarketBefore] = [kalshiReads(), polymarketReads()];
    const sandbox = await positions(me.sandboxKey, "?status=all");
    expect(sandbox.data).toEqual([]);
    expect(sandbox.meta).toEqual({ page: 1, limit: 50, total: 0 });
    expect(kalshiReads()).toBe(kalshiBefore);
    expect(polymarketReads()).toBe(polymarketBefore);
  });
});
