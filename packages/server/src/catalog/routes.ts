/** Markets from the catalog and the venues behind them. */
import { feesView } from "@crossbook/fees";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { Envelope, ok, PagedEnvelope, PageMeta, pageMeta } from "../http/envelope";
import { AppError } from "../http/errors";
import type { Db } from "../infra/db/store";
import { microsToNumber } from "../venues/decimal";
import type { VenueId } from "../venues/model";
import type { MarketDataVenue } from "../venues/venue";
import { storedSchedule } from "./fees";
import * as repo from "./repo";
import { MarketListQuery, MarketParams, MarketSchema, VenueSchema } from "./schemas";
import type { CatalogService } from "./service";

const num = (v: number | null) => (v === null ? null : microsToNumber(v));

function feesOf(row: repo.MarketRow) {
  const schedule = storedSchedule(row);
  return schedule ? feesView(schedule) : null;
}

export function marketView(row: repo.MarketRow) {
  const outcomes = JSON.parse(row.outcomes) as {
    yes: { label: string; venueTokenId: string };
    no: { label: string; venueTokenId: string };
  };
  return {
    id: row.id,
    venue: row.venue as VenueId,
    venue_market_id: row.venue_market_id,
    event_id: row.event_id,
    title: row.title,
    question: row.question,
    rules: row.rules,
    settlement_source: row.settlement_source,
    outcomes: {
      yes: { label: outcomes.yes.label, token_id: outcomes.yes.venueTokenId },
      no: { label: outcomes.no.label, token_id: outcomes.no.venueTokenId },
    },
    status: row.status as "open" | "closed" | "resolved",
    resolution: row.resolution as "yes" | "no" | "void" | null,
    open_time: row.open_time,
    close_time: row.close_time,
    tick_size: microsToNumber(row.tick_size),
    min_size: microsToNumber(row.min_size),
    volume: microsToNumber(row.volume),
    volume_24h: microsToNumber(row.volume_24h),
    liquidity: microsToNumber(row.liquidity),
    url: row.url,
    last_price: num(row.last_price),
    best_bid: num(row.best_bid),
    best_ask: num(row.best_ask),
    fees: feesOf(row),
    updated_at: row.updated_at,
  };
}

export interface CatalogRoutesDeps {
  db: Db;
  catalog: CatalogService;
  venues: ReadonlyMap<VenueId, MarketDataVenue>;
  /** Base URLs actually configured for each venue. */
  urlsInUse: Record<string, Record<string, string>>;
}

export const catalogRoutes: FastifyPluginAsyncTypebox<CatalogRoutesDeps> = async (app, deps) => {
  app.get(
    "/v1/markets",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["markets"],
        summary: "Markets from every enabled venue, filtered and paginated",
        querystring: MarketListQuery,
        response: { 200: PagedEnvelope(MarketSchema, PageMeta) },
      },
    },
    async (request) => {
      const { limit = 50, offset = 0, status = "open", venue, event_id, q } = request.query;
      const { rows, total } = await repo.listMarkets(
        deps.db,
        {
          ...(venue ? { venue } : {}),
          ...(status !== "all" ? { status } : {}),
          ...(event_id ? { eventId: event_id } : {}),
          ...(q ? { q } : {}),
        },
        { limit, offset },
      );
      return { success: true as const, data: rows.map(marketView), meta: pageMeta(offset, limit, total) };
    },
  );

  app.get(
    "/v1/markets/:market_id",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["markets"],
        summary: "One market by id (polymarket:<conditionId> or kalshi:<ticker>)",
        params: MarketParams,
        response: { 200: Envelope(MarketSchema) },
      },
    },
    async (request) => {
      const row = await repo.findMarket(deps.db, request.params.market_id);
      if (!row) {
        throw new AppError("MARKET_NOT_FOUND", `No market ${request.params.market_id}`, {
          market_id: request.params.market_id,
        });
      }
      return ok(marketView(row));
    },
  );

  app.get(
    "/v1/venues",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["markets"],
        summary: "Each enabled venue: what it supports, where it is, and how healthy it is",
        response: { 200: Envelope(Type.Array(VenueSchema)) },
      },
    },
    async () => {
      const health = new Map(deps.catalog.health().map((h) => [h.venue, h]));
      return ok(
        [...deps.venues.values()].map((venue) => {
          const c = venue.capabilities;
          const h = health.get(venue.id)!;
          return {
            id: venue.id,
            name: c.displayName,
            capabilities: {
              events: c.supports.events,
              order_book: c.supports.orderBook,
              price_history: c.supports.priceHistory,
              candles: c.supports.candles,
              feed: c.supports.feed,
              trading: c.supports.trading,
              order_types: c.supports.orderTypes,
              time_in_force: c.supports.timeInForce,
              native_no_book: c.supports.nativeNoBook,
            },
            urls: {
              production: c.urls.production,
              sandbox: c.urls.sandbox,
              in_use: deps.urlsInUse[venue.id] ?? {},
            },
            rate_limits: {
              read: { requests: c.rateLimits.read.requests, window_ms: c.rateLimits.read.windowMs },
              trade: { requests: c.rateLimits.trade.requests, window_ms: c.rateLimits.trade.windowMs },
            },
            fees: c.fees,
            health: {
              status: h.status,
              last_successful_sync_at: h.last_successful_sync_at,
              last_sync_markets: h.last_sync_markets,
              last_sync_duration_ms: h.last_sync_duration_ms,
              feed_connected: h.feed_connected,
              feed_disabled_reason: h.feed_disabled_reason,
              last_error: h.last_error,
              last_error_at: h.last_error_at,
              consecutive_failures: h.consecutive_failures,
              next_sync_at: h.next_sync_at,
            },
          };
        }),
      );
    },
  );
};
