/**
 * Price history: stored candles (built live by candles.ts) for a range, gaps filled, with the
 * venue's history fetched for the part of the range crossbook has no history of, and a coverage
 * report that says what the candles rest on.
 *
 * Range: candles whose period starts in [start, end). With `start`, the first `limit` periods from
 * it; without, the last `limit` periods before `end` (default: through the period under way, which
 * is included while it forms). `start`/`end` in the result are the range actually covered, so the
 * returned `end` is the next page's `start`.
 *
 * Gaps: a period with no update repeats the previous close as open, high, low and close with
 * volume 0, from the market's first known candle on; nothing is made up before it, nor after the
 * period under way.
 *
 * Backfill: the part of the asked range (at the source interval: 1m for 1m/5m/15m, 1h for 1h/4h, 1d
 * for 1d/1w) that lies before the first candle crossbook built itself and that no earlier backfill
 * fetched is asked of the venue — the range asked, however far back, never "the most recent N
 * periods" — in requests of `periodsPerRequest`, whole periods only (the one under way is built
 * live), never before the market opened, at most `maxPeriods` per request. Candles are stored where
 * none exists (a candle built live is never replaced), rolled up, and the fetched range is recorded
 * in `candle_backfill_ranges` (with the spacing the venue served, when coarser than asked), so it is
 * not fetched again. If the venue fails, local candles are served as they are; with none, the
 * request fails with the retryable VENUE_UNAVAILABLE.
 *
 * Coverage: which part of the range has candles, whether they rest on crossbook's own prices, the
 * venue's history or both, and, when part of the range has none or the venue served it coarser than
 * the interval, why: the response never says less than it knows.
 */

import type { MarketRow } from "../catalog/repo";
import * as catalogRepo from "../catalog/repo";
import { AppError } from "../http/errors";
import { type Clock, isoFromMs } from "../infra/clock";
import type { Db } from "../infra/db/store";
import type { Logger } from "../infra/log";
import type { Micros } from "../venues/decimal";
import { isVenueError, type VenueError } from "../venues/errors";
import type { Candle, PricePoint, VenueHistory, VenueId } from "../venues/model";
import type { MarketDataVenue } from "../venues/venue";
import {
  bucketStart,
  type CandleBuilder,
  type CandleState,
  fromRow,
  INTERVAL_MS,
  type Interval,
  mergeCandles,
  type PriceCandle,
  SOURCE,
  type SourceInterval,
  toRow,
} from "./candles";
import * as repo from "./candles-repo";
import { ReadMemo } from "./read-memo";

export interface HistoryQuery {
  marketId: string;
  interval: Interval;
  limit: number;
  /** ms; see the module comment for how start, end and limit combine. */
  start?: number;
  end?: number;
}

export interface HistoryCandle {
  /** Period start, ms. */
  start: number;
  open: Micros;
  high: Micros;
  low: Micros;
  close: Micros;
  volume: Micros;
}

/** Why part of a range has no candles, or coarser ones than asked (null when nothing is missing). */
export type CoverageReason =
  /** The venue failed while part of the range was fetched: the candles there may be missing or filled. */
  | "venue_unavailable"
  /** The venue serves this market's history only at a coarser spacing (`resolution`). */
  | "coarser_at_venue"
  /** Neither crossbook nor the venue has prices for the start of the range. */
  | "no_venue_data"
  /** The range begins before the market opened; history starts at its opening. */
  | "before_market_open";

export interface HistoryCoverage {
  /** Start of the first candle and end of the last one, ms; null when there is none. */
  from: number | null;
  to: number | null;
  /** Minutes between the prices behind the candles when coarser than the interval; else null. */
  coarserMinutes: number | null;
  /** What the candles rest on: prices crossbook saw itself, the venue's history, or both. */
  source: "crossbook" | "venue" | "crossbook+venue" | "none";
  /** True when every period of the range that has begun (since the market opened) has a candle at the interval asked. */
  complete: boolean;
  reason: CoverageReason | null;
}

export interface HistoryResult {
  candles: HistoryCandle[];
  /** The range covered, [start, end), ms. */
  start: number;
  end: number;
  coverage: HistoryCoverage;
}

export interface HistoryOptions {
  /** Source periods asked of a venue in one request (Kalshi allows 5,000). */
  periodsPerRequest: number;
  /** Source periods one history request fetches at most (a range of `limit` ≤ 1,000 needs ≤ 15,000). */
  maxPeriods: number;
  /**
   * How long a store read (market, candles, backfill record) is kept for the next request, ms. This
   * process's own writes end it at once; another instance's writes are seen within it. 0: none kept.
   */
  storeReadTtlMs: number;
}

const DEFAULTS: HistoryOptions = { periodsPerRequest: 4_000, maxPeriods: 16_000, storeReadTtlMs: 1_000 };

/** The range [from, to) of period starts a query covers; see the module comment. */
export function historyRange(query: HistoryQuery, now: number): { from: number; to: number } {
  const size = INTERVAL_MS[query.interval];
  const underWayEnd = bucketStart(now, query.interval) + size;
  if (query.start !== undefined) {
    const aligned = bucketStart(query.start, query.interval);
    const from = aligned === query.start ? aligned : aligned + size;
    const to = Math.min(query.end ?? underWayEnd, from + query.limit * size);
    return { from, to: Math.max(from, to) };
  }
  const to = query.end ?? underWayEnd;
  const last = bucketStart(to - 1, query.interval);
  return { from: last - (query.limit - 1) * size, to };
}

type Span = [number, number];

/** The parts of [from, to) outside every range (ranges sorted by start). */
export function uncovered(from: number, to: number, ranges: readonly Span[]): Span[] {
  const out: Span[] = [];
  let cursor = from;
  for (const [a, b] of ranges) {
    if (b <= cursor) continue;
    if (a >= to) break;
    if (a > cursor) out.push([cursor, Math.min(a, to)]);
    cursor = Math.max(cursor, b);
    if (cursor >= to) break;
  }
  if (cursor < to) out.push([cursor, to]);
  return out;
}

/** `ranges` (sorted, disjoint) with `span` added, merged with the ones it overlaps or touches. */
export function withSpan(ranges: readonly Span[], span: Span): Span[] {
  const out: Span[] = [];
  let [a, b] = span;
  for (const [c, d] of ranges) {
    if (d < a) out.push([c, d]);
    else if (c > b) {
      out.push([a, b]);
      [a, b] = [c, d];
    } else {
      a = Math.min(a, c);
      b = Math.max(b, d);
    }
  }
  out.push([a, b]);
  return out;
}

const spans = (rows: readonly repo.BackfillRangeRow[]): Span[] =>
  rows.map((r) => [Date.parse(r.covered_from), Date.parse(r.covered_to)]);

export class PriceHistoryService {
  readonly #inflight = new Map<string, Promise<boolean>>();
  readonly #options: HistoryOptions;
  readonly #reads: ReadMemo;
  /** Per market: how many backfills this process has written (with the builder's, the read revision). */
  readonly #backfills = new Map<string, number>();
  /**
   * Per market and source interval: ranges a backfill has already dealt with (fetched, or found
   * built live). Both only grow, so such a range never needs the venue again.
   */
  readonly #settled = new Map<string, Span[]>();

  constructor(
    private readonly db: Db,
    private readonly venues: ReadonlyMap<VenueId, MarketDataVenue>,
    private readonly candles: CandleBuilder,
    private readonly clock: Clock,
    private readonly log: Logger,
    options: Partial<HistoryOptions> = {},
  ) {
    this.#options = { ...DEFAULTS, ...options };
    this.#reads = new ReadMemo(clock, this.#options.storeReadTtlMs);
  }

  /** Changes whenever this process writes the market's candles or backfill record. */
  #revision(marketId: string): number {
    return this.candles.revision(marketId) + (this.#backfills.get(marketId) ?? 0);
  }

  async history(query: HistoryQuery): Promise<HistoryResult> {
    // A market's open time and venue change rarely; a sync's change is seen within the read TTL.
    const market = await this.#reads.read(`market\u0000${query.marketId}`, 0, () =>
      catalogRepo.findMarket(this.db, query.marketId),
    );
    if (!market) {
      throw new AppError("MARKET_NOT_FOUND", `No market ${query.marketId}`, { market_id: query.marketId });
    }
    const now = this.clock.now();
    const { from, to } = historyRange(query, now);
    let failure: VenueError | undefined;
    if (from < to) {
      try {
        await this.#ensureBackfilled(market, query.interval, from, to, now);
      } catch (error) {
        if (!isVenueError(error)) throw error;
        failure = error;
      }
    }
    const candles = from < to ? await this.#read(market.id, query.interval, from, to, now) : [];
    if (failure) {
      this.log.warn(
        { err: failure, market_id: market.id, venue: failure.venue, kind: failure.kind },
        "price history backfill failed",
      );
      if (candles.length === 0) {
        const error = new AppError(
          "VENUE_UNAVAILABLE",
          `${market.venue} did not provide price history for ${market.id} (${failure.kind}); try again shortly`,
          { venue: failure.venue, reason: failure.kind },
        );
        const retryAfter = failure.retryAfterMs;
        if (retryAfter !== undefined)
          error.withHeaders({ "Retry-After": String(Math.ceil(retryAfter / 1000)) });
        throw error;
      }
    }
    const source = SOURCE[query.interval];
    const ranges = await this.#reads.read(
      `ranges\u0000${market.id}\u0000${source}`,
      this.#revision(market.id),
      () => repo.listBackfillRanges(this.db, market.id, source),
    );
    const coverage = coverageOf(
      market,
      query.interval,
      from,
      to,
      now,
      candles,
      ranges,
      failure !== undefined,
    );
    return { candles, start: from, end: to, coverage };
  }

  /** Stored candles overlaid with the ones still in memory, gaps filled. */
  async #read(marketId: string, interval: Interval, from: number, to: number, now: number) {
    const size = INTERVAL_MS[interval];
    const key = `candles\u0000${marketId}\u0000${interval}\u0000${from}\u0000${to}`;
    const [rows, before] = await this.#reads.read(key, this.#revision(marketId), () =>
      Promise.all([
        repo.listCandles(this.db, marketId, interval, isoFromMs(from), isoFromMs(to)),
        repo.lastCandleBefore(this.db, marketId, interval, isoFromMs(from)),
      ]),
    );
    const byStart = new Map<number, CandleState>(rows.map((row) => [Date.parse(row.start), fromRow(row)]));
    let previous: PriceCandle | undefined = before ? fromRow(before) : undefined;
    for (const held of this.candles.held(marketId, interval)) {
      if (held.start >= from && held.start < to) {
        const stored = byStart.get(held.start);
        byStart.set(held.start, stored ? mergeCandles(stored, held) : held);
      } else if (held.start < from && (!previous || held.start >= previous.start)) {
        previous = previous?.start === held.start ? { ...held, ...mergeCandles(previous, held) } : held;
      }
    }
    let close = previous?.close;
    const last = Math.min(to, bucketStart(now, interval) + size);
    const out: HistoryCandle[] = [];
    for (let start = from; start < last; start += size) {
      const candle = byStart.get(start);
      if (candle) {
        out.push({
          start,
          open: candle.open,
          high: candle.high,
          low: candle.low,
          close: candle.close,
          volume: candle.volume,
        });
        close = candle.close;
      } else if (close !== undefined) {
        out.push({ start, open: close, high: close, low: close, close, volume: 0 });
      }
    }
    return out;
  }

  async #ensureBackfilled(market: MarketRow, interval: Interval, from: number, to: number, now: number) {
    const source = SOURCE[interval];
    const size = INTERVAL_MS[source];
    // Only periods that are over: the one under way is built live.
    const horizon = bucketStart(now, source);
    let wantFrom = bucketStart(from, source);
    const wantTo = Math.min(bucketStart(to - 1, source) + size, horizon);
    // Nothing before the market opened; an open time still ahead of a listed market is not trusted.
    const opened = market.open_time ? Date.parse(market.open_time) : Number.NaN;
    if (opened < horizon) wantFrom = Math.max(wantFrom, bucketStart(opened, source));
    if (wantFrom >= wantTo) return;
    const venue = this.venues.get(market.venue as VenueId);
    if (!venue?.capabilities.supports.priceHistory) return;
    const key = `${market.id}\u0000${source}`;
    if (uncovered(wantFrom, wantTo, this.#settled.get(key) ?? []).length === 0) return;

    // One backfill per market and source interval at a time; a second request waits, then re-checks.
    for (let running = this.#inflight.get(key); running; running = this.#inflight.get(key)) {
      await running.catch(() => {});
    }
    if (uncovered(wantFrom, wantTo, this.#settled.get(key) ?? []).length === 0) return;
    const run = this.#backfill(market.id, venue, source, wantFrom, wantTo, horizon, now);
    this.#inflight.set(key, run);
    try {
      if (await run) this.#settled.set(key, withSpan(this.#settled.get(key) ?? [], [wantFrom, wantTo]));
    } finally {
      this.#inflight.delete(key);
    }
  }

  async #backfill(
    marketId: string,
    venue: MarketDataVenue,
    source: SourceInterval,
    wantFrom: number,
    wantTo: number,
    horizon: number,
    now: number,
  ): Promise<boolean> {
    const size = INTERVAL_MS[source];
    const fetched = spans(await repo.listBackfillRanges(this.db, marketId, source));
    // Local history that starts within the range needs nothing from the venue from there on: only
    // the part before the first candle crossbook built itself is fetched, so no live candle is in
    // the way. Candles inside an earlier fetched range are the venue's, not crossbook's.
    let live = horizon;
    for (let cursor = wantFrom; cursor < live; ) {
      const stored = await repo.firstCandleStart(
        this.db,
        marketId,
        source,
        isoFromMs(cursor),
        isoFromMs(horizon),
      );
      if (stored === undefined) break;
      const at = Date.parse(stored);
      const inside = fetched.find(([a, b]) => a <= at && at < b);
      if (!inside) {
        live = at;
        break;
      }
      cursor = inside[1];
    }
    for (const held of this.candles.held(marketId, source)) {
      if (held.start >= wantFrom && held.start < live) live = held.start;
    }

    let budget = this.#options.maxPeriods;
    let whole = true;
    for (const [a, gapEnd] of uncovered(wantFrom, Math.min(wantTo, live), fetched)) {
      if (budget <= 0) {
        whole = false;
        break;
      }
      const b = Math.min(gapEnd, a + budget * size);
      if (b < gapEnd) whole = false;
      budget -= Math.ceil((b - a) / size);
      const { candles, coarserMinutes } = await this.#fetch(venue, marketId, source, a, b);
      if (candles.length > 0) {
        await this.db.transaction().execute((trx) => repo.insertMissingCandles(trx, candles.map(toRow)));
        this.#wrote(marketId);
        await this.candles.rollUpHistory(marketId, source, a, b);
        this.#wrote(marketId);
      }
      // Recorded even when the venue had nothing: it is not asked for this range again.
      await this.db.transaction().execute((trx) =>
        repo.saveBackfillRange(trx, {
          market_id: marketId,
          interval: source,
          covered_from: isoFromMs(a),
          covered_to: isoFromMs(b),
          resolution_minutes: coarserMinutes ?? null,
          fetched_at: isoFromMs(now),
        }),
      );
      this.#wrote(marketId);
    }
    return whole;
  }

  #wrote(marketId: string): void {
    this.#backfills.set(marketId, (this.#backfills.get(marketId) ?? 0) + 1);
  }

  /** The venue's history for [from, to) as candles of `source`, in requests of bounded size. */
  async #fetch(venue: MarketDataVenue, marketId: string, source: SourceInterval, from: number, to: number) {
    const size = INTERVAL_MS[source];
    const step = this.#options.periodsPerRequest * size;
    const out: PriceCandle[] = [];
    let coarserMinutes: number | undefined;
    let previousPrice: Micros | undefined;
    for (let a = from; a < to; a += step) {
      const b = Math.min(to, a + step);
      const answer = await venue.getPriceHistory(marketId, {
        interval: source,
        start: isoFromMs(a),
        end: isoFromMs(b),
      });
      const { series, coarserMinutes: coarser }: VenueHistory = Array.isArray(answer)
        ? { series: answer }
        : answer;
      if (coarser !== undefined) coarserMinutes = Math.max(coarserMinutes ?? 0, coarser);
      const candles = isPoints(series)
        ? pointsToCandles(marketId, source, series, previousPrice)
        : venueCandles(marketId, source, series);
      for (const candle of candles) if (candle.start >= a && candle.start < b) out.push(candle);
      const last = out[out.length - 1];
      if (last) previousPrice = last.close;
    }
    return { candles: out, coarserMinutes };
  }
}

/**
 * What the candles of [from, to) rest on, and why part of it has none or coarser ones: the venue
 * failed, served coarser prices than the interval, had none, or the range begins before the market
 * opened. Periods that have not begun are not missing.
 */
export function coverageOf(
  market: Pick<MarketRow, "open_time">,
  interval: Interval,
  from: number,
  to: number,
  now: number,
  candles: readonly HistoryCandle[],
  ranges: readonly repo.BackfillRangeRow[],
  venueFailed: boolean,
): HistoryCoverage {
  const size = INTERVAL_MS[interval];
  const dataTo = Math.min(to, bucketStart(now, interval) + size);
  const opened = market.open_time ? Date.parse(market.open_time) : Number.NaN;
  const expectedFrom = opened < now ? Math.max(from, bucketStart(opened, interval)) : from;
  const first = candles[0]?.start;
  const end = candles.length > 0 ? candles[candles.length - 1]!.start + size : undefined;

  let coarserMinutes: number | null = null;
  let fromVenue = 0;
  if (first !== undefined && end !== undefined) {
    for (const range of ranges) {
      const a = Math.max(first, Date.parse(range.covered_from));
      const b = Math.min(end, Date.parse(range.covered_to));
      if (a >= b) continue;
      fromVenue += b - a;
      const minutes = range.resolution_minutes;
      if (minutes !== null && minutes * 60_000 > size)
        coarserMinutes = Math.max(coarserMinutes ?? 0, minutes);
    }
  }
  let source: HistoryCoverage["source"] = "none";
  if (first !== undefined && end !== undefined) {
    // The period under way is crossbook's (live, or the last close carried on): it does not count.
    const span = Math.min(end, bucketStart(now, interval)) - first;
    source = fromVenue === 0 ? "crossbook" : fromVenue >= span ? "venue" : "crossbook+venue";
  }

  const missingStart = expectedFrom < dataTo && (first === undefined || first > expectedFrom);
  let reason: CoverageReason | null = null;
  if (venueFailed) reason = "venue_unavailable";
  else if (coarserMinutes !== null) reason = "coarser_at_venue";
  else if (missingStart) reason = "no_venue_data";
  else if (from < expectedFrom && expectedFrom < dataTo) reason = "before_market_open";
  return {
    from: first ?? null,
    to: end ?? null,
    coarserMinutes,
    source,
    complete: reason === null,
    reason,
  };
}

function isPoints(history: Candle[] | PricePoint[]): history is PricePoint[] {
  const first = history[0];
  return first !== undefined && !("open" in first);
}

/** Kalshi-style candles (stamped at period start) -> ours, spanning their whole period. */
export function venueCandles(marketId: string, interval: SourceInterval, candles: Candle[]): PriceCandle[] {
  const size = INTERVAL_MS[interval];
  return candles.map((c) => {
    const start = bucketStart(Date.parse(c.timestamp), interval);
    return {
      marketId,
      interval,
      start,
      open: c.open,
      high: c.high,
      low: c.low,
      close: c.close,
      volume: c.volume,
      firstAt: start,
      lastAt: start + size - 1,
    };
  });
}

/**
 * Polymarket-style price points -> candles: each period's points are its price path, opening at the
 * price in force when it began (the previous point, unless one falls on the period start). Price
 * history carries no volume, so volume is 0.
 */
export function pointsToCandles(
  marketId: string,
  interval: SourceInterval,
  points: PricePoint[],
  previousPrice?: Micros,
): PriceCandle[] {
  const size = INTERVAL_MS[interval];
  const out: PriceCandle[] = [];
  let current: PriceCandle | undefined;
  let previous = previousPrice;
  for (const point of points) {
    const at = Date.parse(point.timestamp);
    const start = bucketStart(at, interval);
    const price = point.price;
    if (current && current.start === start) {
      if (price > current.high) current.high = price;
      if (price < current.low) current.low = price;
      current.close = price;
    } else {
      const open = at === start || previous === undefined ? price : previous;
      current = {
        marketId,
        interval,
        start,
        open,
        high: Math.max(open, price),
        low: Math.min(open, price),
        close: price,
        volume: 0,
        firstAt: start,
        lastAt: start + size - 1,
      };
      out.push(current);
    }
    previous = price;
  }
  return out;
}
