/**
 * `openOrder` (one write per table for a new sandbox order and its immediate fills) against the
 * step-by-step bookkeeping it replaces: insert the order open with its buy lock or sell reservation,
 * `applyFill` per fill, `cancelOrderRow` for an unfilled rest that may not rest. Random sequences
 * of buys and sells (partly and fully filled, IOC/FOK cancels, positions opened, grown, closed and
 * reopened, refusals for missing cash or contracts) run on two accounts, one each way, and must
 * leave the same orders, fills, positions, balance and events (ids aside), on both stores. The new
 * path runs inside `inTransaction`, so on SQLite it also runs on the transaction's connection
 * directly, as the batcher runs it.
 */

import { kalshiSchedule, polymarketSchedule } from "@crossbook/fees";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Outbox } from "../../src/events/outbox";
import { AppError } from "../../src/http/errors";
import { inTransaction } from "../../src/infra/db/prepared";
import type { Db, DbOrTrx } from "../../src/infra/db/store";
import { newId } from "../../src/infra/ids";
import { applyFill, cancelOrderRow, type FillInput, openOrder } from "../../src/ledger/bookkeeping";
import { orderCreated } from "../../src/ledger/events";
import { buyLock, type FeeModel } from "../../src/ledger/money";
import { insertOrder, type OrderRow, type Owner } from "../../src/ledger/orders-repo";
import {
  adjustBalance,
  createBalance,
  findPositionByKey,
  reservePosition,
} from "../../src/ledger/positions-repo";
import { createTestApp, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";

const MARKETS: Array<{ id: string; fees: FeeModel }> = [
  { id: "kalshi:DIFF-A", fees: kalshiSchedule("quadratic_with_maker_fees", 1) },
  { id: "polymarket:DIFF-B", fees: polymarketSchedule({ rate: 0.05, exponent: 1, capBps: 1000 }) },
];
const M = 1_000_000;

const step = fc.record({
  market: fc.integer({ min: 0, max: 1 }),
  side: fc.constantFrom("buy", "buy", "sell"),
  outcome: fc.constantFrom("yes", "no"),
  priceCents: fc.integer({ min: 1, max: 99 }),
  // "all": a sell of every contract held and not promised (closes the position when it fills).
  amount: fc.oneof(
    fc.integer({ min: 1, max: 40 }),
    fc.integer({ min: 1, max: 4 }),
    fc.constant("all" as const),
  ),
  fills: fc.array(
    fc.record({
      priceCents: fc.integer({ min: 1, max: 99 }),
      size: fc.integer({ min: 1, max: 45 }),
      fee: fc.integer({ min: 0, max: 50_000 }),
    }),
    { maxLength: 3 },
  ),
  rest: fc.constantFrom(null, null, "unfilled_ioc", "unfilled_fok"),
});
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

/** The placement as orders/service wrote it before `openOrder`, statement by statement. */
async function stepByStep(
  trx: DbOrTrx,
  outbox: Outbox,
  nowIso: string,
  draft: OrderRow,
  fills: FillInput[],
  rest: string | null,
  fees: FeeModel,
): Promise<OrderRow> {
  const owner: Owner = { accountId: draft.account_id, environment: "sandbox" };
  let row: OrderRow = { ...draft };
  if (row.side === "buy") {
    row.locked = buyLock(fees, row.price, row.amount);
    if (
      !(await adjustBalance(trx, owner, { available: -row.locked, locked: row.locked }, nowIso, row.locked))
    )
      throw new AppError("INSUFFICIENT_BALANCE");
  } else {
    const held = await findPositionByKey(trx, owner, row.market_id, row.outcome);
    if (!held || !(await reservePosition(trx, held.id, row.amount, nowIso)))
      throw new AppError("INSUFFICIENT_POSITION");
    row.position_id = held.id;
  }
  await insertOrder(trx, row);
  await outbox.record(trx, {
    type: "order.created",
    data: orderCreated(row),
    accountId: owner.accountId,
    environment: owner.environment,
  });
  const ctx = { outbox, nowIso, title: "The market" };
  for (const fill of fills) {
    const next = await applyFill(trx, ctx, row, fill, fees);
    if (next) row = next;
  }
  if (rest && row.status === "open") row = (await cancelOrderRow(trx, { outbox, nowIso }, row, rest)) ?? row;
  return row;
}

/** Replaces every ord_/pos_/fil_/evt_ id by its rank of first appearance, so two accounts compare. */
function normalizer() {
  const seen = new Map<string, string>();
  const normalize = (value: unknown): unknown => {
    if (typeof value === "string") {
      return value.replace(/\b(ord|pos|fil|evt|acc)_[0-9A-Za-z]+/g, (id) => {
        if (!seen.has(id)) seen.set(id, `${id.slice(0, 3)}#${seen.size}`);
        return seen.get(id)!;
      });
    }
    if (Array.isArray(value)) return value.map(normalize);
    if (value && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]));
    return value;
  };
  return normalize;
}

async function snapshot(db: Db, accountId: string, orderIds: string[]) {
  const normalize = normalizer();
  const orders = [];
  for (const id of orderIds)
    orders.push(await db.selectFrom("orders").selectAll().where("id", "=", id).executeTakeFirst());
  // In the order the orders were placed (ids made in the same millisecond need not sort that way).
  const fills = (await db.selectFrom("fills").selectAll().where("account_id", "=", accountId).execute()).sort(
    (x, y) =>
      orderIds.indexOf(x.order_id) - orderIds.indexOf(y.order_id) || (x.cause_key < y.cause_key ? -1 : 1),
  );
  const positions = await db
    .selectFrom("positions")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("market_id")
    .orderBy("outcome")
    .execute();
  const balance = await db
    .selectFrom("balances")
    .selectAll()
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  const events = await db
    .selectFrom("events")
    .select(["type", "environment", "data"])
    .where("account_id", "=", accountId)
    .orderBy("seq")
    .execute();
  return normalize({
    orders,
    fills: fills.map(({ id: _id, ...rest }) => rest),
    positions,
    balance: { ...balance, account_id: "acc" },
    events: events.map((e) => ({ ...e, data: JSON.parse(e.data) })),
  });
}

describe.each(STORE_BACKENDS)("openOrder on %s", (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ store });
  });
  afterAll(async () => {
    await t.close();
  });

  async function account(): Promise<string> {
    const id = newId("acc");
    const now = "2026-01-01T00:00:00.000Z";
    await t.runtime.store.db
      .insertInto("accounts")
      .values({
        id,
        email: `${id}@example.com`,
        password_hash: "x",
        tier: "free",
        plan: "free",
        created_at: now,
        updated_at: now,
      })
      .execute();
    // Little enough that some buys find their collateral missing.
    await createBalance(t.runtime.store.db, { accountId: id, environment: "sandbox" }, 40 * M, now);
    return id;
  }

  it("leaves the same state and events as insert + applyFill + cancelOrderRow", async () => {
    const db = t.runtime.store.db;
    const outbox = t.services.outbox;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps: Step[]) => {
        const a = await account();
        const b = await account();
        const ordersOf: Record<string, string[]> = { [a]: [], [b]: [] };
        for (const [i, s] of steps.entries()) {
          const market = MARKETS[s.market]!;
          const nowIso = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
          // The position's id looked up before the transaction, as validation did on the old path.
          const existing = await findPositionByKey(
            db,
            { accountId: a, environment: "sandbox" },
            market.id,
            s.outcome,
          );
          const free = existing ? Math.floor((existing.size - existing.reserved) / M) : 0;
          const amount = s.amount === "all" ? Math.max(1, free) : s.amount;
          const draftFor = async (accountId: string, positionId: string): Promise<OrderRow> => ({
            id: newId("ord"),
            account_id: accountId,
            environment: "sandbox",
            market_id: market.id,
            venue: market.fees.venue,
            side: s.side,
            outcome: s.outcome,
            type: "limit",
            time_in_force: s.rest === null ? "GTC" : s.rest === "unfilled_fok" ? "FOK" : "IOC",
            price: s.priceCents * 10_000,
            max_slippage_ppm: null,
            amount: amount * M,
            filled_amount: 0,
            filled_notional: 0,
            fees: 0,
            locked: 0,
            queue_ahead: 0,
            status: "open",
            cancel_reason: null,
            client_order_id: null,
            venue_order_id: null,
            position_id: positionId,
            expires_at: null,
            created_at: nowIso,
            updated_at: nowIso,
            cancelled_at: null,
            requested_amount: null,
            amount_note: null,
            fee_carry: 0,
          });
          const fills: FillInput[] = s.fills.map((f, k) => ({
            price: f.priceCents * 10_000,
            size: f.size * M,
            fee: f.fee,
            liquidity: "taker",
            cause: {
              kind: "book_level",
              price: f.priceCents / 100,
              size_shown: f.size,
              book_timestamp: nowIso,
              book_sequence: null,
            },
            causeKey: `book:${nowIso}:${k}:${f.priceCents}`,
          }));

          const oldDraft = await draftFor(a, existing?.id ?? newId("pos"));
          const oldOutcome = await db
            .transaction()
            .execute((trx) => stepByStep(trx, outbox, nowIso, oldDraft, fills, s.rest, market.fees))
            .then(
              () => "ok",
              (error: unknown) => (error instanceof AppError ? error.code : String(error)),
            );
          const newDraft = await draftFor(b, newId("pos"));
          const newOutcome = await inTransaction(db, (trx) =>
            openOrder(trx, { outbox, nowIso, title: "The market" }, newDraft, fills, s.rest, market.fees),
          ).then(
            () => "ok",
            (error: unknown) => (error instanceof AppError ? error.code : String(error)),
          );
          expect(newOutcome).toBe(oldOutcome);
          if (oldOutcome === "ok") {
            ordersOf[a]!.push(oldDraft.id);
            ordersOf[b]!.push(newDraft.id);
          }
        }
        expect(await snapshot(db, b, ordersOf[b]!)).toEqual(await snapshot(db, a, ordersOf[a]!));
      }),
      { numRuns: store === "postgres" ? 25 : 60 },
    );
  }, 120_000);
});
