/** `GET /v1/arbitrage`: current arbitrage over every verified pair. HTTP only; rules in scanner.ts. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { ArbitrageScanner } from "./scanner";
import { ArbitrageQuery, ArbitrageResponse, DEFAULT_LIMIT } from "./scanner-schemas";

export interface ScannerRoutesDeps {
  scanner: ArbitrageScanner;
}

export const arbitrageScannerRoutes: FastifyPluginAsyncTypebox<ScannerRoutesDeps> = async (app, deps) => {
  app.get(
    "/v1/arbitrage",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["prices"],
        summary: "Current arbitrage opportunities over every verified pair, best first",
        description:
          "Every verified identity or complement pair of markets on two venues whose current books pay after " +
          "both venues' taker fees at `min_size` hedged pairs or more, with the figures of " +
          "`GET /v1/prices/compare` for that pair at its most profitable size of at least `min_size`, " +
          "highest `profit` first. Books are the ones crossbook holds, never fetched for the request: the " +
          "live feed's, or for a market no feed carries a REST-polled book at most 30 s old. A pair without " +
          "such a book for a market is not priced (`meta.unpriced`); its markets are asked of the feed or " +
          "polled (at most 50 a venue) for later scans.",
        querystring: ArbitrageQuery,
        response: { 200: ArbitrageResponse },
      },
    },
    async (request) => {
      const {
        min_profit = 0,
        min_edge = 0,
        venue,
        category,
        limit = DEFAULT_LIMIT,
        min_size,
      } = request.query;
      const { items, meta } = await deps.scanner.scan({
        minProfit: min_profit,
        minEdge: min_edge,
        venue,
        category,
        limit,
        minContracts: min_size,
      });
      return { success: true as const, data: items, meta };
    },
  );
};
