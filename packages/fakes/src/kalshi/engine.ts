/**
 * The rules of the fake Kalshi exchange: price-time matching on the YES book (a YES bid crosses NO
 * bids at 1 − p), cash and signed positions with YES/NO netting, Kalshi's taker fee, settlement, and
 * the simulation step that makes books move with trades. Every book change is diffed into
 * `orderbook_delta` events per price level so the WebSocket layer never has to guess.
 */
import {
  type Account,
  type BookEntry,
  type BookSide,
  clampPrice,
  type KalshiState,
  type KFill,
  type KMarket,
  type KOrder,
  type KTrade,
  type OutcomeSide,
  type Position,
  type StpType,
  sortBook,
  type TimeInForce,
} from "./state";
import { COUNT_SCALE, netFeeMicro, PRICE_SCALE, tradeFeeMicro } from "./units";

/** A venue rejection: HTTP status plus Kalshi's error code (VENUES.md §2.7). */
export class KalshiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Aggregated levels: NO side keyed by NO price (1 − YES ask). */
export function levels(m: KMarket): { yes: Map<number, number>; no: Map<number, number> } {
  const yes = new Map<number, number>();
  const no = new Map<number, number>();
  for (const e of m.bids) yes.set(e.price, (yes.get(e.price) ?? 0) + e.remaining);
  for (const e of m.asks) no.set(PRICE_SCALE - e.price, (no.get(PRICE_SCALE - e.price) ?? 0) + e.remaining);
  return { yes, no };
}

export function bestBid(m: KMarket): BookEntry | undefined {
  return m.bids[0];
}
export function bestAsk(m: KMarket): BookEntry | undefined {
  return m.asks[0];
}

/** Size at the best level of one side. */
export function sizeAt(entries: BookEntry[]): number {
  const top = entries[0];
  if (!top) return 0;
  let n = 0;
  for (const e of entries) if (e.price === top.price) n += e.remaining;
  return n;
}

/** Runs `fn`, then emits one `orderbook_delta` per changed level and a `ticker` if anything moved. */
export function withDeltas<T>(
  state: KalshiState,
  m: KMarket,
  fn: () => T,
  origin?: { userId: string; clientOrderId: string },
): T {
  const before = levels(m);
  const tradesBefore = state.trades.length;
  const result = fn();
  m.bids = m.bids.filter((e) => e.remaining > 0);
  m.asks = m.asks.filter((e) => e.remaining > 0);
  sortBook(m);
  const after = levels(m);
  let changed = state.trades.length !== tradesBefore;
  for (const side of ["yes", "no"] as const) {
    const keys = new Set([...before[side].keys(), ...after[side].keys()]);
    for (const price of [...keys].sort((a, b) => a - b)) {
      const delta = (after[side].get(price) ?? 0) - (before[side].get(price) ?? 0);
      if (delta === 0) continue;
      changed = true;
      state.emit({
        kind: "delta",
        ticker: m.ticker,
        side,
        price,
        delta,
        ...(origin ? { origin } : {}),
      });
    }
  }
  if (changed) {
    m.updatedMs = state.nowMs();
    state.emit({ kind: "ticker", ticker: m.ticker });
  }
  return result;
}

export interface PlaceOrderInput {
  userId: string;
  ticker: string;
  bookSide: BookSide;
  outcomeSide: OutcomeSide;
  yesPrice: number;
  count: number;
  clientOrderId: string;
  timeInForce: TimeInForce;
  stp: StpType;
  postOnly: boolean;
  reduceOnly: boolean;
  expirationTs: number | null;
}

/** Contracts of the opposite outcome an order on `side` would close rather than open. */
function offsettable(acct: Account, ticker: string, side: BookSide): number {
  const pos = acct.positions.get(ticker)?.position ?? 0;
  return side === "ask" ? Math.max(pos, 0) : Math.max(-pos, 0);
}

/** Own-side price of a YES-book side: a bid pays p, an ask (≡ buying NO) pays 1 − p. */
const ownPrice = (side: BookSide, yesPrice: number): number =>
  side === "bid" ? yesPrice : PRICE_SCALE - yesPrice;

export function tradable(m: KMarket | undefined, ticker: string): KMarket {
  if (!m) throw new KalshiError(404, "market_not_found", `market ${ticker} not found`);
  if (m.status !== "active") throw new KalshiError(400, "market_closed", "market is not open for trading");
  return m;
}

export function placeOrder(state: KalshiState, input: PlaceOrderInput): { order: KOrder; fills: KFill[] } {
  const m = tradable(state.liveMarket(input.ticker), input.ticker);
  if (input.yesPrice <= 0 || input.yesPrice >= PRICE_SCALE || input.yesPrice % m.tick !== 0)
    throw new KalshiError(400, "invalid_price", "invalid price");
  if (input.count <= 0) throw new KalshiError(400, "invalid_parameters", "count must be positive");
  if (!m.fractional && input.count % COUNT_SCALE !== 0)
    throw new KalshiError(400, "invalid_parameters", "fractional trading is not enabled on this market");
  if (input.clientOrderId) {
    for (const o of state.orders.values())
      if (o.userId === input.userId && o.clientOrderId === input.clientOrderId && o.status === "resting")
        throw new KalshiError(
          409,
          "order_already_exists",
          "an order with this client_order_id already exists",
        );
  }
  const acct = state.account(input.userId);
  const own = ownPrice(input.bookSide, input.yesPrice);
  // Closing an opposite position needs no collateral: the YES/NO pair pays $1 back at once.
  // Fees on the closing part come out of its proceeds.
  const opening = Math.max(0, input.count - offsettable(acct, m.ticker, input.bookSide));
  const fee = tradeFeeMicro(state.feesOf(m), true, opening, input.yesPrice);
  const worst = Math.ceil((own * opening + fee) / 10_000) * 10_000;
  if (acct.cashMicro - acct.reservedMicro < worst)
    throw new KalshiError(400, "insufficient_balance", "insufficient balance");
  const opposite = input.bookSide === "bid" ? m.asks : m.bids;
  const crosses = (e: BookEntry) =>
    input.bookSide === "bid" ? e.price <= input.yesPrice : e.price >= input.yesPrice;
  if (input.postOnly && opposite.some(crosses))
    throw new KalshiError(400, "post_only_cross", "post only order would cross the book");
  if (input.timeInForce === "fill_or_kill") {
    let avail = 0;
    for (const e of opposite) if (crosses(e) && e.owner !== input.userId) avail += e.remaining;
    if (avail < input.count)
      throw new KalshiError(400, "fill_or_kill_insufficient_resting_volume", "FoK not filled");
  }
  const now = state.nowMs();
  const order: KOrder = {
    orderId: state.nextId("order"),
    userId: input.userId,
    clientOrderId: input.clientOrderId,
    ticker: m.ticker,
    bookSide: input.bookSide,
    outcomeSide: input.outcomeSide,
    yesPrice: input.yesPrice,
    initialCount: input.count,
    filled: 0,
    remaining: input.count,
    status: "resting",
    timeInForce: input.timeInForce,
    stp: input.stp,
    postOnly: input.postOnly,
    reduceOnly: input.reduceOnly,
    expirationTs: input.expirationTs,
    createdMs: now,
    updatedMs: now,
    takerFillCostMicro: 0,
    makerFillCostMicro: 0,
    takerFeesMicro: 0,
    makerFeesMicro: 0,
    fillNotional: 0,
    reservedMicro: 0,
    feeCarryMicro: 0,
  };
  state.orders.set(order.orderId, order);
  const fills = withDeltas(
    state,
    m,
    () => {
      const out = match(state, m, order.bookSide, order.yesPrice, order.remaining, order);
      order.remaining -= out.filled;
      if (out.stpCancelled || order.timeInForce !== "good_till_canceled" || order.remaining === 0) {
        order.status = order.remaining === 0 ? "executed" : "canceled";
        order.remaining = 0;
      } else {
        order.reservedMicro =
          own * Math.max(0, order.remaining - offsettable(acct, m.ticker, order.bookSide));
        acct.reservedMicro += order.reservedMicro;
        const entry: BookEntry = {
          seq: state.nextSeq(),
          owner: order.userId,
          order,
          price: order.yesPrice,
          remaining: order.remaining,
        };
        (order.bookSide === "bid" ? m.bids : m.asks).push(entry);
      }
      return out.fills;
    },
    { userId: order.userId, clientOrderId: order.clientOrderId },
  );
  return { order, fills };
}

/**
 * Sweeps the opposite side up to `limit` for `qty`. `taker` null means simulated flow from outside
 * (printTrade, tick), which only moves the book and fills resting user orders.
 */
function match(
  state: KalshiState,
  m: KMarket,
  side: BookSide,
  limit: number,
  qty: number,
  taker: KOrder | null,
): { filled: number; fills: KFill[]; stpCancelled: boolean } {
  const book = side === "bid" ? m.asks : m.bids;
  const fills: KFill[] = [];
  let left = qty;
  let stpCancelled = false;
  for (const e of book) {
    if (left <= 0) break;
    if (e.remaining <= 0) continue;
    if (side === "bid" ? e.price > limit : e.price < limit) break;
    if (taker && e.owner === taker.userId) {
      if (taker.stp === "taker_at_cross") {
        stpCancelled = true;
        break;
      }
      cancelEntry(state, e);
      continue;
    }
    const n = Math.min(left, e.remaining);
    left -= n;
    e.remaining -= n;
    const trade: KTrade = {
      tradeId: state.nextId("trade"),
      ticker: m.ticker,
      yesPrice: e.price,
      count: n,
      takerSide: side === "bid" ? "yes" : "no",
      createdMs: state.nowMs(),
    };
    state.trades.push(trade);
    m.lastPrice = e.price;
    m.lastTradeSize = n;
    m.volume += n;
    m.volume24h += n;
    m.openInterest += n;
    state.emit({ kind: "trade", trade });
    if (e.order) fills.push(applyFill(state, e.order, trade, false));
    if (taker) fills.push(applyFill(state, taker, trade, true));
  }
  return { filled: qty - left, fills, stpCancelled };
}

/** Books one side of a trade to an order's owner: cash, netting, fees, position (VENUES.md §2.6). */
function applyFill(state: KalshiState, order: KOrder, trade: KTrade, isTaker: boolean): KFill {
  const acct = state.account(order.userId);
  const n = trade.count;
  const own = ownPrice(order.bookSide, trade.yesPrice);
  const cost = own * n;
  const market = state.markets.get(order.ticker);
  const tradeFee = market ? tradeFeeMicro(state.feesOf(market), isTaker, n, trade.yesPrice) : 0;
  const { fee, carry } = netFeeMicro(cost, tradeFee, order.feeCarryMicro);
  order.feeCarryMicro = carry;
  if (!isTaker) {
    const release =
      n === order.remaining ? order.reservedMicro : Math.round((order.reservedMicro * n) / order.remaining);
    order.reservedMicro -= release;
    acct.reservedMicro -= release;
    order.remaining -= n;
    if (order.remaining === 0) order.status = "executed";
  }
  order.filled += n;
  order.fillNotional += trade.yesPrice * n;
  order.updatedMs = trade.createdMs;
  if (isTaker) {
    order.takerFillCostMicro += cost;
    order.takerFeesMicro += fee;
  } else {
    order.makerFillCostMicro += cost;
    order.makerFeesMicro += fee;
  }
  const pos = position(state, acct, order.ticker);
  acct.cashMicro -= cost + fee;
  pos.feesMicro += fee;
  pos.tradedMicro += cost;
  const signed = order.bookSide === "bid" ? n : -n;
  if (pos.position !== 0 && Math.sign(pos.position) !== Math.sign(signed)) {
    // A YES and a NO contract pair up and pay out $1 together.
    const closed = Math.min(n, Math.abs(pos.position));
    const removed = Math.round((pos.exposureMicro * closed) / Math.abs(pos.position));
    acct.cashMicro += closed * 10_000;
    pos.realizedMicro += closed * 10_000 - removed - own * closed;
    pos.exposureMicro -= removed;
    pos.exposureMicro += own * (n - closed);
  } else {
    pos.exposureMicro += cost;
  }
  pos.position += signed;
  pos.updatedMs = trade.createdMs;
  acct.updatedMs = trade.createdMs;
  const fill: KFill = {
    fillId: trade.tradeId,
    orderId: order.orderId,
    userId: order.userId,
    clientOrderId: order.clientOrderId,
    ticker: order.ticker,
    bookSide: order.bookSide,
    outcomeSide: order.outcomeSide,
    count: n,
    yesPrice: trade.yesPrice,
    isTaker,
    feeMicro: fee,
    postPosition: pos.position,
    createdMs: trade.createdMs,
  };
  state.fills.push(fill);
  state.emit({ kind: "fill", fill });
  return fill;
}

function position(state: KalshiState, acct: Account, ticker: string): Position {
  let p = acct.positions.get(ticker);
  if (!p) {
    const m = state.markets.get(ticker);
    p = {
      ticker,
      eventTicker: m?.eventTicker ?? "",
      position: 0,
      exposureMicro: 0,
      realizedMicro: 0,
      feesMicro: 0,
      tradedMicro: 0,
      updatedMs: state.nowMs(),
    };
    acct.positions.set(ticker, p);
  }
  return p;
}

function cancelEntry(state: KalshiState, e: BookEntry): void {
  const o = e.order;
  if (o) {
    const acct = state.account(o.userId);
    acct.reservedMicro -= o.reservedMicro;
    o.reservedMicro = 0;
    o.remaining = 0;
    o.status = "canceled";
    o.updatedMs = state.nowMs();
  }
  e.remaining = 0;
}

/**
 * Cancels a resting order; returns the count it was reduced by. An order that is no longer resting
 * (executed, cancelled) answers 404 like an unknown one, as the V2 cancel does (VENUES-AUDIT #2).
 */
export function cancelOrder(
  state: KalshiState,
  userId: string,
  orderId: string,
): { order: KOrder; reducedBy: number } {
  const o = state.orders.get(orderId);
  if (!o || o.userId !== userId || o.status !== "resting")
    throw new KalshiError(404, "not_found", "order not found");
  const m = state.markets.get(o.ticker)!;
  const reducedBy = o.remaining;
  withDeltas(
    state,
    m,
    () => {
      const e = [...m.bids, ...m.asks].find((x) => x.order === o);
      if (e) cancelEntry(state, e);
    },
    { userId: o.userId, clientOrderId: o.clientOrderId },
  );
  return { order: o, reducedBy };
}

/** Simulated outside flow: a taker on `side` ("yes" buys YES) sweeping up to `limit`. */
export function houseTake(
  state: KalshiState,
  m: KMarket,
  takerSide: OutcomeSide,
  count: number,
  limit?: number,
): KTrade[] {
  const start = state.trades.length;
  const side: BookSide = takerSide === "yes" ? "bid" : "ask";
  const lim = limit ?? (side === "bid" ? PRICE_SCALE - 1 : 1);
  withDeltas(state, m, () => match(state, m, side, lim, count, null));
  return state.trades.slice(start);
}

/** Replaces the fake's own liquidity on a market (user orders stay). Prices are dollars, sizes contracts. */
export function setHouseBook(
  state: KalshiState,
  m: KMarket,
  book: { yes?: [number, number][]; no?: [number, number][] },
): void {
  withDeltas(state, m, () => {
    for (const e of [...m.bids, ...m.asks]) if (e.owner === null) e.remaining = 0;
    for (const [p, size] of book.yes ?? [])
      m.bids.push({
        seq: state.nextSeq(),
        owner: null,
        order: null,
        price: Math.round(p * PRICE_SCALE),
        remaining: Math.round(size * COUNT_SCALE),
      });
    for (const [p, size] of book.no ?? [])
      m.asks.push({
        seq: state.nextSeq(),
        owner: null,
        order: null,
        price: PRICE_SCALE - Math.round(p * PRICE_SCALE),
        remaining: Math.round(size * COUNT_SCALE),
      });
  });
}

function cancelAllOnMarket(state: KalshiState, m: KMarket): void {
  withDeltas(state, m, () => {
    for (const e of [...m.bids, ...m.asks]) cancelEntry(state, e);
  });
}

export function closeMarket(state: KalshiState, m: KMarket): void {
  cancelAllOnMarket(state, m);
  m.status = "closed";
  m.updatedMs = state.nowMs();
  state.emit({ kind: "ticker", ticker: m.ticker });
}

/** Determines and settles: each YES contract pays $1 on "yes", each NO contract on "no". */
export function resolveMarket(state: KalshiState, m: KMarket, result: "yes" | "no"): void {
  cancelAllOnMarket(state, m);
  m.status = "finalized";
  m.result = result;
  m.lastPrice = result === "yes" ? PRICE_SCALE : 0;
  m.updatedMs = state.nowMs();
  m.settledMs = m.updatedMs;
  for (const acct of state.accounts.values()) {
    const p = acct.positions.get(m.ticker);
    if (!p || p.position === 0) continue;
    const wins = (result === "yes" && p.position > 0) || (result === "no" && p.position < 0);
    const payout = wins ? Math.abs(p.position) * 10_000 : 0;
    acct.cashMicro += payout;
    p.realizedMicro += payout - p.exposureMicro;
    p.exposureMicro = 0;
    p.position = 0;
    p.updatedMs = m.updatedMs;
  }
  state.emit({ kind: "ticker", ticker: m.ticker });
}

/**
 * One simulation step. A market with a cross-venue twin follows the shared fair value (`followQuote`);
 * any other market wanders: outside flow takes a few contracts off one side, then the house quotes
 * back around the new last price, so its book drifts with trades. Deterministic: the state RNG is
 * seeded and markets are visited in listing order.
 */
export function tick(state: KalshiState): void {
  state.step += 1;
  for (const m of state.marketOrder) {
    if (m.status !== "active") continue;
    const quote = state.fair?.quote("kalshi", m.ticker, state.step);
    if (quote) followQuote(state, m, quote, state.fair!.flow("kalshi", m.ticker, state.step));
    else wander(state, m);
  }
}

function wander(state: KalshiState, m: KMarket): void {
  const r = state.rng;
  if (r.next() < 0.5) {
    const takerSide: OutcomeSide = r.next() < 0.5 ? "yes" : "no";
    houseTake(state, m, takerSide, r.int(1, 25) * COUNT_SCALE);
  }
  // Refill: top up the side that ran thin near the last price.
  withDeltas(state, m, () => {
    const bid = bestBid(m);
    const ask = bestAsk(m);
    if (!bid || sizeAt(m.bids) < 20 * COUNT_SCALE) {
      const p = clampPrice((ask ? ask.price : m.lastPrice) - m.tick * r.int(1, 2), m.tick);
      if (!ask || p < ask.price)
        m.bids.push({
          seq: state.nextSeq(),
          owner: null,
          order: null,
          price: p,
          remaining: r.int(20, 300) * COUNT_SCALE,
        });
    }
    if (!ask || sizeAt(m.asks) < 20 * COUNT_SCALE) {
      const b = bestBid(m);
      const p = clampPrice((b ? b.price : m.lastPrice) + m.tick * r.int(1, 2), m.tick);
      if (!b || p > b.price)
        m.asks.push({
          seq: state.nextSeq(),
          owner: null,
          order: null,
          price: p,
          remaining: r.int(20, 300) * COUNT_SCALE,
        });
    }
  });
}

/** House levels kept on each side of a followed quote, and how far apart (price units). */
const LADDER = 5;
const ladderStep = (m: KMarket) => (m.tick >= 100 ? m.tick : 50);

/**
 * One step of a market that follows the shared fair value: outside flow takes a few contracts (the
 * side a lagging quote is mispriced on, when `lean` says so), the house withdraws what is now inside
 * the quote or far from it, resting user orders the quote has moved through are taken as outside
 * flow would, and the house tops its ladder back up from the quoted bid and ask outwards.
 */
function followQuote(
  state: KalshiState,
  m: KMarket,
  quote: { bid: number; ask: number },
  lean: OutcomeSide | null,
): void {
  const r = state.rng;
  if (r.next() < 0.5) {
    const coin = r.next() < 0.5 ? "yes" : "no";
    houseTake(state, m, lean ?? coin, r.int(1, 25) * COUNT_SCALE);
  }
  const step = ladderStep(m);
  const bid = clampPrice(quote.bid, m.tick);
  const ask = Math.max(clampPrice(quote.ask, m.tick), bid + m.tick);
  const lowest = bid - 2 * LADDER * step;
  const highest = ask + 2 * LADDER * step;
  withDeltas(state, m, () => {
    for (const e of m.bids) if (e.owner === null && (e.price > bid || e.price < lowest)) e.remaining = 0;
    for (const e of m.asks) if (e.owner === null && (e.price < ask || e.price > highest)) e.remaining = 0;
  });
  // Users' orders through the new quote: someone takes them, as on a venue whose price moved.
  if (m.asks.some((e) => e.price <= bid)) houseTake(state, m, "yes", Number.MAX_SAFE_INTEGER, bid);
  if (m.bids.some((e) => e.price >= ask)) houseTake(state, m, "no", Number.MAX_SAFE_INTEGER, ask);
  withDeltas(state, m, () => {
    const houseAt = (book: BookEntry[], price: number) =>
      book.reduce((n, e) => n + (e.owner === null && e.price === price ? e.remaining : 0), 0);
    for (let i = 0; i < LADDER; i++) {
      for (const [book, price] of [
        [m.bids, bid - i * step],
        [m.asks, ask + i * step],
      ] as const) {
        if (price < m.tick || price > PRICE_SCALE - m.tick) continue;
        if (houseAt(book, price) >= 20 * COUNT_SCALE) continue;
        book.push({
          seq: state.nextSeq(),
          owner: null,
          order: null,
          price,
          remaining: r.int(20, 300) * COUNT_SCALE,
        });
      }
    }
  });
}
