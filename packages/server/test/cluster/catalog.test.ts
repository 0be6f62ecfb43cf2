/**
 * A venue's catalog sync as a cluster job, on PostgreSQL + Redis with two instances: the venue is
 * listed by one instance per sync, the other learns of it on the bus (its prices know the markets,
 * its venue health is the syncing instance's), and when the holder stops, the other takes the sync
 * over and lists the venue itself. The matcher runs only where its own job runs, after any
 * instance's sync.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { createTestApp, type TestApp } from "../support/app";
import { INFRA_BACKENDS, STORE_BACKENDS } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";
import { until } from "../support/until";

const scaledOut = INFRA_BACKENDS.includes("redis") && STORE_BACKENDS.includes("postgres");

describe.runIf(scaledOut)("catalog sync once per cluster (PostgreSQL + Redis)", () => {
  let one: TestApp & { schema?: string; redisPrefix: string };
  let two: TestApp;
  const venueOne = new TestVenue("kalshi").set(testMarket("kalshi", "X"));
  const venueTwo = new TestVenue("kalshi").set(testMarket("kalshi", "X"), testMarket("kalshi", "Y"));
  const listings = (venue: TestVenue) => venue.calls.filter((c) => c === "listMarkets").length;

  beforeAll(async () => {
    const config = { jobLeaseSeconds: 3, instanceId: "one", matchingEnabled: true };
    one = await createTestApp({
      store: "postgres",
      infra: "redis",
      clustered: true,
      venues: new Map<VenueId, Venue>([["kalshi", venueOne]]),
      config,
    });
    two = await createTestApp({
      store: "postgres",
      infra: "redis",
      clustered: true,
      venues: new Map<VenueId, Venue>([["kalshi", venueTwo]]),
      config: { ...config, instanceId: "two" },
      shareWith: { schema: one.schema!, redisPrefix: one.redisPrefix },
    });
  });
  afterAll(async () => {
    await two?.services.clusterJobs.stop();
    await one?.services.clusterJobs.stop();
    await two?.close();
    await one?.close();
  });

  it("lists a venue on one instance, tells the other, and moves when the holder stops", async () => {
    await one.services.clusterJobs.start();
    await until(() => one.services.catalog.health()[0]?.status === "ok");
    await two.services.clusterJobs.start();
    expect(one.services.clusterJobs.status()).toMatchObject({ "catalog sync: kalshi": "running" });
    expect(two.services.clusterJobs.status()).toMatchObject({ "catalog sync: kalshi": "standby" });
    // The other instance did not list the venue, yet knows what was stored and how the sync went.
    await until(() => two.services.prices.market("kalshi:X") !== undefined);
    expect(listings(venueOne)).toBe(1);
    expect(listings(venueTwo)).toBe(0);
    // The matcher ran where its job runs, on the synced catalog; not on the instance standing by.
    await until(() => one.services.matching.indexed === 1);
    expect(two.services.matching.indexed).toBe(0);
    expect(two.services.clusterJobs.status()).toMatchObject({ matching: "standby" });
    expect(two.services.catalog.health()[0]).toMatchObject({
      status: "ok",
      last_sync_markets: 1,
      last_successful_sync_at: one.services.catalog.health()[0]!.last_successful_sync_at,
    });

    // The holder stops (a deploy): the other takes the job over and syncs at once.
    await one.services.clusterJobs.stop();
    await until(() => listings(venueTwo) === 1);
    expect(two.services.clusterJobs.status()).toMatchObject({ "catalog sync: kalshi": "running" });
    // Its listing (X and Y) reaches the first instance over the bus.
    await until(() => one.services.prices.market("kalshi:Y") !== undefined);
    expect(listings(venueOne)).toBe(1);
    // And the matcher moved with its job: it indexed the new listing there.
    await until(() => two.services.matching.indexed === 2);
  });
});
