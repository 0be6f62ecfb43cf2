/**
 * A venue's feed as a cluster job, on PostgreSQL + Redis with two instances: only the holder
 * subscribes the venue; its events reach the other instance over the bus (its quotes, books and
 * stream clients follow, each update once), markets wanted on the other instance are added to the
 * holder's feed, and when the holder stops, the other subscribes the venue (with the markets wanted
 * on either instance) and its events flow back.
 */
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { book, StreamClient } from "../stream/client";
import { createKey, createTestApp, signup, type TestApp } from "../support/app";
import { INFRA_BACKENDS, STORE_BACKENDS } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";
import { until } from "../support/until";

const scaledOut = INFRA_BACKENDS.includes("redis") && STORE_BACKENDS.includes("postgres");

describe.runIf(scaledOut)("venue feeds once per cluster (PostgreSQL + Redis)", () => {
  let one: TestApp & { schema?: string; redisPrefix: string };
  let two: TestApp;
  // The feed carries the three most traded (X, Y, V) and up to three more that someone wants (Z, W).
  const markets = () => [
    testMarket("kalshi", "X"),
    testMarket("kalshi", "Y"),
    testMarket("kalshi", "V"),
    testMarket("kalshi", "Z", { volume24h: 1_000_000 }),
    testMarket("kalshi", "W", { volume24h: 1_000_000 }),
  ];
  const venueOne = new TestVenue("kalshi").set(...markets());
  const venueTwo = new TestVenue("kalshi").set(...markets());
  const clients: StreamClient[] = [];

  beforeAll(async () => {
    const config = { jobLeaseSeconds: 3, feedMaxMarketsPerVenue: 3 };
    one = await createTestApp({
      store: "postgres",
      infra: "redis",
      clustered: true,
      venues: new Map<VenueId, Venue>([["kalshi", venueOne]]),
      config: { ...config, instanceId: "one" },
    });
    two = await createTestApp({
      store: "postgres",
      infra: "redis",
      clustered: true,
      venues: new Map<VenueId, Venue>([["kalshi", venueTwo]]),
      config: { ...config, instanceId: "two" },
      shareWith: { schema: one.schema!, redisPrefix: one.redisPrefix },
    });
    for (const t of [one, two]) await t.app.listen({ host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    for (const c of clients) c.ws.terminate();
    await two?.services.clusterJobs.stop();
    await one?.services.clusterJobs.stop();
    await two?.close();
    await one?.close();
  });

  it("subscribes the venue on one instance and brings its quotes to the other", async () => {
    await one.services.clusterJobs.start();
    await until(() => venueOne.feedHandler !== undefined);
    await two.services.clusterJobs.start();
    expect(two.services.clusterJobs.status()).toMatchObject({ "venue feed: kalshi": "standby" });
    await until(() => two.services.prices.market("kalshi:X") !== undefined);
    expect(venueTwo.calls).not.toContain("subscribe");

    const key = (await createKey(one.app, (await signup(one.app)).session, { type: "read_only" })).key;
    const port = (two.app.server.address() as AddressInfo).port;
    const client = await StreamClient.connect(`ws://127.0.0.1:${port}/v1/prices/stream`, key);
    clients.push(client);
    client.send({ action: "subscribe", market_ids: ["kalshi:X"] });
    await client.next((m) => m.type === "price_update");

    venueOne.emit({ kind: "book", book: book("kalshi:X", 300_000, 320_000) });
    const update = await client.next((m) => m.type === "price_update" && m["best_bid"] === 0.3);
    expect(update).toMatchObject({ market_id: "kalshi:X", best_ask: 0.32 });
    // The other instance's own quotes and books follow (its answers and its sandbox read them).
    await until(() => two.services.live.book("kalshi:X") !== undefined);
    expect(two.services.live.quotes.get("kalshi:X", Date.now())?.bestBid).toBe(300_000);
    expect(two.services.live.isLive("kalshi:X")).toBe(true);
    // Published once, by the producer: one update on the client, not one per instance.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(client.updates("kalshi:X").filter((m) => m["best_bid"] === 0.3)).toHaveLength(1);
  });

  it("adds a market wanted on the other instance to the producer's feed", async () => {
    // Z is not among the most traded; it is asked for on the instance that does not produce.
    expect(venueOne.subscribed.has("kalshi:Z")).toBe(false);
    two.services.live.want(["kalshi:Z"]);
    await until(() => venueOne.subscribed.has("kalshi:Z"));
    expect(venueTwo.calls).not.toContain("subscribe");
  });

  it("moves the feed when its holder stops, and the events flow the other way", async () => {
    // W is wanted on the producer itself: only `one` knows it.
    one.services.live.want(["kalshi:W"]);
    await until(() => venueOne.subscribed.has("kalshi:W"));
    await one.services.clusterJobs.stop();
    await until(() => venueTwo.feedHandler !== undefined);
    expect(venueOne.feedHandler).toBeUndefined();
    // The new producer feeds what was wanted on both instances (`one` told it again).
    await until(() => venueTwo.subscribed.has("kalshi:W") && venueTwo.subscribed.has("kalshi:Z"));
    // `one` no longer runs background work: as a plain instance it follows the producer's events.
    await one.services.clusterJobs.start();
    expect(one.services.clusterJobs.status()).toMatchObject({ "venue feed: kalshi": "standby" });
    venueTwo.emit({ kind: "book", book: book("kalshi:X", 410_000, 430_000) });
    await until(() => one.services.live.quotes.get("kalshi:X", Date.now())?.bestBid === 410_000);
  });
});
