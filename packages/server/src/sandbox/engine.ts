/**
 * The sandbox matching engine: sandbox orders rest here and fill only against REAL venue prints,
 * after the real volume that was queued ahead of them (they never match each other). It is a pure
 * data structure on the hot path of every venue trade, so it is built for it: dense per-side price
 * levels indexed by tick, intrusive FIFO lists in typed arrays (no allocation per order), O(1)
 * cancel through a ref -> slot map, a bitset per side so best-price rescans skip 32 empty ticks at
 * a time, and no closures or allocation inside trade().
 *
 * Queue ahead is stored lazily: each level keeps `traded`, the real volume printed at it since it
 * last became non-empty, and an order keeps `qaBase = queueAhead + traded at entry`, so its queue
 * ahead is `max(0, qaBase - traded)`. A print at a level is then O(1) for every order it cannot
 * reach, and each level keeps a lower bound of its orders' qaBase so a print that reaches none of
 * them skips the walk entirely.
 *
 * Everything is YES-normalised by the caller: BID buys YES, ASK sells YES, prices are integer
 * ticks in 1 .. maxTick-1, sizes and queue volumes are integer micro-units.
 */

export const BID = 0;
export const ASK = 1;
export type EngineSide = 0 | 1;
export type FillSink = (ref: number, owner: number, tick: number, size: number) => void;

export interface RestingOrder {
  ref: number;
  owner: number;
  side: EngineSide;
  tick: number;
  remaining: number;
  queueAhead: number;
}

const NIL = -1;
/** Queue volumes above this are treated as this (about 4.5e15 micro-units: never reached). */
const QA_LIMIT = 2 ** 52;
/**
 * A level's `traded` offset is folded back into its orders before it reaches this, so that
 * `qaBase = queueAhead + traded` (queueAhead <= QA_LIMIT) stays an exact integer in a double.
 */
const REBASE_AT = 2 ** 40;
const MAX_TICK_LIMIT = 1 << 24;

function assertSide(side: number): asserts side is EngineSide {
  if (side !== BID && side !== ASK) throw new RangeError(`side must be 0 (BID) or 1 (ASK), got ${side}`);
}

function assertPositive(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive safe integer, got ${value}`);
  }
}

function assertNonNegative(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative safe integer, got ${value}`);
  }
}

export class SimBook {
  readonly maxTick: number;

  // Order slots (struct of arrays). A free slot's `next` links the free list.
  private capacity = 0;
  private slotRef = new Float64Array(0);
  private slotOwner = new Int32Array(0); // owner index, not the owner id
  private slotSide = new Uint8Array(0);
  private slotTick = new Int32Array(0);
  private slotRem = new Float64Array(0);
  private slotQaBase = new Float64Array(0);
  private next = new Int32Array(0);
  private prev = new Int32Array(0);
  private freeSlot = NIL;
  private slotOfRef = new Map<number, number>();
  private resting = 0;

  // Price levels, index side * maxTick + tick.
  private readonly head: Int32Array;
  private readonly tail: Int32Array;
  private readonly count: Int32Array;
  private readonly traded: Float64Array;
  /** Lower bound of the level's qaBase values (exact after a walk, may be stale-low after cancels). */
  private readonly minQa: Float64Array;
  /** Upper bound of the level's qaBase values. */
  private readonly maxQa: Float64Array;
  /** One bit per non-empty level, `words` Uint32 words per side. */
  private readonly bits: Uint32Array;
  private readonly words: number;
  private bestBid = -1;
  private bestAsk = -1;

  // Owners get a small dense index while they have resting orders, so trade() can keep the
  // per-owner `used` amount in arrays stamped with the trade's generation instead of a Map.
  private ownerCapacity = 0;
  private ownerIndex = new Map<number, number>();
  private ownerId = new Float64Array(0);
  private ownerOrders = new Int32Array(0);
  private ownerSideOrders = new Int32Array(0); // index 2 * owner + side
  private ownerUsed = new Float64Array(0);
  private ownerStamp = new Uint32Array(0);
  private freeOwners: number[] = [];
  /** Owners with at least one resting order on each side. */
  private readonly activeOwners = new Int32Array(2);
  private generation = 0;
  private trading = false;

  constructor(maxTick: number) {
    if (!Number.isSafeInteger(maxTick) || maxTick < 2 || maxTick > MAX_TICK_LIMIT) {
      throw new RangeError(`maxTick must be an integer in 2 .. ${MAX_TICK_LIMIT}, got ${maxTick}`);
    }
    this.maxTick = maxTick;
    const levels = 2 * maxTick;
    this.head = new Int32Array(levels).fill(NIL);
    this.tail = new Int32Array(levels).fill(NIL);
    this.count = new Int32Array(levels);
    this.traded = new Float64Array(levels);
    this.minQa = new Float64Array(levels).fill(Number.POSITIVE_INFINITY);
    this.maxQa = new Float64Array(levels).fill(Number.NEGATIVE_INFINITY);
    this.words = (maxTick + 31) >>> 5;
    this.bits = new Uint32Array(2 * this.words);
    this.growSlots(1024);
    this.growOwners(16);
  }

  get size(): number {
    return this.resting;
  }

  /**
   * Rests an order at the back of its level. `queueAhead` is the real venue volume displayed at
   * that price on that side when it was placed.
   */
  add(ref: number, owner: number, side: EngineSide, tick: number, size: number, queueAhead: number): void {
    this.assertIdle();
    assertNonNegative("ref", ref);
    if (!Number.isSafeInteger(owner)) throw new RangeError(`owner must be a safe integer, got ${owner}`);
    assertSide(side);
    this.assertTick(tick);
    assertPositive("size", size);
    assertNonNegative("queueAhead", queueAhead);
    if (this.slotOfRef.has(ref)) throw new RangeError(`order ${ref} is already resting`);

    if (this.freeSlot === NIL) this.growSlots(this.capacity * 2);
    const slot = this.freeSlot;
    this.freeSlot = this.next[slot]!;
    const o = this.acquireOwner(owner);
    const level = side * this.maxTick + tick;
    const qaBase = Math.min(queueAhead, QA_LIMIT) + this.traded[level]!;

    this.slotRef[slot] = ref;
    this.slotOwner[slot] = o;
    this.slotSide[slot] = side;
    this.slotTick[slot] = tick;
    this.slotRem[slot] = size;
    this.slotQaBase[slot] = qaBase;
    this.slotOfRef.set(ref, slot);
    this.resting++;
    if (this.ownerSideOrders[2 * o + side]!++ === 0) this.activeOwners[side]!++;
    this.ownerOrders[o]!++;

    const last = this.tail[level]!;
    this.prev[slot] = last;
    this.next[slot] = NIL;
    if (last === NIL) {
      this.head[level] = slot;
      this.bits[side * this.words + (tick >>> 5)]! |= 1 << (tick & 31);
    } else {
      this.next[last] = slot;
    }
    this.tail[level] = slot;
    this.count[level]!++;
    if (qaBase < this.minQa[level]!) this.minQa[level] = qaBase;
    if (qaBase > this.maxQa[level]!) this.maxQa[level] = qaBase;
    if (side === BID) {
      if (tick > this.bestBid) this.bestBid = tick;
    } else if (this.bestAsk === -1 || tick < this.bestAsk) {
      this.bestAsk = tick;
    }
  }

  /** O(1). Returns the remaining size that was cancelled, or 0 if the ref is not resting. */
  cancel(ref: number): number {
    this.assertIdle();
    const slot = this.slotOfRef.get(ref);
    if (slot === undefined) return 0;
    const remaining = this.slotRem[slot]!;
    this.unlink(slot);
    return remaining;
  }

  /**
   * Reduces an order's remaining size (the caller filled part of it elsewhere), keeping its place
   * in the queue; removes it at 0. Returns the amount actually taken off: `size` clamped to the
   * remaining size, or 0 if the ref is not resting.
   */
  reduce(ref: number, size: number): number {
    this.assertIdle();
    assertPositive("size", size);
    const slot = this.slotOfRef.get(ref);
    if (slot === undefined) return 0;
    const remaining = this.slotRem[slot]!;
    if (size >= remaining) {
      this.unlink(slot);
      return remaining;
    }
    this.slotRem[slot] = remaining - size;
    return size;
  }

  has(ref: number): boolean {
    return this.slotOfRef.has(ref);
  }

  /** Remaining size, 0 when not resting. */
  remaining(ref: number): number {
    const slot = this.slotOfRef.get(ref);
    return slot === undefined ? 0 : this.slotRem[slot]!;
  }

  /** Real volume still queued ahead of the order, 0 when not resting. */
  queueAhead(ref: number): number {
    const slot = this.slotOfRef.get(ref);
    return slot === undefined ? 0 : this.queueOf(slot);
  }

  /** One resting order, or undefined. */
  order(ref: number): RestingOrder | undefined {
    const slot = this.slotOfRef.get(ref);
    return slot === undefined ? undefined : this.snapshot(slot);
  }

  /** Best resting tick, -1 when that side is empty (BID: highest, ASK: lowest). */
  best(side: EngineSide): number {
    assertSide(side);
    return side === BID ? this.bestBid : this.bestAsk;
  }

  /**
   * A real trade printed at `tick` for `size`. `hits` is the resting side it can fill: BID when the
   * taker sold YES (bids at tick >= the trade's), ASK when the taker bought YES (asks at tick <=).
   * Orders at a strictly better price fill (the trade went through them); at the trade's price,
   * every order's queue ahead drops by `size` and an order fills only from the part of the trade
   * beyond its queue ahead. Each owner is an independent simulation: the whole `size` is available
   * to each owner, consumed by that owner's orders in price then time priority. Calls `onFill` for
   * each fill, after the book reflects it (filled orders are removed, partly filled ones keep their
   * place); `onFill` must not modify the book. Returns the number of fills.
   */
  trade(hits: EngineSide, tick: number, size: number, onFill: FillSink): number {
    this.assertIdle();
    assertSide(hits);
    this.assertTick(tick);
    assertPositive("size", size);
    this.trading = true;
    try {
      return this.sweep(hits, tick, size, onFill);
    } finally {
      this.trading = false;
    }
  }

  /**
   * The real book now shows `displayed` at `tick` on `side`: no order there can have more than
   * that ahead of it (cancellations ahead moved it up). Never raises a queue, never fills.
   */
  capQueueAhead(side: EngineSide, tick: number, displayed: number): void {
    this.assertIdle();
    assertSide(side);
    this.assertTick(tick);
    assertNonNegative("displayed", displayed);
    const level = side * this.maxTick + tick;
    if (this.count[level] === 0) return;
    const cap = Math.min(displayed, QA_LIMIT) + this.traded[level]!;
    if (this.maxQa[level]! <= cap) return;
    const qaBase = this.slotQaBase;
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (let slot = this.head[level]!; slot !== NIL; slot = this.next[slot]!) {
      let q = qaBase[slot]!;
      if (q > cap) qaBase[slot] = q = cap;
      if (q < min) min = q;
      if (q > max) max = q;
    }
    this.minQa[level] = min;
    this.maxQa[level] = max;
  }

  /** All resting orders, bids then asks, each side best price first and FIFO within a level. */
  orders(): RestingOrder[] {
    const out: RestingOrder[] = [];
    for (let tick = this.bestBid; tick !== -1; tick = this.scanDown(BID, tick - 1)) {
      for (let slot = this.head[tick]!; slot !== NIL; slot = this.next[slot]!) out.push(this.snapshot(slot));
    }
    for (let tick = this.bestAsk; tick !== -1; tick = this.scanUp(ASK, tick + 1)) {
      const level = this.maxTick + tick;
      for (let slot = this.head[level]!; slot !== NIL; slot = this.next[slot]!) out.push(this.snapshot(slot));
    }
    return out;
  }

  // ---- trade internals -------------------------------------------------------------------------

  private sweep(side: EngineSide, tradeTick: number, size: number, onFill: FillSink): number {
    const bid = side === BID;
    let tick = bid ? this.bestBid : this.bestAsk;
    if (tick === -1 || (bid ? tick < tradeTick : tick > tradeTick)) return 0;

    if (++this.generation === 0x1_0000_0000) {
      this.ownerStamp.fill(0);
      this.generation = 1;
    }
    const gen = this.generation;
    const stamp = this.ownerStamp;
    const used = this.ownerUsed;
    const rem = this.slotRem;
    const next = this.next;
    const base = side * this.maxTick;
    let fills = 0;
    // Owners on this side whose `used` reached `size`: once every active owner is exhausted, no
    // order anywhere can fill and the walk jumps to the trade level's O(1) bookkeeping.
    let exhausted = 0;

    // Levels strictly better than the trade price: each owner can take up to `size` there.
    while (tick !== tradeTick && exhausted < this.activeOwners[side]!) {
      let slot = this.head[base + tick]!;
      while (slot !== NIL) {
        const after = next[slot]!;
        const o = this.slotOwner[slot]!;
        const u = stamp[o] === gen ? used[o]! : 0;
        if (u < size) {
          const r = rem[slot]!;
          const f = Math.min(r, size - u);
          stamp[o] = gen;
          used[o] = u + f;
          fills++;
          const ownerLeft = this.fill(slot, r, f, tick, onFill);
          if (u + f === size && !ownerLeft) exhausted++;
          if (exhausted >= this.activeOwners[side]!) break;
        }
        slot = after;
      }
      tick = bid ? this.scanDown(side, tick - 1) : this.scanUp(side, tick + 1);
      if (tick === -1 || (bid ? tick < tradeTick : tick > tradeTick)) return fills;
    }

    // The trade level: queues drop by `size`; an order fills from what passed its queue.
    const level = base + tradeTick;
    if (this.count[level] === 0) return fills;
    const traded = this.traded[level]!;
    if (this.minQa[level]! - traded < size && exhausted < this.activeOwners[side]!) {
      const qaBase = this.slotQaBase;
      let min = Number.POSITIVE_INFINITY;
      let complete = true;
      let slot = this.head[level]!;
      while (slot !== NIL) {
        const after = next[slot]!;
        const ahead = qaBase[slot]! - traded;
        if (ahead < size) {
          const o = this.slotOwner[slot]!;
          const u = stamp[o] === gen ? used[o]! : 0;
          const passed = ahead > 0 ? size - ahead : size;
          if (u < passed) {
            const r = rem[slot]!;
            const f = Math.min(r, passed - u);
            stamp[o] = gen;
            used[o] = u + f;
            fills++;
            const ownerLeft = this.fill(slot, r, f, tradeTick, onFill);
            if (u + f === size && !ownerLeft) exhausted++;
            if (f !== r && qaBase[slot]! < min) min = qaBase[slot]!;
            if (exhausted >= this.activeOwners[side]!) {
              complete = after === NIL;
              break;
            }
            slot = after;
            continue;
          }
        }
        if (qaBase[slot]! < min) min = qaBase[slot]!;
        slot = after;
      }
      if (this.count[level] === 0) return fills; // emptied: its state was reset by unlink
      if (complete) this.minQa[level] = min;
    }
    if (size >= REBASE_AT - traded) this.rebase(level, traded, size);
    else this.traded[level] = traded + size;
    return fills;
  }

  /** Applies a fill of `f` out of `r` remaining, then reports it. True if it took the owner off the side. */
  private fill(slot: number, r: number, f: number, tick: number, onFill: FillSink): boolean {
    const ref = this.slotRef[slot]!;
    const o = this.slotOwner[slot]!;
    const owner = this.ownerId[o]!;
    let ownerLeft = false;
    if (f === r) {
      // The owner leaving this side stops counting as active; it must not count as exhausted.
      ownerLeft = this.ownerSideOrders[2 * o + this.slotSide[slot]!] === 1;
      this.unlink(slot);
    } else {
      this.slotRem[slot] = r - f;
    }
    onFill(ref, owner, tick, f);
    return ownerLeft;
  }

  /** Folds the level's `traded` offset (plus a print of `size`) back into its orders' qaBase. */
  private rebase(level: number, traded: number, size: number): void {
    const qaBase = this.slotQaBase;
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (let slot = this.head[level]!; slot !== NIL; slot = this.next[slot]!) {
      const ahead = qaBase[slot]! - traded - size; // exact: both steps stay below 2^53
      const q = Math.max(ahead, 0);
      qaBase[slot] = q;
      if (q < min) min = q;
      if (q > max) max = q;
    }
    this.traded[level] = 0;
    this.minQa[level] = min;
    this.maxQa[level] = max;
  }

  // ---- slots, levels, owners -------------------------------------------------------------------

  /** Removes a resting order from its level, the ref map and its owner; frees the slot. */
  private unlink(slot: number): void {
    const side = this.slotSide[slot]!;
    const tick = this.slotTick[slot]!;
    const level = side * this.maxTick + tick;
    const before = this.prev[slot]!;
    const after = this.next[slot]!;
    if (before === NIL) this.head[level] = after;
    else this.next[before] = after;
    if (after === NIL) this.tail[level] = before;
    else this.prev[after] = before;
    if (--this.count[level]! === 0) {
      this.bits[side * this.words + (tick >>> 5)]! &= ~(1 << (tick & 31));
      this.traded[level] = 0;
      this.minQa[level] = Number.POSITIVE_INFINITY;
      this.maxQa[level] = Number.NEGATIVE_INFINITY;
      if (side === BID) {
        if (tick === this.bestBid) this.bestBid = this.scanDown(BID, tick - 1);
      } else if (tick === this.bestAsk) {
        this.bestAsk = this.scanUp(ASK, tick + 1);
      }
    }
    this.slotOfRef.delete(this.slotRef[slot]!);
    this.resting--;
    const o = this.slotOwner[slot]!;
    if (--this.ownerSideOrders[2 * o + side]! === 0) this.activeOwners[side]!--;
    if (--this.ownerOrders[o]! === 0) this.releaseOwner(o);
    this.next[slot] = this.freeSlot;
    this.freeSlot = slot;
  }

  /** Highest non-empty tick <= from on `side`, or -1. */
  private scanDown(side: EngineSide, from: number): number {
    if (from < 0) return -1;
    const bits = this.bits;
    const base = side * this.words;
    let w = from >>> 5;
    let word = bits[base + w]! & (0xffffffff >>> (31 - (from & 31)));
    for (;;) {
      if (word !== 0) return (w << 5) + 31 - Math.clz32(word);
      if (--w < 0) return -1;
      word = bits[base + w]! | 0;
    }
  }

  /** Lowest non-empty tick >= from on `side`, or -1. */
  private scanUp(side: EngineSide, from: number): number {
    if (from >= this.maxTick) return -1;
    const bits = this.bits;
    const base = side * this.words;
    const words = this.words;
    let w = from >>> 5;
    let word = bits[base + w]! & (0xffffffff << (from & 31));
    for (;;) {
      if (word !== 0) return (w << 5) + 31 - Math.clz32(word & -word);
      if (++w >= words) return -1;
      word = bits[base + w]! | 0;
    }
  }

  private queueOf(slot: number): number {
    const ahead =
      this.slotQaBase[slot]! - this.traded[this.slotSide[slot]! * this.maxTick + this.slotTick[slot]!]!;
    return Math.max(ahead, 0);
  }

  private snapshot(slot: number): RestingOrder {
    return {
      ref: this.slotRef[slot]!,
      owner: this.ownerId[this.slotOwner[slot]!]!,
      side: this.slotSide[slot] as EngineSide,
      tick: this.slotTick[slot]!,
      remaining: this.slotRem[slot]!,
      queueAhead: this.queueOf(slot),
    };
  }

  private growSlots(capacity: number): void {
    const old = this.capacity;
    const grow = <T extends Float64Array | Int32Array | Uint8Array>(array: T, make: (n: number) => T): T => {
      const bigger = make(capacity);
      bigger.set(array);
      return bigger;
    };
    this.slotRef = grow(this.slotRef, (n) => new Float64Array(n));
    this.slotOwner = grow(this.slotOwner, (n) => new Int32Array(n));
    this.slotSide = grow(this.slotSide, (n) => new Uint8Array(n));
    this.slotTick = grow(this.slotTick, (n) => new Int32Array(n));
    this.slotRem = grow(this.slotRem, (n) => new Float64Array(n));
    this.slotQaBase = grow(this.slotQaBase, (n) => new Float64Array(n));
    this.next = grow(this.next, (n) => new Int32Array(n));
    this.prev = grow(this.prev, (n) => new Int32Array(n));
    // New slots join the free list in index order, ahead of nothing (only called when it is empty).
    for (let slot = old; slot < capacity; slot++) this.next[slot] = slot + 1 < capacity ? slot + 1 : NIL;
    this.freeSlot = old;
    this.capacity = capacity;
  }

  private acquireOwner(owner: number): number {
    const known = this.ownerIndex.get(owner);
    if (known !== undefined) return known;
    if (this.freeOwners.length === 0) this.growOwners(this.ownerCapacity * 2);
    const o = this.freeOwners.pop()!;
    this.ownerIndex.set(owner, o);
    this.ownerId[o] = owner;
    this.ownerStamp[o] = 0;
    return o;
  }

  private releaseOwner(o: number): void {
    this.ownerIndex.delete(this.ownerId[o]!);
    this.freeOwners.push(o);
  }

  private growOwners(capacity: number): void {
    const old = this.ownerCapacity;
    const ownerId = new Float64Array(capacity);
    ownerId.set(this.ownerId);
    const orders = new Int32Array(capacity);
    orders.set(this.ownerOrders);
    const sideOrders = new Int32Array(2 * capacity);
    sideOrders.set(this.ownerSideOrders);
    const used = new Float64Array(capacity);
    used.set(this.ownerUsed);
    const stamp = new Uint32Array(capacity);
    stamp.set(this.ownerStamp);
    this.ownerId = ownerId;
    this.ownerOrders = orders;
    this.ownerSideOrders = sideOrders;
    this.ownerUsed = used;
    this.ownerStamp = stamp;
    for (let o = capacity - 1; o >= old; o--) this.freeOwners.push(o);
    this.ownerCapacity = capacity;
  }

  private assertTick(tick: number): void {
    if (!Number.isInteger(tick) || tick < 1 || tick >= this.maxTick) {
      throw new RangeError(`tick must be an integer in 1 .. ${this.maxTick - 1}, got ${tick}`);
    }
  }

  private assertIdle(): void {
    if (this.trading) throw new Error("SimBook: onFill must not modify the book during trade()");
  }
}
