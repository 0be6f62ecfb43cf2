/**
 * Where an order executes. The sandbox exchange implements `Execution` with simulated matching
 * against real venue books (sandbox/execution.ts); live routing implements it for each venue it can
 * trade, with the account's linked credentials (orders/live.ts). The orders service picks one by the
 * API key's environment and the market's venue, and nothing else: no request field can switch one
 * into the other.
 *
 * Besides placing and cancelling, an execution reports what the account has there: its cash and
 * what it holds, as the execution itself sees them (the portfolio shows them beside crossbook's own
 * record). Orders and fills live in the ledger, the book of record of both environments: the
 * sandbox writes it directly, and the live fill poller keeps it current from the venues every few
 * seconds. Reading an order or its fills through an execution (`read`, `fills`) brings it up to date
 * first: a live order's venue is asked now instead of at the next poll.
 */
import type { Owner } from "../access/owner";
import type { DbOrTrx } from "../infra/db/store";
import type { FillRow, OrderRow } from "../ledger/orders-repo";
import type { VenueSnapshot } from "../portfolio/holdings";
import { MICROS } from "../venues/decimal";
import type { OrderBook } from "../venues/model";
import type { TradableMarket } from "./markets";

/** What the orders service does inside the transaction that first stores an order. */
export interface PlacementHooks {
  /**
   * Claims the placement's idempotency key with `order` as the response a retry replays; throws
   * when a concurrent twin claimed it first, which rolls the placement back.
   */
  stored(trx: DbOrTrx, order: OrderRow): Promise<void>;
}

export interface Execution {
  /**
   * Places a validated order (`draft`, its market checked and its price on tick) and returns it as
   * it stands after placement: resting, filled, cancelled, or pending at the venue.
   */
  place(owner: Owner, draft: OrderRow, market: TradableMarket, hooks: PlacementHooks): Promise<OrderRow>;
  /**
   * Cancels an open or pending order with `reason` (user, bulk_cancel, expired, market_closed…);
   * null when it filled or was cancelled meanwhile (the caller re-reads it).
   */
  cancel(owner: Owner, order: OrderRow, reason: string): Promise<OrderRow | null>;
  /**
   * One of the owner's orders as it stands there now. Sandbox: the ledger's row (the exchange writes
   * every fill as it happens). Live: the order is first brought up to date with its venue (new
   * fills applied, closed here if the venue closed it, a pending one looked for), which costs venue
   * reads; a venue that cannot be asked throws 503 and changes nothing.
   */
  read(owner: Owner, order: OrderRow): Promise<OrderRow>;
  /** The order's fills, oldest first, after bringing it up to date as `read` does. */
  fills(owner: Owner, order: OrderRow): Promise<FillRow[]>;
  /**
   * The owner's cash there, in micro-units: `available` to trade and `locked` in open buy orders.
   * Sandbox: the ledger's fake USDC (funded on first read). Live: what the linked venue account
   * reports (0 when none is linked); a venue that cannot be asked throws 503.
   */
  balance(owner: Owner): Promise<Cash>;
  /**
   * What the owner holds there as the execution itself reports it: one answer per venue account it
   * reads (live: the linked account's positions, `unavailable` with a reason when the venue cannot be
   * read; none when nothing is linked). The sandbox reports none: its holdings are the ledger's
   * positions themselves. Never throws for a venue that cannot be read.
   */
  positions(owner: Owner): Promise<VenueSnapshot[]>;
}

export interface Cash {
  available: number;
  locked: number;
}

/** Where orders go: the sandbox exchange, and live routing per venue it can trade. */
export interface Executions {
  sandbox: Execution;
  live: ReadonlyMap<string, Execution>;
}

/**
 * A market order's bound: the best price of the side it takes, moved by `max_slippage` (and never
 * past a limit price the caller also gave), on the market's tick. Undefined when that side is empty.
 */
export function marketOrderBound(
  order: OrderRow,
  market: TradableMarket,
  book: OrderBook,
): number | undefined {
  const own = order.outcome === "yes" ? book.yes : book.no;
  const best = (order.side === "buy" ? own.asks : own.bids)[0]?.price;
  if (best === undefined) return undefined;
  const slip = (order.max_slippage_ppm ?? 0) / 1_000_000;
  const tick = market.tickSize;
  if (order.side === "buy") {
    let bound = Math.floor((best * (1 + slip)) / tick) * tick;
    if (order.price > 0) bound = Math.min(bound, order.price);
    return Math.min(bound, MICROS - tick);
  }
  let bound = Math.ceil((best * (1 - slip)) / tick) * tick;
  if (order.price > 0) bound = Math.max(bound, order.price);
  return Math.max(bound, tick);
}
