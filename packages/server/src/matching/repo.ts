/**
 * SQL for matched markets and the cross-venue events they form. Pairs are stored in canonical order
 * (see pairs.ts); every write of matching happens under `lockMatches`, so deciding a pair's
 * status and regrouping its event read and write a consistent picture even with several instances
 * on one PostgreSQL.
 */
import { type ExpressionBuilder, type Insertable, type Selectable, sql, type Updateable } from "kysely";
import { type PageRequest, pageWithTotal } from "../infra/db/pages";
import type { Database, MatchesTable } from "../infra/db/schema";
import type { Db, DbOrTrx, Dialect, Trx } from "../infra/db/store";

export type MatchRow = Selectable<MatchesTable>;
export type MatchChanges = Updateable<MatchesTable>;

/** Relations that link two markets into one cross-venue event (when the pair is not rejected). */
export const EVENT_RELATIONS = ["identity", "complement"] as const;

/** `IN (…)` lists are cut into chunks this long (SQLite's bound-parameter limit, plan sizes). */
const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/**
 * Serializes writers of matches across instances: PostgreSQL takes a transaction-scoped advisory
 * lock (per schema); SQLite already runs one write transaction at a time.
 */
export async function lockMatches(trx: DbOrTrx, dialect: Dialect): Promise<void> {
  if (dialect !== "postgres") return;
  await sql`select pg_advisory_xact_lock(hashtext(current_schema() || '.crossbook.matches'))`.execute(trx);
}

/** Runs `work` in a transaction that holds `lockMatches` first: how every writer of `matches` writes. */
export async function underMatchesLock<T>(
  db: Db,
  dialect: Dialect,
  work: (trx: Trx) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await lockMatches(trx, dialect);
    return work(trx);
  });
}

/** What the matcher reads of a catalog market, with its event's title. */
export interface MatchableRow {
  id: string;
  venue: string;
  title: string;
  question: string;
  rules: string | null;
  settlement_source: string | null;
  close_time: string | null;
  outcomes: string;
  status: string;
  updated_at: string;
  event_title: string | null;
  venue_market_id: string;
}

/** What the matcher reads of a market (and its event's title), joined with `venue_events`. */
const MATCHABLE_COLUMNS = [
  "markets.id",
  "markets.venue",
  "markets.title",
  "markets.question",
  "markets.rules",
  "markets.settlement_source",
  "markets.close_time",
  "markets.outcomes",
  "markets.status",
  "markets.updated_at",
  "venue_events.title as event_title",
  "markets.venue_market_id",
] as const;

/**
 * Markets for the matcher: every open or closed one (`since` null), or every market, whatever its
 * status, written at or after `since` (so a resolved one can leave the index).
 */
export async function matchableMarkets(db: DbOrTrx, since: string | null): Promise<MatchableRow[]> {
  let query = db
    .selectFrom("markets")
    .leftJoin("venue_events", "venue_events.id", "markets.event_id")
    .select(MATCHABLE_COLUMNS);
  query =
    since === null
      ? query.where("markets.status", "in", ["open", "closed"])
      : query.where("markets.updated_at", ">=", since);
  return query.orderBy("markets.id").execute();
}

export async function findMatch(db: DbOrTrx, id: string): Promise<MatchRow | undefined> {
  return db.selectFrom("matches").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function findPair(db: DbOrTrx, marketA: string, marketB: string): Promise<MatchRow | undefined> {
  return db
    .selectFrom("matches")
    .selectAll()
    .where("market_a", "=", marketA)
    .where("market_b", "=", marketB)
    .executeTakeFirst();
}

/** The stored rows of these canonical pairs, keyed `market_a\nmarket_b`. */
export async function findPairs(
  db: DbOrTrx,
  pairs: ReadonlyArray<{ a: string; b: string }>,
): Promise<Map<string, MatchRow>> {
  const wanted = new Set(pairs.map((p) => pairKey(p.a, p.b)));
  const out = new Map<string, MatchRow>();
  for (const part of chunks([...new Set(pairs.map((p) => p.a))])) {
    const rows = await db.selectFrom("matches").selectAll().where("market_a", "in", part).execute();
    for (const row of rows) {
      const key = pairKey(row.market_a, row.market_b);
      if (wanted.has(key)) out.set(key, row);
    }
  }
  return out;
}

export function pairKey(a: string, b: string): string {
  return `${a}\n${b}`;
}

export async function insertMatch(db: DbOrTrx, row: Insertable<MatchesTable>): Promise<void> {
  await db.insertInto("matches").values(row).execute();
}

/** Many rows, a hundred per statement. */
export async function insertMatches(
  db: DbOrTrx,
  rows: ReadonlyArray<Insertable<MatchesTable>>,
): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) {
    await db
      .insertInto("matches")
      .values(rows.slice(i, i + 100))
      .execute();
  }
}

export async function updateMatch(db: DbOrTrx, id: string, changes: MatchChanges): Promise<void> {
  await db.updateTable("matches").set(changes).where("id", "=", id).execute();
}

/** An edge of the event graph: a non-rejected identity or complement pair. */
export interface EdgeRow {
  id: string;
  market_a: string;
  market_b: string;
  event_id: string | null;
}

/** The event-graph edges that touch any of these markets. */
export async function edgesTouching(db: DbOrTrx, marketIds: readonly string[]): Promise<EdgeRow[]> {
  const out: EdgeRow[] = [];
  for (const part of chunks(marketIds)) {
    const rows = await db
      .selectFrom("matches")
      .select(["id", "market_a", "market_b", "event_id"])
      .where("relation", "in", [...EVENT_RELATIONS])
      .where("status", "!=", "rejected")
      .where((eb) => eb.or([eb("market_a", "in", part), eb("market_b", "in", part)]))
      .execute();
    out.push(...rows);
  }
  return out;
}

/** Event-graph edges that have no event yet. */
export async function edgesWithoutEvent(db: DbOrTrx): Promise<EdgeRow[]> {
  return db
    .selectFrom("matches")
    .select(["id", "market_a", "market_b", "event_id"])
    .where("event_id", "is", null)
    .where("relation", "in", [...EVENT_RELATIONS])
    .where("status", "!=", "rejected")
    .execute();
}

/**
 * Sets many pairs' event ids at once: one statement per chunk (`case id when … then …`) instead of
 * one per event, which a first run over a large catalog (thousands of new events) paid in round trips.
 */
export async function setEventIds(
  db: DbOrTrx,
  assignments: ReadonlyArray<{ id: string; eventId: string }>,
  at: string,
): Promise<void> {
  for (const part of chunks(assignments)) {
    const cases = sql.join(
      part.map((a) => sql`when ${a.id} then ${a.eventId}`),
      sql` `,
    );
    await db
      .updateTable("matches")
      .set({ event_id: sql<string>`case id ${cases} end`, updated_at: at })
      .where(
        "id",
        "in",
        part.map((a) => a.id),
      )
      .execute();
  }
}

/** These pairs, by id (missing ids are left out). */
export async function findMatches(db: DbOrTrx, ids: readonly string[]): Promise<MatchRow[]> {
  const out: MatchRow[] = [];
  for (const part of chunks([...new Set(ids)])) {
    out.push(...(await db.selectFrom("matches").selectAll().where("id", "in", part).execute()));
  }
  return out;
}

/** Every pair of one cross-venue event, oldest first. */
export async function eventPairs(db: DbOrTrx, eventId: string): Promise<MatchRow[]> {
  return db.selectFrom("matches").selectAll().where("event_id", "=", eventId).orderBy("id").execute();
}

/** Every pair of these events, oldest first within each chunk of events. */
export async function pairsOfEvents(db: DbOrTrx, eventIds: readonly string[]): Promise<MatchRow[]> {
  const out: MatchRow[] = [];
  for (const part of chunks(eventIds)) {
    out.push(
      ...(await db.selectFrom("matches").selectAll().where("event_id", "in", part).orderBy("id").execute()),
    );
  }
  return out;
}

/** The events holding a verified identity or complement pair (what arbitrage can be scanned over). */
export async function eventsWithVerifiedEdges(db: DbOrTrx): Promise<string[]> {
  const rows = await db
    .selectFrom("matches")
    .select("event_id")
    .distinct()
    .where("status", "=", "verified")
    .where("relation", "in", [...EVENT_RELATIONS])
    .where("event_id", "is not", null)
    .execute();
  return rows.map((r) => r.event_id!);
}

/** The cross-venue event a market belongs to, if any. */
export async function eventOfMarket(db: DbOrTrx, marketId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("matches")
    .select("event_id")
    .where("event_id", "is not", null)
    .where((eb) => eb.or([eb("market_a", "=", marketId), eb("market_b", "=", marketId)]))
    .limit(1)
    .executeTakeFirst();
  return row?.event_id ?? undefined;
}

/** What the API and the events show of a market. */
export interface MarketInfo {
  id: string;
  venue: string;
  title: string;
  question: string;
  close_time: string | null;
  url: string | null;
  outcomes: string;
  status: string;
  last_price: number | null;
  best_bid: number | null;
  best_ask: number | null;
  /** The venue event it belongs to, its title and category. */
  event_id: string | null;
  event_title: string | null;
  category: string | null;
}

export async function marketInfos(db: DbOrTrx, ids: readonly string[]): Promise<Map<string, MarketInfo>> {
  const out = new Map<string, MarketInfo>();
  for (const part of chunks([...new Set(ids)])) {
    const rows = await db
      .selectFrom("markets")
      .leftJoin("venue_events", "venue_events.id", "markets.event_id")
      .select([
        "markets.id",
        "markets.venue",
        "markets.title",
        "markets.question",
        "markets.close_time",
        "markets.url",
        "markets.outcomes",
        "markets.status",
        "markets.last_price",
        "markets.best_bid",
        "markets.best_ask",
        "markets.event_id",
        "venue_events.title as event_title",
        "venue_events.category",
      ])
      .where("markets.id", "in", part)
      .execute();
    for (const row of rows) out.set(row.id, row);
  }
  return out;
}

/** Lower-cased words of a search, LIKE wildcards dropped (as the catalog's search does). */
export function searchWords(q: string | undefined): string[] {
  if (!q) return [];
  return q
    .toLowerCase()
    .replace(/[\\%_]/g, " ")
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 8);
}

/** Ids of markets whose title or question holds `word` (lower-cased, no wildcards). */
function marketsWithWord(db: DbOrTrx, word: string) {
  return db.selectFrom("markets").select("id").where(hasWord(word));
}

/** A market's title or question holds `word` (a lower-cased word of `searchWords`), on both stores. */
function hasWord(word: string) {
  const pattern = `%${word}%`;
  return (eb: ExpressionBuilder<Database, "markets">) =>
    eb.or([
      eb(eb.fn("lower", ["markets.title"]), "like", eb.val(pattern)),
      eb(eb.fn("lower", ["markets.question"]), "like", eb.val(pattern)),
    ]);
}

export interface MatchFilter {
  venue?: string;
  status?: string;
  relation?: string;
  minConfidence?: number;
  q?: string;
  marketId?: string;
}

function filteredMatches(db: DbOrTrx, filter: MatchFilter) {
  let query = db.selectFrom("matches");
  if (filter.venue) {
    const venue = filter.venue;
    query = query.where((eb) => eb.or([eb("venue_a", "=", venue), eb("venue_b", "=", venue)]));
  }
  if (filter.status) query = query.where("status", "=", filter.status);
  if (filter.relation) query = query.where("relation", "=", filter.relation);
  if (filter.minConfidence !== undefined) query = query.where("confidence", ">=", filter.minConfidence);
  if (filter.marketId) {
    const id = filter.marketId;
    query = query.where((eb) => eb.or([eb("market_a", "=", id), eb("market_b", "=", id)]));
  }
  // Every word in the title or question of one of the two markets.
  for (const word of searchWords(filter.q)) {
    query = query.where((eb) =>
      eb.or([
        eb("market_a", "in", marketsWithWord(db, word)),
        eb("market_b", "in", marketsWithWord(db, word)),
      ]),
    );
  }
  return query;
}

/** Most confident first, then oldest. */
export async function listMatches(
  db: DbOrTrx,
  filter: MatchFilter,
  page: PageRequest,
): Promise<{ rows: MatchRow[]; total: number }> {
  return pageWithTotal(
    filteredMatches(db, filter),
    (q) => q.selectAll().orderBy("confidence", "desc").orderBy("id"),
    page,
  );
}

export interface EventFilter {
  /** verified: every pair verified; candidate: at least one is not. */
  status?: "verified" | "candidate";
  venue?: string;
  q?: string;
  category?: string;
}

/** Event ids having a pair one of whose markets is in `markets` (a subquery of market ids). */
function eventsWithMarketIn(db: DbOrTrx, markets: ReturnType<typeof marketsWithWord>) {
  return db
    .selectFrom("matches")
    .select("event_id")
    .where("event_id", "is not", null)
    .where((eb) => eb.or([eb("market_a", "in", markets), eb("market_b", "in", markets)]));
}

function filteredEvents(db: DbOrTrx, filter: EventFilter) {
  let query = db.selectFrom("matches").where("event_id", "is not", null);
  if (filter.venue) {
    const venue = filter.venue;
    query = query.where("event_id", "in", (eb) =>
      eb
        .selectFrom("matches as v")
        .select("v.event_id")
        .where("v.event_id", "is not", null)
        .where((w) => w.or([w("v.venue_a", "=", venue), w("v.venue_b", "=", venue)])),
    );
  }
  for (const word of searchWords(filter.q)) {
    query = query.where("event_id", "in", eventsWithMarketIn(db, marketsWithWord(db, word)));
  }
  if (filter.category) {
    const category = filter.category.toLowerCase();
    const inCategory = db
      .selectFrom("markets")
      .innerJoin("venue_events", "venue_events.id", "markets.event_id")
      .select("markets.id")
      .where((eb) => eb(eb.fn("lower", ["venue_events.category"]), "=", category));
    query = query.where("event_id", "in", eventsWithMarketIn(db, inCategory));
  }
  let grouped = query.select("event_id").groupBy("event_id");
  if (filter.status === "verified") {
    grouped = grouped.having(sql<number>`sum(case when status = 'verified' then 0 else 1 end)`, "=", 0);
  } else if (filter.status === "candidate") {
    grouped = grouped.having(sql<number>`sum(case when status = 'verified' then 0 else 1 end)`, ">", 0);
  }
  return grouped;
}

/** Event ids, newest first. */
export async function listEventIds(
  db: DbOrTrx,
  filter: EventFilter,
  page: { limit: number; offset: number },
): Promise<{ ids: string[]; total: number }> {
  const [rows, count] = await Promise.all([
    filteredEvents(db, filter).orderBy("event_id", "desc").limit(page.limit).offset(page.offset).execute(),
    db
      .selectFrom(filteredEvents(db, filter).as("e"))
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow(),
  ]);
  return { ids: rows.map((r) => r.event_id!), total: Number(count.n) };
}

// --- The operators' review desk (console/review-pages.ts) -----------------------------------------

/**
 * How much rides on a market: its 24-hour volume plus its resting liquidity (micro-units). A pair is
 * as consequential as its thinner market (an arbitrage or a hedge is capped by the smaller book), so
 * the queue orders by the lesser weight first, then the greater.
 */
const WEIGHT_A = sql<number>`(coalesce(ma.volume_24h, 0) + coalesce(ma.liquidity, 0))`;
const WEIGHT_B = sql<number>`(coalesce(mb.volume_24h, 0) + coalesce(mb.liquidity, 0))`;
const LESSER = sql<number>`case when ${WEIGHT_A} < ${WEIGHT_B} then ${WEIGHT_A} else ${WEIGHT_B} end`;
const GREATER = sql<number>`case when ${WEIGHT_A} < ${WEIGHT_B} then ${WEIGHT_B} else ${WEIGHT_A} end`;
const QUEUE_ORDER = sql`${LESSER} desc, ${GREATER} desc, matches.id`;

function candidatePairs(db: DbOrTrx) {
  return db
    .selectFrom("matches")
    .leftJoin("markets as ma", "ma.id", "matches.market_a")
    .leftJoin("markets as mb", "mb.id", "matches.market_b")
    .where("matches.status", "=", "candidate");
}

/** A candidate pair in the review queue, with the weight (24 h volume + liquidity) of each market. */
export type CandidateRow = MatchRow & { weight_a: number; weight_b: number };

/** Candidate pairs, most consequential first (see WEIGHT_A). */
export async function listCandidates(
  db: DbOrTrx,
  page: PageRequest,
): Promise<{ rows: CandidateRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    candidatePairs(db)
      .selectAll("matches")
      .select([WEIGHT_A.as("weight_a"), WEIGHT_B.as("weight_b")])
      .orderBy(QUEUE_ORDER)
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    candidatePairs(db)
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow(),
  ]);
  return {
    rows: rows.map((r) => ({ ...r, weight_a: Number(r.weight_a), weight_b: Number(r.weight_b) })),
    total: Number(count.n),
  };
}

/** Where a candidate stands in the review queue (0 first), or undefined when it is not a candidate. */
export async function candidatePosition(db: DbOrTrx, id: string): Promise<number | undefined> {
  const ranked = candidatePairs(db).select([
    "matches.id as id",
    sql<number>`row_number() over (order by ${QUEUE_ORDER})`.as("queue_rank"),
  ]);
  const row = await db
    .selectFrom(ranked.as("q"))
    .select("q.queue_rank")
    .where("q.id", "=", id)
    .executeTakeFirst();
  return row ? Number(row.queue_rank) - 1 : undefined;
}

/** What the review desk shows of a market beside what the matcher reads: its weight and where it trades. */
export interface ReviewMarketRow extends MatchableRow {
  url: string | null;
  volume: number;
  volume_24h: number;
  liquidity: number;
  category: string | null;
}

export async function reviewMarkets(
  db: DbOrTrx,
  ids: readonly string[],
): Promise<Map<string, ReviewMarketRow>> {
  const out = new Map<string, ReviewMarketRow>();
  for (const part of chunks([...new Set(ids)])) {
    const rows = await db
      .selectFrom("markets")
      .leftJoin("venue_events", "venue_events.id", "markets.event_id")
      .select([
        ...MATCHABLE_COLUMNS,
        "markets.url",
        "markets.volume",
        "markets.volume_24h",
        "markets.liquidity",
        "venue_events.category",
      ])
      .where("markets.id", "in", part)
      .execute();
    for (const row of rows) {
      out.set(row.id, {
        ...row,
        volume: Number(row.volume),
        volume_24h: Number(row.volume_24h),
        liquidity: Number(row.liquidity),
      });
    }
  }
  return out;
}

/** A market found by the pair-by-hand search. */
export interface FoundMarket {
  id: string;
  venue: string;
  title: string;
  question: string;
  status: string;
  close_time: string | null;
  volume_24h: number;
  liquidity: number;
  event_title: string | null;
}

/**
 * One venue's open or closed markets whose title or question holds every word of `q`, the most
 * traded first (the market an operator looks for is rarely a dead one).
 */
export async function searchMarkets(
  db: DbOrTrx,
  venue: string,
  q: string,
  limit: number,
): Promise<FoundMarket[]> {
  const words = searchWords(q);
  if (words.length === 0) return [];
  let query = db
    .selectFrom("markets")
    .leftJoin("venue_events", "venue_events.id", "markets.event_id")
    .select([
      "markets.id",
      "markets.venue",
      "markets.title",
      "markets.question",
      "markets.status",
      "markets.close_time",
      "markets.volume_24h",
      "markets.liquidity",
      "venue_events.title as event_title",
    ])
    .where("markets.venue", "=", venue)
    .where("markets.status", "in", ["open", "closed"]);
  for (const word of words) query = query.where(hasWord(word));
  const rows = await query.orderBy("markets.volume_24h", "desc").orderBy("markets.id").limit(limit).execute();
  return rows.map((r) => ({ ...r, volume_24h: Number(r.volume_24h), liquidity: Number(r.liquidity) }));
}
