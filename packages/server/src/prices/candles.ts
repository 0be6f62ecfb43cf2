/**
 * Candles built from quotes as they arrive. Every quote change folds its price (the quote's `price`,
 * mid or last trade) into the current bucket of all seven intervals at once, and a trade adds its
 * size to their volume: O(1) per update, no I/O. Changed buckets are written in batches, one
 * transaction per flush, and forgotten once their period is over and written.
 *
 * A bucket in memory holds only what this process saw. Each candle carries `firstAt`/`lastAt`, the
 * times of the first and last update folded in, and writes merge with the stored candle
 * (`mergeCandles`): views that do not overlap in time add up (the stored part of a period from
 * before a restart, venue history from before live building began), views that overlap are of the
 * same feed and the wider one wins. After its first write a bucket adopts the merged candle, so from
 * then on it is the whole candle, and instances that build the same candles from the same feed write
 * the same rows instead of adding each other's volume.
 */
import { isoFromMs } from "../infra/clock";
import type { Db } from "../infra/db/store";
import type { Logger } from "../infra/log";
import type { Micros } from "../venues/decimal";
import type { FeedEvent } from "../venues/venue";
import * as repo from "./candles-repo";
import type { Quote } from "./quotes";

export const INTERVALS = ["1m", "5m", "15m", "1h", "4h", "1d", "1w"] as const;
export type Interval = (typeof INTERVALS)[number];
/** The intervals venues give history at (see venues/venue.ts). */
export type SourceInterval = "1m" | "1h" | "1d";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const INTERVAL_MS: Record<Interval, number> = {
  "1m": MINUTE,
  "5m": 5 * MINUTE,
  "15m": 15 * MINUTE,
  "1h": HOUR,
  "4h": 4 * HOUR,
  "1d": DAY,
  "1w": 7 * DAY,
};

/** Weeks start on Monday 00:00 UTC; 1970-01-01 was a Thursday, so the first Monday is 4 days on. */
const WEEK_ORIGIN = 4 * DAY;

/**
 * Start of the period containing `ms`. Periods are aligned in UTC: 4h candles start at 00, 04,
 * 08… UTC, days at 00:00 UTC, weeks on Monday 00:00 UTC.
 */
export function bucketStart(ms: number, interval: Interval): number {
  const size = INTERVAL_MS[interval];
  const origin = interval === "1w" ? WEEK_ORIGIN : 0;
  return Math.floor((ms - origin) / size) * size + origin;
}

/** Which venue history interval a backfill of each of ours fetches. */
export const SOURCE: Record<Interval, SourceInterval> = {
  "1m": "1m",
  "5m": "1m",
  "15m": "1m",
  "1h": "1h",
  "4h": "1h",
  "1d": "1d",
  "1w": "1d",
};

/** The intervals a backfilled source interval is rolled up to. */
export const ROLLUPS: Record<SourceInterval, Interval[]> = {
  "1m": ["5m", "15m"],
  "1h": ["4h"],
  "1d": ["1w"],
};

export interface CandleState {
  open: Micros;
  high: Micros;
  low: Micros;
  close: Micros;
  /** Traded contracts, micro-units. */
  volume: Micros;
  /** When the first and the last update folded in happened (ms); a venue candle spans its period. */
  firstAt: number;
  lastAt: number;
}

export interface PriceCandle extends CandleState {
  marketId: string;
  interval: Interval;
  /** Period start, ms. */
  start: number;
}

/**
 * The one merge rule, also written in SQL in candles-repo.ts (keep them alike): disjoint views add
 * their volumes; overlapping views keep the larger volume. Open comes from the view that started
 * first, close from the one that ended last.
 */
export function mergeCandles(stored: CandleState, incoming: CandleState): CandleState {
  const disjoint = stored.lastAt < incoming.firstAt || incoming.lastAt < stored.firstAt;
  return {
    open: incoming.firstAt < stored.firstAt ? incoming.open : stored.open,
    high: Math.max(stored.high, incoming.high),
    low: Math.min(stored.low, incoming.low),
    close: incoming.lastAt >= stored.lastAt ? incoming.close : stored.close,
    volume: disjoint ? stored.volume + incoming.volume : Math.max(stored.volume, incoming.volume),
    firstAt: Math.min(stored.firstAt, incoming.firstAt),
    lastAt: Math.max(stored.lastAt, incoming.lastAt),
  };
}

/** Candles in time order -> the one candle they make up. */
export function aggregate(candles: readonly CandleState[]): CandleState {
  const first = candles[0]!;
  const last = candles[candles.length - 1]!;
  let high = first.high;
  let low = first.low;
  let volume = 0;
  for (const c of candles) {
    if (c.high > high) high = c.high;
    if (c.low < low) low = c.low;
    volume += c.volume;
  }
  return {
    open: first.open,
    high,
    low,
    close: last.close,
    volume,
    firstAt: first.firstAt,
    lastAt: last.lastAt,
  };
}

export function toRow(candle: PriceCandle): repo.CandleRow {
  return {
    market_id: candle.marketId,
    interval: candle.interval,
    start: isoFromMs(candle.start),
    open: candle.open,
    high: candle.high,
    low: candle.low,
    close: candle.close,
    volume: candle.volume,
    first_at: isoFromMs(candle.firstAt),
    last_at: isoFromMs(candle.lastAt),
  };
}

export function fromRow(row: repo.CandleRow): PriceCandle {
  return {
    marketId: row.market_id,
    interval: row.interval as Interval,
    start: Date.parse(row.start),
    open: Number(row.open),
    high: Number(row.high),
    low: Number(row.low),
    close: Number(row.close),
    volume: Number(row.volume),
    firstAt: Date.parse(row.first_at),
    lastAt: Date.parse(row.last_at),
  };
}

/** One period of one market being built in memory. */
class Bucket implements PriceCandle {
  high: Micros;
  low: Micros;
  close: Micros;
  firstAt: number;
  lastAt: number;
  /** Written and merged with the store at least once: from then on it is the whole candle. */
  reconciled = false;

  constructor(
    readonly marketId: string,
    readonly interval: Interval,
    readonly start: number,
    public open: Micros,
    price: Micros,
    public volume: Micros,
    at: number,
  ) {
    this.high = Math.max(open, price);
    this.low = Math.min(open, price);
    this.close = price;
    this.firstAt = at;
    this.lastAt = at;
  }

  get end(): number {
    return this.start + INTERVAL_MS[this.interval];
  }

  fold(price: Micros, volume: Micros, at: number): void {
    if (price > this.high) this.high = price;
    if (price < this.low) this.low = price;
    this.close = price;
    this.volume += volume;
    if (at > this.lastAt) this.lastAt = at;
  }

  state(): PriceCandle {
    return {
      marketId: this.marketId,
      interval: this.interval,
      start: this.start,
      open: this.open,
      high: this.high,
      low: this.low,
      close: this.close,
      volume: this.volume,
      firstAt: this.firstAt,
      lastAt: this.lastAt,
    };
  }

  /**
   * Takes on the merged candle a write returned, keeping what arrived while the write was under
   * way (`sent` is what was written).
   */
  adopt(merged: CandleState, sent: CandleState): void {
    this.volume = merged.volume + (this.volume - sent.volume);
    if (merged.firstAt <= this.firstAt) {
      this.open = merged.open;
      this.firstAt = merged.firstAt;
    }
    if (merged.high > this.high) this.high = merged.high;
    if (merged.low < this.low) this.low = merged.low;
    if (merged.lastAt > this.lastAt) {
      this.close = merged.close;
      this.lastAt = merged.lastAt;
    }
    this.reconciled = true;
  }

  /** Folds in history from before anything this bucket holds (`part.lastAt < firstAt`). */
  prepend(part: CandleState): void {
    this.open = part.open;
    this.firstAt = part.firstAt;
    if (part.high > this.high) this.high = part.high;
    if (part.low < this.low) this.low = part.low;
    this.volume += part.volume;
  }
}

class MarketCandles {
  /** The price in force before the next update: a new period opens at it. */
  lastPrice: Micros | null = null;
  /** The current bucket per interval, in INTERVALS order. */
  readonly current: Array<Bucket | undefined> = new Array(INTERVALS.length).fill(undefined);
  /** Buckets of periods that are over but may not be written yet. */
  pending: Bucket[] = [];
  /** Bumped each time this market's candles are written: readers' kept copies of the store go stale. */
  written = 0;
}

export interface CandleBuilderOptions {
  /** How often changed candles are written, ms. */
  flushIntervalMs: number;
}

export class CandleBuilder {
  readonly #markets = new Map<string, MarketCandles>();
  readonly #dirty = new Set<Bucket>();
  /** Flushes and history roll-ups run one at a time, in order. */
  #queue: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly options: CandleBuilderOptions = { flushIntervalMs: 5_000 },
  ) {}

  /** The LiveMarkets quote listener: runs on the feed's hot path, so it only touches memory. */
  onQuote(quote: Quote, cause: FeedEvent): void {
    if (quote.price === null) return;
    this.record(quote.marketId, quote.price, cause.kind === "trade" ? cause.trade.size : 0, quote.updatedAt);
  }

  /** Folds one price update (and traded volume, micro-contracts) at time `at` into every interval. */
  record(marketId: string, price: Micros, volume: Micros, at: number): void {
    let market = this.#markets.get(marketId);
    if (!market) {
      market = new MarketCandles();
      this.#markets.set(marketId, market);
    }
    // A period opens at the price in force when it began, so consecutive candles join up.
    const open = market.lastPrice ?? price;
    for (let i = 0; i < INTERVALS.length; i++) {
      let bucket = market.current[i];
      // An update stamped before the current period (a clock step back) still belongs to it.
      if (bucket === undefined || at >= bucket.end) {
        if (bucket !== undefined) market.pending.push(bucket);
        const interval = INTERVALS[i]!;
        bucket = new Bucket(marketId, interval, bucketStart(at, interval), open, price, volume, at);
        market.current[i] = bucket;
      } else {
        bucket.fold(price, volume, at);
      }
      this.#dirty.add(bucket);
    }
    market.lastPrice = price;
  }

  /** Candles being built (or not yet written) for a market and interval, as this process sees them. */
  held(marketId: string, interval: Interval): PriceCandle[] {
    const market = this.#markets.get(marketId);
    if (!market) return [];
    const out: PriceCandle[] = [];
    for (const bucket of market.pending) if (bucket.interval === interval) out.push(bucket.state());
    const current = market.current[INTERVALS.indexOf(interval)];
    if (current) out.push(current.state());
    return out;
  }

  /** How many times this process has written the market's candles (see read-memo.ts). */
  revision(marketId: string): number {
    return this.#markets.get(marketId)?.written ?? 0;
  }

  /** Changed buckets waiting for the next flush. */
  get dirtyCount(): number {
    return this.#dirty.size;
  }

  start(): void {
    this.#timer = setInterval(() => {
      this.flush().catch((error) => this.log.warn({ err: error }, "could not write candles"));
    }, this.options.flushIntervalMs);
    this.#timer.unref();
  }

  /** Writes every changed bucket in one transaction; returns how many. Failed writes are retried. */
  flush(): Promise<number> {
    return this.#exclusive(() => this.#flush());
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush().catch((error) => this.log.warn({ err: error }, "could not write candles on stop"));
  }

  /**
   * Rolls backfilled `source` candles in [from, to) up to the larger intervals built from them.
   * Only source candles from before anything already known of a period are used (before the first
   * update of its stored candle and of the bucket in memory), so history fills in the part of a
   * period nobody watched and never counts a watched part twice. Runs between flushes.
   */
  rollUpHistory(marketId: string, source: SourceInterval, from: number, to: number): Promise<void> {
    return this.#exclusive(async () => {
      for (const target of ROLLUPS[source]) {
        const size = INTERVAL_MS[target];
        const lo = isoFromMs(bucketStart(from, target));
        const hi = isoFromMs(bucketStart(to - 1, target) + size);
        const [sources, targets] = await Promise.all([
          repo.listCandles(this.db, marketId, source, lo, hi),
          repo.listCandles(this.db, marketId, target, lo, hi),
        ]);
        const known = new Map(targets.map((row) => [Date.parse(row.start), fromRow(row)]));
        const groups = new Map<number, PriceCandle[]>();
        for (const row of sources) {
          const candle = fromRow(row);
          const start = bucketStart(candle.start, target);
          const group = groups.get(start);
          if (group) group.push(candle);
          else groups.set(start, [candle]);
        }
        const writes: repo.CandleRow[] = [];
        for (const [start, group] of groups) {
          const bucket = this.#bucket(marketId, target, start);
          const boundary = Math.min(bucket?.firstAt ?? Infinity, known.get(start)?.firstAt ?? Infinity);
          const earlier = group.filter((c) => c.lastAt < boundary);
          if (earlier.length === 0) continue;
          const part = aggregate(earlier);
          if (bucket?.reconciled) {
            // The bucket is the whole candle and will be written as such: fold history into it.
            bucket.prepend(part);
            this.#dirty.add(bucket);
          } else {
            // Nothing in memory, or a bucket whose first write will add itself to what is stored.
            writes.push(toRow({ marketId, interval: target, start, ...part }));
          }
        }
        if (writes.length > 0) await this.db.transaction().execute((trx) => repo.mergeCandles(trx, writes));
      }
    });
  }

  #bucket(marketId: string, interval: Interval, start: number): Bucket | undefined {
    const market = this.#markets.get(marketId);
    if (!market) return undefined;
    const current = market.current[INTERVALS.indexOf(interval)];
    if (current?.start === start) return current;
    return market.pending.find((b) => b.interval === interval && b.start === start);
  }

  #exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => {});
    return run;
  }

  async #flush(): Promise<number> {
    if (this.#dirty.size === 0) return 0;
    const batch = [...this.#dirty];
    this.#dirty.clear();
    const sent = batch.map((bucket) => bucket.state());
    let merged: Map<string, repo.CandleRow>;
    try {
      merged = await this.db.transaction().execute((trx) => repo.mergeCandles(trx, sent.map(toRow)));
    } catch (error) {
      for (const bucket of batch) this.#dirty.add(bucket);
      throw error;
    }
    for (let i = 0; i < batch.length; i++) {
      const row = merged.get(repo.candleKey(toRow(sent[i]!)));
      if (row) batch[i]!.adopt(fromRow(row), sent[i]!);
    }
    // Periods that are over and written are done with.
    const touched = new Set(batch.map((bucket) => bucket.marketId));
    for (const id of touched) {
      const market = this.#markets.get(id);
      if (!market) continue;
      market.written++;
      if (market.pending.length > 0) market.pending = market.pending.filter((b) => this.#dirty.has(b));
    }
    return batch.length;
  }
}
