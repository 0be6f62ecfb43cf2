/**
 * The ledger identity under random trading: random books, orders (every side, outcome, type and
 * time in force), cancels, real trades, deposits, withdrawals and a resolution, driven through the
 * sandbox API. After every step, for the account:
 *   available + locked + Σ cost basis = deposits − withdrawals − fees + realized PnL
 * and locked cash equals what open buy orders hold, no position sells more than it holds, and
 * available never goes negative.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { bearer } from "../support/app";
import { balance, book, expectLedgerBalanced, place, printTrade, setBook, tradingApp } from "./setup";

const MARKETS = ["kalshi:K", "polymarket:P"] as const;
/** Prices are drawn as an offset in cents from the market's current mid, so orders and trades meet. */
const offset = fc.integer({ min: -6, max: 6 });
const clampCents = (cents: number) => Math.min(99, Math.max(1, cents)) / 100;

const action = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record({
      kind: fc.constant("book" as const),
      market: fc.constantFrom(...MARKETS),
      mid: fc.integer({ min: 5, max: 95 }),
      depth: fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 0, maxLength: 4 }),
    }),
  },
  {
    weight: 50,
    arbitrary: fc.record({
      kind: fc.constant("place" as const),
      market: fc.constantFrom(...MARKETS),
      side: fc.constantFrom("buy", "buy", "sell"),
      outcome: fc.constantFrom("yes", "no"),
      type: fc.constantFrom("limit", "limit", "market"),
      offset,
      amount: fc.integer({ min: 5, max: 40 }),
      tif: fc.constantFrom("GTC", "GTC", "GTC", "IOC", "FOK"),
    }),
  },
  { weight: 10, arbitrary: fc.record({ kind: fc.constant("cancel" as const), pick: fc.nat() }) },
  {
    weight: 60,
    arbitrary: fc.record({
      kind: fc.constant("trade" as const),
      market: fc.constantFrom(...MARKETS),
      offset,
      size: fc.integer({ min: 1, max: 80 }),
      side: fc.constantFrom("buy", "sell", null),
      outcome: fc.constantFrom("yes", "no"),
    }),
  },
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constantFrom("deposit" as const, "withdraw" as const),
      amount: fc.integer({ min: 1, max: 3_000 }),
    }),
  },
  {
    // Rare: a resolved market takes no more orders.
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("resolve" as const),
      market: fc.constantFrom(...MARKETS),
      resolution: fc.constantFrom("yes", "no", "void"),
    }),
  },
);

describe("the ledger identity", () => {
  it("holds after every step of random trading", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 20, maxLength: 50, size: "max" }), async (actions) => {
        const s = await tradingApp();
        try {
          const venueOf = (market: string) => (market.startsWith("kalshi") ? s.kalshi : s.polymarket);
          const open: string[] = [];
          const mids = new Map<string, number>(MARKETS.map((m) => [m, 50]));
          for (const market of MARKETS) {
            setBook(
              venueOf(market),
              book(market, {
                bids: [
                  [0.49, 30],
                  [0.48, 30],
                ],
                asks: [
                  [0.51, 30],
                  [0.52, 30],
                ],
              }),
            );
          }
          await balance(s.t.app, s.key); // the account's first use funds it
          for (const step of actions) {
            if (step.kind === "book") {
              mids.set(step.market, step.mid);
              const bids = step.depth
                .map((size, i) => [(step.mid - 1 - i) / 100, size] as [number, number])
                .filter(([p]) => p > 0);
              const asks = step.depth
                .map((size, i) => [(step.mid + 1 + i) / 100, size] as [number, number])
                .filter(([p]) => p < 1);
              setBook(venueOf(step.market), book(step.market, { bids, asks }));
            } else if (step.kind === "place") {
              const body: Record<string, unknown> = {
                market_id: step.market,
                side: step.side,
                outcome: step.outcome,
                type: step.type,
                amount: step.amount,
                time_in_force: step.type === "market" ? (step.tif === "FOK" ? "FOK" : "IOC") : step.tif,
              };
              // A sell is outcome-relative: its price moves against the YES mid for NO.
              const mid = mids.get(step.market)!;
              const cents = step.outcome === "yes" ? mid + step.offset : 100 - mid + step.offset;
              if (step.type === "limit") body["price"] = clampCents(cents);
              const response = await place(s.t.app, s.key, body);
              // Refusals (no holding to sell, not enough cash, resolved market) are fine; 5xx never.
              if (response.statusCode >= 500) throw new Error(`${response.statusCode} ${response.body}`);
              if (response.statusCode === 201 && response.json().data.status === "open")
                open.push(response.json().data.id);
            } else if (step.kind === "cancel") {
              if (open.length > 0) {
                const id = open.splice(step.pick % open.length, 1)[0]!;
                const response = await s.t.app.inject({
                  method: "DELETE",
                  url: `/v1/orders/${id}`,
                  headers: bearer(s.key),
                });
                if (response.statusCode !== 200 && response.statusCode !== 409)
                  throw new Error(response.body);
              }
            } else if (step.kind === "trade") {
              const mid = mids.get(step.market)!;
              const cents = step.outcome === "yes" ? mid + step.offset : 100 - mid + step.offset;
              printTrade(venueOf(step.market), step.market, { ...step, price: clampCents(cents) });
            } else if (step.kind === "deposit" || step.kind === "withdraw") {
              const response = await s.t.app.inject({
                method: "POST",
                url: `/v1/sandbox/${step.kind}`,
                headers: bearer(s.key),
                payload: { amount: step.amount },
              });
              if (response.statusCode >= 500) throw new Error(response.body);
            } else if (step.kind === "resolve") {
              const venue = venueOf(step.market);
              const market = venue.markets.get(step.market)!;
              if (market.status === "open") {
                venue.set({ ...market, status: "resolved", resolution: step.resolution });
                await s.t.services.catalog.syncVenue(venue.id);
                await s.t.services.orders.settleFromCatalog();
              }
            }
            await s.t.services.exchange.idle();
            await expectLedgerBalanced(s.t, s.accountId);
          }
        } finally {
          await s.t.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});
