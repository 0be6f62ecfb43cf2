/** Price alerts, the errors: every bad request names its field; unknown things are 404s. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertMarket } from "../../src/catalog/repo";
import { marketRow } from "../../src/catalog/service";
import { bearer, expectError } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { testMarket } from "../support/fake-venue";
import { type AlertsTestApp, alertsApp, createAlert } from "./setup";

describe.each(STORE_BACKENDS)("price alert errors on %s", (store) => {
  let t: AlertsTestApp;
  let key: string;

  beforeAll(async () => {
    ({ t, key } = await alertsApp({ store }));
    const now = new Date(t.clock.now()).toISOString();
    await upsertMarket(
      t.runtime.store.db,
      marketRow(testMarket("kalshi", "SHUT", { status: "closed" }), now),
    );
    await upsertMarket(
      t.runtime.store.db,
      marketRow(testMarket("kalshi", "DONE", { status: "resolved", resolution: "yes" }), now),
    );
  });
  afterAll(() => t.close());

  const valid = { market_id: "kalshi:A", condition: "price_above", threshold: 0.5 };

  async function badRequest(body: Record<string, unknown>) {
    const response = await createAlert(t.app, key, body);
    return expectError(response, 400, "VALIDATION_ERROR").details?.["fields"] as Record<string, string>;
  }

  it("names an unknown condition", async () => {
    const fields = await badRequest({ ...valid, condition: "price_crosses" });
    expect(fields["body.condition"]).toMatch(/must be one of: price_above, price_below/);
  });

  it("wants price thresholds strictly between 0 and 1", async () => {
    for (const threshold of [0, 1, 1.5, -0.2, 0.0000001]) {
      for (const condition of ["price_above", "price_below"]) {
        const fields = await badRequest({ ...valid, condition, threshold });
        expect(fields, `${condition} ${threshold}`).toEqual({
          "body.threshold": `must be a price strictly between 0 and 1 for ${condition}`,
        });
      }
    }
    expect((await createAlert(t.app, key, { ...valid, threshold: 0.000001 })).statusCode).toBe(201);
    expect((await createAlert(t.app, key, { ...valid, threshold: 0.999999 })).statusCode).toBe(201);
  });

  it("wants percent thresholds for the change conditions, within -100 and 10000", async () => {
    for (const threshold of [-100, -150, 10_000, 1e9]) {
      const fields = await badRequest({ ...valid, condition: "change_pct_24h_below", threshold });
      expect(fields["body.threshold"], String(threshold)).toMatch(
        /percentage strictly between -100 and 10000/,
      );
    }
    for (const threshold of [5, -99.5, 250]) {
      const response = await createAlert(t.app, key, {
        ...valid,
        condition: "change_pct_24h_above",
        threshold,
      });
      expect(response.statusCode, String(threshold)).toBe(201);
      expect(response.json().data.threshold).toBe(threshold);
    }
  });

  it("rejects missing, mistyped and unknown fields", async () => {
    expect(await badRequest({ market_id: "kalshi:A", condition: "price_above" })).toMatchObject({
      "body.threshold": "is required",
    });
    expect(await badRequest({ ...valid, threshold: "high" })).toHaveProperty(["body.threshold"]);
    expect(await badRequest({ ...valid, repeat: "sometimes" })).toHaveProperty(["body.repeat"]);
    expect(await badRequest({ ...valid, treshold: 0.4 })).toMatchObject({
      "body.treshold": "is not an accepted field",
    });
  });

  it("answers 404 MARKET_NOT_FOUND for an unknown market", async () => {
    const response = await createAlert(t.app, key, { ...valid, market_id: "kalshi:NOPE" });
    expect(expectError(response, 404, "MARKET_NOT_FOUND").details).toEqual({ market_id: "kalshi:NOPE" });
  });

  it("refuses a closed or resolved market with a 400 on market_id", async () => {
    for (const [id, status] of [
      ["kalshi:SHUT", "closed"],
      ["kalshi:DONE", "resolved"],
    ]) {
      const error = expectError(
        await createAlert(t.app, key, { ...valid, market_id: id }),
        400,
        "VALIDATION_ERROR",
      );
      expect(error.message).toBe(`Market ${id} is ${status}: alerts can only watch open markets`);
      expect(error.details).toEqual({
        fields: { "body.market_id": `is ${status}; alerts can only watch open markets` },
      });
    }
  });

  it("answers 404 ALERT_NOT_FOUND for an unknown alert on GET and DELETE", async () => {
    for (const method of ["GET", "DELETE"] as const) {
      const response = await t.app.inject({ method, url: "/v1/alerts/alt_nothing", headers: bearer(key) });
      expect(expectError(response, 404, "ALERT_NOT_FOUND").details).toEqual({ alert_id: "alt_nothing" });
    }
  });

  it("validates the list query", async () => {
    for (const [query, field] of [
      ["limit=101", "query.limit"],
      ["limit=0", "query.limit"],
      ["offset=-1", "query.offset"],
      ["status=fired", "query.status"],
      ["sort=asc", "query.sort"],
    ] as const) {
      const response = await t.app.inject({
        method: "GET",
        url: `/v1/alerts?${query}`,
        headers: bearer(key),
      });
      expect(expectError(response, 400, "VALIDATION_ERROR").details?.["fields"], query).toHaveProperty([
        field,
      ]);
    }
  });
});
