/**
 * Live routing's request path: a live key's orders go to the venue through the account's own
 * linked credentials (credentials/), placed and cancelled on the caller's request, and what the
 * venue answers comes back through the same bookkeeping the sandbox uses (bookkeeping.ts), so a
 * live fill moves the order, the position and the events exactly as a simulated one does. What the
 * venue does to an order afterwards reaches the ledger through the poller (live-poller.ts), which
 * `VenueRouter` runs (`start`, `stop`, `pollOnce`) so the app wires one object.
 *
 * Placement is two transactions around one venue call. The first inserts the order `pending` (and
 * claims the idempotency key, via the service's `within`), so the order exists before any money can
 * move at the venue; the venue call carries our order id as its client order id; the second stores
 * the venue's order id (`pending` -> `open`) and applies the fills the venue already reports. What
 * the venue answered decides the rest:
 *   - a rejection (bad order, no funds, closed market, refused credentials): nothing was placed, so
 *     the order is cancelled here (reason `venue`) and the caller gets 422 VENUE_REJECTED;
 *   - no answer (down, timeout, garbage): the venue may or may not have the order, so it stays
 *     `pending` and the caller gets 503 VENUE_UNAVAILABLE; the poller then finds it at the venue and
 *     links it, or cancels it here after its grace period without a trace of it.
 *
 * Live cash lives at the venue: no live `balances` row is created or moved here (bookkeeping's
 * balance updates match nothing for live owners); each venue's execution (`at`) asks the venue. A live sell
 * is covered by the account's position, which it reserves as the sandbox does, because a fill of it
 * has to reduce a position. When it asks for more than crossbook's own free contracts, what the venue
 * holds beyond crossbook's record (bought outside crossbook) is taken into the position first, at
 * unknown cost (`adoptVenueExcess`, portfolio/holdings.ts).
 *
 * Nothing here logs or returns a credential: logs carry account, order and venue ids and the venue's
 * error only (a VenueError holds its kind, status and the venue's message, never a request).
 */
import type { CredentialsService } from "../credentials/service";
import type { Outbox } from "../events/outbox";
import { AppError } from "../http/errors";
import { type Clock, isoNow } from "../infra/clock";
import type { Db, DbOrTrx } from "../infra/db/store";
import type { Logger } from "../infra/log";
import { type Bookkeeping, cancelOrderRow, feeModelOf, openPendingOrder } from "../ledger/bookkeeping";
import { buyLock } from "../ledger/money";
import type { OrderRow, Owner } from "../ledger/orders-repo";
import * as repo from "../ledger/orders-repo";
import { adoptIntoPosition, findPositionByKey, type PositionRow } from "../ledger/positions-repo";
import { NETTING_VENUES, nettedSize, type VenueHoldings, venuePositionId } from "../portfolio/holdings";
import { MICROS } from "../venues/decimal";
import { isVenueError } from "../venues/errors";
import type { OrderBook, Outcome, VenueId } from "../venues/model";
import {
  type MarketDataVenue,
  type TradingVenue,
  tradingVenueOf,
  type VenueCredentials,
  type VenueFill,
  type VenueOrder,
} from "../venues/venue";
import { type Cash, type Execution, marketOrderBound, type PlacementHooks } from "./execution";
import {
  mapVenueError,
  notCancellable,
  outcomeUnknown,
  rejection,
  unavailable,
  unreadableCredentials,
} from "./live-errors";
import { applyFillsTo, applyVenueFills, closedReason, fillsOf, venueHint } from "./live-fills";
import { LiveOrderPoller, type LivePollerOptions, type PollSummary } from "./live-poller";
import type { TradableMarket } from "./markets";

export interface VenueRouterDeps {
  db: Db;
  outbox: Outbox;
  clock: Clock;
  venues: ReadonlyMap<VenueId, MarketDataVenue>;
  credentials: Pick<CredentialsService, "credentialsFor" | "list" | "open">;
  log: Logger;
  /**
   * What linked venue accounts hold (portfolio/holdings.ts): a sell may draw on contracts held at the
   * venue outside crossbook, and crossbook's own fills drop the venue answer kept for the account.
   */
  holdings?: Pick<VenueHoldings, "read" | "holding" | "invalidate">;
  /** A market's current book (the prices service), for a market order's bound. */
  book: (market: TradableMarket) => Promise<OrderBook | null>;
}

export class VenueRouter {
  readonly #poller: LiveOrderPoller;

  constructor(
    private readonly deps: VenueRouterDeps,
    options: LivePollerOptions = {},
  ) {
    this.#poller = new LiveOrderPoller(deps, options);
  }

  // --- the poller (live-poller.ts) ---------------------------------------------------------------

  /** Polls the venues every `pollIntervalMs` from now on. */
  start(): void {
    this.#poller.start();
  }

  /** Stops polling; resolves once a pass under way has finished. */
  stop(): Promise<void> {
    return this.#poller.stop();
  }

  /** One pass over every account and venue with open live orders. Concurrent calls share a pass. */
  pollOnce(): Promise<PollSummary> {
    return this.#poller.pollOnce();
  }

  // --- placing -----------------------------------------------------------------------------------

  async place(
    owner: Owner,
    draft: OrderRow,
    market: TradableMarket,
    hooks: PlacementHooks,
  ): Promise<OrderRow> {
    const { db, outbox, clock } = this.deps;
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
      let held: PositionRow | undefined;
      if (row.side === "buy") {
        row.locked = buyLock(fees, row.price, row.amount);
      } else {
        held = await findPositionByKey(trx, owner, market.id, row.outcome);
        if (venueHeld !== undefined && (!held || held.size - held.reserved < row.amount)) {
          held = await adoptVenueExcess(trx, owner, market, row.outcome, held, venueHeld, nowIso);
        }
      }
      // A market order with nothing on the side it takes (the service found no bound): accepted and
      // cancelled unfilled, as in the sandbox, without troubling the venue.
      const unfilled = row.type === "market" && row.price === 0 ? unfilledReason(row) : null;
      const stored = await openPendingOrder(trx, { outbox, nowIso }, row, held, unfilled);
      if (!stored)
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
      await hooks.stored(trx, stored);
      return stored;
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
        fills = await fillsOf(venue, credentials, order, placed.venueOrderId);
      } catch (error) {
        // The poller applies them; the order is acknowledged either way.
        this.deps.log.warn(
          { err: error, order_id: order.id, venue: venue.id },
          "could not read the fills of a new order",
        );
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
    this.deps.log.warn(
      { err: error, order_id: order.id, venue },
      "live order outcome unknown; left pending for reconciliation",
    );
    return outcomeUnknown(venue, order.id, error);
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
      if (fills.length > 0) this.deps.holdings?.invalidate(order.account_id, order.venue as VenueId);
    } catch (error) {
      // A fill that does not apply must not cost the venue id: store the link alone, the poller
      // applies the fills.
      this.deps.log.warn(
        { err: error, order_id: order.id, venue: venue.id },
        "could not apply a new order's fills",
      );
      await repo.updateOrderIf(db, order, linked);
      return (await repo.orderById(db, order.id)) ?? linked;
    }
    if (result) return result;

    // The order changed while the venue call was in flight. The poller may have found it at the
    // venue and linked it first: then only the fills known here are left to apply.
    const fresh = await repo.orderById(db, order.id);
    if (fresh?.venue_order_id === placed.venueOrderId) {
      if (repo.CANCELLABLE.has(fresh.status)) await applyFillsTo(this.deps, fresh, fills, "taker");
      return (await repo.orderById(db, order.id)) ?? fresh;
    }
    if (fresh && fresh.status !== "cancelled") return fresh;
    // Cancelled here meanwhile (a cancel of a pending order is local): keep the venue's id on
    // record and take the order off the venue too.
    await repo.setVenueOrderId(db, order.id, placed.venueOrderId);
    try {
      await venue.cancelOrder(credentials, placed.venueOrderId);
    } catch (error) {
      this.deps.log.warn(
        { err: error, order_id: order.id, venue: venue.id, venue_order_id: placed.venueOrderId },
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
      const fills = await fillsOf(venue, credentials, order, order.venue_order_id).catch((error) => {
        throw mapVenueError(error, order.id);
      });
      await applyFillsTo(this.deps, order, fills, "maker");
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

  // --- what the account has at a venue -------------------------------------------------------

  /** The execution of one venue: its orders go through this router, its cash and holdings are that venue's. */
  at(venue: VenueId): Execution {
    return {
      place: (owner, draft, market, hooks) => this.place(owner, draft, market, hooks),
      cancel: (owner, order, reason) => this.cancel(owner, order, reason),
      read: (owner, order) => this.#read(owner, order),
      fills: async (owner, order) => repo.fillsOf(this.deps.db, (await this.#read(owner, order)).id),
      balance: (owner) => this.#balanceAt(owner, venue),
      positions: async (owner) =>
        ((await this.deps.holdings?.read(owner)) ?? []).filter((snapshot) => snapshot.venue === venue),
    };
  }

  /**
   * An order brought up to date with its venue now (live-poller.ts `reconcile`), as the ledger then
   * has it. Costs one or two venue reads; an order no longer open is not asked about. A venue that
   * cannot be asked is a 503 (422 when it refuses the credentials), and nothing changes.
   */
  async #read(owner: Owner, order: OrderRow): Promise<OrderRow> {
    if (repo.CANCELLABLE.has(order.status)) {
      const credentials = await this.#credentialsFor(owner.accountId, order.venue as VenueId);
      try {
        await this.#poller.reconcile(order, credentials);
      } catch (error) {
        if (!isVenueError(error)) throw error;
        this.deps.log.warn(
          { err: error, order_id: order.id, venue: order.venue },
          "could not read a live order at its venue",
        );
        throw mapVenueError(error, order.id);
      }
    }
    return (await repo.findOrder(this.deps.db, owner, order.id)) ?? order;
  }

  /**
   * Live cash at one venue: `available` is what the linked account reports (0 when none is linked),
   * `locked` what the account's open and pending live buy orders there hold back by crossbook's
   * reckoning. A venue that cannot be asked is a 503: a partial answer would look like lost money.
   */
  async #balanceAt(owner: Owner, venueId: VenueId): Promise<Cash> {
    const [rows, held] = await Promise.all([
      this.deps.credentials.list(owner),
      repo.liveLocked(this.deps.db, owner.accountId, venueId),
    ]);
    const row = rows.find((r) => r.venue === venueId);
    const venue = tradingVenueOf(this.deps.venues, venueId);
    if (!row || !venue) return { available: 0, locked: held };
    let credentials: VenueCredentials;
    try {
      credentials = this.deps.credentials.open(row);
    } catch {
      throw unreadableCredentials(row.venue);
    }
    let available: number;
    try {
      available = await venue.getBalance(credentials);
    } catch (error) {
      this.deps.log.warn(
        { err: error, account_id: owner.accountId, venue: venue.id },
        "could not read a venue balance",
      );
      throw mapVenueError(error);
    }
    // Polymarket reports the wallet's whole collateral: cash our open buys hold back is still in it
    // (the CLOB only checks it when matching). Kalshi's balance already excludes it.
    if (venue.id === "polymarket") available = Math.max(0, available - held);
    return { available, locked: held };
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
        { err: error, account_id: accountId, venue },
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
}

// --- pure pieces -----------------------------------------------------------------------------------

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
