/**
 * Shared set-up for the trading suites: an app over two TestVenues (Kalshi and Polymarket) whose
 * catalogs are synced and feeds subscribed, books you set, trades you print, a sandbox key and a
 * live key on one account, and helpers that read the ledger.
 */
import { polymarketSchedule } from "@crossbook/fees";
import type { FastifyInstance } from "fastify";
import { expect } from "vitest";
import type { OrderBook, VenueId, VenueMarket } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, signup, type TestApp, type TestAppOptions } from "../support/app";
import { TestVenue, testMarket } from "../support/fake-venue";

export type TradingApp = TestApp & { schema?: string; redisPrefix: string };

export interface Trading {
  t: TradingApp;
  kalshi: TestVenue;
  polymarket: TestVenue;
  /** Sandbox trading key of the main account. */
  key: string;
  /** Live trading key of the main account. */
  liveKey: string;
  session: string;
  accountId: string;
}

/** Kalshi market K (tick 0.01, min 1) in an event; Polymarket market P (tick 0.01, min 5, 200 bps fee). */
export async function tradingApp(
  options: TestAppOptions = {},
  markets: VenueMarket[] = [],
): Promise<Trading> {
  const kalshi = new TestVenue("kalshi");
  kalshi.set(
    testMarket("kalshi", "K", { eventId: "kalshi:EV", title: "K market" }),
    testMarket("kalshi", "K2"),
  );
  kalshi.events = [
    {
      id: "kalshi:EV",
      venue: "kalshi",
      venueEventId: "EV",
      title: "The K event",
      category: "Economics",
      marketIds: ["kalshi:K"],
      closeTime: null,
      url: null,
      mutuallyExclusive: false,
    },
  ];
  const polymarket = new TestVenue("polymarket");
  // A fee-enabled Polymarket market as Gamma publishes one in 2026: rate 0.05, exponent 1, taker
  // only, takerBaseFee 1000 (the cap). Kalshi's K has no schedule: the default (quadratic × 1).
  polymarket.set(
    testMarket("polymarket", "P", {
      minSize: 5_000_000,
      fees: polymarketSchedule({ rate: 0.05, exponent: 1, takerOnly: true, capBps: 1000 }),
    }),
  );
  for (const market of markets) (market.venue === "kalshi" ? kalshi : polymarket).set(market);
  const t = await createTestApp({
    ...options,
    venues: new Map<VenueId, Venue>([
      ["kalshi", kalshi],
      ["polymarket", polymarket],
    ]),
    config: { feedMaxMarketsPerVenue: 20, ...options.config },
  });
  await t.services.catalog.syncVenue("kalshi");
  await t.services.catalog.syncVenue("polymarket");
  const { session, accountId } = await signup(t.app);
  const key = (await createKey(t.app, session, { type: "trading", environment: "sandbox" })).key;
  const liveKey = (await createKey(t.app, session, { type: "trading", environment: "live" })).key;
  return { t, kalshi, polymarket, key, liveKey, session, accountId };
}

/** A YES book from [price, size] pairs (numbers as on the wire); NO is derived as the complement. */
export function book(
  marketId: string,
  yes: { bids?: [number, number][]; asks?: [number, number][] },
): OrderBook {
  const m = (x: number) => Math.round(x * 1_000_000);
  const bids = (yes.bids ?? []).map(([price, size]) => ({ price: m(price), size: m(size) }));
  const asks = (yes.asks ?? []).map(([price, size]) => ({ price: m(price), size: m(size) }));
  return {
    marketId,
    yes: { bids, asks },
    no: {
      bids: asks.map((l) => ({ price: 1_000_000 - l.price, size: l.size })),
      asks: bids.map((l) => ({ price: 1_000_000 - l.price, size: l.size })),
    },
    timestamp: new Date(Date.UTC(2026, 10, 22, 12)).toISOString(),
    sequence: null,
  };
}

/** Sets the REST book and pushes it on the feed, as the venue would. */
export function setBook(venue: TestVenue, orderBook: OrderBook): void {
  venue.books.set(orderBook.marketId, orderBook);
  venue.emit({ kind: "book", book: orderBook });
}

let tradeCounter = 0;
/** A real trade prints on the venue feed. `side` is the taker's side of `outcome`. */
export function printTrade(
  venue: TestVenue,
  marketId: string,
  trade: { price: number; size: number; side: "buy" | "sell" | null; outcome?: "yes" | "no"; id?: string },
): void {
  venue.emit({
    kind: "trade",
    trade: {
      marketId,
      outcome: trade.outcome ?? "yes",
      price: Math.round(trade.price * 1_000_000),
      size: Math.round(trade.size * 1_000_000),
      takerSide: trade.side,
      timestamp: new Date(Date.UTC(2026, 10, 22, 12, 0, 0, ++tradeCounter)).toISOString(),
      venueTradeId: trade.id ?? `trade-${tradeCounter}`,
    },
  });
}

export async function place(
  app: FastifyInstance,
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return app.inject({
    method: "POST",
    url: "/v1/orders",
    headers: { ...bearer(key), ...headers },
    payload: body,
  });
}

/** Places an order that must be accepted; returns the order. */
export async function placed(app: FastifyInstance, key: string, body: Record<string, unknown>) {
  const response = await place(app, key, body);
  if (response.statusCode !== 201) throw new Error(`place: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

export async function get(app: FastifyInstance, key: string, url: string) {
  const response = await app.inject({ method: "GET", url, headers: bearer(key) });
  if (response.statusCode !== 200) throw new Error(`GET ${url}: ${response.statusCode} ${response.body}`);
  return response.json();
}

export async function balance(app: FastifyInstance, key: string) {
  return (await get(app, key, "/v1/balance")).data;
}

/**
 * The ledger identity (portfolio/ledger.ts), read straight from the store in micro-units:
 * available + locked + Σ cost basis = deposits − withdrawals − fees + realized PnL.
 */
export async function expectLedgerBalanced(t: TestApp, accountId: string, environment = "sandbox") {
  const db = t.runtime.store.db;
  const balance = await db
    .selectFrom("balances")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("environment", "=", environment)
    .executeTakeFirstOrThrow();
  const positions = await db
    .selectFrom("positions")
    .select(["cost_basis", "size", "reserved"])
    .where("account_id", "=", accountId)
    .where("environment", "=", environment)
    .execute();
  const cost = positions.reduce((sum, p) => sum + Number(p.cost_basis), 0);
  const lhs = Number(balance.available) + Number(balance.locked) + cost;
  const rhs =
    Number(balance.deposits) -
    Number(balance.withdrawals) -
    Number(balance.fees) +
    Number(balance.realized_pnl);
  expect(lhs, "available + locked + cost basis = deposits - withdrawals - fees + realized").toBe(rhs);
  // Locked cash equals what open buy orders hold back; no position promises more than it holds.
  const orders = await db
    .selectFrom("orders")
    .select(["locked", "status"])
    .where("account_id", "=", accountId)
    .where("environment", "=", environment)
    .execute();
  const locked = orders
    .filter((o) => o.status === "open" || o.status === "pending")
    .reduce((s, o) => s + Number(o.locked), 0);
  expect(Number(balance.locked)).toBe(locked);
  for (const p of positions) {
    expect(Number(p.reserved)).toBeLessThanOrEqual(Number(p.size));
    expect(Number(p.size)).toBeGreaterThanOrEqual(0);
  }
  expect(Number(balance.available)).toBeGreaterThanOrEqual(0);
}

export async function eventsOfType(t: TestApp, type: string) {
  const rows = await t.runtime.store.db
    .selectFrom("events")
    .select(["type", "data", "account_id", "environment"])
    .where("type", "=", type)
    .orderBy("seq")
    .execute();
  return rows.map((r) => ({ ...r, data: JSON.parse(r.data) }));
}
