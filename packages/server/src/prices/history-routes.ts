/** `GET /v1/prices/history`: candles of one market (spec 2.4, 4.2). HTTP only; rules in history.ts. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { validationError } from "../http/errors";
import { isoFromMs } from "../infra/clock";
import { microsToNumber } from "../venues/decimal";
import { INTERVAL_MS, type Interval } from "./candles";
import type { HistoryCandle, HistoryCoverage, PriceHistoryService } from "./history";
import {
  DEFAULT_INTERVAL,
  DEFAULT_LIMIT,
  HistoryQuerySchema,
  HistoryResponse,
  parseIsoTimestamp,
} from "./history-schemas";

export interface HistoryRoutesDeps {
  history: PriceHistoryService;
}

const NOT_ISO = "must be an ISO 8601 date or date-time with a zone, e.g. 2026-11-22T12:00:00Z";

function candleView(candle: HistoryCandle) {
  return {
    timestamp: isoFromMs(candle.start),
    open: microsToNumber(candle.open),
    high: microsToNumber(candle.high),
    low: microsToNumber(candle.low),
    close: microsToNumber(candle.close),
    volume: microsToNumber(candle.volume),
  };
}

/** 720 -> "12h", 1440 -> "1d", 90 -> "90m". */
function minutesLabel(minutes: number): string {
  if (minutes % 1440 === 0) return `${minutes / 1440}d`;
  if (minutes % 60 === 0) return `${minutes / 60}h`;
  return `${minutes}m`;
}

function coverageView(coverage: HistoryCoverage, interval: Interval) {
  return {
    from: coverage.from === null ? null : isoFromMs(coverage.from),
    to: coverage.to === null ? null : isoFromMs(coverage.to),
    resolution:
      coverage.coarserMinutes !== null && coverage.coarserMinutes * 60_000 > INTERVAL_MS[interval]
        ? minutesLabel(coverage.coarserMinutes)
        : interval,
    source: coverage.source,
    complete: coverage.complete,
    reason: coverage.reason,
  };
}

export const priceHistoryRoutes: FastifyPluginAsyncTypebox<HistoryRoutesDeps> = async (app, deps) => {
  app.get(
    "/v1/prices/history",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["prices"],
        summary: "Price candles of one market, oldest first",
        description:
          "Candles whose period starts in [start, end). With `start`: the first `limit` periods from it; " +
          "without: the last `limit` periods before `end` (default: through the period under way). " +
          "`meta.start`/`meta.end` give the range covered; `meta.end` is the next page's `start`. A period " +
          "without any update repeats the previous close with volume 0 (nothing before the first known " +
          "candle). History older than what crossbook built live is fetched from the venue once. " +
          "`meta.coverage` says which part of the range has candles, what they rest on (crossbook's own " +
          "prices, the venue's history, or both), and, when `complete` is false, why (`reason`): the venue " +
          "failed, serves the market only at a coarser `resolution`, has no prices for the start of the " +
          "range, or the range begins before the market opened.",
        querystring: HistoryQuerySchema,
        response: { 200: HistoryResponse },
      },
    },
    async (request) => {
      const { market_id, interval = DEFAULT_INTERVAL, limit = DEFAULT_LIMIT, start, end } = request.query;
      const fields: Record<string, string> = {};
      const startMs = start === undefined ? undefined : parseIsoTimestamp(start);
      const endMs = end === undefined ? undefined : parseIsoTimestamp(end);
      if (start !== undefined && startMs === undefined) fields["query.start"] = NOT_ISO;
      if (end !== undefined && endMs === undefined) fields["query.end"] = NOT_ISO;
      if (startMs !== undefined && endMs !== undefined && startMs >= endMs) {
        fields["query.end"] = "must be later than start";
      }
      if (Object.keys(fields).length > 0) throw validationError(fields);
      const result = await deps.history.history({
        marketId: market_id,
        interval,
        limit,
        ...(startMs !== undefined ? { start: startMs } : {}),
        ...(endMs !== undefined ? { end: endMs } : {}),
      });
      return {
        success: true as const,
        data: result.candles.map(candleView),
        meta: {
          market_id,
          interval,
          start: isoFromMs(result.start),
          end: isoFromMs(result.end),
          coverage: coverageView(result.coverage, interval),
        },
      };
    },
  );
};
