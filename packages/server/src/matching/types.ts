/**
 * The matcher's vocabulary, shared by the pure matcher (features, relation, candidate index), the
 * persisted matches (repo, service) and the evaluation. MATCHING.md explains the relations.
 */
import type { VenueId } from "../venues/model";

/** What the matcher reads of a catalog market: text, rules, source and times, never prices. */
export interface MatchableMarket {
  id: string;
  venue: VenueId;
  /** The market's own title or question. */
  question: string;
  /** The venue event's title, when the market belongs to one (sibling markets share it). */
  eventTitle: string | null;
  /** Full rules text as the venue states it; null when the venue gives none. */
  rules: string | null;
  settlementSource: string | null;
  /** ISO 8601; when trading stops. */
  closeTime: string | null;
  /** The venue's label of the YES leg ("Yes", a team name, a strike like "Above 3.0%"). */
  yesLabel: string;
  noLabel: string;
  /**
   * The venue's own id of the market when it carries structure: a Kalshi ticker names its series
   * (the competition, award or office) and often the season and the team ("KXNBA-27-SAS").
   */
  venueMarketId?: string | null;
}

/**
 * How the YES leg of market A relates to the YES leg of market B: `identity` (same contract),
 * `complement` (A's YES is B's NO), `subset` (A's YES implies B's YES), `superset`, `overlap`
 * (both can be YES, neither implies the other), `disjoint` (both cannot be YES).
 */
export const RELATIONS = ["identity", "complement", "subset", "superset", "overlap", "disjoint"] as const;
export type Relation = (typeof RELATIONS)[number];

/** Whether A's YES leg is hedged by B's NO (`same`: identity-like) or by B's YES (`inverted`). */
export type Polarity = "same" | "inverted";

export interface MatchVerdict {
  /** Market ids, in the order they were compared: the relation reads "A is <relation> of B". */
  marketA: string;
  marketB: string;
  relation: Relation;
  polarity: Polarity;
  /** 0–1: how sure the matcher is of `relation` (see matching/README.md). */
  confidence: number;
  /** Sentences a person can read: what agreed and what differed. */
  reasons: string[];
  /**
   * Differences in edge clauses only (how a tie, cancellation or postponement settles, the close
   * instant, a source or a trigger named on one side only): the relation stands, but a settlement-
   * strict arbitrage may want to skip the pair. Empty when none was found.
   */
  caveats: string[];
  /**
   * Why this verdict may not be accepted without a person even if confident (placeholder rules,
   * missing settlement source…). Empty when nothing blocks.
   */
  blockers: string[];
}

/** The relation read from B's side. */
export function inverseRelation(r: Relation): Relation {
  return r === "subset" ? "superset" : r === "superset" ? "subset" : r;
}

/** Identity and complement pairs are the only ones that can be arbitraged directly. */
export function isTradableRelation(r: Relation): boolean {
  return r === "identity" || r === "complement";
}

/** One venue's market inside a cross-venue event. */
export interface CrossEventMarket {
  market_id: string;
  venue: VenueId;
}

/** A persisted pair inside a cross-venue event, as compare and arbitrage need it. */
export interface CrossEventPair {
  match_id: string;
  /** `relation` reads "market_a is <relation> of market_b". */
  market_a: string;
  market_b: string;
  relation: Relation;
  polarity: Polarity;
  status: "candidate" | "verified" | "rejected";
  confidence: number;
  /** Edge-clause differences (`MatchVerdict.caveats`): a settlement-strict arbitrage skips these. */
  caveats: string[];
}

/**
 * Matched markets grouped into one cross-venue event: the markets (one or more per venue) linked by
 * non-rejected identity or complement matches. Its id is the spec's `event_id`.
 */
export interface CrossEvent {
  id: string;
  title: string;
  markets: CrossEventMarket[];
  pairs: CrossEventPair[];
}

/** Finds the cross-venue event of an event id, or of a market id (the event it belongs to). */
export interface CrossEventLookup {
  resolve(eventOrMarketId: string): Promise<CrossEvent | null>;
}

/** A cross-venue event with its category: its lead market's venue event's, as GET /v1/events shows. */
export interface CategorizedCrossEvent extends CrossEvent {
  category: string | null;
}

/** Lists the events that hold a verified identity or complement pair, each with all its pairs. */
export interface VerifiedEventSource {
  eventsWithVerifiedPairs(): Promise<CategorizedCrossEvent[]>;
}
