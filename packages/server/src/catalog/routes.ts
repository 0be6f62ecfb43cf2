/**
 * Markets from the catalog and the venues behind them. `GET /v1/markets` pages are answered from
 * memory (listing.ts) but for a text search (`q`), which the store matches; both, and
 * `GET /v1/markets/{market_id}`, send JSON written by hand (market-json.ts).
 */

import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { Envelope, ok, PagedEnvelope, PageMeta } from "../http/envelope";
import { AppError } from "../http/errors";
import { sendSerialized } from "../http/plumbing";
import type { Clock } from "../infra/clock";
import type { Db } from "../infra/db/store";
import type { VenueId } from "../venues/model";
import type { MarketDataVenue } from "../venues/venue";
import { type LiveFeed, MarketListing } from "./listing";
import { parseFields, rowJson, writeOne, writePage } from "./market-json";
import * as repo from "./repo";
import { MarketListItem, MarketListQuery, MarketParams, MarketQuery, VenueSchema } from "./schemas";
import type { CatalogService } from "./service";

export interface CatalogRoutesDeps {
  db: Db;
  catalog: CatalogService;
  venues: ReadonlyMap<VenueId, MarketDataVenue>;
  /** Base URLs actually configured for each venue. */
  urlsInUse: Record<string, Record<string, string>>;
  /** Live quotes and feed events (prices' LiveMarkets): the listing shows them as they come. */
  live: LiveFeed;
  clock: Clock;
}

const FIELDS_NOTE =
  "With `fields` (e.g. `fields=id,title,status,best_bid,best_ask,last_price`) each market has only " +
  "the named properties, in the order of the full market.";

export const catalogRoutes: FastifyPluginAsyncTypebox<CatalogRoutesDeps> = async (app, deps) => {
  const listing = new MarketListing(deps.db, deps.live, deps.clock);
  // Every instance is told of every venue's sync (its own or another's, over the bus).
  deps.catalog.onChanged((venue) => listing.changed(venue));
  app.addHook("onClose", async () => listing.close());

  app.get(
    "/v1/markets",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["markets"],
        summary: "Markets from every enabled venue, filtered and paginated",
        description: `Ordered by id. ${FIELDS_NOTE}`,
        querystring: MarketListQuery,
        response: { 200: PagedEnvelope(MarketListItem, PageMeta) },
      },
    },
    async (request, reply) => {
      const { limit = 50, offset = 0, status = "open", venue, event_id, q, fields } = request.query;
      const shown = parseFields(fields);
      const filter = {
        ...(venue ? { venue } : {}),
        ...(status !== "all" ? { status } : {}),
        ...(event_id ? { eventId: event_id } : {}),
      };
      if (!q) return sendSerialized(reply, await listing.page(filter, { limit, offset }, shown));
      const { rows, total } = await repo.listMarkets(deps.db, { ...filter, q }, { limit, offset });
      return sendSerialized(reply, writePage(rows.map(rowJson), shown, { limit, offset }, total));
    },
  );

  app.get(
    "/v1/markets/:market_id",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["markets"],
        summary: "One market by id (polymarket:<conditionId> or kalshi:<ticker>)",
        description: FIELDS_NOTE,
        params: MarketParams,
        querystring: MarketQuery,
        response: { 200: Envelope(MarketListItem) },
      },
    },
    async (request, reply) => {
      const shown = parseFields(request.query.fields);
      const row = await repo.findMarket(deps.db, request.params.market_id);
      if (!row) {
        throw new AppError("MARKET_NOT_FOUND", `No market ${request.params.market_id}`, {
          market_id: request.params.market_id,
        });
      }
      return sendSerialized(reply, writeOne(rowJson(row), shown));
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
