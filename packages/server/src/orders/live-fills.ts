/**
 * What live routing's two halves share: reading an order's fills back from the venue and applying
 * them to the ledger, and what a venue's closing of an order means here. The request path
 * (live.ts) does it for a placement's immediate fills and for a cancel that finds the order already
 * gone; the poller (live-poller.ts) for everything the venue does later. Kept apart from both so
 * they apply fills one way and the poller needs nothing from the request path.
 *
 * Each venue fill is applied at most once per order: its cause key is `venue_fill:<id>`, so
 * re-reading a fill (both halves may, and fill queries overlap on purpose) changes nothing.
 */
import { type FeeSchedule, fillFee } from "@crossbook/fees";
import type { Outbox } from "../events/outbox";
import { type Clock, isoFromMs, isoNow } from "../infra/clock";
import type { Db, DbOrTrx } from "../infra/db/store";
import { applyFill, type Bookkeeping, type FillInput, feeModelOf } from "../ledger/bookkeeping";
import type { FeeModel } from "../ledger/money";
import type { OrderRow } from "../ledger/orders-repo";
import * as repo from "../ledger/orders-repo";
import type { VenueHoldings } from "../portfolio/holdings";
import { MICROS } from "../venues/decimal";
import type { VenueId } from "../venues/model";
import type { TradingVenue, VenueCredentials, VenueFill } from "../venues/venue";
import { tradableMarket } from "./markets";

/** What applying venue fills needs: the store, events, time, and the venue holdings to refresh. */
export interface FillDeps {
  db: Db;
  outbox: Outbox;
  clock: Clock;
  /** crossbook's own live fills make the venue answer kept for the account stale. */
  holdings?: Pick<VenueHoldings, "invalidate">;
}

export type Liquidity = FillInput["liquidity"];

/**
 * Fill queries start this long before the time they need: venue timestamps are in whole seconds,
 * some venues filter with a strict `>`, and clocks differ a little. Re-reading a fill is harmless.
 */
export const FILL_LOOKBACK_MS = 60_000;

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

/**
 * Applies venue fills to an order inside `trx`, oldest first, until it is no longer open; returns
 * the order as it ends up and how many fills were new.
 */
export async function applyVenueFills(
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

/** Applies venue fills to an order in one transaction, on its current state; returns how many. */
export async function applyFillsTo(
  deps: FillDeps,
  order: OrderRow,
  fills: VenueFill[],
  liquidity: Liquidity,
): Promise<number> {
  if (fills.length === 0) return 0;
  const { db, outbox, clock } = deps;
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
  if (applied > 0) deps.holdings?.invalidate(order.account_id, order.venue as VenueId);
  return applied;
}

/** The venue's fills of one order (since shortly before it was created here). */
export async function fillsOf(
  venue: TradingVenue,
  credentials: VenueCredentials,
  order: OrderRow,
  venueOrderId: string,
): Promise<VenueFill[]> {
  const since = isoFromMs(Date.parse(order.created_at) - FILL_LOOKBACK_MS);
  const fills = await venue.listFills(credentials, { marketId: order.market_id, since });
  return fills.filter((f) => f.venueOrderId === venueOrderId);
}

/** Why the venue closed an order it no longer lists: its GTD time ran out, or the venue's doing. */
export function closedReason(order: OrderRow, clock: Clock): string {
  if (order.time_in_force === "IOC") return "unfilled_ioc";
  if (order.time_in_force === "FOK") return "unfilled_fok";
  if (order.expires_at && Date.parse(order.expires_at) <= clock.now()) return "expired";
  return "venue";
}

/** Where the venue may look for an order it no longer lists with the live ones (archived ones). */
export function venueHint(order: OrderRow): { marketId: string; since: string } {
  return { marketId: order.market_id, since: order.created_at };
}
