/**
 * The matching service over a scripted matcher, on SQLite and PostgreSQL: pairs stored once in
 * canonical order and updated as the matcher changes its mind; auto-verification and its one
 * `market.matched` event (spec 6.5 payload); admin curation surviving re-runs; incremental runs
 * after catalog syncs; cross-venue events joining, merging and splitting.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { STORE_BACKENDS } from "../support/backends";
import {
  allPairs,
  edit,
  type MatchingTestApp,
  matchedEvents,
  matchingApp,
  pairRow,
  SURE,
  UNSURE,
} from "./setup";

const NOW = "2026-11-22T12:00:00.000Z";
/** Who curates in these service-level tests (the routes check the operator role). */
const OPERATOR = { accountId: "acc_operator", keyId: "key_operator" };

describe.each(STORE_BACKENDS)("matching service on %s", (store) => {
  let t: MatchingTestApp;
  beforeEach(async () => {
    t = await matchingApp({ store });
  });
  afterEach(() => t.close());

  /** Makes the next sync re-match a market by changing its rules text. */
  let edits = 0;
  const touch = (id: string) =>
    edit(id.startsWith("kalshi") ? t.kalshi : t.polymarket, id, { rules: `Rules, version ${++edits}.` });

  it("stores a pair once, in canonical order, reading the relation from market_a's side", async () => {
    // The verdict comes from the Kalshi side: "K3 is a subset of P3".
    t.matcher.script("kalshi:K3", "polymarket:P3", { relation: "subset", confidence: 0.7 });
    await t.sync();
    const rows = await allPairs(t);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: expect.stringMatching(/^mat_/),
      market_a: "polymarket:P3",
      market_b: "kalshi:K3",
      venue_a: "polymarket",
      venue_b: "kalshi",
      relation: "superset",
      matcher_relation: "superset",
      polarity: "same",
      confidence: 0.7,
      status: "candidate",
      status_reason: null,
      decided_by: null,
      decided_at: null,
      curated: 0,
      event_id: null,
      created_at: NOW,
    });
    expect(JSON.parse(rows[0]!.reasons)).toEqual(["scripted subset"]);
  });

  it("upserts: a pair found from both sides and on later runs stays one row that follows the matcher", async () => {
    t.matcher.script("polymarket:P1", "kalshi:K1", UNSURE);
    t.matcher.script("kalshi:K1", "polymarket:P1", UNSURE);
    await t.sync();
    const first = await pairRow(t, "polymarket:P1", "kalshi:K1");
    expect(first).toMatchObject({ status: "candidate", confidence: 0.6 });

    t.clock.advance(60_000);
    t.matcher.script("polymarket:P1", "kalshi:K1", {
      relation: "identity",
      confidence: 0.75,
      reasons: ["same deadline 2026-12-16"],
      blockers: ["settlement source differs"],
    });
    touch("polymarket:P1");
    await t.sync();
    const rows = await allPairs(t);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: first!.id, status: "candidate", confidence: 0.75 });
    expect(JSON.parse(rows[0]!.reasons)).toEqual(["same deadline 2026-12-16"]);
    expect(JSON.parse(rows[0]!.blockers)).toEqual(["settlement source differs"]);
    expect(await matchedEvents(t)).toHaveLength(0);
  });

  it("auto-verifies an acceptable verdict and records market.matched once, with the spec payload", async () => {
    t.matcher.script("polymarket:P1", "kalshi:K1", SURE);
    await t.sync();
    const row = await pairRow(t, "polymarket:P1", "kalshi:K1");
    expect(row).toMatchObject({ status: "verified", decided_by: "matcher", decided_at: NOW, curated: 0 });
    const events = await matchedEvents(t);
    expect(events).toHaveLength(1);
    expect(events[0]!.account_id).toBeNull();
    expect(events[0]!.environment).toBeNull();
    // P1 quotes 0.59/0.61 (0.60), K1 0.63/0.65 (0.64): 0.04 apart, 6.67 % of the lower.
    expect(events[0]!.data).toEqual({
      match_id: row!.id,
      confidence: 0.97,
      platforms: {
        polymarket: { event_id: "polymarket:FED", title: "Fed cuts 25 bps in December?", yes_price: 0.6 },
        kalshi: { event_id: "kalshi:FEDDEC", title: "Fed decision December: cut 25bps", yes_price: 0.64 },
      },
      spread: 0.04,
      spread_pct: 6.67,
    });

    // Re-runs, unchanged or with the market edited and still acceptable, record nothing more.
    t.clock.advance(60_000);
    await t.sync();
    t.matcher.script("polymarket:P1", "kalshi:K1", { relation: "identity", confidence: 0.99 });
    touch("polymarket:P1");
    await t.sync();
    expect(await pairRow(t, "polymarket:P1", "kalshi:K1")).toMatchObject({
      status: "verified",
      confidence: 0.99,
      decided_at: NOW,
    });
    expect(await matchedEvents(t)).toHaveLength(1);
  });

  it("prices a complement pair against the other venue's NO", async () => {
    t.matcher.script("polymarket:P2", "kalshi:K2", { relation: "complement", confidence: 0.95 });
    await t.sync();
    const row = await pairRow(t, "polymarket:P2", "kalshi:K2");
    expect(row).toMatchObject({ relation: "complement", polarity: "inverted", status: "verified" });
    const [event] = await matchedEvents(t);
    // Both quote 0.42: P2's YES at 0.42 against K2's NO at 0.58.
    expect(event!.data).toEqual({
      match_id: row!.id,
      confidence: 0.95,
      platforms: {
        polymarket: { event_id: "polymarket:FED", title: "Fed holds in December?", yes_price: 0.42 },
        kalshi: { event_id: "kalshi:K2", title: "Fed rate unchanged in December", yes_price: 0.42 },
      },
      spread: 0.16,
      spread_pct: 38.1,
    });
  });

  it("never auto-verifies a blocked, unsure or non-tradable verdict", async () => {
    t.matcher.script("polymarket:P1", "kalshi:K1", { ...SURE, blockers: ["placeholder rules"] });
    t.matcher.script("polymarket:P2", "kalshi:K2", { relation: "identity", confidence: 0.89 });
    t.matcher.script("polymarket:P3", "kalshi:K3", { relation: "subset", confidence: 0.99 });
    await t.sync();
    expect((await allPairs(t)).map((r) => r.status)).toEqual(["candidate", "candidate", "candidate"]);
    expect(await matchedEvents(t)).toHaveLength(0);
  });

  it("sends an auto-verified pair that is no longer acceptable back to candidate, and can verify it again", async () => {
    t.matcher.script("polymarket:P1", "kalshi:K1", SURE);
    await t.sync();
    t.clock.advance(60_000);
    t.matcher.script("polymarket:P1", "kalshi:K1", { ...SURE, blockers: ["rules now a placeholder"] });
    touch("polymarket:P1");
    await t.sync();
    expect(await pairRow(t, "polymarket:P1", "kalshi:K1")).toMatchObject({
      status: "candidate",
      decided_by: null,
      decided_at: null,
    });

    t.clock.advance(60_000);
    t.matcher.script("polymarket:P1", "kalshi:K1", SURE);
    touch("polymarket:P1");
    await t.sync();
    expect(await pairRow(t, "polymarket:P1", "kalshi:K1")).toMatchObject({
      status: "verified",
      decided_by: "matcher",
      decided_at: "2026-11-22T12:02:00.000Z",
    });
    // It became verified twice: two events.
    expect(await matchedEvents(t)).toHaveLength(2);
  });

  it("keeps an admin's rejection through re-runs, taking only the matcher's opinion", async () => {
    t.matcher.script("polymarket:P1", "kalshi:K1", UNSURE);
    await t.sync();
    const row = (await pairRow(t, "polymarket:P1", "kalshi:K1"))!;
    const rejected = await t.services.matching.reject(
      row.id,
      { reason: "settlement_source", note: "other index" },
      OPERATOR,
    );
    expect(rejected.row).toMatchObject({
      status: "rejected",
      status_reason: "settlement_source",
      status_note: "other index",
      decided_by: "admin",
      decided_by_account: OPERATOR.accountId,
      decided_by_key: OPERATOR.keyId,
      curated: 1,
      event_id: null,
    });

    t.clock.advance(60_000);
    t.matcher.script("polymarket:P1", "kalshi:K1", { ...SURE, reasons: ["now it looks the same"] });
    touch("polymarket:P1");
    await t.sync();
    const after = (await pairRow(t, "polymarket:P1", "kalshi:K1"))!;
    expect(after).toMatchObject({
      status: "rejected",
      status_reason: "settlement_source",
      decided_by: "admin",
      curated: 1,
      confidence: 0.97,
      event_id: null,
    });
    expect(JSON.parse(after.reasons)).toEqual(["now it looks the same"]);
    expect(await matchedEvents(t)).toHaveLength(0);
  });

  it("keeps an admin's verification and relation through re-runs", async () => {
    t.matcher.script("polymarket:P2", "kalshi:K2", UNSURE);
    await t.sync();
    const row = (await pairRow(t, "polymarket:P2", "kalshi:K2"))!;
    const verified = await t.services.matching.verify(row.id, { relation: "complement" }, OPERATOR);
    expect(verified.row).toMatchObject({
      status: "verified",
      relation: "complement",
      polarity: "inverted",
      matcher_relation: "identity",
      decided_by: "admin",
      curated: 1,
      event_id: expect.stringMatching(/^xev_/),
    });
    expect(await matchedEvents(t)).toHaveLength(1);

    for (const verdict of [SURE, { relation: "disjoint" as const, confidence: 0.2 }]) {
      t.clock.advance(60_000);
      t.matcher.script("polymarket:P2", "kalshi:K2", verdict);
      touch("polymarket:P2");
      await t.sync();
      expect(await pairRow(t, "polymarket:P2", "kalshi:K2")).toMatchObject({
        status: "verified",
        relation: "complement",
        polarity: "inverted",
        matcher_relation: verdict.relation,
        confidence: verdict.confidence,
        decided_by: "admin",
        event_id: verified.row.event_id,
      });
    }
    // Admin verification of a pair that already was verified does not announce it again.
    await t.services.matching.verify(row.id, {}, OPERATOR);
    expect(await matchedEvents(t)).toHaveLength(1);
  });

  it("matches incrementally: new and changed markets only; resolved ones leave the index, their pairs stay", async () => {
    t.matcher.script("polymarket:P1", "kalshi:K1", UNSURE);
    await t.sync();
    expect(new Set(t.matcher.calls)).toEqual(
      new Set(
        ["P1", "P2", "P3", "P4"]
          .map((k) => `polymarket:${k}`)
          .concat(["K1", "K2", "K3", "K4"].map((k) => `kalshi:${k}`)),
      ),
    );
    expect(t.services.matching.indexed).toBe(8);

    t.matcher.clearCalls();
    t.clock.advance(60_000);
    await t.sync(); // every market written again, none changed
    expect(t.matcher.calls).toEqual([]);

    touch("kalshi:K4");
    t.polymarket.set({
      ...t.polymarket.markets.get("polymarket:P4")!,
      id: "polymarket:P5",
      venueMarketId: "P5",
    });
    t.clock.advance(60_000);
    await t.sync();
    expect([...t.matcher.calls].sort()).toEqual(["kalshi:K4", "polymarket:P5"]);

    t.matcher.clearCalls();
    edit(t.polymarket, "polymarket:P1", { status: "resolved", resolution: "yes" });
    t.clock.advance(60_000);
    await t.sync();
    expect(t.matcher.has("polymarket:P1")).toBe(false);
    expect(t.services.matching.indexed).toBe(8);
    expect(t.matcher.calls).toEqual([]);
    expect(await pairRow(t, "polymarket:P1", "kalshi:K1")).toMatchObject({ status: "candidate" });
  });

  it("groups identity and complement pairs into events: join, merge (older id), split (older pair keeps it)", async () => {
    const eventOf = async (a: string, b: string) => (await pairRow(t, a, b))?.event_id;
    t.matcher.script("polymarket:P1", "kalshi:K1", SURE);
    await t.sync();
    const e1 = await eventOf("polymarket:P1", "kalshi:K1");
    expect(e1).toMatch(/^xev_/);

    // A candidate identity sharing K1 joins the event.
    t.clock.advance(60_000);
    t.matcher.script("polymarket:P2", "kalshi:K1", UNSURE);
    touch("polymarket:P2");
    await t.sync();
    expect(await eventOf("polymarket:P2", "kalshi:K1")).toBe(e1);

    // A separate pair makes its own event; a subset pair makes none.
    t.clock.advance(60_000);
    t.matcher.script("polymarket:P3", "kalshi:K3", SURE);
    t.matcher.script("polymarket:P4", "kalshi:K4", { relation: "subset", confidence: 0.8 });
    touch("polymarket:P3");
    touch("polymarket:P4");
    await t.sync();
    const e2 = await eventOf("polymarket:P3", "kalshi:K3");
    expect(e2).toMatch(/^xev_/);
    expect(e2).not.toBe(e1);
    expect(await eventOf("polymarket:P4", "kalshi:K4")).toBeNull();

    // P3-K1 links the two: merged under the older id.
    t.clock.advance(60_000);
    t.matcher.script("polymarket:P3", "kalshi:K1", { relation: "complement", confidence: 0.7 });
    touch("polymarket:P3");
    await t.sync();
    for (const [a, b] of [
      ["polymarket:P1", "kalshi:K1"],
      ["polymarket:P2", "kalshi:K1"],
      ["polymarket:P3", "kalshi:K3"],
      ["polymarket:P3", "kalshi:K1"],
    ] as const) {
      expect(await eventOf(a, b), `${a} ${b}`).toBe(e1);
    }
    expect(await t.services.matching.resolve(e2!)).toBeNull();
    const merged = await t.services.matching.resolve(e1!);
    expect(merged?.markets.map((m) => m.market_id)).toEqual([
      "polymarket:P1",
      "polymarket:P2",
      "polymarket:P3",
      "kalshi:K1",
      "kalshi:K3",
    ]);
    expect(merged?.pairs).toHaveLength(4);

    // Rejecting P3-K1 splits it: the part with the oldest pair (P1-K1) keeps e1, P3-K3 gets a new id.
    t.clock.advance(60_000);
    const link = (await pairRow(t, "polymarket:P3", "kalshi:K1"))!;
    await t.services.matching.reject(link.id, { reason: "different_contract" }, OPERATOR);
    expect(await eventOf("polymarket:P3", "kalshi:K1")).toBeNull();
    expect(await eventOf("polymarket:P1", "kalshi:K1")).toBe(e1);
    expect(await eventOf("polymarket:P2", "kalshi:K1")).toBe(e1);
    const e3 = await eventOf("polymarket:P3", "kalshi:K3");
    expect(e3).toMatch(/^xev_/);
    expect([e1, e2]).not.toContain(e3);

    // The lookup compare uses: by event id, by market id, or nothing.
    const byId = await t.services.matching.resolve(e1!);
    expect(byId).toEqual({
      id: e1,
      title: "Fed cuts 25 bps in December?",
      markets: [
        { market_id: "polymarket:P1", venue: "polymarket" },
        { market_id: "polymarket:P2", venue: "polymarket" },
        { market_id: "kalshi:K1", venue: "kalshi" },
      ],
      pairs: [
        expect.objectContaining({
          market_a: "polymarket:P1",
          market_b: "kalshi:K1",
          relation: "identity",
          polarity: "same",
          status: "verified",
          confidence: 0.97,
        }),
        expect.objectContaining({ market_a: "polymarket:P2", market_b: "kalshi:K1", status: "candidate" }),
      ],
    });
    expect((await t.services.matching.resolve("kalshi:K3"))?.id).toBe(e3);
    expect(await t.services.matching.resolve("polymarket:P4")).toBeNull();
    expect(await t.services.matching.resolve("polymarket:nothing")).toBeNull();
    expect(await t.services.matching.resolve("xev_nothing")).toBeNull();

    // Verifying the rejected link again merges them back under the oldest id.
    await t.services.matching.verify(link.id, {}, OPERATOR);
    expect(await eventOf("polymarket:P3", "kalshi:K3")).toBe(e1);
    expect(await eventOf("polymarket:P3", "kalshi:K1")).toBe(e1);
  });
});
