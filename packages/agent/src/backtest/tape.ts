/** The candles of a run, merged across markets in time order, held column by column. */
import type { MarketCandle } from "./types.js";

/**
 * The columns of a `CandleTape`.
 *
 * @example
 * new CandleTape({ markets: ["kalshi:A"], time: Float64Array.of(0), market: Uint32Array.of(0), open: Float64Array.of(0.5),
 *   high: Float64Array.of(0.5), low: Float64Array.of(0.5), close: Float64Array.of(0.5), volume: Float64Array.of(0) });
 */
export interface TapeColumns {
  /** Market ids; `market` holds indexes into this list. */
  markets: readonly string[];
  /** Candle start, epoch ms. */
  time: Float64Array;
  market: Uint32Array;
  open: Float64Array;
  high: Float64Array;
  low: Float64Array;
  close: Float64Array;
  volume: Float64Array;
}

/**
 * Epoch ms of a candle timestamp (ISO 8601 string or epoch ms), NaN when it is neither.
 *
 * @example
 * timeOf("2026-01-01T00:00:00Z"); // 1767225600000
 */
export function timeOf(value: string | number | Date): number {
  if (typeof value === "number") return Number.isFinite(value) ? value : Number.NaN;
  if (value instanceof Date) return value.getTime();
  if (typeof value !== "string" || value.trim() === "") return Number.NaN;
  const trimmed = value.trim();
  return /^-?\d+$/.test(trimmed) ? Number(trimmed) : Date.parse(trimmed);
}

/**
 * ISO 8601 of an epoch-ms time: how the replay's records and views state their times.
 *
 * @example
 * isoOf(1767225600000); // "2026-01-01T00:00:00.000Z"
 */
export function isoOf(time: number): string {
  return new Date(time).toISOString();
}

/**
 * Candles of several markets in one time-ordered tape, stored in typed arrays so a replay touches
 * no objects: ordered by time, then by the market's place in `markets`; one candle per market and
 * time. Build it with `CandleTape.fromCandles`, or from columns you generated yourself.
 *
 * @example
 * const tape = CandleTape.fromCandles(
 *   [{ market_id: "kalshi:A", timestamp: "2026-01-01T00:00:00Z", open: 0.4, high: 0.5, low: 0.4, close: 0.45, volume: 10 }],
 *   ["kalshi:A"],
 * );
 * tape.length; // 1
 */
export class CandleTape implements TapeColumns {
  readonly markets: readonly string[];
  readonly time: Float64Array;
  readonly market: Uint32Array;
  readonly open: Float64Array;
  readonly high: Float64Array;
  readonly low: Float64Array;
  readonly close: Float64Array;
  readonly volume: Float64Array;

  /** Wraps columns as they are (no copy); throws when they are not ordered by (time, market). */
  constructor(columns: TapeColumns) {
    const n = columns.time.length;
    for (const name of ["market", "open", "high", "low", "close", "volume"] as const) {
      if (columns[name].length !== n)
        throw new RangeError(`CandleTape: column ${name} has ${columns[name].length} rows, time has ${n}`);
    }
    const { time, market } = columns;
    const count = columns.markets.length;
    for (let i = 0; i < n; i++) {
      if (market[i]! >= count)
        throw new RangeError(`CandleTape: row ${i} names market #${market[i]}, there are ${count}`);
      if (i > 0 && (time[i]! < time[i - 1]! || (time[i] === time[i - 1] && market[i]! <= market[i - 1]!))) {
        throw new RangeError(`CandleTape: row ${i} is out of (time, market) order`);
      }
    }
    this.markets = columns.markets;
    this.time = time;
    this.market = market;
    this.open = columns.open;
    this.high = columns.high;
    this.low = columns.low;
    this.close = columns.close;
    this.volume = columns.volume;
  }

  /** Number of candles. */
  get length(): number {
    return this.time.length;
  }

  /**
   * Merges candles (any order) into a tape of `markets`: candles of other markets are dropped;
   * when a market has two candles for one time, the later one in the input wins. Throws on a
   * candle without a valid timestamp or with prices outside 0-1.
   *
   * @example
   * const tape = CandleTape.fromCandles(await loadMyCandles(), ["kalshi:A", "polymarket:0xabc"]);
   */
  static fromCandles(candles: Iterable<MarketCandle>, markets: readonly string[]): CandleTape {
    const indexOf = new Map<string, number>();
    markets.forEach((id, index) => {
      if (!indexOf.has(id)) indexOf.set(id, index);
    });
    const kept: MarketCandle[] = [];
    const times: number[] = [];
    const marketIndex: number[] = [];
    for (const candle of candles) {
      const m = indexOf.get(candle.market_id);
      if (m === undefined) continue;
      const t = timeOf(candle.timestamp);
      if (!Number.isFinite(t)) {
        throw new RangeError(
          `candle of ${candle.market_id}: timestamp ${JSON.stringify(candle.timestamp)} is not ISO 8601 or epoch ms`,
        );
      }
      checkCandle(candle);
      kept.push(candle);
      times.push(t);
      marketIndex.push(m);
    }
    const order = Array.from({ length: kept.length }, (_, i) => i);
    order.sort((a, b) => times[a]! - times[b]! || marketIndex[a]! - marketIndex[b]! || a - b);
    // Keep the last of equal (time, market) rows.
    const rows: number[] = [];
    for (let k = 0; k < order.length; k++) {
      const i = order[k]!;
      const next = order[k + 1];
      if (next !== undefined && times[next] === times[i] && marketIndex[next] === marketIndex[i]) continue;
      rows.push(i);
    }
    const n = rows.length;
    const columns: TapeColumns = {
      markets: [...markets],
      time: new Float64Array(n),
      market: new Uint32Array(n),
      open: new Float64Array(n),
      high: new Float64Array(n),
      low: new Float64Array(n),
      close: new Float64Array(n),
      volume: new Float64Array(n),
    };
    for (let r = 0; r < n; r++) {
      const i = rows[r]!;
      const c = kept[i]!;
      columns.time[r] = times[i]!;
      columns.market[r] = marketIndex[i]!;
      columns.open[r] = c.open;
      columns.high[r] = c.high;
      columns.low[r] = c.low;
      columns.close[r] = c.close;
      columns.volume[r] = c.volume ?? 0;
    }
    return new CandleTape(columns);
  }

  /**
   * The candles of `markets` (in that order) whose start is in [from, to). Returns this tape when
   * nothing would change.
   *
   * @example
   * const january = tape.select(["kalshi:A"], Date.UTC(2026, 0, 1), Date.UTC(2026, 1, 1));
   */
  select(markets: readonly string[], from: number, to: number): CandleTape {
    const n = this.length;
    const sameMarkets =
      markets.length === this.markets.length && markets.every((id, i) => id === this.markets[i]);
    if (sameMarkets && (n === 0 || (this.time[0]! >= from && this.time[n - 1]! < to))) return this;
    const remap = new Int32Array(this.markets.length).fill(-1);
    const wanted = new Map<string, number>();
    markets.forEach((id, index) => {
      if (!wanted.has(id)) wanted.set(id, index);
    });
    this.markets.forEach((id, index) => {
      remap[index] = wanted.get(id) ?? -1;
    });
    const rows: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = this.time[i]!;
      if (t >= from && t < to && remap[this.market[i]!]! >= 0) rows.push(i);
    }
    // Remapping can change the order of markets within one time: re-sort within equal times.
    rows.sort((a, b) => this.time[a]! - this.time[b]! || remap[this.market[a]!]! - remap[this.market[b]!]!);
    const count = rows.length;
    const columns: TapeColumns = {
      markets: [...markets],
      time: new Float64Array(count),
      market: new Uint32Array(count),
      open: new Float64Array(count),
      high: new Float64Array(count),
      low: new Float64Array(count),
      close: new Float64Array(count),
      volume: new Float64Array(count),
    };
    for (let r = 0; r < count; r++) {
      const i = rows[r]!;
      columns.time[r] = this.time[i]!;
      columns.market[r] = remap[this.market[i]!]!;
      columns.open[r] = this.open[i]!;
      columns.high[r] = this.high[i]!;
      columns.low[r] = this.low[i]!;
      columns.close[r] = this.close[i]!;
      columns.volume[r] = this.volume[i]!;
    }
    return new CandleTape(columns);
  }

  /**
   * Every candle as a plain object, in tape order.
   *
   * @example
   * for (const c of tape) console.log(c.market_id, c.timestamp, c.close);
   */
  *[Symbol.iterator](): IterableIterator<MarketCandle & { timestamp: string }> {
    for (let i = 0; i < this.length; i++) yield this.candle(i);
  }

  /**
   * The candle at row `i` as a plain object (for export; the replay never builds these).
   *
   * @example
   * const first = tape.candle(0); // { market_id, timestamp, open, high, low, close, volume }
   */
  candle(i: number): MarketCandle & { timestamp: string } {
    if (i < 0 || i >= this.length) throw new RangeError(`row ${i} of ${this.length}`);
    return {
      market_id: this.markets[this.market[i]!]!,
      timestamp: new Date(this.time[i]!).toISOString(),
      open: this.open[i]!,
      high: this.high[i]!,
      low: this.low[i]!,
      close: this.close[i]!,
      volume: this.volume[i]!,
    };
  }
}

function checkCandle(c: MarketCandle): void {
  const where = `candle of ${c.market_id} at ${String(c.timestamp)}`;
  for (const key of ["open", "high", "low", "close"] as const) {
    const v = c[key];
    if (typeof v !== "number" || !(v >= 0 && v <= 1))
      throw new RangeError(`${where}: ${key} ${String(v)} is not a price in 0-1`);
  }
  if (c.low > c.high) throw new RangeError(`${where}: low ${c.low} above high ${c.high}`);
  const volume = c.volume ?? 0;
  if (typeof volume !== "number" || !Number.isFinite(volume) || volume < 0) {
    throw new RangeError(`${where}: volume ${String(c.volume)} is not a number ≥ 0`);
  }
}
