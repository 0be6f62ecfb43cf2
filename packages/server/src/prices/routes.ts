/**
 * Current prices (spec 4.2), assembled from cached per-market JSON fragments, and the comparison of
 * one event across venues (spec 2.5, rules in compare.ts).
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { AppError, validationError } from "../http/errors";
import { type Clock, isoFromMs } from "../infra/clock";
import type { CompareService } from "./compare";
import {
  CompareQuery,
  CompareResponse,
  MAX_MARKET_IDS_LENGTH,
  MAX_MARKETS_PER_REQUEST,
  PricesQuery,
  PricesResponse,
} from "./schemas";
import type { MarketSummary, PricesService } from "./service";

export interface PricesRoutesDeps {
  prices: PricesService;
  compare: CompareService;
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

/**
 * A market list as asked for, parsed and resolved once, with the `data` part of its last answer:
 * reused while none of its markets' quotes changed and the minute is the same.
 */
interface ResolvedList {
  version: number;
  ids: string[];
  markets: MarketSummary[];
  body: Buffer | null;
  minute: number;
  quoteVersions: number[];
  /** The last whole response and the millisecond its `timestamp` shows: callers in that ms share it. */
  response: Buffer | null;
  responseMs: number;
}

const JSON_TYPE = "application/json; charset=utf-8";

/** Whether the list's cached body still shows every market's current quote. */
function fresh(list: ResolvedList, minute: number): boolean {
  if (list.body === null || list.minute !== minute) return false;
  const { markets, quoteVersions } = list;
  for (let i = 0; i < markets.length; i++) if (markets[i]!.quoteVersion !== quoteVersions[i]) return false;
  return true;
}

/** Sends an already-serialized JSON body: Fastify skips serialization for a string or buffer. */
function sendSerialized(reply: FastifyReply, body: string | Buffer): FastifyReply {
  return reply.header("content-type", JSON_TYPE).send(body);
}

export const pricesRoutes: FastifyPluginAsyncTypebox<PricesRoutesDeps> = async (app, deps) => {
  const lists = new Map<string, ResolvedList>();

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
    return {
      version,
      ids,
      markets,
      body: null,
      minute: -1,
      quoteVersions: new Array<number>(markets.length),
      response: null,
      responseMs: -1,
    };
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
      const { markets } = list;
      deps.prices.watch(markets);
      const now = deps.clock.now();

      if (!include_orderbook) {
        const minute = Math.floor(now / 60_000);
        if (fresh(list, minute)) {
          // A busy bot asks many times a millisecond: the same bytes, sent again (never modified).
          if (list.responseMs === now) return sendSerialized(reply, list.response!);
        } else {
          // Already-serialized fragments, in the order asked: no per-request serialization of quotes.
          // Fastify sends these bytes as they are, so test/prices/prices-body.test.ts holds them to
          // PricesResponse.
          let data = '{"success":true,"data":{';
          for (let i = 0; i < markets.length; i++) {
            if (i > 0) data += ",";
            data += deps.prices.entryJson(markets[i]!, minute);
            list.quoteVersions[i] = markets[i]!.quoteVersion;
          }
          list.body = Buffer.from(`${data}},"timestamp":"`);
          list.minute = minute;
        }
        const head = list.body!;
        const timestamp = isoFromMs(now);
        const out = Buffer.allocUnsafe(head.length + timestamp.length + 2);
        head.copy(out, 0);
        out.write(timestamp, head.length, "latin1");
        out.write('"}', head.length + timestamp.length, "latin1");
        list.response = out;
        list.responseMs = now;
        return sendSerialized(reply, out);
      }
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
