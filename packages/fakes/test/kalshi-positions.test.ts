/**
 * The fake Kalshi's `GET /portfolio/positions` pages as the venue documents (docs.kalshi.com
 * api-reference/portfolio/get-positions; kalshi-typescript 3.30 PortfolioApi.md): `limit` default
 * 100, at most 1000, an opaque `cursor` that comes back empty on the last page; `position_fp` signed
 * (negative = NO). `script.setPosition` gives an account a position bought outside any client.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KalshiFake, startKalshiFake } from "../src/kalshi";
import { bigWorld, call, makeKey, type TestKey, type Wire } from "./kalshi-helpers";

describe("fake Kalshi positions", () => {
  let fake: KalshiFake;
  let key: TestKey;
  const HELD = 130;

  beforeAll(async () => {
    fake = await startKalshiFake({ world: bigWorld(HELD) });
    key = makeKey("positions-key");
    fake.script.addApiKey({ keyId: key.keyId, publicKeyPem: key.publicKeyPem });
    const tickers = fake.script.tickers({ openOnly: true, includeMve: false });
    for (let i = 0; i < HELD; i++) {
      fake.script.setPosition(key.keyId, tickers[i]!, {
        contracts: i % 2 === 0 ? i + 1 : -(i + 1),
        averagePrice: 0.4,
      });
    }
  });
  afterAll(() => fake?.close());

  it("pages with a cursor until it comes back empty; 100 by default", async () => {
    const first = await call(fake.apiUrl, "GET", "/portfolio/positions", { key });
    expect(first.status).toBe(200);
    expect(first.body.market_positions).toHaveLength(100);
    expect(first.body.cursor).not.toBe("");

    const all: Wire[] = [];
    let cursor = "";
    let pages = 0;
    do {
      const res = await call(
        fake.apiUrl,
        "GET",
        `/portfolio/positions?limit=50${cursor ? `&cursor=${cursor}` : ""}`,
        { key },
      );
      expect(res.status).toBe(200);
      all.push(...res.body.market_positions);
      cursor = res.body.cursor;
      pages++;
    } while (cursor !== "");
    expect(pages).toBe(3);
    expect(all).toHaveLength(HELD);
    expect(all[1]).toMatchObject({ position_fp: "-2.00", market_exposure_dollars: "0.8000" });
    expect(all[0]).toMatchObject({ position_fp: "1.00" });
  });

  it("refuses a limit above 1000", async () => {
    const res = await call(fake.apiUrl, "GET", "/portfolio/positions?limit=1001", { key });
    expect(res.status).toBe(400);
  });

  it("a cleared position is traded but not held: count_filter=position leaves it out", async () => {
    const ticker = fake.script.tickers({ openOnly: true, includeMve: false })[0]!;
    fake.script.setPosition(key.keyId, ticker, { contracts: 0 });
    const held = await call(
      fake.apiUrl,
      "GET",
      `/portfolio/positions?ticker=${ticker}&count_filter=position`,
      {
        key,
      },
    );
    expect(held.body.market_positions).toEqual([]);
    const traded = await call(fake.apiUrl, "GET", `/portfolio/positions?ticker=${ticker}`, { key });
    expect(traded.body.market_positions).toHaveLength(1);
  });
});
