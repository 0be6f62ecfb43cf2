/**
 * The matching run: feeds the catalog to the matcher (matcher.ts, pure and in memory) and keeps its
 * verdicts in `matches`. The first run indexes every open or closed market and matches each one;
 * after each catalog sync a run reads the markets written since the previous one and re-matches only
 * those whose matchable text changed (plus new ones). Resolved markets leave the index; their
 * matches stay. Runs are serialized in this process, and writes take `repo.lockMatches`, so
 * instances sharing one store decide each pair once.
 *
 * Every verdict is upserted on its canonical pair: a new pair is `candidate`, or `verified` by the
 * matcher when `isAutoAcceptable`; a pair nobody curated follows the matcher (auto-verified and no
 * longer acceptable goes back to candidate); a curated pair keeps its status and relation for good
 * and only takes the matcher's confidence, reasons, blockers and opinion (`matcher_relation`).
 */
import { type Clock, isoFromMs } from "../infra/clock";
import type { Db, Dialect } from "../infra/db/store";
import { newId } from "../infra/ids";
import type { Logger } from "../infra/log";
import type { VenueId } from "../venues/model";
import { type AnnounceDeps, recordMatched } from "./announce";
import { regroupAfterRun } from "./events";
import { isAutoAcceptable } from "./matcher";
import { canonicalPair, isEdge, type MatchStatus, venueOf } from "./pairs";
import * as repo from "./repo";
import type { MatchableMarket, MatchVerdict, Polarity, Relation } from "./types";

/** What the runner needs of a matcher (matcher.ts's Matcher; tests inject fakes). */
export interface MatcherLike {
  add(market: MatchableMarket): void;
  remove(id: string): void;
  has(id: string): boolean;
  match(market: MatchableMarket): MatchVerdict[];
}

export interface RunnerDeps extends AnnounceDeps {
  db: Db;
  dialect: Dialect;
  clock: Clock;
  log: Logger;
  /** The matcher to feed; one is made per service in production. */
  matcher: MatcherLike;
}

export interface RunSummary {
  /** Markets (re-)indexed and matched. */
  matched: number;
  /** Markets that left the index (resolved). */
  removed: number;
  /** Verdicts written. */
  verdicts: number;
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

/** A verdict in stored order, ready to upsert. */
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

function sameList(json: string, list: readonly string[]): boolean {
  return json === JSON.stringify(list);
}

/** Confidence kept to six decimals, within 0–1. */
function clampConfidence(value: number): number {
  if (!Number.isFinite(value)) return 0;
  return Math.round(Math.min(1, Math.max(0, value)) * 1e6) / 1e6;
}

function canonical(verdict: MatchVerdict): Canonical | undefined {
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

export class MatchingRunner {
  readonly #matcher: MatcherLike;
  /** Fingerprint of each indexed market's matchable text: unchanged markets are not re-matched. */
  readonly #indexed = new Map<string, string>();
  #watermark: string | null = null;
  #tail: Promise<unknown> = Promise.resolve();
  #queued: Promise<RunSummary | undefined> | undefined;
  #running = 0;
  #stopped = false;

  constructor(private readonly deps: RunnerDeps) {
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
      .catch((err) => {
        this.deps.log.warn({ err }, "matching run failed");
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
    const { changed, removed } = await this.#index();
    // All changed markets are indexed before any is matched, so two new ones find each other.
    const verdicts: Canonical[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < changed.length; i++) {
      if (i > 0 && i % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      const market = changed[i]!;
      for (const verdict of this.#matcher.match(market)) {
        const pair = canonical(verdict);
        if (!pair) continue;
        const key = repo.pairKey(pair.a, pair.b);
        if (seen.has(key)) continue;
        seen.add(key);
        verdicts.push(pair);
      }
    }
    const touched = new Set<string>();
    for (let i = 0; i < verdicts.length; i += BATCH) {
      for (const market of await this.#persist(verdicts.slice(i, i + BATCH))) touched.add(market);
    }
    const regroupedAt = this.deps.clock.now();
    await repo.underMatchesLock(this.deps.db, this.deps.dialect, (trx) =>
      regroupAfterRun(trx, touched, regroupedAt),
    );
    const summary = { matched: changed.length, removed, verdicts: verdicts.length };
    if (changed.length > 0 || removed > 0) {
      this.deps.log.info(
        { ...summary, indexed: this.#indexed.size, duration_ms: this.deps.clock.now() - started },
        "matching run finished",
      );
    }
    return summary;
  }

  /**
   * Brings the matcher's index up to the catalog: resolved markets leave it (`removed` counts them),
   * new and changed ones enter it (`changed`).
   */
  async #index(): Promise<{ changed: MatchableMarket[]; removed: number }> {
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
    return { changed, removed };
  }

  /**
   * Upserts verdicts in one transaction: decides each pair and records `market.matched` for those
   * that became verified. Returns the markets of pairs that entered or left the event graph.
   */
  async #persist(batch: Canonical[]): Promise<Set<string>> {
    const nowMs = this.deps.clock.now();
    const now = isoFromMs(nowMs);
    return repo.underMatchesLock(this.deps.db, this.deps.dialect, async (trx) => {
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
      await recordMatched(this.deps, trx, verifiedNow);
      return touched;
    });
  }
}
