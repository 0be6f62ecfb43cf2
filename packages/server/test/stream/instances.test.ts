/**
 * Two instances on one PostgreSQL and one Redis: a quote ingested by one reaches the stream clients
 * of the other, once; and a key's connection limit counts its connections on both.
 */
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VenueId } from "../../src/venues/model";
import type { Venue } from "../../src/venues/venue";
import { createKey, createTestApp, signup, type TestApp } from "../support/app";
import { INFRA_BACKENDS, STORE_BACKENDS } from "../support/backends";
import { TestVenue, testMarket } from "../support/fake-venue";
import { book, StreamClient } from "./client";

const scaledOut = INFRA_BACKENDS.includes("redis") && STORE_BACKENDS.includes("postgres");

describe.runIf(scaledOut)("price stream across instances (PostgreSQL + Redis)", () => {
  let one: TestApp & { schema?: string; redisPrefix: string };
  let two: TestApp;
  let key: string;
  const venueOne = new TestVenue("kalshi").set(testMarket("kalshi", "X"));
  const venueTwo = new TestVenue("kalshi").set(testMarket("kalshi", "X"));
  const urlOf = (t: TestApp) =>
    `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/prices/stream`;
  const clients: StreamClient[] = [];
  const connect = async (t: TestApp) => {
    const client = await StreamClient.connect(urlOf(t), key);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    one = await createTestApp({
      store: "postgres",
      infra: "redis",
      venues: new Map<VenueId, Venue>([["kalshi", venueOne]]),
    });
    two = await createTestApp({
      store: "postgres",
      infra: "redis",
      venues: new Map<VenueId, Venue>([["kalshi", venueTwo]]),
      shareWith: { schema: one.schema!, redisPrefix: one.redisPrefix },
    });
    await one.services.catalog.syncVenue("kalshi");
    await two.services.catalog.syncVenue("kalshi");
    for (const t of [one, two]) await t.app.listen({ host: "127.0.0.1", port: 0 });
    key = (await createKey(one.app, (await signup(one.app)).session, { type: "read_only" })).key;
  });
  afterAll(async () => {
    for (const c of clients) c.ws.terminate();
    await two.close();
    await one.close();
  });

  it("delivers an update ingested by one instance to a client of the other, once", async () => {
    const client = await connect(two);
    client.send({ action: "subscribe", market_ids: ["kalshi:X"] });
    await client.next((m) => m.type === "price_update");
    venueOne.emit({ kind: "book", book: book("kalshi:X", 300_000, 320_000) });
    const update = await client.next((m) => m.type === "price_update" && m["best_bid"] === 0.3);
    expect(update).toMatchObject({ market_id: "kalshi:X", price: 0.31, best_ask: 0.32, seq: 2 });
    // The same tick ingested by the second instance as well is not sent twice.
    venueTwo.emit({ kind: "book", book: book("kalshi:X", 300_000, 320_000) });
    venueOne.emit({ kind: "book", book: book("kalshi:X", 290_000, 320_000) });
    await client.next((m) => m.type === "price_update" && m["best_bid"] === 0.29);
    expect(client.updates().map((u) => u["best_bid"])).toEqual([0.41, 0.3, 0.29]);
    client.close();
    await client.closedWith();
  });

  it("counts a key's connections on both instances against its plan (standard: 2)", async () => {
    const a = await connect(one);
    const b = await connect(two);
    await expect(connect(one)).rejects.toMatchObject({ status: 429 });
    await expect(connect(two)).rejects.toMatchObject({ status: 429 });
    a.close();
    b.close();
  });
});
