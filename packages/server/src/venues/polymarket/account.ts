/**
 * Pure normalizers for the account side: CLOB OpenOrder, `POST /order` responses, Trades (our
 * fills, as taker or as one of the makers), Data API positions and balances. The token -> outcome
 * mapping is passed in, since a token's leg is only known from its market. VENUES.md §1.6.
 */
import type { Micros } from "../decimal";
import type { Outcome } from "../model";
import type { VenueFill, VenueOrder, VenuePosition } from "../venue";
import { epochToIso, isObject, micros, PolymarketParseError, type Report } from "./normalize";

export type TokenResolver = (tokenId: string) => { marketId: string; outcome: Outcome } | undefined;

const ORDER_STATUS: Record<string, VenueOrder["status"]> = {
  LIVE: "open",
  MATCHED: "filled",
  CANCELED: "cancelled",
  CANCELLED: "cancelled",
  DELAYED: "pending",
  UNMATCHED: "pending",
};

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function side(value: unknown, report: Report): "buy" | "sell" {
  if (value === "BUY" || value === 0) return "buy";
  if (value === "SELL" || value === 1) return "sell";
  report("unknown_side", String(value));
  throw new PolymarketParseError(`side ${String(value)}`, "unknown order side");
}

/** OpenOrder (`GET /data/order/{id}`, `/data/orders`) -> VenueOrder. VENUES.md §1.6 "Reads". */
export function normalizeOpenOrder(raw: unknown, resolve: TokenResolver, report: Report): VenueOrder {
  if (!isObject(raw)) throw new PolymarketParseError("order <not an object>", "expected an object");
  const id = text(raw.id);
  if (!id) throw new PolymarketParseError("order <no id>", "id missing");
  const name = `order ${id}`;
  const assetId = text(raw.asset_id);
  const leg = assetId ? resolve(assetId) : undefined;
  if (!leg) throw new PolymarketParseError(name, `token ${assetId} belongs to no known market`);
  const price = micros(raw.price);
  const size = micros(raw.original_size);
  const matched = micros(raw.size_matched) ?? 0;
  if (price === undefined || size === undefined)
    throw new PolymarketParseError(name, "price or size missing");
  const wire = typeof raw.status === "string" ? raw.status.toUpperCase() : "";
  let status = ORDER_STATUS[wire];
  if (!status) {
    report("unknown_order_status", wire);
    status = "pending";
  }
  if (status === "open" && matched >= size) status = "filled";
  return {
    venueOrderId: id,
    marketId: leg.marketId,
    outcome: leg.outcome,
    side: side(raw.side, report),
    price,
    size,
    filledSize: matched,
    status,
    createdAt: epochToIso(raw.created_at, "s") ?? new Date(0).toISOString(),
    clientOrderId: null,
  };
}

/**
 * Our fills in a Trade: as TAKER the trade itself (our `taker_order_id`), as MAKER each
 * `maker_orders[]` entry that is ours (matched by maker address or API key owner).
 */
export function normalizeTradeFills(
  raw: unknown,
  us: { maker: string; apiKey: string },
  resolve: TokenResolver,
  report: Report,
): VenueFill[] {
  if (!isObject(raw)) throw new PolymarketParseError("trade <not an object>", "expected an object");
  const id = text(raw.id) ?? "?";
  const timestamp =
    epochToIso(raw.match_time, "s") ?? epochToIso(raw.last_update, "s") ?? new Date(0).toISOString();
  const fill = (part: {
    suffix: string;
    orderId: unknown;
    tokenId: unknown;
    side: unknown;
    price: unknown;
    size: unknown;
    liquidity: "taker" | "maker";
  }): VenueFill | undefined => {
    const tokenId = text(part.tokenId);
    const leg = tokenId ? resolve(tokenId) : undefined;
    const price = micros(part.price);
    const size = micros(part.size);
    if (!leg || price === undefined || size === undefined || !text(part.orderId)) {
      report("bad_trade", `trade ${id}`);
      return undefined;
    }
    // A trade carries no fee amount, only `fee_rate_bps`, whose meaning on V2 trades is unverified
    // (VENUES-AUDIT §4.2): the fee is left to crossbook's model of the market's schedule
    // (shares × rate × (p(1 − p))^exponent for takers; makers pay nothing on taker-only schedules).
    return {
      venueFillId: `${id}${part.suffix}`,
      venueOrderId: text(part.orderId)!,
      marketId: leg.marketId,
      outcome: leg.outcome,
      side: side(part.side, report),
      price,
      size,
      fee: null,
      liquidity: part.liquidity,
      timestamp,
    };
  };
  const mine = (addr: unknown, owner: unknown) =>
    (typeof addr === "string" && addr.toLowerCase() === us.maker.toLowerCase()) || owner === us.apiKey;
  const fills: VenueFill[] = [];
  if (raw.trader_side === "TAKER" || (raw.trader_side === undefined && mine(raw.maker_address, raw.owner))) {
    const f = fill({
      suffix: "",
      orderId: raw.taker_order_id,
      tokenId: raw.asset_id,
      side: raw.side,
      price: raw.price,
      size: raw.size,
      liquidity: "taker",
    });
    if (f) fills.push(f);
  } else {
    if (raw.trader_side !== "MAKER") report("unknown_trader_side", String(raw.trader_side));
    const makers = Array.isArray(raw.maker_orders) ? raw.maker_orders : [];
    makers.forEach((m, i) => {
      if (!isObject(m) || !mine(m.maker_address, m.owner)) return;
      const f = fill({
        suffix: `:${i}`,
        orderId: m.order_id,
        tokenId: m.asset_id,
        side: m.side,
        price: m.price,
        size: m.matched_amount,
        liquidity: "maker",
      });
      if (f) fills.push(f);
    });
  }
  return fills;
}

/** Data API `/positions` row -> VenuePosition (VENUES.md §1.6, last paragraph). */
export function normalizePosition(
  raw: unknown,
  resolve: TokenResolver,
  report: Report,
): VenuePosition | undefined {
  if (!isObject(raw)) return undefined;
  const asset = text(raw.asset);
  const leg = asset ? resolve(asset) : undefined;
  const size = micros(raw.size);
  if (!leg || size === undefined) {
    report("bad_position", `asset ${asset}`);
    return undefined;
  }
  return { marketId: leg.marketId, outcome: leg.outcome, size, averagePrice: micros(raw.avgPrice) ?? null };
}

/**
 * The leg of a Data API `/positions` row read from the row itself (`conditionId`, `outcome`,
 * `oppositeOutcome`, `outcomeIndex`), by the rule the catalog uses for Gamma's `outcomes`: the "Yes"
 * label where the labels are Yes/No, else (team names) the first-listed outcome. Undefined when the
 * row cannot tell (the caller then asks Gamma), so a position needs no market lookup of its own.
 */
export function positionLeg(raw: unknown): { marketId: string; outcome: Outcome } | undefined {
  if (!isObject(raw)) return undefined;
  const conditionId = text(raw.conditionId);
  const label = text(raw.outcome)?.trim().toLowerCase();
  const other = text(raw.oppositeOutcome)?.trim().toLowerCase();
  const index = raw.outcomeIndex;
  if (!conditionId || !/^0x[0-9a-fA-F]{64}$/.test(conditionId) || !label || !other || label === other)
    return undefined;
  const marketId = `polymarket:${conditionId.toLowerCase()}`;
  const yesNo = (l: string) => l === "yes" || l === "no";
  if (yesNo(label) && yesNo(other)) return { marketId, outcome: label === "yes" ? "yes" : "no" };
  if (yesNo(label) || yesNo(other)) return undefined;
  if (index !== 0 && index !== 1) return undefined;
  return { marketId, outcome: index === 0 ? "yes" : "no" };
}

/** `{"balance":"1000000000",...}` (6-decimal integer string: already micro-USD). */
export function normalizeBalance(raw: unknown): Micros {
  const balance = isObject(raw) ? raw.balance : undefined;
  if (typeof balance === "string" && /^\d+$/.test(balance)) {
    const value = Number(balance);
    if (Number.isSafeInteger(value)) return value;
  }
  throw new PolymarketParseError(
    "balance-allowance",
    `balance ${String(balance)} is not a 6-decimal integer`,
  );
}
