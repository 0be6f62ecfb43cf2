/**
 * Deterministic candlestick history (VENUES.md §2.3). The fake has no real past, so each market gets
 * a smooth price path that is a pure function of (seed, ticker, unix minute): the same request always
 * yields the same candles, and a 60-minute candle agrees with the 1-minute path it summarises.
 */
import type { KMarket } from "./state";
import { COUNT_SCALE, fmtDollars, fmtFp, hash32, PRICE_SCALE } from "./units";

export const PERIODS = [1, 60, 1440] as const;

function noise(seed: number, ticker: string, minute: number): number {
  return (hash32(`${seed}:${ticker}:${minute}`) / 0xffffffff) * 2 - 1;
}

/** YES price (units, on the market's tick) at a unix minute. */
export function pathPrice(seed: number, m: KMarket, minute: number): number {
  const phase = (hash32(`${seed}:${m.ticker}:phase`) % 1000) / 100;
  const p =
    m.anchor +
    0.06 * Math.sin(minute / 4320 + phase) +
    0.02 * Math.sin(minute / 300 + phase * 2) +
    0.004 * noise(seed, m.ticker, minute);
  const units = Math.round((p * PRICE_SCALE) / m.tick) * m.tick;
  return Math.min(Math.max(units, m.tick), PRICE_SCALE - m.tick);
}

interface Ohlc {
  open: number;
  high: number;
  low: number;
  close: number;
  mean: number;
}

function ohlc(values: number[]): Ohlc {
  const open = values[0]!;
  const close = values[values.length - 1]!;
  const mean = Math.round(values.reduce((a, b) => a + b, 0) / values.length);
  return { open, close, high: Math.max(...values), low: Math.min(...values), mean };
}

const ohlcDollars = (o: Ohlc) => ({
  open_dollars: fmtDollars(o.open),
  low_dollars: fmtDollars(o.low),
  high_dollars: fmtDollars(o.high),
  close_dollars: fmtDollars(o.close),
});

/** One candle ending at `endTs` (unix seconds, a multiple of the period). */
export function candle(seed: number, m: KMarket, periodMin: number, endTs: number): Record<string, unknown> {
  const endMin = Math.floor(endTs / 60);
  const samples = Math.min(periodMin, 12);
  const step = periodMin / samples;
  const minutes: number[] = [];
  for (let i = samples - 1; i >= 0; i--) minutes.push(endMin - Math.floor(i * step));
  const prices = minutes.map((mm) => pathPrice(seed, m, mm));
  const half = m.tick * (1 + (hash32(`${seed}:${m.ticker}:spread`) % 2));
  const bids = prices.map((p) => Math.max(p - half, 0));
  const asks = prices.map((p) => Math.min(p + half, PRICE_SCALE));
  const volumeSeed = hash32(`${seed}:${m.ticker}:vol:${periodMin}:${endTs}`);
  const traded = volumeSeed % 10 >= 3;
  const volume = traded ? (1 + (volumeSeed % (periodMin * 40))) * COUNT_SCALE : 0;
  const previous = pathPrice(seed, m, endMin - periodMin);
  const price: Record<string, string> = { previous_dollars: fmtDollars(previous) };
  if (traded) {
    const o = ohlc(prices);
    Object.assign(price, ohlcDollars(o), {
      mean_dollars: fmtDollars(o.mean),
      min_dollars: fmtDollars(o.low),
      max_dollars: fmtDollars(o.high),
    });
  }
  return {
    end_period_ts: endTs,
    yes_bid: ohlcDollars(ohlc(bids)),
    yes_ask: ohlcDollars(ohlc(asks)),
    price,
    volume_fp: fmtFp(volume),
    open_interest_fp: fmtFp(m.openInterest),
  };
}

/** Candles with `start_ts < end_period_ts <= end_ts`, clipped to the market's open time and now. */
export function candles(
  seed: number,
  m: KMarket,
  periodMin: number,
  startTs: number,
  endTs: number,
  nowMs: number,
  includeLatestBeforeStart: boolean,
): Record<string, unknown>[] {
  const p = periodMin * 60;
  const lastEnd = Math.floor(Math.min(endTs, Math.floor(nowMs / 1000)) / p) * p;
  const openTs = Math.floor(m.openMs / 1000);
  let first = Math.floor(startTs / p) * p + p;
  if (first < openTs) first = Math.ceil(openTs / p) * p;
  const out: Record<string, unknown>[] = [];
  if (includeLatestBeforeStart && first - p > openTs) out.push(candle(seed, m, periodMin, first - p));
  for (let t = first; t <= lastEnd; t += p) out.push(candle(seed, m, periodMin, t));
  return out;
}

/**
 * A live candlestick in the shape `GET /historical/markets/{ticker}/candlesticks` answers
 * (kalshi-typescript 3.30 `MarketCandlestickHistorical`): the same figures under plain names
 * (`open`, not `open_dollars`; `volume`, not `volume_fp`), trade prices null when nothing traded.
 */
export function historicalCandle(live: Record<string, unknown>): Record<string, unknown> {
  const plain = (o: unknown, keys: readonly string[]) => {
    const src = (o ?? {}) as Record<string, string | undefined>;
    return Object.fromEntries(keys.map((k) => [k, src[`${k}_dollars`] ?? null]));
  };
  return {
    end_period_ts: live["end_period_ts"],
    yes_bid: plain(live["yes_bid"], ["open", "low", "high", "close"]),
    yes_ask: plain(live["yes_ask"], ["open", "low", "high", "close"]),
    price: plain(live["price"], ["open", "low", "high", "close", "mean", "previous"]),
    volume: live["volume_fp"],
    open_interest: live["open_interest_fp"],
  };
}
