/**
 * Shared set-up for the alert suites: an app with a TestVenue whose catalog is synced (so its feed
 * is subscribed and `emit` reaches the live quotes), an account with a key, and small helpers.
 */
import type { FastifyInstance } from "fastify";
import { vi } from "vitest";
import { type RecordedEvent, START_CURSOR } from "../../src/events/outbox";
import type { VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { bearer, createKey, createTestApp, signup, type TestApp, type TestAppOptions } from "../support/app";
import { TestVenue, testMarket } from "../support/fake-venue";

export const EVENT_TITLE = "Fed decision in December";

/** A venue with a few open markets (A belongs to an event; I has the venue's price of a day ago). */
export function alertVenue(): TestVenue {
  const kalshi = new TestVenue("kalshi");
  kalshi.set(
    testMarket("kalshi", "A", { eventId: "kalshi:FED", title: "Cut in December?" }),
    ...["B", "C", "D", "E", "F", "G", "H"].map((key) => testMarket("kalshi", key)),
    // The venue says its price was 0.40 a day ago (Kalshi `previous_price_dollars`).
    testMarket("kalshi", "I", { price24hAgo: 400_000 }),
  );
  kalshi.events = [
    {
      id: "kalshi:FED",
      venue: "kalshi",
      venueEventId: "FED",
      title: EVENT_TITLE,
      category: "Economics",
      marketIds: ["kalshi:A"],
      closeTime: null,
      url: null,
      mutuallyExclusive: false,
    },
  ];
  return kalshi;
}

export type AlertsTestApp = TestApp & { schema?: string; redisPrefix: string };

export async function alertsApp(
  options: TestAppOptions = {},
): Promise<{ t: AlertsTestApp; venue: TestVenue; key: string; session: string; accountId: string }> {
  const venue = alertVenue();
  const t = await createTestApp({
    ...options,
    venues: new Map<VenueId, Venue>([["kalshi", venue]]),
    config: { feedMaxMarketsPerVenue: 20, ...options.config },
  });
  await t.services.catalog.syncVenue("kalshi");
  const { session, accountId } = await signup(t.app);
  const key = (await createKey(t.app, session, { type: "read_only" })).key;
  return { t, venue, key, session, accountId };
}

/** Makes a market's price `price` (a last trade, no book), as the venue feed would. */
export function setPrice(venue: TestVenue, marketId: string, price: number): void {
  venue.emit({
    kind: "quote",
    marketId,
    bestBid: null,
    bestAsk: null,
    lastPrice: Math.round(price * 1_000_000),
    timestamp: "2026-11-22T12:00:00.000Z",
  });
}

export async function createAlert(app: FastifyInstance, key: string, body: Record<string, unknown>) {
  return app.inject({ method: "POST", url: "/v1/alerts", headers: bearer(key), payload: body });
}

export async function getAlert(app: FastifyInstance, key: string, id: string) {
  const response = await app.inject({ method: "GET", url: `/v1/alerts/${id}`, headers: bearer(key) });
  if (response.statusCode !== 200) throw new Error(`GET alert: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

/** Creates an alert that must succeed; returns its id. */
export async function newAlert(app: FastifyInstance, key: string, body: Record<string, unknown>) {
  const response = await createAlert(app, key, body);
  if (response.statusCode !== 201) throw new Error(`create alert: ${response.statusCode} ${response.body}`);
  return response.json().data.id as string;
}

/**
 * Every `price.alert` event in the store, read through the outbox once all of them are visible to
 * it (on PostgreSQL the outbox hides rows while older transactions of other suites still run).
 */
export async function alertEvents(t: TestApp): Promise<RecordedEvent<"price.alert">[]> {
  await t.services.alerts.idle();
  const db = t.runtime.store.db;
  const stored = await db
    .selectFrom("events")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("type", "=", "price.alert")
    .executeTakeFirstOrThrow();
  let events: RecordedEvent<"price.alert">[] = [];
  await vi.waitFor(
    async () => {
      events = (await t.services.outbox.readAfter(db, START_CURSOR, 10_000)).filter(
        (e): e is RecordedEvent<"price.alert"> => e.type === "price.alert",
      );
      if (events.length !== Number(stored.n)) throw new Error("outbox not caught up yet");
    },
    { timeout: 10_000 },
  );
  return events;
}

export async function eventsFor(t: TestApp, alertId: string) {
  return (await alertEvents(t)).filter((e) => e.data.alert_id === alertId);
}
