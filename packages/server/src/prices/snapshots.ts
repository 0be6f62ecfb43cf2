/**
 * The `/v1/prices` answer cache, in one place. Bots ask for the same list of markets again and
 * again: each list is parsed and resolved once, and the `data` part of its last answer is kept as
 * bytes, assembled from each market's serialized entry (`PricesService.entryJson`), and reused while
 * none of its markets' quotes changed and the minute is the same (the 24-hour change moves by the
 * minute). Callers in the same millisecond share the whole response. Fastify sends these bytes as
 * they are, so test/prices/prices-body.test.ts holds them to the route's declared schema.
 */
import { AppError, validationError } from "../http/errors";
import { isoFromMs } from "../infra/clock";
import { MAX_MARKET_IDS_LENGTH, MAX_MARKETS_PER_REQUEST } from "./schemas";
import type { MarketSummary, PricesService } from "./service";

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

/** A market list as asked for, resolved once, with the bytes of its last answer. */
interface ResolvedList {
  /** The prices service's version when resolved: a newer one may resolve the ids differently. */
  version: number;
  markets: MarketSummary[];
  /** `{"success":true,"data":{…},"timestamp":"`: the answer up to its timestamp. */
  body: Buffer | null;
  minute: number;
  quoteVersions: number[];
  /** The last whole response and the millisecond its `timestamp` shows. */
  response: Buffer | null;
  responseMs: number;
}

/** Lists remembered at most; past it the cache starts again (a bot's lists are few). */
const MAX_LISTS = 1_000;

export class PricesSnapshots {
  readonly #lists = new Map<string, ResolvedList>();

  constructor(private readonly prices: PricesService) {}

  /** The markets of a `market_ids` query, resolved (and remembered) or refused with a 400/404. */
  async markets(raw: string): Promise<MarketSummary[]> {
    return (await this.#list(raw)).markets;
  }

  /** The whole `/v1/prices` answer (without books) for `raw` at `now`, as bytes. */
  async answer(raw: string, now: number): Promise<Buffer> {
    const list = await this.#list(raw);
    this.prices.watch(list.markets);
    const minute = Math.floor(now / 60_000);
    if (this.#fresh(list, minute)) {
      // A busy bot asks many times a millisecond: the same bytes, sent again (never modified).
      if (list.responseMs === now) return list.response!;
    } else {
      // Already-serialized fragments, in the order asked: no per-request serialization of quotes.
      const { markets } = list;
      let data = '{"success":true,"data":{';
      for (let i = 0; i < markets.length; i++) {
        if (i > 0) data += ",";
        data += this.prices.entryJson(markets[i]!, minute);
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
    return out;
  }

  async #list(raw: string): Promise<ResolvedList> {
    let list = this.#lists.get(raw);
    if (!list || list.version !== this.prices.version) {
      list = await this.#resolve(raw);
      if (this.#lists.size >= MAX_LISTS) this.#lists.clear();
      this.#lists.set(raw, list);
    }
    return list;
  }

  /** Whether the list's kept body still shows every market's current quote. */
  #fresh(list: ResolvedList, minute: number): boolean {
    if (list.body === null || list.minute !== minute) return false;
    const { markets, quoteVersions } = list;
    for (let i = 0; i < markets.length; i++) if (markets[i]!.quoteVersion !== quoteVersions[i]) return false;
    return true;
  }

  async #resolve(raw: string): Promise<ResolvedList> {
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
    const version = this.prices.version;
    const { markets, missing } = await this.prices.resolve(ids);
    if (missing.length > 0) {
      throw new AppError(
        "MARKET_NOT_FOUND",
        missing.length === 1 ? `No market ${missing[0]}` : `No markets ${missing.join(", ")}`,
        { market_ids: missing },
      );
    }
    return {
      version,
      markets,
      body: null,
      minute: -1,
      quoteVersions: new Array<number>(markets.length),
      response: null,
      responseMs: -1,
    };
  }
}
