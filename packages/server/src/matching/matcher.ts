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
  /** This market's row in the candidate scores (`CandidateScores`); reused once it is removed. */
  slot: number;
}

/**
 * The scores of the markets sharing blocking keys with one market, kept in arrays that live as long
 * as the matcher and are reset after each use, and indexed by each market's slot (a small number the
 * postings hold, rather than the market: reading a number from the posting needs no visit to the
 * market's object). Why: a new map of scores per market, and a sorted copy of all its entries, were
 * the largest garbage of matching one market (up to thousands of entries each time), and that
 * garbage is what the collector pauses for in the slow tail of a new market's latency. Same scores,
 * same k best (score, then id), without the garbage.
 */
class CandidateScores {
  /** Score of each slot; 0 for every slot not touched since the last `take`. */
  #score = new Float64Array(256);
  /** Slots touched since the last `take`, in the order they were first touched. */
  #touched = new Int32Array(256);
  #count = 0;
  /** Markets by slot, and the slots free for reuse. */
  readonly #bySlot: Array<Indexed | undefined> = [];
  readonly #free: number[] = [];

  /** A market being indexed, with a slot of its own. */
  open(features: ContractFeatures): Indexed {
    const slot = this.#free.pop() ?? this.#bySlot.length;
    if (slot >= this.#score.length) {
      // Every score is 0 between two uses: larger arrays need nothing copied.
      this.#score = new Float64Array(this.#score.length * 2);
      this.#touched = new Int32Array(this.#score.length);
    }
    const indexed: Indexed = { features, slot };
    this.#bySlot[slot] = indexed;
    return indexed;
  }

  /** A market leaving the index: its slot is free for the next one. */
  close(indexed: Indexed): void {
    this.#bySlot[indexed.slot] = undefined;
    this.#free.push(indexed.slot);
  }

  /** Adds a key's weight to a slot's score (always > 0, so a score of 0 means "not touched yet"). */
  add(slot: number, weight: number): void {
    // Summed in the order the keys come, from 0, as `(scores.get(id) ?? 0) + weight` did.
    if (this.#score[slot] === 0) this.#touched[this.#count++] = slot;
    this.#score[slot]! += weight;
  }

  /**
   * The k best markets scored since the last call (higher score first, then the lower id), or all
   * of them in the order they were first scored when there are at most k; then every score is reset.
   */
  take(k: number): Indexed[] {
    const touched = this.#touched;
    const n = this.#count;
    const best: number[] = [];
    if (n <= k) {
      for (let i = 0; i < n; i++) best.push(touched[i]!);
    } else {
      // As many as `sorted.slice(0, k)` keeps: k, unless misconfigured as a fraction or below zero.
      const whole = Math.trunc(k);
      const keep = Number.isNaN(whole) ? 0 : whole < 0 ? Math.max(0, n + whole) : whole;
      // Insertion into a sorted list of at most `keep`: the order a full sort gives, for its first ones.
      for (let i = 0; i < n && keep > 0; i++) {
        const slot = touched[i]!;
        if (best.length === keep && !this.#ranksBefore(slot, best[keep - 1]!)) continue;
        let at = best.length === keep ? keep - 1 : best.length;
        while (at > 0 && this.#ranksBefore(slot, best[at - 1]!)) {
          best[at] = best[at - 1]!;
          at--;
        }
        best[at] = slot;
      }
    }
    for (let i = 0; i < n; i++) this.#score[touched[i]!] = 0;
    this.#count = 0;
    return best.map((slot) => this.#bySlot[slot]!);
  }

  /** Whether slot `x` ranks before slot `y`: the higher score, then the lower market id. */
  #ranksBefore(x: number, y: number): boolean {
    const sx = this.#score[x]!;
    const sy = this.#score[y]!;
    return (
      sx > sy || (sx === sy && this.#bySlot[x]!.features.market.id < this.#bySlot[y]!.features.market.id)
    );
  }
}

export class Matcher {
  readonly #markets = new Map<string, Indexed>();
  /** venue -> blocking key -> the slots of its markets (`CandidateScores`) */
  readonly #postings = new Map<string, Map<string, Set<number>>>();
  readonly #scores = new CandidateScores();
  /** Document frequency of content words, over every indexed market. */
  readonly #df = new Map<string, number>();
  readonly #k: number;

  constructor(readonly options: MatcherOptions = {}) {
    this.#k = options.candidatesPerMarket ?? 12;
  }

  readonly #idf = (word: string): number =>
    Math.log(1 + (this.#markets.size + 1) / ((this.#df.get(word) ?? 0) + 1));
  /** One options object for every comparison rather than one per pair compared. */
  readonly #compareOptions = { idf: this.#idf };

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
    const indexed = this.#scores.open(features);
    this.#markets.set(market.id, indexed);
    const byKey = this.#postings.get(market.venue) ?? new Map<string, Set<number>>();
    this.#postings.set(market.venue, byKey);
    for (const key of features.keys) {
      const slots = byKey.get(key) ?? new Set<number>();
      byKey.set(key, slots);
      slots.add(indexed.slot);
    }
    for (const w of features.content.keys()) this.#df.set(w, (this.#df.get(w) ?? 0) + 1);
  }

  remove(id: string): void {
    const old = this.#markets.get(id);
    if (!old) return;
    this.#markets.delete(id);
    this.#scores.close(old);
    const byKey = this.#postings.get(old.features.market.venue);
    for (const key of old.features.keys) byKey?.get(key)?.delete(old.slot);
    for (const w of old.features.content.keys()) {
      const n = (this.#df.get(w) ?? 1) - 1;
      if (n <= 0) this.#df.delete(w);
      else this.#df.set(w, n);
    }
  }

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
      for (const other of this.#candidates(features, byKey)) {
        const verdict = compareContracts(features, other.features, this.#compareOptions);
        if (verdict) out.push(verdict);
      }
    }
    return out.sort((x, y) => rank(y) - rank(x) || (x.marketB < y.marketB ? -1 : 1));
  }

  /** The best-scoring markets sharing blocking keys with `features`, at most k. */
  #candidates(features: ContractFeatures, byKey: Map<string, Set<number>>): Indexed[] {
    const scores = this.#scores;
    for (const key of features.keys) {
      const slots = byKey.get(key);
      if (!slots || slots.size === 0 || slots.size > MAX_POSTING) continue;
      // Rare keys say more; an entity in the same month says more than the entity alone.
      const weight =
        (key.startsWith("em:") || key.startsWith("ec:") || key.startsWith("tm:")
          ? 2
          : key.startsWith("nv:")
            ? 1.5
            : key.startsWith("wm:")
              ? 0.5
              : 1) / Math.log2(2 + slots.size);
      for (const slot of slots) scores.add(slot, weight);
    }
    return scores.take(this.#k);
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
