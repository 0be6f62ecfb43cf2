/**
 * Gamma API (discovery): `/events`, `/markets`, single lookups by id and slug, and keyset listing.
 * Gamma's quirks are the point of this module: `outcomes`, `outcomePrices` and `clobTokenIds` are
 * JSON-encoded strings, `volume`/`liquidity` are strings on markets but numbers on events, list
 * endpoints return bare arrays, and `/markets` applies an implicit `closed=false`.
 * The offset lists are deprecated as on the venue (VENUES-AUDIT #8: `deprecation: true`, `sunset`,
 * `warning: 299 - "use /markets/keyset"` headers; forecastingresearch/forecastbench#194) and answer
 * 422 "offset too large, use /markets/keyset" past their offset cap. Keyset pages hold at most 100
 * markets or 500 events; `condition_ids`/`clob_token_ids` take at most 100 ids (nautilus gamma docs).
 * Wire format: VENUES.md §1.2.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { Category } from "../world/seed";
import { yesAt } from "./history";
import type { PmEvent, PmMarket, PolymarketState } from "./state";
import { fmtPrice, PRICE_SCALE, priceNum } from "./units";

const TAGS: Record<Category, { id: string; label: string; slug: string }> = {
  politics: { id: "2", label: "Politics", slug: "politics" },
  economics: { id: "107", label: "Economy", slug: "economy" },
  crypto: { id: "21", label: "Crypto", slug: "crypto" },
  sports: { id: "1", label: "Sports", slug: "sports" },
  weather: { id: "84", label: "Weather", slug: "weather" },
  entertainment: { id: "596", label: "Culture", slug: "pop-culture" },
};

export const GAMMA_MAX_LIMIT = 100;
/** Default offset cap of the legacy lists: third parties report 10,000 (one 422 was seen near 23,500). */
export const GAMMA_MAX_OFFSET = 10_000;
export const MARKETS_KEYSET_MAX_LIMIT = 100;
export const EVENTS_KEYSET_MAX_LIMIT = 500;
/** Most ids one `condition_ids` / `clob_token_ids` filter takes. */
export const MAX_IDS_PER_FILTER = 100;
/** When the legacy lists were sunset (their `sunset` header). */
const SUNSET = "Fri, 01 May 2026 00:00:00 GMT";

const dateOnly = (iso: string): string => iso.slice(0, 10);
const round = (n: number, d = 6): number => Math.round(n * 10 ** d) / 10 ** d;

/** Current YES display price: the midpoint, as Gamma's `outcomePrices` show it. */
function yesDisplay(state: PolymarketState, m: PmMarket): number {
  if (m.status === "resolved") return m.resolution === "yes" ? PRICE_SCALE : 0;
  const { bid, ask } = state.bestYes(m);
  if (bid !== null && ask !== null) return Math.round((bid + ask) / 2);
  return m.lastTrade?.price ?? m.fair;
}

/**
 * YES price now (the displayed `outcomePrices` one) minus the price 24 h ago on the same
 * deterministic history `/prices-history` serves, so `price − oneDayPriceChange` is that point.
 */
function oneDayChange(state: PolymarketState, m: PmMarket, yesNow: number): number {
  const anchorS = Math.floor(state.startedAt / 1000);
  const anchor = Math.round(m.seed.yesPrice * PRICE_SCALE);
  const t = Math.floor(state.clock() / 1000) - 86_400;
  const then = yesAt(state.seed, m, t, anchorS, anchor);
  return Math.round((yesNow / PRICE_SCALE - then) * 10_000) / 10_000;
}

/** Gamma Market object — VENUES.md §1.2 "Market object". */
export function gammaMarket(state: PolymarketState, m: PmMarket, withEvent = true): Record<string, unknown> {
  const s = m.seed;
  const yes = yesDisplay(state, m);
  const prices = m.yesIndex === 0 ? [yes, PRICE_SCALE - yes] : [PRICE_SCALE - yes, yes];
  const open = m.status === "open";
  const { bid, ask } = state.bestYes(m);
  const volume = round(m.baseVolume + m.tradedCash);
  const vol24 = round(m.baseVolume24h + m.tradedCash);
  const liquidity = round(m.baseLiquidity);
  const market: Record<string, unknown> = {
    id: m.id,
    question: s.question,
    conditionId: m.conditionId,
    slug: m.slug,
    resolutionSource: s.settlementSource,
    endDate: s.closeTime,
    endDateIso: dateOnly(s.closeTime),
    startDate: m.startDate,
    startDateIso: dateOnly(m.startDate),
    createdAt: m.startDate.replace("Z", ".000Z"),
    updatedAt: new Date(state.clock()).toISOString(),
    category: TAGS[s.category].label,
    description: s.rules,
    outcomes: JSON.stringify(m.outcomes),
    outcomePrices: JSON.stringify(prices.map(fmtPrice)),
    clobTokenIds: JSON.stringify(m.tokenIds),
    questionID: m.questionId,
    volume: String(volume),
    volumeNum: volume,
    volume24hr: vol24,
    volume1wk: round(vol24 * 5.5),
    volume1mo: round(vol24 * 21),
    volume1yr: volume,
    volumeClob: volume,
    volume24hrClob: vol24,
    liquidity: String(liquidity),
    liquidityNum: liquidity,
    liquidityClob: liquidity,
    active: true,
    closed: !open,
    archived: false,
    new: false,
    featured: false,
    restricted: true,
    marketMakerAddress: "",
    groupItemTitle: m.event.markets.length > 1 ? s.question : "",
    enableOrderBook: true,
    acceptingOrders: open,
    negRisk: m.negRisk,
    // The tick the market was listed with: the CLOB's dynamic changes (near 0.04/0.96) are not
    // mirrored here (README "Choices"), so a client has to read the CLOB's.
    orderPriceMinTickSize: m.seed.tickSize,
    orderMinSize: m.minSize / 1_000_000,
    bestBid: open && bid !== null ? priceNum(bid) : 0,
    bestAsk: open && ask !== null ? priceNum(ask) : 1,
    spread: open && bid !== null && ask !== null ? priceNum(ask - bid) : 1,
    lastTradePrice: priceNum(m.lastTrade?.price ?? yes),
    oneDayPriceChange: open ? oneDayChange(state, m, yes) : 0,
    umaResolutionStatus: m.status === "resolved" ? "resolved" : undefined,
    // Fee fields as 2026 captures show them: the schedule is the rate; the base fees (1000 on every
    // fee-enabled market) are a cap, not a rate. `feeType`'s values are not known: always null here.
    feesEnabled: m.fees !== null,
    feeType: null,
    feeSchedule: m.fees
      ? {
          exponent: m.fees.exponent,
          rate: m.fees.rate,
          rebateRate: m.fees.rebateRate,
          takerOnly: m.fees.takerOnly,
        }
      : { exponent: 0, rate: 0, rebateRate: 0, takerOnly: true },
    makerBaseFee: m.fees?.baseFee ?? 0,
    takerBaseFee: m.fees?.baseFee ?? 0,
  };
  if (m.negRisk) market.negRiskMarketID = negRiskMarketId(m.event);
  if (market.umaResolutionStatus === undefined) delete market.umaResolutionStatus;
  if (withEvent) market.events = [gammaEvent(state, m.event, false)];
  return market;
}

function negRiskMarketId(e: PmEvent): string {
  const first = e.markets[0];
  return first ? `${first.conditionId.slice(0, 62)}00` : "";
}

/** Gamma Event object — VENUES.md §1.2 "Event object" (liquidity/volume are numbers here). */
export function gammaEvent(state: PolymarketState, e: PmEvent, withMarkets = true): Record<string, unknown> {
  const ms = e.markets;
  const first = ms[0]!;
  const volume = round(ms.reduce((a, m) => a + m.baseVolume + m.tradedCash, 0));
  const liquidity = round(ms.reduce((a, m) => a + m.baseLiquidity, 0));
  const vol24 = round(ms.reduce((a, m) => a + m.baseVolume24h + m.tradedCash, 0));
  const endDate = ms
    .map((m) => m.seed.closeTime)
    .sort()
    .at(-1)!;
  const startDate = ms.map((m) => m.startDate).sort()[0]!;
  const negRisk = ms.some((m) => m.negRisk);
  const tag = TAGS[first.seed.category];
  const event: Record<string, unknown> = {
    id: e.id,
    ticker: e.slug,
    slug: e.slug,
    title: e.title,
    description: first.seed.rules,
    resolutionSource: first.seed.settlementSource,
    startDate,
    creationDate: startDate,
    endDate,
    active: true,
    closed: ms.every((m) => m.status !== "open"),
    archived: false,
    new: false,
    featured: false,
    restricted: true,
    liquidity,
    volume,
    openInterest: round(liquidity * 3.1),
    volume24hr: vol24,
    volume1wk: round(vol24 * 5.5),
    volume1mo: round(vol24 * 21),
    volume1yr: volume,
    competitive: 0.9,
    enableOrderBook: true,
    liquidityClob: liquidity,
    negRisk,
    commentCount: (Number(e.id) * 7) % 300,
    tags: [{ id: tag.id, label: tag.label, slug: tag.slug }],
    series: [],
  };
  if (negRisk) event.negRiskMarketID = negRiskMarketId(e);
  if (withMarkets) event.markets = ms.map((m) => gammaMarket(state, m, false));
  return event;
}

type Query = Record<string, string | string[] | undefined>;

const many = (q: Query, name: string): string[] => {
  const v = q[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).flatMap((x) => x.split(",")).filter((x) => x !== "");
};
const one = (q: Query, name: string): string | undefined => {
  const v = q[name];
  return Array.isArray(v) ? v[0] : v;
};
const bool = (q: Query, name: string): boolean | undefined => {
  const v = one(q, name);
  return v === undefined ? undefined : v === "true" || v === "1";
};
const num = (q: Query, name: string): number | undefined => {
  const v = one(q, name);
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
};

class BadQuery extends Error {}

function paging(q: Query, maxOffset: number, keyset: string): { limit: number; offset: number } {
  const limit = num(q, "limit") ?? GAMMA_MAX_LIMIT;
  const offset = num(q, "offset") ?? 0;
  if (limit < 0 || offset < 0 || !Number.isInteger(limit) || !Number.isInteger(offset))
    throw new BadQuery("invalid limit/offset");
  if (offset > maxOffset) throw new BadQuery(`offset too large, use ${keyset}`);
  return { limit: Math.min(limit, GAMMA_MAX_LIMIT), offset };
}

/** The deprecation headers the legacy lists carry (forecastingresearch/forecastbench#194). */
function deprecated(reply: FastifyReply, keyset: string): void {
  void reply
    .header("deprecation", "true")
    .header("sunset", SUNSET)
    .header("warning", `299 - "use ${keyset}"`);
}

function inRange(value: number, q: Query, min: string, max: string): boolean {
  const lo = num(q, min);
  const hi = num(q, max);
  return (lo === undefined || value >= lo) && (hi === undefined || value <= hi);
}

function inDateRange(iso: string, q: Query, min: string, max: string): boolean {
  const t = Date.parse(iso);
  const lo = one(q, min);
  const hi = one(q, max);
  return (!lo || t >= Date.parse(lo)) && (!hi || t <= Date.parse(hi));
}

/** Sort by Gamma's `order` (comma-separated field names) and `ascending`. */
function sortBy<T extends Record<string, unknown>>(rows: T[], q: Query): T[] {
  const fields = many(q, "order");
  if (fields.length === 0) return rows;
  const asc = bool(q, "ascending") ?? false;
  const val = (r: T, f: string): number | string => {
    const v = r[f];
    if (typeof v === "number") return v;
    if (typeof v === "string" && v !== "" && Number.isFinite(Number(v))) return Number(v);
    return typeof v === "string" ? v : 0;
  };
  return [...rows].sort((a, b) => {
    for (const f of fields) {
      const x = val(a, f);
      const y = val(b, f);
      if (x < y) return asc ? -1 : 1;
      if (x > y) return asc ? 1 : -1;
    }
    return 0;
  });
}

function filterMarkets(state: PolymarketState, q: Query, implicitOpen: boolean): PmMarket[] {
  const ids = many(q, "id");
  const slugs = many(q, "slug");
  const tokens = many(q, "clob_token_ids");
  const conds = many(q, "condition_ids").map((c) => c.toLowerCase());
  if (tokens.length > MAX_IDS_PER_FILTER || conds.length > MAX_IDS_PER_FILTER)
    throw new BadQuery(`at most ${MAX_IDS_PER_FILTER} ids per filter`);
  const qids = many(q, "question_ids").map((c) => c.toLowerCase());
  const tagIds = many(q, "tag_id");
  let closed = bool(q, "closed");
  if (closed === undefined && implicitOpen) closed = false;
  const active = bool(q, "active");
  const archived = bool(q, "archived");
  return state.markets.filter((m) => {
    const isClosed = m.status !== "open";
    if (closed !== undefined && isClosed !== closed) return false;
    if (active === false) return false;
    if (archived === true) return false;
    if (ids.length && !ids.includes(m.id)) return false;
    if (slugs.length && !slugs.includes(m.slug)) return false;
    if (tokens.length && !m.tokenIds.some((t) => tokens.includes(t))) return false;
    if (conds.length && !conds.includes(m.conditionId)) return false;
    if (qids.length && !qids.includes(m.questionId)) return false;
    if (tagIds.length && !tagIds.includes(TAGS[m.seed.category].id)) return false;
    const vol = m.baseVolume + m.tradedCash;
    if (!inRange(vol, q, "volume_num_min", "volume_num_max")) return false;
    if (!inRange(m.baseLiquidity, q, "liquidity_num_min", "liquidity_num_max")) return false;
    if (!inDateRange(m.startDate, q, "start_date_min", "start_date_max")) return false;
    if (!inDateRange(m.seed.closeTime, q, "end_date_min", "end_date_max")) return false;
    return true;
  });
}

function filterEvents(state: PolymarketState, q: Query): Record<string, unknown>[] {
  const ids = many(q, "id");
  const slugs = many(q, "slug");
  const tagIds = many(q, "tag_id");
  const tagSlugs = many(q, "tag_slug");
  const excludeTags = many(q, "exclude_tag_id");
  const closed = bool(q, "closed");
  const active = bool(q, "active");
  const archived = bool(q, "archived");
  const featured = bool(q, "featured");
  const rows = state.events
    .map((e) => gammaEvent(state, e))
    .filter((e) => {
      const tag = (e.tags as { id: string; slug: string }[])[0]!;
      if (closed !== undefined && e.closed !== closed) return false;
      if (active === false || archived === true || featured === true) return false;
      if (ids.length && !ids.includes(e.id as string)) return false;
      if (slugs.length && !slugs.includes(e.slug as string)) return false;
      if (tagIds.length && !tagIds.includes(tag.id)) return false;
      if (tagSlugs.length && !tagSlugs.includes(tag.slug)) return false;
      if (excludeTags.includes(tag.id)) return false;
      if (!inRange(e.liquidity as number, q, "liquidity_min", "liquidity_max")) return false;
      if (!inRange(e.volume as number, q, "volume_min", "volume_max")) return false;
      if (!inDateRange(e.startDate as string, q, "start_date_min", "start_date_max")) return false;
      if (!inDateRange(e.endDate as string, q, "end_date_min", "end_date_max")) return false;
      return true;
    });
  return sortBy(rows, q);
}

/** Keyset cursor: base64url of the position after the last row returned. */
const encodeCursor = (pos: number): string => Buffer.from(`pos:${pos}`).toString("base64url");
function decodeCursor(c: string | undefined): number {
  if (!c) return 0;
  const m = /^pos:(\d+)$/.exec(Buffer.from(c, "base64url").toString("utf8"));
  if (!m) throw new BadQuery("invalid after_cursor");
  return Number(m[1]);
}

function keyset<T>(rows: T[], q: Query, name: string, maxLimit: number): Record<string, unknown> {
  if (one(q, "offset") !== undefined) throw new BadQuery("offset is not supported; use after_cursor");
  const limit = Math.min(num(q, "limit") ?? 100, maxLimit);
  if (limit <= 0) throw new BadQuery("invalid limit");
  const start = decodeCursor(one(q, "after_cursor"));
  const page = rows.slice(start, start + limit);
  const out: Record<string, unknown> = { [name]: page };
  if (start + limit < rows.length) out.next_cursor = encodeCursor(start + limit);
  return out;
}

function bad(reply: FastifyReply, err: unknown) {
  if (err instanceof BadQuery) return reply.code(422).send({ error: err.message });
  throw err;
}

export async function gammaRoutes(
  app: FastifyInstance,
  opts: { state: PolymarketState; maxOffset?: number },
): Promise<void> {
  const { state } = opts;
  const maxOffset = opts.maxOffset ?? GAMMA_MAX_OFFSET;

  app.get("/events", async (req, reply) => {
    try {
      const q = req.query as Query;
      deprecated(reply, "/events/keyset");
      const { limit, offset } = paging(q, maxOffset, "/events/keyset");
      return filterEvents(state, q).slice(offset, offset + limit);
    } catch (err) {
      return bad(reply, err);
    }
  });

  app.get("/events/keyset", async (req, reply) => {
    try {
      const q = req.query as Query;
      return keyset(filterEvents(state, q), q, "events", EVENTS_KEYSET_MAX_LIMIT);
    } catch (err) {
      return bad(reply, err);
    }
  });

  app.get("/events/slug/:slug", async (req, reply) => {
    const e = state.events.find((x) => x.slug === (req.params as { slug: string }).slug);
    return e ? gammaEvent(state, e) : reply.code(404).send({ type: "not found error", error: "not found" });
  });

  app.get("/events/:id", async (req, reply) => {
    const e = state.events.find((x) => x.id === (req.params as { id: string }).id);
    return e ? gammaEvent(state, e) : reply.code(404).send({ type: "not found error", error: "not found" });
  });

  app.get("/markets", async (req, reply) => {
    try {
      const q = req.query as Query;
      deprecated(reply, "/markets/keyset");
      const { limit, offset } = paging(q, maxOffset, "/markets/keyset");
      const rows = sortBy(
        filterMarkets(state, q, true).map((m) => gammaMarket(state, m)),
        q,
      );
      return rows.slice(offset, offset + limit);
    } catch (err) {
      return bad(reply, err);
    }
  });

  app.get("/markets/keyset", async (req, reply) => {
    try {
      const q = req.query as Query;
      const rows = sortBy(
        filterMarkets(state, q, true).map((m) => gammaMarket(state, m)),
        q,
      );
      return keyset(rows, q, "markets", MARKETS_KEYSET_MAX_LIMIT);
    } catch (err) {
      return bad(reply, err);
    }
  });

  app.get("/markets/slug/:slug", async (req, reply) => {
    const m = state.markets.find((x) => x.slug === (req.params as { slug: string }).slug);
    return m ? gammaMarket(state, m) : reply.code(404).send({ type: "not found error", error: "not found" });
  });

  app.get("/markets/:id", async (req, reply) => {
    const m = state.markets.find((x) => x.id === (req.params as { id: string }).id);
    return m ? gammaMarket(state, m) : reply.code(404).send({ type: "not found error", error: "not found" });
  });
}
