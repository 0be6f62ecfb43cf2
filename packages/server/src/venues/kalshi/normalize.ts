/**
 * Kalshi market data, JSON -> crossbook model, as pure functions (no I/O, no clock: "now" is passed
 * in): markets, events, series fees, order books, candlesticks, the historical cutoff and public
 * trades, with the readers that `messages.ts` (WebSocket) and `account.ts` (portfolio) share.
 *
 * Why this module exists on its own: Kalshi finished its fixed-point migration (VENUES.md §0.2), so
 * every price is a `*_dollars` string and every count an `*_fp` string; the legacy integer-cents
 * fields are gone and are never read here. Keeping the parsing pure lets every payload shape be
 * tested offline from fixtures written from the docs.
 *
 * Bad input: a market whose required fields do not parse throws `KalshiParseError` naming its
 * ticker (the caller logs and skips it); an unknown enum value or a missing optional field goes to
 * `report(kind, detail)` so the caller can log each kind once.
 */
import { type FeeSchedule, KALSHI_FEE_TYPES, kalshiSchedule } from "@crossbook/fees";
import { isoFromMs } from "../../infra/clock";
import { complement, MICROS, type Micros, parseMicros } from "../decimal";
import { VenueError } from "../errors";
import type {
  BookLevel,
  Candle,
  CandleInterval,
  MarketStatus,
  OrderBook,
  Outcome,
  Resolution,
  Trade,
  VenueEvent,
  VenueMarket,
} from "../model";
import { marketId } from "../venue";

export type Report = (kind: string, detail: Record<string, unknown>) => void;

export interface NormalizeContext {
  report: Report;
  /** ISO time used where the venue gives none (e.g. a market without `updated_time`). */
  now: string;
}

/** Event facts a market needs but does not carry itself (settlement sources, series). */
export interface EventInfo {
  eventTicker: string;
  seriesTicker: string | null;
  title: string;
  settlementSource: string | null;
  /** `fee_type_override` / `fee_multiplier_override`: take precedence over the series' fee. */
  feeTypeOverride: string | null;
  feeMultiplierOverride: number | null;
  /** The series' fee type and multiplier, when the adapter knows the series. */
  seriesFees?: SeriesFees | undefined;
}

/** A series' `fee_type` and `fee_multiplier` (SDK 3.30 `Series`). */
export interface SeriesFees {
  feeType: string;
  multiplier: number;
}

export type Json = Record<string, unknown>;

/** A Kalshi object that could not be turned into our model; names the ticker it concerns. */
export class KalshiParseError extends VenueError {
  constructor(
    readonly ticker: string,
    reason: string,
  ) {
    super("kalshi", "bad_response", `kalshi ${ticker}: ${reason}`);
    this.name = "KalshiParseError";
  }
}

export const KALSHI_WEB_URL = "https://kalshi.com";

// ---------------------------------------------------------------------------------------------
// Small readers: venue JSON is `unknown` until proven otherwise.

export function asObject(value: unknown): Json | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

export function text(o: Json, key: string): string | undefined {
  const v = o[key];
  return typeof v === "string" && v.length > 0 ? v : undefined;
}

const POW10 = [1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];

/**
 * `parseMicros` with a fast path for the plain "0.4200" / "10.00" strings the feed sends at rate;
 * anything unusual (sign, spaces, > 6 places, huge values) goes to `parseMicros`, so both accept
 * exactly the same inputs.
 */
export function decimalMicros(input: string | number): Micros | undefined {
  if (typeof input !== "string") return parseMicros(input);
  // Negative deltas ("-54.00") are half of all book updates: same fast path, negated.
  if (input.charCodeAt(0) === 45) {
    const next = input.charCodeAt(1);
    const magnitude = next >= 48 && next <= 57 ? decimalMicros(input.slice(1)) : undefined;
    return magnitude === undefined ? parseMicros(input) : -magnitude;
  }
  const n = input.length;
  if (n === 0 || n > 16) return parseMicros(input);
  let whole = 0;
  let wholeDigits = 0;
  let frac = 0;
  let fracDigits = 0;
  let dot = false;
  for (let i = 0; i < n; i++) {
    const c = input.charCodeAt(i);
    if (c === 46 && !dot) {
      dot = true;
      continue;
    }
    if (c < 48 || c > 57) return parseMicros(input);
    if (dot) {
      if (fracDigits === 6) return parseMicros(input);
      frac = frac * 10 + (c - 48);
      fracDigits++;
    } else {
      whole = whole * 10 + (c - 48);
      wholeDigits++;
    }
  }
  if (wholeDigits === 0 || (dot && fracDigits === 0) || wholeDigits > 9) return parseMicros(input);
  return whole * 1_000_000 + frac * POW10[fracDigits]!;
}

/** An optional fixed-point field: absent -> undefined, present but malformed -> parse error. */
export function optMicros(o: Json, key: string, ticker: string): Micros | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string" && typeof v !== "number") {
    throw new KalshiParseError(ticker, `${key} is not a decimal: ${JSON.stringify(v)}`);
  }
  const parsed = decimalMicros(v);
  if (parsed === undefined)
    throw new KalshiParseError(ticker, `${key} is not a decimal: ${JSON.stringify(v)}`);
  return parsed;
}

/** A fixed-point field we expect on every object; reported (once per kind) when absent. */
function expectedMicros(o: Json, key: string, ticker: string, ctx: NormalizeContext, fallback: Micros) {
  const value = optMicros(o, key, ticker);
  if (value === undefined) {
    ctx.report(`missing_field:${key}`, { ticker });
    return fallback;
  }
  return value;
}

export function isoTime(o: Json, key: string): string | null {
  const v = o[key];
  if (typeof v === "string" && v.length > 0) {
    const ms = Date.parse(v);
    return Number.isNaN(ms) ? null : new Date(ms).toISOString();
  }
  if (typeof v === "number" && Number.isFinite(v)) return secondsOrMsToIso(v);
  return null;
}

/** Kalshi mixes unix seconds (`ts`) and milliseconds (`ts_ms`); anything past year 33658 is ms. */
export function secondsOrMsToIso(value: number): string {
  return new Date(value > 1e12 ? value : value * 1000).toISOString();
}

/** The message's own time (`ts_ms`, then `ts` as seconds or ISO); `fallback` only when it has none. */
export function messageTime(o: Json, fallback: () => string): string {
  const ms = o["ts_ms"];
  if (typeof ms === "number" && Number.isFinite(ms)) return isoFromMs(ms);
  return isoTime(o, "ts") ?? fallback();
}

export function tickerFromMarketId(id: string): string {
  return id.startsWith("kalshi:") ? id.slice("kalshi:".length) : id;
}

// ---------------------------------------------------------------------------------------------
// Markets and events — VENUES.md §2.2 (Market object, EventData).

/**
 * Multivariate combo ("MVE") markets are excluded everywhere (VENUES.md §2.2 gotcha): we request
 * `mve_filter=exclude` and also drop any that slip through, recognised by their collection ticker,
 * their selected legs, or the `KXMVE` ticker prefix.
 */
export function isMveMarket(raw: unknown): boolean {
  const o = asObject(raw);
  if (!o) return false;
  if (text(o, "mve_collection_ticker")) return true;
  const legs = o["mve_selected_legs"];
  if (Array.isArray(legs) && legs.length > 0) return true;
  const ticker = text(o, "ticker") ?? "";
  return ticker.startsWith("KXMVE");
}

const STATUS: Record<string, MarketStatus> = {
  active: "open",
  open: "open", // the filter vocabulary, seen on some objects
  initialized: "closed", // not yet open for trading
  unopened: "closed",
  inactive: "closed", // paused
  paused: "closed",
  closed: "closed",
  disputed: "closed", // outcome contested: not final, not tradable
  determined: "resolved",
  amended: "resolved",
  finalized: "resolved",
  settled: "resolved",
};

/**
 * Market `status` + `result` -> our status and resolution (VENUES.md §2.2: status ∈ initialized,
 * inactive, active, closed, determined, disputed, amended, finalized; result ∈ yes, no, scalar, "").
 * A resolved-looking status without a result is kept `closed` until the result appears; an unknown
 * status is reported and treated as `closed` (never trade what we do not understand).
 */
export function mapStatus(
  status: string | undefined,
  result: string | undefined,
  ticker: string,
  report: Report,
): { status: MarketStatus; resolution: Resolution | null } {
  let mapped = status === undefined ? undefined : STATUS[status];
  if (mapped === undefined) {
    report("unknown_market_status", { ticker, status: status ?? null });
    mapped = "closed";
  }
  const resolution = mapResult(result, ticker, report);
  if (mapped === "resolved") {
    if (resolution === null) {
      report("resolved_without_result", { ticker, status });
      return { status: "closed", resolution: null };
    }
    return { status: "resolved", resolution };
  }
  return { status: mapped, resolution: null };
}

function mapResult(result: string | undefined, ticker: string, report: Report): Resolution | null {
  if (result === undefined || result === "") return null;
  if (result === "yes" || result === "no") return result;
  if (result === "scalar") {
    // A scalar settlement pays a fraction to both sides; our model has no partial resolution.
    report("scalar_result", { ticker });
    return "void";
  }
  if (result === "void" || result === "all_no" || result === "all_yes") {
    report("unusual_result", { ticker, result });
    return result === "void" ? "void" : result === "all_yes" ? "yes" : "no";
  }
  report("unknown_market_result", { ticker, result });
  return null;
}

const TICK_BY_STRUCTURE: Record<string, Micros> = {
  linear_cent: 10_000,
  tapered_deci_cent: 1_000, // 0.001 near the ends, 0.01 in the middle: the finest tick is what orders may use
  deci_cent: 1_000,
};

/** Smallest valid price increment: `price_ranges` steps when given, else `price_level_structure`. */
function tickSize(o: Json, ticker: string, ctx: NormalizeContext): Micros {
  const ranges = o["price_ranges"];
  if (Array.isArray(ranges) && ranges.length > 0) {
    let smallest: Micros | undefined;
    for (const range of ranges) {
      const r = asObject(range);
      const step = r ? optMicros(r, "step", ticker) : undefined;
      if (step !== undefined && step > 0 && (smallest === undefined || step < smallest)) smallest = step;
    }
    if (smallest !== undefined) return smallest;
  }
  const structure = text(o, "price_level_structure");
  const tick = structure === undefined ? undefined : TICK_BY_STRUCTURE[structure];
  if (tick === undefined) {
    ctx.report(structure ? "unknown_price_level_structure" : "missing_field:price_level_structure", {
      ticker,
      structure: structure ?? null,
    });
    return 10_000;
  }
  return tick;
}

/** The smallest count Kalshi's `*_fp` fields can carry: 0.01 contract. */
const FRACTIONAL_MIN_SIZE: Micros = 10_000;

/** Count fields of a market that show what has traded or rests on it. */
const COUNT_FIELDS = ["volume_fp", "volume_24h_fp", "open_interest_fp", "yes_bid_size_fp", "yes_ask_size_fp"];

/**
 * Whether a market evidently takes fractional counts. Kalshi removed `fractional_trading_enabled`
 * on 2026-07-09 (VENUES-AUDIT #14) and no field says it any more; fractional trading is enabled per
 * market (docs.kalshi.com/getting_started/fixed_point_contracts). A count field with hundredths
 * (volume, open interest, top-of-book size) proves the market trades fractions; without such proof
 * orders are kept to whole contracts (unverified: which markets accept fractions).
 */
function tradesFractions(o: Json): boolean {
  for (const key of COUNT_FIELDS) {
    const raw = o[key];
    // Read leniently: a size we cannot read says nothing (the required ones fail elsewhere).
    const v = typeof raw === "string" ? decimalMicros(raw) : undefined;
    if (v !== undefined && v % MICROS !== 0) return true;
  }
  return false;
}

/** Settlement sources of an event as one line: "Name (url); Name2". */
export function settlementSourceText(rawSources: unknown): string | null {
  if (!Array.isArray(rawSources)) return null;
  const parts: string[] = [];
  for (const s of rawSources) {
    const o = asObject(s);
    if (!o) continue;
    const name = text(o, "name");
    const url = text(o, "url");
    if (name && url) parts.push(`${name} (${url})`);
    else if (name ?? url) parts.push((name ?? url)!);
  }
  return parts.length > 0 ? parts.join("; ") : null;
}

/** Kalshi's web page for an event. The path form is not in VENUES.md (unverified); event pages resolve by ticker. */
export function kalshiUrl(eventTicker: string | null, ticker: string): string {
  return `${KALSHI_WEB_URL}/markets/${(eventTicker ?? ticker).toLowerCase()}`;
}

/**
 * VENUES.md §2.2 "Market object" -> VenueMarket. Reads only fixed-point fields.
 * Bid "0.0000", ask "1.0000" and last "0.0000" are Kalshi's "nothing there" values -> null.
 */
export function normalizeMarket(raw: unknown, ctx: NormalizeContext, event?: EventInfo): VenueMarket {
  const o = asObject(raw);
  if (!o) throw new KalshiParseError("<unknown>", "market is not an object");
  const ticker = text(o, "ticker");
  if (!ticker) throw new KalshiParseError("<unknown>", "market has no ticker");
  const title = text(o, "title");
  if (!title) throw new KalshiParseError(ticker, "market has no title");
  const eventTicker = text(o, "event_ticker") ?? null;
  if (!eventTicker) ctx.report("missing_field:event_ticker", { ticker });
  const status = text(o, "status");
  if (status === undefined) ctx.report("missing_field:status", { ticker });
  const { status: ourStatus, resolution } = mapStatus(status, text(o, "result"), ticker, ctx.report);

  const bid = optMicros(o, "yes_bid_dollars", ticker);
  const ask = optMicros(o, "yes_ask_dollars", ticker);
  const last = optMicros(o, "last_price_dollars", ticker);
  for (const [key, v] of [
    ["yes_bid_dollars", bid],
    ["yes_ask_dollars", ask],
    ["last_price_dollars", last],
  ] as const) {
    if (v !== undefined && (v < 0 || v > MICROS)) throw new KalshiParseError(ticker, `${key} out of 0..1`);
  }

  const rules = [text(o, "rules_primary"), text(o, "rules_secondary")].filter(Boolean).join("\n\n");
  const yesSub = text(o, "yes_sub_title");
  const noSub = text(o, "no_sub_title");

  return {
    id: marketId("kalshi", ticker),
    venue: "kalshi",
    venueMarketId: ticker,
    eventId: eventTicker ? marketId("kalshi", eventTicker) : null,
    title,
    // Sibling markets of one event often share a title; the YES subtitle names the strike.
    question: yesSub && !title.includes(yesSub) ? `${title} (${yesSub})` : title,
    rules: rules.length > 0 ? rules : null,
    settlementSource: event?.settlementSource ?? null,
    outcomes: {
      yes: { label: yesSub ?? "Yes", venueTokenId: "yes" },
      no: { label: noSub ?? "No", venueTokenId: "no" },
    },
    status: ourStatus,
    resolution,
    openTime: isoTime(o, "open_time"),
    closeTime: isoTime(o, "close_time"),
    tickSize: tickSize(o, ticker, ctx),
    minSize: tradesFractions(o) ? FRACTIONAL_MIN_SIZE : MICROS,
    volume: expectedMicros(o, "volume_fp", ticker, ctx, 0),
    volume24h: expectedMicros(o, "volume_24h_fp", ticker, ctx, 0),
    // `liquidity_dollars` is deprecated and always "0.0000" (VENUES.md §2.2); absent is fine.
    liquidity: optMicros(o, "liquidity_dollars", ticker) ?? 0,
    url: kalshiUrl(eventTicker, ticker),
    lastPrice: last === undefined || last === 0 ? null : last,
    bestBid: bid === undefined || bid === 0 ? null : bid,
    bestAsk: ask === undefined || ask >= MICROS ? null : ask,
    // The last price 24 h ago (VENUES.md §2.2); "0.0000" means no trade then, as for last_price.
    price24hAgo: ((p) => (p === undefined || p <= 0 || p > MICROS ? null : p))(
      optMicros(o, "previous_price_dollars", ticker),
    ),
    negRisk: false,
    fees: event ? marketFees(event, ticker, ctx.report) : null,
    updatedAt: isoTime(o, "updated_time") ?? ctx.now,
  };
}

/**
 * A page of markets: MVE markets dropped, unparsable ones reported with their ticker and skipped,
 * never failing the page.
 */
export function normalizeMarkets(
  raws: unknown,
  ctx: NormalizeContext,
  eventFor: (eventTicker: string) => EventInfo | undefined = () => undefined,
): { markets: VenueMarket[]; skipped: string[]; mveDropped: number } {
  const markets: VenueMarket[] = [];
  const skipped: string[] = [];
  let mveDropped = 0;
  if (!Array.isArray(raws)) {
    ctx.report("markets_not_an_array", {});
    return { markets, skipped, mveDropped };
  }
  for (const raw of raws) {
    if (isMveMarket(raw)) {
      mveDropped += 1;
      continue;
    }
    try {
      const eventTicker = text(asObject(raw) ?? {}, "event_ticker");
      markets.push(normalizeMarket(raw, ctx, eventTicker ? eventFor(eventTicker) : undefined));
    } catch (error) {
      if (!(error instanceof KalshiParseError)) throw error;
      skipped.push(error.ticker);
      ctx.report("market_parse_failed", { err: error, ticker: error.ticker });
    }
  }
  return { markets, skipped, mveDropped };
}

/** VENUES.md §2.2 "EventData" -> the event facts markets borrow. */
export function eventInfo(raw: unknown): EventInfo | undefined {
  const o = asObject(raw);
  const eventTicker = o ? text(o, "event_ticker") : undefined;
  if (!o || !eventTicker) return undefined;
  const multiplier = o["fee_multiplier_override"];
  return {
    eventTicker,
    seriesTicker: text(o, "series_ticker") ?? null,
    title: text(o, "title") ?? eventTicker,
    settlementSource: settlementSourceText(o["settlement_sources"]),
    feeTypeOverride: text(o, "fee_type_override") ?? null,
    feeMultiplierOverride: typeof multiplier === "number" && Number.isFinite(multiplier) ? multiplier : null,
  };
}

/**
 * SDK 3.30 `Series` -> its fee type and multiplier. Undefined when either is missing or unreadable
 * (the caller then does not know the series' fees).
 */
export function seriesFees(raw: unknown): { ticker: string; fees: SeriesFees } | undefined {
  const o = asObject(raw);
  const ticker = o ? text(o, "ticker") : undefined;
  const feeType = o ? text(o, "fee_type") : undefined;
  const multiplier = o?.["fee_multiplier"];
  if (!ticker || !feeType || typeof multiplier !== "number" || !Number.isFinite(multiplier) || multiplier < 0)
    return undefined;
  return { ticker, fees: { feeType, multiplier } };
}

/**
 * A market's fee schedule: the event's override where it has one (a type without a multiplier keeps
 * the series' multiplier, and the other way round), else the series' fee type and multiplier; null
 * when neither is known. An unknown fee type is reported (and charged as `kalshiSchedule` says).
 */
export function marketFees(event: EventInfo, ticker: string, report: Report): FeeSchedule | null {
  const feeType = event.feeTypeOverride ?? event.seriesFees?.feeType;
  const multiplier = event.feeMultiplierOverride ?? event.seriesFees?.multiplier;
  if (feeType === undefined && multiplier === undefined) return null;
  if (feeType !== undefined && !(KALSHI_FEE_TYPES as readonly string[]).includes(feeType)) {
    report("unknown_fee_type", { ticker, fee_type: feeType });
  }
  return kalshiSchedule(feeType ?? "quadratic", multiplier ?? 1);
}

/**
 * VENUES.md §2.2 "EventData" (with `with_nested_markets=true`) -> VenueEvent plus its markets.
 * The event's close time is the latest close of its markets (the strike date when it has none).
 */
export function normalizeEvent(
  raw: unknown,
  ctx: NormalizeContext,
  seriesFor: (seriesTicker: string) => SeriesFees | undefined = () => undefined,
): { event: VenueEvent; info: EventInfo; markets: VenueMarket[] } {
  const o = asObject(raw);
  const read = eventInfo(raw);
  if (!o || !read) throw new KalshiParseError("<event>", "event has no event_ticker");
  const info: EventInfo = {
    ...read,
    seriesFees: read.seriesTicker ? seriesFor(read.seriesTicker) : undefined,
  };
  if (!text(o, "title")) ctx.report("missing_field:event.title", { event_ticker: info.eventTicker });
  const { markets } = normalizeMarkets(o["markets"] ?? [], ctx, () => info);
  const closes = markets.map((m) => m.closeTime).filter((t): t is string => t !== null);
  const closeTime = closes.length > 0 ? closes.sort().at(-1)! : isoTime(o, "strike_date");
  const category = text(o, "category") ?? null;
  return {
    info,
    markets,
    event: {
      id: marketId("kalshi", info.eventTicker),
      venue: "kalshi",
      venueEventId: info.eventTicker,
      title: info.title,
      category,
      marketIds: markets.map((m) => m.id),
      closeTime: closeTime ?? null,
      url: kalshiUrl(info.eventTicker, info.eventTicker),
      mutuallyExclusive: o["mutually_exclusive"] === true,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Order book — VENUES.md §2.3 (`orderbook_fp`, bids only on both sides, ascending, best last).

/** `[["0.4200","13.00"], ...]` -> levels (unsorted); zero-size levels dropped. */
export function parseLevels(raw: unknown, ticker: string, field: string): BookLevel[] {
  if (raw === undefined || raw === null) return []; // an empty side may be omitted or null
  if (!Array.isArray(raw)) throw new KalshiParseError(ticker, `${field} is not an array`);
  const levels: BookLevel[] = [];
  for (const entry of raw) {
    if (!Array.isArray(entry) || entry.length < 2) {
      throw new KalshiParseError(ticker, `${field} has a malformed level ${JSON.stringify(entry)}`);
    }
    const price = typeof entry[0] === "string" ? decimalMicros(entry[0]) : undefined;
    const size = typeof entry[1] === "string" ? decimalMicros(entry[1]) : undefined;
    if (price === undefined || size === undefined || price <= 0 || price >= MICROS || size < 0) {
      throw new KalshiParseError(ticker, `${field} has a malformed level ${JSON.stringify(entry)}`);
    }
    if (size > 0) levels.push({ price, size });
  }
  return levels;
}

/**
 * Both outcomes' books from the two BID ladders Kalshi gives. YES bids are `yes`, NO bids are
 * `no`; a YES ask at 1 − p is implied by every NO bid at p, and a NO ask by every YES bid. Bids
 * best (highest) first, asks best (lowest) first. An empty side stays empty.
 */
export function bookFromBids(
  ticker: string,
  yesBids: BookLevel[],
  noBids: BookLevel[],
  timestamp: string,
  sequence: number | null,
): OrderBook {
  const desc = (a: BookLevel, b: BookLevel) => b.price - a.price;
  const yes = [...yesBids].sort(desc);
  const no = [...noBids].sort(desc);
  const implied = (levels: BookLevel[]) => levels.map((l) => ({ price: complement(l.price), size: l.size }));
  return {
    marketId: marketId("kalshi", ticker),
    yes: { bids: yes, asks: implied(no) },
    no: { bids: no, asks: implied(yes) },
    timestamp,
    sequence,
  };
}

/** `GET /markets/{ticker}/orderbook` body -> OrderBook. */
export function normalizeOrderBook(body: unknown, ticker: string, now: string): OrderBook {
  const o = asObject(body);
  const fp = o ? asObject(o["orderbook_fp"]) : undefined;
  if (!fp) throw new KalshiParseError(ticker, "orderbook response has no orderbook_fp");
  return bookFromBids(
    ticker,
    parseLevels(fp["yes_dollars"], ticker, "yes_dollars"),
    parseLevels(fp["no_dollars"], ticker, "no_dollars"),
    now,
    null,
  );
}

// ---------------------------------------------------------------------------------------------
// Candlesticks — VENUES.md §2.3 (`period_interval` 1, 60, 1440 minutes; `price.*` optional).

export const PERIOD_MINUTES: Record<CandleInterval, 1 | 60 | 1440> = { "1m": 1, "1h": 60, "1d": 1440 };

/**
 * Field names of the two candlestick shapes: the live endpoint's `price.open_dollars`,
 * `volume_fp`, and `GET /historical/markets/{ticker}/candlesticks`' plain `price.open`, `volume`
 * (SDK 3.30 `MarketCandlestickHistorical`, whose trade prices are null when nothing traded).
 */
const CANDLE_FIELDS = {
  live: { suffix: "_dollars", volume: "volume_fp" },
  historical: { suffix: "", volume: "volume" },
} as const;

/**
 * Candlesticks -> Candles stamped at the START of each period (Kalshi stamps the end). Trade prices
 * (`price.*`) are used when present; a period without trades is a flat candle at the previous
 * close (the candle's `previous_dollars`, else the prior candle), else at the YES bid/ask mid.
 */
export function normalizeCandles(
  body: unknown,
  periodMinutes: number,
  ctx: NormalizeContext,
  shape: keyof typeof CANDLE_FIELDS = "live",
): Candle[] {
  const { suffix, volume: volumeKey } = CANDLE_FIELDS[shape];
  const o = asObject(body);
  const ticker = (o && text(o, "ticker")) ?? "<candles>";
  const list = o?.["candlesticks"];
  if (!Array.isArray(list)) throw new KalshiParseError(ticker, "candlesticks is not an array");
  const candles: Candle[] = [];
  let previousClose: Micros | undefined;
  for (const raw of list) {
    const c = asObject(raw);
    const end = c?.["end_period_ts"];
    if (!c || typeof end !== "number") {
      ctx.report("candle_without_end_period_ts", { ticker });
      continue;
    }
    const price = asObject(c["price"]);
    const open = price ? optMicros(price, `open${suffix}`, ticker) : undefined;
    const high = price ? optMicros(price, `high${suffix}`, ticker) : undefined;
    const low = price ? optMicros(price, `low${suffix}`, ticker) : undefined;
    const close = price ? optMicros(price, `close${suffix}`, ticker) : undefined;
    const volume = optMicros(c, volumeKey, ticker) ?? 0;
    const timestamp = new Date((end - periodMinutes * 60) * 1000).toISOString();
    if (open !== undefined && high !== undefined && low !== undefined && close !== undefined) {
      candles.push({ timestamp, open, high, low, close, volume });
      previousClose = close;
      continue;
    }
    const flat =
      (price ? optMicros(price, `previous${suffix}`, ticker) : undefined) ??
      previousClose ??
      quoteMid(c, ticker, suffix);
    if (flat === undefined) continue;
    candles.push({ timestamp, open: flat, high: flat, low: flat, close: flat, volume });
    previousClose = flat;
  }
  return candles;
}

function quoteMid(c: Json, ticker: string, suffix: string): Micros | undefined {
  const bid = asObject(c["yes_bid"]);
  const ask = asObject(c["yes_ask"]);
  const b = bid ? optMicros(bid, `close${suffix}`, ticker) : undefined;
  const a = ask ? optMicros(ask, `close${suffix}`, ticker) : undefined;
  if (b === undefined || a === undefined) return undefined;
  return Math.round((a + b) / 2);
}

// ---------------------------------------------------------------------------------------------
// Historical cutoff — SDK 3.30 `GetHistoricalCutoffResponse` (`GET /historical/cutoff`).

/** The live/historical boundaries, unix ms; a field we cannot read is null (nothing assumed). */
export interface HistoricalCutoff {
  marketSettledMs: number | null;
  tradesCreatedMs: number | null;
  ordersUpdatedMs: number | null;
}

/**
 * The cutoff fields are typed only as strings in the SDK; their format is not documented
 * (unverified). ISO 8601 and unix seconds or milliseconds, as text or number, are all read.
 */
export function normalizeCutoff(body: unknown, ctx: NormalizeContext): HistoricalCutoff {
  const o = asObject(body) ?? {};
  const at = (key: string): number | null => {
    const v = o[key];
    let ms: number | null = null;
    if (typeof v === "number" && Number.isFinite(v)) ms = v > 1e12 ? v : v * 1000;
    else if (typeof v === "string" && /^\d+(\.\d+)?$/.test(v)) {
      const n = Number(v);
      ms = n > 1e12 ? n : n * 1000;
    } else if (typeof v === "string" && v.length > 0) {
      const parsed = Date.parse(v);
      ms = Number.isNaN(parsed) ? null : parsed;
    }
    if (ms === null) ctx.report(`unreadable_cutoff:${key}`, { value: v ?? null });
    return ms;
  };
  return {
    marketSettledMs: at("market_settled_ts"),
    tradesCreatedMs: at("trades_created_ts"),
    ordersUpdatedMs: at("orders_updated_ts"),
  };
}

// ---------------------------------------------------------------------------------------------
// Trades — VENUES.md §2.2 `GET /markets/trades` and §2.4 `trade` messages share one shape.

/** The taker bought `taker_outcome_side` (or legacy `taker_side`) at that side's price. */
export function normalizeTrade(raw: unknown, ctx: NormalizeContext): Trade {
  const o = asObject(raw);
  if (!o) throw new KalshiParseError("<unknown>", "trade is not an object");
  const ticker = text(o, "market_ticker") ?? text(o, "ticker");
  if (!ticker) throw new KalshiParseError("<unknown>", "trade has no market_ticker");
  // `taker_book_side` is the same bit in book terms (bid ≡ yes), as on orders and fills.
  const bookSide = text(o, "taker_book_side");
  const sideText =
    text(o, "taker_outcome_side") ??
    (bookSide === "bid" ? "yes" : bookSide === "ask" ? "no" : undefined) ??
    text(o, "taker_side");
  let outcome: Outcome = "yes";
  let takerSide: Trade["takerSide"] = "buy";
  if (sideText === "yes" || sideText === "no") outcome = sideText;
  else {
    ctx.report(sideText ? "unknown_taker_side" : "missing_field:taker_outcome_side", { ticker });
    takerSide = null;
  }
  const yesPrice = optMicros(o, "yes_price_dollars", ticker);
  const noPrice = optMicros(o, "no_price_dollars", ticker);
  const price =
    outcome === "yes"
      ? (yesPrice ?? (noPrice === undefined ? undefined : complement(noPrice)))
      : (noPrice ?? (yesPrice === undefined ? undefined : complement(yesPrice)));
  const size = optMicros(o, "count_fp", ticker);
  if (price === undefined || size === undefined)
    throw new KalshiParseError(ticker, "trade without price or count");
  return {
    marketId: marketId("kalshi", ticker),
    outcome,
    price,
    size,
    takerSide,
    timestamp: messageTime(o, () => isoTime(o, "created_time") ?? ctx.now),
    venueTradeId: text(o, "trade_id") ?? null,
  };
}
