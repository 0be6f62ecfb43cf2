/**
 * The portfolio as a user reads it: positions marked to the current quote (a NO position at
 * 1 − the YES price, never at the YES price) and the balance of the key's environment.
 *
 * Cash and venue holdings come from the executions of the key's environment (orders/execution.ts):
 * the sandbox's fake USDC, or what each linked venue reports. A live key also sees what its linked
 * venue accounts hold (holdings.ts): each open crossbook
 * position carries the venue's size for it (`reconciliation`: match, or a mismatch that is logged
 * and counted, never written over), and what the venue holds where crossbook holds nothing is listed
 * after crossbook's own positions as `source: "venue"`, at unknown cost. A venue that cannot be read
 * leaves crossbook's positions as they are, marked `unavailable`.
 */
import { AppError } from "../http/errors";
import type { Db } from "../infra/db/store";
import type { Owner } from "../ledger/orders-repo";
import {
  costBasisTotal,
  findBalance,
  findPosition,
  listPositions,
  type PositionFilter,
  type PositionKey,
  type PositionRow,
  positionsOnMarkets,
  unknownCostPosition,
} from "../ledger/positions-repo";
import type { Execution, Executions } from "../orders/execution";
import { MICROS } from "../venues/decimal";
import type { VenueId } from "../venues/model";
import {
  NETTING_VENUES,
  nettedSize,
  type VenueHolding,
  type VenueHoldings,
  type VenueSnapshot,
  venuePositionId,
} from "./holdings";

/** The current YES price of a market in micro-units, or null when nothing is known. */
export type YesMark = (marketId: string) => number | null;

/** Markets' titles by id, unknown ids absent (the catalog's, handed in: portfolio does not read it). */
export type MarketTitles = (ids: readonly string[]) => Promise<ReadonlyMap<string, string>>;

export interface Reconciliation {
  /**
   * match / mismatch: crossbook's size against the venue's; venue_only: a venue-held position;
   * unavailable: the venue could not be read; not_linked: no linked account for the venue.
   */
  status: "match" | "mismatch" | "venue_only" | "unavailable" | "not_linked";
  venueSize: number | null;
  venueAveragePrice: number | null;
  checkedAt: string | null;
}

export interface MarkedPosition {
  row: PositionRow;
  /** crossbook: a position crossbook keeps; venue: held at the venue, not (yet) in crossbook. */
  source: "crossbook" | "venue";
  /** Mark of the position's own outcome (NO = 1 − YES), micro-units; null without a quote. */
  mark: number | null;
  marketValue: number | null;
  /** Over the contracts of known cost; null when none has a known cost. */
  unrealizedPnl: number | null;
  /** Live open positions only: how the venue's holding compares. */
  reconciliation: Reconciliation | null;
}

/** How each linked venue's positions were read for a live list (`meta.venues`). */
export interface VenueReadView {
  venue: VenueId;
  status: "ok" | "unavailable";
  reason: string | null;
  checkedAt: string | null;
}

export interface BalanceView {
  environment: Owner["environment"];
  currency: string;
  available: number;
  locked: number;
  positionsCost: number;
  total: number;
  deposits: number;
  withdrawals: number;
  fees: number;
  realizedPnl: number;
  updatedAt: string | null;
}

export class PortfolioService {
  /**
   * @param executions where the cash and venue holdings of each environment are read
   * @param mismatches counts and logs differences between crossbook's positions and the venues'
   * @param titles names positions' markets in answers (none known without it)
   */
  constructor(
    private readonly db: Db,
    private readonly executions: Executions,
    private readonly yesMark: YesMark,
    private readonly mismatches?: Pick<VenueHoldings, "noteMismatch">,
    private readonly titles?: MarketTitles,
  ) {}

  /** The titles of these markets, in one lookup; unknown ids are absent. */
  async marketTitles(ids: readonly string[]): Promise<ReadonlyMap<string, string>> {
    return this.titles ? this.titles(ids) : new Map();
  }

  /** Every venue answer the executions of the owner's environment give (none for the sandbox). */
  async #venueSnapshots(owner: Owner): Promise<VenueSnapshot[]> {
    const answers = await Promise.all(executionsOf(this.executions, owner).map((e) => e.positions(owner)));
    return answers.flat();
  }

  mark(row: PositionRow, source: MarkedPosition["source"] = "crossbook"): MarkedPosition {
    if (row.status === "resolved" || row.size === 0) {
      return {
        row,
        source,
        mark: null,
        marketValue: row.status === "resolved" ? 0 : null,
        unrealizedPnl: row.size === 0 ? 0 : null,
        reconciliation: null,
      };
    }
    const yes = this.yesMark(row.market_id);
    if (yes === null)
      return { row, source, mark: null, marketValue: null, unrealizedPnl: null, reconciliation: null };
    const mark = row.outcome === "no" ? MICROS - yes : yes;
    const marketValue = Math.round((mark * row.size) / MICROS);
    // Contracts taken over from the venue have no known cost: PnL covers the others only.
    const known = row.size - row.unknown_cost_size;
    const unrealizedPnl =
      row.unknown_cost_size === 0
        ? marketValue - row.cost_basis
        : known > 0
          ? Math.round((mark * known) / MICROS) - row.cost_basis
          : null;
    return { row, source, mark, marketValue, unrealizedPnl, reconciliation: null };
  }

  /**
   * One page of the owner's positions: crossbook's own (newest first), then, for a live key, the
   * venue-held ones crossbook does not have (by market), which `total` counts too. `venues` says how
   * each linked venue was read (live keys only).
   */
  async list(
    owner: Owner,
    filter: PositionFilter,
    page: { limit: number; offset: number },
  ): Promise<{ positions: MarkedPosition[]; total: number; venues?: VenueReadView[] }> {
    if (owner.environment !== "live") {
      const { rows, total } = await listPositions(this.db, owner, filter, page);
      return { positions: rows.map((row) => this.mark(row)), total };
    }
    const [snapshots, { rows, total }] = await Promise.all([
      this.#venueSnapshots(owner),
      listPositions(this.db, owner, filter, page),
    ]);
    const status = filter.status ?? "open";
    const held = status === "open" || status === "all" ? heldAtVenues(snapshots, filter) : [];
    const keys = await positionsOnMarkets(this.db, owner, [
      ...held.map((h) => h.marketId),
      ...rows.filter((r) => isNetting(r.market_id)).map((r) => r.market_id),
    ]);
    const venueOnly = held.filter((h) => !keptByCrossbook(h, keys));
    const first = Math.max(0, page.offset - total);
    const room = page.limit - rows.length;
    const positions = [
      ...rows.map((row) => this.#reconciled(owner, row, snapshots, keys)),
      ...(room > 0 ? venueOnly.slice(first, first + room) : []).map((h) =>
        this.#venueHeld(owner, h, snapshots, keys),
      ),
    ];
    return { positions, total: total + venueOnly.length, venues: snapshots.map(readView) };
  }

  async get(owner: Owner, id: string): Promise<MarkedPosition> {
    const row = await findPosition(this.db, owner, id);
    if (owner.environment !== "live") {
      if (!row) throw new AppError("POSITION_NOT_FOUND", `No position ${id}`, { position_id: id });
      return this.mark(row);
    }
    const snapshots = await this.#venueSnapshots(owner);
    if (row) {
      const keys = isNetting(row.market_id) ? await positionsOnMarkets(this.db, owner, [row.market_id]) : [];
      return this.#reconciled(owner, row, snapshots, keys);
    }
    if (id.startsWith("vpos_")) {
      const held = heldAtVenues(snapshots, {});
      const keys = await positionsOnMarkets(
        this.db,
        owner,
        held.map((h) => h.marketId),
      );
      const found = held.find((h) => !keptByCrossbook(h, keys) && venueOnlyId(owner, h, keys) === id);
      if (found) return this.#venueHeld(owner, found, snapshots, keys);
    }
    throw new AppError("POSITION_NOT_FOUND", `No position ${id}`, { position_id: id });
  }

  /** A crossbook position with the venue's size beside it (open live positions only). */
  #reconciled(
    owner: Owner,
    row: PositionRow,
    snapshots: VenueSnapshot[],
    keys: PositionKey[],
  ): MarkedPosition {
    const marked = this.mark(row);
    if (row.status !== "open" || row.size === 0) return marked;
    const venue = venueOf(row.market_id);
    const snapshot = snapshots.find((s) => s.venue === venue);
    if (!snapshot || !venue) {
      return {
        ...marked,
        reconciliation: { status: "not_linked", venueSize: null, venueAveragePrice: null, checkedAt: null },
      };
    }
    if (snapshot.status !== "ok") {
      return {
        ...marked,
        reconciliation: {
          status: "unavailable",
          venueSize: null,
          venueAveragePrice: null,
          checkedAt: snapshot.checkedAt,
        },
      };
    }
    const atVenue = snapshot.positions.find((p) => p.marketId === row.market_id && p.outcome === row.outcome);
    const venueSize = atVenue?.size ?? 0;
    const other = keys.find(
      (k) => k.market_id === row.market_id && k.outcome !== row.outcome && k.status === "open",
    );
    const mine = nettedSize(venue, row.size, other?.size ?? 0);
    const status = mine === venueSize ? "match" : "mismatch";
    if (status === "mismatch") {
      this.mismatches?.noteMismatch({
        accountId: owner.accountId,
        venue,
        marketId: row.market_id,
        outcome: row.outcome,
        crossbookSize: mine,
        venueSize,
      });
    }
    return {
      ...marked,
      reconciliation: {
        status,
        venueSize,
        venueAveragePrice: atVenue?.averagePrice ?? null,
        checkedAt: snapshot.checkedAt,
      },
    };
  }

  /** A position the venue holds and crossbook does not: its cost is unknown to crossbook. */
  #venueHeld(
    owner: Owner,
    held: VenueHolding,
    snapshots: VenueSnapshot[],
    keys: PositionKey[],
  ): MarkedPosition {
    const checkedAt = snapshots.find((s) => s.venue === held.venue)?.checkedAt ?? null;
    const row = unknownCostPosition(
      owner,
      { id: venueOnlyId(owner, held, keys), marketId: held.marketId, outcome: held.outcome, size: held.size },
      // The venue does not say when it was opened; `updated_at` is when it was read.
      { openedAt: "", updatedAt: checkedAt ?? "" },
    );
    return {
      ...this.mark(row, "venue"),
      reconciliation: {
        status: "venue_only",
        venueSize: held.size,
        venueAveragePrice: held.averagePrice,
        checkedAt,
      },
    };
  }

  /**
   * The environment's cash: available, locked in open buy orders, and the positions at cost, whose
   * sum is `total`. A sandbox account is funded on first read.
   */
  async balance(owner: Owner): Promise<BalanceView> {
    // Cash first: the sandbox's is funded on its first read, before the ledger row is read below.
    const cash = await Promise.all(executionsOf(this.executions, owner).map((e) => e.balance(owner)));
    const [row, positionsCost] = await Promise.all([
      findBalance(this.db, owner),
      costBasisTotal(this.db, owner),
    ]);
    const available = cash.reduce((sum, c) => sum + c.available, 0);
    const locked = cash.reduce((sum, c) => sum + c.locked, 0);
    return {
      environment: owner.environment,
      currency: owner.environment === "sandbox" ? "USDC (sandbox)" : "USD",
      available,
      locked,
      positionsCost,
      total: available + locked + positionsCost,
      deposits: row?.deposits ?? 0,
      withdrawals: row?.withdrawals ?? 0,
      fees: row?.fees ?? 0,
      realizedPnl: row?.realized_pnl ?? 0,
      updatedAt: row?.updated_at ?? null,
    };
  }
}

/** The executions an owner's environment trades on: the sandbox, or every live venue. */
function executionsOf(executions: Executions, owner: Owner): Execution[] {
  return owner.environment === "sandbox" ? [executions.sandbox] : [...executions.live.values()];
}

function venueOf(marketId: string): VenueId | undefined {
  const venue = marketId.slice(0, marketId.indexOf(":"));
  return venue === "polymarket" || venue === "kalshi" ? venue : undefined;
}

function isNetting(marketId: string): boolean {
  const venue = venueOf(marketId);
  return venue !== undefined && NETTING_VENUES.has(venue);
}

/** What the venues that answered hold, filtered as the list asks, by market then outcome. */
function heldAtVenues(
  snapshots: VenueSnapshot[],
  filter: Pick<PositionFilter, "marketId" | "outcome">,
): VenueHolding[] {
  return snapshots
    .filter((s) => s.status === "ok")
    .flatMap((s) => s.positions)
    .filter(
      (h) =>
        (!filter.marketId || h.marketId === filter.marketId) &&
        (!filter.outcome || h.outcome === filter.outcome),
    )
    .sort((a, b) =>
      a.marketId === b.marketId ? a.outcome.localeCompare(b.outcome) : a.marketId < b.marketId ? -1 : 1,
    );
}

/**
 * crossbook already shows this venue holding: an open crossbook position on the market's outcome
 * (on a netting venue, on either outcome of the market) reconciles against it, and a settled one
 * means the venue still lists contracts crossbook has paid out (not yet redeemed there).
 */
function keptByCrossbook(held: VenueHolding, keys: PositionKey[]): boolean {
  return keys.some(
    (k) =>
      k.market_id === held.marketId &&
      ((k.status === "open" &&
        k.size > 0 &&
        (k.outcome === held.outcome || NETTING_VENUES.has(held.venue))) ||
        (k.status === "resolved" && k.outcome === held.outcome)),
  );
}

/**
 * A venue-held position's id: the one crossbook's position takes when a sale takes it over. Where
 * crossbook already has a (closed) position on that market and outcome, the sale reopens that one,
 * so the venue-held position shows under an id of its own that no stored position has.
 */
function venueOnlyId(owner: Owner, held: VenueHolding, keys: PositionKey[]): string {
  const existing = keys.find((k) => k.market_id === held.marketId && k.outcome === held.outcome);
  return existing
    ? venuePositionId(owner.accountId, held.marketId, `${held.outcome}\u0000${existing.id}`)
    : venuePositionId(owner.accountId, held.marketId, held.outcome);
}

function readView(snapshot: VenueSnapshot): VenueReadView {
  return {
    venue: snapshot.venue,
    status: snapshot.status,
    reason: snapshot.reason,
    checkedAt: snapshot.checkedAt,
  };
}
