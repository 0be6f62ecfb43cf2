/**
 * The matching API over a scripted matcher, on SQLite and PostgreSQL: listing and filtering pairs,
 * one pair in full, operator curation (verify, reject, pair by hand), cross-venue events, the errors
 * (field-level 400s, 404 codes) and who may do what. Matches are global: every account sees the
 * same pairs, and only an operator account's live admin key curates them, for everyone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, expectError, setAccount } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { call, keys, type MatchingTestApp, matchedEvents, matchingApp, pairRow, SURE } from "./setup";

describe.each(STORE_BACKENDS)("matching API on %s", (store) => {
  let t: MatchingTestApp;
  let read: string;
  /** An operator account's live admin key. */
  let admin: string;
  let operatorAccount: string;
  let operatorSession: string;
  /** Another (non-operator) account's keys: matches are not per account. */
  let otherRead: string;
  let otherAdmin: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await matchingApp({ store });
    t.matcher.script("polymarket:P1", "kalshi:K1", SURE);
    t.matcher.script("polymarket:P2", "kalshi:K2", { relation: "complement", confidence: 0.7 });
    t.matcher.script("kalshi:K3", "polymarket:P3", { relation: "subset", confidence: 0.5 });
    t.matcher.script("polymarket:P4", "kalshi:K4", { relation: "identity", confidence: 0.8 });
    await t.sync();
    ({ read, admin, accountId: operatorAccount, session: operatorSession } = await keys(t.app));
    await setAccount(t.services, operatorAccount, { operator: true, tier: "enterprise" });
    ({ read: otherRead, admin: otherAdmin } = await keys(t.app));
    for (const [name, a, b] of [
      ["p1k1", "polymarket:P1", "kalshi:K1"],
      ["p2k2", "polymarket:P2", "kalshi:K2"],
      ["p3k3", "polymarket:P3", "kalshi:K3"],
      ["p4k4", "polymarket:P4", "kalshi:K4"],
    ] as const) {
      ids[name] = (await pairRow(t, a, b))!.id;
    }
  });
  afterAll(() => t.close());

  const list = async (query: string, key = read) => {
    const response = await call(t.app, key, "GET", `/v1/matches${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { data: Array<Record<string, unknown>>; meta: Record<string, number> };
  };
  const idsOf = (body: { data: Array<Record<string, unknown>> }) => body.data.map((m) => m["id"]);

  describe("reads", () => {
    it("lists every pair, most confident first, with page meta", async () => {
      const body = await list("");
      expect(idsOf(body)).toEqual([ids["p1k1"], ids["p4k4"], ids["p2k2"], ids["p3k3"]]);
      expect(body.meta).toEqual({ page: 1, limit: 50, total: 4 });
      const page = await list("?limit=2&offset=2");
      expect(idsOf(page)).toEqual([ids["p2k2"], ids["p3k3"]]);
      expect(page.meta).toEqual({ page: 2, limit: 2, total: 4 });
    });

    it("filters by status, relation, confidence, venue, market and words of either title", async () => {
      expect(idsOf(await list("?status=verified"))).toEqual([ids["p1k1"]]);
      expect(idsOf(await list("?status=rejected"))).toEqual([]);
      expect(idsOf(await list("?relation=superset"))).toEqual([ids["p3k3"]]);
      expect(idsOf(await list("?relation=complement"))).toEqual([ids["p2k2"]]);
      expect(idsOf(await list("?min_confidence=0.75"))).toEqual([ids["p1k1"], ids["p4k4"]]);
      expect(idsOf(await list("?min_confidence=0.8&status=candidate"))).toEqual([ids["p4k4"]]);
      expect((await list("?venue=kalshi")).meta["total"]).toBe(4);
      expect(idsOf(await list("?market_id=kalshi:K1"))).toEqual([ids["p1k1"]]);
      // "Bitcoin" is only in P3's title, "BTC" only in K3's.
      expect(idsOf(await list("?q=bitcoin"))).toEqual([ids["p3k3"]]);
      expect(idsOf(await list("?q=BTC"))).toEqual([ids["p3k3"]]);
      expect(idsOf(await list("?q=fed%20december"))).toEqual([ids["p1k1"], ids["p2k2"]]);
      expect(idsOf(await list("?q=celtics%20lakers"))).toEqual([ids["p4k4"]]);
      expect(idsOf(await list("?q=dodgers"))).toEqual([]);
    });

    it("shows one pair in full", async () => {
      const response = await call(t.app, read, "GET", `/v1/matches/${ids["p1k1"]}`);
      expect(response.statusCode).toBe(200);
      const row = (await pairRow(t, "polymarket:P1", "kalshi:K1"))!;
      expect(response.json().data).toEqual({
        id: ids["p1k1"],
        market_a: {
          id: "polymarket:P1",
          venue: "polymarket",
          title: "Fed cuts 25 bps in December?",
          question: "Fed cuts 25 bps in December?",
          close_time: "2026-12-31T23:59:59.000Z",
          url: "https://example.invalid/P1",
          yes_label: "Yes",
        },
        market_b: {
          id: "kalshi:K1",
          venue: "kalshi",
          title: "Fed decision December: cut 25bps",
          question: "Fed decision December: cut 25bps",
          close_time: "2026-12-31T23:59:59.000Z",
          url: "https://example.invalid/K1",
          yes_label: "Yes",
        },
        relation: "identity",
        polarity: "same",
        confidence: 0.97,
        reasons: ["scripted identity"],
        blockers: [],
        caveats: [],
        status: "verified",
        status_reason: null,
        status_note: null,
        decided_by: "matcher",
        decided_by_account: null,
        decided_by_key: null,
        decided_at: "2026-11-22T12:00:00.000Z",
        curated: false,
        matcher_relation: "identity",
        event_id: row.event_id,
        created_at: "2026-11-22T12:00:00.000Z",
        updated_at: row.updated_at,
      });
      expect(row.event_id).toMatch(/^xev_/);
    });

    it("lists cross-venue events and shows one by its id or by a market id", async () => {
      const p1k1 = (await pairRow(t, "polymarket:P1", "kalshi:K1"))!;
      const p2k2 = (await pairRow(t, "polymarket:P2", "kalshi:K2"))!;
      const p4k4 = (await pairRow(t, "polymarket:P4", "kalshi:K4"))!;
      const response = await call(t.app, read, "GET", "/v1/events");
      expect(response.statusCode).toBe(200);
      const body = response.json();
      // Identity and complement pairs only (P3-K3 is a superset), newest first.
      expect(body.data.map((e: { event_id: string }) => e.event_id)).toEqual(
        [p1k1.event_id, p2k2.event_id, p4k4.event_id].sort().reverse(),
      );
      expect(body.meta).toEqual({ page: 1, limit: 50, total: 3 });

      const one = await call(t.app, read, "GET", `/v1/events/${p1k1.event_id}`);
      expect(one.statusCode).toBe(200);
      expect(one.json().data).toEqual({
        event_id: p1k1.event_id,
        title: "Fed cuts 25 bps in December?",
        category: "Economy",
        close_time: "2026-12-31T23:59:59.000Z",
        status: "verified",
        markets: [
          {
            market_id: "polymarket:P1",
            venue: "polymarket",
            title: "Fed cuts 25 bps in December?",
            yes_label: "Yes",
            url: "https://example.invalid/P1",
          },
          {
            market_id: "kalshi:K1",
            venue: "kalshi",
            title: "Fed decision December: cut 25bps",
            yes_label: "Yes",
            url: "https://example.invalid/K1",
          },
        ],
        matches: [
          { match_id: p1k1.id, relation: "identity", polarity: "same", confidence: 0.97, status: "verified" },
        ],
      });
      const byMarket = await call(t.app, read, "GET", "/v1/events/kalshi:K1");
      expect(byMarket.json().data.event_id).toBe(p1k1.event_id);

      const ev = async (query: string) =>
        (await call(t.app, read, "GET", `/v1/events${query}`))
          .json()
          .data.map((e: { event_id: string }) => e.event_id);
      expect(await ev("?status=verified")).toEqual([p1k1.event_id]);
      expect(await ev("?status=candidate")).toEqual([p2k2.event_id, p4k4.event_id].sort().reverse());
      expect(await ev("?category=economics")).toEqual([p1k1.event_id]);
      // P2 is in Polymarket's "Economy" event too.
      expect(await ev("?category=ECONOMY")).toEqual([p1k1.event_id, p2k2.event_id].sort().reverse());
      expect(await ev("?q=celtics")).toEqual([p4k4.event_id]);
      expect(await ev("?q=fed%20holds")).toEqual([p2k2.event_id]);
      expect((await ev("?venue=polymarket")).length).toBe(3);
      const paged = (await call(t.app, read, "GET", "/v1/events?limit=1&offset=1")).json();
      expect(paged.meta).toEqual({ page: 2, limit: 1, total: 3 });
      expect(paged.data).toHaveLength(1);
    });

    it("refuses bad filters with field-level messages, and unknown ids with 404 codes", async () => {
      const bad = async (url: string, field: string) => {
        const error = expectError(await call(t.app, read, "GET", url), 400, "VALIDATION_ERROR");
        expect(Object.keys((error.details as { fields: Record<string, string> }).fields)).toContain(field);
      };
      await bad("/v1/matches?relation=twin", "query.relation");
      await bad("/v1/matches?min_confidence=1.5", "query.min_confidence");
      await bad("/v1/matches?min_confidence=-0.1", "query.min_confidence");
      await bad("/v1/matches?status=maybe", "query.status");
      await bad("/v1/matches?venue=manifold", "query.venue");
      await bad("/v1/matches?limit=101", "query.limit");
      await bad("/v1/matches?colour=red", "query.colour");
      await bad("/v1/events?status=rejected", "query.status");
      const missing = expectError(
        await call(t.app, read, "GET", "/v1/matches/mat_nothing"),
        404,
        "MATCH_NOT_FOUND",
      );
      expect(missing.details).toEqual({ match_id: "mat_nothing" });
      expectError(await call(t.app, read, "GET", "/v1/events/xev_nothing"), 404, "EVENT_NOT_FOUND");
      // A market in no event is no event either.
      expectError(await call(t.app, read, "GET", "/v1/events/polymarket:P3"), 404, "EVENT_NOT_FOUND");
    });
  });

  describe("curation", () => {
    it("lets only an operator's live admin key curate; every key with read may read", async () => {
      const { session, accountId, admin: nonOperatorAdmin } = await keys(t.app);
      await setAccount(t.services, accountId, { tier: "enterprise" });
      const trading = (await createKey(t.app, session, { type: "trading" })).key;
      const agent = (await createKey(t.app, session, { type: "agent", permissions: ["read", "trade"] })).key;
      // The operator's own keys that are not live admin keys do not curate either.
      const operatorTrading = (await createKey(t.app, operatorSession, { type: "trading" })).key;
      const operatorSandboxAdmin = (
        await createKey(t.app, operatorSession, { type: "admin", environment: "sandbox" })
      ).key;
      for (const key of [read, trading, agent, nonOperatorAdmin, operatorTrading, operatorSandboxAdmin]) {
        for (const [url, body] of [
          [`/v1/matches/${ids["p4k4"]}/verify`, {}],
          [`/v1/matches/${ids["p4k4"]}/reject`, { reason: "other" }],
          ["/v1/matches", { market_ids: ["polymarket:P4", "kalshi:K3"], relation: "identity" }],
        ] as const) {
          const error = expectError(await call(t.app, key, "POST", url, body), 403, "FORBIDDEN");
          expect(error.details).toEqual({ required_permission: "operator" });
        }
        expect((await call(t.app, key, "GET", "/v1/matches")).statusCode).toBe(200);
        expect((await call(t.app, key, "GET", "/v1/events")).statusCode).toBe(200);
      }
      expect((await pairRow(t, "polymarket:P4", "kalshi:K4"))!.status).toBe("candidate");
    });

    it("verifies a pair (with a relation override) and rejects it; either overwrites the other", async () => {
      const before = (await matchedEvents(t)).length;
      const verified = await call(t.app, admin, "POST", `/v1/matches/${ids["p3k3"]}/verify`, {
        relation: "identity",
        note: "same contract after all",
      });
      expect(verified.statusCode, verified.body).toBe(200);
      expect(verified.json().data).toMatchObject({
        id: ids["p3k3"],
        relation: "identity",
        polarity: "same",
        matcher_relation: "superset",
        status: "verified",
        status_reason: null,
        status_note: "same contract after all",
        decided_by: "admin",
        decided_by_account: operatorAccount,
        decided_by_key: expect.stringMatching(/^key_/),
        decided_at: "2026-11-22T12:00:00.000Z",
        curated: true,
        event_id: expect.stringMatching(/^xev_/),
      });
      const events = await matchedEvents(t);
      expect(events).toHaveLength(before + 1);
      expect(events.at(-1)!.data.match_id).toBe(ids["p3k3"]);

      const rejected = await call(t.app, admin, "POST", `/v1/matches/${ids["p3k3"]}/reject`, {
        reason: "threshold",
        note: "150k inclusive vs strictly above",
      });
      expect(rejected.statusCode).toBe(200);
      expect(rejected.json().data).toMatchObject({
        status: "rejected",
        status_reason: "threshold",
        status_note: "150k inclusive vs strictly above",
        decided_by: "admin",
        curated: true,
        event_id: null,
      });
      // Verifying the rejected pair again is allowed, with an empty body or none at all.
      const again = await t.app.inject({
        method: "POST",
        url: `/v1/matches/${ids["p3k3"]}/verify`,
        headers: { authorization: `Bearer ${admin}` },
      });
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json().data).toMatchObject({
        status: "verified",
        status_reason: null,
        relation: "identity",
      });
      expect(await matchedEvents(t)).toHaveLength(before + 2);
    });

    it("refuses bad curation input with field-level messages", async () => {
      const bad = async (url: string, body: Record<string, unknown>, field: string, key = admin) => {
        const error = expectError(await call(t.app, key, "POST", url, body), 400, "VALIDATION_ERROR");
        expect(Object.keys((error.details as { fields: Record<string, string> }).fields)).toContain(field);
      };
      const verify = `/v1/matches/${ids["p4k4"]}/verify`;
      const reject = `/v1/matches/${ids["p4k4"]}/reject`;
      await bad(verify, { relation: "twin" }, "body.relation");
      await bad(verify, { relation: "identity", polarity: "inverted" }, "body.polarity");
      await bad(verify, { relation: "complement", polarity: "same" }, "body.polarity");
      await bad(verify, { confidence: 1 }, "body.confidence");
      await bad(reject, {}, "body.reason");
      await bad(reject, { reason: "looks_wrong" }, "body.reason");
      await bad(
        "/v1/matches",
        { market_ids: ["polymarket:P4", "polymarket:P4"], relation: "identity" },
        "body.market_ids",
      );
      await bad(
        "/v1/matches",
        { market_ids: ["polymarket:P4", "polymarket:P3"], relation: "identity" },
        "body.market_ids",
      );
      await bad("/v1/matches", { market_ids: ["polymarket:P4"], relation: "identity" }, "body.market_ids");
      await bad(
        "/v1/matches",
        { market_ids: ["polymarket:P4", "kalshi:K3"], relation: "same" },
        "body.relation",
      );
      await bad("/v1/matches", { market_ids: ["polymarket:P4", "kalshi:K3"] }, "body.relation");
      await bad(
        "/v1/matches",
        { market_ids: ["polymarket:P4", "kalshi:K3"], relation: "identity", polarity: "inverted" },
        "body.polarity",
      );
      expectError(
        await call(t.app, admin, "POST", "/v1/matches/mat_nothing/verify", {}),
        404,
        "MATCH_NOT_FOUND",
      );
      expectError(
        await call(t.app, admin, "POST", "/v1/matches/mat_nothing/reject", { reason: "other" }),
        404,
        "MATCH_NOT_FOUND",
      );
      const unknown = expectError(
        await call(t.app, admin, "POST", "/v1/matches", {
          market_ids: ["polymarket:P4", "kalshi:NOPE"],
          relation: "identity",
        }),
        404,
        "MARKET_NOT_FOUND",
      );
      expect(unknown.details).toEqual({ market_id: "kalshi:NOPE" });
      expect((await pairRow(t, "polymarket:P4", "kalshi:K4"))!.status).toBe("candidate");
    });

    it("pairs two markets by hand in canonical order; an existing pair is verified instead", async () => {
      const before = (await matchedEvents(t)).length;
      // "K2 is a subset of P4", given from the Kalshi side.
      const created = await call(t.app, admin, "POST", "/v1/matches", {
        market_ids: ["kalshi:K2", "polymarket:P4"],
        relation: "subset",
        note: "by hand",
      });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json().data).toMatchObject({
        id: expect.stringMatching(/^mat_/),
        market_a: { id: "polymarket:P4" },
        market_b: { id: "kalshi:K2" },
        relation: "superset",
        polarity: "same",
        confidence: 1,
        status: "verified",
        status_note: "by hand",
        decided_by: "admin",
        curated: true,
        matcher_relation: null,
        event_id: null,
      });
      expect(await matchedEvents(t)).toHaveLength(before + 1);

      const existing = await call(t.app, admin, "POST", "/v1/matches", {
        market_ids: ["kalshi:K4", "polymarket:P4"],
        relation: "complement",
      });
      expect(existing.statusCode).toBe(200);
      expect(existing.json().data).toMatchObject({
        id: ids["p4k4"],
        relation: "complement",
        polarity: "inverted",
        status: "verified",
        curated: true,
      });
      expect(await matchedEvents(t)).toHaveLength(before + 2);
    });

    it("is global: another account sees the same pairs, and the operator's decision for everyone", async () => {
      const mine = idsOf(await list("?limit=100"));
      expect(idsOf(await list("?limit=100", otherRead))).toEqual(mine);
      // Signing up and minting an admin key does not make anyone a curator of shared data.
      expectError(
        await call(t.app, otherAdmin, "POST", `/v1/matches/${ids["p2k2"]}/reject`, { reason: "polarity" }),
        403,
        "FORBIDDEN",
      );
      const response = await call(t.app, admin, "POST", `/v1/matches/${ids["p2k2"]}/reject`, {
        reason: "polarity",
      });
      expect(response.statusCode).toBe(200);
      const seen = (await call(t.app, otherRead, "GET", `/v1/matches/${ids["p2k2"]}`)).json().data;
      expect(seen).toMatchObject({ status: "rejected", status_reason: "polarity" });
    });

    it("shows the role in GET /v1/account and drops it when the CLI takes it away", async () => {
      const whoami = async (key: string) => (await call(t.app, key, "GET", "/v1/account")).json().data;
      expect((await whoami(admin)).account.operator).toBe(true);
      expect((await whoami(otherAdmin)).account.operator).toBe(false);
      const { admin: former, accountId } = await keys(t.app);
      await setAccount(t.services, accountId, { operator: true });
      const url = `/v1/matches/${ids["p4k4"]}/verify`;
      expect((await call(t.app, former, "POST", url, {})).statusCode).toBe(200);
      await setAccount(t.services, accountId, { operator: false });
      // Verified keys are cached for two seconds; the role goes with the next look-up.
      t.clock.advance(2_001);
      expect((await whoami(former)).account.operator).toBe(false);
      expectError(await call(t.app, former, "POST", url, {}), 403, "FORBIDDEN");
    });

    it("rate-limits curation like any request", async () => {
      const { admin: curator, accountId } = await keys(t.app);
      await setAccount(t.services, accountId, { operator: true }); // free tier: 60 a minute
      t.clock.advance(60_000); // a fresh window
      const url = `/v1/matches/${ids["p1k1"]}/verify`;
      let last = await call(t.app, curator, "POST", url, {});
      expect(last.headers["ratelimit-remaining"]).toBe("59");
      for (let i = 1; i < 60; i++) last = await call(t.app, curator, "POST", url, {});
      expect(last.statusCode).toBe(200);
      const refused = expectError(await call(t.app, curator, "POST", url, {}), 429, "RATE_LIMITED");
      expect(refused.details).toMatchObject({ limit: 60, remaining: 0 });
    });
  });
});
