/**
 * The cross-venue labels of a seed world as pairs: which Polymarket market is the same contract as
 * which Kalshi market (`identity`), which is its opposite (`complement`: YES on one is NO on the
 * other), and which only looks alike (`lookalike`, with the reason). Derived from `sameAs`,
 * `complementOf`, `lookalikeOf` and `moreLookalikes`; a ground truth for matching tests.
 */
import { DEFAULT_WORLD, type Lookalike, type SeedMarket } from "./seed";

export type CrossRelation = "identity" | "complement" | "lookalike";

export interface CrossListing {
  /** Polymarket seed key (the market's slug). */
  polymarket: string;
  /** Kalshi seed key (the market's ticker). */
  kalshi: string;
  relation: CrossRelation;
  /** Look-alikes: why they differ, as the Polymarket side says it (the Kalshi side's if it alone has one). */
  why?: string;
  /** Look-alikes with a clean set relation: MATCHING.md's label, from the Polymarket side. */
  trueRelation?: Lookalike["trueRelation"];
}

function lookalikes(m: SeedMarket): Lookalike[] {
  return [...(m.lookalikeOf ? [m.lookalikeOf] : []), ...(m.moreLookalikes ?? [])];
}

/** Every labelled pair of the world, once each, in seed order of the Polymarket side. */
export function crossListings(world: SeedMarket[] = DEFAULT_WORLD): CrossListing[] {
  const kalshi = new Map(world.filter((m) => m.venue === "kalshi").map((m) => [m.key, m]));
  const out: CrossListing[] = [];
  const seen = new Set<string>();
  const add = (p: CrossListing) => {
    const id = `${p.relation}:${p.polymarket}:${p.kalshi}`;
    if (seen.has(id)) return;
    seen.add(id);
    out.push(p);
  };
  const pm = world.filter((m) => m.venue === "polymarket");
  const pmKeys = new Set(pm.map((m) => m.key));
  for (const m of pm) {
    if (m.sameAs) add({ polymarket: m.key, kalshi: m.sameAs, relation: "identity" });
    if (m.complementOf) add({ polymarket: m.key, kalshi: m.complementOf, relation: "complement" });
    for (const l of lookalikes(m)) {
      add({
        polymarket: m.key,
        kalshi: l.key,
        relation: "lookalike",
        why: l.why,
        ...(l.trueRelation ? { trueRelation: l.trueRelation } : {}),
      });
    }
  }
  // Labels set only on the Kalshi side (an asymmetric world) still show up.
  for (const m of kalshi.values()) {
    if (m.sameAs && pmKeys.has(m.sameAs)) add({ polymarket: m.sameAs, kalshi: m.key, relation: "identity" });
    if (m.complementOf && pmKeys.has(m.complementOf))
      add({ polymarket: m.complementOf, kalshi: m.key, relation: "complement" });
    for (const l of lookalikes(m))
      if (pmKeys.has(l.key) && !out.some((p) => p.polymarket === l.key && p.kalshi === m.key))
        add({
          polymarket: l.key,
          kalshi: m.key,
          relation: "lookalike",
          why: l.why,
          ...(l.trueRelation ? { trueRelation: INVERSE[l.trueRelation] } : {}),
        });
  }
  return out;
}

/** The same set relation seen from the other side. */
export const INVERSE = {
  subset: "superset",
  superset: "subset",
  overlap: "overlap",
  disjoint: "disjoint",
} as const;
