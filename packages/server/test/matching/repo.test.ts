/**
 * The matches repository's batch writes on both stores: event ids set for many pairs at once (a
 * first run over a large catalog creates thousands of events), across statement chunks.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as repo from "../../src/matching/repo";
import { STORE_BACKENDS } from "../support/backends";
import { openTestStore, type TestStore } from "../support/store";

describe.each(STORE_BACKENDS)("matches repository on %s", (backend) => {
  let opened: TestStore;
  beforeAll(async () => {
    opened = await openTestStore(backend);
  });
  afterAll(() => opened.close());

  const at = "2026-11-24T12:00:00.000Z";
  const pair = (i: number) => ({
    id: `mat_${String(i).padStart(5, "0")}`,
    market_a: `kalshi:K${i}`,
    market_b: `polymarket:P${i}`,
    venue_a: "kalshi",
    venue_b: "polymarket",
    relation: "identity",
    polarity: "same",
    matcher_relation: "identity",
    matcher_polarity: "same",
    confidence: 0.95,
    reasons: "[]",
    blockers: "[]",
    status: "verified",
    status_reason: null,
    status_note: null,
    decided_by: "matcher",
    decided_at: at,
    curated: 0,
    event_id: null,
    created_at: at,
    updated_at: at,
  });

  it("sets 1,200 pairs' event ids in chunks, each its own, and leaves the others alone", async () => {
    const { db } = opened.store;
    await repo.insertMatches(
      db,
      Array.from({ length: 1_300 }, (_, i) => pair(i)),
    );
    // Three pairs share an event; the rest get one each; the last hundred are not touched.
    const assignments = Array.from({ length: 1_200 }, (_, i) => ({
      id: pair(i).id,
      eventId: i < 3 ? "xev_shared" : `xev_${i}`,
    }));
    await repo.setEventIds(db, assignments, "2026-11-24T13:00:00.000Z");
    const rows = await repo.findMatches(
      db,
      Array.from({ length: 1_300 }, (_, i) => pair(i).id),
    );
    expect(rows).toHaveLength(1_300);
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (let i = 0; i < 1_300; i++) {
      const row = byId.get(pair(i).id)!;
      expect(row.event_id).toBe(i < 3 ? "xev_shared" : i < 1_200 ? `xev_${i}` : null);
      expect(row.updated_at).toBe(i < 1_200 ? "2026-11-24T13:00:00.000Z" : at);
    }
    await repo.setEventIds(db, [], at); // nothing to do is not an error
  });
});
