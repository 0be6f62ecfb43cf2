/**
 * Polymarket positions through the Data API as the venue serves them: the fake applies the venue's
 * defaults (`sizeThreshold` 1.0, `limit` 100, `offset` pages), so the adapter must ask for
 * `sizeThreshold=0` and walk the pages, or a wallet's small positions and everything past the 100th
 * vanish. Each row names its own market and leg: no Gamma lookup per position.
 */
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import type { SeedMarket } from "@crossbook/fakes/world";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../../src/infra/clock";
import { silentLogger } from "../../../src/infra/log";
import { positionLeg } from "../../../src/venues/polymarket/account";
import { PolymarketVenue } from "../../../src/venues/polymarket/adapter";
import type { VenueCredentials } from "../../../src/venues/venue";

const KEY = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a" as const; // Hardhat #2
const ADDRESS = privateKeyToAccount(KEY).address;
const creds: VenueCredentials = { venue: "polymarket", privateKey: KEY, signatureType: 0 };

/** 90 binary markets: 180 tokens, more than one Data API page of positions. */
const WORLD: SeedMarket[] = Array.from({ length: 90 }, (_, i) => ({
  venue: "polymarket",
  key: `held-market-${i}`,
  eventKey: `held-event-${i}`,
  eventTitle: `Held event ${i}`,
  category: "economics",
  question: `Will held thing ${i} happen?`,
  rules: `Resolves Yes if held thing ${i} happens.`,
  settlementSource: "Generator",
  closeTime: "2027-06-30T00:00:00Z",
  yesPrice: 0.25 + (i % 50) / 100,
  tickSize: 0.01,
  // A few team-name markets whose YES is the first-listed outcome, one with "No" listed first.
  ...(i % 30 === 1 ? { outcomes: ["Lions", "Bears"] as [string, string], yesLabel: "Lions" } : {}),
  ...(i % 30 === 2 ? { outcomes: ["No", "Yes"] as [string, string] } : {}),
}));

let fake: PolymarketFake;

beforeAll(async () => {
  fake = await startPolymarketFake({ world: WORLD });
});
afterAll(() => fake?.close());

function venue() {
  return new PolymarketVenue({
    gammaUrl: fake.gammaUrl,
    clobUrl: fake.clobUrl,
    dataUrl: fake.dataUrl,
    wsUrl: fake.wsUrl,
    clock: systemClock,
    log: silentLogger,
    http: { backoffBaseMs: 1, backoffCapMs: 5 },
  });
}

describe("polymarket positions", () => {
  it("lists a half-share position and the 150th position, each on its market and leg", async () => {
    const markets = fake.script.markets();
    const tokens = markets.flatMap((m) => [m.yesTokenId, m.noTokenId]);
    const positions: Record<string, number> = {};
    // 150 positions of 10..159 shares, and one of half a share (the smallest, so last by size).
    for (let i = 0; i < 150; i++) positions[tokens[i]!] = 10 + i;
    positions[tokens[150]!] = 0.5;
    fake.script.registerWallet({ address: ADDRESS, positions });
    fake.script.resetRequests();

    const listed = await venue().listPositions(creds);
    expect(listed).toHaveLength(151);
    const byToken = new Map(
      markets.flatMap((m) => [
        [m.yesTokenId, { marketId: `polymarket:${m.conditionId.toLowerCase()}`, outcome: "yes" }],
        [m.noTokenId, { marketId: `polymarket:${m.conditionId.toLowerCase()}`, outcome: "no" }],
      ]),
    );
    for (const [token, size] of Object.entries(positions)) {
      const leg = byToken.get(token)!;
      expect(listed).toContainEqual(expect.objectContaining({ ...leg, size: Math.round(size * 1e6) }));
    }
    // The smallest (the 150th from the top and the half share) are there.
    expect(listed.find((p) => p.size === 500_000)).toBeDefined();
    expect(listed.find((p) => p.size === 10_000_000)).toBeDefined();
    // Every page asked for everything down to zero shares; no market was looked up on Gamma.
    expect(fake.script.requestCount("GET /data/positions")).toBeGreaterThanOrEqual(2);
    expect(fake.script.requestCount("GET /gamma/markets")).toBe(0);
  });

  it("reads the leg from the row by the catalog's rule, and defers to Gamma when it cannot tell", () => {
    const cid = `0x${"ab".repeat(32)}`;
    const row = (outcome: string, opposite: string, index: number) => ({
      conditionId: cid,
      outcome,
      oppositeOutcome: opposite,
      outcomeIndex: index,
    });
    expect(positionLeg(row("Yes", "No", 0))).toEqual({ marketId: `polymarket:${cid}`, outcome: "yes" });
    expect(positionLeg(row("No", "Yes", 0))).toEqual({ marketId: `polymarket:${cid}`, outcome: "no" });
    expect(positionLeg(row("Lions", "Bears", 0))?.outcome).toBe("yes");
    expect(positionLeg(row("Bears", "Lions", 1))?.outcome).toBe("no");
    expect(positionLeg(row("Yes", "Maybe", 0))).toBeUndefined();
    expect(positionLeg({ conditionId: cid, outcome: "Yes", outcomeIndex: 0 })).toBeUndefined();
  });
});
