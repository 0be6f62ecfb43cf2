/**
 * Data API positions (`GET /positions?user=<funder>`): what a wallet holds, valued at the current
 * midpoint. Positions are not on the CLOB. Wire format: VENUES.md §1.6 (end).
 *
 * Query parameters as the venue documents them (docs.polymarket.com/developers/misc-endpoints/
 * data-api-get-positions, the OpenAPI at developers/open-api/get-positions.json):
 * - `sizeThreshold` ≥ 0, default **1.0**: smaller positions are left out unless it is lowered;
 * - `limit` 0–500, default **100**; `offset` 0–10,000, default 0: one page per request;
 * - `sortBy` (default `TOKENS`) and `sortDirection` (default `DESC`): the page order;
 * - `market`: comma-separated condition ids.
 * Out-of-range or malformed values answer 400. A client that sends only `user` therefore sees at most
 * the 100 largest positions of at least one share, as it would at the venue.
 */
import type { FastifyInstance } from "fastify";
import type { PolymarketState } from "./state";
import { MICRO, PRICE_SCALE } from "./units";

export const DATA_POSITIONS_DEFAULT_LIMIT = 100;
export const DATA_POSITIONS_MAX_LIMIT = 500;
export const DATA_POSITIONS_MAX_OFFSET = 10_000;
export const DATA_POSITIONS_DEFAULT_SIZE_THRESHOLD = 1;

const SORT_FIELDS = {
  TOKENS: "size",
  CURRENT: "currentValue",
  INITIAL: "initialValue",
  CASHPNL: "cashPnl",
  PERCENTPNL: "percentPnl",
  TITLE: "title",
  RESOLVING: "endDate",
  PRICE: "curPrice",
  AVGPRICE: "avgPrice",
} as const;

type Query = Record<string, string | undefined>;

class BadQuery extends Error {}

function integer(q: Query, name: string, def: number, max: number): number {
  const raw = q[name];
  if (raw === undefined || raw === "") return def;
  if (!/^\d+$/.test(raw)) throw new BadQuery(`${name} must be an integer`);
  const n = Number(raw);
  if (n > max) throw new BadQuery(`${name} must be between 0 and ${max}`);
  return n;
}

function threshold(q: Query): number {
  const raw = q["sizeThreshold"];
  if (raw === undefined || raw === "") return DATA_POSITIONS_DEFAULT_SIZE_THRESHOLD;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new BadQuery("sizeThreshold must be a number >= 0");
  return n;
}

export async function dataRoutes(app: FastifyInstance, opts: { state: PolymarketState }): Promise<void> {
  const { state } = opts;
  app.get("/positions", async (req, reply) => {
    const q = req.query as Query;
    const user = q["user"];
    if (!user) return reply.code(400).send({ error: "user is required" });
    let limit: number;
    let offset: number;
    let minSize: number;
    let sortKey: (typeof SORT_FIELDS)[keyof typeof SORT_FIELDS];
    let direction: 1 | -1;
    try {
      limit = integer(q, "limit", DATA_POSITIONS_DEFAULT_LIMIT, DATA_POSITIONS_MAX_LIMIT);
      offset = integer(q, "offset", 0, DATA_POSITIONS_MAX_OFFSET);
      minSize = threshold(q);
      const sortBy = (q["sortBy"] ?? "TOKENS").toUpperCase();
      if (!(sortBy in SORT_FIELDS)) throw new BadQuery(`invalid sortBy: ${q["sortBy"]}`);
      sortKey = SORT_FIELDS[sortBy as keyof typeof SORT_FIELDS];
      const dir = (q["sortDirection"] ?? "DESC").toUpperCase();
      if (dir !== "ASC" && dir !== "DESC") throw new BadQuery(`invalid sortDirection: ${q["sortDirection"]}`);
      direction = dir === "ASC" ? 1 : -1;
    } catch (error) {
      if (error instanceof BadQuery) return reply.code(400).send({ error: error.message });
      throw error;
    }
    const markets = q["market"]
      ? new Set(
          q["market"]
            .split(",")
            .map((s) => s.trim().toLowerCase())
            .filter(Boolean),
        )
      : null;
    const w = state.wallets.get(user.toLowerCase());
    if (!w) return [];
    const out: Record<string, unknown>[] = [];
    for (const [tokenId, micro] of w.positions) {
      if (micro <= 0n) continue;
      const m = state.byToken.get(tokenId);
      if (!m) continue;
      if (markets && !markets.has(m.conditionId.toLowerCase())) continue;
      const size = Number(micro) / MICRO;
      if (size < minSize) continue;
      const idx = m.tokenIds.indexOf(tokenId);
      const yes = tokenId === m.yesTokenId;
      let cur: number;
      if (m.status === "resolved") cur = (m.resolution === "yes") === yes ? 1 : 0;
      else {
        const { bid, ask } = state.bestYes(m);
        const mid = bid !== null && ask !== null ? (bid + ask) / 2 : m.fair;
        cur = (yes ? mid : PRICE_SCALE - mid) / PRICE_SCALE;
      }
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
        totalBought: initialValue,
        realizedPnl: 0,
        percentRealizedPnl: 0,
        curPrice: cur,
        redeemable: m.status === "resolved",
        mergeable: false,
        title: m.seed.question,
        slug: m.slug,
        eventSlug: m.event.slug,
        outcome: m.outcomes[idx],
        outcomeIndex: idx,
        oppositeOutcome: m.outcomes[idx === 0 ? 1 : 0],
        oppositeAsset: m.tokenIds[idx === 0 ? 1 : 0],
        endDate: m.seed.closeTime.slice(0, 10),
        negativeRisk: m.negRisk,
      });
    }
    // A stable order (ties by token id), so offset pages neither repeat nor skip a position.
    out.sort((a, b) => {
      const x = a[sortKey] as number | string;
      const y = b[sortKey] as number | string;
      if (x !== y) return (x < y ? -1 : 1) * direction;
      return String(a["asset"]) < String(b["asset"]) ? -1 : 1;
    });
    return out.slice(offset, offset + limit);
  });
}
