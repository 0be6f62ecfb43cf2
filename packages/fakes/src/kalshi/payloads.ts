/**
 * Wire builders: internal units → the fixed-point-era Kalshi JSON (`*_dollars` 4 dp strings,
 * `*_fp` 2 dp strings, no legacy integer-cents fields; VENUES.md §0.2). One function per object, each
 * citing the VENUES.md section it follows, so a format change has exactly one place to land.
 */
import { bestAsk, bestBid, levels, sizeAt } from "./engine";
import type { Account, KEvent, KFill, KMarket, KOrder, KSeries, KTrade, Position } from "./state";
import { fmtDollars, fmtFp, fmtMicroDollars, isoFromMs, microToCents, PRICE_SCALE } from "./units";

const iso = isoFromMs;

/** Best YES bid in price units; 0 when the side is empty. */
export function yesBidPrice(m: KMarket): number {
  return bestBid(m)?.price ?? 0;
}
/** Best YES ask (1 − best NO bid) in price units; 1.0000 when no NO bids rest. */
export function yesAskPrice(m: KMarket): number {
  return bestAsk(m)?.price ?? PRICE_SCALE;
}

/**
 * VENUES.md §2.2 "Market object" (kalshi-typescript 3.30.0 models/market.ts). Without
 * `fractional_trading_enabled` and `response_price_units`: both were removed from REST and WS on
 * 2026-07-09 (VENUES-AUDIT #14). `settlement_ts` only on settled markets.
 */
export function marketPayload(m: KMarket): Record<string, unknown> {
  const bid = yesBidPrice(m);
  const ask = yesAskPrice(m);
  const out: Record<string, unknown> = {
    ticker: m.ticker,
    event_ticker: m.eventTicker,
    market_type: "binary",
    title: m.title,
    yes_sub_title: m.yesSubTitle,
    no_sub_title: m.noSubTitle,
    created_time: iso(m.createdMs),
    updated_time: iso(m.updatedMs),
    open_time: iso(m.openMs),
    close_time: iso(m.closeMs),
    expected_expiration_time: iso(m.closeMs + 3_600_000),
    expiration_time: iso(m.closeMs + 7 * 86_400_000),
    latest_expiration_time: iso(m.closeMs + 7 * 86_400_000),
    settlement_timer_seconds: 300,
    status: m.status,
    yes_bid_dollars: fmtDollars(bid),
    yes_bid_size_fp: fmtFp(sizeAt(m.bids)),
    yes_ask_dollars: fmtDollars(ask),
    yes_ask_size_fp: fmtFp(sizeAt(m.asks)),
    no_bid_dollars: fmtDollars(PRICE_SCALE - ask),
    no_ask_dollars: fmtDollars(PRICE_SCALE - bid),
    last_price_dollars: fmtDollars(m.lastPrice),
    previous_yes_bid_dollars: fmtDollars(m.previousBid),
    previous_yes_ask_dollars: fmtDollars(m.previousAsk),
    previous_price_dollars: fmtDollars(m.previousPrice),
    volume_fp: fmtFp(m.volume),
    volume_24h_fp: fmtFp(m.volume24h),
    open_interest_fp: fmtFp(m.openInterest),
    notional_value_dollars: "1.0000",
    liquidity_dollars: "0.0000",
    result: m.result,
    can_close_early: true,
    strike_type: "custom",
    rules_primary: m.rulesPrimary,
    rules_secondary: m.rulesSecondary,
    price_level_structure: m.priceLevelStructure,
    price_ranges: priceRanges(m),
  };
  if (m.settledMs !== null) out["settlement_ts"] = iso(m.settledMs);
  if (m.mve) {
    out["mve_collection_ticker"] = m.mve.collectionTicker;
    out["mve_selected_legs"] = m.mve.legs;
  }
  return out;
}

/** VENUES.md §2.2 `price_ranges`: the valid ticks of each price band. */
function priceRanges(m: KMarket): { start: string; end: string; step: string }[] {
  if (m.priceLevelStructure !== "tapered_deci_cent")
    return [{ start: "0.0000", end: "1.0000", step: fmtDollars(m.tick) }];
  return [
    { start: "0.0000", end: "0.1000", step: "0.0010" },
    { start: "0.1000", end: "0.9000", step: "0.0100" },
    { start: "0.9000", end: "1.0000", step: "0.0010" },
  ];
}

/** VENUES.md §2.2 "EventData". `markets` only when nested markets were asked for. */
export function eventPayload(e: KEvent, nested: KMarket[] | null): Record<string, unknown> {
  const out: Record<string, unknown> = {
    event_ticker: e.eventTicker,
    series_ticker: e.seriesTicker,
    title: e.title,
    sub_title: e.subTitle,
    collateral_return_type: e.mutuallyExclusive ? "MECNET" : "",
    mutually_exclusive: e.mutuallyExclusive,
    category: e.category,
    strike_date: iso(e.strikeMs),
    strike_period: "",
    product_metadata: {},
    settlement_sources: [{ name: e.settlementSource, url: "" }],
    last_updated_ts: iso(Math.max(0, ...e.markets.map((m) => m.updatedMs))),
    exchange_index: 0,
  };
  // Present only on an event whose fee differs from its series' (SDK 3.30 EventData: optional).
  if (e.feeTypeOverride !== null) out["fee_type_override"] = e.feeTypeOverride;
  if (e.feeMultiplierOverride !== null) out["fee_multiplier_override"] = e.feeMultiplierOverride;
  if (nested) out["markets"] = nested.map(marketPayload);
  return out;
}

/** VENUES.md §2.2 `GET /series` entries. */
export function seriesPayload(s: KSeries, volume: number | null): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ticker: s.ticker,
    frequency: s.frequency,
    title: s.title,
    category: s.category,
    tags: [],
    settlement_sources: [{ name: s.settlementSource, url: "" }],
    contract_url: "",
    contract_terms_url: "",
    fee_type: s.feeType,
    fee_multiplier: s.feeMultiplier,
    additional_prohibitions: [],
    product_metadata: {},
    last_updated_ts: iso(s.updatedMs),
  };
  if (volume !== null) out["volume_fp"] = fmtFp(volume);
  return out;
}

/** VENUES.md §2.3: bids only, each side ascending, best bid last; `depth` 0 = all. */
export function orderbookFp(m: KMarket, depth: number): { yes_dollars: string[][]; no_dollars: string[][] } {
  const { yes, no } = levels(m);
  const side = (map: Map<number, number>) => {
    const rows = [...map.entries()].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
    const cut = depth > 0 ? rows.slice(Math.max(0, rows.length - depth)) : rows;
    return cut.map(([p, n]) => [fmtDollars(p), fmtFp(n)]);
  };
  return { yes_dollars: side(yes), no_dollars: side(no) };
}

/** VENUES.md §2.2 `GET /markets/trades` Trade. */
export function tradePayload(t: KTrade): Record<string, unknown> {
  return {
    trade_id: t.tradeId,
    ticker: t.ticker,
    yes_price_dollars: fmtDollars(t.yesPrice),
    no_price_dollars: fmtDollars(PRICE_SCALE - t.yesPrice),
    count_fp: fmtFp(t.count),
    taker_side: t.takerSide,
    taker_outcome_side: t.takerSide,
    created_time: iso(t.createdMs),
  };
}

/**
 * VENUES.md §2.6 "Order object". Direction is `outcome_side` + `book_side`, one bit in two
 * vocabularies: only (yes, bid) and (no, ask) occur (docs.kalshi.com/getting_started/order_direction).
 * The deprecated `side`/`action` are not served.
 */
export function orderPayload(o: KOrder): Record<string, unknown> {
  return {
    order_id: o.orderId,
    user_id: o.userId,
    client_order_id: o.clientOrderId,
    ticker: o.ticker,
    outcome_side: o.outcomeSide,
    book_side: o.bookSide,
    type: "limit",
    status: o.status,
    yes_price_dollars: fmtDollars(o.yesPrice),
    no_price_dollars: fmtDollars(PRICE_SCALE - o.yesPrice),
    fill_count_fp: fmtFp(o.filled),
    remaining_count_fp: fmtFp(o.remaining),
    initial_count_fp: fmtFp(o.initialCount),
    taker_fill_cost_dollars: fmtMicroDollars(o.takerFillCostMicro),
    maker_fill_cost_dollars: fmtMicroDollars(o.makerFillCostMicro),
    taker_fees_dollars: fmtMicroDollars(o.takerFeesMicro),
    maker_fees_dollars: fmtMicroDollars(o.makerFeesMicro),
    expiration_time: o.expirationTs === null ? null : iso(o.expirationTs * 1000),
    created_time: iso(o.createdMs),
    last_update_time: iso(o.updatedMs),
    self_trade_prevention_type: o.stp,
    order_group_id: null,
    cancel_order_on_pause: false,
    subaccount_number: 0,
    exchange_index: 0,
  };
}

/** VENUES.md §2.6 V2 create-order response. */
export function v2OrderResponse(o: KOrder, nowMs: number): Record<string, unknown> {
  const fees = o.takerFeesMicro + o.makerFeesMicro;
  return {
    order_id: o.orderId,
    client_order_id: o.clientOrderId,
    fill_count: fmtFp(o.filled),
    remaining_count: fmtFp(o.remaining),
    average_fill_price: fmtDollars(o.filled > 0 ? Math.round(o.fillNotional / o.filled) : o.yesPrice),
    average_fee_paid: fmtMicroDollars(o.filled > 0 ? Math.round((fees * 100) / o.filled) : 0),
    ts_ms: nowMs,
  };
}

/** VENUES.md §2.6 "Reads": Fill (REST). */
export function fillPayload(f: KFill): Record<string, unknown> {
  return {
    fill_id: f.fillId,
    trade_id: f.fillId,
    order_id: f.orderId,
    ticker: f.ticker,
    market_ticker: f.ticker,
    outcome_side: f.outcomeSide,
    book_side: f.bookSide,
    count_fp: fmtFp(f.count),
    yes_price_dollars: fmtDollars(f.yesPrice),
    no_price_dollars: fmtDollars(PRICE_SCALE - f.yesPrice),
    is_taker: f.isTaker,
    fee_cost: fmtMicroDollars(f.feeMicro),
    created_time: iso(f.createdMs),
    ts: Math.floor(f.createdMs / 1000),
    subaccount_number: 0,
    exchange_index: 0,
  };
}

/** VENUES.md §2.6 market_positions entry. */
export function marketPositionPayload(p: Position): Record<string, unknown> {
  return {
    ticker: p.ticker,
    position_fp: fmtFp(p.position),
    total_traded_dollars: fmtMicroDollars(p.tradedMicro),
    market_exposure_dollars: fmtMicroDollars(p.exposureMicro),
    realized_pnl_dollars: fmtMicroDollars(p.realizedMicro),
    fees_paid_dollars: fmtMicroDollars(p.feesMicro),
    last_updated_ts: iso(p.updatedMs),
    exchange_index: 0,
  };
}

/** VENUES.md §2.6 event_positions entry (aggregated over the event's market positions). */
export function eventPositionPayload(eventTicker: string, ps: Position[]): Record<string, unknown> {
  let cost = 0;
  let shares = 0;
  let realized = 0;
  let fees = 0;
  for (const p of ps) {
    cost += p.tradedMicro;
    shares += Math.abs(p.position);
    realized += p.realizedMicro;
    fees += p.feesMicro;
  }
  const exposure = ps.reduce((n, p) => n + p.exposureMicro, 0);
  return {
    event_ticker: eventTicker,
    total_cost_dollars: fmtMicroDollars(cost),
    total_cost_shares_fp: fmtFp(shares),
    event_exposure_dollars: fmtMicroDollars(exposure),
    realized_pnl_dollars: fmtMicroDollars(realized),
    fees_paid_dollars: fmtMicroDollars(fees),
  };
}

/** VENUES.md §2.6 `GET /portfolio/balance`: integer cents plus `balance_dollars`. */
export function balancePayload(a: Account, portfolioValueMicro: number): Record<string, unknown> {
  const available = a.cashMicro - a.reservedMicro;
  return {
    balance: microToCents(available),
    balance_dollars: fmtMicroDollars(available),
    portfolio_value: microToCents(portfolioValueMicro),
    updated_ts: Math.floor(a.updatedMs / 1000),
  };
}
