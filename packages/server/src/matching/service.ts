/**
 * Matched markets as one object for app.ts, the routes and price comparison: the runner
 * (runner.ts), operators' curation (curation.ts) and the reads (reads.ts) share one set of
 * dependencies and one store, and the app starts, stops and refreshes matching in one place. Each
 * method hands off to the module that owns it; nothing is decided here.
 */
import {
  type CreateInput,
  Curation,
  type CurationDeps,
  type Curator,
  type RejectInput,
  type VerifyInput,
} from "./curation";
import * as reads from "./reads";
import * as repo from "./repo";
import { MatchingRunner, type RunnerDeps, type RunSummary } from "./runner";
import type { CategorizedCrossEvent, CrossEvent, CrossEventLookup, VerifiedEventSource } from "./types";

export interface MatchingDeps extends RunnerDeps, CurationDeps {}

export class MatchingService implements CrossEventLookup, VerifiedEventSource {
  readonly #runner: MatchingRunner;
  readonly #curation: Curation;

  constructor(private readonly deps: MatchingDeps) {
    this.#runner = new MatchingRunner(deps);
    this.#curation = new Curation(deps);
  }

  // --- Runs over the catalog ---------------------------------------------------------------------

  /** Markets in the matcher's index. */
  get indexed(): number {
    return this.#runner.indexed;
  }

  start(): void {
    this.#runner.start();
  }

  stop(): Promise<void> {
    return this.#runner.stop();
  }

  idle(): Promise<void> {
    return this.#runner.idle();
  }

  refresh(): Promise<RunSummary | undefined> {
    return this.#runner.refresh();
  }

  // --- Reads -------------------------------------------------------------------------------------

  list(
    filter: repo.MatchFilter,
    page: { limit: number; offset: number },
  ): Promise<{ items: reads.MatchDetail[]; total: number }> {
    return reads.listMatches(this.deps.db, filter, page);
  }

  get(id: string): Promise<reads.MatchDetail> {
    return reads.getMatch(this.deps.db, id);
  }

  resolve(eventOrMarketId: string): Promise<CrossEvent | null> {
    return reads.resolveEvent(this.deps.db, eventOrMarketId);
  }

  /** The events holding a verified identity or complement pair (the arbitrage scanner's universe). */
  eventsWithVerifiedPairs(): Promise<CategorizedCrossEvent[]> {
    return reads.eventsWithVerifiedPairs(this.deps.db);
  }

  getEvent(eventOrMarketId: string): Promise<reads.CrossEventDetail> {
    return reads.getEvent(this.deps.db, eventOrMarketId);
  }

  listEvents(
    filter: repo.EventFilter,
    page: { limit: number; offset: number },
  ): Promise<{ items: reads.CrossEventDetail[]; total: number }> {
    return reads.listEvents(this.deps.db, filter, page);
  }

  // --- The operators' review desk (console/review-pages.ts) ----------------------------------------

  /** Candidate pairs, the most consequential (24 h volume + liquidity of the thinner market) first. */
  candidates(page: {
    limit: number;
    offset: number;
  }): Promise<{ items: reads.CandidateDetail[]; total: number }> {
    return reads.listCandidates(this.deps.db, page);
  }

  /** A candidate's place in that queue (0 first); undefined when the pair is not a candidate. */
  candidatePosition(id: string): Promise<number | undefined> {
    return repo.candidatePosition(this.deps.db, id);
  }

  /** Markets as the desk shows them: what the matcher reads, their weight and venue link. */
  reviewMarkets(ids: readonly string[]): Promise<Map<string, repo.ReviewMarketRow>> {
    return repo.reviewMarkets(this.deps.db, ids);
  }

  /** One venue's markets matching a search, most traded first (pairing by hand). */
  searchMarkets(venue: string, q: string, limit: number): Promise<repo.FoundMarket[]> {
    return repo.searchMarkets(this.deps.db, venue, q, limit);
  }

  // --- Curation ----------------------------------------------------------------------------------

  verify(id: string, input: VerifyInput, curator: Curator): Promise<reads.MatchDetail> {
    return this.#curation.verify(id, input, curator);
  }

  reject(id: string, input: RejectInput, curator: Curator): Promise<reads.MatchDetail> {
    return this.#curation.reject(id, input, curator);
  }

  create(input: CreateInput, curator: Curator): Promise<{ match: reads.MatchDetail; created: boolean }> {
    return this.#curation.create(input, curator);
  }
}
