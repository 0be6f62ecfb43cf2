/**
 * The fake Polymarket's world: markets derived from the seed (ids, condition ids, token ids, slugs),
 * one order book per market kept in YES terms (so the NO token's book is always the exact complement
 * of YES, never a copy), wallets with pUSD and outcome-token balances, trades, and a listener list the
 * WebSocket layer turns into wire messages. Pure state and rules: no HTTP here.
 */
import { getAddress } from "viem";
import type { SeedMarket } from "../world/seed";
import {
  bytes32Hex,
  hash32,
  MICRO,
  PRICE_SCALE,
  Rng,
  sha256Hex,
  snapPrice,
  takerFeeMicro,
  uint256Decimal,
  uuidFrom,
} from "./units";

export type Side = "BUY" | "SELL";
export type OrderType = "GTC" | "GTD" | "FOK" | "FAK";
export type MarketStatus = "open" | "closed" | "resolved";

/** A resting or finished order. `side` and `price` are in the order's own token terms. */
export interface RestingOrder {
  id: string;
  /** API key of the owner; null for the simulated liquidity of the fake itself. */
  owner: string | null;
  makerAddress: string;
  signer: string;
  market: PmMarket;
  tokenId: string;
  yesToken: boolean;
  side: Side;
  /** Own-token price in 1e-4 units. */
  price: number;
  /** Micro-shares. */
  originalSize: number;
  matched: number;
  orderType: OrderType;
  /** Unix seconds; 0 when none. */
  expiration: number;
  /** Unix seconds. */
  createdAt: number;
  status: "LIVE" | "MATCHED" | "CANCELED";
  associateTrades: string[];
  seq: number;
}

export type TradeStatus = "MATCHED" | "MINED" | "CONFIRMED";

export interface MakerFill {
  order: RestingOrder;
  /** Micro-shares. */
  amount: number;
  /** Maker's own-token price units. */
  price: number;
}

export interface TradeRecord {
  id: string;
  market: PmMarket;
  takerOrderId: string;
  /** Taker owner API key ("" for simulated flow). */
  takerOwner: string;
  takerAddress: string;
  tokenId: string;
  yesToken: boolean;
  side: Side;
  /** Micro-shares. */
  size: number;
  /** Taker own-token price units (volume-weighted). */
  price: number;
  makers: MakerFill[];
  status: TradeStatus;
  /** Unix seconds. */
  matchTime: number;
  lastUpdate: number;
  transactionHash: string;
}

export interface PmEvent {
  id: string;
  key: string;
  slug: string;
  title: string;
  markets: PmMarket[];
}

export interface PmMarket {
  seed: SeedMarket;
  index: number;
  id: string;
  event: PmEvent;
  conditionId: `0x${string}`;
  questionId: `0x${string}`;
  slug: string;
  outcomes: [string, string];
  /** Position of the YES leg in `outcomes` / `tokenIds`. */
  yesIndex: 0 | 1;
  tokenIds: [string, string];
  yesTokenId: string;
  noTokenId: string;
  /** Tick in price units (100 = 0.01, 10 = 0.001). */
  tick: number;
  /** Minimum order size in micro-shares. */
  minSize: number;
  negRisk: boolean;
  status: MarketStatus;
  resolution: "yes" | "no" | null;
  /** YES-terms resting orders. */
  bids: RestingOrder[];
  asks: RestingOrder[];
  /** YES-terms fair value the simulated liquidity quotes around. */
  fair: number;
  lastTrade: { price: number; size: number; side: Side } | null;
  /** Seeded lifetime volume and liquidity (pUSD, float for the listing) plus traded cash. */
  baseVolume: number;
  /** Seeded 24 h volume (pUSD); the listing adds traded cash. */
  baseVolume24h: number;
  tradedCash: number;
  baseLiquidity: number;
  /** YES price prints since the fake started: unix s and price units. */
  prints: { t: number; p: number }[];
  startDate: string;
  /**
   * The fee schedule (Gamma `feeSchedule`, CLOB `fd`), or null for a fee-free market. `baseFee`:
   * `takerBaseFee`/`makerBaseFee` in bps, a cap (1000 on every fee-enabled market), not the rate.
   */
  fees: PmFees | null;
}

export interface PmFees {
  rate: number;
  exponent: number;
  rebateRate: number;
  takerOnly: boolean;
  baseFee: number;
}

/**
 * Taker fee rates by category as published in 2026 (crypto 7%, economics and culture 5%, politics
 * 4%, sports 3%; exponent 1), charged on markets created from the fee rollout on; older markets
 * stay fee-free.
 */
const CATEGORY_FEES: Record<SeedMarket["category"], { rate: number; rebateRate: number }> = {
  crypto: { rate: 0.07, rebateRate: 0.2 },
  economics: { rate: 0.05, rebateRate: 0.25 },
  entertainment: { rate: 0.05, rebateRate: 0.25 },
  weather: { rate: 0.05, rebateRate: 0.25 },
  politics: { rate: 0.04, rebateRate: 0.25 },
  sports: { rate: 0.03, rebateRate: 0.25 },
};
const FEE_ROLLOUT = "2026-03-30T00:00:00Z";

function feesFor(s: SeedMarket, startDate: string): PmFees | null {
  if (s.fees === false || (s.fees === undefined && Date.parse(startDate) < Date.parse(FEE_ROLLOUT)))
    return null;
  const category = CATEGORY_FEES[s.category];
  return {
    rate: typeof s.fees === "object" ? s.fees.rate : category.rate,
    exponent: typeof s.fees === "object" ? s.fees.exponent : 1,
    rebateRate: category.rebateRate,
    takerOnly: true,
    baseFee: 1000,
  };
}

/**
 * A market's listing date and fee schedule as the fake derives them from the seed, with the
 * generator its other listing figures come from next. Exported for the fair-value model, which sizes
 * cross-venue dislocations by both venues' fees.
 */
export function listingOf(seed: number, s: SeedMarket): { startDate: string; fees: PmFees | null; rng: Rng } {
  const rng = new Rng(hash32(`${seed}:meta:${s.key}`));
  const created = new Date(Date.parse(s.closeTime) - rng.int(60, 240) * 86_400_000);
  const startDate = s.openTime ?? s.startDate ?? created.toISOString().replace(/\.\d{3}Z$/, "Z");
  return { startDate, fees: feesFor(s, startDate), rng };
}

export interface Wallet {
  address: string;
  /** pUSD micro-units. */
  collateral: bigint;
  /** tokenId → micro-shares. */
  positions: Map<string, bigint>;
}

/** A change the WebSocket layer fans out. */
export type FeedEvent =
  | { kind: "book"; market: PmMarket }
  | { kind: "levels"; market: PmMarket; changes: LevelChange[] }
  | { kind: "trade"; market: PmMarket; yesPrice: number; size: number; yesSide: Side; txHash: string }
  | { kind: "tick_size"; market: PmMarket; oldTick: number; newTick: number }
  | { kind: "resolved"; market: PmMarket }
  | { kind: "new_market"; market: PmMarket }
  | { kind: "order"; order: RestingOrder; type: "PLACEMENT" | "UPDATE" | "CANCELLATION" }
  | { kind: "user_trade"; trade: TradeRecord };

/** A YES-terms level whose aggregate size changed (0 ⇒ removed). */
export interface LevelChange {
  side: Side;
  price: number;
  size: number;
}

export interface Level {
  price: number;
  size: number;
}

/** The simulated market maker behind the seeded liquidity. */
export const MM_ADDRESS = getAddress("0x5fa4a1fa1c7a2c0f4d0b3ce37b3d9a7c9bb5e001");

export const flip = (s: Side): Side => (s === "BUY" ? "SELL" : "BUY");

/** YES-terms side and price of an order. */
export function yesTerms(o: { yesToken: boolean; side: Side; price: number }): { side: Side; price: number } {
  return o.yesToken ? { side: o.side, price: o.price } : { side: flip(o.side), price: PRICE_SCALE - o.price };
}

export function remaining(o: RestingOrder): number {
  return o.originalSize - o.matched;
}

/** pUSD micro-units for `shares` micro-shares at `price` units (floored). */
export function cashFor(shares: number, price: number): bigint {
  return (BigInt(shares) * BigInt(price)) / BigInt(PRICE_SCALE);
}

export class PolymarketState {
  readonly events: PmEvent[] = [];
  readonly markets: PmMarket[] = [];
  readonly byToken = new Map<string, PmMarket>();
  readonly byCondition = new Map<string, PmMarket>();
  readonly byKey = new Map<string, PmMarket>();
  readonly orders = new Map<string, RestingOrder>();
  readonly trades: TradeRecord[] = [];
  readonly wallets = new Map<string, Wallet>();
  readonly rng: Rng;
  private seq = 0;
  private tradeSeq = 0;
  private listeners = new Set<(e: FeedEvent) => void>();
  /** Unix ms when the fake started; history before it is synthetic, after it is real prints. */
  readonly startedAt: number;

  constructor(
    world: SeedMarket[],
    readonly seed: number,
    readonly defaultCollateral: bigint,
    /** Injected clock (unix ms) so expiry and timestamps are testable. */
    readonly clock: () => number = Date.now,
  ) {
    this.startedAt = clock();
    this.rng = new Rng(seed);
    for (const m of world) this.addSeed(m);
  }

  /** List one more market (at start, or later from the script: a new listing). */
  addSeed(s: SeedMarket): PmMarket {
    if (this.byKey.has(s.key)) throw new Error(`polymarket fake: duplicate market key ${s.key}`);
    let event = this.events.find((e) => e.key === s.eventKey);
    if (!event) {
      event = {
        id: String(30_001 + this.events.length),
        key: s.eventKey,
        slug: s.eventKey,
        title: s.eventTitle,
        markets: [],
      };
      this.events.push(event);
    }
    const m = this.buildMarket(s, this.markets.length, event);
    event.markets.push(m);
    this.markets.push(m);
    this.byKey.set(s.key, m);
    this.byCondition.set(m.conditionId, m);
    for (const t of m.tokenIds) this.byToken.set(t, m);
    if (m.status === "open") this.quote(m, new Rng(hash32(`${this.seed}:book:${s.key}`)));
    return m;
  }

  private buildMarket(s: SeedMarket, index: number, event: PmEvent): PmMarket {
    const outcomes: [string, string] = s.outcomes ?? ["Yes", "No"];
    const yesLabel = s.yesLabel ?? "Yes";
    const yesIndex: 0 | 1 = outcomes[1] === yesLabel ? 1 : 0;
    const tokenIds: [string, string] = [
      uint256Decimal(`polymarket:token:${s.key}:${outcomes[0]}`),
      uint256Decimal(`polymarket:token:${s.key}:${outcomes[1]}`),
    ];
    const { startDate, fees, rng: r } = listingOf(this.seed, s);
    const tick = Math.round(s.tickSize * PRICE_SCALE);
    // Polymarket has no pre-open state (VENUES.md §1.2): an "unopened" seed is served as open.
    const status: MarketStatus = s.status === undefined || s.status === "unopened" ? "open" : s.status;
    // Generated in this order whether or not the seed overrides them, so other values stay put.
    const genVolume = Math.round(r.next() * 2_000_000 * 100) / 100 + 5_000;
    const genLiquidity = Math.round((r.next() * 80_000 + 2_000) * 100) / 100;
    const baseVolume = s.volume ?? genVolume;
    return {
      seed: s,
      index,
      id: String(500_001 + index),
      event,
      conditionId: bytes32Hex(`polymarket:condition:${s.key}`),
      questionId: bytes32Hex(`polymarket:question:${s.key}`),
      slug: s.key,
      outcomes,
      yesIndex,
      tokenIds,
      yesTokenId: tokenIds[yesIndex],
      noTokenId: tokenIds[yesIndex === 0 ? 1 : 0],
      tick,
      minSize: Math.round((s.minSize ?? 5) * MICRO),
      negRisk: s.negRisk ?? false,
      status,
      resolution: status === "resolved" ? (s.resolution ?? "yes") : null,
      bids: [],
      asks: [],
      fair: Math.min(PRICE_SCALE - tick, Math.max(tick, snapPrice(s.yesPrice, tick))),
      lastTrade: null,
      baseVolume,
      baseVolume24h: s.volume24h ?? baseVolume * 0.004,
      tradedCash: 0,
      baseLiquidity: s.liquidity ?? genLiquidity,
      prints: [],
      startDate,
      fees,
    };
  }

  nextSeq(): number {
    this.seq += 1;
    return this.seq;
  }

  subscribe(fn: (e: FeedEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  emit(e: FeedEvent): void {
    for (const fn of this.listeners) fn(e);
  }

  /** Find a market by token id, condition id, seed key or slug. */
  resolveMarket(ref: string): PmMarket | undefined {
    return this.byToken.get(ref) ?? this.byCondition.get(ref) ?? this.byKey.get(ref);
  }

  wallet(address: string): Wallet {
    const key = address.toLowerCase();
    let w = this.wallets.get(key);
    if (!w) {
      w = { address, collateral: this.defaultCollateral, positions: new Map() };
      this.wallets.set(key, w);
    }
    return w;
  }

  // ---- books -------------------------------------------------------------------------------

  /** Aggregated YES-terms levels, best first. */
  yesLevels(m: PmMarket, side: Side): Level[] {
    const src = side === "BUY" ? m.bids : m.asks;
    const agg = new Map<number, number>();
    for (const o of src) {
      const { price } = yesTerms(o);
      agg.set(price, (agg.get(price) ?? 0) + remaining(o));
    }
    const levels = [...agg.entries()].map(([price, size]) => ({ price, size })).filter((l) => l.size > 0);
    levels.sort((a, b) => (side === "BUY" ? b.price - a.price : a.price - b.price));
    return levels;
  }

  /** Levels of one token's book, best first. The NO book is the complement of the YES book. */
  tokenLevels(m: PmMarket, tokenId: string): { bids: Level[]; asks: Level[] } {
    const yesBids = this.yesLevels(m, "BUY");
    const yesAsks = this.yesLevels(m, "SELL");
    if (tokenId === m.yesTokenId) return { bids: yesBids, asks: yesAsks };
    const comp = (l: Level): Level => ({ price: PRICE_SCALE - l.price, size: l.size });
    return { bids: yesAsks.map(comp), asks: yesBids.map(comp) };
  }

  bestYes(m: PmMarket): { bid: number | null; ask: number | null } {
    return {
      bid: this.yesLevels(m, "BUY")[0]?.price ?? null,
      ask: this.yesLevels(m, "SELL")[0]?.price ?? null,
    };
  }

  /** Mutate a market's book and emit the level changes (as `price_change`) it caused. */
  mutate<T>(m: PmMarket, fn: () => T): T {
    const before = this.levelMap(m);
    const result = fn();
    this.sortBook(m);
    const after = this.levelMap(m);
    const changes: LevelChange[] = [];
    for (const [k, size] of after) if (before.get(k) !== size) changes.push(this.changeOf(k, size));
    for (const k of before.keys()) if (!after.has(k)) changes.push(this.changeOf(k, 0));
    if (changes.length > 0) this.emit({ kind: "levels", market: m, changes });
    this.checkTickSize(m);
    return result;
  }

  private levelMap(m: PmMarket): Map<string, number> {
    const map = new Map<string, number>();
    for (const side of ["BUY", "SELL"] as const)
      for (const l of this.yesLevels(m, side)) map.set(`${side}:${l.price}`, l.size);
    return map;
  }

  private changeOf(k: string, size: number): LevelChange {
    const [side, price] = k.split(":") as [Side, string];
    return { side, price: Number(price), size };
  }

  /** Price-time priority in YES terms; expired/finished orders drop out. */
  sortBook(m: PmMarket): void {
    m.bids = m.bids.filter((o) => o.status === "LIVE" && remaining(o) > 0);
    m.asks = m.asks.filter((o) => o.status === "LIVE" && remaining(o) > 0);
    m.bids.sort((a, b) => yesTerms(b).price - yesTerms(a).price || a.seq - b.seq);
    m.asks.sort((a, b) => yesTerms(a).price - yesTerms(b).price || a.seq - b.seq);
  }

  /** Polymarket moves a market to the 0.001 tick once its book trades beyond 0.96 / below 0.04. */
  private checkTickSize(m: PmMarket): void {
    if (m.tick !== 100) return;
    const { bid, ask } = this.bestYes(m);
    const hi = 0.96 * PRICE_SCALE;
    const lo = 0.04 * PRICE_SCALE;
    if ((bid !== null && bid > hi) || (ask !== null && ask < lo)) this.setTick(m, 10);
  }

  setTick(m: PmMarket, tick: number): void {
    if (tick === m.tick) return;
    const oldTick = m.tick;
    m.tick = tick;
    this.emit({ kind: "tick_size", market: m, oldTick, newTick: tick });
  }

  makeSynthetic(m: PmMarket, yesSide: Side, yesPrice: number, size: number): RestingOrder {
    return {
      id: `0x${sha256Hex(`mm:${m.seed.key}:${this.nextSeq()}:${this.seed}`)}`,
      owner: null,
      makerAddress: MM_ADDRESS,
      signer: MM_ADDRESS,
      market: m,
      tokenId: m.yesTokenId,
      yesToken: true,
      side: yesSide,
      price: yesPrice,
      originalSize: size,
      matched: 0,
      orderType: "GTC",
      expiration: 0,
      createdAt: Math.floor(this.clock() / 1000),
      status: "LIVE",
      associateTrades: [],
      seq: this.seq,
    };
  }

  /**
   * Replace the simulated liquidity with a ladder around `m.fair`, or from a given best bid and ask
   * outwards (users' orders stay).
   */
  quote(m: PmMarket, rng: Rng = this.rng, top?: { bid: number; ask: number }): void {
    m.bids = m.bids.filter((o) => o.owner !== null);
    m.asks = m.asks.filter((o) => o.owner !== null);
    // Levels 0.01 apart on 0.01 markets, 0.005 apart on finer ones; always on the market's tick.
    const step = m.tick >= 100 ? m.tick : Math.ceil(50 / m.tick) * m.tick;
    const snapped = Math.round(m.fair / m.tick) * m.tick;
    const fair = Math.min(PRICE_SCALE - m.tick, Math.max(m.tick, snapped));
    const bid0 = top
      ? Math.min(Math.max(m.tick, Math.floor(top.bid / m.tick) * m.tick), PRICE_SCALE - 2 * m.tick)
      : Math.max(m.tick, fair - step);
    const ask0 = top
      ? Math.max(Math.min(PRICE_SCALE - m.tick, Math.ceil(top.ask / m.tick) * m.tick), bid0 + m.tick)
      : Math.min(PRICE_SCALE - m.tick, fair + step);
    for (let i = 0; i < 8; i += 1) {
      const size = (rng.int(20, 400) + i * rng.int(50, 250)) * MICRO;
      const bp = bid0 - i * step;
      const ap = ask0 + i * step;
      if (bp >= m.tick && bp < ask0) m.bids.push(this.makeSynthetic(m, "BUY", bp, size));
      if (ap <= PRICE_SCALE - m.tick && ap > bid0)
        m.asks.push(this.makeSynthetic(m, "SELL", ap, rng.int(20, 400) * MICRO + i * 120 * MICRO));
    }
    // The deep resting orders at the extremes real books show (VENUES.md §1.3, "ghost levels").
    const lowest = bid0 - 7 * step;
    const highest = ask0 + 7 * step;
    if (lowest > m.tick) m.bids.push(this.makeSynthetic(m, "BUY", m.tick, rng.int(5_000, 50_000) * MICRO));
    if (highest < PRICE_SCALE - m.tick)
      m.asks.push(this.makeSynthetic(m, "SELL", PRICE_SCALE - m.tick, rng.int(5_000, 50_000) * MICRO));
    this.sortBook(m);
  }

  /** Replace the whole book with given YES-terms levels (users' orders are cancelled). */
  setLevels(m: PmMarket, bids: Level[], asks: Level[]): void {
    for (const o of [...m.bids, ...m.asks]) if (o.owner !== null) this.cancelOrder(o, false);
    m.bids = bids.map((l) => this.makeSynthetic(m, "BUY", l.price, l.size));
    m.asks = asks.map((l) => this.makeSynthetic(m, "SELL", l.price, l.size));
  }

  cancelOrder(o: RestingOrder, resort = true): void {
    if (o.status !== "LIVE") return;
    o.status = "CANCELED";
    if (o.owner !== null) this.emit({ kind: "order", order: o, type: "CANCELLATION" });
    if (resort) this.sortBook(o.market);
  }

  // ---- matching ----------------------------------------------------------------------------

  /**
   * Match a taker against the opposite YES-terms side. The taker limit is in its own token terms;
   * fills happen at each maker's price. `budget` (pUSD micro) bounds a market BUY instead of shares.
   */
  match(
    m: PmMarket,
    taker: { yesToken: boolean; side: Side; limit: number; shares?: number; budget?: bigint },
    dryRun = false,
  ): { fills: MakerFill[]; shares: number; cash: bigint; budgetLeft: bigint | null } {
    const yesSide = taker.yesToken ? taker.side : flip(taker.side);
    const book = yesSide === "BUY" ? m.asks : m.bids;
    const fills: MakerFill[] = [];
    let sharesLeft = taker.shares ?? Number.MAX_SAFE_INTEGER;
    let budget = taker.budget ?? null;
    let shares = 0;
    let cash = 0n;
    for (const maker of book) {
      if (maker.status !== "LIVE") continue;
      const makerYes = yesTerms(maker).price;
      const own = taker.yesToken ? makerYes : PRICE_SCALE - makerYes;
      const acceptable = taker.side === "BUY" ? own <= taker.limit : own >= taker.limit;
      if (!acceptable) break;
      let qty = Math.min(remaining(maker), sharesLeft);
      if (budget !== null) qty = Math.min(qty, Number((budget * BigInt(PRICE_SCALE)) / BigInt(own)));
      if (qty <= 0) break;
      if (!dryRun) {
        maker.matched += qty;
        if (remaining(maker) === 0) maker.status = "MATCHED";
      }
      fills.push({ order: maker, amount: qty, price: maker.price });
      const c = cashFor(qty, own);
      shares += qty;
      cash += c;
      sharesLeft -= qty;
      if (budget !== null) budget -= c;
      if (sharesLeft <= 0) break;
    }
    return { fills, shares, cash, budgetLeft: budget };
  }

  /** Would a taker at this own-token limit cross the book right now? */
  crosses(m: PmMarket, yesToken: boolean, side: Side, limit: number): boolean {
    const yesSide = yesToken ? side : flip(side);
    const yesLimit = yesToken ? limit : PRICE_SCALE - limit;
    const best = this.yesLevels(m, flip(yesSide))[0];
    if (!best) return false;
    return yesSide === "BUY" ? best.price <= yesLimit : best.price >= yesLimit;
  }

  /** Settle fills in wallets, record the trade, and emit trade and order events. */
  recordTrade(
    m: PmMarket,
    taker: {
      orderId: string;
      owner: string;
      address: string;
      tokenId: string;
      yesToken: boolean;
      side: Side;
    },
    fills: MakerFill[],
  ): TradeRecord | null {
    if (fills.length === 0) return null;
    const now = Math.floor(this.clock() / 1000);
    this.tradeSeq += 1;
    const id = uuidFrom(`${this.seed}:trade:${this.tradeSeq}`);
    const txHash = `0x${sha256Hex(`tx:${this.seed}:${this.tradeSeq}`)}`;
    let size = 0;
    let cashUnits = 0n;
    for (const f of fills) {
      const makerYes = yesTerms({ yesToken: f.order.yesToken, side: f.order.side, price: f.price }).price;
      const own = taker.yesToken ? makerYes : PRICE_SCALE - makerYes;
      size += f.amount;
      cashUnits += BigInt(f.amount) * BigInt(own);
      this.settle(f.order.makerAddress, f.order.owner, f.order.tokenId, f.order.side, f.amount, f.price);
      this.settle(taker.address, taker.owner || null, taker.tokenId, taker.side, f.amount, own);
      // The taker pays the market's fee in pUSD on each fill; makers pay nothing on a taker-only
      // schedule (every one seen), else the same curve at their own price.
      if (m.fees && taker.owner)
        this.wallet(taker.address).collateral -= takerFeeMicro(f.amount, own, m.fees);
      if (m.fees && !m.fees.takerOnly && f.order.owner !== null)
        this.wallet(f.order.makerAddress).collateral -= takerFeeMicro(f.amount, f.price, m.fees);
      f.order.associateTrades.push(id);
    }
    const price = Number(cashUnits / BigInt(size));
    const trade: TradeRecord = {
      id,
      market: m,
      takerOrderId: taker.orderId,
      takerOwner: taker.owner,
      takerAddress: taker.address,
      tokenId: taker.tokenId,
      yesToken: taker.yesToken,
      side: taker.side,
      size,
      price,
      makers: fills,
      status: "MATCHED",
      matchTime: now,
      lastUpdate: now,
      transactionHash: txHash,
    };
    this.trades.push(trade);
    const last = fills.at(-1)!;
    const lastYes = last.order.yesToken ? last.price : PRICE_SCALE - last.price;
    const yesSide = taker.yesToken ? taker.side : flip(taker.side);
    m.lastTrade = { price: lastYes, size, side: yesSide };
    m.tradedCash += Number(cashUnits / BigInt(PRICE_SCALE)) / MICRO;
    m.prints.push({ t: now, p: lastYes });
    this.emit({ kind: "trade", market: m, yesPrice: lastYes, size, yesSide, txHash });
    for (const f of fills)
      if (f.order.owner !== null) this.emit({ kind: "order", order: f.order, type: "UPDATE" });
    if (taker.owner || fills.some((f) => f.order.owner !== null)) this.emit({ kind: "user_trade", trade });
    return trade;
  }

  /** Move cash and tokens for one side of a fill; simulated liquidity has no wallet. */
  private settle(
    address: string,
    owner: string | null,
    tokenId: string,
    side: Side,
    shares: number,
    price: number,
  ) {
    if (owner === null) return;
    const w = this.wallet(address);
    const cash = cashFor(shares, price);
    const pos = w.positions.get(tokenId) ?? 0n;
    if (side === "BUY") {
      w.collateral -= cash;
      w.positions.set(tokenId, pos + BigInt(shares));
    } else {
      w.collateral += cash;
      w.positions.set(tokenId, pos - BigInt(shares));
    }
  }

  /** Advance trade lifecycles MATCHED → MINED → CONFIRMED, one step per call. */
  advanceTrades(): void {
    const now = Math.floor(this.clock() / 1000);
    for (const t of this.trades) {
      if (t.status === "CONFIRMED") continue;
      t.status = t.status === "MATCHED" ? "MINED" : "CONFIRMED";
      t.lastUpdate = now;
      if (t.takerOwner || t.makers.some((f) => f.order.owner !== null))
        this.emit({ kind: "user_trade", trade: t });
    }
  }

  /** pUSD and shares an address has committed to its live orders. */
  reserved(address: string): { cash: bigint; shares: Map<string, bigint> } {
    let cash = 0n;
    const shares = new Map<string, bigint>();
    const a = address.toLowerCase();
    for (const o of this.orders.values()) {
      if (o.status !== "LIVE" || o.makerAddress.toLowerCase() !== a) continue;
      if (o.side === "BUY") cash += cashFor(remaining(o), o.price);
      else shares.set(o.tokenId, (shares.get(o.tokenId) ?? 0n) + BigInt(remaining(o)));
    }
    return { cash, shares };
  }

  /** Trade away any crossed levels (after a requote or a scripted book): the older order is the maker. */
  uncross(m: PmMarket): void {
    for (let guard = 0; guard < 1000; guard += 1) {
      this.sortBook(m);
      const bid = m.bids[0];
      const ask = m.asks[0];
      if (!bid || !ask || yesTerms(bid).price < yesTerms(ask).price) return;
      const [maker, taker] = bid.seq < ask.seq ? [bid, ask] : [ask, bid];
      const qty = Math.min(remaining(maker), remaining(taker));
      maker.matched += qty;
      taker.matched += qty;
      if (remaining(maker) === 0) maker.status = "MATCHED";
      if (remaining(taker) === 0) taker.status = "MATCHED";
      const trade = this.recordTrade(
        m,
        {
          orderId: taker.id,
          owner: taker.owner ?? "",
          address: taker.makerAddress,
          tokenId: taker.tokenId,
          yesToken: taker.yesToken,
          side: taker.side,
        },
        [{ order: maker, amount: qty, price: maker.price }],
      );
      if (trade && taker.owner !== null) {
        taker.associateTrades.push(trade.id);
        this.emit({ kind: "order", order: taker, type: "UPDATE" });
      }
    }
  }

  /** A trade by simulated flow: takes liquidity up to `limit` (own-token terms of the YES token). */
  simulatedTake(m: PmMarket, yesSide: Side, yesLimit: number, shares: number): TradeRecord | null {
    return this.mutate(m, () => {
      const r = this.match(m, { yesToken: true, side: yesSide, limit: yesLimit, shares });
      const id = `0x${sha256Hex(`sim:${this.seed}:${this.nextSeq()}`)}`;
      return this.recordTrade(
        m,
        { orderId: id, owner: "", address: MM_ADDRESS, tokenId: m.yesTokenId, yesToken: true, side: yesSide },
        r.fills,
      );
    });
  }

  /** Record a print that did not come from the book (scripted), and show it on the feed. */
  printOnly(m: PmMarket, yesSide: Side, yesPrice: number, shares: number): void {
    const now = Math.floor(this.clock() / 1000);
    m.lastTrade = { price: yesPrice, size: shares, side: yesSide };
    m.tradedCash += Number(cashFor(shares, yesPrice)) / MICRO;
    m.prints.push({ t: now, p: yesPrice });
    const txHash = `0x${sha256Hex(`print:${this.seed}:${this.nextSeq()}`)}`;
    this.emit({ kind: "trade", market: m, yesPrice, size: shares, yesSide, txHash });
  }

  /** Close (or resolve) a market: live orders are cancelled and its book goes away. */
  finish(m: PmMarket, status: "closed" | "resolved", resolution: "yes" | "no" | null): void {
    this.mutate(m, () => {
      for (const o of [...m.bids, ...m.asks]) {
        if (o.owner !== null) this.cancelOrder(o, false);
        else o.status = "CANCELED";
      }
    });
    m.status = status;
    m.resolution = resolution;
    if (status === "resolved") this.emit({ kind: "resolved", market: m });
  }

  /** Cancel GTD orders whose expiration has passed. */
  expireOrders(nowS: number): void {
    for (const o of this.orders.values()) {
      if (o.status === "LIVE" && o.orderType === "GTD" && o.expiration > 0 && o.expiration <= nowS)
        this.mutate(o.market, () => this.cancelOrder(o));
    }
  }
}
