/**
 * The fake Data API's `GET /positions` applies the venue's documented defaults and limits
 * (docs.polymarket.com, developers/open-api/get-positions.json): `sizeThreshold` 1.0, `limit` 100
 * (at most 500), `offset` at most 10,000, largest positions first. A client that sends only `user`
 * loses positions under one share and every position after the 100th, as it would at the venue.
 */
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PolymarketFake, startPolymarketFake } from "../src/polymarket";
import type { SeedMarket } from "../src/world/seed";
import { HARDHAT1, type Json } from "./polymarket-helpers";

/** `n` open binary Polymarket markets (two tokens each). */
function generated(n: number): SeedMarket[] {
  return Array.from({ length: n }, (_, i) => ({
    venue: "polymarket" as const,
    key: `gen-pos-${i}`,
    eventKey: `gen-pos-event-${Math.floor(i / 4)}`,
    eventTitle: `Generated event ${Math.floor(i / 4)}`,
    category: "economics" as const,
    question: `Generated position market ${i}?`,
    rules: `Resolves Yes if generated condition ${i} holds.`,
    settlementSource: "Generator",
    closeTime: "2027-03-01T00:00:00Z",
    yesPrice: 0.2 + (i % 60) / 100,
    tickSize: 0.01 as const,
  }));
}

describe("fake Polymarket Data API positions", () => {
  let fake: PolymarketFake;
  const wallet = privateKeyToAccount(HARDHAT1).address;
  /** 150 positions of 2..151 shares, and one of half a share. */
  const HELD = 151;

  beforeAll(async () => {
    fake = await startPolymarketFake({ world: generated(80) });
    const tokens = fake.script.markets().flatMap((m) => [m.yesTokenId, m.noTokenId]);
    const positions: Record<string, number> = {};
    for (let i = 0; i < HELD - 1; i++) positions[tokens[i]!] = i + 2;
    positions[tokens[HELD - 1]!] = 0.5;
    fake.script.registerWallet({ address: wallet, positions });
  });
  afterAll(() => fake?.close());

  const get = async (query: string) => {
    const res = await fetch(`${fake.dataUrl}/positions?user=${wallet}${query}`);
    return { status: res.status, body: (await res.json()) as Json };
  };

  it("by default leaves out positions under one share and everything after the 100th", async () => {
    const { status, body } = await get("");
    expect(status).toBe(200);
    expect(body).toHaveLength(100);
    // Largest first (sortBy TOKENS, DESC): the page holds the 100 largest.
    expect(body[0].size).toBe(151);
    expect(body[99].size).toBe(52);
    expect(body.some((p: Json) => p.size < 1)).toBe(false);
  });

  it("serves every position with sizeThreshold=0, page by page through offset", async () => {
    const seen: Json[] = [];
    for (let offset = 0; ; offset += 50) {
      const { status, body } = await get(`&sizeThreshold=0&limit=50&offset=${offset}`);
      expect(status).toBe(200);
      if (body.length === 0) break;
      seen.push(...body);
    }
    expect(seen).toHaveLength(HELD);
    expect(new Set(seen.map((p) => p.asset)).size).toBe(HELD);
    expect(seen.at(-1)).toMatchObject({ size: 0.5 });
    expect((await get("&sizeThreshold=0&limit=500")).body).toHaveLength(HELD);
  });

  it("refuses what the venue refuses", async () => {
    expect((await get("&limit=501")).status).toBe(400);
    expect((await get("&offset=10001")).status).toBe(400);
    expect((await get("&sizeThreshold=-1")).status).toBe(400);
    expect((await get("&sortBy=NOPE")).status).toBe(400);
    const noUser = await fetch(`${fake.dataUrl}/positions`);
    expect(noUser.status).toBe(400);
  });

  it("filters by market and sorts as asked", async () => {
    const m = fake.script.markets()[0]!;
    const { body } = await get(`&market=${m.conditionId}&sizeThreshold=0`);
    expect(body.map((p: Json) => p.asset).sort()).toEqual([m.yesTokenId, m.noTokenId].sort());
    const ascending = (await get("&sizeThreshold=0&limit=3&sortDirection=ASC")).body;
    expect(ascending.map((p: Json) => p.size)).toEqual([0.5, 2, 3]);
  });
});
