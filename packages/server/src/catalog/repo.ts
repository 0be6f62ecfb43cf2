/** SQL for the market catalog. */
import type { Selectable } from "kysely";
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
