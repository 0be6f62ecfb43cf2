/**
 * The feed's local book and its fast decimal path, checked against the plain implementations on
 * random inputs: the incremental copy-on-write ladders must equal a book rebuilt from scratch, and
 * the fast decimal parser must agree with parseMicros on every string.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseMicros } from "../../../src/venues/decimal";
import { LocalBook } from "../../../src/venues/kalshi/book";
import { bookFromBids, decimalMicros } from "../../../src/venues/kalshi/normalize";
import type { BookLevel } from "../../../src/venues/model";

describe("decimalMicros", () => {
  it("agrees with parseMicros on decimal-looking strings", () => {
    const chars = fc.constantFrom("0", "1", "4", "9", ".", "-", " ", "e");
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 18 }), (parts) => {
        const text = parts.join("");
        expect(decimalMicros(text)).toBe(parseMicros(text));
      }),
      { numRuns: 5000 },
    );
    for (const text of [
      "0.4200",
      "10.00",
      "0.0055",
      "125000.00",
      "1",
      "0.1234567",
      "0.1234560",
      ".5",
      "5.",
      "",
      "-54.00",
      "-0.5",
      "- 1",
      "--1",
      "-",
    ]) {
      expect(decimalMicros(text)).toBe(parseMicros(text));
    }
  });
});

describe("LocalBook", () => {
  const level = fc.record({
    price: fc.integer({ min: 1, max: 99 }).map((c) => c * 10_000),
    size: fc.integer({ min: 1, max: 500 }).map((n) => n * 1_000_000),
  });
  const delta = fc.record({
    outcome: fc.constantFrom("yes" as const, "no" as const),
    price: fc.integer({ min: 1, max: 99 }).map((c) => c * 10_000),
    delta: fc.integer({ min: -300, max: 300 }).map((n) => n * 1_000_000),
  });

  it("after any snapshot and deltas equals the book rebuilt from the same bids", () => {
    fc.assert(
      fc.property(
        fc.array(level, { maxLength: 20 }),
        fc.array(level, { maxLength: 20 }),
        fc.array(delta, { maxLength: 60 }),
        (yes, no, deltas) => {
          const book = new LocalBook("T");
          book.reset(yes, no, 1);
          const sizes = { yes: new Map<number, number>(), no: new Map<number, number>() };
          for (const l of yes) sizes.yes.set(l.price, (sizes.yes.get(l.price) ?? 0) + l.size);
          for (const l of no) sizes.no.set(l.price, (sizes.no.get(l.price) ?? 0) + l.size);
          const held = [] as Array<{ snapshot: string; book: ReturnType<LocalBook["toOrderBook"]> }>;
          deltas.forEach((d, i) => {
            const current = sizes[d.outcome].get(d.price) ?? 0;
            const ok = book.apply(d.outcome, d.price, d.delta, i + 2);
            expect(ok).toBe(current + d.delta >= 0);
            if (ok) sizes[d.outcome].set(d.price, current + d.delta);
            const published = book.toOrderBook("t");
            held.push({ snapshot: JSON.stringify(published), book: published });
          });
          const levels = (m: Map<number, number>): BookLevel[] =>
            [...m].filter(([, s]) => s > 0).map(([price, size]) => ({ price, size }));
          const expected = bookFromBids("T", levels(sizes.yes), levels(sizes.no), "t", book.sequence);
          expect(book.toOrderBook("t")).toEqual(expected);
          // Books handed out earlier were not changed by later deltas.
          for (const h of held) expect(JSON.stringify(h.book)).toBe(h.snapshot);
        },
      ),
      { numRuns: 300 },
    );
  });
});
