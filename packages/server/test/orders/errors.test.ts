/** Order placement errors a bot can act on: each has its own code, status and details. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testMarket } from "../support/fake-venue";
import { book, place, setBook, type Trading, tradingApp } from "./setup";

let s: Trading;
beforeAll(async () => {
  s = await tradingApp({}, [
    testMarket("kalshi", "SHUT"),
    testMarket("polymarket", "FINE", { tickSize: 1_000, minSize: 5_000_000 }),
  ]);
  setBook(s.kalshi, book("kalshi:K", { bids: [[0.4, 100]], asks: [[0.45, 100]] }));
  // Closed after the catalog listed it, as a venue closes a market.
  await s.t.runtime.store.db
    .updateTable("markets")
    .set({ status: "closed" })
    .where("id", "=", "kalshi:SHUT")
    .execute();
});
afterAll(() => s.t.close());

const base = { market_id: "kalshi:K", side: "buy", price: 0.4, amount: 10 };

async function error(body: Record<string, unknown>, key = s.key) {
  const response = await place(s.t.app, key, body);
  return { status: response.statusCode, error: response.json().error };
}

describe("placement errors", () => {
  it("a price outside (0, 1) is INVALID_PRICE", async () => {
    for (const price of [0, 1, -0.1, 1.5]) {
      expect(await error({ ...base, price })).toMatchObject({
        status: 400,
        error: { code: "INVALID_PRICE" },
      });
    }
  });

  it("a price off the tick is PRICE_NOT_ON_TICK with the tick and the nearest valid prices", async () => {
    expect(await error({ ...base, price: 0.405 })).toMatchObject({
      status: 400,
      error: {
        code: "PRICE_NOT_ON_TICK",
        details: { tick_size: 0.01, nearest_below: 0.4, nearest_above: 0.41 },
      },
    });
    // A 0.001-tick market takes 0.405.
    setBook(s.polymarket, book("polymarket:FINE", { asks: [[0.5, 100]] }));
    const ok = await place(s.t.app, s.key, { ...base, market_id: "polymarket:FINE", price: 0.405 });
    expect(ok.statusCode).toBe(201);
  });

  it("an amount under the market's minimum is AMOUNT_BELOW_MINIMUM", async () => {
    expect(await error({ ...base, market_id: "polymarket:P", amount: 4 })).toMatchObject({
      status: 400,
      error: { code: "AMOUNT_BELOW_MINIMUM", details: { min_size: 5 } },
    });
  });

  it("amounts are positive hundredths of a contract", async () => {
    for (const amount of [0, -1, 1.005]) {
      const e = await error({ ...base, amount });
      expect(e).toMatchObject({ status: 400, error: { code: "VALIDATION_ERROR" } });
      expect(e.error.details.fields["body.amount"]).toBeTruthy();
    }
  });

  it("an unknown market is a 404 MARKET_NOT_FOUND; a closed one a 409 MARKET_CLOSED", async () => {
    expect(await error({ ...base, market_id: "kalshi:NOPE" })).toMatchObject({
      status: 404,
      error: { code: "MARKET_NOT_FOUND", details: { market_ids: ["kalshi:NOPE"] } },
    });
    expect(await error({ ...base, market_id: "kalshi:SHUT" })).toMatchObject({
      status: 409,
      error: { code: "MARKET_CLOSED", details: { status: "closed" } },
    });
  });

  it("more than the available balance is INSUFFICIENT_BALANCE with what was needed", async () => {
    const e = await error({ ...base, price: 0.9, amount: 20_000 });
    expect(e).toMatchObject({ status: 422, error: { code: "INSUFFICIENT_BALANCE" } });
    const { balance } = await import("./setup");
    expect(e.error.details.available).toBe((await balance(s.t.app, s.key)).available);
    expect(e.error.details.required).toBeGreaterThan(18_000);
  });

  it("combinations that make no sense are field-level 400s", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ market_id: "kalshi:K", side: "buy", amount: 1 }, "body.price"],
      [{ ...base, type: "market", time_in_force: "GTC" }, "body.time_in_force"],
      [{ ...base, max_slippage: 0.1 }, "body.max_slippage"],
      [{ ...base, time_in_force: "GTD" }, "body.expires_at"],
      [{ ...base, expires_at: "2030-01-01T00:00:00Z" }, "body.expires_at"],
      [{ ...base, time_in_force: "GTD", expires_at: "2020-01-01T00:00:00Z" }, "body.expires_at"],
    ];
    for (const [body, field] of cases) {
      const e = await error(body);
      expect(e.status, JSON.stringify(body)).toBe(400);
      expect(e.error.details.fields[field], JSON.stringify(body)).toBeTruthy();
    }
  });

  it("schema errors: unknown fields, bad enums, missing fields", async () => {
    for (const body of [
      { ...base, colour: "red" },
      { ...base, side: "hold" },
      { ...base, outcome: "maybe" },
      { ...base, time_in_force: "DAY" },
      { market_id: "kalshi:K", side: "buy", price: 0.4 },
      { ...base, client_order_id: "has spaces" },
    ]) {
      const e = await error(body);
      expect(e.status, JSON.stringify(body)).toBe(400);
      expect(e.error.code).toBe("VALIDATION_ERROR");
    }
  });

  it("a read-only key cannot place (403)", async () => {
    const { createKey, setAccount } = await import("../support/app");
    await setAccount(s.t.services, s.accountId, { tier: "pro" });
    const readOnly = (await createKey(s.t.app, s.session, { type: "read_only", environment: "sandbox" })).key;
    expect(await error(base, readOnly)).toMatchObject({ status: 403, error: { code: "FORBIDDEN" } });
  });

  it("the venue's book being unreachable is a 503 VENUE_UNAVAILABLE, not a 500", async () => {
    const { VenueError } = await import("../../src/venues/errors");
    s.kalshi.books.delete("kalshi:K2");
    s.kalshi.failWith = new VenueError("kalshi", "unavailable", "down");
    try {
      expect(await error({ ...base, market_id: "kalshi:K2" })).toMatchObject({
        status: 503,
        error: { code: "VENUE_UNAVAILABLE" },
      });
    } finally {
      s.kalshi.failWith = undefined;
    }
  });
});
