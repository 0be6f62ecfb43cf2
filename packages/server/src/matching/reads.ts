/**
 * What the API and price comparison read: pairs with their markets, and cross-venue events built
 * from their pairs. Read-only, and taking a store or a transaction, so curation can answer with the
 * pair as its own transaction left it.
 */
import { AppError } from "../http/errors";
import type { DbOrTrx } from "../infra/db/store";
import type { VenueId } from "../venues/model";
import { type MarketInfo, type MatchRow, type MatchStatus, venueOf, venueRank } from "./pairs";
import * as repo from "./repo";
import type { CategorizedCrossEvent, CrossEvent, Polarity, Relation } from "./types";

/** A matched pair as the API shows it: the row and both markets (undefined if gone from the catalog). */
export interface MatchDetail {
  row: MatchRow;
  a: MarketInfo | undefined;
  b: MarketInfo | undefined;
}

export interface CrossEventDetail {
  id: string;
  title: string;
  category: string | null;
  close_time: string | null;
  /** verified when every pair is verified, else candidate. */
  status: "verified" | "candidate";
  markets: Array<{ id: string; venue: VenueId; info: MarketInfo | undefined }>;
  pairs: MatchRow[];
}

export function matchNotFound(id: string): AppError {
  return new AppError("MATCH_NOT_FOUND", `No match ${id}`, { match_id: id });
}

export async function listMatches(
  db: DbOrTrx,
  filter: repo.MatchFilter,
  page: { limit: number; offset: number },
): Promise<{ items: MatchDetail[]; total: number }> {
  const { rows, total } = await repo.listMatches(db, filter, page);
  return { items: await matchDetails(db, rows), total };
}

export async function getMatch(db: DbOrTrx, id: string): Promise<MatchDetail> {
  const row = await repo.findMatch(db, id);
  if (!row) throw matchNotFound(id);
  return (await matchDetails(db, [row]))[0]!;
}

export async function matchDetails(db: DbOrTrx, rows: MatchRow[]): Promise<MatchDetail[]> {
  const infos = await repo.marketInfos(
    db,
    rows.flatMap((r) => [r.market_a, r.market_b]),
  );
  return rows.map((row) => ({ row, a: infos.get(row.market_a), b: infos.get(row.market_b) }));
}

/** The event of an event id (`xev_…`), or the event a market belongs to; null if neither. */
export async function resolveEvent(db: DbOrTrx, eventOrMarketId: string): Promise<CrossEvent | null> {
  const detail = await findEvent(db, eventOrMarketId);
  return detail ? crossEvent(detail) : null;
}

/** Every event holding a verified identity or complement pair, with all its pairs (the arbitrage scanner's). */
export async function eventsWithVerifiedPairs(db: DbOrTrx): Promise<CategorizedCrossEvent[]> {
  const ids = await repo.eventsWithVerifiedEdges(db);
  const details = await eventDetails(db, await repo.pairsOfEvents(db, ids));
  return details.map((detail) => ({ ...crossEvent(detail), category: detail.category }));
}

/** An event as compare and arbitrage read it: its markets, and its pairs with their caveats parsed. */
function crossEvent(detail: CrossEventDetail): CrossEvent {
  return {
    id: detail.id,
    title: detail.title,
    markets: detail.markets.map((m) => ({ market_id: m.id, venue: m.venue })),
    pairs: detail.pairs.map((p) => ({
      match_id: p.id,
      market_a: p.market_a,
      market_b: p.market_b,
      relation: p.relation as Relation,
      polarity: p.polarity as Polarity,
      status: p.status as MatchStatus,
      confidence: p.confidence,
      caveats: parseCaveats(p.caveats),
    })),
  };
}

/** One event by its id, or the event a market belongs to. */
export async function getEvent(db: DbOrTrx, eventOrMarketId: string): Promise<CrossEventDetail> {
  const detail = await findEvent(db, eventOrMarketId);
  if (!detail) {
    throw new AppError("EVENT_NOT_FOUND", `No cross-venue event ${eventOrMarketId}`, {
      event_id: eventOrMarketId,
    });
  }
  return detail;
}

export async function listEvents(
  db: DbOrTrx,
  filter: repo.EventFilter,
  page: { limit: number; offset: number },
): Promise<{ items: CrossEventDetail[]; total: number }> {
  const { ids, total } = await repo.listEventIds(db, filter, page);
  const details = await eventDetails(db, await repo.pairsOfEvents(db, ids));
  const byId = new Map(details.map((d) => [d.id, d]));
  return { items: ids.flatMap((id) => byId.get(id) ?? []), total };
}

async function findEvent(db: DbOrTrx, eventOrMarketId: string): Promise<CrossEventDetail | null> {
  let pairs = await repo.eventPairs(db, eventOrMarketId);
  if (pairs.length === 0) {
    const eventId = await repo.eventOfMarket(db, eventOrMarketId);
    if (eventId === undefined) return null;
    pairs = await repo.eventPairs(db, eventId);
  }
  if (pairs.length === 0) return null;
  return (await eventDetails(db, pairs))[0] ?? null;
}

/** Builds the events of these pairs (grouped by event id, each oldest pair first). */
async function eventDetails(db: DbOrTrx, pairs: MatchRow[]): Promise<CrossEventDetail[]> {
  const infos = await repo.marketInfos(
    db,
    pairs.flatMap((p) => [p.market_a, p.market_b]),
  );
  const grouped = new Map<string, MatchRow[]>();
  for (const pair of [...pairs].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))) {
    const list = grouped.get(pair.event_id!) ?? [];
    list.push(pair);
    grouped.set(pair.event_id!, list);
  }
  return [...grouped].map(([id, list]) => {
    const ids = [...new Set(list.flatMap((p) => [p.market_a, p.market_b]))].sort(
      (x, y) => venueRank(venueOf(x)) - venueRank(venueOf(y)) || (x < y ? -1 : x > y ? 1 : 0),
    );
    const markets = ids.map((market) => ({ id: market, venue: venueOf(market), info: infos.get(market) }));
    const lead = infos.get(list[0]!.market_a);
    const closeTimes = markets.flatMap((m) => (m.info?.close_time ? [m.info.close_time] : [])).sort();
    return {
      id,
      title: lead?.question ?? lead?.title ?? list[0]!.market_a,
      category: lead?.category ?? markets.find((m) => m.info?.category)?.info?.category ?? null,
      close_time: closeTimes[0] ?? null,
      status: list.every((p) => p.status === "verified") ? ("verified" as const) : ("candidate" as const),
      markets,
      pairs: list,
    };
  });
}

/** A stored caveats column (a JSON array of sentences); an unreadable one reads as none. */
function parseCaveats(column: string | undefined): string[] {
  try {
    const parsed = JSON.parse(column ?? "[]") as unknown;
    return Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === "string") : [];
  } catch {
    return [];
  }
}

/** A candidate in the operators' review queue: the pair, its markets, and each market's weight. */
export interface CandidateDetail extends MatchDetail {
  row: repo.CandidateRow;
}

/** Candidates, most consequential first (repo.listCandidates). */
export async function listCandidates(
  db: DbOrTrx,
  page: { limit: number; offset: number },
): Promise<{ items: CandidateDetail[]; total: number }> {
  const { rows, total } = await repo.listCandidates(db, page);
  const infos = await repo.marketInfos(
    db,
    rows.flatMap((r) => [r.market_a, r.market_b]),
  );
  return {
    items: rows.map((row) => ({ row, a: infos.get(row.market_a), b: infos.get(row.market_b) })),
    total,
  };
}
