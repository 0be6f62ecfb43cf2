/**
 * Matched markets: runs the matcher over the catalog, persists its verdicts as matches, lets admins
 * curate them, and groups them into cross-venue events (the spec's `event_id`).
 *
 * The matcher (matcher.ts) is pure and in memory; this service feeds it. The first run indexes every
 * open or closed market of the catalog and matches each one; after each catalog sync a run reads
 * the markets written since the previous one and re-matches only those whose matchable text changed
 * (plus new ones). Resolved markets leave the index; their matches stay. Runs are serialized in this
 * process; writes to `matches` take `repo.lockMatches`, so instances sharing one store decide each
 * pair once.
 *
 * Every verdict is upserted on its canonical pair (market_a on the venue first in VENUE_IDS):
 * a new pair is `candidate`, or `verified` by the matcher when `isAutoAcceptable`; a pair nobody
 * curated follows the matcher (auto-verified and no longer acceptable goes back to candidate); a
 * curated pair (an admin verified, rejected or created it) keeps its status and relation for good
 * and only takes the matcher's confidence, reasons, blockers and opinion (`matcher_relation`).
 * Whenever a pair becomes verified, `market.matched` (spec 6.5) is recorded in the same transaction.
 *
 * Cross-venue events: the non-rejected identity and complement pairs, linked by shared markets,
 * form one event each. After a change to that graph the affected components are recomputed (in
 * the admin's transaction; once at the end of a matcher run): a pair joining an event takes its id,
 * merged events keep the oldest id, and when a split happens, the part holding the oldest pair
 * keeps the id and the others get new ones.
 */
import type { Outbox } from "../events/outbox";
import { AppError, validationError } from "../http/errors";
import { type Clock, isoFromMs } from "../infra/clock";
import type { Db, DbOrTrx, Dialect } from "../infra/db/store";
import { newId } from "../infra/ids";
import { MICROS } from "../venues/decimal";
import { VENUE_IDS, type VenueId } from "../venues/model";
import { isAutoAcceptable } from "./matcher";
import * as repo from "./repo";
import {
  type CrossEvent,
  type CrossEventLookup,
  inverseRelation,
  type MatchableMarket,
  type MatchVerdict,
  type Polarity,
  type Relation,
} from "./types";

export type MatchRow = repo.MatchRow;
export type MarketInfo = repo.MarketInfo;

/** What the service needs of a matcher (matcher.ts's Matcher; tests inject fakes). */
export interface MatcherLike {
  add(market: MatchableMarket): void;
  remove(id: string): void;
  has(id: string): boolean;
  match(market: MatchableMarket): MatchVerdict[];
}

export const MATCH_STATUSES = ["candidate", "verified", "rejected"] as const;
export type MatchStatus = (typeof MATCH_STATUSES)[number];

export const POLARITIES = ["same", "inverted"] as const satisfies readonly Polarity[];

/** Why an admin rejected a pair (matching/README.md explains each). */
export const REJECT_REASONS = [
  "different_contract",
  "settlement_source",
  "comparator",
  "threshold",
  "window",
  "event_vs_announcement",
  "tie_void_rules",
  "polarity",
  "duplicate",
  "other",
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface MatchingLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface MatchingDeps {
  db: Db;
  dialect: Dialect;
  outbox: Outbox;
  clock: Clock;
  log: MatchingLogger;
  /** The matcher to feed; one is made per service in production. */
  matcher: MatcherLike;
  /** A market's current YES price in micro-units (PricesService.priceMicros); null when unknown. */
  priceMicros?: (marketId: string) => number | null;
}

/** Verdicts written per transaction. */
const BATCH = 200;
/** Markets matched between two turns of the event loop, so a long run does not starve requests. */
const YIELD_EVERY = 100;
/**
 * How far before the previous run's newest `updated_at` the next run starts reading: rows another
 * process writes with a slightly older clock are not missed (unchanged ones are skipped anyway).
 */
const WATERMARK_SLACK_MS = 60_000;

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

/** Who made a person's decision on a pair: recorded with it (`decided_by_account`, `decided_by_key`). */
export interface Curator {
  accountId: string;
  keyId: string;
}

export interface VerifyInput {
  relation?: Relation | undefined;
  polarity?: Polarity | undefined;
  note?: string | undefined;
}

export interface RejectInput {
  reason: RejectReason;
  note?: string | undefined;
}

export interface CreateInput {
  market_ids: string[];
  relation: Relation;
  polarity?: Polarity | undefined;
  note?: string | undefined;
}

export interface RunSummary {
  /** Markets (re-)indexed and matched. */
  matched: number;
  /** Markets that left the index (resolved). */
  removed: number;
  /** Verdicts written. */
  verdicts: number;
}

interface Canonical {
  a: string;
  b: string;
  venueA: VenueId;
  venueB: VenueId;
  relation: Relation;
  polarity: Polarity;
  confidence: number;
  reasons: string[];
  caveats: string[];
  blockers: string[];
  auto: boolean;
}

function venueRank(venue: string): number {
  const index = (VENUE_IDS as readonly string[]).indexOf(venue);
  return index < 0 ? VENUE_IDS.length : index;
}

/** The venue of a market id (`polymarket:…`, `kalshi:…`). */
export function venueOf(marketId: string): VenueId {
  const colon = marketId.indexOf(":");
  return (colon < 0 ? marketId : marketId.slice(0, colon)) as VenueId;
}

/**
 * The pair in stored order: the market of the venue first in VENUE_IDS first; on one venue, the
 * lower id first. Swapping reads the relation from the other side (subset <-> superset).
 */
export function canonicalPair(
  a: { id: string; venue: string },
  b: { id: string; venue: string },
  relation: Relation,
): { a: string; b: string; venueA: VenueId; venueB: VenueId; relation: Relation; swapped: boolean } {
  const rankA = venueRank(a.venue);
  const rankB = venueRank(b.venue);
  const swap = rankA > rankB || (rankA === rankB && a.id > b.id);
  return swap
    ? {
        a: b.id,
        b: a.id,
        venueA: b.venue as VenueId,
        venueB: a.venue as VenueId,
        relation: inverseRelation(relation),
        swapped: true,
      }
    : { a: a.id, b: b.id, venueA: a.venue as VenueId, venueB: b.venue as VenueId, relation, swapped: false };
}

/** The polarity a relation implies when none is given: YES of one is NO of the other, or not. */
export function defaultPolarity(relation: Relation): Polarity {
  return relation === "complement" || relation === "disjoint" ? "inverted" : "same";
}

/** Identity hedges YES with NO (same), complement YES with YES (inverted); nothing else is checked. */
function polarityProblem(relation: Relation, polarity: Polarity): string | undefined {
  if (relation === "identity" && polarity !== "same") return "must be same for an identity pair";
  if (relation === "complement" && polarity !== "inverted") return "must be inverted for a complement pair";
  return undefined;
}

function isEdge(row: { relation: string; status: string }): boolean {
  return (row.relation === "identity" || row.relation === "complement") && row.status !== "rejected";
}

function sameList(json: string, list: readonly string[]): boolean {
  return json === JSON.stringify(list);
}

/** Confidence kept to six decimals, within 0–1. */
function clampConfidence(value: number): number {
  if (!Number.isFinite(value)) return 0;
  return Math.round(Math.min(1, Math.max(0, value)) * 1e6) / 1e6;
}

export function toMatchable(row: repo.MatchableRow): MatchableMarket {
  let yesLabel = "Yes";
  let noLabel = "No";
  try {
    const outcomes = JSON.parse(row.outcomes) as { yes?: { label?: string }; no?: { label?: string } };
    yesLabel = outcomes.yes?.label ?? yesLabel;
    noLabel = outcomes.no?.label ?? noLabel;
  } catch {
    // A malformed outcomes column keeps the plain labels.
  }
  return {
    id: row.id,
    venue: row.venue as VenueId,
    question: row.question || row.title,
    eventTitle: row.event_title,
    rules: row.rules,
    settlementSource: row.settlement_source,
    closeTime: row.close_time,
    yesLabel,
    noLabel,
    // A Kalshi ticker names the series, season and team (`features.ts` reads it).
    venueMarketId: row.venue_market_id,
  };
}

/** The label of a market's YES leg ("Yes", a team name, a strike). */
export function marketYesLabel(info: MarketInfo | undefined): string {
  if (!info) return "Yes";
  try {
    return (JSON.parse(info.outcomes) as { yes?: { label?: string } }).yes?.label ?? "Yes";
  } catch {
    return "Yes";
  }
}

export class MatchingService implements CrossEventLookup {
  readonly #matcher: MatcherLike;
  /** Fingerprint of each indexed market's matchable text: unchanged markets are not re-matched. */
  readonly #indexed = new Map<string, string>();
  #watermark: string | null = null;
  #tail: Promise<unknown> = Promise.resolve();
  #queued: Promise<RunSummary | undefined> | undefined;
  #running = 0;
  #stopped = false;

  constructor(private readonly deps: MatchingDeps) {
    this.#matcher = deps.matcher;
  }

  /** Markets in the matcher's index. */
  get indexed(): number {
    return this.#indexed.size;
  }

  /** Indexes and matches the catalog as it is now (in the background; `idle()` waits for it). */
  start(): void {
    this.#stopped = false;
    void this.refresh();
  }

  /** Waits for the run in progress; later refreshes do nothing. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.idle();
  }

  /** Resolves when no run is queued or running. */
  async idle(): Promise<void> {
    while (this.#running > 0 || this.#queued) {
      await this.#tail.catch(() => {});
    }
  }

  /**
   * Matches what changed in the catalog since the last run (everything on the first). Called after
   * each catalog sync; a refresh asked for while one is queued joins it. Never throws.
   */
  refresh(): Promise<RunSummary | undefined> {
    if (this.#stopped) return Promise.resolve(undefined);
    if (this.#queued) return this.#queued;
    this.#running += 1;
    const run = this.#tail
      .catch(() => {})
      .then(async () => {
        this.#queued = undefined;
        if (this.#stopped) return undefined;
        return this.#run();
      })
      .catch((error) => {
        this.deps.log.warn({ error: String(error) }, "matching run failed");
        return undefined;
      })
      .finally(() => {
        this.#running -= 1;
      });
    this.#queued = run;
    this.#tail = run;
    return run;
  }

  async #run(): Promise<RunSummary> {
    const started = this.deps.clock.now();
    const since =
      this.#watermark === null ? null : isoFromMs(Date.parse(this.#watermark) - WATERMARK_SLACK_MS);
    const rows = await repo.matchableMarkets(this.deps.db, since);
    const changed: MatchableMarket[] = [];
    let removed = 0;
    for (const row of rows) {
      if (this.#watermark === null || row.updated_at > this.#watermark) this.#watermark = row.updated_at;
      if (row.status !== "open" && row.status !== "closed") {
        if (this.#indexed.delete(row.id)) {
          this.#matcher.remove(row.id);
          removed += 1;
        }
        continue;
      }
      const market = toMatchable(row);
      const fingerprint = JSON.stringify(market);
      if (this.#indexed.get(row.id) === fingerprint) continue;
      this.#indexed.set(row.id, fingerprint);
      this.#matcher.add(market);
      changed.push(market);
    }
    // All changed markets are indexed before any is matched, so two new ones find each other.
    const verdicts: Canonical[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < changed.length; i++) {
      if (i > 0 && i % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      const market = changed[i]!;
      for (const verdict of this.#matcher.match(market)) {
        const canonical = this.#canonical(verdict);
        if (!canonical) continue;
        const key = repo.pairKey(canonical.a, canonical.b);
        if (seen.has(key)) continue;
        seen.add(key);
        verdicts.push(canonical);
      }
    }
    const touched = new Set<string>();
    for (let i = 0; i < verdicts.length; i += BATCH) {
      for (const market of await this.#persist(verdicts.slice(i, i + BATCH))) touched.add(market);
    }
    await this.#regroupAfterRun(touched);
    const summary = { matched: changed.length, removed, verdicts: verdicts.length };
    if (changed.length > 0 || removed > 0) {
      this.deps.log.info(
        { ...summary, indexed: this.#indexed.size, duration_ms: this.deps.clock.now() - started },
        "matching run finished",
      );
    }
    return summary;
  }

  #canonical(verdict: MatchVerdict): Canonical | undefined {
    if (verdict.marketA === verdict.marketB) return undefined;
    const pair = canonicalPair(
      { id: verdict.marketA, venue: venueOf(verdict.marketA) },
      { id: verdict.marketB, venue: venueOf(verdict.marketB) },
      verdict.relation,
    );
    return {
      a: pair.a,
      b: pair.b,
      venueA: pair.venueA,
      venueB: pair.venueB,
      relation: pair.relation,
      polarity: verdict.polarity,
      confidence: clampConfidence(verdict.confidence),
      reasons: [...verdict.reasons],
      caveats: [...verdict.caveats],
      blockers: [...verdict.blockers],
      auto: isAutoAcceptable(verdict),
    };
  }

  /**
   * Upserts verdicts in one transaction: decides each pair and records `market.matched` for those
   * that became verified. Returns the markets of pairs that entered or left the event graph.
   */
  async #persist(batch: Canonical[]): Promise<Set<string>> {
    const nowMs = this.deps.clock.now();
    const now = isoFromMs(nowMs);
    return this.deps.db.transaction().execute(async (trx) => {
      await repo.lockMatches(trx, this.deps.dialect);
      const existing = await repo.findPairs(trx, batch);
      const touched = new Set<string>();
      const verifiedNow: string[] = [];
      const fresh: Array<Parameters<typeof repo.insertMatches>[1][number]> = [];
      for (const v of batch) {
        const row = existing.get(repo.pairKey(v.a, v.b));
        if (!row) {
          const row = {
            id: newId("mat", nowMs),
            market_a: v.a,
            market_b: v.b,
            venue_a: v.venueA,
            venue_b: v.venueB,
            relation: v.relation,
            polarity: v.polarity,
            matcher_relation: v.relation,
            matcher_polarity: v.polarity,
            confidence: v.confidence,
            reasons: JSON.stringify(v.reasons),
            caveats: JSON.stringify(v.caveats),
            blockers: JSON.stringify(v.blockers),
            status: v.auto ? "verified" : "candidate",
            status_reason: null,
            status_note: null,
            decided_by: v.auto ? "matcher" : null,
            decided_at: v.auto ? now : null,
            curated: 0,
            event_id: null,
            created_at: now,
            updated_at: now,
          };
          fresh.push(row);
          if (isEdge(row)) touched.add(v.a).add(v.b);
          if (v.auto) verifiedNow.push(row.id);
          continue;
        }
        const opinion: repo.MatchChanges = {};
        if (row.matcher_relation !== v.relation) opinion.matcher_relation = v.relation;
        if (row.matcher_polarity !== v.polarity) opinion.matcher_polarity = v.polarity;
        if (row.confidence !== v.confidence) opinion.confidence = v.confidence;
        if (!sameList(row.reasons, v.reasons)) opinion.reasons = JSON.stringify(v.reasons);
        if (!sameList(row.blockers, v.blockers)) opinion.blockers = JSON.stringify(v.blockers);
        if (!sameList(row.caveats, v.caveats)) opinion.caveats = JSON.stringify(v.caveats);
        if (row.curated === 1) {
          // An admin decided: the matcher's opinion is kept beside the decision, never over it.
          if (Object.keys(opinion).length > 0)
            await repo.updateMatch(trx, row.id, { ...opinion, updated_at: now });
          continue;
        }
        const status: MatchStatus = v.auto ? "verified" : "candidate";
        const changes: repo.MatchChanges = { ...opinion };
        if (row.relation !== v.relation) changes.relation = v.relation;
        if (row.polarity !== v.polarity) changes.polarity = v.polarity;
        if (row.status !== status) {
          changes.status = status;
          changes.decided_by = v.auto ? "matcher" : null;
          changes.decided_at = v.auto ? now : null;
          if (v.auto) verifiedNow.push(row.id);
        }
        if (Object.keys(changes).length === 0) continue;
        const after = { relation: v.relation, status };
        if (isEdge(row) !== isEdge(after)) {
          touched.add(row.market_a).add(row.market_b);
          if (!isEdge(after)) changes.event_id = null;
        }
        await repo.updateMatch(trx, row.id, { ...changes, updated_at: now });
      }
      await repo.insertMatches(trx, fresh);
      await this.#recordMatched(trx, verifiedNow);
      return touched;
    });
  }

  /**
   * Regroups events once per run rather than per batch: a large component would otherwise be walked
   * again by every batch. Event-graph pairs still without an event (this run's, or a run that died
   * before this step) are picked up here too, so an interrupted run heals on the next one.
   */
  async #regroupAfterRun(touched: Set<string>): Promise<void> {
    const nowMs = this.deps.clock.now();
    await this.deps.db.transaction().execute(async (trx) => {
      await repo.lockMatches(trx, this.deps.dialect);
      const seeds = new Set(touched);
      for (const edge of await repo.edgesWithoutEvent(trx)) seeds.add(edge.market_a).add(edge.market_b);
      if (seeds.size > 0) await this.#regroup(trx, seeds, nowMs);
    });
  }

  /**
   * Recomputes the events of the components holding `seeds` (see the module header for which ids
   * survive). Ids are time-sortable, so the smaller id is the older.
   */
  async #regroup(trx: DbOrTrx, seeds: Set<string>, nowMs: number): Promise<void> {
    // Every edge reachable from the seeds, breadth first over all seeds at once (one query per
    // level and chunk, not per market), then split into connected components.
    const edges = new Map<string, repo.EdgeRow>();
    const reached = new Set(seeds);
    let frontier = [...seeds];
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const edge of await repo.edgesTouching(trx, frontier)) {
        if (edges.has(edge.id)) continue;
        edges.set(edge.id, edge);
        for (const market of [edge.market_a, edge.market_b]) {
          if (!reached.has(market)) {
            reached.add(market);
            next.push(market);
          }
        }
      }
      frontier = next;
    }
    const parent = new Map<string, string>();
    const root = (market: string): string => {
      let node = market;
      while (parent.has(node) && parent.get(node) !== node) node = parent.get(node)!;
      parent.set(market, node);
      return node;
    };
    for (const edge of edges.values()) {
      const a = root(edge.market_a);
      const b = root(edge.market_b);
      if (a !== b) parent.set(a, b);
    }
    const byRoot = new Map<string, repo.EdgeRow[]>();
    for (const edge of edges.values()) {
      const key = root(edge.market_a);
      const list = byRoot.get(key) ?? [];
      list.push(edge);
      byRoot.set(key, list);
    }
    const components = [...byRoot.values()];
    // For each id in use: the components carrying it, and the oldest pair carrying it in each.
    const carriers = new Map<string, Array<{ component: number; oldest: string }>>();
    components.forEach((pairs, component) => {
      const oldest = new Map<string, string>();
      for (const pair of pairs) {
        if (pair.event_id === null) continue;
        const known = oldest.get(pair.event_id);
        if (known === undefined || pair.id < known) oldest.set(pair.event_id, pair.id);
      }
      for (const [eventId, pairId] of oldest) {
        const list = carriers.get(eventId) ?? [];
        list.push({ component, oldest: pairId });
        carriers.set(eventId, list);
      }
    });
    const assigned: Array<string | undefined> = components.map(() => undefined);
    for (const eventId of [...carriers.keys()].sort()) {
      const options = carriers
        .get(eventId)!
        .filter((option) => assigned[option.component] === undefined)
        .sort((x, y) => (x.oldest < y.oldest ? -1 : x.oldest > y.oldest ? 1 : 0));
      if (options[0]) assigned[options[0].component] = eventId;
    }
    const changes: Array<{ id: string; eventId: string }> = [];
    for (let i = 0; i < components.length; i++) {
      const eventId = assigned[i] ?? newId("xev", nowMs);
      for (const pair of components[i]!)
        if (pair.event_id !== eventId) changes.push({ id: pair.id, eventId });
    }
    await repo.setEventIds(trx, changes, isoFromMs(nowMs));
  }

  /** `market.matched` (spec 6.5) for pairs that just became verified; global (no account). */
  async #recordMatched(trx: DbOrTrx, matchIds: readonly string[]): Promise<void> {
    if (matchIds.length === 0) return;
    // Read together and written with one statement per hundred events: a first run over a large
    // catalog verifies thousands of pairs at once.
    const byId = new Map((await repo.findMatches(trx, matchIds)).map((row) => [row.id, row]));
    const rows = matchIds.flatMap((id) => byId.get(id) ?? []);
    const infos = await repo.marketInfos(
      trx,
      rows.flatMap((row) => [row.market_a, row.market_b]),
    );
    const events = rows.map((row) => {
      const priceA = this.#price(row.market_a, infos.get(row.market_a));
      const priceB = this.#price(row.market_b, infos.get(row.market_b));
      const platforms: Record<string, { event_id: string; title: string; yes_price: number }> = {};
      for (const [id, venue, price] of [
        [row.market_a, row.venue_a, priceA],
        [row.market_b, row.venue_b, priceB],
      ] as const) {
        const info = infos.get(id);
        platforms[venue] = {
          event_id: info?.event_id ?? id,
          title: info?.question ?? info?.title ?? id,
          yes_price: (price ?? 0) / MICROS,
        };
      }
      // B's price of A's YES leg: its YES for a same-polarity pair, its NO (1 - YES) for an inverted one.
      let spread = 0;
      let spreadPct = 0;
      if (priceA !== null && priceB !== null) {
        const comparable = row.polarity === "inverted" ? MICROS - priceB : priceB;
        const gap = Math.abs(priceA - comparable);
        const lower = Math.min(priceA, comparable);
        spread = gap / MICROS;
        spreadPct = lower > 0 ? Math.round((gap / lower) * 100 * 100) / 100 : 0;
      }
      return {
        type: "market.matched" as const,
        data: { match_id: row.id, confidence: row.confidence, platforms, spread, spread_pct: spreadPct },
        accountId: null,
        environment: null,
      };
    });
    await this.deps.outbox.recordMany(trx, events);
  }

  /** Current YES price (micro-units): the live one, else the catalog's mid or last trade. */
  #price(marketId: string, info: MarketInfo | undefined): number | null {
    const live = this.deps.priceMicros?.(marketId) ?? null;
    if (live !== null) return live;
    if (!info) return null;
    if (info.best_bid !== null && info.best_ask !== null)
      return Math.round((info.best_bid + info.best_ask) / 2);
    return info.last_price;
  }

  // --- Reads -------------------------------------------------------------------------------------

  async list(
    filter: repo.MatchFilter,
    page: { limit: number; offset: number },
  ): Promise<{ items: MatchDetail[]; total: number }> {
    const { rows, total } = await repo.listMatches(this.deps.db, filter, page);
    return { items: await this.#details(this.deps.db, rows), total };
  }

  async get(id: string): Promise<MatchDetail> {
    const row = await repo.findMatch(this.deps.db, id);
    if (!row) throw notFound(id);
    return (await this.#details(this.deps.db, [row]))[0]!;
  }

  async #details(db: DbOrTrx, rows: MatchRow[]): Promise<MatchDetail[]> {
    const infos = await repo.marketInfos(
      db,
      rows.flatMap((r) => [r.market_a, r.market_b]),
    );
    return rows.map((row) => ({ row, a: infos.get(row.market_a), b: infos.get(row.market_b) }));
  }

  // --- Curation ----------------------------------------------------------------------------------

  /**
   * An operator verifies a pair, optionally correcting its relation and polarity (read as "market_a is
   * <relation> of market_b"). Allowed from any status; it overwrites the previous decision.
   */
  async verify(id: string, input: VerifyInput, curator: Curator): Promise<MatchDetail> {
    return this.#write(async (trx, nowMs) => {
      const row = await repo.findMatch(trx, id);
      if (!row) throw notFound(id);
      await this.#decideVerified(trx, row, input, curator, nowMs);
      return (await repo.findMatch(trx, id))!;
    });
  }

  /** An operator rejects a pair with a reason code; allowed from any status (it overwrites). */
  async reject(id: string, input: RejectInput, curator: Curator): Promise<MatchDetail> {
    return this.#write(async (trx, nowMs) => {
      const row = await repo.findMatch(trx, id);
      if (!row) throw notFound(id);
      const now = isoFromMs(nowMs);
      await repo.updateMatch(trx, id, {
        status: "rejected",
        status_reason: input.reason,
        status_note: input.note ?? null,
        decided_by: "admin",
        decided_by_account: curator.accountId,
        decided_by_key: curator.keyId,
        decided_at: now,
        curated: 1,
        event_id: null,
        updated_at: now,
      });
      if (isEdge(row)) await this.#regroup(trx, new Set([row.market_a, row.market_b]), nowMs);
      return (await repo.findMatch(trx, id))!;
    });
  }

  /**
   * An operator pairs two markets by hand: verified and curated. `relation` reads "first is <relation>
   * of second". A pair that already exists is verified with this relation instead (created false).
   */
  async create(input: CreateInput, curator: Curator): Promise<{ match: MatchDetail; created: boolean }> {
    const [first, second] = input.market_ids;
    if (input.market_ids.length !== 2 || first === undefined || second === undefined) {
      throw validationError({ "body.market_ids": "must name exactly two markets" });
    }
    if (first === second) throw validationError({ "body.market_ids": "must name two different markets" });
    let created = false;
    const match = await this.#write(async (trx, nowMs) => {
      const infos = await repo.marketInfos(trx, [first, second]);
      for (const id of [first, second]) {
        if (!infos.has(id)) throw new AppError("MARKET_NOT_FOUND", `No market ${id}`, { market_id: id });
      }
      const one = infos.get(first)!;
      const other = infos.get(second)!;
      if (one.venue === other.venue) {
        throw validationError({
          "body.market_ids": `must be on two different venues (both are on ${one.venue})`,
        });
      }
      const pair = canonicalPair(one, other, input.relation);
      const polarity = input.polarity ?? defaultPolarity(input.relation);
      const problem = polarityProblem(pair.relation, polarity);
      if (problem) throw validationError({ "body.polarity": problem });
      const existing = await repo.findPair(trx, pair.a, pair.b);
      if (existing) {
        await this.#decideVerified(
          trx,
          existing,
          { relation: pair.relation, polarity, note: input.note },
          curator,
          nowMs,
        );
        return (await repo.findMatch(trx, existing.id))!;
      }
      const now = isoFromMs(nowMs);
      const row = {
        id: newId("mat", nowMs),
        market_a: pair.a,
        market_b: pair.b,
        venue_a: pair.venueA,
        venue_b: pair.venueB,
        relation: pair.relation,
        polarity,
        matcher_relation: null,
        matcher_polarity: null,
        confidence: 1,
        reasons: JSON.stringify(["Paired by an admin"]),
        caveats: "[]",
        blockers: "[]",
        status: "verified",
        status_reason: null,
        status_note: input.note ?? null,
        decided_by: "admin",
        decided_by_account: curator.accountId,
        decided_by_key: curator.keyId,
        decided_at: now,
        curated: 1,
        event_id: null,
        created_at: now,
        updated_at: now,
      };
      await repo.insertMatch(trx, row);
      if (isEdge(row)) await this.#regroup(trx, new Set([row.market_a, row.market_b]), nowMs);
      await this.#recordMatched(trx, [row.id]);
      created = true;
      return (await repo.findMatch(trx, row.id))!;
    });
    return { match, created };
  }

  async #decideVerified(
    trx: DbOrTrx,
    row: MatchRow,
    input: VerifyInput,
    curator: Curator,
    nowMs: number,
  ): Promise<void> {
    const relation = input.relation ?? (row.relation as Relation);
    const polarity =
      input.polarity ??
      (input.relation !== undefined ? defaultPolarity(relation) : (row.polarity as Polarity));
    const problem = polarityProblem(relation, polarity);
    if (problem) throw validationError({ "body.polarity": problem });
    const now = isoFromMs(nowMs);
    const after = { relation, status: "verified" };
    await repo.updateMatch(trx, row.id, {
      relation,
      polarity,
      status: "verified",
      status_reason: null,
      status_note: input.note ?? null,
      decided_by: "admin",
      decided_by_account: curator.accountId,
      decided_by_key: curator.keyId,
      decided_at: now,
      curated: 1,
      ...(isEdge(after) ? {} : { event_id: null }),
      updated_at: now,
    });
    if (isEdge(row) !== isEdge(after)) {
      await this.#regroup(trx, new Set([row.market_a, row.market_b]), nowMs);
    }
    if (row.status !== "verified") await this.#recordMatched(trx, [row.id]);
  }

  async #write(work: (trx: DbOrTrx, nowMs: number) => Promise<MatchRow>): Promise<MatchDetail> {
    const nowMs = this.deps.clock.now();
    return this.deps.db.transaction().execute(async (trx) => {
      await repo.lockMatches(trx, this.deps.dialect);
      const row = await work(trx, nowMs);
      return (await this.#details(trx, [row]))[0]!;
    });
  }

  // --- Cross-venue events ------------------------------------------------------------------------

  /** The event of an event id (`xev_…`), or the event a market belongs to; null if neither. */
  async resolve(eventOrMarketId: string): Promise<CrossEvent | null> {
    const detail = await this.#event(eventOrMarketId);
    if (!detail) return null;
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
  async getEvent(eventOrMarketId: string): Promise<CrossEventDetail> {
    const detail = await this.#event(eventOrMarketId);
    if (!detail) {
      throw new AppError("EVENT_NOT_FOUND", `No cross-venue event ${eventOrMarketId}`, {
        event_id: eventOrMarketId,
      });
    }
    return detail;
  }

  async listEvents(
    filter: repo.EventFilter,
    page: { limit: number; offset: number },
  ): Promise<{ items: CrossEventDetail[]; total: number }> {
    const { ids, total } = await repo.listEventIds(this.deps.db, filter, page);
    const details = await this.#eventDetails(this.deps.db, await repo.pairsOfEvents(this.deps.db, ids));
    const byId = new Map(details.map((d) => [d.id, d]));
    return { items: ids.flatMap((id) => byId.get(id) ?? []), total };
  }

  async #event(eventOrMarketId: string): Promise<CrossEventDetail | null> {
    let pairs = await repo.eventPairs(this.deps.db, eventOrMarketId);
    if (pairs.length === 0) {
      const eventId = await repo.eventOfMarket(this.deps.db, eventOrMarketId);
      if (eventId === undefined) return null;
      pairs = await repo.eventPairs(this.deps.db, eventId);
    }
    if (pairs.length === 0) return null;
    return (await this.#eventDetails(this.deps.db, pairs))[0] ?? null;
  }

  /** Builds the events of these pairs (grouped by event id, each oldest pair first). */
  async #eventDetails(db: DbOrTrx, pairs: MatchRow[]): Promise<CrossEventDetail[]> {
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
}

function notFound(id: string): AppError {
  return new AppError("MATCH_NOT_FOUND", `No match ${id}`, { match_id: id });
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
