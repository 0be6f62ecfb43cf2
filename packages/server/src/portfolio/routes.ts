/** Positions and balance over HTTP (the key's environment). */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { tradingOwner } from "../http/auth";
import { Envelope, ok, PagedEnvelope, pageMeta } from "../http/envelope";
import type { Owner } from "../ledger/orders-repo";
import { microsToNumber } from "../venues/decimal";
import {
  BalanceSchema,
  PositionListMeta,
  PositionListQuery,
  PositionParams,
  PositionSchema,
} from "./schemas";
import type { BalanceView, MarkedPosition, PortfolioService, Reconciliation, VenueReadView } from "./service";

const n = microsToNumber;
const nn = (value: number | null) => (value === null ? null : microsToNumber(value));

function reconciliationView(r: Reconciliation | null) {
  if (!r) return null;
  return {
    status: r.status,
    venue_size: nn(r.venueSize),
    venue_average_price: nn(r.venueAveragePrice),
    checked_at: r.checkedAt,
  };
}

function venueReadView(v: VenueReadView) {
  return { venue: v.venue, status: v.status, reason: v.reason, checked_at: v.checkedAt };
}

export function positionView(
  { row, source, mark, marketValue, unrealizedPnl, reconciliation }: MarkedPosition,
  marketTitle: string | null,
) {
  // The average over the contracts whose cost crossbook knows (none for a venue-held position).
  const known = row.size - row.unknown_cost_size;
  return {
    id: row.id,
    market_id: row.market_id,
    market_title: marketTitle,
    platform: row.market_id.slice(0, row.market_id.indexOf(":")),
    source,
    outcome: row.outcome as "yes" | "no",
    status: row.status as "open",
    size: n(row.size),
    reserved: n(row.reserved),
    unknown_cost_size: n(row.unknown_cost_size),
    average_price: known > 0 ? Math.round((row.cost_basis / known) * 1e6) / 1e6 : null,
    cost_basis: n(row.cost_basis),
    current_price: nn(mark),
    market_value: nn(marketValue),
    unrealized_pnl: nn(unrealizedPnl),
    realized_pnl: n(row.realized_pnl),
    fees: n(row.fees),
    resolution: row.resolution as "yes" | null,
    payout: nn(row.payout),
    redeemable: row.redeemable === 1,
    environment: row.environment as Owner["environment"],
    opened_at: source === "venue" ? null : row.opened_at,
    updated_at: row.updated_at,
    closed_at: row.closed_at,
    resolved_at: row.resolved_at,
    reconciliation: reconciliationView(reconciliation),
  };
}

export function balanceView(balance: BalanceView) {
  return {
    environment: balance.environment,
    currency: balance.currency,
    available: n(balance.available),
    locked: n(balance.locked),
    positions_cost: n(balance.positionsCost),
    total: n(balance.total),
    deposits: n(balance.deposits),
    withdrawals: n(balance.withdrawals),
    fees: n(balance.fees),
    realized_pnl: n(balance.realizedPnl),
    updated_at: balance.updatedAt,
  };
}

export const portfolioRoutes: FastifyPluginAsyncTypebox<{ portfolio: PortfolioService }> = async (
  app,
  { portfolio },
) => {
  app.get(
    "/v1/positions",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["portfolio"],
        summary:
          "The caller's positions, marked to the current quote (default status=open); live keys also see what their linked venue accounts hold",
        querystring: PositionListQuery,
        response: { 200: PagedEnvelope(PositionSchema, PositionListMeta) },
      },
    },
    async (request) => {
      const { status = "open", market_id, outcome, limit = 50, offset = 0 } = request.query;
      const { positions, total, venues } = await portfolio.list(
        tradingOwner(request),
        { status, ...(market_id ? { marketId: market_id } : {}), ...(outcome ? { outcome } : {}) },
        { limit, offset },
      );
      const titles = await portfolio.marketTitles(positions.map((p) => p.row.market_id));
      return {
        success: true as const,
        data: positions.map((p) => positionView(p, titles.get(p.row.market_id) ?? null)),
        meta: { ...pageMeta(offset, limit, total), ...(venues ? { venues: venues.map(venueReadView) } : {}) },
      };
    },
  );

  app.get(
    "/v1/positions/:id",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["portfolio"],
        summary: "One position",
        params: PositionParams,
        response: { 200: Envelope(PositionSchema) },
      },
    },
    async (request) => {
      const position = await portfolio.get(tradingOwner(request), request.params.id);
      const titles = await portfolio.marketTitles([position.row.market_id]);
      return ok(positionView(position, titles.get(position.row.market_id) ?? null));
    },
  );

  app.get(
    "/v1/balance",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["portfolio"],
        summary: "Cash of the key's environment: available, locked in open orders, positions at cost, total",
        response: { 200: Envelope(BalanceSchema) },
      },
    },
    async (request) => ok(balanceView(await portfolio.balance(tradingOwner(request)))),
  );
};
