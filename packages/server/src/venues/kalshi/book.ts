/**
 * The local copy of one market's book that the WebSocket feed keeps: a snapshot replaces it, each
 * delta adds to one price level of one BID ladder (VENUES.md §2.4: `side` yes|no, `price_dollars`,
 * signed `delta_fp`). A delta that would drive a level below zero means we missed something, so
 * `apply` reports it and the feed resnapshots instead of publishing a wrong book.
 *
 * Why it is built this way: a book is published after every delta, at feed rate. The four ladders
 * (YES bids, NO bids, and the asks they imply at 1 − p) are kept sorted and copy-on-write: a delta
 * replaces the two arrays it touches (binary search, one copy) and publishing shares the arrays
 * instead of re-sorting the whole book. Published arrays are never mutated afterwards, so a book
 * a consumer holds stays as it was; consumers must treat them as read-only.
 */
import { complement, type Micros } from "../decimal";
import type { BookLevel, OrderBook, Outcome } from "../model";
import { marketId } from "../venue";

/**
 * Where `price` is in `levels` sorted by `dir` (-1 = descending, 1 = ascending): its index when
 * present, else -(insertion point) - 1. A number rather than an object: this runs three times per
 * delta at feed rate.
 */
function search(levels: readonly BookLevel[], price: Micros, dir: 1 | -1): number {
  let lo = 0;
  let hi = levels.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const p = levels[mid]!.price;
    if (p === price) return mid;
    if ((p - price) * dir < 0) lo = mid + 1;
    else hi = mid;
  }
  return -lo - 1;
}

/** A new array with the level at `price` set to `size` (removed at 0); the same array if unchanged. */
function withLevel(levels: BookLevel[], price: Micros, size: Micros, dir: 1 | -1): BookLevel[] {
  const at = search(levels, price, dir);
  const n = levels.length;
  if (at >= 0) {
    if (size !== 0) {
      const copy = levels.slice();
      copy[at] = { price, size };
      return copy;
    }
    const out: BookLevel[] = new Array(n - 1);
    for (let i = 0; i < at; i++) out[i] = levels[i]!;
    for (let i = at + 1; i < n; i++) out[i - 1] = levels[i]!;
    return out;
  }
  if (size === 0) return levels;
  const index = -at - 1;
  const out: BookLevel[] = new Array(n + 1);
  for (let i = 0; i < index; i++) out[i] = levels[i]!;
  out[index] = { price, size };
  for (let i = index; i < n; i++) out[i + 1] = levels[i]!;
  return out;
}

export class LocalBook {
  readonly marketId: string;
  #yesBids: BookLevel[] = [];
  #noBids: BookLevel[] = [];
  /** Implied by NO bids at 1 − p. */
  #yesAsks: BookLevel[] = [];
  /** Implied by YES bids at 1 − p. */
  #noAsks: BookLevel[] = [];
  sequence: number | null = null;

  constructor(readonly ticker: string) {
    this.marketId = marketId("kalshi", ticker);
  }

  reset(yes: BookLevel[], no: BookLevel[], sequence: number | null): void {
    const merge = (levels: BookLevel[]) => {
      const sizes = new Map<Micros, Micros>();
      for (const l of levels) sizes.set(l.price, (sizes.get(l.price) ?? 0) + l.size);
      return [...sizes].filter(([, s]) => s > 0).map(([price, size]) => ({ price, size }));
    };
    const desc = (a: BookLevel, b: BookLevel) => b.price - a.price;
    const implied = (bids: BookLevel[]) => bids.map((l) => ({ price: complement(l.price), size: l.size }));
    this.#yesBids = merge(yes).sort(desc);
    this.#noBids = merge(no).sort(desc);
    this.#yesAsks = implied(this.#noBids);
    this.#noAsks = implied(this.#yesBids);
    this.sequence = sequence;
  }

  /** Applies one delta; false when it would leave a negative size (the book is out of sync). */
  apply(outcome: Outcome, price: Micros, delta: Micros, sequence: number | null): boolean {
    const bids = outcome === "yes" ? this.#yesBids : this.#noBids;
    const at = search(bids, price, -1);
    const next = (at >= 0 ? bids[at]!.size : 0) + delta;
    if (next < 0) return false;
    const newBids = withLevel(bids, price, next, -1);
    if (outcome === "yes") {
      this.#yesBids = newBids;
      this.#noAsks = withLevel(this.#noAsks, complement(price), next, 1);
    } else {
      this.#noBids = newBids;
      this.#yesAsks = withLevel(this.#yesAsks, complement(price), next, 1);
    }
    this.sequence = sequence;
    return true;
  }

  toOrderBook(timestamp: string): OrderBook {
    return {
      marketId: this.marketId,
      yes: { bids: this.#yesBids, asks: this.#yesAsks },
      no: { bids: this.#noBids, asks: this.#noAsks },
      timestamp,
      sequence: this.sequence,
    };
  }
}
