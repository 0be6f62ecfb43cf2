/**
 * Current prices (spec 4.2), answered from the snapshot cache (snapshots.ts), and the comparison of
 * one event across venues (spec 2.5, rules in compare.ts).
 */

import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { validationError } from "../http/errors";
import { sendSerialized } from "../http/plumbing";
import { type Clock, isoFromMs } from "../infra/clock";
import type { CompareService } from "./compare";
import { CompareQuery, CompareResponse, PricesQuery, PricesResponse } from "./schemas";
import type { PricesService } from "./service";
import { PricesSnapshots } from "./snapshots";

export interface PricesRoutesDeps {
  prices: PricesService;
  compare: CompareService;
  clock: Clock;
}

export const pricesRoutes: FastifyPluginAsyncTypebox<PricesRoutesDeps> = async (app, deps) => {
  const snapshots = new PricesSnapshots(deps.prices);

  app.get(
    "/v1/prices",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["prices"],
        summary: "Current prices of up to 100 markets, keyed by market id",
        description:
          "`price` is the midpoint of the best YES bid and ask when both exist, else the last trade. " +
          "Fields are null while nothing is known. `include_orderbook=true` adds each market's YES book " +
          "(`depth` levels a side, best first).",
        querystring: PricesQuery,
        response: { 200: PricesResponse },
      },
    },
    async (request, reply) => {
      const { market_ids, include_orderbook = false, depth = 10 } = request.query;
      const now = deps.clock.now();
      if (!include_orderbook) return sendSerialized(reply, await snapshots.answer(market_ids, now));
      const markets = await snapshots.markets(market_ids);
      deps.prices.watch(markets);
      const timestamp = isoFromMs(now);
      const books = await Promise.all(markets.map((market) => deps.prices.book(market, depth)));
      const data: Record<string, unknown> = {};
      markets.forEach((market, i) => {
        data[market.id] = { ...deps.prices.entry(market), orderbook: books[i] };
      });
      return sendSerialized(reply, JSON.stringify({ success: true, data, timestamp }));
    },
  );

  app.get(
    "/v1/prices/compare",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["prices"],
        summary: "Compare one event's prices across venues, with the arbitrage of its matched pair",
        description:
          "`event_id` is a cross-venue event id or a market id (the event it belongs to; `market_id` is an " +
          "alias). `platforms` holds the compared pair's two markets, keyed by venue. `arbitrage` buys " +
          "the two legs that pay $1 together (identity: YES + NO; complement: YES + YES or NO + NO) " +
          "from both books' depth after each venue's taker fees; `arbitrage_opportunity` is true only " +
          "on a verified pair that pays at `min_size` contracts or more. A market in no cross-venue " +
          "event is compared alone. Without a book the answer comes from quotes, with `arbitrage: null` " +
          "and `arbitrage_reason`.",
        querystring: CompareQuery,
        response: { 200: CompareResponse },
      },
    },
    async (request) => {
      const { event_id, market_id } = request.query;
      if (event_id === undefined && market_id === undefined) {
        throw validationError({ "query.event_id": "is required (an event id, or a market id)" });
      }
      if (event_id !== undefined && market_id !== undefined && event_id !== market_id) {
        throw validationError({ "query.market_id": "give event_id or market_id, not both" });
      }
      return { success: true as const, data: await deps.compare.compare((event_id ?? market_id)!) };
    },
  );
};
