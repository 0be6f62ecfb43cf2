/**
 * The matcher: an index of catalog markets by venue, and `match(m)` which finds the markets of the
 * other venues that are about the same thing as `m` and says how they relate. Pure and in memory:
 * no I/O, no clock, deterministic for the same inputs.
 */
import { type ContractFeatures, extractFeatures } from "./features";
import { compareContracts } from "./relation";
import type { MatchableMarket, MatchVerdict } from "./types";

/** Confidence at or above which an identity or complement verdict without blockers is auto-verified. */
export const AUTO_ACCEPT_CONFIDENCE = 0.9;

/** True when the matcher may verify this verdict without a person. */
export function isAutoAcceptable(v: MatchVerdict): boolean {
  return (
    (v.relation === "identity" || v.relation === "complement") &&
    v.confidence >= AUTO_ACCEPT_CONFIDENCE &&
    v.blockers.length === 0
  );
}

export interface MatcherOptions {
  /** How many candidates of each other venue are compared in full per market. Default 12. */
  candidatesPerMarket?: number;
}

/** Postings longer than this are too common to say anything (a bare "bitcoin"). */
const MAX_POSTING = 400;

interface Indexed {
  features: ContractFeatures;
}

export class Matcher {
  readonly #markets = new Map<string, Indexed>();
  /** venue -> blocking key -> market ids */
  readonly #postings = new Map<string, Map<string, Set<string>>>();
  /** Document frequency of content words, over every indexed market. */
  readonly #df = new Map<string, number>();
  readonly #k: number;

  constructor(readonly options: MatcherOptions = {}) {
    this.#k = options.candidatesPerMarket ?? 12;
  }

  get size(): number {
    return this.#markets.size;
  }

  has(id: string): boolean {
    return this.#markets.has(id);
  }

  /** Adds or replaces a market (a changed market is re-indexed). */
  add(market: MatchableMarket): void {
    this.remove(market.id);
    const features = extractFeatures(market);
    this.#markets.set(market.id, { features });
    const byKey = this.#postings.get(market.venue) ?? new Map<string, Set<string>>();
    this.#postings.set(market.venue, byKey);
    for (const key of features.keys) {
      const ids = byKey.get(key) ?? new Set<string>();
      byKey.set(key, ids);
      ids.add(market.id);
    }
    for (const w of features.content.keys()) this.#df.set(w, (this.#df.get(w) ?? 0) + 1);
  }

  remove(id: string): void {
    const old = this.#markets.get(id);
    if (!old) return;
    this.#markets.delete(id);
    const byKey = this.#postings.get(old.features.market.venue);
    for (const key of old.features.keys) byKey?.get(key)?.delete(id);
    for (const w of old.features.content.keys()) {
      const n = (this.#df.get(w) ?? 1) - 1;
      if (n <= 0) this.#df.delete(w);
      else this.#df.set(w, n);
    }
  }

  readonly #idf = (word: string): number =>
    Math.log(1 + (this.#markets.size + 1) / ((this.#df.get(word) ?? 0) + 1));

  /** Features of an indexed market (tests, the evaluation). */
  features(id: string): ContractFeatures | undefined {
    return this.#markets.get(id)?.features;
  }

  /**
   * Verdicts of `market` against the indexed markets of other venues that are about the same thing
   * (same subject and period), best first. `marketA` is always `market`.
   */
  match(market: MatchableMarket): MatchVerdict[] {
    const features = this.#markets.get(market.id)?.features ?? extractFeatures(market);
    const out: MatchVerdict[] = [];
    for (const [venue, byKey] of this.#postings) {
      if (venue === market.venue) continue;
      for (const id of this.#candidates(features, byKey)) {
        const other = this.#markets.get(id);
        if (!other) continue;
        const verdict = compareContracts(features, other.features, { idf: this.#idf });
        if (verdict) out.push(verdict);
      }
    }
    return out.sort((x, y) => rank(y) - rank(x) || (x.marketB < y.marketB ? -1 : 1));
  }

  /** The best-scoring markets sharing blocking keys with `features`, at most k. */
  #candidates(features: ContractFeatures, byKey: Map<string, Set<string>>): string[] {
    const scores = new Map<string, number>();
    for (const key of features.keys) {
      const ids = byKey.get(key);
      if (!ids || ids.size === 0 || ids.size > MAX_POSTING) continue;
      // Rare keys say more; an entity in the same month says more than the entity alone.
      const weight =
        (key.startsWith("em:") || key.startsWith("ec:") || key.startsWith("tm:")
          ? 2
          : key.startsWith("nv:")
            ? 1.5
            : key.startsWith("wm:")
              ? 0.5
              : 1) / Math.log2(2 + ids.size);
      for (const id of ids) scores.set(id, (scores.get(id) ?? 0) + weight);
    }
    if (scores.size <= this.#k) return [...scores.keys()];
    return [...scores.entries()]
      .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
      .slice(0, this.#k)
      .map(([id]) => id);
  }
}

/** Tradable relations first, then by confidence. */
function rank(v: MatchVerdict): number {
  return (v.relation === "identity" || v.relation === "complement" ? 1 : 0) + v.confidence;
}

/**
 * Matches two or more catalogs: every market of every venue against the others, each pair once
 * (from the side of the venue listed first), best first per market.
 */
export function matchCatalogs(markets: MatchableMarket[], options: MatcherOptions = {}): MatchVerdict[] {
  const matcher = new Matcher(options);
  for (const m of markets) matcher.add(m);
  const seen = new Set<string>();
  const out: MatchVerdict[] = [];
  for (const m of markets) {
    for (const v of matcher.match(m)) {
      const key = v.marketA < v.marketB ? `${v.marketA} ${v.marketB}` : `${v.marketB} ${v.marketA}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(v);
    }
  }
  return out;
}
