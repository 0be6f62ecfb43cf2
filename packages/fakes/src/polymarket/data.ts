/**
 * Data API positions (`GET /positions?user=<funder>`): what a wallet holds, valued at the current
 * midpoint. Positions are not on the CLOB. Wire format: VENUES.md §1.6 (end).
 */
import type { FastifyInstance } from "fastify";
import type { PolymarketState } from "./state";
import { MICRO, PRICE_SCALE } from "./units";

export async function dataRoutes(app: FastifyInstance, opts: { state: PolymarketState }): Promise<void> {
  const { state } = opts;
  app.get("/positions", async (req, reply) => {
    const user = (req.query as { user?: string }).user;
    if (!user) return reply.code(400).send({ error: "user is required" });
    const w = state.wallets.get(user.toLowerCase());
    if (!w) return [];
    const out: Record<string, unknown>[] = [];
    for (const [tokenId, micro] of w.positions) {
      if (micro <= 0n) continue;
      const m = state.byToken.get(tokenId);
      if (!m) continue;
      const idx = m.tokenIds.indexOf(tokenId);
      const yes = tokenId === m.yesTokenId;
      let cur: number;
      if (m.status === "resolved") cur = (m.resolution === "yes") === yes ? 1 : 0;
      else {
        const { bid, ask } = state.bestYes(m);
        const mid = bid !== null && ask !== null ? (bid + ask) / 2 : m.fair;
        cur = (yes ? mid : PRICE_SCALE - mid) / PRICE_SCALE;
      }
      const size = Number(micro) / MICRO;
      const mine = state.trades.filter(
        (t) => t.tokenId === tokenId && t.takerAddress.toLowerCase() === w.address.toLowerCase(),
      );
      const avg = mine.length
        ? mine.reduce((a, t) => a + (t.price / PRICE_SCALE) * t.size, 0) /
          mine.reduce((a, t) => a + t.size, 0)
        : cur;
      const initialValue = avg * size;
      const currentValue = cur * size;
      out.push({
        proxyWallet: w.address,
        asset: tokenId,
        conditionId: m.conditionId,
        size,
        avgPrice: avg,
        initialValue,
        currentValue,
        cashPnl: currentValue - initialValue,
        percentPnl: initialValue ? ((currentValue - initialValue) / initialValue) * 100 : 0,
        realizedPnl: 0,
        curPrice: cur,
        redeemable: m.status === "resolved",
        mergeable: false,
        title: m.seed.question,
        slug: m.slug,
        eventSlug: m.event.slug,
        outcome: m.outcomes[idx],
        outcomeIndex: idx,
        oppositeAsset: m.tokenIds[idx === 0 ? 1 : 0],
        endDate: m.seed.closeTime.slice(0, 10),
        negativeRisk: m.negRisk,
      });
    }
    return out;
  });
}
