/**
 * Price history: stored candles (built live by candles.ts) for a range, gaps filled, with the
 * venue's history fetched the first time a market's range has no local history.
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
 * Backfill: the first time a range begins before the market's local history in it, the venue's
 * history at the source interval (1m for 1m/5m/15m, 1h for 1h/4h, 1d for 1d/1w) is fetched for the
 * part before the first local candle (all of the range when there is none) — whole periods only (the
 * one under way is built live), at most `maxPeriods` of them in requests of `periodsPerRequest`,
 * never before the market opened. It is stored where no candle exists (a candle built live is
 * never replaced), rolled up, and recorded in `candle_backfills`, so it is not fetched again unless
 * an earlier start is asked for. If the venue fails, local candles are served as they are; with
 * none, the request fails with the retryable VENUE_UNAVAILABLE.
 */

import type { MarketRow } from "../catalog/repo";
import * as catalogRepo from "../catalog/repo";
import { AppError } from "../http/errors";
import { type Clock, isoFromMs } from "../infra/clock";
import type { Db } from "../infra/db/store";
import type { Micros } from "../venues/decimal";
import { isVenueError, type VenueError } from "../venues/errors";
import type { Candle, PricePoint, VenueId } from "../venues/model";
import type { Venue } from "../venues/venue";
import {
  bucketStart,
  type CandleBuilder,
  type CandleLogger,
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

export interface HistoryResult {
  candles: HistoryCandle[];
  /** The range covered, [start, end), ms. */
  start: number;
  end: number;
}

export interface HistoryOptions {
  /** Source periods asked of a venue in one request (Kalshi allows 5,000). */
  periodsPerRequest: number;
  /** Source periods one backfill fetches at most. */
  maxPeriods: number;
}

const DEFAULTS: HistoryOptions = { periodsPerRequest: 4_000, maxPeriods: 16_000 };

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

export class PriceHistoryService {
  readonly #inflight = new Map<string, Promise<void>>();
  readonly #options: HistoryOptions;

  constructor(
    private readonly db: Db,
    private readonly venues: ReadonlyMap<VenueId, Venue>,
    private readonly candles: CandleBuilder,
    private readonly clock: Clock,
    private readonly log: CandleLogger,
    options: Partial<HistoryOptions> = {},
  ) {
    this.#options = { ...DEFAULTS, ...options };
  }

  async history(query: HistoryQuery): Promise<HistoryResult> {
    const market = await catalogRepo.findMarket(this.db, query.marketId);
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
        { market_id: market.id, venue: failure.venue, kind: failure.kind, error: failure.message },
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
    return { candles, start: from, end: to };
  }

  /** Stored candles overlaid with the ones still in memory, gaps filled. */
  async #read(marketId: string, interval: Interval, from: number, to: number, now: number) {
    const size = INTERVAL_MS[interval];
    const [rows, before] = await Promise.all([
      repo.listCandles(this.db, marketId, interval, isoFromMs(from), isoFromMs(to)),
      repo.lastCandleBefore(this.db, marketId, interval, isoFromMs(from)),
    ]);
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
    // Only periods that are over: the one under way is built live.
    const horizon = bucketStart(now, source);
    let wantFrom = bucketStart(from, source);
    // Nothing before the market opened; an open time still ahead of a listed market is not trusted.
    const opened = market.open_time ? Date.parse(market.open_time) : Number.NaN;
    if (opened < horizon) wantFrom = Math.max(wantFrom, bucketStart(opened, source));
    if (wantFrom >= Math.min(to, horizon)) return;
    const venue = this.venues.get(market.venue as VenueId);
    if (!venue?.capabilities.supports.priceHistory) return;

    // One backfill per market and source interval at a time; a second request waits, then re-checks.
    const key = `${market.id}\u0000${source}`;
    for (let running = this.#inflight.get(key); running; running = this.#inflight.get(key)) {
      await running.catch(() => {});
    }
    const run = this.#backfill(market.id, venue, source, wantFrom, horizon, now);
    this.#inflight.set(key, run);
    try {
      await run;
    } finally {
      this.#inflight.delete(key);
    }
  }

  async #backfill(
    marketId: string,
    venue: Venue,
    source: SourceInterval,
    wantFrom: number,
    horizon: number,
    now: number,
  ): Promise<void> {
    const size = INTERVAL_MS[source];
    const mark = await repo.findBackfill(this.db, marketId, source);
    let fetchTo: number;
    if (mark) {
      const covered = Date.parse(mark.covered_from);
      if (covered <= wantFrom) return;
      fetchTo = covered;
    } else {
      // Local history (stored, or still in memory) that starts with the range needs nothing from
      // the venue; otherwise only the part before it is fetched, so no live candle is in the way.
      const stored = await repo.firstCandleStart(
        this.db,
        marketId,
        source,
        isoFromMs(wantFrom),
        isoFromMs(horizon),
      );
      let first = stored !== undefined ? Date.parse(stored) : horizon;
      for (const held of this.candles.held(marketId, source)) {
        if (held.start >= wantFrom && held.start < first) first = held.start;
      }
      if (first <= wantFrom) return;
      fetchTo = first;
    }
    const fetchFrom = Math.max(wantFrom, fetchTo - this.#options.maxPeriods * size);
    if (fetchFrom >= fetchTo) return;

    const fetched = await this.#fetch(venue, marketId, source, fetchFrom, fetchTo);
    if (fetched.length > 0) {
      await this.db.transaction().execute((trx) => repo.insertMissingCandles(trx, fetched.map(toRow)));
      await this.candles.rollUpHistory(marketId, source, fetchFrom, fetchTo);
    }
    // A window with no history at all means the market has none further back either.
    const coveredFrom = fetched.length === 0 ? wantFrom : fetchFrom;
    await repo.saveBackfill(this.db, {
      market_id: marketId,
      interval: source,
      covered_from: isoFromMs(mark ? Math.min(Date.parse(mark.covered_from), coveredFrom) : coveredFrom),
      covered_to: mark?.covered_to ?? isoFromMs(fetchTo),
      fetched_at: isoFromMs(now),
    });
  }

  /** The venue's history for [from, to) as candles of `source`, in requests of bounded size. */
  async #fetch(venue: Venue, marketId: string, source: SourceInterval, from: number, to: number) {
    const size = INTERVAL_MS[source];
    const step = this.#options.periodsPerRequest * size;
    const out: PriceCandle[] = [];
    let previousPrice: Micros | undefined;
    for (let a = from; a < to; a += step) {
      const b = Math.min(to, a + step);
      const history = await venue.getPriceHistory(marketId, {
        interval: source,
        start: isoFromMs(a),
        end: isoFromMs(b),
      });
      const candles = isPoints(history)
        ? pointsToCandles(marketId, source, history, previousPrice)
        : venueCandles(marketId, source, history);
      for (const candle of candles) if (candle.start >= a && candle.start < b) out.push(candle);
      const last = out[out.length - 1];
      if (last) previousPrice = last.close;
    }
    return out;
  }
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
