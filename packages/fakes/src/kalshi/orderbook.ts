/**
 * Order book and candlestick endpoints (VENUES.md §2.3). The orderbook is public here: the doc
 * notes a spec/docs conflict on auth, so signed calls are verified when the headers are present and
 * unsigned calls are served too. Markets past the historical cutoff 404 here (historical.ts).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { hasAuthHeaders } from "./auth";
import { candles, PERIODS } from "./candles";
import { boolParam, type Ctx, intParam, listParam, optInt, type Query, requireKey } from "./context";
import { KalshiError } from "./engine";
import { orderbookFp } from "./payloads";
import type { KMarket } from "./state";

const MAX_CANDLES = 5000;

/** The candlestick query (VENUES.md §2.3), shared by the live and the historical endpoints. */
export function candleQuery(q: Query): { start: number; end: number; period: number; latest: boolean } {
  const start = optInt(q, "start_ts");
  const end = optInt(q, "end_ts");
  const period = optInt(q, "period_interval");
  if (start === null || end === null || period === null)
    throw new KalshiError(400, "invalid_parameters", "start_ts, end_ts and period_interval are required");
  if (!(PERIODS as readonly number[]).includes(period))
    throw new KalshiError(400, "invalid_parameters", "period_interval must be one of 1, 60, 1440");
  if (end < start) throw new KalshiError(400, "invalid_parameters", "end_ts must not be before start_ts");
  if ((end - start) / (period * 60) > MAX_CANDLES)
    throw new KalshiError(400, "invalid_parameters", `at most ${MAX_CANDLES} candlesticks per request`);
  return { start, end, period, latest: boolParam(q, "include_latest_before_start") };
}

export function registerOrderbook(app: FastifyInstance, ctx: Ctx): void {
  const { state } = ctx;
  const optionalAuth = (req: FastifyRequest) => {
    if (hasAuthHeaders(req.headers)) requireKey(ctx, req);
  };

  app.get("/markets/orderbooks", async (req) => {
    optionalAuth(req);
    const tickers = listParam(req.query as Query, "tickers");
    if (!tickers) throw new KalshiError(400, "invalid_parameters", "tickers is required");
    return {
      orderbooks: tickers.map((t) => {
        const m = state.liveMarket(t);
        if (!m) throw new KalshiError(404, "not_found", `market ${t} not found`);
        return { ticker: t, orderbook_fp: orderbookFp(m, 0) };
      }),
    };
  });

  app.get("/markets/:ticker/orderbook", async (req) => {
    optionalAuth(req);
    const { ticker } = req.params as { ticker: string };
    const depth = intParam(req.query as Query, "depth", 0, 0, 100);
    const m = state.liveMarket(ticker);
    if (!m) throw new KalshiError(404, "not_found", "market not found");
    return { orderbook_fp: orderbookFp(m, depth) };
  });

  const candleArgs = candleQuery;
  const series = (m: KMarket, a: ReturnType<typeof candleArgs>) =>
    candles(state.seed, m, a.period, a.start, a.end, state.nowMs(), a.latest);

  app.get("/series/:series_ticker/markets/:ticker/candlesticks", async (req) => {
    const { series_ticker, ticker } = req.params as { series_ticker: string; ticker: string };
    const a = candleArgs(req.query as Query);
    const m = state.liveMarket(ticker);
    if (!m || m.seriesTicker !== series_ticker) throw new KalshiError(404, "not_found", "market not found");
    return { ticker, candlesticks: series(m, a) };
  });

  app.get("/markets/candlesticks", async (req) => {
    const q = req.query as Query;
    const tickers = listParam(q, "market_tickers");
    if (!tickers) throw new KalshiError(400, "invalid_parameters", "market_tickers is required");
    const a = candleArgs(q);
    return {
      markets: tickers.map((t) => {
        const m = state.liveMarket(t);
        if (!m) throw new KalshiError(404, "not_found", `market ${t} not found`);
        return { market_ticker: t, candlesticks: series(m, a) };
      }),
    };
  });
}
