/** `GET /v1/prices/history`: candles of one market (spec 2.4, 4.2). HTTP only; rules in history.ts. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { validationError } from "../http/errors";
import { isoFromMs } from "../infra/clock";
import { microsToNumber } from "../venues/decimal";
import type { HistoryCandle, PriceHistoryService } from "./history";
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
          "candle). History older than what crossbook built live is fetched from the venue once.",
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
        meta: { market_id, interval, start: isoFromMs(result.start), end: isoFromMs(result.end) },
      };
    },
  );
};
