/**
 * Kalshi's historical tier (kalshi-typescript 3.30 `HistoricalApi`; docs.kalshi.com
 * getting_started/historical_data): `GET /historical/cutoff` and, for what lies before it, markets,
 * their candlesticks, the member's fills and orders. The live endpoints stop serving those records
 * (discovery.ts, orderbook.ts, portfolio.ts), so a client that never looks here sees them vanish.
 * The cutoff is `state.historicalCutoffMs` (one timestamp for every partition; null = nothing
 * archived, served as the Unix epoch).
 */
import type { FastifyInstance } from "fastify";
import { candles, historicalCandle } from "./candles";
import { type Ctx, listParam, paginate, type Query, requireKey } from "./context";
import { KalshiError } from "./engine";
import { candleQuery } from "./orderbook";
import { fillPayload, marketPayload, orderPayload } from "./payloads";
import { filterFills, filterOrders } from "./portfolio";
import { isoFromMs } from "./units";

export function registerHistorical(app: FastifyInstance, ctx: Ctx): void {
  const { state } = ctx;
  const archived = (ticker: string) => {
    const m = state.markets.get(ticker);
    if (!m || !state.archivedMarket(m)) throw new KalshiError(404, "not_found", "market not found");
    return m;
  };

  app.get("/historical/cutoff", async () => {
    const at = isoFromMs(state.historicalCutoffMs ?? 0);
    return {
      market_settled_ts: at,
      trades_created_ts: at,
      orders_updated_ts: at,
      market_positions_last_updated_ts: at,
    };
  });

  app.get("/historical/markets", async (req) => {
    const q = req.query as Query;
    const tickers = listParam(q, "tickers");
    const event = q["event_ticker"] || undefined;
    const series = q["series_ticker"] || undefined;
    if ([tickers, event, series].filter(Boolean).length > 1)
      throw new KalshiError(
        400,
        "invalid_parameters",
        "tickers, event_ticker and series_ticker are exclusive",
      );
    const mve = q["mve_filter"];
    if (mve !== undefined && mve !== "" && mve !== "exclude")
      throw new KalshiError(400, "invalid_parameters", "mve_filter must be exclude");
    let list = state.marketOrder.filter((m) => state.archivedMarket(m));
    if (tickers) list = list.filter((m) => tickers.includes(m.ticker));
    if (event) list = list.filter((m) => m.eventTicker === event);
    if (series) list = list.filter((m) => m.seriesTicker === series);
    if (mve === "exclude") list = list.filter((m) => m.mve === null);
    const { page, cursor } = paginate(list, q, 100, 1000);
    return { markets: page.map(marketPayload), cursor };
  });

  app.get("/historical/markets/:ticker", async (req) => {
    const { ticker } = req.params as { ticker: string };
    return { market: marketPayload(archived(ticker)) };
  });

  app.get("/historical/markets/:ticker/candlesticks", async (req) => {
    const { ticker } = req.params as { ticker: string };
    const a = candleQuery(req.query as Query);
    const m = archived(ticker);
    // Nothing after the settlement: the path stops where the market did.
    const until = Math.min(state.nowMs(), m.settledMs ?? state.nowMs());
    const list = candles(state.seed, m, a.period, a.start, a.end, until, a.latest);
    return { ticker, candlesticks: list.map(historicalCandle) };
  });

  app.get("/historical/fills", async (req) => {
    const userId = requireKey(ctx, req).userId;
    const q = req.query as Query;
    const list = filterFills(
      state.fills.filter((f) => f.userId === userId && state.archivedFill(f)),
      q,
    );
    const { page, cursor } = paginate(list, q, 100, 1000);
    return { fills: page.map(fillPayload), cursor };
  });

  app.get("/historical/orders", async (req) => {
    const userId = requireKey(ctx, req).userId;
    const q = req.query as Query;
    const list = filterOrders(
      state,
      [...state.orders.values()].filter((o) => o.userId === userId && state.archivedOrder(o)),
      q,
    );
    const { page, cursor } = paginate(list, q, 100, 1000);
    return { orders: page.map(orderPayload), cursor };
  });
}
