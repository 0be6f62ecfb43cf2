/** A market as the matcher reads it, with dull defaults: tests name only what they are about. */
import type { MatchableMarket } from "../../src/matching/types";

export function market(
  id: string,
  venue: "polymarket" | "kalshi",
  question: string,
  rules: string | null,
  extra: Partial<MatchableMarket> = {},
): MatchableMarket {
  return {
    id,
    venue,
    question,
    eventTitle: null,
    rules,
    settlementSource: null,
    closeTime: "2026-12-31T23:00:00Z",
    yesLabel: "Yes",
    noLabel: "No",
    ...extra,
  };
}
