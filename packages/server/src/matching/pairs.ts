/**
 * What a stored pair is, shared by the runner, curation, event grouping and the API: its statuses
 * and reason codes, the canonical order its two markets are kept in, and which pairs link markets
 * into a cross-venue event. No I/O here, so every writer applies the same rules.
 */
import { VENUE_IDS, type VenueId } from "../venues/model";
import type * as repo from "./repo";
import { inverseRelation, type Polarity, type Relation } from "./types";

export type MatchRow = repo.MatchRow;
export type MarketInfo = repo.MarketInfo;

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

/** A venue's place in VENUE_IDS; unknown venues sort last. */
export function venueRank(venue: string): number {
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
export function polarityProblem(relation: Relation, polarity: Polarity): string | undefined {
  if (relation === "identity" && polarity !== "same") return "must be same for an identity pair";
  if (relation === "complement" && polarity !== "inverted") return "must be inverted for a complement pair";
  return undefined;
}

/** Whether a pair links its two markets into one cross-venue event. */
export function isEdge(row: { relation: string; status: string }): boolean {
  return (row.relation === "identity" || row.relation === "complement") && row.status !== "rejected";
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
