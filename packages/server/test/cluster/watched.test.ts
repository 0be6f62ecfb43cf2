/**
 * Markets watched on an instance that does not produce their venue, where no feed carries them (a
 * venue without a feed, as Kalshi without a feed key): the producer polls them over REST, and a new
 * producer is told them again when it takes over. Without this, `/v1/prices` and the arbitrage
 * scanner on a standby instance watched markets nobody polled.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { createTestApp, type TestApp } from "../support/app";
import { INFRA_BACKENDS, STORE_BACKENDS } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";
import { until } from "../support/until";

const scaledOut = INFRA_BACKENDS.includes("redis") && STORE_BACKENDS.includes("postgres");

describe.runIf(scaledOut)("watched markets polled by the venue's producer (PostgreSQL + Redis)", () => {
  const instances: Array<TestApp & { schema?: string; redisPrefix: string }> = [];
  const venues: TestVenue[] = [];
  const config = { jobLeaseSeconds: 2 };

  async function instance(id: string) {
    const venue = new TestVenue("kalshi").set(testMarket("kalshi", "Z"), testMarket("kalshi", "W"));
    (venue.capabilities.supports as { feed: boolean }).feed = false;
    const first = instances[0];
    const t = await createTestApp({
      store: "postgres",
      infra: "redis",
      clustered: true,
      venues: new Map<VenueId, Venue>([["kalshi", venue]]),
      config: { ...config, instanceId: id },
      ...(first ? { shareWith: { schema: first.schema!, redisPrefix: first.redisPrefix } } : {}),
    });
    instances.push(t);
    venues.push(venue);
    return { t, venue };
  }
  const booksOf = (venue: TestVenue, id: string) =>
    venue.calls.filter((call) => call === `getOrderBook ${id}`).length;

  let one: Awaited<ReturnType<typeof instance>>;
  let two: Awaited<ReturnType<typeof instance>>;
  let three: Awaited<ReturnType<typeof instance>>;

  beforeAll(async () => {
    one = await instance("one");
    two = await instance("two");
    three = await instance("three");
    // One produces the venue; two serves requests only (its cluster jobs never start).
    await one.t.services.clusterJobs.start();
    await until(() => one.t.services.clusterJobs.status()["venue feed: kalshi"] === "running");
    await one.t.services.catalog.syncVenue("kalshi");
    for (const { t } of [two, three]) await t.services.prices.reload("kalshi");
  });
  afterAll(async () => {
    for (const t of instances) await t.services.clusterJobs.stop();
    for (const t of instances.reverse()) await t.close();
  });

  it("polls on the producer what a standby instance watches", async () => {
    const market = two.t.services.prices.market("kalshi:Z")!;
    two.t.services.prices.watch([market]);
    // The standby instance does not poll a venue it does not produce.
    expect(await two.t.services.prices.pollOnce()).toBe(0);
    await until(async () => {
      await one.t.services.prices.pollOnce();
      return booksOf(one.venue, "kalshi:Z") > 0;
    });
    expect(booksOf(two.venue, "kalshi:Z")).toBe(0);
    expect(booksOf(one.venue, "kalshi:W")).toBe(0);
  });

  it("tells a new producer what is watched when it takes over", async () => {
    await three.t.services.clusterJobs.start();
    expect(three.t.services.clusterJobs.status()["venue feed: kalshi"]).toBe("standby");
    await one.t.services.clusterJobs.stop();
    await until(() => three.t.services.clusterJobs.status()["venue feed: kalshi"] === "running", {
      timeoutMs: 15_000,
    });
    // Three never heard of two's watch before; two tells it when its feed job starts.
    await until(
      async () => {
        await three.t.services.prices.pollOnce();
        return booksOf(three.venue, "kalshi:Z") > 0;
      },
      { timeoutMs: 10_000 },
    );
    expect(booksOf(three.venue, "kalshi:W")).toBe(0);
  }, 30_000);
});
