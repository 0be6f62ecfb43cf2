/**
 * Several instances on one PostgreSQL: each sees the same feed and evaluates the same alerts, yet
 * every crossing is recorded once, also when one instance lags behind the other. With Redis, a
 * new or deleted alert reaches the other instance's index over the bus.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { bearer, createTestApp } from "../support/app";
import { POSTGRES_URL, REDIS_URL } from "../support/backends";
import type { TestVenue } from "../support/fake-venue";
import {
  type AlertsTestApp,
  alertEvents,
  alertsApp,
  alertVenue,
  eventsFor,
  getAlert,
  newAlert,
  setPrice,
} from "./setup";

describe.skipIf(!POSTGRES_URL).each(REDIS_URL ? (["memory", "redis"] as const) : (["memory"] as const))(
  "two instances on one PostgreSQL schema, %s bus",
  (infra) => {
    let a: AlertsTestApp;
    let b: AlertsTestApp;
    let venueA: TestVenue;
    const venueB = alertVenue();
    let key: string;

    beforeAll(async () => {
      ({ t: a, venue: venueA, key } = await alertsApp({ store: "postgres", infra }));
      b = await createTestApp({
        store: "postgres",
        infra,
        shareWith: { schema: a.schema!, redisPrefix: a.redisPrefix },
        venues: new Map<VenueId, Venue>([["kalshi", venueB]]),
        config: { feedMaxMarketsPerVenue: 20 },
      });
      await b.services.catalog.syncVenue("kalshi");
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    /** Both instances see the same price, in the same turn: their writes race in the store. */
    const both = (marketId: string, price: number) => {
      setPrice(venueA, marketId, price);
      setPrice(venueB, marketId, price);
    };
    const settle = async () => {
      await a.services.alerts.idle();
      await b.services.alerts.idle();
    };
    /** B learns of A's alert: over the bus when there is one across instances, else by reloading. */
    const propagate = async (watching: number) => {
      if (infra === "redis") await vi.waitFor(() => expect(b.services.alerts.watching).toBe(watching));
      else await b.services.alerts.reload();
      expect(b.services.alerts.watching).toBe(watching);
    };

    it("records a crossing once although both instances fire it", async () => {
      const id = await newAlert(a.app, key, {
        market_id: "kalshi:A",
        condition: "price_above",
        threshold: 0.5,
        repeat: true,
      });
      await propagate(1);
      both("kalshi:A", 0.4);
      both("kalshi:A", 0.6);
      await settle();
      expect(await eventsFor(a, id)).toHaveLength(1);

      both("kalshi:A", 0.45);
      both("kalshi:A", 0.55);
      await settle();
      expect((await eventsFor(a, id)).map((e) => e.data.current_price)).toEqual([0.6, 0.55]);
      expect(await getAlert(a.app, key, id)).toMatchObject({ trigger_count: 2, armed: false });
    });

    it("does not fire a crossing again when a lagging instance sees it after the other recorded it", async () => {
      const id = await newAlert(a.app, key, {
        market_id: "kalshi:B",
        condition: "price_below",
        threshold: 0.3,
        repeat: true,
      });
      await propagate(2);
      both("kalshi:B", 0.35);
      both("kalshi:B", 0.25);
      await settle();
      expect(await eventsFor(a, id)).toHaveLength(1);

      // A sees the price go back up and down again, and records the second crossing...
      setPrice(venueA, "kalshi:B", 0.32);
      setPrice(venueA, "kalshi:B", 0.2);
      await settle();
      expect(await eventsFor(a, id)).toHaveLength(2);
      // ...then B sees the same moves late: nothing new happened, so nothing is recorded.
      setPrice(venueB, "kalshi:B", 0.32);
      setPrice(venueB, "kalshi:B", 0.2);
      await settle();
      expect(await eventsFor(a, id)).toHaveLength(2);
      expect(await getAlert(a.app, key, id)).toMatchObject({ trigger_count: 2 });

      // Both stay in step afterwards: the next real crossing is recorded once.
      both("kalshi:B", 0.31);
      both("kalshi:B", 0.29);
      await settle();
      expect(await eventsFor(a, id)).toHaveLength(3);
    });

    it("fires a one-shot alert once, and a deletion on one instance stops the other", async () => {
      const once = await newAlert(a.app, key, {
        market_id: "kalshi:C",
        condition: "price_above",
        threshold: 0.7,
      });
      const doomed = await newAlert(a.app, key, {
        market_id: "kalshi:D",
        condition: "price_above",
        threshold: 0.7,
      });
      await propagate(4);
      both("kalshi:C", 0.75);
      await settle();
      expect(await eventsFor(a, once)).toHaveLength(1);

      const response = await a.app.inject({
        method: "DELETE",
        url: `/v1/alerts/${doomed}`,
        headers: bearer(key),
      });
      expect(response.statusCode).toBe(200);
      // Only the two repeating alerts remain watched, on both instances.
      await propagate(2);
      both("kalshi:D", 0.8);
      await settle();
      expect(await eventsFor(a, doomed)).toHaveLength(0);
      expect((await alertEvents(b)).length).toBe((await alertEvents(a)).length);
    });
  },
);
