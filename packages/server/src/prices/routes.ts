/** Current prices (spec 4.2). The response is assembled from cached per-market JSON fragments. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { AppError, validationError } from "../http/errors";
import { type Clock, isoFromMs } from "../infra/clock";
import { MAX_MARKET_IDS_LENGTH, MAX_MARKETS_PER_REQUEST, PricesQuery, PricesResponse } from "./schemas";
import type { MarketSummary, PricesService } from "./service";

export interface PricesRoutesDeps {
  prices: PricesService;
  clock: Clock;
}

/** "a, b,,a" -> ["a", "b"]: trimmed, empty parts dropped, first occurrence kept. */
export function splitIds(raw: string): string[] {
  const parts = raw.split(",");
  const ids: string[] = [];
  let seen: Set<string> | undefined;
  for (const part of parts) {
    const id =
      part.length > 0 && part.charCodeAt(0) > 32 && part.charCodeAt(part.length - 1) > 32
        ? part
        : part.trim();
    if (id.length === 0) continue;
    // Duplicates are rare: look for them with a set only past a handful of ids.
    if (ids.length < 8) {
      if (ids.includes(id)) continue;
    } else {
      if (!seen) seen = new Set(ids);
      if (seen.has(id)) continue;
      seen.add(id);
    }
    ids.push(id);
  }
  return ids;
}

/** Sends JSON text as is: Fastify skips serialization for a string with a JSON content type. */
function sendJsonText(reply: FastifyReply, text: string): FastifyReply {
  return reply.header("content-type", "application/json; charset=utf-8").send(text);
}

export const pricesRoutes: FastifyPluginAsyncTypebox<PricesRoutesDeps> = async (app, deps) => {
  const lists = new Map<string, { version: number; ids: string[]; markets: MarketSummary[] }>();

  async function resolveList(raw: string) {
    if (raw.length > MAX_MARKET_IDS_LENGTH) {
      throw validationError({ "query.market_ids": `must be at most ${MAX_MARKET_IDS_LENGTH} characters` });
    }
    const ids = splitIds(raw);
    if (ids.length === 0) throw validationError({ "query.market_ids": "must name at least one market id" });
    if (ids.length > MAX_MARKETS_PER_REQUEST) {
      throw validationError({
        "query.market_ids": `must name at most ${MAX_MARKETS_PER_REQUEST} market ids (got ${ids.length})`,
      });
    }
    if (ids.some((id) => id.length > 300)) {
      throw validationError({ "query.market_ids": "holds an id longer than 300 characters" });
    }
    const version = deps.prices.version;
    const { markets, missing } = await deps.prices.resolve(ids);
    if (missing.length > 0) {
      throw new AppError(
        "MARKET_NOT_FOUND",
        missing.length === 1 ? `No market ${missing[0]}` : `No markets ${missing.join(", ")}`,
        { market_ids: missing },
      );
    }
    return { version, ids, markets };
  }

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
      // Bots ask for the same list again and again: reuse the parsed, resolved list.
      let list = lists.get(market_ids);
      if (!list || list.version !== deps.prices.version) {
        list = await resolveList(market_ids);
        if (lists.size >= 1_000) lists.clear();
        lists.set(market_ids, list);
      }
      const { ids, markets } = list;
      deps.prices.watch(markets);
      const timestamp = isoFromMs(deps.clock.now());

      if (!include_orderbook) {
        // Already-serialized fragments, in the order asked: no per-request serialization of quotes.
        let body = '{"success":true,"data":{';
        for (let i = 0; i < ids.length; i++) {
          if (i > 0) body += ",";
          body += deps.prices.entryJson(markets[i]!);
        }
        return sendJsonText(reply, `${body}},"timestamp":"${timestamp}"}`);
      }
      const books = await Promise.all(markets.map((market) => deps.prices.book(market, depth)));
      const data: Record<string, unknown> = {};
      markets.forEach((market, i) => {
        data[market.id] = { ...deps.prices.entry(market), orderbook: books[i] };
      });
      return sendJsonText(reply, JSON.stringify({ success: true, data, timestamp }));
    },
  );
};
