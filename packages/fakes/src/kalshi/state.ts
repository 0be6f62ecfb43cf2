/**
 * The fake Kalshi's world: series, events and markets derived from the seed world (plus a few
 * multivariate combo markets, which real `GET /markets?status=open` is dominated by), one order book
 * per market kept in YES terms (YES bids, and NO bids stored as YES asks at 1 − p, so the two
 * documented bid ladders are always exact complements), accounts, orders, fills and trades.
 * Pure data and lookups; the rules that change it live in `engine.ts`.
 */
import type { FairValues } from "../fair";
import type { SeedMarket } from "../world/seed";
import { pathPrice } from "./candles";
import { COUNT_SCALE, hash32, PRICE_SCALE, Rng, uuidFrom } from "./units";

/** Object-level market status (VENUES.md §2.2; filter values differ). */
export type MarketStatus = "initialized" | "inactive" | "active" | "closed" | "determined" | "finalized";
export type BookSide = "bid" | "ask";
export type PriceLevelStructure = "linear_cent" | "deci_cent" | "tapered_deci_cent";
export type OutcomeSide = "yes" | "no";
export type TimeInForce = "fill_or_kill" | "good_till_canceled" | "immediate_or_cancel";
export type StpType = "taker_at_cross" | "maker";

/** A resting quantity on the YES book; `owner` null means the fake's own simulated liquidity. */
export interface BookEntry {
  seq: number;
  owner: string | null;
  order: KOrder | null;
  /** YES price units. */
  price: number;
  /** Count units. */
  remaining: number;
}

export interface KMarket {
  ticker: string;
  marketId: string;
  eventTicker: string;
  seriesTicker: string;
  title: string;
  yesSubTitle: string;
  noSubTitle: string;
  rulesPrimary: string;
  rulesSecondary: string;
  settlementSource: string;
  category: string;
  openMs: number;
  closeMs: number;
  createdMs: number;
  updatedMs: number;
  status: MarketStatus;
  result: "" | "yes" | "no";
  /**
   * Tick in price units: 100 (linear_cent) or 10 (deci_cent, and tapered_deci_cent, whose finest tick
   * the order check accepts everywhere; the exact bands are published in `price_ranges`).
   */
  tick: number;
  priceLevelStructure: PriceLevelStructure;
  /**
   * Whether orders may use fractional counts (0.01 contract). The venue no longer publishes this per
   * market (`fractional_trading_enabled` was removed on 2026-07-09), so it is not on the wire; set it
   * with `script.setFractional`.
   */
  fractional: boolean;
  /** When the market settled (unix ms), for the historical cutoff; null until it settles. */
  settledMs: number | null;
  mve: {
    collectionTicker: string;
    legs: { event_ticker: string; market_ticker: string; side: string }[];
  } | null;
  lastPrice: number;
  previousPrice: number;
  previousBid: number;
  previousAsk: number;
  volume: number;
  volume24h: number;
  openInterest: number;
  lastTradeSize: number;
  /** YES bids, best (highest) first, then time. */
  bids: BookEntry[];
  /** NO bids as YES asks, best (lowest) first, then time. */
  asks: BookEntry[];
  /** Seed probability, for candles and the simulation's anchor. */
  anchor: number;
}

export interface KEvent {
  eventTicker: string;
  seriesTicker: string;
  title: string;
  subTitle: string;
  category: string;
  mutuallyExclusive: boolean;
  settlementSource: string;
  strikeMs: number;
  markets: KMarket[];
  isMve: boolean;
  /** `fee_type_override` / `fee_multiplier_override` (SDK 3.30 EventData): null when the event has none. */
  feeTypeOverride: KFeeType | null;
  feeMultiplierOverride: number | null;
}

/** SDK 3.30 `FeeType`. */
export type KFeeType = "quadratic" | "quadratic_with_maker_fees" | "quadratic_with_combo_maker_fees" | "flat";

export interface KSeries {
  ticker: string;
  title: string;
  category: string;
  frequency: string;
  settlementSource: string;
  /** `fee_type` and `fee_multiplier` (SDK 3.30 Series). */
  feeType: KFeeType;
  feeMultiplier: number;
  /** `last_updated_ts` of the series' metadata, unix ms (`GET /series?min_updated_ts=`). */
  updatedMs: number;
}

export interface KOrder {
  orderId: string;
  userId: string;
  clientOrderId: string;
  ticker: string;
  /** The one direction bit (VENUES-AUDIT #11): bid ≡ outcome yes, ask ≡ outcome no. */
  bookSide: BookSide;
  outcomeSide: OutcomeSide;
  /** Limit in YES price units. */
  yesPrice: number;
  initialCount: number;
  filled: number;
  remaining: number;
  status: "resting" | "canceled" | "executed";
  timeInForce: TimeInForce;
  stp: StpType;
  postOnly: boolean;
  reduceOnly: boolean;
  expirationTs: number | null;
  createdMs: number;
  updatedMs: number;
  takerFillCostMicro: number;
  makerFillCostMicro: number;
  takerFeesMicro: number;
  makerFeesMicro: number;
  /** Sum of YES price × count over fills, for average fill price. */
  fillNotional: number;
  /** Micro-dollars reserved for the resting remainder. */
  reservedMicro: number;
  /** The order's fee accumulator: rounding overpaid across its fills, not yet rebated (micro-dollars). */
  feeCarryMicro: number;
}

export interface KFill {
  fillId: string;
  orderId: string;
  userId: string;
  clientOrderId: string;
  ticker: string;
  bookSide: BookSide;
  outcomeSide: OutcomeSide;
  count: number;
  yesPrice: number;
  isTaker: boolean;
  feeMicro: number;
  postPosition: number;
  createdMs: number;
}

export interface KTrade {
  tradeId: string;
  ticker: string;
  yesPrice: number;
  count: number;
  takerSide: OutcomeSide;
  createdMs: number;
}

export interface Position {
  ticker: string;
  eventTicker: string;
  /** Signed count units: + YES, − NO. */
  position: number;
  exposureMicro: number;
  realizedMicro: number;
  feesMicro: number;
  tradedMicro: number;
  updatedMs: number;
}

export interface Account {
  userId: string;
  cashMicro: number;
  reservedMicro: number;
  positions: Map<string, Position>;
  updatedMs: number;
}

export interface ApiKey {
  keyId: string;
  publicKeyPem: string;
  userId: string;
}

/** What the engine tells the WebSocket layer. */
export type StateEvent =
  | {
      kind: "delta";
      ticker: string;
      side: OutcomeSide;
      price: number;
      delta: number;
      /** The order whose action caused the change, so its owner sees `client_order_id`. */
      origin?: { userId: string; clientOrderId: string };
    }
  | { kind: "trade"; trade: KTrade }
  | { kind: "ticker"; ticker: string }
  | { kind: "fill"; fill: KFill };

export class KalshiState {
  readonly series = new Map<string, KSeries>();
  readonly events = new Map<string, KEvent>();
  readonly markets = new Map<string, KMarket>();
  /** Listing order of markets: combos first (as on the real venue), then the seed order. */
  readonly marketOrder: KMarket[] = [];
  readonly accounts = new Map<string, Account>();
  readonly apiKeys = new Map<string, ApiKey>();
  readonly orders = new Map<string, KOrder>();
  readonly fills: KFill[] = [];
  readonly trades: KTrade[] = [];
  readonly listeners = new Set<(ev: StateEvent) => void>();
  readonly rng: Rng;
  /**
   * Kalshi's live/historical boundary (`GET /historical/cutoff`), unix ms: markets settled before it,
   * fills created before it and orders closed before it are served only under `/historical/*`, and
   * the live endpoints answer as if they did not exist. Null: nothing is archived yet.
   */
  historicalCutoffMs: number | null = null;
  /** Simulation steps taken (`tick`): the position on the shared fair-value paths. */
  step = 0;
  private seqCounter = 0;
  private idCounter = 0;

  constructor(
    readonly world: SeedMarket[],
    readonly seed: number,
    readonly nowMs: () => number = Date.now,
    /** The cross-venue fair values markets with a twin on the other venue follow; none: all wander. */
    readonly fair: FairValues | null = null,
  ) {
    this.rng = new Rng(seed);
    buildWorld(this);
  }

  nextSeq(): number {
    this.seqCounter += 1;
    return this.seqCounter;
  }

  /** Deterministic UUID-shaped ids: same seed, same sequence of ids. */
  nextId(kind: string): string {
    this.idCounter += 1;
    return uuidFrom(`kalshi:${this.seed}:${kind}:${this.idCounter}`);
  }

  emit(ev: StateEvent): void {
    for (const l of this.listeners) l(ev);
  }

  /** The fee type and multiplier a market's fills pay: its event's override, else its series'. */
  feesOf(m: KMarket): { feeType: KFeeType; feeMultiplier: number } {
    const event = this.events.get(m.eventTicker);
    const series = this.series.get(m.seriesTicker);
    return {
      feeType: event?.feeTypeOverride ?? series?.feeType ?? "quadratic",
      feeMultiplier: event?.feeMultiplierOverride ?? series?.feeMultiplier ?? 1,
    };
  }

  /** A settled market past the cutoff: only `/historical/markets` serves it. */
  archivedMarket(m: KMarket): boolean {
    return this.historicalCutoffMs !== null && m.settledMs !== null && m.settledMs < this.historicalCutoffMs;
  }

  /** A live market: known and not archived. */
  liveMarket(ticker: string): KMarket | undefined {
    const m = this.markets.get(ticker);
    return m && !this.archivedMarket(m) ? m : undefined;
  }

  /** A fill created before the cutoff: only `/historical/fills` serves it. */
  archivedFill(f: KFill): boolean {
    return this.historicalCutoffMs !== null && f.createdMs < this.historicalCutoffMs;
  }

  /** A cancelled or executed order last updated before the cutoff (resting orders always stay live). */
  archivedOrder(o: KOrder): boolean {
    return (
      this.historicalCutoffMs !== null && o.status !== "resting" && o.updatedMs < this.historicalCutoffMs
    );
  }

  account(userId: string): Account {
    let a = this.accounts.get(userId);
    if (!a) {
      a = { userId, cashMicro: 0, reservedMicro: 0, positions: new Map(), updatedMs: this.nowMs() };
      this.accounts.set(userId, a);
    }
    return a;
  }
}

/**
 * Series fee types and multipliers, as the live venue shows them: most series `quadratic` × 1 (the
 * general 0.07), the major sports and macro series with maker fees, combos with combo maker fees,
 * an index series at half the multiplier, and one `flat` series. Anything else is quadratic × 1.
 */
const SERIES_FEES: Record<string, { feeType: KFeeType; feeMultiplier: number }> = {
  KXFEDDECISION: { feeType: "quadratic_with_maker_fees", feeMultiplier: 1 },
  KXCPIYOY: { feeType: "quadratic_with_maker_fees", feeMultiplier: 1 },
  KXNBAGAME: { feeType: "quadratic_with_maker_fees", feeMultiplier: 1 },
  KXNFLGAME: { feeType: "quadratic_with_maker_fees", feeMultiplier: 1 },
  KXINXY: { feeType: "quadratic", feeMultiplier: 0.5 },
  KXTIMEPOY: { feeType: "flat", feeMultiplier: 1 },
  KXMVECROSSCATEGORY: { feeType: "quadratic_with_combo_maker_fees", feeMultiplier: 1 },
};

/** Events whose fee overrides their series' (an event can carry its own fee type and multiplier). */
const EVENT_FEE_OVERRIDES: Record<string, { feeType: KFeeType; feeMultiplier: number }> = {
  "KXNFLGAME-26DEC27KCDEN": { feeType: "quadratic", feeMultiplier: 0.5 },
};

const DEFAULT_FEES = { feeType: "quadratic", feeMultiplier: 1 } as const;

/** A new series with its fees. */
function newSeries(ticker: string, fields: Omit<KSeries, "ticker" | "feeType" | "feeMultiplier">): KSeries {
  return { ticker, ...(SERIES_FEES[ticker] ?? DEFAULT_FEES), ...fields };
}

/** Series ticker: the event ticker's first segment (the seed has no explicit series). */
function seriesOf(eventTicker: string): string {
  return eventTicker.split("-")[0] ?? eventTicker;
}

/**
 * The fee a seed market's fills pay once listed (what `feesOf` answers for it), for the fair-value
 * model, which sizes cross-venue dislocations by both venues' fees.
 */
export function seedFees(s: SeedMarket): { feeType: KFeeType; feeMultiplier: number } {
  return EVENT_FEE_OVERRIDES[s.eventKey] ?? SERIES_FEES[s.seriesKey ?? seriesOf(s.eventKey)] ?? DEFAULT_FEES;
}

function statusOf(s: SeedMarket): MarketStatus {
  if (s.status === "resolved") return "finalized";
  if (s.status === "closed") return "closed";
  if (s.status === "unopened") return "initialized";
  return "active";
}

function structureOf(s: SeedMarket): PriceLevelStructure {
  return s.priceLevelStructure ?? (s.tickSize === 0.001 ? "deci_cent" : "linear_cent");
}

/** A seed market's tick in price units: a cent on `linear_cent`, else the finest 0.001. */
export function seedTick(s: SeedMarket): number {
  return structureOf(s) === "linear_cent" ? 100 : 10;
}

/** A seeded value when the seed gives one, else the generated one (generated either way, so the RNG stream is the same). */
function orSeed(seeded: number | undefined, generated: number): number {
  return seeded === undefined ? generated : Math.round(seeded * COUNT_SCALE);
}

/** Seed house liquidity: five levels a side around the seed price, sizes from the RNG. */
export function seedBook(state: KalshiState, m: KMarket, yesPrice: number): void {
  m.bids = [];
  m.asks = [];
  if (m.status !== "active") return;
  const rng = new Rng(hash32(`${state.seed}:${m.ticker}:book`));
  const mid = Math.round((yesPrice * PRICE_SCALE) / m.tick) * m.tick;
  const spread = m.tick * rng.int(1, 2);
  let bid = Math.min(mid - Math.floor(spread / 2 / m.tick) * m.tick, PRICE_SCALE - 2 * m.tick);
  bid = Math.max(bid, m.tick);
  let ask = Math.max(bid + spread, bid + m.tick);
  ask = Math.min(ask, PRICE_SCALE - m.tick);
  for (let i = 0; i < 5; i++) {
    const b = bid - i * m.tick * rng.int(1, 2);
    const a = ask + i * m.tick * rng.int(1, 2);
    if (b >= m.tick)
      m.bids.push({
        seq: state.nextSeq(),
        owner: null,
        order: null,
        price: b,
        remaining: rng.int(5, 400) * COUNT_SCALE,
      });
    if (a <= PRICE_SCALE - m.tick)
      m.asks.push({
        seq: state.nextSeq(),
        owner: null,
        order: null,
        price: a,
        remaining: rng.int(5, 400) * COUNT_SCALE,
      });
  }
  sortBook(m);
}

export function sortBook(m: KMarket): void {
  m.bids.sort((x, y) => y.price - x.price || x.seq - y.seq);
  m.asks.sort((x, y) => x.price - y.price || x.seq - y.seq);
}

function buildWorld(state: KalshiState): void {
  const now = state.nowMs();
  const seeds = state.world.filter((s) => s.venue === "kalshi");
  const combos: KMarket[] = [];
  const regular: KMarket[] = [];
  const exclusive = new Map<string, boolean>();
  for (const s of seeds) {
    const eventTicker = s.eventKey;
    const seriesTicker = s.seriesKey ?? seriesOf(eventTicker);
    if (s.mutuallyExclusive !== undefined) exclusive.set(eventTicker, s.mutuallyExclusive);
    if (!state.series.has(seriesTicker)) {
      state.series.set(
        seriesTicker,
        newSeries(seriesTicker, {
          title: s.eventTitle,
          category: titleCase(s.category),
          frequency: "custom",
          settlementSource: s.settlementSource,
          updatedMs: now - 30 * 86_400_000,
        }),
      );
    }
    let ev = state.events.get(eventTicker);
    if (!ev) {
      ev = {
        eventTicker,
        seriesTicker,
        title: s.eventTitle,
        subTitle: "",
        category: titleCase(s.category),
        mutuallyExclusive: false,
        settlementSource: s.settlementSource,
        strikeMs: Date.parse(s.closeTime),
        markets: [],
        isMve: false,
        feeTypeOverride: EVENT_FEE_OVERRIDES[eventTicker]?.feeType ?? null,
        feeMultiplierOverride: EVENT_FEE_OVERRIDES[eventTicker]?.feeMultiplier ?? null,
      };
      state.events.set(eventTicker, ev);
    }
    const rng = new Rng(hash32(`${state.seed}:${s.key}:stats`));
    const structure = structureOf(s);
    const tick = seedTick(s);
    const price = Math.round((s.yesPrice * PRICE_SCALE) / tick) * tick;
    const closeMs = Date.parse(s.closeTime);
    const opened = s.openTime ?? s.startDate;
    const openMs = opened ? Date.parse(opened) : closeMs - 120 * 86_400_000;
    const m: KMarket = {
      ticker: s.key,
      marketId: uuidFrom(`kalshi-market:${s.key}`),
      eventTicker,
      seriesTicker,
      title: s.question,
      yesSubTitle: s.question,
      noSubTitle: s.question,
      rulesPrimary: s.rules,
      rulesSecondary: "",
      settlementSource: s.settlementSource,
      category: titleCase(s.category),
      openMs,
      closeMs,
      createdMs: opened ? openMs - 86_400_000 : closeMs - 121 * 86_400_000,
      updatedMs: now,
      status: statusOf(s),
      result: s.status === "resolved" ? (s.resolution ?? "") : "",
      tick,
      priceLevelStructure: structure,
      fractional: false,
      // A seeded settled market settled at its expected expiration, an hour after close.
      settledMs: s.status === "resolved" ? closeMs + 3_600_000 : null,
      mve: null,
      lastPrice: price,
      previousPrice: clampPrice(price - tick * rng.int(-3, 3), tick),
      previousBid: clampPrice(price - tick * rng.int(1, 4), tick),
      previousAsk: clampPrice(price + tick * rng.int(1, 4), tick),
      volume: orSeed(s.volume, rng.int(1_000, 250_000) * COUNT_SCALE),
      volume24h: orSeed(s.volume24h, rng.int(10, 5_000) * COUNT_SCALE),
      openInterest: rng.int(500, 90_000) * COUNT_SCALE,
      lastTradeSize: rng.int(1, 50) * COUNT_SCALE,
      bids: [],
      asks: [],
      anchor: s.yesPrice,
    };
    // `previous_price_dollars` is the price 24 h before the listing: the candlestick history's then
    // (none for a market open less than a day). The RNG draw above stays, so the stream is unchanged.
    const dayAgoMinute = Math.floor(now / 60_000) - 1_440;
    m.previousPrice = openMs <= dayAgoMinute * 60_000 ? pathPrice(state.seed, m, dayAgoMinute) : 0;
    seedBook(state, m, s.yesPrice);
    regular.push(m);
    state.markets.set(m.ticker, m);
    ev.markets.push(m);
  }
  // Events with several markets in the seed are mutually exclusive ladders (e.g. Fed outcomes).
  // A seed may say otherwise (`mutuallyExclusive: false` for a threshold ladder).
  for (const ev of state.events.values())
    ev.mutuallyExclusive = exclusive.get(ev.eventTicker) ?? ev.markets.length > 1;
  // Multivariate combos built from pairs of open regular markets (VENUES.md §2.2 gotcha).
  // Legs come from different events (one open market per event), so no combo is self-contradictory.
  const open: KMarket[] = [];
  for (const m of regular)
    if (m.status === "active" && !open.some((o) => o.eventTicker === m.eventTicker)) open.push(m);
  const comboCount = Math.min(3, Math.floor(open.length / 2));
  for (let i = 0; i < comboCount; i++) {
    const a = open[i * 2]!;
    const b = open[i * 2 + 1]!;
    const collection = "KXMVECROSSCATEGORY-R";
    const suffix = uuidFrom(`mve:${state.seed}:${i}`).replace(/-/g, "").slice(0, 12).toUpperCase();
    const eventTicker = `KXMVECROSSCATEGORY-S2026${suffix}`;
    const ticker = `${eventTicker}-${suffix.slice(0, 5)}`;
    const seriesTicker = "KXMVECROSSCATEGORY";
    if (!state.series.has(seriesTicker)) {
      state.series.set(
        seriesTicker,
        newSeries(seriesTicker, {
          title: "Cross-category combos",
          category: "Exotics",
          frequency: "custom",
          settlementSource: "Underlying markets",
          updatedMs: now - 30 * 86_400_000,
        }),
      );
    }
    const price = clampPrice(Math.round((a.lastPrice * b.lastPrice) / PRICE_SCALE / 100) * 100, 100);
    const ev: KEvent = {
      eventTicker,
      seriesTicker,
      title: `yes ${a.title}, yes ${b.title}`,
      subTitle: "",
      category: "Exotics",
      mutuallyExclusive: false,
      settlementSource: "Underlying markets",
      strikeMs: Math.max(a.closeMs, b.closeMs),
      markets: [],
      isMve: true,
      feeTypeOverride: null,
      feeMultiplierOverride: null,
    };
    state.events.set(eventTicker, ev);
    const m: KMarket = {
      ...a,
      ticker,
      marketId: uuidFrom(`kalshi-market:${ticker}`),
      eventTicker,
      seriesTicker,
      title: ev.title,
      yesSubTitle: ev.title,
      noSubTitle: ev.title,
      rulesPrimary: "Resolves Yes if every selected leg resolves Yes.",
      settlementSource: "Underlying markets",
      category: "Exotics",
      closeMs: ev.strikeMs,
      tick: 100,
      priceLevelStructure: "linear_cent",
      mve: {
        collectionTicker: collection,
        legs: [
          { event_ticker: a.eventTicker, market_ticker: a.ticker, side: "yes" },
          { event_ticker: b.eventTicker, market_ticker: b.ticker, side: "yes" },
        ],
      },
      lastPrice: price,
      previousPrice: price,
      previousBid: clampPrice(price - 100, 100),
      previousAsk: clampPrice(price + 100, 100),
      volume: 0,
      volume24h: 0,
      openInterest: 0,
      lastTradeSize: 0,
      bids: [],
      asks: [],
      anchor: price / PRICE_SCALE,
    };
    seedBook(state, m, price / PRICE_SCALE);
    combos.push(m);
    state.markets.set(ticker, m);
    ev.markets.push(m);
  }
  state.marketOrder.push(...combos, ...regular);
}

export function clampPrice(p: number, tick: number): number {
  return Math.min(Math.max(p, tick), PRICE_SCALE - tick);
}

function titleCase(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
