/**
 * SQL for the market catalog. The only writer of the `markets` table: other domains (prices' live
 * quotes, orders' early settlement) change markets through the functions here.
 */
import type { Selectable, UpdateResult } from "kysely";
import { type PageRequest, pageWithTotal } from "../infra/db/pages";
import type { MarketsTable, VenueEventsTable } from "../infra/db/schema";
import type { DbOrTrx } from "../infra/db/store";

export type MarketRow = Selectable<MarketsTable>;
export type VenueEventRow = Selectable<VenueEventsTable>;

export async function upsertEvent(db: DbOrTrx, row: VenueEventRow): Promise<void> {
  const { id: _id, ...changes } = row;
  await db
    .insertInto("venue_events")
    .values(row)
    .onConflict((oc) => oc.column("id").doUpdateSet(changes))
    .execute();
}

export async function upsertMarket(db: DbOrTrx, row: MarketRow): Promise<void> {
  const { id: _id, first_seen_at: _first, ...rest } = row;
  const changes: Partial<MarketRow> = rest;
  // A listing that does not say a market's fees (a Kalshi market whose series could not be read)
  // keeps the schedule already known.
  if (row.fee_model === null) {
    for (const column of FEE_COLUMNS) delete changes[column];
  }
  await db
    .insertInto("markets")
    .values(row)
    .onConflict((oc) => oc.column("id").doUpdateSet(changes))
    .execute();
}

/** A market the venue no longer knows (delisted): it can no longer trade. */
export async function closeDelistedMarket(db: DbOrTrx, id: string, atIso: string): Promise<void> {
  await db
    .updateTable("markets")
    .set({ status: "closed", status_changed_at: atIso, updated_at: atIso })
    .where("id", "=", id)
    .execute();
}

/**
 * Records a status (and resolution) a venue reported before the next catalog sync. Only a market
 * whose stored status differs is written, so `status_changed_at` keeps the first report's time.
 */
export async function recordObservedStatus(
  db: DbOrTrx,
  id: string,
  status: string,
  resolution: string | null,
  atIso: string,
): Promise<void> {
  await db
    .updateTable("markets")
    .set({ status, resolution, status_changed_at: atIso })
    .where("id", "=", id)
    .where("status", "!=", status)
    .execute();
}

/** The live-price fields of a market (prices' Quote has them; structural, so catalog needs no prices import). */
export interface LivePrice {
  bestBid: number | null;
  bestAsk: number | null;
  /** Null leaves the stored last price as it is. */
  lastTradePrice: number | null;
}

/**
 * Writes a market's live best bid/ask (and last trade price when known). One row per call: the
 * caller (prices' flush) writes the markets of a flush in one transaction and passes it as `db`.
 * Not async: the statement's own promise is returned, so the flush awaits once per row as before.
 */
export function updateLivePrice(
  db: DbOrTrx,
  id: string,
  price: LivePrice,
  atIso: string,
): Promise<readonly UpdateResult[]> {
  // Two shapes rather than a conditional spread: no extra object per row on the flush path.
  const changes =
    price.lastTradePrice !== null
      ? {
          best_bid: price.bestBid,
          best_ask: price.bestAsk,
          last_price: price.lastTradePrice,
          updated_at: atIso,
        }
      : { best_bid: price.bestBid, best_ask: price.bestAsk, updated_at: atIso };
  return db.updateTable("markets").set(changes).where("id", "=", id).execute();
}

const FEE_COLUMNS = [
  "fee_model",
  "fee_rate",
  "fee_exponent",
  "fee_maker_rate",
  "fee_cap_bps",
  "fee_type",
  "fee_multiplier",
] as const satisfies ReadonlyArray<keyof MarketRow>;

export async function findMarket(db: DbOrTrx, id: string): Promise<MarketRow | undefined> {
  return db.selectFrom("markets").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function findMarkets(db: DbOrTrx, ids: readonly string[]): Promise<MarketRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom("markets")
    .selectAll()
    .where("id", "in", [...ids])
    .execute();
}

/** The titles of these markets (trading answers name their markets); unknown ids are left out. */
export async function findMarketTitles(
  db: DbOrTrx,
  ids: readonly string[],
): Promise<Array<{ id: string; title: string }>> {
  if (ids.length === 0) return [];
  return db
    .selectFrom("markets")
    .select(["id", "title"])
    .where("id", "in", [...ids])
    .execute();
}

/**
 * Every market, or every market of one venue, in id order as the store collates it (the order
 * `listMarkets` pages in): prices and the markets listing (listing.ts) hold these in memory.
 */
export async function allMarkets(db: DbOrTrx, venue?: string): Promise<MarketRow[]> {
  let query = db.selectFrom("markets").selectAll();
  if (venue) query = query.where("venue", "=", venue);
  return query.orderBy("id").execute();
}

/** Ids of a venue's open markets, the most traded (24 h volume) first, at most `limit`. */
export async function mostTradedOpenMarketIds(db: DbOrTrx, venue: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom("markets")
    .select("id")
    .where("venue", "=", venue)
    .where("status", "=", "open")
    .orderBy("volume_24h", "desc")
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Status, resolution and when the status last changed, for every market of a venue. */
export async function marketStatuses(
  db: DbOrTrx,
  venue: string,
): Promise<
  Map<string, { status: string; resolution: string | null; status_changed_at: string; first_seen_at: string }>
> {
  const rows = await db
    .selectFrom("markets")
    .select(["id", "status", "resolution", "status_changed_at", "first_seen_at"])
    .where("venue", "=", venue)
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export interface MarketFilter {
  venue?: string;
  status?: string;
  eventId?: string;
  q?: string;
}

function filtered(db: DbOrTrx, filter: MarketFilter) {
  let query = db.selectFrom("markets");
  if (filter.venue) query = query.where("venue", "=", filter.venue);
  if (filter.status) query = query.where("status", "=", filter.status);
  if (filter.eventId) query = query.where("event_id", "=", filter.eventId);
  if (filter.q) {
    // Every word must appear in the title or question, case-insensitively, on both stores.
    // LIKE wildcards in the search text are dropped rather than escaped: SQLite has no default
    // escape character, and nobody searches markets for "%".
    const words = filter.q
      .toLowerCase()
      .replace(/[\\%_]/g, " ")
      .split(/\s+/)
      .filter(Boolean)
      .slice(0, 8);
    for (const word of words) {
      const pattern = `%${word}%`;
      query = query.where((eb) =>
        eb.or([
          eb(eb.fn("lower", ["title"]), "like", eb.val(pattern)),
          eb(eb.fn("lower", ["question"]), "like", eb.val(pattern)),
        ]),
      );
    }
  }
  return query;
}

export async function listMarkets(
  db: DbOrTrx,
  filter: MarketFilter,
  page: PageRequest,
): Promise<{ rows: MarketRow[]; total: number }> {
  return pageWithTotal(filtered(db, filter), (q) => q.selectAll().orderBy("id"), page);
}

export async function findEvent(db: DbOrTrx, id: string): Promise<VenueEventRow | undefined> {
  return db.selectFrom("venue_events").selectAll().where("id", "=", id).executeTakeFirst();
}

/** What trading reads of a market: its own columns, its fee schedule, and its event's title. */
export async function tradingMarketRow(db: DbOrTrx, id: string) {
  return db
    .selectFrom("markets")
    .leftJoin("venue_events", "venue_events.id", "markets.event_id")
    .select([
      "markets.id",
      "markets.venue",
      "markets.title",
      "markets.status",
      "markets.resolution",
      "markets.tick_size",
      "markets.min_size",
      "markets.fee_model",
      "markets.fee_rate",
      "markets.fee_exponent",
      "markets.fee_maker_rate",
      "markets.fee_cap_bps",
      "markets.fee_type",
      "markets.fee_multiplier",
      "venue_events.title as event_title",
    ])
    .where("markets.id", "=", id)
    .executeTakeFirst();
}

/** Markets the catalog says are closed or resolved while someone still has orders or positions on them. */
export async function closedMarketsWithExposure(db: DbOrTrx) {
  const withOrders = db.selectFrom("orders").select("market_id").where("status", "in", ["open", "pending"]);
  const withPositions = db
    .selectFrom("positions")
    .select("market_id")
    .where("status", "in", ["open", "closed"])
    .where("size", ">", 0);
  return db
    .selectFrom("markets")
    .select(["id", "status", "resolution"])
    .where("status", "in", ["closed", "resolved"])
    .where((eb) => eb.or([eb("id", "in", withOrders), eb("id", "in", withPositions)]))
    .execute();
}
