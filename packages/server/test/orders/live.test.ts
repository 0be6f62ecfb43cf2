/**
 * Live routing against the fake venues, through the real adapters and the API: a live key's order
 * reaches the venue with the account's linked credentials, the venue's fills come back through the
 * poller into the same bookkeeping the sandbox uses, cancels reach the venue, a venue refusal is a
 * 422 with the venue's reason, a venue that does not answer a 503 with the order left pending and
 * reconciled later. And the isolation the issue asks for: a sandbox key never reaches a venue's
 * trading endpoints, and live activity never touches the sandbox ledger.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock, systemClock } from "../../src/infra/clock";
import { silentLogger } from "../../src/infra/log";
import { liveOrderGroups } from "../../src/ledger/orders-repo";
import { createKalshiVenue } from "../../src/venues/kalshi/adapter";
import type { VenueId } from "../../src/venues/model";
import { PolymarketVenue } from "../../src/venues/polymarket/adapter";
import type { Venue, VenueCredentials } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, expectError, signup, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { eventsOfType, get, place, placed } from "./setup";

describe.each(STORE_BACKENDS)("live routing on %s", (store) => {
  let polymarket: PolymarketFake;
  let kalshi: KalshiFake;
  let venues: Map<VenueId, Venue>;
  let t: TestApp;

  beforeAll(async () => {
    polymarket = await startPolymarketFake();
    kalshi = await startKalshiFake();
    const http = { backoffBaseMs: 1, backoffCapMs: 5 };
    venues = new Map<VenueId, Venue>([
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
        }),
      ],
    ]);
    // The venues stamp fills with the real time; crossbook's clock starts there too.
    t = await createTestApp({
      store,
      venues,
      clock: new ManualClock(Date.now()),
      // One account per test, all from one address.
      config: { loginAttemptsPerMinute: 1_000 },
    });
    await t.services.catalog.syncVenue("kalshi");
    await t.services.catalog.syncVenue("polymarket");
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await Promise.all([polymarket?.close(), kalshi?.close()]);
  });

  // Each test trades on markets of its own, so resting orders of one never meet another's trades.
  let kalshiNext = 0;
  let polymarketNext = 0;
  function kalshiMarket() {
    const ticker = kalshi.script.tickers({ openOnly: true, includeMve: false })[kalshiNext++]!;
    // YES bids at 0.20, YES asks at 0.50 (NO bids at 0.50): a YES buy at 0.30 rests.
    kalshi.script.setBook(ticker, { yes: [[0.2, 50]], no: [[0.5, 50]] });
    return { ticker, id: `kalshi:${ticker}` };
  }
  function polymarketMarket() {
    const info = polymarket.script
      .markets()
      .filter((m) => m.status === "open" && m.tickSize === 0.01 && !m.negRisk)[polymarketNext++]!;
    // Before any order: replacing a book cancels the orders resting in it.
    polymarket.script.setBook(info.yesTokenId, {
      bids: [{ price: "0.2", size: "100" }],
      asks: [{ price: "0.6", size: "100" }],
    });
    return { info, id: `polymarket:${info.conditionId.toLowerCase()}` };
  }

  interface Trader {
    accountId: string;
    liveKey: string;
    sandboxKey: string;
    kalshiKeyId: string;
    kalshiCreds: VenueCredentials;
    polymarketAddress: string;
    polymarketCreds: VenueCredentials;
  }

  /** An account with a live and a sandbox key, linked to a fresh account on each fake venue. */
  async function trader(options: { link?: boolean } = {}): Promise<Trader> {
    const { session, accountId } = await signup(t.app);
    const liveKey = (await createKey(t.app, session, { type: "trading", environment: "live" })).key;
    const sandboxKey = (await createKey(t.app, session, { type: "trading", environment: "sandbox" })).key;
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const kalshiKeyId = `k-${randomUUID()}`;
    const pem = rsa.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    kalshi.script.addApiKey({
      keyId: kalshiKeyId,
      publicKeyPem: rsa.publicKey.export({ type: "spki", format: "pem" }).toString(),
      balanceCents: 50_000,
    });
    const privateKey = generatePrivateKey();
    const polymarketAddress = privateKeyToAccount(privateKey).address;
    polymarket.script.registerWallet({ address: polymarketAddress, collateral: 1000 });
    if (options.link !== false) {
      await link(liveKey, { venue: "kalshi", key_id: kalshiKeyId, private_key_pem: pem });
      await link(liveKey, { venue: "polymarket", private_key: privateKey });
    }
    return {
      accountId,
      liveKey,
      sandboxKey,
      kalshiKeyId,
      kalshiCreds: { venue: "kalshi", keyId: kalshiKeyId, privateKeyPem: pem },
      polymarketAddress,
      polymarketCreds: { venue: "polymarket", privateKey, signatureType: 0 },
    };
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

  /** The order as the venue itself reports it, read with the trader's own credentials. */
  const atVenue = (venue: VenueId, creds: VenueCredentials, venueOrderId: string) =>
    venues.get(venue)!.getOrder(creds, venueOrderId);

  const order = async (key: string, id: string) => (await get(t.app, key, `/v1/orders/${id}`)).data;
  const cancel = (key: string, id: string) =>
    t.app.inject({ method: "DELETE", url: `/v1/orders/${id}`, headers: bearer(key) });
  const venueOrderId = async (id: string) =>
    (
      await t.runtime.store.db
        .selectFrom("orders")
        .select("venue_order_id")
        .where("id", "=", id)
        .executeTakeFirstOrThrow()
    ).venue_order_id;
  /** A live Kalshi buy the venue placed but whose answer never arrived: pending here; its id. */
  async function placedWithLostAnswer(key: string, marketId: string): Promise<string> {
    kalshi.script.malformNext("garbage", { path: "/portfolio/events/orders" });
    const error = expectError(
      await place(t.app, key, { market_id: marketId, side: "buy", price: 0.3, amount: 5 }),
      503,
      "VENUE_UNAVAILABLE",
    );
    return error.details!["order_id"] as string;
  }
  const eventsOf = async (type: string, orderId: string) =>
    (await eventsOfType(t, type)).filter((e) => e.data.order_id === orderId);

  describe("placing", () => {
    it("a resting limit order on each venue reaches the venue and is open with the venue's id", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const p = polymarketMarket();
      kalshi.script.resetRequestCounts();
      const ko = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      expect(ko).toMatchObject({ status: "open", environment: "live", filled_amount: 0, platform: "kalshi" });
      expect(kalshi.script.requestCount("POST /portfolio/events/orders")).toBe(1);
      const kid = await venueOrderId(ko.id);
      expect(kid).toBeTruthy();
      expect(await atVenue("kalshi", me.kalshiCreds, kid!)).toMatchObject({
        status: "open",
        marketId: k.id,
        outcome: "yes",
        side: "buy",
        price: 300_000,
        size: 5_000_000,
        clientOrderId: ko.id,
      });

      const po = await placed(t.app, me.liveKey, { market_id: p.id, side: "buy", price: 0.3, amount: 10 });
      expect(po).toMatchObject({ status: "open", environment: "live", platform: "polymarket" });
      const pid = await venueOrderId(po.id);
      expect(await atVenue("polymarket", me.polymarketCreds, pid!)).toMatchObject({
        status: "open",
        marketId: p.id,
        price: 300_000,
        size: 10_000_000,
        filledSize: 0,
      });
      const created = await eventsOf("order.created", ko.id);
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({ account_id: me.accountId, environment: "live" });
    });

    it("an order that crosses at placement comes back filled, its position opened", async () => {
      const me = await trader();
      const k = kalshiMarket();
      // The NO bid at 0.50 is a YES ask at 0.50: a YES buy at 0.50 takes it.
      const o = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.5, amount: 3 });
      expect(o).toMatchObject({ status: "filled", filled_amount: 3, average_fill_price: 0.5 });
      const fills = (await get(t.app, me.liveKey, `/v1/orders/${o.id}/fills`)).data;
      expect(fills).toHaveLength(1);
      expect(fills[0]).toMatchObject({
        price: 0.5,
        size: 3,
        liquidity: "taker",
        cause: { kind: "venue_fill" },
      });
      const position = (await get(t.app, me.liveKey, `/v1/positions/${o.position_id}`)).data;
      expect(position).toMatchObject({ size: 3, cost_basis: 1.5, environment: "live", status: "open" });
      expect(await eventsOf("order.filled", o.id)).toHaveLength(1);
    });

    it("live fills cost what the venue charged: Kalshi's fee_cost, Polymarket's schedule (the venue's record has no fee)", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const ko = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.5, amount: 3 });
      const kalshiFills = await venues.get("kalshi")!.listFills(me.kalshiCreds, { marketId: k.id });
      const charged = kalshiFills.reduce((sum, f) => sum + (f.fee ?? 0), 0);
      expect(charged).toBeGreaterThan(0);
      expect(ko.fees).toBeCloseTo(charged / 1e6, 9);

      const p = polymarketMarket();
      const fees = (await get(t.app, me.liveKey, `/v1/markets/${p.id}`)).data.fees;
      expect(fees).toMatchObject({ model: "polymarket", exponent: 1, cap_bps: 1000 });
      const before = await venues.get("polymarket")!.getBalance(me.polymarketCreds);
      const po = await placed(t.app, me.liveKey, { market_id: p.id, side: "buy", price: 0.6, amount: 10 });
      expect(po).toMatchObject({ status: "filled", filled_amount: 10 });
      // shares × rate × p(1 − p), as the venue takes it from the wallet (not fee_rate_bps × notional)
      const expected = Math.floor((10 * fees.rate * 0.6 * 0.4 + 1e-12) * 1e5) / 1e5;
      expect(po.fees).toBeCloseTo(expected, 9);
      const after = await venues.get("polymarket")!.getBalance(me.polymarketCreds);
      expect((before - after) / 1e6).toBeCloseTo(6 + expected, 9);
    });

    it("a live market order goes out at the sandbox's worst-price bound and fills at the venue", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const o = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", type: "market", amount: 2 });
      // Best YES ask 0.50, 5 % slippage -> 0.525 -> 0.52 on the tick.
      expect(o).toMatchObject({ status: "filled", filled_amount: 2, average_fill_price: 0.5, price: 0.52 });
    });

    it("a Polymarket IOC of 7 @ 0.533 is rounded to the venue's FAK precision, placed, and says so", async () => {
      const me = await trader();
      const info = polymarket.script.market("fed-chair-announces-resignation-by-december-31-2026");
      polymarket.script.setBook(info.yesTokenId, {
        bids: [{ price: "0.5", size: "100" }],
        asks: [{ price: "0.533", size: "100" }],
      });
      const market = `polymarket:${info.conditionId.toLowerCase()}`;
      const o = await placed(t.app, me.liveKey, {
        market_id: market,
        side: "buy",
        price: 0.533,
        amount: 7,
        time_in_force: "IOC",
      });
      // $3.731 is not a whole number of cents: the venue takes $3.73 for 6.9981 shares.
      expect(o).toMatchObject({
        status: "filled",
        amount: 6.9981,
        requested_amount: 7,
        filled_amount: 6.9981,
        average_fill_price: 0.533,
      });
      expect(o.amount_note).toMatch(/^rounded down from 7 to 6\.9981: Polymarket takes IOC\/FOK/);
      expect((await order(me.liveKey, o.id)).amount_note).toBe(o.amount_note);
      // A limit order that rests keeps its amount and says nothing.
      const resting = await placed(t.app, me.liveKey, {
        market_id: market,
        side: "buy",
        price: 0.4,
        amount: 7,
      });
      expect(resting).toMatchObject({ status: "open", amount: 7, requested_amount: null, amount_note: null });
    });

    it("a Polymarket IOC the venue matched in part shows its partial fill at once, the rest cancelled", async () => {
      const me = await trader();
      const p = polymarketMarket();
      polymarket.script.setBook(p.info.yesTokenId, {
        bids: [{ price: "0.2", size: "100" }],
        asks: [{ price: "0.55", size: "4" }],
      });
      const o = await placed(t.app, me.liveKey, {
        market_id: p.id,
        side: "buy",
        price: 0.55,
        amount: 10,
        time_in_force: "IOC",
      });
      expect(o).toMatchObject({
        status: "cancelled",
        amount: 10,
        filled_amount: 4,
        average_fill_price: 0.55,
        cancel_reason: "unfilled_ioc",
      });
      const position = (await get(t.app, me.liveKey, `/v1/positions/${o.position_id}`)).data;
      expect(position).toMatchObject({ size: 4, environment: "live" });
    });

    it("a retry with the same Idempotency-Key replays the acknowledged order and places nothing twice", async () => {
      const me = await trader();
      const k = kalshiMarket();
      kalshi.script.resetRequestCounts();
      const body = { market_id: k.id, side: "buy", price: 0.25, amount: 4 };
      const first = await place(t.app, me.liveKey, body, { "idempotency-key": "live-retry-1" });
      expect(first.statusCode).toBe(201);
      const again = await place(t.app, me.liveKey, body, { "idempotency-key": "live-retry-1" });
      expect(again.statusCode).toBe(201);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.json().data).toEqual(first.json().data);
      expect(again.json().data.status).toBe("open");
      expect(kalshi.script.requestCount("POST /portfolio/events/orders")).toBe(1);
    });
  });

  describe("selling", () => {
    it("a live sell needs contracts bought through crossbook; it reserves them and closes the position", async () => {
      const me = await trader();
      const k = kalshiMarket();
      expectError(
        await place(t.app, me.liveKey, { market_id: k.id, side: "sell", price: 0.45, amount: 3 }),
        422,
        "INSUFFICIENT_POSITION",
      );
      const bought = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.5, amount: 3 });
      expect(bought.status).toBe("filled");
      const sell = await placed(t.app, me.liveKey, { market_id: k.id, side: "sell", price: 0.45, amount: 3 });
      expect(sell).toMatchObject({ status: "open", position_id: bought.position_id });
      expect((await get(t.app, me.liveKey, `/v1/positions/${bought.position_id}`)).data.reserved).toBe(3);
      // An outside buyer lifts the YES asks up to 0.45: ours.
      kalshi.script.printTrade(k.ticker, { side: "yes", count: 3, price: 0.45 });
      await t.services.venueRouter.pollOnce();
      expect(await order(me.liveKey, sell.id)).toMatchObject({ status: "filled", average_fill_price: 0.45 });
      const position = (await get(t.app, me.liveKey, `/v1/positions/${bought.position_id}`)).data;
      expect(position).toMatchObject({ status: "closed", size: 0, reserved: 0, realized_pnl: -0.15 });
      const closed = (await eventsOfType(t, "position.closed")).filter(
        (e) => e.data.position_id === bought.position_id,
      );
      expect(closed).toHaveLength(1);
    });
  });

  describe("fills by polling", () => {
    it("a resting order filled at the venue is filled here after a poll, on both venues", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const p = polymarketMarket();
      const ko = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      const po = await placed(t.app, me.liveKey, { market_id: p.id, side: "buy", price: 0.3, amount: 10 });
      // Outside takers hit the YES bids down to 0.30: ours is the best.
      kalshi.script.printTrade(k.ticker, { side: "no", count: 5, price: 0.3 });
      polymarket.script.printTrade(p.info.yesTokenId, { price: "0.3", size: "10", side: "SELL" });
      expect((await order(me.liveKey, ko.id)).status).toBe("open");

      const summary = await t.services.venueRouter.pollOnce();
      expect(summary.fills).toBeGreaterThanOrEqual(2);
      for (const [o, amount] of [
        [ko, 5],
        [po, 10],
      ] as const) {
        const now = await order(me.liveKey, o.id);
        expect(now).toMatchObject({ status: "filled", filled_amount: amount, average_fill_price: 0.3 });
        const filled = await eventsOf("order.filled", o.id);
        expect(filled).toHaveLength(1);
        expect(filled[0]!.data).toMatchObject({ filled_amount: amount, average_fill_price: 0.3 });
        expect(filled[0]).toMatchObject({ environment: "live", account_id: me.accountId });
        const position = (await get(t.app, me.liveKey, `/v1/positions/${now.position_id}`)).data;
        expect(position).toMatchObject({ size: amount, environment: "live" });
        const opened = (await eventsOfType(t, "position.opened")).filter(
          (e) => e.data.position_id === now.position_id,
        );
        expect(opened).toHaveLength(1);
        const fills = (await get(t.app, me.liveKey, `/v1/orders/${o.id}/fills`)).data;
        expect(fills.every((f: { liquidity: string }) => f.liquidity === "maker")).toBe(true);
      }

      // Polling again applies nothing twice.
      await t.services.venueRouter.pollOnce();
      expect(await eventsOf("order.filled", ko.id)).toHaveLength(1);
      expect((await get(t.app, me.liveKey, `/v1/orders/${po.id}/fills`)).data).toHaveLength(1);
    });

    it("a partial fill keeps the order open; an order the venue cancelled is cancelled here", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const o = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      kalshi.script.printTrade(k.ticker, { side: "no", count: 2, price: 0.3 });
      await t.services.venueRouter.pollOnce();
      expect(await order(me.liveKey, o.id)).toMatchObject({ status: "open", filled_amount: 2 });
      expect(await eventsOf("order.partially_filled", o.id)).toHaveLength(1);

      // The market closes at the venue, which cancels the resting remainder.
      kalshi.script.closeMarket(k.ticker);
      await t.services.venueRouter.pollOnce();
      expect(await order(me.liveKey, o.id)).toMatchObject({
        status: "cancelled",
        filled_amount: 2,
        cancel_reason: "venue",
      });
      const cancelled = await eventsOf("order.cancelled", o.id);
      expect(cancelled).toHaveLength(1);
      expect(cancelled[0]!.data.reason).toBe("venue");
    });
  });

  describe("reading with refresh=true", () => {
    const refreshed = async (key: string, path: string) =>
      (await get(t.app, key, `${path}?refresh=true`)).data;

    it("asks the venue now: a fill the poller has not seen yet shows at once, on both venues", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const p = polymarketMarket();
      const ko = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      const po = await placed(t.app, me.liveKey, { market_id: p.id, side: "buy", price: 0.3, amount: 10 });
      kalshi.script.printTrade(k.ticker, { side: "no", count: 2, price: 0.3 });
      polymarket.script.printTrade(p.info.yesTokenId, { price: "0.3", size: "10", side: "SELL" });
      // Without refresh: the ledger as the last poll left it.
      expect(await order(me.liveKey, ko.id)).toMatchObject({ status: "open", filled_amount: 0 });
      expect((await get(t.app, me.liveKey, `/v1/orders/${po.id}/fills`)).data).toHaveLength(0);

      expect(await refreshed(me.liveKey, `/v1/orders/${ko.id}`)).toMatchObject({
        status: "open",
        filled_amount: 2,
      });
      const fills = await refreshed(me.liveKey, `/v1/orders/${po.id}/fills`);
      expect(fills).toMatchObject([{ order_id: po.id, size: 10, price: 0.3, liquidity: "maker" }]);
      expect(await order(me.liveKey, po.id)).toMatchObject({ status: "filled", filled_amount: 10 });
      expect(await eventsOf("order.partially_filled", ko.id)).toHaveLength(1);

      // The poller then applies nothing twice; an order the venue closed is closed by a refresh too.
      await t.services.venueRouter.pollOnce();
      expect((await get(t.app, me.liveKey, `/v1/orders/${ko.id}/fills`)).data).toHaveLength(1);
      kalshi.script.closeMarket(k.ticker);
      expect(await refreshed(me.liveKey, `/v1/orders/${ko.id}`)).toMatchObject({
        status: "cancelled",
        filled_amount: 2,
        cancel_reason: "venue",
      });
      // An order no longer open is answered from the ledger without asking the venue.
      kalshi.script.goDown(true);
      try {
        expect((await refreshed(me.liveKey, `/v1/orders/${ko.id}`)).status).toBe("cancelled");
      } finally {
        kalshi.script.goDown(false);
      }
    });

    it("finds a pending order whose placement answer was lost", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const id = await placedWithLostAnswer(me.liveKey, k.id);
      expect(await refreshed(me.liveKey, `/v1/orders/${id}`)).toMatchObject({ status: "open" });
      expect(await venueOrderId(id)).not.toBeNull();
    });

    it("is a 503 that changes nothing while the venue is down; a plain read still answers", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const o = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      kalshi.script.printTrade(k.ticker, { side: "no", count: 5, price: 0.3 });
      kalshi.script.goDown(true);
      try {
        for (const path of [`/v1/orders/${o.id}?refresh=true`, `/v1/orders/${o.id}/fills?refresh=true`]) {
          const response = await t.app.inject({ method: "GET", url: path, headers: bearer(me.liveKey) });
          expect(expectError(response, 503, "VENUE_UNAVAILABLE").details).toMatchObject({ order_id: o.id });
        }
        expect(await order(me.liveKey, o.id)).toMatchObject({ status: "open", filled_amount: 0 });
      } finally {
        kalshi.script.goDown(false);
      }
      expect(await refreshed(me.liveKey, `/v1/orders/${o.id}`)).toMatchObject({ status: "filled" });
    });

    it("is the same read for a sandbox key, a 404 for another account's order, and a 400 for a bad value", async () => {
      const me = await trader();
      const other = await trader();
      const k = kalshiMarket();
      const mine = await placed(t.app, me.sandboxKey, {
        market_id: k.id,
        side: "buy",
        price: 0.3,
        amount: 5,
      });
      expect(await refreshed(me.sandboxKey, `/v1/orders/${mine.id}`)).toEqual(
        await order(me.sandboxKey, mine.id),
      );
      expect(await refreshed(me.sandboxKey, `/v1/orders/${mine.id}/fills`)).toEqual(
        (await get(t.app, me.sandboxKey, `/v1/orders/${mine.id}/fills`)).data,
      );
      const live = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      for (const key of [other.liveKey, me.sandboxKey]) {
        const response = await t.app.inject({
          method: "GET",
          url: `/v1/orders/${live.id}?refresh=true`,
          headers: bearer(key),
        });
        expectError(response, 404, "ORDER_NOT_FOUND");
      }
      const bad = await t.app.inject({
        method: "GET",
        url: `/v1/orders/${live.id}?refresh=maybe`,
        headers: bearer(me.liveKey),
      });
      expect(expectError(bad, 400, "VALIDATION_ERROR").details?.["fields"]).toEqual({
        "query.refresh": "must be true or false",
      });
    });
  });

  describe("cancelling", () => {
    it("a cancel reaches the venue on both venues", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const p = polymarketMarket();
      const ko = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      const po = await placed(t.app, me.liveKey, { market_id: p.id, side: "buy", price: 0.3, amount: 10 });
      for (const [o, venue, creds] of [
        [ko, "kalshi", me.kalshiCreds],
        [po, "polymarket", me.polymarketCreds],
      ] as const) {
        const response = await cancel(me.liveKey, o.id);
        expect(response.statusCode).toBe(200);
        expect(response.json().data).toMatchObject({ id: o.id, status: "cancelled", filled_amount: 0 });
        expect((await atVenue(venue, creds, (await venueOrderId(o.id))!)).status).toBe("cancelled");
        const events = await eventsOf("order.cancelled", o.id);
        expect(events.map((e) => e.data.reason)).toEqual(["user"]);
      }
    });

    it("a pending order cancelled while the venue call is in flight is taken off the venue too", async () => {
      const me = await trader();
      const k = kalshiMarket();
      kalshi.script.setLatency(400);
      try {
        const placing = place(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
        let pending: { id: string } | undefined;
        while (!pending) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          pending = (await get(t.app, me.liveKey, "/v1/orders?status=pending")).data[0];
        }
        const cancelled = await cancel(me.liveKey, pending.id);
        expect(cancelled.statusCode).toBe(200);
        const response = await placing;
        expect(response.statusCode).toBe(201);
        expect(response.json().data).toMatchObject({
          id: pending.id,
          status: "cancelled",
          cancel_reason: "user",
        });
        const venueId = await venueOrderId(pending.id);
        expect(venueId).toBeTruthy();
        expect((await atVenue("kalshi", me.kalshiCreds, venueId!)).status).toBe("cancelled");
      } finally {
        kalshi.script.setLatency(0);
      }
    });

    it("an order the venue already filled is brought up to date and refused with 409", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const o = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      kalshi.script.printTrade(k.ticker, { side: "no", count: 5, price: 0.3 });
      const error = expectError(await cancel(me.liveKey, o.id), 409, "ORDER_NOT_CANCELLABLE");
      expect(error.details).toMatchObject({ order_id: o.id, status: "filled" });
      expect(await order(me.liveKey, o.id)).toMatchObject({ status: "filled", filled_amount: 5 });
      expect(await eventsOf("order.filled", o.id)).toHaveLength(1);
    });

    it("a cancel that raced a fill (Kalshi answers 404) applies the fills, and order entry stays on V2 for everyone", async () => {
      const me = await trader();
      const someoneElse = await trader();
      const k = kalshiMarket();
      const o = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      // The server restarts (a fresh Kalshi venue), and its first Kalshi call is this cancel. The
      // order fills at the venue right after the adapter has read it as resting: the cancel 404s.
      const running = venues.get("kalshi")!;
      const venue = createKalshiVenue({
        apiUrl: kalshi.apiUrl,
        wsUrl: kalshi.wsUrl,
        clock: systemClock,
        log: silentLogger,
      });
      venues.set("kalshi", venue);
      const read = venue.getOrder.bind(venue);
      let race = true;
      venue.getOrder = async (...args) => {
        const found = await read(...args);
        if (race) {
          race = false;
          kalshi.script.printTrade(k.ticker, { side: "no", count: 5, price: 0.3 });
        }
        return found;
      };
      try {
        kalshi.script.resetRequestCounts();
        const error = expectError(await cancel(me.liveKey, o.id), 409, "ORDER_NOT_CANCELLABLE");
        expect(error.details).toMatchObject({ order_id: o.id, status: "filled" });
        expect(kalshi.script.requestCount("DELETE /portfolio/events/orders/:order_id")).toBe(1);
        venue.getOrder = read;
        expect(await order(me.liveKey, o.id)).toMatchObject({ status: "filled", filled_amount: 5 });
        expect(await eventsOf("order.filled", o.id)).toHaveLength(1);
        // Nothing about that 404 touches anyone's order entry: the next orders go to V2 as before.
        const k2 = kalshiMarket();
        const next = await place(t.app, someoneElse.liveKey, {
          market_id: k2.id,
          side: "buy",
          price: 0.3,
          amount: 2,
        });
        expect(next.statusCode).toBe(201);
        expect(next.json().data.status).toBe("open");
        expect(kalshi.script.requestCount("POST /portfolio/events/orders")).toBe(1);
        expect(kalshi.script.requestCount("POST /portfolio/orders")).toBe(0);
        expect(kalshi.script.requestCount("DELETE /portfolio/orders/:order_id")).toBe(0);
        expect((await cancel(someoneElse.liveKey, next.json().data.id)).statusCode).toBe(200);
      } finally {
        venue.getOrder = read;
        venues.set("kalshi", running);
      }
    });

    it("a cancel of an order the venue cancelled after a partial fill applies the fill and follows the venue", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const o = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      kalshi.script.printTrade(k.ticker, { side: "no", count: 2, price: 0.3 });
      kalshi.script.closeMarket(k.ticker); // the venue cancels the resting remainder
      const response = await cancel(me.liveKey, o.id);
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toMatchObject({ id: o.id, status: "cancelled", filled_amount: 2 });
      expect(await order(me.liveKey, o.id)).toMatchObject({ status: "cancelled", cancel_reason: "venue" });
      expect(await eventsOf("order.partially_filled", o.id)).toHaveLength(1);
    });
  });

  describe("errors", () => {
    it("a venue refusal is 422 VENUE_REJECTED with the venue's reason, and the order is cancelled here", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const p = polymarketMarket();
      kalshi.script.setBalance(me.kalshiKeyId, 0);
      polymarket.script.registerWallet({ address: me.polymarketAddress, collateral: 0 });
      for (const [market, amount, reason] of [
        [k.id, 5, /insufficient balance/],
        [p.id, 10, /not enough balance/],
      ] as const) {
        const response = await place(t.app, me.liveKey, {
          market_id: market,
          side: "buy",
          price: 0.3,
          amount,
        });
        const error = expectError(response, 422, "VENUE_REJECTED");
        expect(error.message).toMatch(reason);
        expect(error.details).toMatchObject({
          venue: market.split(":")[0],
          reason: expect.stringMatching(reason),
        });
        const id = error.details!["order_id"] as string;
        expect(await order(me.liveKey, id)).toMatchObject({ status: "cancelled", cancel_reason: "venue" });
        expect(await eventsOf("order.cancelled", id)).toHaveLength(1);
      }
      // Nothing is held for refused orders.
      expect((await get(t.app, me.liveKey, "/v1/balance")).data.locked).toBe(0);
    });

    it("a refused order frees its Idempotency-Key: the same request tries the venue again", async () => {
      const me = await trader();
      const k = kalshiMarket();
      kalshi.script.setBalance(me.kalshiKeyId, 0);
      const body = { market_id: k.id, side: "buy", price: 0.3, amount: 5 };
      expectError(
        await place(t.app, me.liveKey, body, { "idempotency-key": "fund-me" }),
        422,
        "VENUE_REJECTED",
      );
      kalshi.script.setBalance(me.kalshiKeyId, 50_000);
      const retried = await place(t.app, me.liveKey, body, { "idempotency-key": "fund-me" });
      expect(retried.statusCode).toBe(201);
      expect(retried.json().data.status).toBe("open");
    });

    it("credentials the venue refuses are a 422, never a 500", async () => {
      const { session } = await signup(t.app);
      const liveKey = (await createKey(t.app, session, { type: "trading", environment: "live" })).key;
      const pem = generateKeyPairSync("rsa", { modulusLength: 2048 })
        .privateKey.export({ type: "pkcs8", format: "pem" })
        .toString();
      await link(liveKey, { venue: "kalshi", key_id: "unknown-to-the-venue", private_key_pem: pem });
      const k = kalshiMarket();
      const response = await place(t.app, liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      const error = expectError(response, 422, "VENUE_REJECTED");
      expect(error.details).toMatchObject({
        venue: "kalshi",
        reason: "venue rejected the linked credentials",
      });
      expect(response.body).not.toContain("PRIVATE KEY");
      const id = error.details!["order_id"] as string;
      expect(await order(liveKey, id)).toMatchObject({ status: "cancelled", cancel_reason: "venue" });
      expectError(
        await t.app.inject({ method: "GET", url: "/v1/balance", headers: bearer(liveKey) }),
        422,
        "VENUE_REJECTED",
      );
    });

    it("no linked account for the venue is 409 VENUE_NOT_LINKED, and no order is made", async () => {
      const me = await trader({ link: false });
      const k = kalshiMarket();
      const error = expectError(
        await place(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 }),
        409,
        "VENUE_NOT_LINKED",
      );
      expect(error.details).toMatchObject({ venue: "kalshi" });
      expect((await get(t.app, me.liveKey, "/v1/orders?status=all")).data).toEqual([]);
    });

    it("a venue that is down is 503 with the order left pending, then reconciled; never a 500", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const resting = await placed(t.app, me.liveKey, {
        market_id: k.id,
        side: "buy",
        price: 0.3,
        amount: 5,
      });
      kalshi.script.goDown(true);
      let id: string;
      try {
        const error = expectError(
          await place(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.25, amount: 5 }),
          503,
          "VENUE_UNAVAILABLE",
        );
        expect(error.details).toMatchObject({ venue: "kalshi", status: "pending" });
        id = error.details!["order_id"] as string;
        expect(await order(me.liveKey, id)).toMatchObject({ status: "pending" });
        // Cancelling an acknowledged order, and reading the balance, need the venue too.
        expectError(await cancel(me.liveKey, resting.id), 503, "VENUE_UNAVAILABLE");
        expect((await order(me.liveKey, resting.id)).status).toBe("open");
        expectError(
          await t.app.inject({ method: "GET", url: "/v1/balance", headers: bearer(me.liveKey) }),
          503,
          "VENUE_UNAVAILABLE",
        );
        // A poll meanwhile fails quietly and changes nothing.
        const summary = await t.services.venueRouter.pollOnce();
        expect(summary.errors).toBeGreaterThan(0);
        expect((await order(me.liveKey, id)).status).toBe("pending");
      } finally {
        kalshi.script.goDown(false);
      }
      // Back up: the venue has no such order. Within the grace period it stays pending...
      await t.services.venueRouter.pollOnce();
      expect((await order(me.liveKey, id)).status).toBe("pending");
      // ...after it, it is taken as never placed.
      t.clock.advance(5 * 60_000);
      try {
        await t.services.venueRouter.pollOnce();
      } finally {
        t.clock.advance(-5 * 60_000);
      }
      expect(await order(me.liveKey, id)).toMatchObject({ status: "cancelled", cancel_reason: "venue" });
      expect((await order(me.liveKey, resting.id)).status).toBe("open");
    });

    it("an order placed at the venue whose answer was lost is found there and linked by the poller", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const id = await placedWithLostAnswer(me.liveKey, k.id);
      expect(await order(me.liveKey, id)).toMatchObject({ status: "pending" });
      const summary = await t.services.venueRouter.pollOnce();
      expect(summary.linked).toBe(1);
      expect(await order(me.liveKey, id)).toMatchObject({ status: "open" });
      const venueId = await venueOrderId(id);
      expect(await atVenue("kalshi", me.kalshiCreds, venueId!)).toMatchObject({
        clientOrderId: id,
        status: "open",
      });
      // And it then fills like any other.
      kalshi.script.printTrade(k.ticker, { side: "no", count: 5, price: 0.3 });
      await t.services.venueRouter.pollOnce();
      expect(await order(me.liveKey, id)).toMatchObject({ status: "filled", filled_amount: 5 });
    });
  });

  describe("unlinking", () => {
    it("is refused while live orders are open on the venue, unless forced", async () => {
      const me = await trader();
      const k = kalshiMarket();
      await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      const links = (await get(t.app, me.liveKey, "/v1/venue-credentials")).data as Array<{
        id: string;
        venue: string;
      }>;
      const kalshiLink = links.find((l) => l.venue === "kalshi")!;
      const polymarketLink = links.find((l) => l.venue === "polymarket")!;
      const refused = await t.app.inject({
        method: "DELETE",
        url: `/v1/venue-credentials/${kalshiLink.id}`,
        headers: bearer(me.liveKey),
      });
      expect(refused.statusCode).toBe(409);
      expect(refused.json().error).toMatchObject({
        code: "VENUE_HAS_OPEN_ORDERS",
        details: { venue: "kalshi", open_orders: 1 },
      });
      // Another venue without open orders unlinks at once.
      const other = await t.app.inject({
        method: "DELETE",
        url: `/v1/venue-credentials/${polymarketLink.id}`,
        headers: bearer(me.liveKey),
      });
      expect(other.statusCode).toBe(200);
      // Forced: unlinked with the order still open (it is then the user's to manage at the venue).
      const unlinked = await t.app.inject({
        method: "DELETE",
        url: `/v1/venue-credentials/${kalshiLink.id}?force=true`,
        headers: bearer(me.liveKey),
      });
      expect(unlinked.statusCode).toBe(200);
    });
  });

  describe("balance", () => {
    it("a live balance is the venues' cash, with what open live buys hold back as locked", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const before = (await get(t.app, me.liveKey, "/v1/balance")).data;
      expect(before).toMatchObject({ environment: "live", available: 500 + 1000, locked: 0 });
      await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.3, amount: 5 });
      const after = (await get(t.app, me.liveKey, "/v1/balance")).data;
      // 5 × 0.30 plus Kalshi's largest possible fee on them: the trade fee 0.07 × 5 × 0.3 × 0.7 =
      // 0.0735 and a cent for the rounding to the cent the order may still pay.
      expect(after.locked).toBeCloseTo(1.5835, 6);
      const venueCash =
        (await venues.get("kalshi")!.getBalance(me.kalshiCreds)) +
        (await venues.get("polymarket")!.getBalance(me.polymarketCreds));
      expect(after.available).toBeCloseTo(venueCash / 1e6, 6);
      // Polymarket reports the wallet's whole collateral, resting buys included: what they hold
      // back is taken out of available (not counted twice).
      const p = polymarketMarket();
      await placed(t.app, me.liveKey, { market_id: p.id, side: "buy", price: 0.3, amount: 10 });
      const withPoly = (await get(t.app, me.liveKey, "/v1/balance")).data;
      const polyLocked = withPoly.locked - after.locked;
      expect(polyLocked).toBeGreaterThanOrEqual(3);
      const cashNow =
        (await venues.get("kalshi")!.getBalance(me.kalshiCreds)) +
        (await venues.get("polymarket")!.getBalance(me.polymarketCreds));
      expect(withPoly.available).toBeCloseTo(cashNow / 1e6 - polyLocked, 6);
      expect(withPoly.total).toBeCloseTo(withPoly.available + withPoly.locked + withPoly.positions_cost, 6);
      // Live cash is never a row of crossbook's ledger.
      const rows = await t.runtime.store.db
        .selectFrom("balances")
        .selectAll()
        .where("account_id", "=", me.accountId)
        .where("environment", "=", "live")
        .execute();
      expect(rows).toEqual([]);
    });
  });

  describe("isolation", () => {
    it("a sandbox key's orders, on the same markets and account, never reach a venue's trading endpoints", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const p = polymarketMarket();
      kalshi.script.resetRequestCounts();
      polymarket.script.resetRequests();
      for (const market of [k.id, p.id]) {
        const resting = await placed(t.app, me.sandboxKey, {
          market_id: market,
          side: "buy",
          price: 0.3,
          amount: 10,
        });
        expect(resting).toMatchObject({ status: "open", environment: "sandbox" });
        const taking = await placed(t.app, me.sandboxKey, {
          market_id: market,
          side: "buy",
          price: 0.65,
          amount: 10,
        });
        expect(taking).toMatchObject({ status: "filled", environment: "sandbox" });
        expect((await cancel(me.sandboxKey, resting.id)).statusCode).toBe(200);
        await placed(t.app, me.sandboxKey, { market_id: market, side: "buy", type: "market", amount: 5 });
      }
      await placed(t.app, me.sandboxKey, { market_id: k.id, side: "buy", price: 0.1, amount: 10 });
      const bulk = await t.app.inject({
        method: "DELETE",
        url: "/v1/orders",
        headers: bearer(me.sandboxKey),
      });
      expect(bulk.json().data.cancelled_count).toBe(1);
      await get(t.app, me.sandboxKey, "/v1/balance");
      // The fill poller does not visit sandbox orders either.
      expect((await liveOrderGroups(t.runtime.store.db)).map((g) => g.account_id)).not.toContain(
        me.accountId,
      );

      expect(kalshi.script.tradingRequestCount()).toBe(0);
      expect(
        Object.keys(kalshi.script.requestCounts()).filter((route) => route.includes("/portfolio")),
      ).toEqual([]);
      expect(polymarket.script.tradingRequestCount()).toBe(0);
      // The same account's live key on the same market does reach the venue: the counters count.
      await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.1, amount: 1 });
      expect(kalshi.script.tradingRequestCount()).toBe(1);
    });

    it("live activity never touches the sandbox ledger", async () => {
      const me = await trader();
      const k = kalshiMarket();
      const sandboxOrder = await placed(t.app, me.sandboxKey, {
        market_id: k.id,
        side: "buy",
        price: 0.1,
        amount: 10,
      });
      const sandboxLedger = () =>
        t.runtime.store.db
          .selectFrom("balances")
          .selectAll()
          .where("account_id", "=", me.accountId)
          .where("environment", "=", "sandbox")
          .executeTakeFirstOrThrow();
      const before = await sandboxLedger();
      const sandboxView = (await get(t.app, me.sandboxKey, "/v1/balance")).data;

      const resting = await placed(t.app, me.liveKey, {
        market_id: k.id,
        side: "buy",
        price: 0.3,
        amount: 5,
      });
      kalshi.script.printTrade(k.ticker, { side: "no", count: 5, price: 0.3 });
      await t.services.venueRouter.pollOnce();
      expect((await order(me.liveKey, resting.id)).status).toBe("filled");
      const other = await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.25, amount: 5 });
      expect((await cancel(me.liveKey, other.id)).statusCode).toBe(200);
      await placed(t.app, me.liveKey, { market_id: k.id, side: "buy", price: 0.5, amount: 2 });

      expect(await sandboxLedger()).toEqual(before);
      expect((await get(t.app, me.sandboxKey, "/v1/balance")).data).toEqual(sandboxView);
      // Neither environment sees the other's orders.
      const ids = async (key: string) =>
        (await get(t.app, key, "/v1/orders?status=all")).data.map((o: { id: string }) => o.id);
      expect(await ids(me.sandboxKey)).toEqual([sandboxOrder.id]);
      expect(await ids(me.liveKey)).toHaveLength(3);
      expect(await ids(me.liveKey)).not.toContain(sandboxOrder.id);
    });
  });
});
