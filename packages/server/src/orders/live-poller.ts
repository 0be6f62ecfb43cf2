/**
 * The live order poller: what a venue does to a live order after its placement (fills it, cancels
 * or expires it, or turns out to have it after all) reaches crossbook's ledger from here. Polling
 * rather than the venues' private feeds keeps one code path for both venues and survives restarts;
 * a feed can later just call `pollOnce` sooner.
 *
 * Each pass (`pollOnce`, every `pollIntervalMs` once started) visits every account and venue with
 * open live orders: the venue's fills since the oldest such order (or since the newest fill already
 * seen) are applied (live-fills.ts: each at most once per order); orders the venue no longer lists
 * as open are read one by one to apply their last fills and cancel them here when the venue
 * cancelled or expired them; and `pending` orders whose placement got no answer are looked for at
 * the venue (by client order id, or by their exact shape where the venue does not echo ids) and
 * linked, or cancelled here after `pendingGraceMs` without a trace of them.
 *
 * It runs beside the request path (live.ts) on the same rows; both write only through fenced
 * bookkeeping, so whichever gets to an order first wins and the other sees the new state.
 */
import type { CredentialsService } from "../credentials/service";
import { isoFromMs, isoNow } from "../infra/clock";
import type { Logger } from "../infra/log";
import { cancelOrderRow } from "../ledger/bookkeeping";
import type { OrderRow } from "../ledger/orders-repo";
import * as repo from "../ledger/orders-repo";
import { MICROS } from "../venues/decimal";
import { isVenueError } from "../venues/errors";
import type { VenueId } from "../venues/model";
import {
  type MarketDataVenue,
  type TradingVenue,
  tradingVenueOf,
  type VenueCredentials,
  type VenueOrder,
} from "../venues/venue";
import {
  applyFillsTo,
  closedReason,
  FILL_LOOKBACK_MS,
  type FillDeps,
  fillsOf,
  venueHint,
} from "./live-fills";

export interface LivePollerDeps extends FillDeps {
  venues: ReadonlyMap<VenueId, MarketDataVenue>;
  credentials: Pick<CredentialsService, "credentialsFor">;
  log: Logger;
}

export interface LivePollerOptions {
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

export class LiveOrderPoller {
  readonly #pollIntervalMs: number;
  readonly #pendingGraceMs: number;
  #timer: NodeJS.Timeout | null = null;
  #polling: Promise<PollSummary> | null = null;
  /** Newest venue fill time seen per account and venue: later polls ask only for what follows. */
  readonly #highWater = new Map<string, number>();

  constructor(
    private readonly deps: LivePollerDeps,
    options: LivePollerOptions = {},
  ) {
    this.#pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.#pendingGraceMs = options.pendingGraceMs ?? DEFAULT_PENDING_GRACE_MS;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      this.pollOnce().catch((error) => this.deps.log.warn({ err: error }, "live order poll failed"));
    }, this.#pollIntervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#polling?.catch(() => {});
  }

  /**
   * One order brought up to date with its venue now, by the same rules as a pass: an acknowledged
   * order's new fills are applied (and it is closed here if the venue closed it), a pending one is
   * looked for. A venue that cannot be asked throws its VenueError; the ledger is then unchanged.
   */
  async reconcile(order: OrderRow, credentials: VenueCredentials): Promise<PollSummary> {
    const summary: PollSummary = { visited: 1, fills: 0, linked: 0, cancelled: 0, errors: 0 };
    const venue = tradingVenueOf(this.deps.venues, order.venue as VenueId);
    if (!venue?.capabilities.supports.trading || !repo.CANCELLABLE.has(order.status)) return summary;
    if (order.venue_order_id) {
      let atVenue: VenueOrder | undefined;
      try {
        atVenue = await venue.getOrder(credentials, order.venue_order_id, venueHint(order));
      } catch (error) {
        if (!(isVenueError(error) && error.kind === "not_found")) throw error;
      }
      if (atVenue && (atVenue.status === "open" || atVenue.status === "pending")) {
        if (atVenue.filledSize > order.filled_amount) {
          const fills = await fillsOf(venue, credentials, order, order.venue_order_id);
          summary.fills += await applyFillsTo(this.deps, order, fills, "maker");
        }
      } else {
        await this.#reconcileClosed(order, venue, credentials, summary, { atVenue });
      }
      return summary;
    }
    const [open, others] = await Promise.all([
      venue.listOrders(credentials, { openOnly: true }),
      repo.openLiveOrders(this.deps.db, order.account_id, venue.id),
    ]);
    const known = new Set(others.map((o) => o.venue_order_id).filter((id): id is string => id !== null));
    await this.#reconcilePending(order, venue, credentials, open, known, summary);
    return summary;
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
        this.deps.log.warn(
          { err: error, account_id: group.account_id, venue: group.venue },
          "could not poll live orders",
        );
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
          summary.fills += await applyFillsTo(this.deps, order, mine, "maker");
        } catch (error) {
          complete = false;
          summary.errors++;
          this.deps.log.warn(
            { err: error, order_id: order.id, venue: venueId },
            "could not apply live fills",
          );
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
        this.deps.log.warn(
          { err: error, order_id: order.id, venue: venueId },
          "could not reconcile a live order",
        );
      }
    }
  }

  /** An acknowledged order missing from the venue's open list: catch up on fills, then close it. */
  async #reconcileClosed(
    order: OrderRow,
    venue: TradingVenue,
    credentials: VenueCredentials,
    summary: PollSummary,
    /** What the venue said of the order when the caller has asked already (undefined: not found). */
    read?: { atVenue: VenueOrder | undefined },
  ): Promise<void> {
    let atVenue = read?.atVenue;
    if (!read) {
      try {
        atVenue = await venue.getOrder(credentials, order.venue_order_id!, venueHint(order));
      } catch (error) {
        if (!(isVenueError(error) && error.kind === "not_found")) throw error;
      }
    }
    if (atVenue && (atVenue.status === "open" || atVenue.status === "pending")) return; // list lag
    if (atVenue && atVenue.filledSize > order.filled_amount) {
      const fills = await fillsOf(venue, credentials, order, order.venue_order_id!);
      summary.fills += await applyFillsTo(this.deps, order, fills, "maker");
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
          const fills = await fillsOf(venue, credentials, linked, match.venueOrderId);
          summary.fills += await applyFillsTo(this.deps, linked, fills, "maker");
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
