/**
 * Live routing: a live key's orders go to the venue through the account's own linked credentials
 * (credentials/), and what the venue then does to them (acknowledges, fills, cancels, expires) comes
 * back through the same bookkeeping the sandbox uses (bookkeeping.ts), so a live fill moves the
 * order, the position and the events exactly as a simulated one does.
 *
 * Placement is two transactions around one venue call. The first inserts the order `pending` (and
 * claims the idempotency key, via the service's `within`), so the order exists before any money can
 * move at the venue; the venue call carries our order id as its client order id; the second stores
 * the venue's order id (`pending` -> `open`) and applies the fills the venue already reports. What
 * the venue answered decides the rest:
 *   - a rejection (bad order, no funds, closed market, refused credentials): nothing was placed, so
 *     the order is cancelled here (reason `venue`) and the caller gets 422 VENUE_REJECTED;
 *   - no answer (down, timeout, garbage): the venue may or may not have the order, so it stays
 *     `pending` and the caller gets 503 VENUE_UNAVAILABLE; the poller then finds it at the venue (by
 *     client order id, or by its exact shape where the venue does not echo ids) and links it, or
 *     cancels it here after `pendingGraceMs` without a trace of it.
 *
 * Fills are tracked by polling (`pollOnce`, every `pollIntervalMs` once started): for each account
 * and venue with open live orders, the venue's fills since the oldest such order are applied (each
 * venue fill at most once per order: its cause key is `venue_fill:<id>`), and orders the venue no
 * longer lists as open are read one by one to apply their last fills and cancel them here when the
 * venue cancelled or expired them. Polling rather than the venues' private feeds keeps one code path
 * for both venues and survives restarts; a feed can later just call `pollOnce` sooner.
 *
 * Live cash lives at the venue: no live `balances` row is created or moved here (bookkeeping's
 * balance updates match nothing for live owners); `balance()` asks the venues instead. A live sell
 * is covered by the account's position, which it reserves as the sandbox does, because a fill of it
 * has to reduce a position. When it asks for more than crossbook's own free contracts, what the venue
 * holds beyond crossbook's record (bought outside crossbook) is taken into the position first, at
 * unknown cost (`adoptVenueExcess`, portfolio/holdings.ts).
 *
 * Nothing here logs or returns a credential: logs carry account, order and venue ids and the venue's
 * error kind and message only.
 */
import { type FeeSchedule, fillFee } from "@crossbook/fees";
import type { CredentialsService } from "../credentials/service";
import type { Outbox } from "../events/outbox";
import { AppError } from "../http/errors";
import { type Clock, isoFromMs, isoNow } from "../infra/clock";
import type { Db, DbOrTrx } from "../infra/db/store";
import {
  applyFill,
  type Bookkeeping,
  cancelOrderRow,
  type FillInput,
  feeModelOf,
} from "../ledger/bookkeeping";
import { orderCreated } from "../ledger/events";
import { buyLock, type FeeModel } from "../ledger/money";
import type { OrderRow, Owner } from "../ledger/orders-repo";
import * as repo from "../ledger/orders-repo";
import {
  adoptIntoPosition,
  findPositionByKey,
  type PositionRow,
  positionIdByKey,
  reservePosition,
} from "../ledger/positions-repo";
import { NETTING_VENUES, nettedSize, type VenueHoldings, venuePositionId } from "../portfolio/holdings";
import { MICROS } from "../venues/decimal";
import { isVenueError, type VenueError } from "../venues/errors";
import type { OrderBook, Outcome, VenueId } from "../venues/model";
import {
  type MarketDataVenue,
  type TradingVenue,
  tradingVenueOf,
  type VenueCredentials,
  type VenueFill,
  type VenueOrder,
} from "../venues/venue";
import { type Execution, marketOrderBound, type PlacementHooks } from "./execution";
import { type TradableMarket, tradableMarket } from "./markets";

export interface RouterLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface VenueRouterDeps {
  db: Db;
  outbox: Outbox;
  clock: Clock;
  venues: ReadonlyMap<VenueId, MarketDataVenue>;
  credentials: Pick<CredentialsService, "credentialsFor" | "list" | "open">;
  log: RouterLog;
  /**
   * What linked venue accounts hold (portfolio/holdings.ts): a sell may draw on contracts held at the
   * venue outside crossbook, and crossbook's own fills drop the venue answer kept for the account.
   */
  holdings?: Pick<VenueHoldings, "holding" | "invalidate">;
  /** A market's current book (the prices service), for a market order's bound. */
  book: (market: TradableMarket) => Promise<OrderBook | null>;
}

export interface VenueRouterOptions {
  /** Fill polling period once `start()`ed. Default 5 s. */
  pollIntervalMs?: number;
  /**
   * How long a `pending` order the venue never acknowledged is looked for at the venue before it is
   * taken as never placed and cancelled here. Default 2 min.
   */
  pendingGraceMs?: number;
}

/** What one poll did (tests and logs). */
export interface PollSummary {
  /** (account, venue) pairs visited. */
  visited: number;
  fills: number;
  /** Pending orders found at the venue and linked to it. */
  linked: number;
  cancelled: number;
  errors: number;
}

export const DEFAULT_POLL_INTERVAL_MS = 5_000;
export const DEFAULT_PENDING_GRACE_MS = 120_000;
/**
 * Fill queries start this long before the time they need: venue timestamps are in whole seconds,
 * some venues filter with a strict `>`, and clocks differ a little. Re-reading a fill is harmless.
 */
const FILL_LOOKBACK_MS = 60_000;

type Liquidity = FillInput["liquidity"];

export class VenueRouter implements Execution {
  readonly #pollIntervalMs: number;
  readonly #pendingGraceMs: number;
  #timer: NodeJS.Timeout | null = null;
  #polling: Promise<PollSummary> | null = null;
  /** Newest venue fill time seen per account and venue: later polls ask only for what follows. */
  readonly #highWater = new Map<string, number>();

  constructor(
    private readonly deps: VenueRouterDeps,
    options: VenueRouterOptions = {},
  ) {
    this.#pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.#pendingGraceMs = options.pendingGraceMs ?? DEFAULT_PENDING_GRACE_MS;
  }

  // --- placing -----------------------------------------------------------------------------------

  async place(
    owner: Owner,
    draft: OrderRow,
    market: TradableMarket,
    hooks: PlacementHooks,
  ): Promise<OrderRow> {
    const { db, outbox, clock } = this.deps;
    const positionId = await positionIdByKey(db, owner, market.id, draft.outcome);
    if (positionId) draft = { ...draft, position_id: positionId };
    if (draft.type === "market") {
      // The venue gets the sandbox's bound as the worst price; with nothing on the side the order
      // takes, the price stays 0 and the order is cancelled unfilled below, as the sandbox does.
      const book = await this.deps.book(market);
      if (!book)
        throw new AppError(
          "VENUE_UNAVAILABLE",
          `Could not read ${market.id}'s order book from ${market.venue}`,
        );
      draft = { ...draft, price: marketOrderBound(draft, market, book) ?? 0 };
    }
    const venue = this.#tradingVenue(market.venue);
    const credentials = await this.#credentialsFor(owner.accountId, market.venue);
    const nowIso = isoNow(clock);
    const fees = feeModelOf(market);
    // A sell of more than crossbook's free contracts may draw on what the venue holds (read first,
    // outside the transaction: no transaction waits on a venue).
    const venueHeld = draft.side === "sell" ? await this.#venueHolding(owner, market, draft) : undefined;

    const order = await db.transaction().execute(async (trx) => {
      const row: OrderRow = { ...draft, status: "pending", updated_at: nowIso };
      if (row.side === "buy") {
        row.locked = buyLock(fees, row.price, row.amount);
      } else {
        let held = await findPositionByKey(trx, owner, market.id, row.outcome);
        if (venueHeld !== undefined && (!held || held.size - held.reserved < row.amount)) {
          held = await adoptVenueExcess(trx, owner, market, row.outcome, held, venueHeld, nowIso);
        }
        const ok = held ? await reservePosition(trx, held.id, row.amount, nowIso) : false;
        if (!ok)
          throw new AppError(
            "INSUFFICIENT_POSITION",
            "A live sell needs contracts held at the venue (bought through crossbook or not) and not promised to other sell orders",
            {
              outcome: row.outcome,
              amount: row.amount / MICROS,
              held: (held?.size ?? 0) / MICROS,
              reserved: (held?.reserved ?? 0) / MICROS,
              ...(venueHeld !== undefined ? { venue_held: venueHeld / MICROS } : {}),
            },
          );
        row.position_id = held!.id;
      }
      await repo.insertOrder(trx, row);
      await hooks.stored(trx, row);
      await outbox.record(trx, {
        type: "order.created",
        data: orderCreated(row),
        accountId: owner.accountId,
        environment: owner.environment,
      });
      // A market order with nothing on the side it takes (the service found no bound): accepted and
      // cancelled unfilled, as in the sandbox, without troubling the venue.
      if (row.type === "market" && row.price === 0) {
        return (await cancelOrderRow(trx, { outbox, nowIso }, row, unfilledReason(row))) ?? row;
      }
      return row;
    });
    if (order.status !== "pending") return order;

    let placed: VenueOrder;
    try {
      placed = await venue.placeOrder(credentials, {
        marketId: order.market_id,
        outcome: order.outcome as "yes" | "no",
        side: order.side as "buy" | "sell",
        type: order.type as "limit" | "market",
        price: order.price,
        size: order.amount,
        timeInForce: order.time_in_force as "GTC" | "GTD" | "IOC" | "FOK",
        ...(order.expires_at ? { expiresAt: order.expires_at } : {}),
        // Our id, not the caller's client_order_id: unique per order, and what reconciliation
        // looks for when the venue's answer was lost.
        clientOrderId: order.id,
      });
    } catch (error) {
      throw await this.#placementFailed(order, error);
    }

    let fills: VenueFill[] = [];
    if (placed.filledSize > 0) {
      try {
        fills = await this.#fillsOf(venue, credentials, order, placed.venueOrderId);
      } catch (error) {
        // The poller applies them; the order is acknowledged either way.
        this.#warn(error, { order_id: order.id, venue: venue.id }, "could not read the fills of a new order");
      }
    }
    return this.#acknowledge(order, placed, fills, market, venue, credentials);
  }

  /** Maps a failed venue call at placement to the caller's error, settling the order first. */
  async #placementFailed(order: OrderRow, error: unknown): Promise<AppError> {
    const venue = order.venue as VenueId;
    const certain =
      isVenueError(error) && ["rejected", "not_found", "auth_failed", "rate_limited"].includes(error.kind);
    if (certain) {
      // The venue refused the request outright: nothing rests there, so nothing stays held here.
      const nowIso = isoNow(this.deps.clock);
      await this.deps.db
        .transaction()
        .execute((trx) => cancelOrderRow(trx, { outbox: this.deps.outbox, nowIso }, order, "venue"));
      this.deps.log.info(
        { order_id: order.id, venue, kind: error.kind, reason: error.details.venueMessage ?? error.message },
        "venue refused a live order",
      );
      if (error.kind === "rate_limited")
        return unavailable(error, { order_id: order.id, status: "cancelled" });
      return rejection(error, order.id);
    }
    this.#warn(
      error,
      { order_id: order.id, venue },
      "live order outcome unknown; left pending for reconciliation",
    );
    const appError = new AppError(
      "VENUE_UNAVAILABLE",
      `${venue} did not confirm the order; it stays pending until crossbook finds it at ${venue} or, ` +
        "failing that, cancels it (GET the order to follow it)",
      {
        venue,
        order_id: order.id,
        status: "pending",
        reason: isVenueError(error) ? error.kind : "unknown",
      },
    );
    const retryAfter = isVenueError(error) ? error.retryAfterMs : undefined;
    if (retryAfter !== undefined)
      appError.withHeaders({ "Retry-After": String(Math.ceil(retryAfter / 1000)) });
    return appError;
  }

  /** Transaction 2: the venue's id, `pending` -> `open`, the fills known, a venue-side close. */
  async #acknowledge(
    order: OrderRow,
    placed: VenueOrder,
    fills: VenueFill[],
    market: TradableMarket,
    venue: TradingVenue,
    credentials: VenueCredentials,
  ): Promise<OrderRow> {
    const { db, outbox, clock } = this.deps;
    const nowIso = isoNow(clock);
    const linked: OrderRow = {
      ...order,
      ...sizeAdjusted(order, placed, market),
      venue_order_id: placed.venueOrderId,
      status: "open",
      updated_at: nowIso,
    };
    let result: OrderRow | null;
    try {
      result = await db.transaction().execute(async (trx) => {
        if (!(await repo.updateOrderIf(trx, order, linked))) return null;
        const ctx = { outbox, nowIso, title: market.title };
        const { row } = await applyVenueFills(trx, ctx, linked, fills, "taker", market);
        return closeIfVenueClosed(trx, ctx, row, placed);
      });
      if (fills.length > 0) this.#holdingsChanged(order.account_id, order.venue);
    } catch (error) {
      // A fill that does not apply must not cost the venue id: store the link alone, the poller
      // applies the fills.
      this.#warn(error, { order_id: order.id, venue: venue.id }, "could not apply a new order's fills");
      await repo.updateOrderIf(db, order, linked);
      return (await repo.orderById(db, order.id)) ?? linked;
    }
    if (result) return result;

    // The order changed while the venue call was in flight. The poller may have found it at the
    // venue and linked it first: then only the fills known here are left to apply.
    const fresh = await repo.orderById(db, order.id);
    if (fresh?.venue_order_id === placed.venueOrderId) {
      if (repo.CANCELLABLE.has(fresh.status)) await this.#applyFillsTo(fresh, fills, "taker");
      return (await repo.orderById(db, order.id)) ?? fresh;
    }
    if (fresh && fresh.status !== "cancelled") return fresh;
    // Cancelled here meanwhile (a cancel of a pending order is local): keep the venue's id on
    // record and take the order off the venue too.
    await repo.setVenueOrderId(db, order.id, placed.venueOrderId);
    try {
      await venue.cancelOrder(credentials, placed.venueOrderId);
    } catch (error) {
      this.#warn(
        error,
        { order_id: order.id, venue: venue.id, venue_order_id: placed.venueOrderId },
        "an order cancelled during placement could not be cancelled at the venue",
      );
    }
    return (await repo.orderById(db, order.id)) ?? linked;
  }

  // --- cancelling --------------------------------------------------------------------------------

  async cancel(owner: Owner, order: OrderRow, reason = "user"): Promise<OrderRow> {
    const { db, outbox, clock } = this.deps;
    if (!order.venue_order_id) {
      // Never acknowledged: nothing rests at the venue under a known id. A placement still in flight
      // finds the order cancelled and cancels its venue twin (see #acknowledge).
      const cancelled = await db
        .transaction()
        .execute((trx) => cancelOrderRow(trx, { outbox, nowIso: isoNow(clock) }, order, reason));
      return cancelled ?? this.#afterRace(owner, order.id, reason);
    }

    const venue = this.#tradingVenue(order.venue as VenueId);
    const credentials = await this.#credentialsFor(owner.accountId, order.venue as VenueId);
    let atVenue: VenueOrder | undefined;
    let closedBefore = false;
    try {
      atVenue = await venue.cancelOrder(credentials, order.venue_order_id);
    } catch (error) {
      if (!isVenueError(error) || (error.kind !== "rejected" && error.kind !== "not_found"))
        throw mapVenueError(error, order.id);
      // Refused, or no longer resting (Kalshi's 404): most likely already filled or cancelled
      // there. Find out which; its fills are applied below and its status follows the venue's.
      closedBefore = true;
      try {
        atVenue = await venue.getOrder(credentials, order.venue_order_id, venueHint(order));
      } catch (readError) {
        if (!(isVenueError(readError) && readError.kind === "not_found"))
          throw mapVenueError(readError, order.id);
      }
      if (atVenue && (atVenue.status === "open" || atVenue.status === "pending"))
        throw rejection(error, order.id);
    }

    if (atVenue && atVenue.filledSize > order.filled_amount) {
      const fills = await this.#fillsOf(venue, credentials, order, order.venue_order_id).catch((error) => {
        throw mapVenueError(error, order.id);
      });
      await this.#applyFillsTo(order, fills, "maker");
    }
    const fresh = (await repo.orderById(db, order.id)) ?? order;
    if (!repo.CANCELLABLE.has(fresh.status)) throw notCancellable(fresh);
    if (atVenue && fresh.filled_amount < atVenue.filledSize) {
      // The venue reports fills it does not list yet: cancelling here now would shut them out.
      throw new AppError(
        "VENUE_UNAVAILABLE",
        `${venue.id} took the order off its book but has not reported all its fills yet; the order is reconciled shortly`,
        { venue: venue.id, order_id: order.id, reason: "fills_pending" },
      );
    }
    const why = closedBefore ? closedReason(fresh, clock) : reason;
    const cancelled = await db
      .transaction()
      .execute((trx) => cancelOrderRow(trx, { outbox, nowIso: isoNow(clock) }, fresh, why));
    return cancelled ?? this.#afterRace(owner, order.id, reason);
  }

  /** The order changed under a cancel: report what it is now, or cancel the new state once more. */
  async #afterRace(owner: Owner, id: string, reason: string): Promise<OrderRow> {
    const now = await repo.findOrder(this.deps.db, owner, id);
    if (!now) throw new AppError("ORDER_NOT_FOUND", `No order ${id}`, { order_id: id });
    if (repo.CANCELLABLE.has(now.status) && now.venue_order_id) return this.cancel(owner, now, reason);
    throw notCancellable(now);
  }

  // --- polling -----------------------------------------------------------------------------------

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      this.pollOnce().catch((error) => this.#warn(error, {}, "live order poll failed"));
    }, this.#pollIntervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#polling?.catch(() => {});
  }

  /** One pass over every account and venue with open live orders. Concurrent calls share a pass. */
  pollOnce(): Promise<PollSummary> {
    if (!this.#polling) {
      this.#polling = this.#poll().finally(() => {
        this.#polling = null;
      });
    }
    return this.#polling;
  }

  async #poll(): Promise<PollSummary> {
    const summary: PollSummary = { visited: 0, fills: 0, linked: 0, cancelled: 0, errors: 0 };
    for (const group of await repo.liveOrderGroups(this.deps.db)) {
      summary.visited++;
      try {
        await this.#pollGroup(group.account_id, group.venue as VenueId, summary);
      } catch (error) {
        summary.errors++;
        this.#warn(error, { account_id: group.account_id, venue: group.venue }, "could not poll live orders");
      }
    }
    return summary;
  }

  async #pollGroup(accountId: string, venueId: VenueId, summary: PollSummary): Promise<void> {
    const { db } = this.deps;
    const venue = tradingVenueOf(this.deps.venues, venueId);
    if (!venue?.capabilities.supports.trading) return;
    const credentials = await this.deps.credentials.credentialsFor(accountId, venueId);
    if (!credentials) {
      this.deps.log.warn(
        { account_id: accountId, venue: venueId },
        "open live orders on a venue the account unlinked; they are tracked again once it is linked",
      );
      return;
    }
    const orders = await repo.openLiveOrders(db, accountId, venueId);
    const linked = orders.filter((o) => o.venue_order_id);

    // 1. New fills of acknowledged orders.
    if (linked.length > 0) {
      const key = `${accountId}\u0000${venueId}`;
      const oldest = Math.min(...linked.map((o) => Date.parse(o.created_at)));
      const since = Math.max(oldest, this.#highWater.get(key) ?? 0) - FILL_LOOKBACK_MS;
      const fills = await venue.listFills(credentials, { since: isoFromMs(since) });
      const byOrder = groupBy(fills, (f) => f.venueOrderId);
      let complete = true;
      for (const order of linked) {
        const mine = byOrder.get(order.venue_order_id!);
        if (!mine) continue;
        try {
          summary.fills += await this.#applyFillsTo(order, mine, "maker");
        } catch (error) {
          complete = false;
          summary.errors++;
          this.#warn(error, { order_id: order.id, venue: venueId }, "could not apply live fills");
        }
      }
      const newest = Math.max(...fills.map((f) => Date.parse(f.timestamp)).filter(Number.isFinite));
      if (complete && Number.isFinite(newest)) this.#highWater.set(key, newest);
    }

    // 2. Orders the venue no longer lists as open, and pending ones it never acknowledged.
    const still = await repo.openLiveOrders(db, accountId, venueId);
    if (still.length === 0) return;
    const open = await venue.listOrders(credentials, { openOnly: true });
    const openIds = new Set(open.map((o) => o.venueOrderId));
    const known = new Set(still.map((o) => o.venue_order_id).filter((id): id is string => id !== null));
    for (const order of still) {
      try {
        if (order.venue_order_id) {
          if (!openIds.has(order.venue_order_id))
            await this.#reconcileClosed(order, venue, credentials, summary);
        } else {
          await this.#reconcilePending(order, venue, credentials, open, known, summary);
        }
      } catch (error) {
        summary.errors++;
        this.#warn(error, { order_id: order.id, venue: venueId }, "could not reconcile a live order");
      }
    }
  }

  /** An acknowledged order missing from the venue's open list: catch up on fills, then close it. */
  async #reconcileClosed(
    order: OrderRow,
    venue: TradingVenue,
    credentials: VenueCredentials,
    summary: PollSummary,
  ): Promise<void> {
    let atVenue: VenueOrder | undefined;
    try {
      atVenue = await venue.getOrder(credentials, order.venue_order_id!, venueHint(order));
    } catch (error) {
      if (!(isVenueError(error) && error.kind === "not_found")) throw error;
    }
    if (atVenue && (atVenue.status === "open" || atVenue.status === "pending")) return; // list lag
    if (atVenue && atVenue.filledSize > order.filled_amount) {
      const fills = await this.#fillsOf(venue, credentials, order, order.venue_order_id!);
      summary.fills += await this.#applyFillsTo(order, fills, "maker");
    }
    const fresh = await repo.orderById(this.deps.db, order.id);
    if (!fresh || !repo.CANCELLABLE.has(fresh.status)) return;
    if (atVenue && fresh.filled_amount < atVenue.filledSize) return; // fills not listed yet: next poll
    const { db, outbox, clock } = this.deps;
    const cancelled = await db
      .transaction()
      .execute((trx) =>
        cancelOrderRow(trx, { outbox, nowIso: isoNow(clock) }, fresh, closedReason(fresh, clock)),
      );
    if (cancelled) summary.cancelled++;
  }

  /** A pending order the venue never acknowledged to us: find it there, or give it up in time. */
  async #reconcilePending(
    order: OrderRow,
    venue: TradingVenue,
    credentials: VenueCredentials,
    open: VenueOrder[],
    known: Set<string>,
    summary: PollSummary,
  ): Promise<void> {
    let match =
      open.find((o) => o.clientOrderId === order.id) ??
      open.find((o) => !known.has(o.venueOrderId) && o.clientOrderId === null && sameShape(o, order));
    if (!match) {
      // Venues that list closed orders too (Kalshi) also find one that already filled or was cancelled.
      const all = await venue.listOrders(credentials, { marketId: order.market_id });
      match = all.find((o) => o.clientOrderId === order.id);
    }
    const { db, outbox, clock } = this.deps;
    if (match) {
      known.add(match.venueOrderId);
      const linked: OrderRow = {
        ...order,
        venue_order_id: match.venueOrderId,
        status: "open",
        updated_at: isoNow(clock),
      };
      if (!(await repo.updateOrderIf(db, order, linked))) return;
      summary.linked++;
      this.deps.log.info(
        { order_id: order.id, venue: venue.id, venue_order_id: match.venueOrderId },
        "pending live order found at the venue",
      );
      if (match.status === "open" || match.status === "pending") {
        if (match.filledSize > 0) {
          const fills = await this.#fillsOf(venue, credentials, linked, match.venueOrderId);
          summary.fills += await this.#applyFillsTo(linked, fills, "maker");
        }
      } else {
        await this.#reconcileClosed(linked, venue, credentials, summary);
      }
      return;
    }
    if (clock.now() - Date.parse(order.created_at) < this.#pendingGraceMs) return;
    const cancelled = await db
      .transaction()
      .execute((trx) => cancelOrderRow(trx, { outbox, nowIso: isoNow(clock) }, order, "venue"));
    if (cancelled) {
      summary.cancelled++;
      this.deps.log.warn(
        { order_id: order.id, venue: venue.id, market_id: order.market_id },
        "pending live order not found at the venue after the grace period; cancelled here",
      );
    }
  }

  // --- balance -----------------------------------------------------------------------------------

  /**
   * Live cash: `available` is the sum of what each linked venue reports, `locked` what the account's
   * open and pending live buy orders hold back by crossbook's reckoning. A venue that cannot be
   * asked makes the whole answer a 503: a partial sum would look like lost money.
   */
  async balance(owner: Owner): Promise<{ available: number; locked: number }> {
    const rows = await this.deps.credentials.list(owner);
    const amounts = await Promise.all(
      rows.map(async (row) => {
        const venue = tradingVenueOf(this.deps.venues, row.venue as VenueId);
        if (!venue) return 0;
        let credentials: VenueCredentials;
        try {
          credentials = this.deps.credentials.open(row);
        } catch {
          throw unreadableCredentials(row.venue);
        }
        try {
          const balance = await venue.getBalance(credentials);
          // Polymarket reports the wallet's whole collateral: cash our open buys hold back is still
          // in it (the CLOB only checks it when matching). Kalshi's balance already excludes it.
          if (venue.id !== "polymarket") return balance;
          const held = await repo.liveLocked(this.deps.db, owner.accountId, "polymarket");
          return Math.max(0, balance - held);
        } catch (error) {
          this.#warn(
            error,
            { account_id: owner.accountId, venue: venue.id },
            "could not read a venue balance",
          );
          throw mapVenueError(error);
        }
      }),
    );
    const available = amounts.reduce((sum, amount) => sum + amount, 0);
    return { available, locked: await repo.liveLocked(this.deps.db, owner.accountId) };
  }

  // --- helpers -----------------------------------------------------------------------------------

  /**
   * What the venue holds of a sell's outcome, read only when the sell asks for more than crossbook's
   * own free contracts (undefined otherwise, or without a holdings service). A venue whose positions
   * cannot be read is a 503: the sell cannot be checked.
   */
  async #venueHolding(owner: Owner, market: TradableMarket, order: OrderRow): Promise<number | undefined> {
    const holdings = this.deps.holdings;
    if (!holdings) return undefined;
    const own = await findPositionByKey(this.deps.db, owner, market.id, order.outcome);
    if (own && own.size - own.reserved >= order.amount) return undefined;
    return (await holdings.holding(owner, market.venue, market.id, order.outcome as Outcome)).size;
  }

  /** crossbook's live holdings at a venue changed: the venue's kept answer for the account is stale. */
  #holdingsChanged(accountId: string, venue: string): void {
    this.deps.holdings?.invalidate(accountId, venue as VenueId);
  }

  #tradingVenue(id: VenueId): TradingVenue {
    const venue = tradingVenueOf(this.deps.venues, id);
    if (!venue)
      throw new AppError("VENUE_UNAVAILABLE", `${id} is not enabled on this server`, {
        venue: id,
        reason: "disabled",
      });
    if (!venue.capabilities.supports.trading)
      throw new AppError("UNSUPPORTED_ORDER_TYPE", `${id} does not take orders through crossbook`, {
        venue: id,
      });
    return venue;
  }

  async #credentialsFor(accountId: string, venue: VenueId): Promise<VenueCredentials> {
    let credentials: VenueCredentials | undefined;
    try {
      credentials = await this.deps.credentials.credentialsFor(accountId, venue);
    } catch (error) {
      this.deps.log.error(
        { account_id: accountId, venue, error: (error as Error).message },
        "linked venue credentials could not be opened",
      );
      throw unreadableCredentials(venue);
    }
    if (!credentials)
      throw new AppError(
        "VENUE_NOT_LINKED",
        `Link a ${venue} account (POST /v1/venue-credentials) before trading live on ${venue}`,
        { venue },
      );
    return credentials;
  }

  /** The venue's fills of one order (since shortly before it was created here). */
  async #fillsOf(
    venue: TradingVenue,
    credentials: VenueCredentials,
    order: OrderRow,
    venueOrderId: string,
  ): Promise<VenueFill[]> {
    const since = isoFromMs(Date.parse(order.created_at) - FILL_LOOKBACK_MS);
    const fills = await venue.listFills(credentials, { marketId: order.market_id, since });
    return fills.filter((f) => f.venueOrderId === venueOrderId);
  }

  /** Applies venue fills to an order in one transaction, on its current state; returns how many. */
  async #applyFillsTo(order: OrderRow, fills: VenueFill[], liquidity: Liquidity): Promise<number> {
    if (fills.length === 0) return 0;
    const { db, outbox, clock } = this.deps;
    const market = await tradableMarket(db, order.market_id);
    const applied = await db.transaction().execute(async (trx) => {
      const fresh = await repo.orderById(trx, order.id);
      if (!fresh) return 0;
      const ctx = { outbox, nowIso: isoNow(clock), title: market?.title ?? order.market_id };
      const { applied } = await applyVenueFills(
        trx,
        ctx,
        fresh,
        fills,
        liquidity,
        market ?? { venue: fresh.venue, fees: null },
      );
      return applied;
    });
    if (applied > 0) this.#holdingsChanged(order.account_id, order.venue);
    return applied;
  }

  #warn(error: unknown, fields: Record<string, unknown>, msg: string): void {
    const described = isVenueError(error)
      ? { kind: error.kind, error: error.message }
      : { error: error instanceof Error ? error.message : String(error) };
    this.deps.log.warn({ ...fields, ...described }, msg);
  }
}

// --- pure pieces -----------------------------------------------------------------------------------

/**
 * A venue fill as bookkeeping takes it, in the order's own outcome. Its fee is what the venue
 * charged where its record says (Kalshi `fee_cost`); otherwise (Polymarket trades carry no fee
 * amount) the market's schedule prices it, as the sandbox would. Taker or maker is the venue's word
 * where it gives one, else `liquidity` (how the fill was found).
 */
export function fillInput(order: OrderRow, fill: VenueFill, liquidity: Liquidity, fees: FeeModel): FillInput {
  // A venue that reports the other leg (buy YES at p is sell NO at 1 − p) is turned round.
  const price = fill.outcome === order.outcome ? fill.price : MICROS - fill.price;
  const taken = fill.liquidity ?? liquidity;
  const base = {
    price,
    size: fill.size,
    liquidity: taken,
    cause: { kind: "venue_fill" as const, venue_fill_id: fill.venueFillId },
    causeKey: `venue_fill:${fill.venueFillId}`,
  };
  if (fill.fee !== null) return { ...base, fee: fill.fee };
  const size = Math.min(fill.size, order.amount - order.filled_amount);
  const side = order.side as "buy" | "sell";
  const charged = fillFee(fees, { price, size, side, liquidity: taken }, order.fee_carry);
  return { ...base, fee: charged.fee, carry: charged.carry };
}

async function applyVenueFills(
  trx: DbOrTrx,
  ctx: Bookkeeping,
  order: OrderRow,
  fills: VenueFill[],
  liquidity: Liquidity,
  market: { venue: string; fees: FeeSchedule | null },
): Promise<{ row: OrderRow; applied: number }> {
  const fees = feeModelOf(market);
  const ordered = [...fills].sort(
    (a, b) => a.timestamp.localeCompare(b.timestamp) || a.venueFillId.localeCompare(b.venueFillId),
  );
  let row = order;
  let applied = 0;
  for (const fill of ordered) {
    if (!repo.CANCELLABLE.has(row.status)) break;
    const next = await applyFill(trx, ctx, row, fillInput(row, fill, liquidity, fees), fees);
    if (next) {
      row = next;
      applied++;
    }
  }
  return { row, applied };
}

/**
 * The venue placed a buy for fewer contracts than asked (its amount precision, e.g. Polymarket
 * FAK/FOK): the order becomes what was placed, with what was asked and why on record, and holds
 * back only what the smaller order can cost. (No adapter places a smaller sell: its contracts stay
 * reserved for the amount asked.)
 */
function sizeAdjusted(order: OrderRow, placed: VenueOrder, market: TradableMarket): Partial<OrderRow> {
  const adjustment = placed.sizeAdjustment;
  if (!adjustment || order.side !== "buy" || placed.size <= 0 || placed.size >= order.amount) return {};
  return {
    amount: placed.size,
    requested_amount: order.amount,
    amount_note: adjustment.reason,
    locked: buyLock(feeModelOf(market), order.price, placed.size),
  };
}

/**
 * A sell draws on contracts the venue holds beyond crossbook's record (bought outside crossbook):
 * that excess is taken into the account's position at unknown cost (`unknown_cost_size`), so the
 * sell reserves and reduces a position as any other. On a netting venue (Kalshi) crossbook's
 * holding is its contracts of the outcome minus those of the other one. Returns the position
 * (unchanged when the venue holds nothing more); a new one keeps the id the venue-held position
 * showed under.
 */
async function adoptVenueExcess(
  trx: DbOrTrx,
  owner: Owner,
  market: TradableMarket,
  outcome: string,
  held: PositionRow | undefined,
  venueSize: number,
  nowIso: string,
): Promise<PositionRow | undefined> {
  const other = NETTING_VENUES.has(market.venue)
    ? await findPositionByKey(trx, owner, market.id, outcome === "yes" ? "no" : "yes")
    : undefined;
  const excess = venueSize - nettedSize(market.venue, held?.size ?? 0, other?.size ?? 0);
  if (excess <= 0) return held;
  return adoptIntoPosition(
    trx,
    owner,
    {
      newId: venuePositionId(owner.accountId, market.id, outcome),
      marketId: market.id,
      outcome,
      size: excess,
    },
    nowIso,
  );
}

/** The venue already closed the order (an IOC remainder, say) and every fill it reports is applied. */
async function closeIfVenueClosed(
  trx: DbOrTrx,
  ctx: Bookkeeping,
  row: OrderRow,
  atVenue: VenueOrder,
): Promise<OrderRow> {
  if (atVenue.status !== "cancelled" || !repo.CANCELLABLE.has(row.status)) return row;
  if (row.filled_amount < atVenue.filledSize) return row; // fills still to come: the poller
  const reason =
    row.time_in_force === "IOC" ? "unfilled_ioc" : row.time_in_force === "FOK" ? "unfilled_fok" : "venue";
  return (await cancelOrderRow(trx, ctx, row, reason)) ?? row;
}

function unfilledReason(order: OrderRow): string {
  return order.time_in_force === "FOK" ? "unfilled_fok" : "unfilled_ioc";
}

/** Why the venue closed an order it no longer lists: its GTD time ran out, or the venue's doing. */
function closedReason(order: OrderRow, clock: Clock): string {
  if (order.time_in_force === "IOC") return "unfilled_ioc";
  if (order.time_in_force === "FOK") return "unfilled_fok";
  if (order.expires_at && Date.parse(order.expires_at) <= clock.now()) return "expired";
  return "venue";
}

/** Where the venue may look for an order it no longer lists with the live ones (archived ones). */
function venueHint(order: OrderRow): { marketId: string; since: string } {
  return { marketId: order.market_id, since: order.created_at };
}

/**
 * The venue's order is ours by market, direction, price and size. Direction is compared on the
 * YES book: buy YES at p and sell NO at 1 − p are one order there (as are sell YES and buy NO),
 * and a venue with one book (Kalshi) reports it only one way.
 */
export function sameShape(
  atVenue: Pick<VenueOrder, "marketId" | "outcome" | "side" | "price" | "size">,
  order: Pick<OrderRow, "market_id" | "outcome" | "side" | "price" | "amount">,
): boolean {
  const yesBook = (o: { outcome: string; side: string; price: number }) => ({
    buysYes: (o.outcome === "yes") === (o.side === "buy"),
    yesPrice: o.outcome === "yes" ? o.price : MICROS - o.price,
  });
  const a = yesBook(atVenue);
  const b = yesBook(order);
  return (
    atVenue.marketId === order.market_id &&
    a.buysYes === b.buysYes &&
    a.yesPrice === b.yesPrice &&
    atVenue.size === order.amount
  );
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

function notCancellable(order: OrderRow): AppError {
  return new AppError("ORDER_NOT_CANCELLABLE", `Order ${order.id} is ${order.status}`, {
    order_id: order.id,
    status: order.status,
  });
}

function unreadableCredentials(venue: string): AppError {
  return new AppError(
    "VENUE_NOT_LINKED",
    `The linked ${venue} credentials cannot be read on this server any more; link ${venue} again`,
    { venue, reason: "unreadable" },
  );
}

/** The venue said no: 422 with its reason (credentials it refused included; never a 5xx). */
function rejection(error: VenueError, orderId?: string): AppError {
  const ids = orderId ? { order_id: orderId } : {};
  if (error.kind === "auth_failed")
    return new AppError(
      "VENUE_REJECTED",
      `${error.venue} rejected the linked credentials; check them at ${error.venue} and link them again`,
      { venue: error.venue, reason: "venue rejected the linked credentials", ...ids },
    );
  const reason = error.details.venueMessage ?? error.message;
  return new AppError("VENUE_REJECTED", `${error.venue} rejected the order: ${reason}`, {
    venue: error.venue,
    reason,
    ...(error.details.venueCode ? { venue_code: error.details.venueCode } : {}),
    ...ids,
  });
}

function unavailable(error: VenueError, details: Record<string, unknown> = {}): AppError {
  const appError = new AppError(
    "VENUE_UNAVAILABLE",
    `${error.venue} could not be reached (${error.kind}); try again shortly`,
    {
      venue: error.venue,
      reason: error.kind,
      ...details,
    },
  );
  if (error.retryAfterMs !== undefined)
    appError.withHeaders({ "Retry-After": String(Math.ceil(error.retryAfterMs / 1000)) });
  return appError;
}

/** Any failed venue call outside placement: a refusal is 422, the rest 503. */
function mapVenueError(error: unknown, orderId?: string): AppError {
  if (error instanceof AppError) return error;
  if (!isVenueError(error)) {
    return new AppError("VENUE_UNAVAILABLE", "The venue's answer could not be used; try again shortly", {
      ...(orderId ? { order_id: orderId } : {}),
      reason: "unknown",
    });
  }
  if (error.kind === "rejected" || error.kind === "not_found" || error.kind === "auth_failed")
    return rejection(error, orderId);
  return unavailable(error, orderId ? { order_id: orderId } : {});
}
