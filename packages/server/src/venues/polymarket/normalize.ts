/**
 * Pure Polymarket normalizers: venue JSON in, crossbook model out, no I/O. They exist so every quirk
 * of the wire format (JSON-encoded string fields, best-price-last book arrays, number-or-string
 * decimals) is handled in one place and tested offline against fixtures written from VENUES.md §1.
 *
 * Rules worth knowing:
 * - YES is found by outcome LABEL ("Yes", case-insensitive), never by position. For two-outcome
 *   markets without Yes/No labels (sports moneylines: ["Lakers","Celtics"]), VENUES.md does not say
 *   which leg is YES; our rule is that YES is the FIRST-listed outcome and NO the second, with the
 *   venue labels kept in `outcomes.yes.label` / `outcomes.no.label` so nobody has to guess. Each such
 *   market is reported once per kind ("team_outcomes").
 * - Gamma's market-level `bestBid`/`bestAsk`/`lastTradePrice` carry no outcome label; we trust them
 *   only when YES is the first token (where every reading agrees) and otherwise leave them null until
 *   the book or feed fills them in. `outcomePrices` is index-aligned with `outcomes`, so the YES
 *   price always comes from there.
 * - A market that cannot be parsed throws `PolymarketParseError` naming its id; the caller logs and
 *   skips it. Unknown enum values and missing optional fields go through `report(kind, detail)`.
 */
import { type FeeSchedule, POLYMARKET_FREE, polymarketSchedule } from "@crossbook/fees";
import { isoFromMs } from "../../infra/clock";
import { MICROS, type Micros, parseMicros } from "../decimal";
import { VenueError } from "../errors";
import type {
  BookLevel,
  MarketStatus,
  OrderBook,
  OrderBookSide,
  Outcome,
  PricePoint,
  Resolution,
  Trade,
  VenueEvent,
  VenueMarket,
} from "../model";

/** Reports an oddity; the caller logs each `kind` once. */
export type Report = (kind: string, detail: string) => void;
export const ignoreReports: Report = () => {};

export const POLYMARKET_SITE = "https://polymarket.com";
/** Tick sizes VENUES.md §1.6 lists, in micros. */
export const KNOWN_TICKS: readonly Micros[] = [100_000, 10_000, 5_000, 2_500, 1_000, 100];
const DEFAULT_TICK: Micros = 10_000;
const DEFAULT_MIN_SIZE: Micros = 5 * MICROS;

/** A venue item we could not turn into our model; names the venue's id of the item. */
export class PolymarketParseError extends VenueError {
  constructor(
    readonly itemId: string,
    readonly reason: string,
  ) {
    super("polymarket", "bad_response", `polymarket: cannot parse ${itemId}: ${reason}`);
    this.name = "PolymarketParseError";
  }
}

export const pmMarketId = (conditionId: string): string => `polymarket:${conditionId.toLowerCase()}`;
export const pmEventId = (eventId: string): string => `polymarket:${eventId}`;

/** The two CLOB tokens of a market, mapped to our legs. */
export interface TokenPair {
  marketId: string;
  conditionId: string;
  yes: string;
  no: string;
}

// ---------------------------------------------------------------------------------------------
// Small readers
// ---------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/** A decimal that may arrive as a string or a number (VENUES.md §1.3 "Number formats"). */
export function micros(value: unknown): Micros | undefined {
  if (typeof value === "string") return fastMicros(value) ?? parseMicros(value);
  if (typeof value === "number") return parseMicros(value);
  return undefined;
}

/**
 * Hot-path parser for the plain decimals every book level and price change carries ("0.52",
 * "219.217767"): one pass over the characters, no regex. Anything else (signs, spaces, more than six
 * places, huge values) returns undefined and goes to the exact general parser.
 */
function fastMicros(text: string): Micros | undefined {
  const n = text.length;
  if (n === 0 || n > 15) return undefined;
  let whole = 0;
  let i = 0;
  for (; i < n; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    whole = whole * 10 + c;
  }
  if (i === 0) return undefined;
  if (i === n) return Number.isSafeInteger(whole * MICROS) ? whole * MICROS : undefined;
  if (text.charCodeAt(i) !== 46 || i === n - 1 || n - i - 1 > 6) return undefined;
  let fraction = 0;
  let scale = MICROS;
  for (i++; i < n; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return undefined;
    fraction = fraction * 10 + c;
    scale /= 10;
  }
  const value = whole * MICROS + fraction * scale;
  return Number.isSafeInteger(value) ? value : undefined;
}

function iso(value: unknown, report: Report, field: string): string | null {
  const text = str(value);
  if (text === undefined) return null;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) {
    report("bad_date", `${field}=${text}`);
    return null;
  }
  return isoFromMs(ms);
}

/** Unix seconds or milliseconds (number or numeric string) -> ISO. */
export function epochToIso(value: unknown, unit: "s" | "ms"): string | undefined {
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || (typeof value === "string" && value.trim() === "")) return undefined;
  return isoFromMs(unit === "s" ? n * 1000 : n);
}

/**
 * Gamma's `outcomes`, `outcomePrices` and `clobTokenIds` are JSON-encoded strings (VENUES.md §1.2).
 * A real array is accepted too but reported, since it means the format changed.
 */
export function jsonStringArray(value: unknown, field: string, report: Report): string[] | undefined {
  let parsed: unknown = value;
  if (typeof value === "string") {
    if (value.trim() === "") return undefined;
    try {
      parsed = JSON.parse(value);
    } catch {
      return undefined;
    }
  } else if (Array.isArray(value)) {
    report("gamma_array_not_string", field);
  } else {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const out: string[] = [];
  for (const item of parsed) {
    if (typeof item === "string") out.push(item);
    else if (typeof item === "number") out.push(String(item));
    else return undefined;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Gamma markets and events — VENUES.md §1.2
// ---------------------------------------------------------------------------------------------

export interface GammaContext {
  /** ISO time stamped on `updatedAt` when the venue sends none. */
  now: string;
  report: Report;
  /** Our event id when the market came inside an event. */
  eventId?: string;
}

/**
 * Gamma Market object -> VenueMarket. VENUES.md §1.2 "Market object".
 * Throws PolymarketParseError when the market cannot be represented (no condition id, not binary,
 * no CLOB tokens, ambiguous outcome labels).
 */
export function normalizeGammaMarket(raw: unknown, ctx: GammaContext): VenueMarket {
  const { report } = ctx;
  if (!isObject(raw)) throw new PolymarketParseError("market <not an object>", "expected an object");
  const gammaId = str(raw.id) ?? (typeof raw.id === "number" ? String(raw.id) : undefined);
  const conditionId = str(raw.conditionId);
  const name = `market ${conditionId ?? `gamma id ${gammaId ?? "?"}`}`;
  const fail = (reason: string): never => {
    throw new PolymarketParseError(name, reason);
  };
  if (!conditionId || !/^0x[0-9a-fA-F]{64}$/.test(conditionId))
    fail("conditionId missing or not 32-byte hex");
  const question = str(raw.question) ?? fail("question missing");

  const outcomes = jsonStringArray(raw.outcomes, "outcomes", report) ?? fail("outcomes missing or malformed");
  const tokens =
    jsonStringArray(raw.clobTokenIds, "clobTokenIds", report) ?? fail("clobTokenIds missing or malformed");
  if (outcomes.length !== 2) fail(`expected 2 outcomes, got ${outcomes.length}`);
  if (tokens.length !== 2) fail(`expected 2 clobTokenIds, got ${tokens.length}`);
  for (const t of tokens) if (!/^\d+$/.test(t)) fail(`token id ${t} is not a decimal uint256`);
  if (tokens[0] === tokens[1]) fail("both outcomes share one token id");
  const yesIndex = yesIndexOf(outcomes, name, report) ?? fail(`cannot tell YES from outcomes ${outcomes}`);
  const noIndex = yesIndex === 0 ? 1 : 0;

  const prices = jsonStringArray(raw.outcomePrices, "outcomePrices", report);
  if (raw.outcomePrices !== undefined && prices === undefined) report("bad_outcome_prices", name);
  const yesPrice = prices?.[yesIndex] !== undefined ? micros(prices[yesIndex]) : undefined;
  const noPrice = prices?.[noIndex] !== undefined ? micros(prices[noIndex]) : undefined;

  const { status, resolution } = gammaStatus(raw, yesPrice, noPrice, name, report);

  let tickSize = micros(raw.orderPriceMinTickSize);
  if (tickSize === undefined) {
    report("missing_tick_size", name);
    tickSize = DEFAULT_TICK;
  } else if (!KNOWN_TICKS.includes(tickSize)) {
    report("unknown_tick_size", `${name}: ${String(raw.orderPriceMinTickSize)}`);
  }
  if (tickSize <= 0) fail(`tick size ${String(raw.orderPriceMinTickSize)}`);
  let minSize = micros(raw.orderMinSize);
  if (minSize === undefined) {
    report("missing_min_size", name);
    minSize = DEFAULT_MIN_SIZE;
  }

  // Market-level quote fields are unlabelled: trust them only when YES is the first token.
  const firstIsYes = yesIndex === 0;
  if (!firstIsYes) report("yes_not_first", name);
  const open = status === "open";
  const bestBid = open && firstIsYes ? price01(raw.bestBid) : null;
  const bestAsk = open && firstIsYes ? price01(raw.bestAsk) : null;
  const lastPrice = yesPrice ?? (firstIsYes ? price01(raw.lastTradePrice) : null);
  // `oneDayPriceChange` is unlabelled too, and a change of the displayed price (unverified which of
  // the outcome price and the last trade it follows; we take the outcome price): the price 24 h ago is
  // the YES price minus it. A result outside 0..1 is reported and dropped.
  let price24hAgo: Micros | null = null;
  const dayChange = firstIsYes ? micros(raw.oneDayPriceChange) : undefined;
  if (dayChange !== undefined && lastPrice !== null) {
    const then = lastPrice - dayChange;
    if (then >= 0 && then <= MICROS) price24hAgo = then;
    else report("bad_one_day_price_change", `${name}: ${String(raw.oneDayPriceChange)}`);
  }

  let eventId = ctx.eventId ?? null;
  if (eventId === null && Array.isArray(raw.events) && isObject(raw.events[0])) {
    const parent = raw.events[0].id;
    if (typeof parent === "string" || typeof parent === "number") eventId = pmEventId(String(parent));
  }
  const slug = str(raw.slug);

  return {
    id: pmMarketId(conditionId!),
    venue: "polymarket",
    venueMarketId: conditionId!.toLowerCase(),
    eventId,
    title: question,
    question,
    rules: str(raw.description) ?? null,
    settlementSource: str(raw.resolutionSource) ?? null,
    outcomes: {
      yes: { label: outcomes[yesIndex]!, venueTokenId: tokens[yesIndex]! },
      no: { label: outcomes[noIndex]!, venueTokenId: tokens[noIndex]! },
    },
    status,
    resolution,
    openTime: iso(raw.startDate, report, "startDate"),
    closeTime: iso(raw.endDate, report, "endDate"),
    tickSize,
    minSize,
    volume: nonNegative(raw.volumeNum ?? raw.volume),
    volume24h: nonNegative(raw.volume24hr),
    liquidity: nonNegative(raw.liquidityNum ?? raw.liquidity),
    url: slug ? `${POLYMARKET_SITE}/market/${slug}` : null,
    lastPrice,
    bestBid,
    bestAsk,
    price24hAgo,
    negRisk: raw.negRisk === true,
    fees: gammaFeeSchedule(raw, report, name),
    updatedAt: iso(raw.updatedAt, report, "updatedAt") ?? ctx.now,
  };
}

/**
 * A Gamma market's fee schedule: `feeSchedule {rate, exponent, takerOnly}` with `takerBaseFee` as the
 * cap (bps, 1000 on fee-enabled markets: a cap, not the rate charged). `feesEnabled: false`, or no
 * schedule and a base fee of 0, is a fee-free market; fees on without a schedule is unknown (null).
 * docs.polymarket.com/trading/fees; VENUES-AUDIT #1.
 */
export function gammaFeeSchedule(raw: Json, report: Report, name: string): FeeSchedule | null {
  if (raw.feesEnabled === false) return POLYMARKET_FREE;
  const cap = decimal(raw.takerBaseFee);
  const schedule = isObject(raw.feeSchedule) ? raw.feeSchedule : undefined;
  const rate = schedule ? decimal(schedule.rate) : undefined;
  const exponent = schedule ? decimal(schedule.exponent) : undefined;
  if (rate !== undefined && exponent !== undefined && rate >= 0 && exponent >= 0) {
    return polymarketSchedule({
      rate,
      exponent,
      takerOnly: schedule!.takerOnly !== false,
      capBps: cap ?? null,
    });
  }
  if (schedule) report("bad_fee_schedule", `${name}: ${JSON.stringify(schedule)}`);
  if (cap === 0 && (decimal(raw.makerBaseFee) ?? 0) === 0) return POLYMARKET_FREE;
  return null;
}

/**
 * The fee schedule in the CLOB's compact market info (`GET /clob-markets/{condition_id}`): `fd {r, e,
 * to}` and the cap `tbf`, as clob-client-v2 reads them (`getClobMarketInfo`); no `fd` is a fee-free
 * market there. Null when the body is not market info.
 */
export function clobFeeSchedule(raw: unknown): FeeSchedule | null {
  if (!isObject(raw) || !Array.isArray(raw.t)) return null;
  const fd = isObject(raw.fd) ? raw.fd : {};
  const rate = decimal(fd.r) ?? 0;
  const exponent = decimal(fd.e) ?? 0;
  if (rate < 0 || exponent < 0) return null;
  return polymarketSchedule({ rate, exponent, takerOnly: fd.to !== false, capBps: decimal(raw.tbf) ?? null });
}

/** A plain number, or a decimal string ("0.05"): fee parameters are rates, not money. */
function decimal(value: unknown): number | undefined {
  const n =
    typeof value === "number"
      ? value
      : typeof value === "string" && value.trim() !== ""
        ? Number(value)
        : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
}

function price01(value: unknown): Micros | null {
  const p = micros(value);
  return p !== undefined && p >= 0 && p <= MICROS ? p : null;
}

function nonNegative(value: unknown): Micros {
  const v = micros(value);
  return v !== undefined && v > 0 ? v : 0;
}

/** Index of the YES leg, by label; see the header for team-name markets. */
function yesIndexOf(outcomes: string[], name: string, report: Report): 0 | 1 | undefined {
  const labels = outcomes.map((o) => o.trim().toLowerCase());
  const yes = labels.indexOf("yes");
  const no = labels.indexOf("no");
  if (yes !== -1 && no !== -1) return yes as 0 | 1;
  if (yes !== -1 || no !== -1) return undefined; // "Yes" beside something that is not "No"
  if (labels[0] === labels[1]) return undefined;
  report("team_outcomes", `${name}: ${outcomes.join(" / ")} (YES = first-listed)`);
  return 0;
}

const UMA_STATUSES = new Set(["proposed", "disputed", "resolved", "challenged", ""]);

/**
 * `closed` decides open vs not; a closed market is `resolved` when its outcome prices settled at
 * exactly 1/0 (or 0.5/0.5 with UMA "resolved": a 50-50 void), else just `closed`. An inactive or
 * archived market that is not closed cannot trade, so it is `closed` too.
 */
function gammaStatus(
  raw: Json,
  yesPrice: Micros | undefined,
  noPrice: Micros | undefined,
  name: string,
  report: Report,
): { status: MarketStatus; resolution: Resolution | null } {
  if (typeof raw.closed !== "boolean") report("missing_closed", name);
  const uma = raw.umaResolutionStatus;
  if (typeof uma === "string" && !UMA_STATUSES.has(uma.toLowerCase()))
    report("unknown_uma_resolution_status", uma);
  if (raw.closed === true) {
    if (yesPrice === MICROS && noPrice === 0) return { status: "resolved", resolution: "yes" };
    if (yesPrice === 0 && noPrice === MICROS) return { status: "resolved", resolution: "no" };
    if (uma === "resolved" && yesPrice === MICROS / 2 && noPrice === MICROS / 2)
      return { status: "resolved", resolution: "void" };
    return { status: "closed", resolution: null };
  }
  if (raw.active === false || raw.archived === true) return { status: "closed", resolution: null };
  return { status: "open", resolution: null };
}

export interface NormalizedEvent {
  event: VenueEvent;
  markets: VenueMarket[];
  /** Markets inside the event that failed to parse. */
  skipped: PolymarketParseError[];
}

/**
 * Gamma Event object (with its `markets[]`) -> VenueEvent plus its parsed markets. VENUES.md §1.2
 * "Event object". Malformed markets inside are skipped and returned in `skipped`.
 */
export function normalizeGammaEvent(raw: unknown, ctx: GammaContext): NormalizedEvent {
  if (!isObject(raw)) throw new PolymarketParseError("event <not an object>", "expected an object");
  const venueEventId = str(raw.id) ?? (typeof raw.id === "number" ? String(raw.id) : undefined);
  if (!venueEventId) throw new PolymarketParseError(`event ${str(raw.slug) ?? "?"}`, "id missing");
  const name = `event ${venueEventId}`;
  const title = str(raw.title) ?? str(raw.ticker);
  if (!title) throw new PolymarketParseError(name, "title missing");
  const id = pmEventId(venueEventId);
  const markets: VenueMarket[] = [];
  const skipped: PolymarketParseError[] = [];
  if (!Array.isArray(raw.markets)) ctx.report("event_without_markets", name);
  for (const m of Array.isArray(raw.markets) ? raw.markets : []) {
    try {
      markets.push(normalizeGammaMarket(m, { ...ctx, eventId: id }));
    } catch (error) {
      if (error instanceof PolymarketParseError) skipped.push(error);
      else throw error;
    }
  }
  const tag = Array.isArray(raw.tags) && isObject(raw.tags[0]) ? str(raw.tags[0].label) : undefined;
  const slug = str(raw.slug);
  return {
    event: {
      id,
      venue: "polymarket",
      venueEventId,
      title,
      category: tag ?? str(raw.category) ?? null,
      marketIds: markets.map((m) => m.id),
      closeTime: iso(raw.endDate, ctx.report, "endDate"),
      url: slug ? `${POLYMARKET_SITE}/event/${slug}` : null,
      mutuallyExclusive: raw.negRisk === true || raw.enableNegRisk === true,
    },
    markets,
    skipped,
  };
}

// ---------------------------------------------------------------------------------------------
// CLOB books — VENUES.md §1.3 "OrderBookSummary" and §1.4 `book`
// ---------------------------------------------------------------------------------------------

/**
 * Wire levels -> ours, best first. The wire lists BOTH sides best-LAST (bids ascending, asks
 * descending), so we reverse; if a venue ever sends another order we sort and report it rather than
 * serve a wrong best price.
 */
export function normalizeLevels(
  raw: unknown,
  side: "bids" | "asks",
  where: string,
  report: Report,
): BookLevel[] {
  if (raw === undefined || raw === null) {
    report("book_side_missing", `${where} ${side}`);
    return [];
  }
  if (!Array.isArray(raw)) throw new PolymarketParseError(where, `${side} is not an array`);
  const levels: BookLevel[] = [];
  for (let i = raw.length - 1; i >= 0; i--) {
    const level = raw[i];
    const price = isObject(level) ? micros(level.price) : undefined;
    const size = isObject(level) ? micros(level.size) : undefined;
    if (price === undefined || size === undefined || price < 0 || price > MICROS || size < 0)
      throw new PolymarketParseError(where, `bad ${side} level ${JSON.stringify(level)}`);
    if (size > 0) levels.push({ price, size });
  }
  const better = side === "bids" ? (a: number, b: number) => a > b : (a: number, b: number) => a < b;
  for (let i = 1; i < levels.length; i++) {
    if (!better(levels[i - 1]!.price, levels[i]!.price)) {
      report("book_order_unexpected", `${where} ${side}`);
      levels.sort((a, b) => (side === "bids" ? b.price - a.price : a.price - b.price));
      break;
    }
  }
  return levels;
}

export interface TokenBook {
  assetId: string;
  side: OrderBookSide;
  /** ms since epoch. */
  timestampMs: number | null;
  hash: string | null;
  tickSize: Micros | null;
}

/** One token's OrderBookSummary (REST `/book` or WS `book`). */
export function normalizeTokenBook(raw: unknown, report: Report): TokenBook {
  if (!isObject(raw)) throw new PolymarketParseError("book <not an object>", "expected an object");
  const assetId = str(raw.asset_id);
  if (!assetId) throw new PolymarketParseError(`book of market ${String(raw.market)}`, "asset_id missing");
  const where = `book of token ${assetId}`;
  const ts =
    typeof raw.timestamp === "string" || typeof raw.timestamp === "number" ? Number(raw.timestamp) : NaN;
  if (!Number.isFinite(ts)) report("book_timestamp_missing", where);
  return {
    assetId,
    side: {
      bids: normalizeLevels(raw.bids, "bids", where, report),
      asks: normalizeLevels(raw.asks, "asks", where, report),
    },
    timestampMs: Number.isFinite(ts) ? ts : null,
    hash: str(raw.hash) ?? null,
    tickSize: micros(raw.tick_size) ?? null,
  };
}

/**
 * YES and NO token books -> our OrderBook. Each leg comes from its OWN token's book; we check the
 * asset ids so a venue (or a bug) answering the YES book twice can never show as an identical NO.
 */
export function normalizeOrderBook(
  pair: TokenPair,
  yesRaw: unknown,
  noRaw: unknown,
  report: Report,
  options: { depth?: number; nowMs: number },
): OrderBook {
  const { depth } = options;
  const yes = normalizeTokenBook(yesRaw, report);
  const no = normalizeTokenBook(noRaw, report);
  if (yes.assetId !== pair.yes)
    throw new PolymarketParseError(`book of ${pair.marketId}`, `YES book is for token ${yes.assetId}`);
  if (no.assetId !== pair.no)
    throw new PolymarketParseError(`book of ${pair.marketId}`, `NO book is for token ${no.assetId}`);
  const ts = Math.max(yes.timestampMs ?? 0, no.timestampMs ?? 0);
  const cut = (s: OrderBookSide): OrderBookSide =>
    depth === undefined ? s : { bids: s.bids.slice(0, depth), asks: s.asks.slice(0, depth) };
  return {
    marketId: pair.marketId,
    yes: cut(yes.side),
    no: cut(no.side),
    timestamp: isoFromMs(ts > 0 ? ts : options.nowMs),
    sequence: null,
  };
}

// ---------------------------------------------------------------------------------------------
// Prices history — VENUES.md §1.3 `GET /prices-history`
// ---------------------------------------------------------------------------------------------

/** `{"history":[{"t":<unix s>,"p":<number>}]}` -> PricePoint[] oldest first; bad points are reported. */
export function normalizePriceHistory(raw: unknown, tokenId: string, report: Report): PricePoint[] {
  if (!isObject(raw) || !Array.isArray(raw.history))
    throw new PolymarketParseError(`prices-history of token ${tokenId}`, "history array missing");
  const points: Array<{ t: number; price: Micros }> = [];
  for (const item of raw.history) {
    const t = isObject(item) && typeof item.t === "number" ? item.t : undefined;
    const p = isObject(item) ? price01(item.p) : null;
    if (t === undefined || p === null) {
      report("bad_history_point", `${tokenId}: ${JSON.stringify(item)}`);
      continue;
    }
    points.push({ t, price: p });
  }
  points.sort((a, b) => a.t - b.t);
  return points.map(({ t, price }) => ({ timestamp: new Date(t * 1000).toISOString(), price }));
}

// ---------------------------------------------------------------------------------------------
// WebSocket market channel — VENUES.md §1.4
// ---------------------------------------------------------------------------------------------

/** A frame is one object or an array of objects; `PONG` (and other non-JSON text) yields []. */
export function parseWsFrame(text: string, report: Report): Json[] {
  const first = text.charCodeAt(0);
  // Fast path: a frame that starts like JSON goes straight to the parser.
  if (first !== 123 /* { */ && first !== 91 /* [ */) {
    const trimmed = text.trim();
    if (trimmed === "PONG" || trimmed === "") return [];
    if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) {
      report("ws_non_json", trimmed.slice(0, 60));
      return [];
    }
    text = trimmed;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    report("ws_non_json", text.slice(0, 60));
    return [];
  }
  if (!Array.isArray(parsed)) {
    if (isObject(parsed)) return [parsed];
    report("ws_non_object", String(parsed).slice(0, 60));
    return [];
  }
  const out: Json[] = [];
  for (const m of parsed) {
    if (isObject(m)) out.push(m);
    else report("ws_non_object", JSON.stringify(m).slice(0, 60));
  }
  return out;
}

export interface PriceChange {
  assetId: string;
  side: "bids" | "asks";
  price: Micros;
  /** New aggregate size at the level; 0 removes it. */
  size: Micros;
}

/** `price_change` (array schema since 2025-09-15) -> level updates. */
export function normalizePriceChanges(msg: Json, report: Report): PriceChange[] {
  if (!Array.isArray(msg.price_changes)) {
    report("price_change_without_array", Array.isArray(msg.changes) ? "legacy changes[] schema" : "no array");
    return [];
  }
  const out: PriceChange[] = [];
  for (const c of msg.price_changes) {
    const assetId = isObject(c) ? str(c.asset_id) : undefined;
    const price = isObject(c) ? price01(c.price) : null;
    const size = isObject(c) ? micros(c.size) : undefined;
    const side = isObject(c) ? c.side : undefined;
    if (!assetId || price === null || size === undefined || size < 0 || (side !== "BUY" && side !== "SELL")) {
      report(side === "BUY" || side === "SELL" ? "bad_price_change" : "unknown_side", JSON.stringify(c));
      continue;
    }
    out.push({ assetId, side: side === "BUY" ? "bids" : "asks", price, size });
  }
  return out;
}

/** `last_trade_price` -> Trade of the outcome whose token traded. */
export function normalizeLastTrade(
  msg: Json,
  marketId: string,
  outcome: Outcome,
  report: Report,
  nowIso: string,
): Trade | undefined {
  const price = price01(msg.price);
  const size = micros(msg.size);
  if (price === null || size === undefined) {
    report("bad_last_trade_price", JSON.stringify(msg).slice(0, 120));
    return undefined;
  }
  let takerSide: Trade["takerSide"] = null;
  if (msg.side === "BUY") takerSide = "buy";
  else if (msg.side === "SELL") takerSide = "sell";
  else report("unknown_side", String(msg.side));
  return {
    marketId,
    outcome,
    price,
    size,
    takerSide,
    timestamp: epochToIso(msg.timestamp, "ms") ?? nowIso,
    venueTradeId: str(msg.transaction_hash) ?? null,
  };
}
