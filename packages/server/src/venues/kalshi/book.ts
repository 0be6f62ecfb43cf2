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
 * Where `price` is in `bids` (sorted best, i.e. highest, first): its index when present, else
 * -(insertion point) - 1. A number rather than an object: this runs once per delta at feed rate.
 */
function search(bids: readonly BookLevel[], price: Micros): number {
  let lo = 0;
  let hi = bids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const p = bids[mid]!.price;
    if (p === price) return mid;
    if (p > price) lo = mid + 1;
    else hi = mid;
  }
  return -lo - 1;
}

/** A copy of `levels` with index `at` replaced by `level`. */
function replaced(levels: readonly BookLevel[], at: number, level: BookLevel): BookLevel[] {
  const copy = levels.slice();
  copy[at] = level;
  return copy;
}

/** A copy of `levels` without index `at`. */
function removed(levels: readonly BookLevel[], at: number): BookLevel[] {
  const n = levels.length;
  const out: BookLevel[] = new Array(n - 1);
  for (let i = 0; i < at; i++) out[i] = levels[i]!;
  for (let i = at + 1; i < n; i++) out[i - 1] = levels[i]!;
  return out;
}

/** A copy of `levels` with `level` inserted before index `at`. */
function inserted(levels: readonly BookLevel[], at: number, level: BookLevel): BookLevel[] {
  const n = levels.length;
  const out: BookLevel[] = new Array(n + 1);
  for (let i = 0; i < at; i++) out[i] = levels[i]!;
  out[at] = level;
  for (let i = at; i < n; i++) out[i + 1] = levels[i]!;
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

  /**
   * Applies one delta; false when it would leave a negative size (the book is out of sync).
   * The implied ask ladder is the bid ladder at 1 − p (descending bids give ascending asks), so one
   * search on the bids gives the position on both: bid index i is ask index i.
   */
  apply(outcome: Outcome, price: Micros, delta: Micros, sequence: number | null): boolean {
    const yes = outcome === "yes";
    const bids = yes ? this.#yesBids : this.#noBids;
    const asks = yes ? this.#noAsks : this.#yesAsks;
    const at = search(bids, price);
    const next = (at >= 0 ? bids[at]!.size : 0) + delta;
    if (next < 0) return false;
    let newBids: BookLevel[];
    let newAsks: BookLevel[];
    if (at >= 0) {
      if (next === 0) {
        newBids = removed(bids, at);
        newAsks = removed(asks, at);
      } else {
        newBids = replaced(bids, at, { price, size: next });
        newAsks = replaced(asks, at, { price: complement(price), size: next });
      }
    } else if (next !== 0) {
      const index = -at - 1;
      newBids = inserted(bids, index, { price, size: next });
      newAsks = inserted(asks, index, { price: complement(price), size: next });
    } else {
      newBids = bids;
      newAsks = asks;
    }
    if (yes) {
      this.#yesBids = newBids;
      this.#noAsks = newAsks;
    } else {
      this.#noBids = newBids;
      this.#yesAsks = newAsks;
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
