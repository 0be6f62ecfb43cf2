/**
 * MATCHING_ENABLED: on by default; off, catalog syncs run no matcher, while stored matches, curation
 * and events keep working.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config";
import { call, type MatchingTestApp, matchingApp, operatorKeys, SURE } from "./setup";

describe("MATCHING_ENABLED", () => {
  it("defaults to true and reads true/false", () => {
    expect(loadConfig({}).matchingEnabled).toBe(true);
    expect(loadConfig({ MATCHING_ENABLED: "false" }).matchingEnabled).toBe(false);
    expect(loadConfig({ MATCHING_ENABLED: "1" }).matchingEnabled).toBe(true);
    expect(() => loadConfig({ MATCHING_ENABLED: "sometimes" })).toThrow(/MATCHING_ENABLED/);
  });

  describe("off", () => {
    let t: MatchingTestApp;
    beforeAll(async () => {
      t = await matchingApp({ config: { matchingEnabled: false } });
      t.matcher.script("polymarket:P1", "kalshi:K1", SURE);
      await t.sync();
    });
    afterAll(() => t.close());

    it("runs no matcher after a sync", async () => {
      expect(t.matcher.calls).toEqual([]);
      expect(t.services.matching.indexed).toBe(0);
      expect(await t.runtime.store.db.selectFrom("matches").selectAll().execute()).toEqual([]);
    });

    it("still lets operators pair markets and serves the events", async () => {
      const { admin, read } = await operatorKeys(t);
      const created = await call(t.app, admin, "POST", "/v1/matches", {
        market_ids: ["polymarket:P1", "kalshi:K1"],
        relation: "identity",
      });
      expect(created.statusCode).toBe(201);
      const eventId = created.json().data.event_id;
      expect(eventId).toMatch(/^xev_/);
      const event = await call(t.app, read, "GET", `/v1/events/${eventId}`);
      expect(event.json().data.markets.map((m: { market_id: string }) => m.market_id)).toEqual([
        "polymarket:P1",
        "kalshi:K1",
      ]);
    });
  });
});
