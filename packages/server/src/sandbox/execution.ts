/**
 * The sandbox as an execution venue: an order walks the real venue book in memory (the exchange's
 * plan), then the ledger writes it with its immediate fills in one transaction shared with the
 * placements that arrived in the same turn (group commit); what may rest joins the simulated book.
 */
import type { Owner } from "../access/owner";
import type { Outbox } from "../events/outbox";
import { AppError } from "../http/errors";
import { type Clock, isoNow } from "../infra/clock";
import { TransactionBatcher } from "../infra/db/batcher";
import type { Db } from "../infra/db/store";
import { cancelOrderRow, feeModelOf, openOrder } from "../ledger/bookkeeping";
import { type FillRow, fillsOf, findOrder, type OrderRow } from "../ledger/orders-repo";
import { findBalance } from "../ledger/positions-repo";
import { type Cash, type Execution, marketOrderBound, type PlacementHooks } from "../orders/execution";
import type { TradableMarket } from "../orders/markets";
import type { VenueSnapshot } from "../portfolio/holdings";
import { MICROS } from "../venues/decimal";
import type { OrderBook } from "../venues/model";
import type { SandboxExchange } from "./exchange";
import type { SandboxAccounts } from "./service";

export interface SandboxExecutionDeps {
  db: Db;
  outbox: Outbox;
  clock: Clock;
  exchange: SandboxExchange;
  accounts: SandboxAccounts;
  /** A market's current book (the prices service: live feed, else REST). */
  book: (market: TradableMarket) => Promise<OrderBook | null>;
}

export class SandboxExecution implements Execution {
  readonly #batcher: TransactionBatcher;

  constructor(private readonly deps: SandboxExecutionDeps) {
    // A placement's unit writes only in its transaction (the engine changes after it commits), so a
    // batch may run it again: see TransactionBatcher's `rerunnable`.
    this.#batcher = new TransactionBatcher(deps.db, { rerunnable: true });
  }

  async place(
    owner: Owner,
    draft: OrderRow,
    market: TradableMarket,
    hooks: PlacementHooks,
  ): Promise<OrderRow> {
    const { outbox, exchange, clock } = this.deps;
    await this.deps.accounts.ensureFunded(owner);
    const book = await this.deps.book(market);
    if (!book)
      throw new AppError(
        "VENUE_UNAVAILABLE",
        `Could not read ${market.id}'s order book from ${market.venue}`,
      );
    let order = { ...draft };
    const marketOrder = order.type === "market";
    if (marketOrder) {
      // No liquidity on the side a market order takes: it is accepted and cancelled unfilled.
      order.price =
        marketOrderBound(order, market, book) ??
        (order.side === "buy" ? MICROS - market.tickSize : market.tickSize);
    }
    const fees = feeModelOf(market);
    const plan = exchange.plan(
      {
        side: order.side as "buy" | "sell",
        outcome: order.outcome as "yes" | "no",
        price: order.price,
        amount: order.amount,
        timeInForce: order.time_in_force as "GTC",
        type: order.type as "limit" | "market",
      },
      market,
      book,
    );
    order.queue_ahead = plan.queueAhead;
    const ctx = { outbox, nowIso: isoNow(clock), title: market.title };
    const fills = plan.fills.map((fill) => ({ ...fill, liquidity: "taker" as const }));
    try {
      // Group commit: this placement shares a transaction (in its own savepoint) with the others
      // that arrived in the same turn; it resolves only once that transaction has committed.
      order = await this.#batcher.run(async (trx) => {
        const row = await openOrder(trx, ctx, order, fills, plan.restReason, fees);
        await hooks.stored(trx, row);
        return row;
      });
    } catch (error) {
      plan.undo();
      throw error;
    }
    if (!marketOrder) exchange.rest(order, market);
    return order;
  }

  async cancel(_owner: Owner, order: OrderRow, reason: string): Promise<OrderRow | null> {
    const { db, outbox, clock, exchange } = this.deps;
    const nowIso = isoNow(clock);
    const cancelled = await db
      .transaction()
      .execute((trx) => cancelOrderRow(trx, { outbox, nowIso }, order, reason));
    if (cancelled) exchange.forget(order.id, order.market_id);
    return cancelled;
  }

  /** The exchange writes every fill as it happens: the ledger's row is the order as it stands. */
  async read(owner: Owner, order: OrderRow): Promise<OrderRow> {
    return (await findOrder(this.deps.db, owner, order.id)) ?? order;
  }

  async fills(_owner: Owner, order: OrderRow): Promise<FillRow[]> {
    return fillsOf(this.deps.db, order.id);
  }

  async balance(owner: Owner): Promise<Cash> {
    await this.deps.accounts.ensureFunded(owner);
    const row = await findBalance(this.deps.db, owner);
    return { available: row?.available ?? 0, locked: row?.locked ?? 0 };
  }

  /** The sandbox's holdings are the ledger's positions: there is no venue account to compare. */
  async positions(_owner: Owner): Promise<VenueSnapshot[]> {
    return [];
  }
}
