/**
 * `GET /v1/fills` on both stores: the caller's fills across orders, oldest first by (created_at, id),
 * filtered by market, order and time, paged after a fill's id with next_after / has_more; another
 * account's and the other environment's fills never show; a bad query is a 400 naming the field.
 * And `market_title` beside `market_id` on orders, fills and positions (null when the catalog does
 * not know the market).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { insertNewFills, insertOrder } from "../../src/ledger/orders-repo";
import { bearer, createKey, expectError, signup } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { book, get, place, placed, setBook, type Trading, tradingApp } from "./setup";

interface Fill {
  id: string;
  order_id: string;
  market_id: string;
  market_title: string | null;
  side: string;
  outcome: string;
  price: number;
  size: number;
  created_at: string;
}

interface FillsPage {
  data: Fill[];
  meta: { next_after: string | null; has_more: boolean };
}

describe.each(STORE_BACKENDS)("GET /v1/fills on %s", (store) => {
  let s: Trading;
  beforeEach(async () => {
    s = await tradingApp({ store });
    // Two ask levels on each market: a buy of 2 at the second level fills twice.
    setBook(
      s.kalshi,
      book("kalshi:K", {
        bids: [[0.4, 100]],
        asks: [
          [0.45, 1],
          [0.46, 100],
        ],
      }),
    );
    setBook(
      s.kalshi,
      book("kalshi:K2", {
        bids: [[0.3, 100]],
        asks: [
          [0.35, 1],
          [0.36, 100],
        ],
      }),
    );
  });
  afterEach(async () => {
    await s.t.close();
  });

  const fills = async (query = "", key = s.key): Promise<FillsPage> => get(s.t.app, key, `/v1/fills${query}`);
  const refused = (query: string, key = s.key) =>
    s.t.app.inject({ method: "GET", url: `/v1/fills${query}`, headers: bearer(key) });
  const buy = (market: string, price: number, amount: number, key = s.key) =>
    placed(s.t.app, key, { market_id: market, side: "buy", price, amount });
  const ids = (page: FillsPage) => page.data.map((f) => f.id);

  it("fills across two orders appear in GET /v1/fills", async () => {
    const a = await buy("kalshi:K", 0.46, 2); // two fills: 1 at 0.45, 1 at 0.46
    const b = await buy("kalshi:K2", 0.35, 1); // one fill at 0.35
    const page = await fills();
    expect(page.data.map((f) => [f.order_id, f.price, f.size])).toEqual([
      [a.id, 0.45, 1],
      [a.id, 0.46, 1],
      [b.id, 0.35, 1],
    ]);
    expect(page.meta).toEqual({ next_after: page.data[2]!.id, has_more: false });
    // The same fills, field for field, as each order's own fill list shows them.
    const perOrder = [
      ...(await get(s.t.app, s.key, `/v1/orders/${a.id}/fills`)).data,
      ...(await get(s.t.app, s.key, `/v1/orders/${b.id}/fills`)).data,
    ];
    expect(page.data).toEqual(perOrder);
    expect(page.data[0]).toMatchObject({
      market_id: "kalshi:K",
      // The market's own title, not its event's ("The K event").
      market_title: "K market",
      side: "buy",
      outcome: "yes",
      liquidity: "taker",
    });
    expect(page.data[2]).toMatchObject({ market_id: "kalshi:K2", market_title: "Market K2" });
  });

  it("filters by market, by order and by time", async () => {
    const a = await buy("kalshi:K", 0.46, 2);
    s.t.clock.advance(60_000);
    const b = await buy("kalshi:K2", 0.35, 1);
    s.t.clock.advance(60_000);
    const c = await buy("kalshi:K", 0.46, 1);
    const all = await fills();
    expect(all.data.map((f) => f.order_id)).toEqual([a.id, a.id, b.id, c.id]);

    const onK = await fills("?market_id=kalshi:K");
    expect(onK.data.map((f) => f.order_id)).toEqual([a.id, a.id, c.id]);
    expect((await fills("?market_id=kalshi:NOPE")).data).toEqual([]);

    const ofA = await fills(`?order_id=${a.id}`);
    expect(ofA.data.map((f) => f.order_id)).toEqual([a.id, a.id]);
    expect((await fills(`?order_id=${c.id}&market_id=kalshi:K2`)).data).toEqual([]);

    // `since` is inclusive: b's fill was recorded exactly at b's creation.
    const sinceB = await fills(`?since=${encodeURIComponent(b.created_at)}`);
    expect(sinceB.data.map((f) => f.order_id)).toEqual([b.id, c.id]);
    // An offset names the same instant.
    const shifted = new Date(Date.parse(b.created_at) + 2 * 3600_000).toISOString().replace("Z", "+02:00");
    expect(ids(await fills(`?since=${encodeURIComponent(shifted)}`))).toEqual(ids(sinceB));
    const later = new Date(Date.parse(c.created_at) + 1).toISOString();
    expect((await fills(`?since=${later}`)).data).toEqual([]);
    expect(ids(await fills(`?since=${encodeURIComponent(b.created_at)}&market_id=kalshi:K`))).toEqual([
      all.data[3]!.id,
    ]);
  });

  it("pages after a fill's id, walking every fill exactly once in (created_at, id) order", async () => {
    // Seven fills over five orders; the clock stands still for some, so ids break the ties.
    await buy("kalshi:K", 0.46, 2);
    await buy("kalshi:K2", 0.36, 2);
    s.t.clock.advance(1_000);
    await buy("kalshi:K", 0.46, 1);
    await buy("kalshi:K2", 0.36, 1);
    s.t.clock.advance(1_000);
    await buy("kalshi:K", 0.46, 1);
    const everything = await fills();
    expect(everything.data).toHaveLength(7);
    const key = (f: Fill) => `${f.created_at} ${f.id}`;
    expect(everything.data.map(key)).toEqual(everything.data.map(key).sort());

    const walked: string[] = [];
    let query = "?limit=2";
    for (let pages = 0; pages < 10; pages++) {
      const page = await fills(query);
      walked.push(...ids(page));
      if (!page.meta.has_more) break;
      expect(page.data).toHaveLength(2);
      query = `?limit=2&after=${page.meta.next_after}`;
    }
    expect(walked).toEqual(ids(everything));

    // Past the end: nothing, and the cursor comes back to read on from later.
    const last = everything.data[6]!.id;
    expect(await fills(`?after=${last}`)).toEqual({
      success: true,
      data: [],
      meta: { next_after: last, has_more: false },
    });
    // A fill recorded later shows after that cursor.
    s.t.clock.advance(1_000);
    const next = await buy("kalshi:K2", 0.36, 1);
    expect((await fills(`?after=${last}`)).data.map((f) => f.order_id)).toEqual([next.id]);
    // Nothing yet: no cursor.
    const other = await signup(s.t.app);
    const empty = (await createKey(s.t.app, other.session, { type: "trading", environment: "sandbox" })).key;
    expect(await fills("", empty)).toEqual({
      success: true,
      data: [],
      meta: { next_after: null, has_more: false },
    });
  });

  it("never shows another account's fills, nor takes them as a filter or cursor", async () => {
    const mine = await buy("kalshi:K", 0.45, 1);
    const other = await signup(s.t.app);
    const otherKey = (await createKey(s.t.app, other.session, { type: "trading", environment: "sandbox" }))
      .key;
    const theirs = await buy("kalshi:K2", 0.35, 1, otherKey);
    const theirFill = (await fills("", otherKey)).data[0]!;
    expect(theirFill.order_id).toBe(theirs.id);

    expect((await fills()).data.map((f) => f.order_id)).toEqual([mine.id]);
    expect((await fills(`?order_id=${theirs.id}`)).data).toEqual([]);
    expect((await fills("?market_id=kalshi:K2")).data).toEqual([]);
    const error = expectError(await refused(`?after=${theirFill.id}`), 400, "VALIDATION_ERROR");
    expect(Object.keys((error.details as { fields: object }).fields)).toEqual(["query.after"]);
  });

  it("keeps sandbox and live apart: each key sees its environment's fills only", async () => {
    const sandboxOrder = await buy("kalshi:K", 0.45, 1);
    expect((await fills("", s.liveKey)).data).toEqual([]);
    const sandboxFill = (await fills()).data[0]!;
    expectError(await refused(`?after=${sandboxFill.id}`, s.liveKey), 400, "VALIDATION_ERROR");
    expect((await fills(`?order_id=${sandboxOrder.id}`, s.liveKey)).data).toEqual([]);

    // A live fill as the venue poller records one, on a market the catalog does not know.
    const db = s.t.runtime.store.db;
    const order = await db
      .selectFrom("orders")
      .selectAll()
      .where("id", "=", sandboxOrder.id)
      .executeTakeFirstOrThrow();
    const fill = await db
      .selectFrom("fills")
      .selectAll()
      .where("id", "=", sandboxFill.id)
      .executeTakeFirstOrThrow();
    const liveOrder = {
      ...order,
      id: "ord_LIVE1",
      environment: "live",
      market_id: "kalshi:GONE",
      client_order_id: null,
    };
    await insertOrder(db, liveOrder);
    await insertNewFills(db, [
      { ...fill, id: "fil_LIVE1", order_id: liveOrder.id, environment: "live", market_id: "kalshi:GONE" },
    ]);

    const live = await fills("", s.liveKey);
    expect(live.data.map((f) => [f.id, f.market_id, f.market_title])).toEqual([
      ["fil_LIVE1", "kalshi:GONE", null],
    ]);
    expect(ids(await fills())).toEqual([sandboxFill.id]);
    expectError(await refused("?after=fil_LIVE1"), 400, "VALIDATION_ERROR");
    expect((await get(s.t.app, s.liveKey, `/v1/orders/${liveOrder.id}`)).data.market_title).toBeNull();
  });

  it("refuses a bad query with a 400 naming the field", async () => {
    await buy("kalshi:K", 0.45, 1);
    const cases: Array<[string, string]> = [
      ["?after=not-a-fill", "query.after"],
      ["?after=fil_01NOSUCHFILL0000000000000", "query.after"],
      ["?after=", "query.after"],
      ["?since=yesterday", "query.since"],
      ["?since=2026-02-30T00:00:00Z", "query.since"],
      ["?since=2026-11-22T12:00:00", "query.since"],
      ["?limit=0", "query.limit"],
      ["?limit=101", "query.limit"],
      ["?order_id=", "query.order_id"],
      ["?sort=desc", "query.sort"],
    ];
    for (const [query, field] of cases) {
      const error = expectError(await refused(query), 400, "VALIDATION_ERROR");
      expect(Object.keys((error.details as { fields: object }).fields), query).toEqual([field]);
    }
  });

  it("names the market beside market_id on orders, fills and positions", async () => {
    const headers = { "idempotency-key": "title-1" };
    const body = { market_id: "kalshi:K", side: "buy", price: 0.46, amount: 2 };
    const first = await place(s.t.app, s.key, body, headers);
    expect(first.statusCode).toBe(201);
    const order = first.json().data;
    expect(order).toMatchObject({ market_id: "kalshi:K", market_title: "K market" });
    // A replay names it too.
    const replay = await place(s.t.app, s.key, body, headers);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json().data.market_title).toBe("K market");
    await buy("kalshi:K2", 0.3, 1); // rests

    expect((await get(s.t.app, s.key, `/v1/orders/${order.id}`)).data.market_title).toBe("K market");
    const list = (await get(s.t.app, s.key, "/v1/orders?status=all")).data;
    expect(
      list.map((o: { market_id: string; market_title: string }) => [o.market_id, o.market_title]),
    ).toEqual([
      ["kalshi:K2", "Market K2"],
      ["kalshi:K", "K market"],
    ]);
    const orderFills = (await get(s.t.app, s.key, `/v1/orders/${order.id}/fills`)).data;
    expect(orderFills.map((f: Fill) => f.market_title)).toEqual(["K market", "K market"]);

    const positions = (await get(s.t.app, s.key, "/v1/positions")).data;
    expect(
      positions.map((p: { market_id: string; market_title: string }) => [p.market_id, p.market_title]),
    ).toEqual([["kalshi:K", "K market"]]);
    expect((await get(s.t.app, s.key, `/v1/positions/${positions[0].id}`)).data.market_title).toBe(
      "K market",
    );
  });
});
