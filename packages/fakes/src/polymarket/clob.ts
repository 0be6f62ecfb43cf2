/**
 * CLOB public market data: books, prices, midpoints, spreads, last trades, tick size, neg-risk,
 * history, CLOB market listings, time and version. Every decimal leaves as a string (except the few
 * the docs show as numbers), and both book sides put the best price LAST.
 * Wire format: VENUES.md §1.3.
 */
import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import { CLOSED_MIN_FIDELITY, history, INTERVAL_SECONDS, MAX_WINDOW_SECONDS } from "./history";
import { flip, type PmMarket, type PolymarketState, type Side } from "./state";
import { fmtPrice, fmtScaled, fmtSize, PRICE_SCALE, priceNum } from "./units";

export const NO_BOOK = "No orderbook exists for the requested token id";
export const CURSOR_START = "MA==";
export const CURSOR_END = "LTE=";

export interface ClobContext {
  state: PolymarketState;
  /** Exchange version served by `GET /version` and used as the EIP-712 domain version. */
  version: () => number;
}

/** Book for a token if it has one (open market), else null (the venue answers 404). */
function bookMarket(state: PolymarketState, tokenId: string | undefined): PmMarket | null {
  if (!tokenId) return null;
  const m = state.byToken.get(tokenId);
  return m && m.status === "open" ? m : null;
}

/** Last trade seen from one token's side: price and taker side in that token's terms. */
export function lastTradeFor(m: PmMarket, tokenId: string): { price: number; side: Side } | null {
  if (!m.lastTrade) return null;
  const yes = tokenId === m.yesTokenId;
  return {
    price: yes ? m.lastTrade.price : PRICE_SCALE - m.lastTrade.price,
    side: yes ? m.lastTrade.side : flip(m.lastTrade.side),
  };
}

/** SHA-1 hex of the summary serialised with `hash: ""` (the client-side convention, VENUES.md §1.3). */
export function bookHash(summary: Record<string, unknown>): string {
  return createHash("sha1")
    .update(JSON.stringify({ ...summary, hash: "" }))
    .digest("hex");
}

/** OrderBookSummary — VENUES.md §1.3: bids ascending and asks descending, best price last. */
export function bookSummary(state: PolymarketState, m: PmMarket, tokenId: string): Record<string, unknown> {
  const { bids, asks } = state.tokenLevels(m, tokenId);
  const level = (l: { price: number; size: number }) => ({ price: fmtPrice(l.price), size: fmtSize(l.size) });
  const last = lastTradeFor(m, tokenId);
  const summary: Record<string, unknown> = {
    market: m.conditionId,
    asset_id: tokenId,
    timestamp: String(state.clock()),
    hash: "",
    bids: [...bids].reverse().map(level),
    asks: [...asks].reverse().map(level),
    min_order_size: fmtSize(m.minSize),
    tick_size: fmtPrice(m.tick),
    neg_risk: m.negRisk,
    last_trade_price: last ? fmtPrice(last.price) : "",
  };
  summary.hash = bookHash(summary);
  return summary;
}

function best(
  state: PolymarketState,
  m: PmMarket,
  tokenId: string,
): { bid: number | null; ask: number | null } {
  const { bids, asks } = state.tokenLevels(m, tokenId);
  return { bid: bids[0]?.price ?? null, ask: asks[0]?.price ?? null };
}

/** `/price` semantics: BUY ⇒ best bid, SELL ⇒ best ask (VENUES.md §1.3). */
function sidePrice(state: PolymarketState, m: PmMarket, tokenId: string, side: string): number | null {
  const b = best(state, m, tokenId);
  return side === "BUY" ? b.bid : b.ask;
}

/** Exact midpoint string (it can need one decimal more than the price grid: 1e-5 units). */
function midString(state: PolymarketState, m: PmMarket, tokenId: string): string | null {
  const b = best(state, m, tokenId);
  if (b.bid === null || b.ask === null) return null;
  return fmtScaled((b.bid + b.ask) * 5, PRICE_SCALE * 10);
}

/** CLOB market — VENUES.md §1.3 `GET /markets/{condition_id}`. */
function clobMarket(state: PolymarketState, m: PmMarket): Record<string, unknown> {
  const open = m.status === "open";
  return {
    enable_order_book: true,
    active: true,
    closed: !open,
    archived: false,
    accepting_orders: open,
    accepting_order_timestamp: m.startDate,
    minimum_order_size: m.minSize / 1_000_000,
    minimum_tick_size: priceNum(m.tick),
    condition_id: m.conditionId,
    question_id: m.questionId,
    question: m.seed.question,
    description: m.seed.rules,
    market_slug: m.slug,
    end_date_iso: m.seed.closeTime,
    game_start_time: null,
    seconds_delay: 0,
    fpmm: "",
    maker_base_fee: m.fees?.baseFee ?? 0,
    taker_base_fee: m.fees?.baseFee ?? 0,
    notifications_enabled: true,
    neg_risk: m.negRisk,
    neg_risk_market_id: "",
    neg_risk_request_id: "",
    icon: "",
    image: "",
    rewards: { rates: null, min_size: 0, max_spread: 0 },
    is_50_50_outcome: false,
    tokens: tokensOf(state, m),
    tags: [m.seed.category],
  };
}

/** `tokens[{token_id, outcome, price, winner}]` in the seed's outcome order. */
function tokensOf(state: PolymarketState, m: PmMarket): Record<string, unknown>[] {
  return m.tokenIds.map((t, i) => {
    const isYes = t === m.yesTokenId;
    let price: number;
    if (m.status === "resolved") price = (m.resolution === "yes") === isYes ? 1 : 0;
    else {
      const b = best(state, m, t);
      price =
        b.bid !== null && b.ask !== null
          ? (b.bid + b.ask) / 2 / PRICE_SCALE
          : priceNum(isYes ? m.fair : PRICE_SCALE - m.fair);
    }
    return {
      token_id: t,
      outcome: m.outcomes[i],
      price,
      winner: m.status === "resolved" && (m.resolution === "yes") === isYes,
    };
  });
}

/** Simplified market — VENUES.md §1.3 `/simplified-markets`. */
function simplified(state: PolymarketState, m: PmMarket): Record<string, unknown> {
  const open = m.status === "open";
  return {
    condition_id: m.conditionId,
    rewards: { rates: null, min_size: 0, max_spread: 0 },
    tokens: tokensOf(state, m),
    active: true,
    closed: !open,
    archived: false,
    accepting_orders: open,
  };
}

const PAGE = 100;

/** Cursor pagination used across the CLOB: base64 of the offset, "LTE=" (= "-1") at the end. */
export function cursorPage<T>(rows: T[], cursor: string | undefined, pageSize = PAGE) {
  const start = cursor ? Number(Buffer.from(cursor, "base64").toString("utf8")) : 0;
  if (!Number.isInteger(start) || start < 0) return null;
  const data = rows.slice(start, start + pageSize);
  const next =
    start + pageSize < rows.length ? Buffer.from(String(start + pageSize)).toString("base64") : CURSOR_END;
  return { data, next_cursor: next, limit: pageSize, count: data.length };
}

type Q = Record<string, string | undefined>;

export async function clobPublicRoutes(app: FastifyInstance, ctx: ClobContext): Promise<void> {
  const { state } = ctx;
  const noBook = (reply: FastifyReply) => reply.code(404).send({ error: NO_BOOK });

  app.get("/book", async (req, reply) => {
    const t = (req.query as Q).token_id;
    const m = bookMarket(state, t);
    return m ? bookSummary(state, m, t!) : noBook(reply);
  });

  app.post("/books", async (req, reply) => {
    const body = req.body as { token_id?: string }[];
    if (!Array.isArray(body)) return reply.code(400).send({ error: "Invalid payload" });
    const out: Record<string, unknown>[] = [];
    for (const b of body) {
      const m = bookMarket(state, b.token_id);
      if (m) out.push(bookSummary(state, m, b.token_id!));
    }
    return out;
  });

  app.get("/price", async (req, reply) => {
    const { token_id, side } = req.query as Q;
    if (side !== "BUY" && side !== "SELL") return reply.code(400).send({ error: "Invalid side" });
    const m = bookMarket(state, token_id);
    const p = m ? sidePrice(state, m, token_id!, side) : null;
    return p === null ? noBook(reply) : { price: fmtPrice(p) };
  });

  const pricesFor = (reqs: { token_id?: string; side?: string }[]) => {
    const out: Record<string, Record<string, string>> = {};
    for (const r of reqs) {
      const m = bookMarket(state, r.token_id);
      if (!m) continue;
      for (const side of r.side ? [r.side] : ["BUY", "SELL"]) {
        const p = sidePrice(state, m, r.token_id!, side);
        if (p === null) continue;
        out[r.token_id!] ??= {};
        out[r.token_id!]![side] = fmtPrice(p);
      }
    }
    return out;
  };

  app.get("/prices", async (req) => {
    const { token_ids = "", sides } = req.query as Q;
    const ids = token_ids.split(",").filter(Boolean);
    const s = sides?.split(",");
    return pricesFor(ids.map((token_id, i) => ({ token_id, side: s?.[i] })));
  });

  app.post("/prices", async (req, reply) => {
    const body = req.body as { token_id?: string; side?: string }[];
    if (!Array.isArray(body)) return reply.code(400).send({ error: "Invalid payload" });
    return pricesFor(body);
  });

  app.get("/midpoint", async (req, reply) => {
    const t = (req.query as Q).token_id;
    const m = bookMarket(state, t);
    const mid = m ? midString(state, m, t!) : null;
    return mid === null ? noBook(reply) : { mid };
  });

  app.post("/midpoints", async (req, reply) => {
    const body = req.body as { token_id?: string }[];
    if (!Array.isArray(body)) return reply.code(400).send({ error: "Invalid payload" });
    const out: Record<string, string> = {};
    for (const b of body) {
      const m = bookMarket(state, b.token_id);
      const mid = m ? midString(state, m, b.token_id!) : null;
      if (mid !== null) out[b.token_id!] = mid;
    }
    return out;
  });

  const spreadOf = (t: string | undefined): string | null => {
    const m = bookMarket(state, t);
    if (!m) return null;
    const b = best(state, m, t!);
    return b.bid === null || b.ask === null ? null : fmtPrice(b.ask - b.bid);
  };

  app.get("/spread", async (req, reply) => {
    const s = spreadOf((req.query as Q).token_id);
    return s === null ? noBook(reply) : { spread: s };
  });

  app.post("/spreads", async (req, reply) => {
    const body = req.body as { token_id?: string }[];
    if (!Array.isArray(body)) return reply.code(400).send({ error: "Invalid payload" });
    const out: Record<string, string> = {};
    for (const b of body) {
      const s = spreadOf(b.token_id);
      if (s !== null) out[b.token_id!] = s;
    }
    return out;
  });

  const lastOf = (t: string | undefined) => {
    const m = t ? state.byToken.get(t) : undefined;
    if (!m) return null;
    const last = lastTradeFor(m, t!);
    if (last) return { price: fmtPrice(last.price), side: last.side };
    const fair = t === m.yesTokenId ? m.fair : PRICE_SCALE - m.fair;
    return { price: fmtPrice(fair), side: "" };
  };

  app.get("/last-trade-price", async (req, reply) => {
    const l = lastOf((req.query as Q).token_id);
    return l ?? noBook(reply);
  });

  app.post("/last-trades-prices", async (req, reply) => {
    const body = req.body as { token_id?: string }[];
    if (!Array.isArray(body)) return reply.code(400).send({ error: "Invalid payload" });
    return body.flatMap((b) => {
      const l = lastOf(b.token_id);
      return l ? [{ token_id: b.token_id, ...l }] : [];
    });
  });

  app.get("/tick-size", async (req, reply) => {
    const t = (req.query as Q).token_id;
    const m = t ? state.byToken.get(t) : undefined;
    return m ? { minimum_tick_size: priceNum(m.tick) } : noBook(reply);
  });

  app.get("/neg-risk", async (req, reply) => {
    const t = (req.query as Q).token_id;
    const m = t ? state.byToken.get(t) : undefined;
    return m ? { neg_risk: m.negRisk } : noBook(reply);
  });

  app.get("/fee-rate", async (req, reply) => {
    const t = (req.query as Q).token_id;
    const m = t ? state.byToken.get(t) : undefined;
    // The base fee: what clob-client-v2 signs into V1 orders as the most they agree to pay.
    return m ? { base_fee: m.fees?.baseFee ?? 0 } : noBook(reply);
  });

  const historyFor = (
    token: string,
    q: { interval?: string; startTs?: number; endTs?: number; fidelity?: number },
  ): { t: number; p: number }[] | string => {
    const m = state.byToken.get(token);
    if (!m) return [];
    const nowS = Math.floor(state.clock() / 1000);
    let start: number;
    let end: number;
    if (q.startTs !== undefined || q.endTs !== undefined) {
      start = q.startTs ?? 0;
      end = q.endTs ?? nowS;
      if (!Number.isFinite(start) || !Number.isFinite(end) || end < start) return "invalid startTs/endTs";
      // The window cap applies to an explicit pair only (a startTs alone was seen to pass).
      if (q.startTs !== undefined && q.endTs !== undefined && end - start > MAX_WINDOW_SECONDS)
        return "invalid filters: 'startTs' and 'endTs' interval is too long";
    } else {
      const span = INTERVAL_SECONDS[q.interval ?? "1d"];
      if (span === undefined) return `invalid interval: ${q.interval}`;
      end = nowS;
      start = nowS - span;
    }
    const fidelity = q.fidelity ?? 1;
    // Closed and resolved markets keep only their coarse history: an empty answer, not an error.
    if (m.status !== "open" && fidelity < CLOSED_MIN_FIDELITY) return [];
    const anchorS = Math.floor(state.startedAt / 1000);
    const anchor = Math.round(m.seed.yesPrice * PRICE_SCALE);
    // Nothing after now.
    return history(
      state.seed,
      m,
      token === m.yesTokenId,
      start,
      Math.min(end, nowS),
      fidelity,
      anchorS,
      anchor,
    );
  };

  app.get("/prices-history", async (req, reply) => {
    const q = req.query as Q;
    if (!q.market) return reply.code(400).send({ error: "market is required" });
    const h = historyFor(q.market, {
      interval: q.interval,
      startTs: q.startTs === undefined ? undefined : Number(q.startTs),
      endTs: q.endTs === undefined ? undefined : Number(q.endTs),
      fidelity: q.fidelity === undefined ? undefined : Number(q.fidelity),
    });
    return typeof h === "string" ? reply.code(400).send({ error: h }) : { history: h };
  });

  app.post("/batch-prices-history", async (req, reply) => {
    const b = req.body as {
      markets?: string[];
      start_ts?: number;
      end_ts?: number;
      interval?: string;
      fidelity?: number;
    };
    if (!b || !Array.isArray(b.markets)) return reply.code(400).send({ error: "markets is required" });
    if (b.markets.length > 20) return reply.code(400).send({ error: "at most 20 markets" });
    const out: Record<string, { t: number; p: number }[]> = {};
    for (const t of b.markets) {
      const h = historyFor(t, {
        interval: b.interval,
        startTs: b.start_ts,
        endTs: b.end_ts,
        fidelity: b.fidelity,
      });
      if (typeof h === "string") return reply.code(400).send({ error: h });
      out[t] = h;
    }
    return { history: out };
  });

  app.get("/time", async () => Math.floor(state.clock() / 1000));
  app.get("/version", async () => ({ version: ctx.version() }));
  app.get("/ok", async (_req, reply) => reply.type("text/plain").send("OK"));

  const listing = (rows: Record<string, unknown>[], cursor: string | undefined, reply: FastifyReply) => {
    if (cursor === CURSOR_END) return { data: [], next_cursor: CURSOR_END, limit: PAGE, count: 0 };
    const page = cursorPage(rows, cursor);
    return page ?? reply.code(400).send({ error: "invalid next_cursor" });
  };

  app.get("/markets", async (req, reply) =>
    listing(
      state.markets.map((m) => clobMarket(state, m)),
      (req.query as Q).next_cursor,
      reply,
    ),
  );
  app.get("/simplified-markets", async (req, reply) =>
    listing(
      state.markets.map((m) => simplified(state, m)),
      (req.query as Q).next_cursor,
      reply,
    ),
  );
  app.get("/sampling-markets", async (req, reply) =>
    listing(
      state.markets.filter((m) => m.status === "open").map((m) => clobMarket(state, m)),
      (req.query as Q).next_cursor,
      reply,
    ),
  );

  app.get("/markets/:conditionId", async (req, reply) => {
    const m = state.byCondition.get((req.params as { conditionId: string }).conditionId.toLowerCase());
    return m ? clobMarket(state, m) : reply.code(404).send({ error: "market not found" });
  });

  // Compact market info — VENUES.md §1.3 `/clob-markets/{condition_id}`.
  app.get("/clob-markets/:conditionId", async (req, reply) => {
    const m = state.byCondition.get((req.params as { conditionId: string }).conditionId.toLowerCase());
    if (!m) return reply.code(404).send({ error: "market not found" });
    return {
      c: m.conditionId,
      t: m.tokenIds.map((t, i) => ({ t, o: m.outcomes[i] })),
      mts: priceNum(m.tick),
      nr: m.negRisk,
      // Fee details as clob-client-v2 reads them (getClobMarketInfo: rate `r`, exponent `e`, taker-only `to`).
      fd: m.fees ? { r: m.fees.rate, e: m.fees.exponent, to: m.fees.takerOnly } : { r: 0, e: 0, to: true },
      mbf: m.fees?.baseFee ?? 0,
      tbf: m.fees?.baseFee ?? 0,
      mos: m.minSize / 1_000_000,
      ao: m.status === "open",
    };
  });
}
