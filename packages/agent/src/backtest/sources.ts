/** Candle sources: a local file of candles, or the service's price history paged by time. */
import { createReadStream } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { type CandleTape, timeOf } from "./tape.js";
import type {
  ApiCandle,
  CandleRequest,
  CandleSource,
  FetchHistory,
  HistoryPage,
  Interval,
  MarketCandle,
} from "./types.js";

/**
 * Milliseconds in one candle of each interval.
 *
 * @example
 * INTERVAL_MS["4h"]; // 14_400_000
 */
export const INTERVAL_MS: Readonly<Record<Interval, number>> = {
  "1m": 60_000,
  "5m": 300_000,
  "15m": 900_000,
  "1h": 3_600_000,
  "4h": 14_400_000,
  "1d": 86_400_000,
  "1w": 604_800_000,
};

/**
 * Most candles one `/v1/prices/history` call returns.
 *
 * @example
 * historySource(fetchHistory, { pageSize: HISTORY_PAGE_LIMIT });
 */
export const HISTORY_PAGE_LIMIT = 1000;

function wanted(request: CandleRequest): (marketId: unknown, time: number) => boolean {
  const markets = new Set(request.markets);
  return (marketId, time) =>
    typeof marketId === "string" && markets.has(marketId) && time >= request.from && time < request.to;
}

/** The candles of one parsed JSON value: a candle, an array, or a history response `{data, meta}`. */
function candlesOfValue(value: unknown, where: string, out: (candle: MarketCandle) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) candlesOfValue(item, where, out);
    return;
  }
  if (value === null || typeof value !== "object")
    throw new SyntaxError(`${where}: expected a candle object, got ${JSON.stringify(value)}`);
  const record = value as Record<string, unknown>;
  if (Array.isArray(record["data"])) {
    const meta = record["meta"] as { market_id?: unknown } | undefined;
    const marketId = typeof meta?.market_id === "string" ? meta.market_id : undefined;
    for (const item of record["data"] as Array<Record<string, unknown>>) {
      out(
        (marketId && item.market_id === undefined
          ? { ...item, market_id: marketId }
          : item) as unknown as MarketCandle,
      );
    }
    return;
  }
  if (typeof record["market_id"] !== "string") throw new SyntaxError(`${where}: candle without a market_id`);
  out(record as unknown as MarketCandle);
}

/**
 * Candles from a local file. Formats, told apart by content (`.jsonl`/`.ndjson` are always read
 * line by line, streamed):
 *
 * - **JSONL**: one candle per line, `{"market_id","timestamp","open","high","low","close","volume"}`:
 *   the API's candle shape plus `market_id`; `timestamp` is ISO 8601 (the period's start) or
 *   epoch ms; prices are YES, 0-1; `volume` may be omitted (0). Blank lines are skipped.
 * - **JSON**: an array of such candles, or a `GET /v1/prices/history` response body saved as is
 *   (`{"data": [...], "meta": {"market_id": …}}`), or an array of those.
 *
 * Only the candles of the run's markets in [from, to) are kept.
 *
 * @example
 * const result = await backtest({ strategy, markets: ["kalshi:A"], interval: "1h", from: "2026-01-01",
 *   to: "2026-02-01", initialCash: 1000, source: fileSource("candles.jsonl") });
 */
export function fileSource(path: string): CandleSource {
  return {
    async load(request) {
      const keep = wanted(request);
      const candles: MarketCandle[] = [];
      const add = (candle: MarketCandle) => {
        if (keep(candle.market_id, timeOf(candle.timestamp))) candles.push(candle);
      };
      if (/\.(jsonl|ndjson)$/i.test(path)) {
        await readLines(path, add);
        return candles;
      }
      const text = await readFile(path, "utf8");
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        if (!text.trimStart().startsWith("{"))
          throw new SyntaxError(`${path}: not JSON: ${(error as Error).message}`);
        parseLines(text.split("\n"), path, add);
        return candles;
      }
      candlesOfValue(value, path, add);
      return candles;
    },
  };
}

function parseLine(line: string, where: string, add: (candle: MarketCandle) => void): void {
  const trimmed = line.trim();
  if (trimmed === "") return;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (error) {
    throw new SyntaxError(`${where}: ${(error as Error).message}`);
  }
  candlesOfValue(value, where, add);
}

function parseLines(lines: string[], path: string, add: (candle: MarketCandle) => void): void {
  lines.forEach((line, i) => {
    parseLine(line, `${path}:${i + 1}`, add);
  });
}

async function readLines(path: string, add: (candle: MarketCandle) => void): Promise<void> {
  const lines = createInterface({
    input: createReadStream(path, "utf8"),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let n = 0;
  for await (const line of lines) {
    n++;
    parseLine(line, `${path}:${n}`, add);
  }
}

/**
 * Writes candles as JSONL in `fileSource`'s format (ISO timestamps), so a history fetched once
 * can be replayed offline.
 *
 * @example
 * const candles = await historySource(fetchHistory).load({ markets, interval: "1h", from, to });
 * await saveCandles("candles.jsonl", candles);
 */
export async function saveCandles(path: string, candles: Iterable<MarketCandle> | CandleTape): Promise<void> {
  const lines: string[] = [];
  const push = (c: MarketCandle) => {
    const timestamp = typeof c.timestamp === "number" ? new Date(c.timestamp).toISOString() : c.timestamp;
    lines.push(
      JSON.stringify({
        market_id: c.market_id,
        timestamp,
        open: c.open,
        high: c.high,
        low: c.low,
        close: c.close,
        volume: c.volume,
      }),
    );
  };
  for (const c of candles) push(c);
  await writeFile(path, lines.length ? `${lines.join("\n")}\n` : "");
}

/**
 * Options of `historySource`.
 *
 * @example
 * historySource(fetchHistory, { concurrency: 2, pageSize: 500 });
 */
export interface HistorySourceOptions {
  /** Markets fetched at once (default 4). */
  concurrency?: number;
  /** Candles asked per call (default and most: 1000). */
  pageSize?: number;
}

/**
 * Candles from the service's `GET /v1/prices/history`, through the call you pass (the client
 * passes its own). Each market is paged forward by time, `pageSize` (1000) candles per call, from
 * `from` until `to`: the next page starts at the response's `meta.end` (else one interval after the
 * last candle), and a market ends when a page reaches `to` or comes back empty without `meta.end`.
 *
 * @example
 * const source = historySource((id, interval, start, end, limit) =>
 *   client.prices.history({ market_id: id, interval, start, end, limit }));
 */
export function historySource(fetchHistory: FetchHistory, options: HistorySourceOptions = {}): CandleSource {
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
  const pageSize = Math.min(
    HISTORY_PAGE_LIMIT,
    Math.max(1, Math.floor(options.pageSize ?? HISTORY_PAGE_LIMIT)),
  );
  return {
    async load(request) {
      const markets = [...new Set(request.markets)];
      const perMarket: MarketCandle[][] = markets.map(() => []);
      let next = 0;
      const worker = async () => {
        while (next < markets.length) {
          const index = next++;
          perMarket[index] = await fetchMarket(fetchHistory, markets[index]!, request, pageSize);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, markets.length) }, worker));
      return perMarket.flat();
    },
  };
}

async function fetchMarket(
  fetchHistory: FetchHistory,
  marketId: string,
  request: CandleRequest,
  pageSize: number,
): Promise<MarketCandle[]> {
  const out: MarketCandle[] = [];
  const step = INTERVAL_MS[request.interval];
  const endIso = new Date(request.to).toISOString();
  let start = request.from;
  while (start < request.to) {
    const page: HistoryPage | readonly ApiCandle[] = await fetchHistory(
      marketId,
      request.interval,
      new Date(start).toISOString(),
      endIso,
      pageSize,
    );
    const data = Array.isArray(page) ? (page as readonly ApiCandle[]) : (page as HistoryPage).data;
    const metaEnd = Array.isArray(page) ? undefined : (page as HistoryPage).meta?.end;
    let last = Number.NaN;
    for (const candle of data) {
      const t = timeOf(candle.timestamp);
      if (!(t >= start && t < request.to)) continue;
      out.push({ ...candle, market_id: marketId });
      last = t;
    }
    let following = metaEnd !== undefined ? timeOf(metaEnd) : Number.NaN;
    if (!Number.isFinite(following)) {
      if (data.length < pageSize || !Number.isFinite(last)) break;
      following = last + step;
    }
    if (following <= start) break; // the service has nothing further (e.g. `to` is in the future)
    start = following;
  }
  return out;
}
