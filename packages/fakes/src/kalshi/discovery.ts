/**
 * Public discovery endpoints (VENUES.md §2.2): series, events (optionally with nested markets),
 * markets with the documented filters and `mve_filter`, public trades, exchange status. Combo (MVE)
 * events are not listed by `/events`, as on the venue; their markets show up in `/markets`. Markets
 * settled before the historical cutoff are left out of every live listing and lookup (events and
 * series stay), as on the venue; `/historical/markets` serves them (historical.ts).
 */
import type { FastifyInstance } from "fastify";
import { boolParam, type Ctx, listParam, optInt, paginate, type Query } from "./context";
import { KalshiError } from "./engine";
import { eventPayload, marketPayload, seriesPayload, tradePayload } from "./payloads";
import type { KEvent, KMarket, MarketStatus } from "./state";

/** Filter vocabulary → object statuses (VENUES.md §2.2: the filter values differ from the object's). */
const MARKET_STATUS_FILTER: Record<string, MarketStatus[]> = {
  unopened: ["initialized"],
  open: ["active"],
  paused: ["inactive"],
  closed: ["closed"],
  settled: ["determined", "finalized"],
};

function eventStatus(e: KEvent): string {
  const s = e.markets.map((m) => m.status);
  if (s.some((x) => x === "active")) return "open";
  if (s.length > 0 && s.every((x) => x === "initialized")) return "unopened";
  if (s.length > 0 && s.every((x) => x === "finalized" || x === "determined")) return "settled";
  return "closed";
}

export function filterMarkets(ctx: Ctx, q: Query): KMarket[] {
  let list = ctx.state.marketOrder.filter((m) => !ctx.state.archivedMarket(m));
  const status = q["status"];
  if (status) {
    const allowed = MARKET_STATUS_FILTER[status];
    if (!allowed) throw new KalshiError(400, "invalid_parameters", `invalid status filter: ${status}`);
    list = list.filter((m) => allowed.includes(m.status));
  }
  const mve = q["mve_filter"];
  if (mve !== undefined && mve !== "") {
    if (mve !== "only" && mve !== "exclude")
      throw new KalshiError(400, "invalid_parameters", "mve_filter must be one of: only, exclude");
    list = list.filter((m) => (mve === "only" ? m.mve !== null : m.mve === null));
  }
  const events = listParam(q, "event_ticker");
  if (events) list = list.filter((m) => events.includes(m.eventTicker));
  const series = q["series_ticker"];
  if (series) list = list.filter((m) => m.seriesTicker === series);
  const tickers = listParam(q, "tickers");
  if (tickers) list = list.filter((m) => tickers.includes(m.ticker));
  const ranges: [string, (m: KMarket) => number, 1 | -1][] = [
    ["min_close_ts", (m) => m.closeMs, 1],
    ["max_close_ts", (m) => m.closeMs, -1],
    ["min_created_ts", (m) => m.createdMs, 1],
    ["max_created_ts", (m) => m.createdMs, -1],
    ["min_updated_ts", (m) => m.updatedMs, 1],
  ];
  for (const [name, get, dir] of ranges) {
    const ts = optInt(q, name);
    if (ts === null) continue;
    list = list.filter((m) => (dir === 1 ? get(m) >= ts * 1000 : get(m) <= ts * 1000));
  }
  return list;
}

export function registerDiscovery(app: FastifyInstance, ctx: Ctx): void {
  const { state } = ctx;
  const liveMarketsOf = (e: KEvent) => e.markets.filter((m) => !state.archivedMarket(m));

  app.get("/series", async (req) => {
    const q = req.query as Query;
    let list = [...state.series.values()];
    if (q["category"]) list = list.filter((s) => s.category === q["category"]);
    // "Filter series with metadata updated after this Unix timestamp (in seconds)" (SDK 3.30).
    const minUpdated = optInt(q, "min_updated_ts");
    if (minUpdated !== null) list = list.filter((s) => s.updatedMs > minUpdated * 1000);
    const withVolume = boolParam(q, "include_volume");
    return {
      series: list.map((s) =>
        seriesPayload(
          s,
          withVolume
            ? state.marketOrder.filter((m) => m.seriesTicker === s.ticker).reduce((n, m) => n + m.volume, 0)
            : null,
        ),
      ),
    };
  });

  app.get("/series/:series_ticker", async (req) => {
    const { series_ticker } = req.params as { series_ticker: string };
    const s = state.series.get(series_ticker);
    if (!s) throw new KalshiError(404, "not_found", "series not found");
    return { series: seriesPayload(s, null) };
  });

  app.get("/events", async (req) => {
    const q = req.query as Query;
    let list = [...state.events.values()].filter((e) => !e.isMve);
    const status = q["status"];
    if (status) {
      const wanted = status.split(",");
      for (const w of wanted)
        if (!["unopened", "open", "closed", "settled"].includes(w))
          throw new KalshiError(400, "invalid_parameters", `invalid status filter: ${w}`);
      list = list.filter((e) => wanted.includes(eventStatus(e)));
    }
    if (q["series_ticker"]) list = list.filter((e) => e.seriesTicker === q["series_ticker"]);
    const tickers = listParam(q, "tickers");
    if (tickers) list = list.filter((e) => tickers.includes(e.eventTicker));
    const minClose = optInt(q, "min_close_ts");
    if (minClose !== null) list = list.filter((e) => e.markets.some((m) => m.closeMs >= minClose * 1000));
    const minUpdated = optInt(q, "min_updated_ts");
    if (minUpdated !== null)
      list = list.filter((e) => e.markets.some((m) => m.updatedMs >= minUpdated * 1000));
    const nested = boolParam(q, "with_nested_markets");
    const { page, cursor } = paginate(list, q, 200, 200);
    const out: Record<string, unknown> = {
      events: page.map((e) => eventPayload(e, nested ? liveMarketsOf(e) : null)),
      cursor,
    };
    if (boolParam(q, "with_milestones")) out["milestones"] = [];
    return out;
  });

  app.get("/events/:event_ticker", async (req) => {
    const { event_ticker } = req.params as { event_ticker: string };
    const q = req.query as Query;
    const e = state.events.get(event_ticker);
    if (!e) throw new KalshiError(404, "not_found", "event not found");
    const nested = boolParam(q, "with_nested_markets");
    const markets = liveMarketsOf(e);
    return { event: eventPayload(e, nested ? markets : null), markets: markets.map(marketPayload) };
  });

  app.get("/markets", async (req) => {
    const q = req.query as Query;
    const { page, cursor } = paginate(filterMarkets(ctx, q), q, 100, 1000);
    return { markets: page.map(marketPayload), cursor };
  });

  app.get("/markets/trades", async (req) => {
    const q = req.query as Query;
    let list = [...state.trades].reverse();
    if (q["ticker"]) list = list.filter((t) => t.ticker === q["ticker"]);
    const minTs = optInt(q, "min_ts");
    if (minTs !== null) list = list.filter((t) => t.createdMs >= minTs * 1000);
    const maxTs = optInt(q, "max_ts");
    if (maxTs !== null) list = list.filter((t) => t.createdMs <= maxTs * 1000);
    const { page, cursor } = paginate(list, q, 100, 1000);
    return { trades: page.map(tradePayload), cursor };
  });

  app.get("/markets/:ticker", async (req) => {
    const { ticker } = req.params as { ticker: string };
    const m = state.liveMarket(ticker);
    if (!m) throw new KalshiError(404, "not_found", "market not found");
    return { market: marketPayload(m) };
  });

  app.get("/exchange/status", async () => ({ exchange_active: true, trading_active: true }));
}
