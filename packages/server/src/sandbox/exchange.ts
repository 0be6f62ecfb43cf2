/**
 * The sandbox exchange: simulated matching against REAL venue data, so paper results mean something.
 *
 * - A marketable order walks the real book's depth level by level (up to its limit, or for a market
 *   order up to the best price moved by `max_slippage`). Liquidity one sandbox order took stays
 *   taken for the next ones until the venue's book shows that level changed.
 * - What does not fill at once rests in a SimBook (sandbox/engine.ts) at its price, behind the real
 *   volume displayed at that price when it arrived. It fills only when a real trade prints at or
 *   through its price, and only with the part of that trade beyond the volume queued ahead of it.
 *   Book changes alone never fill it; they can only move it up the queue (cancellations ahead).
 * - Sandbox orders never fill against each other: every account trades alone against the market.
 * - Every fill stores its cause (the book level or the real trade), so it can be explained.
 *
 * Books are YES-normalised: buying NO at q is selling YES at 1 − q.
 *
 * Across instances: resting orders are held in memory by one instance, the holder of the cluster
 * job `sandbox matching` (every instance alone, or on the embedded store). The store is the truth:
 * the holder loads every open sandbox order when it takes the job, an instance that accepts or
 * cancels an order tells the holder on the bus (SANDBOX_RESTING_CHANNEL), and the holder checks its
 * resting set against the store every `reconcileMs` in case a message was lost. A fill is written
 * only if the order is still open in the store, in the fill's transaction, so a cancel committed on
 * any instance takes effect at once. After a takeover, an order's queue ahead starts again from what
 * it was when placed (the trades that moved it up are not stored): it fills later, never earlier.
 */
import { fillFee } from "@crossbook/fees";
import type { Outbox } from "../events/outbox";
import type { Bus } from "../infra/bus/bus";
import { type Clock, isoNow } from "../infra/clock";
import type { Db } from "../infra/db/store";
import type { Logger } from "../infra/log";
import { applyFill, FenceError, type FillCause, feeModelOf } from "../ledger/bookkeeping";
import { type OrderRow, orderById, restingSandboxOrders } from "../ledger/orders-repo";
import type { TradableMarket } from "../orders/markets";
import { tradableMarket } from "../orders/markets";
import type { LiveMarkets } from "../prices/ingest";
import { MICROS, microsToNumber } from "../venues/decimal";
import type { BookLevel, OrderBook, Trade, VenueId } from "../venues/model";
import type { FeedEvent } from "../venues/venue";
import { ASK, BID, type EngineSide, SimBook } from "./engine";

/** Where instances tell the holder of the resting orders what they accepted or cancelled. */
export const SANDBOX_RESTING_CHANNEL = "sandbox.resting";

interface RestingMessage {
  op: "rest" | "forget";
  orderId: string;
  marketId: string;
}

export interface SandboxExchangeOptions {
  /** How often the holder checks its resting orders against the store (lost bus messages). */
  reconcileMs: number;
}

/** An order as the exchange sees it when planning its immediate fills. */
export interface Intent {
  side: "buy" | "sell";
  outcome: "yes" | "no";
  /** Limit price of the outcome, or for a market order the worst price accepted. */
  price: number;
  amount: number;
  timeInForce: "GTC" | "GTD" | "IOC" | "FOK";
  type: "limit" | "market";
}

export interface PlannedFill {
  price: number;
  size: number;
  fee: number;
  /** The order's fee accumulator after this fill (Kalshi rounding, see @crossbook/fees). */
  carry: number;
  cause: FillCause;
  causeKey: string;
}

export interface Plan {
  fills: PlannedFill[];
  /** Unfilled rest: rest it (GTC/GTD) or cancel it with this reason (IOC, FOK, market). */
  restReason: null | "unfilled_ioc" | "unfilled_fok";
  /** Real volume shown at the order's own price and side (its place in the queue if it rests). */
  queueAhead: number;
  /** Gives back the liquidity this plan took, when its transaction did not commit. */
  undo(): void;
}

interface Consumed {
  shown: number;
  used: number;
}

interface MarketBooks {
  book: SimBook;
  maxTick: number;
  /** Real liquidity sandbox orders took, by `${side}:${yesPrice}`. */
  consumed: Map<string, Consumed>;
  /** Resting refs -> where they rest, for queue capping on book updates. */
  resting: Map<number, { side: EngineSide; tick: number }>;
}

/** Engine side of an order: buying YES or selling NO bids for YES; the rest offer YES. */
function engineSide(side: "buy" | "sell", outcome: "yes" | "no"): EngineSide {
  return (side === "buy") === (outcome === "yes") ? BID : ASK;
}

function yesPrice(price: number, outcome: string): number {
  return outcome === "yes" ? price : MICROS - price;
}

export class SandboxExchange {
  readonly #markets = new Map<string, MarketBooks>();
  readonly #refs = new Map<number, string>();
  readonly #refOf = new Map<string, number>();
  readonly #owners = new Map<string, number>();
  readonly #options: SandboxExchangeOptions;
  #nextRef = 1;
  #queue: Promise<void> = Promise.resolve();
  #pending = 0;
  #unsubscribe: Array<() => unknown> = [];
  /** This instance holds the resting orders (see the file's comment). */
  #holding = false;
  #reconciler: NodeJS.Timeout | undefined;
  #reconciling: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly outbox: Outbox,
    private readonly live: LiveMarkets,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly bus: Bus,
    options: Partial<SandboxExchangeOptions> = {},
  ) {
    this.#options = { reconcileMs: 30_000, ...options };
  }

  /** Listens to the venue feeds (the book changes every instance's plans need) and to the bus. */
  async start(): Promise<void> {
    if (this.#unsubscribe.length > 0) return;
    this.#unsubscribe.push(this.live.onFeedEvent((event, venue) => this.onFeedEvent(event, venue)));
    if (this.bus.kind === "redis") {
      this.#unsubscribe.push(
        await this.bus.subscribe(SANDBOX_RESTING_CHANNEL, (message) => {
          if (this.#holding) void this.#onMessage(message as RestingMessage);
        }),
      );
    }
  }

  async stop(): Promise<void> {
    await this.release();
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = [];
    await Promise.all(unsubscribe.map((off) => off()));
  }

  /** Whether this instance holds the resting orders and fills them. */
  get holding(): boolean {
    return this.#holding;
  }

  /**
   * Takes the resting orders (the `sandbox matching` job starts): every open sandbox order is put
   * back on its simulated book from the store, and the store is checked again every `reconcileMs`.
   */
  async hold(): Promise<void> {
    if (this.#holding) return;
    this.#holding = true;
    await this.reconcile();
    this.#reconciler = setInterval(() => {
      this.#reconciling = this.reconcile().catch((error) =>
        this.log.warn({ err: error }, "could not check sandbox resting orders against the store"),
      );
    }, this.#options.reconcileMs);
    this.#reconciler.unref();
  }

  /** Lets the resting orders go (the job moves to another instance): fills written so far finish. */
  async release(): Promise<void> {
    if (!this.#holding) return;
    this.#holding = false;
    clearInterval(this.#reconciler);
    await this.#reconciling;
    await this.idle();
    // Only the resting orders go: the liquidity sandbox orders took stays taken for this instance's
    // next plans, holder or not.
    for (const books of this.#markets.values()) {
      books.book = new SimBook(books.maxTick);
      books.resting.clear();
    }
    this.#refs.clear();
    this.#refOf.clear();
    this.#owners.clear();
  }

  /** Resolves once every fill the feed has produced so far is written (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#pending > 0) await this.#queue;
  }

  /** How many orders rest in memory (metrics, tests). */
  get restingCount(): number {
    return this.#refs.size;
  }

  // --- placement ---------------------------------------------------------------------------------

  /**
   * The fills an order gets at once from the real book, without touching the store. Call `undo` if
   * the transaction that writes them fails.
   */
  plan(intent: Intent, market: TradableMarket, book: OrderBook): Plan {
    const books = this.#booksFor(market);
    const own = intent.outcome === "yes" ? book.yes : book.no;
    // A buy takes the outcome's asks (cheapest first); a sell takes its bids (dearest first).
    const buying = intent.side === "buy";
    const levels = buying ? own.asks : own.bids;
    // The liquidity a level represents, in YES terms (a NO ask at q is a YES bid at 1 − q).
    const takenSide: EngineSide = engineSide(intent.side, intent.outcome) === BID ? ASK : BID;
    const fees = feeModelOf(market);

    const takes: Array<{ key: string; level: BookLevel; size: number }> = [];
    let wanted = intent.amount;
    for (const level of levels) {
      const crosses = buying ? level.price <= intent.price : level.price >= intent.price;
      if (wanted <= 0 || !crosses) break;
      const key = `${takenSide}:${yesPrice(level.price, intent.outcome)}`;
      const seen = books.consumed.get(key);
      const available = seen && seen.shown === level.size ? level.size - seen.used : level.size;
      const size = Math.min(wanted, available);
      if (size <= 0) continue;
      takes.push({ key, level, size });
      wanted -= size;
    }
    const fok = intent.timeInForce === "FOK";
    if (fok && wanted > 0) takes.length = 0; // all or nothing
    const rests = intent.type === "limit" && (intent.timeInForce === "GTC" || intent.timeInForce === "GTD");

    const consumed: Array<{ entry: Consumed; size: number }> = [];
    // One order, several fills: Kalshi's fee accumulator runs through them (@crossbook/fees).
    let carry = 0;
    const fills: PlannedFill[] = takes.map(({ key, level, size }, index) => {
      const seen = books.consumed.get(key);
      const entry: Consumed = seen && seen.shown === level.size ? seen : { shown: level.size, used: 0 };
      entry.used += size;
      books.consumed.set(key, entry);
      consumed.push({ entry, size });
      const charged = fillFee(
        fees,
        { price: level.price, size, side: intent.side, liquidity: "taker" },
        carry,
      );
      carry = charged.carry;
      return {
        price: level.price,
        size,
        fee: charged.fee,
        carry: charged.carry,
        cause: {
          kind: "book_level",
          price: microsToNumber(level.price),
          size_shown: microsToNumber(level.size),
          book_timestamp: book.timestamp,
          book_sequence: book.sequence,
        },
        causeKey: `book:${book.timestamp}:${index}:${level.price}`,
      };
    });
    const ownLevels = intent.side === "buy" ? own.bids : own.asks;
    const queueAhead = ownLevels.find((l) => l.price === intent.price)?.size ?? 0;
    const filled = fills.reduce((sum, f) => sum + f.size, 0);
    return {
      fills,
      restReason: filled >= intent.amount || rests ? null : fok ? "unfilled_fok" : "unfilled_ioc",
      queueAhead,
      // Returns the book liquidity the plan consumed (the placement did not commit).
      undo: () => {
        for (const { entry, size } of consumed) entry.used -= size;
      },
    };
  }

  /**
   * Puts an open order's unfilled rest on the market's simulated book (after its placement
   * committed), here if this instance holds the resting orders, else on the holder's.
   */
  rest(order: OrderRow, market: TradableMarket): void {
    if (order.status !== "open" || order.amount - order.filled_amount <= 0) return;
    if (this.#holding) this.#restHere(order, market);
    else this.#tell({ op: "rest", orderId: order.id, marketId: order.market_id });
  }

  /** Takes an order off the simulated book (cancelled, expired, settled), wherever it rests. */
  forget(orderId: string, marketId: string): void {
    if (this.#holding) this.#forgetHere(orderId, marketId);
    else this.#tell({ op: "forget", orderId, marketId });
  }

  #restHere(order: OrderRow, market: TradableMarket): void {
    const remaining = order.amount - order.filled_amount;
    if (order.status !== "open" || remaining <= 0 || this.#refOf.has(order.id)) return;
    const books = this.#booksFor(market, order.price);
    const side = engineSide(order.side as "buy" | "sell", order.outcome as "yes" | "no");
    const tick = this.#tick(books, yesPrice(order.price, order.outcome));
    const ref = this.#nextRef++;
    books.book.add(ref, this.#owner(order.account_id), side, tick, remaining, order.queue_ahead);
    books.resting.set(ref, { side, tick });
    this.#refs.set(ref, order.id);
    this.#refOf.set(order.id, ref);
    this.live.want([order.market_id]);
  }

  #forgetHere(orderId: string, marketId: string): void {
    const ref = this.#refOf.get(orderId);
    if (ref === undefined) return;
    const books = this.#markets.get(marketId);
    books?.book.cancel(ref);
    books?.resting.delete(ref);
    this.#refs.delete(ref);
    this.#refOf.delete(orderId);
  }

  #tell(message: RestingMessage): void {
    // No other instance in one process: the holder-to-be loads the order from the store.
    if (this.bus.kind !== "redis") return;
    this.bus
      .publish(SANDBOX_RESTING_CHANNEL, message)
      .catch((error) =>
        this.log.warn(
          { err: error, order_id: message.orderId },
          "could not tell the holder of sandbox resting orders; its next check of the store will",
        ),
      );
  }

  async #onMessage(message: RestingMessage): Promise<void> {
    try {
      if (message.op === "forget") {
        this.#forgetHere(message.orderId, message.marketId);
        return;
      }
      const order = await orderById(this.db, message.orderId);
      const market = order && (await tradableMarket(this.db, order.market_id));
      if (order && market && this.#holding) this.#restHere(order, market);
    } catch (error) {
      this.log.warn({ err: error, order_id: message.orderId }, "could not rest a sandbox order");
    }
  }

  /**
   * Makes the resting set what the store says: open orders missing here are rested, orders here
   * that the store no longer has open (filled, cancelled, wiped) are forgotten. Only orders that
   * rested here before the store was read can be forgotten: one rested meanwhile was not in its
   * answer.
   */
  async reconcile(): Promise<void> {
    const before: Array<{ orderId: string; ref: number; marketId: string }> = [];
    for (const [marketId, books] of this.#markets) {
      for (const ref of books.resting.keys()) before.push({ orderId: this.#refs.get(ref)!, ref, marketId });
    }
    const open = await restingSandboxOrders(this.db);
    if (!this.#holding) return;
    const stillOpen = new Set<string>();
    // Read once per market, not once per order resting on it (a takeover loads them all).
    const markets = new Map<string, TradableMarket | undefined>();
    for (const order of open) {
      stillOpen.add(order.id);
      if (this.#refOf.has(order.id)) continue;
      if (!markets.has(order.market_id)) {
        markets.set(order.market_id, await tradableMarket(this.db, order.market_id));
      }
      const market = markets.get(order.market_id);
      if (market && this.#holding) this.#restHere(order, market);
    }
    for (const { orderId, ref, marketId } of before) {
      if (!stillOpen.has(orderId) && this.#refOf.get(orderId) === ref) this.#forgetHere(orderId, marketId);
    }
  }

  // --- the real market -----------------------------------------------------------------------------

  onFeedEvent(event: FeedEvent, _venue: VenueId): void {
    if (event.kind === "trade") this.#onTrade(event.trade);
    else if (event.kind === "book") this.#onBook(event.book);
  }

  #onTrade(trade: Trade): void {
    const books = this.#markets.get(trade.marketId);
    if (!books || books.book.size === 0) return;
    const price = yesPrice(trade.price, trade.outcome);
    if (price <= 0 || price >= MICROS) return;
    // A taker buying YES (or selling NO) lifts offers; a taker selling YES (or buying NO) hits bids.
    const takerBuysYes =
      trade.takerSide === null ? null : (trade.takerSide === "buy") === (trade.outcome === "yes");
    const sides: EngineSide[] = takerBuysYes === null ? [BID, ASK] : [takerBuysYes ? ASK : BID];
    const tick = Math.round((price * books.maxTick) / MICROS);
    const fills: Array<{ orderId: string; size: number; queueAhead: number }> = [];
    for (const side of sides) {
      // Queue positions before the trade, for the fill's explanation.
      const ahead = new Map<number, number>();
      for (const [ref, at] of books.resting) {
        if (at.side === side && at.tick === tick) ahead.set(ref, books.book.queueAhead(ref));
      }
      books.book.trade(side, tick, trade.size, (ref, _owner, _tick, size) => {
        const orderId = this.#refs.get(ref);
        if (!orderId) return;
        fills.push({ orderId, size, queueAhead: ahead.get(ref) ?? 0 });
        if (!books.book.has(ref)) {
          books.resting.delete(ref);
          this.#refs.delete(ref);
          this.#refOf.delete(orderId);
        }
      });
    }
    if (fills.length === 0) return;
    const causeKey = `trade:${trade.venueTradeId ?? `${trade.timestamp}:${trade.outcome}:${trade.price}:${trade.size}`}`;
    this.#enqueue(() => this.#applyTradeFills(trade, fills, causeKey));
  }

  #onBook(book: OrderBook): void {
    const books = this.#markets.get(book.marketId);
    if (!books) return;
    // Liquidity taken by sandbox orders is forgotten once the venue shows the level changed.
    if (books.consumed.size > 0) {
      for (const [key, entry] of books.consumed) {
        const [side, price] = key.split(":").map(Number) as [number, number];
        const level = (side === BID ? book.yes.bids : book.yes.asks).find((l) => l.price === price);
        if (!level || level.size !== entry.shown) books.consumed.delete(key);
      }
    }
    if (books.resting.size === 0) return;
    for (const { side, tick } of books.resting.values()) {
      const price = Math.round((tick * MICROS) / books.maxTick);
      const shown = (side === BID ? book.yes.bids : book.yes.asks).find((l) => l.price === price)?.size ?? 0;
      books.book.capQueueAhead(side, tick, shown);
    }
  }

  async #applyTradeFills(
    trade: Trade,
    fills: Array<{ orderId: string; size: number; queueAhead: number }>,
    causeKey: string,
  ): Promise<void> {
    const market = await tradableMarket(this.db, trade.marketId);
    if (!market) return;
    const nowIso = isoNow(this.clock);
    await this.db.transaction().execute(async (trx) => {
      for (const fill of fills) {
        const order = await orderById(trx, fill.orderId);
        if (!order) continue;
        if (order.status !== "open") {
          // Cancelled elsewhere (another instance, a reset): it should not be resting here.
          this.#forgetHere(order.id, order.market_id);
          continue;
        }
        const cause: FillCause = {
          kind: "trade",
          venue_trade_id: trade.venueTradeId,
          outcome: trade.outcome,
          price: microsToNumber(trade.price),
          size: microsToNumber(trade.size),
          taker_side: trade.takerSide,
          timestamp: trade.timestamp,
          queue_ahead_before: microsToNumber(fill.queueAhead),
        };
        // A resting order is the maker: it pays what the market's schedule charges makers (nothing on
        // most), with Kalshi's rounding and the order's fee accumulator.
        const fees = feeModelOf(market);
        const size = Math.min(fill.size, order.amount - order.filled_amount);
        const charged = fillFee(
          fees,
          { price: order.price, size, side: order.side as "buy" | "sell", liquidity: "maker" },
          order.fee_carry,
        );
        try {
          await applyFill(
            trx,
            { outbox: this.outbox, nowIso, title: market.title },
            order,
            {
              price: order.price,
              size,
              fee: charged.fee,
              carry: charged.carry,
              liquidity: "maker",
              cause,
              causeKey,
            },
            fees,
          );
        } catch (error) {
          if (!(error instanceof FenceError)) throw error;
        }
      }
    });
  }

  #enqueue(job: () => Promise<void>): void {
    this.#pending++;
    this.#queue = this.#queue
      .then(job)
      .catch((error) => this.log.warn({ err: error }, "could not apply sandbox fills"))
      .finally(() => {
        this.#pending--;
      });
  }

  // --- books ---------------------------------------------------------------------------------------

  #booksFor(market: TradableMarket, price?: number): MarketBooks {
    let books = this.#markets.get(market.id);
    const needed = MICROS / Math.max(1, market.tickSize);
    if (!books) {
      books = { book: new SimBook(needed), maxTick: needed, consumed: new Map(), resting: new Map() };
      this.#markets.set(market.id, books);
    } else if (price !== undefined && (price * books.maxTick) % MICROS !== 0) {
      // The venue made its tick finer since this book was built: rebuild it at the new resolution.
      books = this.#rebuild(market.id, books, needed);
    }
    return books;
  }

  #rebuild(marketId: string, old: MarketBooks, maxTick: number): MarketBooks {
    const fresh: MarketBooks = {
      book: new SimBook(maxTick),
      maxTick,
      consumed: old.consumed,
      resting: new Map(),
    };
    for (const order of old.book.orders()) {
      const tick = Math.round((order.tick * maxTick) / old.maxTick);
      fresh.book.add(
        order.ref,
        order.owner,
        order.side as EngineSide,
        tick,
        order.remaining,
        order.queueAhead,
      );
      fresh.resting.set(order.ref, { side: order.side as EngineSide, tick });
    }
    this.#markets.set(marketId, fresh);
    return fresh;
  }

  #tick(books: MarketBooks, price: number): number {
    return Math.round((price * books.maxTick) / MICROS);
  }

  #owner(accountId: string): number {
    let owner = this.#owners.get(accountId);
    if (owner === undefined) {
      owner = this.#owners.size + 1;
      this.#owners.set(accountId, owner);
    }
    return owner;
  }
}
