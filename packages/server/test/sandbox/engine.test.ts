import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ASK, BID, type EngineSide, type RestingOrder, SimBook } from "../../src/sandbox/engine";

type Fill = [ref: number, owner: number, tick: number, size: number];

function trade(book: SimBook, hits: EngineSide, tick: number, size: number): Fill[] {
  const fills: Fill[] = [];
  const count = book.trade(hits, tick, size, (ref, owner, at, filled) =>
    fills.push([ref, owner, at, filled]),
  );
  expect(count).toBe(fills.length);
  return fills;
}

describe("SimBook price-time priority", () => {
  it("fills better prices first, then FIFO within a level", () => {
    const book = new SimBook(100);
    book.add(1, 7, BID, 50, 10, 0);
    book.add(2, 7, BID, 52, 10, 0);
    book.add(3, 7, BID, 51, 10, 0);
    book.add(4, 7, BID, 52, 10, 0);
    // A 35 sell printing at 50 goes through 52 (refs 2, 4) and 51 (ref 3), then reaches 50.
    expect(trade(book, BID, 50, 35)).toEqual([
      [2, 7, 52, 10],
      [4, 7, 52, 10],
      [3, 7, 51, 10],
      [1, 7, 50, 5],
    ]);
    expect(book.remaining(1)).toBe(5);
    expect(book.best(BID)).toBe(50);
  });

  it("walks asks from the lowest price up to the trade price", () => {
    const book = new SimBook(100);
    book.add(1, 1, ASK, 60, 5, 0);
    book.add(2, 1, ASK, 58, 5, 0);
    book.add(3, 1, ASK, 61, 5, 0);
    expect(trade(book, ASK, 60, 100)).toEqual([
      [2, 1, 58, 5],
      [1, 1, 60, 5],
    ]);
    expect(book.has(3)).toBe(true);
    expect(book.best(ASK)).toBe(61);
  });

  it("partly filled orders keep their place at the front", () => {
    const book = new SimBook(100);
    book.add(1, 1, ASK, 40, 10, 0);
    book.add(2, 1, ASK, 40, 10, 0);
    expect(trade(book, ASK, 40, 4)).toEqual([[1, 1, 40, 4]]);
    expect(trade(book, ASK, 40, 8)).toEqual([
      [1, 1, 40, 6],
      [2, 1, 40, 2],
    ]);
    expect(book.remaining(2)).toBe(8);
  });
});

describe("SimBook queue ahead", () => {
  it("fills only from the volume printed beyond the real queue ahead", () => {
    const book = new SimBook(100);
    book.add(1, 1, BID, 45, 50, 100);
    // 60 of the 100 ahead trade: nothing reaches us, 40 remain ahead.
    expect(trade(book, BID, 45, 60)).toEqual([]);
    expect(book.queueAhead(1)).toBe(40);
    // 80 more: 40 clear the queue, 40 fill us.
    expect(trade(book, BID, 45, 80)).toEqual([[1, 1, 45, 40]]);
    expect(book.remaining(1)).toBe(10);
    expect(book.queueAhead(1)).toBe(0);
    // Front of the queue now: a 5 fills 5.
    expect(trade(book, BID, 45, 5)).toEqual([[1, 1, 45, 5]]);
    expect(book.remaining(1)).toBe(5);
  });

  it("orders strictly better than the trade price ignore their queue and fill up to the trade size", () => {
    const book = new SimBook(100);
    book.add(1, 1, BID, 47, 30, 1_000);
    book.add(2, 2, BID, 46, 500, 1_000);
    book.add(3, 3, BID, 45, 10, 1_000);
    expect(trade(book, BID, 45, 200)).toEqual([
      [1, 1, 47, 30],
      [2, 2, 46, 200],
    ]);
    expect(book.remaining(2)).toBe(300);
    // The trade level's queue dropped by the whole print.
    expect(book.queueAhead(3)).toBe(800);
  });

  it("still finds orders behind an owner's exhausted budget on the next print", () => {
    const book = new SimBook(100);
    book.add(1, 1, BID, 40, 10, 0);
    book.add(2, 1, BID, 40, 10, 50);
    book.add(3, 1, BID, 40, 10, 5);
    // Ref 1 takes the whole print for owner 1; the rest of the level is not reached this time.
    expect(trade(book, BID, 40, 10)).toEqual([[1, 1, 40, 10]]);
    expect(book.queueAhead(3)).toBe(0);
    expect(trade(book, BID, 40, 20)).toEqual([[3, 1, 40, 10]]);
    expect(book.queueAhead(2)).toBe(20);
  });

  it("stays exact when the volume printed at one level passes 2^53", () => {
    const book = new SimBook(100);
    const huge = Number.MAX_SAFE_INTEGER;
    book.add(1, 1, ASK, 50, huge, 0);
    book.add(2, 1, ASK, 50, huge, 0);
    for (let i = 0; i < 3; i++) trade(book, ASK, 50, 2 ** 52);
    book.add(3, 2, ASK, 50, 100, 7);
    expect(book.queueAhead(3)).toBe(7);
    expect(trade(book, ASK, 50, 10)).toEqual([
      [2, 1, 50, 10],
      [3, 2, 50, 3],
    ]);
    // Ref 2 took 1 of the second print, all of the third, and 10 now.
    expect(book.remaining(2)).toBe(huge - 1 - 2 ** 52 - 10);
  });

  it("a later order at the same level waits behind its own, larger, queue", () => {
    const book = new SimBook(100);
    book.add(1, 1, ASK, 70, 10, 20);
    book.add(2, 2, ASK, 70, 10, 50);
    expect(trade(book, ASK, 70, 30)).toEqual([[1, 1, 70, 10]]);
    expect(book.queueAhead(2)).toBe(20);
    expect(trade(book, ASK, 70, 25)).toEqual([[2, 2, 70, 5]]);
  });
});

describe("SimBook owners", () => {
  it("owners are independent: each gets the full pass-through at the same level", () => {
    const book = new SimBook(100);
    book.add(1, 1, BID, 30, 100, 10);
    book.add(2, 2, BID, 30, 100, 10);
    book.add(3, 3, BID, 31, 100, 0);
    expect(trade(book, BID, 30, 25)).toEqual([
      [3, 3, 31, 25],
      [1, 1, 30, 15],
      [2, 2, 30, 15],
    ]);
  });

  it("within one owner, earlier orders consume the print first", () => {
    const book = new SimBook(100);
    book.add(1, 9, BID, 31, 6, 0);
    book.add(2, 9, BID, 30, 5, 0);
    book.add(3, 9, BID, 30, 5, 0);
    book.add(4, 8, BID, 30, 5, 0);
    // Owner 9 has 10 to spend: 6 at 31, 4 of ref 2, nothing for ref 3. Owner 8 gets its own 10.
    expect(trade(book, BID, 30, 10)).toEqual([
      [1, 9, 31, 6],
      [2, 9, 30, 4],
      [4, 8, 30, 5],
    ]);
    expect(book.remaining(2)).toBe(1);
    expect(book.remaining(3)).toBe(5);
  });

  it("an owner's budget at the trade level is its pass-through, shared with its better fills", () => {
    const book = new SimBook(100);
    book.add(1, 1, ASK, 20, 8, 0);
    book.add(2, 1, ASK, 21, 50, 5);
    // Print of 20 at 21: ref 1 takes 8 (better price); ref 2's pass-through is 15, minus 8 used.
    expect(trade(book, ASK, 21, 20)).toEqual([
      [1, 1, 20, 8],
      [2, 1, 21, 7],
    ]);
  });
});

describe("SimBook sides, cancel and reduce", () => {
  it("a trade hitting bids never touches asks, and vice versa", () => {
    const book = new SimBook(100);
    book.add(1, 1, BID, 40, 10, 0);
    book.add(2, 1, ASK, 30, 10, 0);
    expect(trade(book, BID, 35, 50)).toEqual([[1, 1, 40, 10]]);
    expect(book.remaining(2)).toBe(10);
    expect(trade(book, ASK, 45, 50)).toEqual([[2, 1, 30, 10]]);
    expect(book.size).toBe(0);
  });

  it("bids below the trade price and asks above it are not filled", () => {
    const book = new SimBook(100);
    book.add(1, 1, BID, 40, 10, 0);
    book.add(2, 1, ASK, 60, 10, 0);
    expect(trade(book, BID, 41, 50)).toEqual([]);
    expect(trade(book, ASK, 59, 50)).toEqual([]);
    expect(book.size).toBe(2);
  });

  it("cancel returns the remaining size, and cancelled orders never fill", () => {
    const book = new SimBook(100);
    book.add(1, 1, BID, 40, 10, 0);
    book.add(2, 1, BID, 40, 10, 0);
    expect(trade(book, BID, 40, 3)).toEqual([[1, 1, 40, 3]]);
    expect(book.cancel(1)).toBe(7);
    expect(book.cancel(1)).toBe(0);
    expect(book.cancel(12345)).toBe(0);
    expect(book.has(1)).toBe(false);
    expect(trade(book, BID, 40, 100)).toEqual([[2, 1, 40, 10]]);
    expect(book.size).toBe(0);
    expect(book.best(BID)).toBe(-1);
  });

  it("a cancelled ref can be reused", () => {
    const book = new SimBook(100);
    book.add(2 ** 31, 1, ASK, 50, 10, 0);
    expect(book.cancel(2 ** 31)).toBe(10);
    book.add(2 ** 31, 2, BID, 20, 4, 1);
    expect(book.order(2 ** 31)).toEqual({
      ref: 2 ** 31,
      owner: 2,
      side: BID,
      tick: 20,
      remaining: 4,
      queueAhead: 1,
    });
  });

  it("reduce keeps the queue place and removes the order at 0", () => {
    const book = new SimBook(100);
    book.add(1, 1, BID, 40, 10, 5);
    book.add(2, 1, BID, 40, 10, 5);
    expect(book.reduce(1, 4)).toBe(4);
    expect(book.remaining(1)).toBe(6);
    expect(book.queueAhead(1)).toBe(5);
    expect(trade(book, BID, 40, 8)).toEqual([[1, 1, 40, 3]]);
    expect(book.reduce(1, 10)).toBe(3);
    expect(book.has(1)).toBe(false);
    expect(book.reduce(1, 1)).toBe(0);
    expect(book.size).toBe(1);
  });
});

describe("SimBook capQueueAhead", () => {
  it("lowers queues above the displayed volume, never raises, never fills", () => {
    const book = new SimBook(100);
    book.add(1, 1, ASK, 55, 10, 100);
    book.add(2, 1, ASK, 55, 10, 20);
    book.add(3, 1, ASK, 56, 10, 100);
    book.capQueueAhead(ASK, 55, 50);
    expect(book.queueAhead(1)).toBe(50);
    expect(book.queueAhead(2)).toBe(20);
    expect(book.queueAhead(3)).toBe(100);
    book.capQueueAhead(ASK, 55, 500);
    expect(book.queueAhead(1)).toBe(50);
    book.capQueueAhead(ASK, 55, 0);
    expect(book.queueAhead(1)).toBe(0);
    expect(book.remaining(1)).toBe(10);
    expect(book.remaining(2)).toBe(10);
    // Now at the front: the next print fills them.
    expect(trade(book, ASK, 55, 15)).toEqual([
      [1, 1, 55, 10],
      [2, 1, 55, 5],
    ]);
  });

  it("applies on top of queue already consumed by prints", () => {
    const book = new SimBook(100);
    book.add(1, 1, BID, 30, 10, 100);
    trade(book, BID, 30, 30);
    expect(book.queueAhead(1)).toBe(70);
    book.capQueueAhead(BID, 30, 80);
    expect(book.queueAhead(1)).toBe(70);
    book.capQueueAhead(BID, 30, 25);
    expect(book.queueAhead(1)).toBe(25);
    expect(trade(book, BID, 30, 30)).toEqual([[1, 1, 30, 5]]);
  });
});

describe("SimBook best prices", () => {
  it("tracks the best level as levels empty, across 32-tick words", () => {
    const book = new SimBook(1000);
    expect(book.best(BID)).toBe(-1);
    expect(book.best(ASK)).toBe(-1);
    book.add(1, 1, BID, 3, 1, 0);
    book.add(2, 1, BID, 700, 1, 0);
    book.add(3, 1, BID, 64, 1, 0);
    book.add(4, 1, ASK, 999, 1, 0);
    book.add(5, 1, ASK, 1, 1, 0);
    book.add(6, 1, ASK, 33, 1, 0);
    expect(book.best(BID)).toBe(700);
    expect(book.best(ASK)).toBe(1);
    book.cancel(2);
    expect(book.best(BID)).toBe(64);
    book.cancel(3);
    expect(book.best(BID)).toBe(3);
    book.cancel(1);
    expect(book.best(BID)).toBe(-1);
    book.cancel(5);
    expect(book.best(ASK)).toBe(33);
    trade(book, ASK, 33, 1);
    expect(book.best(ASK)).toBe(999);
    book.reduce(4, 1);
    expect(book.best(ASK)).toBe(-1);
    expect(book.size).toBe(0);
  });
});

describe("SimBook input checks", () => {
  it("throws RangeError on bad ticks, sizes, sides and duplicate refs", () => {
    const book = new SimBook(100);
    book.add(1, 1, BID, 50, 1, 0);
    const bad: Array<() => unknown> = [
      () => book.add(1, 1, BID, 50, 1, 0),
      () => book.add(2, 1, BID, 0, 1, 0),
      () => book.add(2, 1, BID, 100, 1, 0),
      () => book.add(2, 1, BID, 50.5, 1, 0),
      () => book.add(2, 1, BID, 50, 0, 0),
      () => book.add(2, 1, BID, 50, -3, 0),
      () => book.add(2, 1, BID, 50, 1.5, 0),
      () => book.add(2, 1, BID, 50, 2 ** 53, 0),
      () => book.add(2, 1, BID, 50, 1, -1),
      () => book.add(-1, 1, BID, 50, 1, 0),
      () => book.add(2, 1.5, BID, 50, 1, 0),
      () => book.add(2, 1, 2 as EngineSide, 50, 1, 0),
      () => book.trade(BID, 0, 1, () => {}),
      () => book.trade(BID, 50, 0, () => {}),
      () => book.capQueueAhead(ASK, 100, 1),
      () => book.capQueueAhead(ASK, 50, -1),
      () => book.reduce(1, 0),
      () => new SimBook(1),
    ];
    for (const call of bad) expect(call).toThrow(RangeError);
    expect(book.size).toBe(1);
    expect(book.remaining(1)).toBe(1);
  });

  it("refuses changes from inside onFill", () => {
    const book = new SimBook(100);
    book.add(1, 1, BID, 50, 1, 0);
    book.add(2, 1, BID, 50, 1, 0);
    expect(() => book.trade(BID, 50, 1, () => book.cancel(2))).toThrow(/onFill/);
    expect(book.has(2)).toBe(true);
    book.add(3, 1, BID, 50, 1, 0);
  });
});

// ---- a naive reference model: sorted arrays, eager queues, a Map per trade ----------------------

interface ModelOrder {
  ref: number;
  owner: number;
  side: EngineSide;
  tick: number;
  remaining: number;
  queueAhead: number;
  seq: number;
}

class Model {
  orders: ModelOrder[] = [];
  seq = 0;

  add(ref: number, owner: number, side: EngineSide, tick: number, size: number, queueAhead: number): void {
    this.orders.push({ ref, owner, side, tick, remaining: size, queueAhead, seq: this.seq++ });
  }

  cancel(ref: number): number {
    const index = this.orders.findIndex((o) => o.ref === ref);
    if (index < 0) return 0;
    return this.orders.splice(index, 1)[0]!.remaining;
  }

  reduce(ref: number, size: number): number {
    const order = this.orders.find((o) => o.ref === ref);
    if (!order) return 0;
    const taken = Math.min(size, order.remaining);
    order.remaining -= taken;
    if (order.remaining === 0) this.cancel(ref);
    return taken;
  }

  sorted(side: EngineSide): ModelOrder[] {
    return this.orders
      .filter((o) => o.side === side)
      .sort((a, b) => (side === BID ? b.tick - a.tick : a.tick - b.tick) || a.seq - b.seq);
  }

  best(side: EngineSide): number {
    return this.sorted(side)[0]?.tick ?? -1;
  }

  trade(hits: EngineSide, tick: number, size: number): Fill[] {
    const fills: Fill[] = [];
    const used = new Map<number, number>();
    for (const order of this.sorted(hits)) {
      if (hits === BID ? order.tick < tick : order.tick > tick) break;
      let avail = size;
      if (order.tick === tick) {
        avail = Math.max(0, size - order.queueAhead);
        order.queueAhead = Math.max(0, order.queueAhead - size);
      }
      const u = used.get(order.owner) ?? 0;
      const fill = Math.min(order.remaining, avail - u);
      if (fill > 0) {
        used.set(order.owner, u + fill);
        order.remaining -= fill;
        fills.push([order.ref, order.owner, order.tick, fill]);
      }
    }
    this.orders = this.orders.filter((o) => o.remaining > 0);
    return fills;
  }

  cap(side: EngineSide, tick: number, displayed: number): void {
    for (const o of this.orders) {
      if (o.side === side && o.tick === tick) o.queueAhead = Math.min(o.queueAhead, displayed);
    }
  }

  snapshot(): RestingOrder[] {
    return [...this.sorted(BID), ...this.sorted(ASK)].map(({ seq: _seq, ...rest }) => rest);
  }
}

const MAX_TICK = 40;
const side = fc.constantFrom<EngineSide>(BID, ASK);
// Ticks bunched on a few levels so queues, owners and sweeps interact; two ticks past a 32-tick word.
const tick = fc.oneof(fc.integer({ min: 15, max: 22 }), fc.constantFrom(1, 31, 32, 33, MAX_TICK - 1));
const amount = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 30 }), weight: 6 },
  { arbitrary: fc.integer({ min: 1, max: 200 }), weight: 3 },
  // Past 2^40: exercises the level rebase.
  { arbitrary: fc.integer({ min: 2 ** 40 - 50, max: 2 ** 41 }), weight: 1 },
);
const ref = fc.integer({ min: 0, max: 25 }).map((r) => (r % 2 === 0 ? r : 2 ** 31 + r));

const op = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant("add" as const),
      ref,
      owner: fc.integer({ min: 1, max: 3 }),
      side,
      tick,
      size: amount,
      queueAhead: fc.oneof(fc.constant(0), amount),
    }),
    weight: 5,
  },
  { arbitrary: fc.record({ kind: fc.constant("cancel" as const), ref }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("reduce" as const), ref, size: amount }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("trade" as const), side, tick, size: amount }), weight: 3 },
  {
    arbitrary: fc.record({
      kind: fc.constant("cap" as const),
      side,
      tick,
      displayed: fc.oneof(fc.constant(0), amount),
    }),
    weight: 1,
  },
);

describe("SimBook against a naive reference model", () => {
  it("gives identical fills, remaining sizes, queues and best prices", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        const book = new SimBook(MAX_TICK);
        const model = new Model();
        for (const o of ops) {
          switch (o.kind) {
            case "add":
              if (book.has(o.ref)) {
                expect(() => book.add(o.ref, o.owner, o.side, o.tick, o.size, o.queueAhead)).toThrow(
                  RangeError,
                );
              } else {
                book.add(o.ref, o.owner, o.side, o.tick, o.size, o.queueAhead);
                model.add(o.ref, o.owner, o.side, o.tick, o.size, o.queueAhead);
              }
              break;
            case "cancel":
              expect(book.cancel(o.ref)).toBe(model.cancel(o.ref));
              break;
            case "reduce":
              expect(book.reduce(o.ref, o.size)).toBe(model.reduce(o.ref, o.size));
              break;
            case "trade":
              expect(trade(book, o.side, o.tick, o.size)).toEqual(model.trade(o.side, o.tick, o.size));
              break;
            case "cap":
              book.capQueueAhead(o.side, o.tick, o.displayed);
              model.cap(o.side, o.tick, o.displayed);
              break;
          }
          expect(book.best(BID)).toBe(model.best(BID));
          expect(book.best(ASK)).toBe(model.best(ASK));
          expect(book.size).toBe(model.orders.length);
        }
        const expected = model.snapshot();
        expect(book.orders()).toEqual(expected);
        for (const o of expected) {
          expect(book.remaining(o.ref)).toBe(o.remaining);
          expect(book.queueAhead(o.ref)).toBe(o.queueAhead);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
