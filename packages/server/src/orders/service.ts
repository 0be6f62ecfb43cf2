/**
 * Orders: place (validated, idempotent), read, cancel one or many. Where an order goes is decided
 * by the API key's environment and the market's venue, and nothing else (execution.ts): a sandbox
 * key's orders run in the sandbox exchange against real venue data; a live key's orders go to the
 * venue with the account's linked credentials (orders/live.ts).
 */
import { createHash } from "node:crypto";
import type { Static } from "typebox";
import * as catalogRepo from "../catalog/repo";
import type { Outbox } from "../events/outbox";
import { AppError, validationError } from "../http/errors";
import { type Clock, isoFromMs, isoNow } from "../infra/clock";
import type { Db, DbOrTrx } from "../infra/db/store";
import { newId } from "../infra/ids";
import { settlePosition } from "../ledger/bookkeeping";
import type { OrderRow, Owner } from "../ledger/orders-repo";
import * as repo from "../ledger/orders-repo";
import { findPosition, openPositionsOnMarket } from "../ledger/positions-repo";
import { MICROS, parseMicros } from "../venues/decimal";
import type { VenueId } from "../venues/model";
import type { VenueCapabilities } from "../venues/venue";
import type { Execution, Executions, PlacementHooks } from "./execution";
import { settledMarketsWithExposure, type TradableMarket, tradableMarket } from "./markets";
import * as idempotency from "./repo";
import { DEFAULT_FILLS_LIMIT, type PlaceOrderBody } from "./schemas";

/** The placement body as the API accepts it (numbers as JSON numbers), from its schema. */
export type PlaceOrderInput = Static<typeof PlaceOrderBody>;

/** What a placement returned, kept 24 h under its idempotency key and replayed byte for byte. */
export interface PlacementResult {
  statusCode: number;
  order: OrderRow;
  replayed: boolean;
  /** The market's title as the catalog has it now (null: not in the catalog). */
  marketTitle: string | null;
}

/** What newId("fil") makes: a cursor that is not one is refused before any lookup. */
const FILL_ID = /^fil_[0-9A-Za-z]{1,80}$/;

export interface FillsQuery {
  marketId?: string | undefined;
  orderId?: string | undefined;
  /** ISO 8601 date-time with a zone: fills recorded at or after it. */
  since?: string | undefined;
  /** A fill's id from an earlier answer: fills after it in the list order. */
  after?: string | undefined;
  limit?: number | undefined;
}

export interface FillsPage {
  fills: repo.FillRow[];
  /** The last fill's id, or the request's own `after` when none came (null without one). */
  nextAfter: string | null;
  hasMore: boolean;
}

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** Market orders without `max_slippage` accept at most this far from the best price. */
export const DEFAULT_MAX_SLIPPAGE = 0.05;
const MAX_AMOUNT = 1_000_000 * MICROS;
/** Order sizes are whole hundredths of a contract, as both venues take them. */
const AMOUNT_STEP = MICROS / 100;

export interface OrdersDeps {
  db: Db;
  outbox: Outbox;
  clock: Clock;
  /** What each venue supports (order types, time in force), to refuse what it does not take. */
  venues: ReadonlyMap<VenueId, { capabilities: VenueCapabilities }>;
  executions: Executions;
}

class IdempotencyRace extends Error {}

/** How long a market's tradability is taken from memory; a sync or a status event clears it sooner. */
const MARKET_CACHE_MS = 2_000;

export class OrdersService {
  readonly #markets = new Map<string, { at: number; market: TradableMarket | undefined }>();

  constructor(private readonly deps: OrdersDeps) {}

  /** The sandbox for a sandbox key; for a live key, live routing to the market's venue. */
  #execution(owner: Owner, venue: string): Execution {
    if (owner.environment === "sandbox") return this.deps.executions.sandbox;
    const live = this.deps.executions.live.get(venue);
    if (!live)
      throw new AppError(
        "VENUE_NOT_LINKED",
        `${venue} serves market data only on this server: no live orders`,
        {
          venue,
        },
      );
    return live;
  }

  /** The catalog's view of a market, kept a moment so a burst of orders reads it once. */
  async #market(id: string): Promise<TradableMarket | undefined> {
    const now = this.deps.clock.now();
    const cached = this.#markets.get(id);
    if (cached && now - cached.at < MARKET_CACHE_MS) return cached.market;
    const market = await tradableMarket(this.deps.db, id);
    if (this.#markets.size >= 10_000) this.#markets.clear();
    this.#markets.set(id, { at: now, market });
    return market;
  }

  /** Forget cached market state (the catalog synced, or a feed reported a status change). */
  invalidateMarkets(id?: string): void {
    if (id === undefined) this.#markets.clear();
    else this.#markets.delete(id);
  }

  // --- placing -----------------------------------------------------------------------------------

  async place(owner: Owner, input: PlaceOrderInput, idempotencyKey?: string): Promise<PlacementResult> {
    const key =
      idempotencyKey ?? (input.client_order_id ? `client_order_id:${input.client_order_id}` : undefined);
    const hash = key ? requestHash(input) : "";
    const sandbox = owner.environment === "sandbox";
    // A live order reaches the venue before its key is claimed, so a live retry must be recognised
    // first. A sandbox placement claims its key in the transaction that writes it, and only a
    // placement that could not go ahead (its key claimed already, or refused) looks for a first
    // response: the common case, a new key, costs no lookup.
    if (key && !sandbox) {
      const replay = await this.#replay(owner, key, hash);
      if (replay) return replay;
    }
    try {
      const { market, order } = await this.#validate(owner, input);
      const placed = await this.#place(owner, order, market, key, hash);
      // The title comes with the market just validated: a placement reads nothing more for it.
      return { statusCode: 201, order: placed, replayed: false, marketTitle: market.marketTitle };
    } catch (error) {
      // A retry gets the first response (or IDEMPOTENCY_KEY_REUSED for another body) whatever
      // would refuse it now: the market closed, the cash it used is gone, the key is taken.
      if (key && (sandbox || error instanceof IdempotencyRace)) {
        const replay = await this.#replay(owner, key, hash);
        if (replay) return replay;
      }
      throw error;
    }
  }

  async #replay(owner: Owner, key: string, hash: string): Promise<PlacementResult | undefined> {
    const row = await idempotency.findIdempotencyKey(this.deps.db, owner, key);
    if (!row) return undefined;
    if (row.expires_at <= isoNow(this.deps.clock)) {
      await idempotency.deleteIdempotencyKey(this.deps.db, owner, key);
      return undefined;
    }
    if (row.request_hash !== hash) {
      throw new AppError(
        "IDEMPOTENCY_KEY_REUSED",
        key.startsWith("client_order_id:")
          ? "This client_order_id was used for a different order in the last 24 hours"
          : undefined,
        { idempotency_key: key.startsWith("client_order_id:") ? undefined : key },
      );
    }
    // The order as the first response showed it, not as it is now: a retry sees what the first
    // attempt would have seen.
    const order = JSON.parse(row.response) as OrderRow;
    const titles = await this.marketTitles([order.market_id]);
    return {
      statusCode: row.status_code,
      order,
      replayed: true,
      marketTitle: titles.get(order.market_id) ?? null,
    };
  }

  /**
   * Claims the key inside the placement's transaction, with the response a retry replays; a
   * concurrent twin that claimed it first makes this throw, and the placement's transaction (or
   * savepoint) rolls back.
   */
  async #claimKey(trx: DbOrTrx, owner: Owner, key: string | undefined, hash: string, order: OrderRow) {
    if (!key) return;
    const now = this.deps.clock.now();
    const claimed = await idempotency.claimIdempotencyKey(trx, owner, {
      key,
      requestHash: hash,
      statusCode: 201,
      response: JSON.stringify(order),
      createdAt: isoFromMs(now),
      expiresAt: isoFromMs(now + IDEMPOTENCY_TTL_MS),
    });
    if (!claimed) throw new IdempotencyRace();
  }

  /** Stores the response a claimed key replays, in the placement's transaction. */
  async #keepResponse(trx: DbOrTrx, owner: Owner, key: string | undefined, order: OrderRow) {
    if (!key) return;
    await idempotency.keepIdempotentResponse(trx, owner, key, JSON.stringify(order));
  }

  async #validate(
    owner: Owner,
    input: PlaceOrderInput,
  ): Promise<{ market: TradableMarket; order: OrderRow }> {
    const type = input.type ?? "limit";
    const outcome = input.outcome ?? "yes";
    const timeInForce = input.time_in_force ?? (type === "market" ? "IOC" : "GTC");
    const fields: Record<string, string> = {};
    if (type === "limit" && input.price === undefined) fields["body.price"] = "is required for a limit order";
    if (type === "market" && (timeInForce === "GTC" || timeInForce === "GTD"))
      fields["body.time_in_force"] = "a market order is IOC or FOK";
    if (type === "limit" && input.max_slippage !== undefined)
      fields["body.max_slippage"] = "applies to market orders only; a limit order's price is its bound";
    if (timeInForce === "GTD" && !input.expires_at) fields["body.expires_at"] = "is required with GTD";
    if (timeInForce !== "GTD" && input.expires_at) fields["body.expires_at"] = "is only used with GTD";
    const amount = parseMicros(input.amount);
    if (amount === undefined || amount <= 0) fields["body.amount"] = "must be a positive number of contracts";
    else if (amount % AMOUNT_STEP !== 0) fields["body.amount"] = "must have at most 2 decimal places";
    else if (amount > MAX_AMOUNT) fields["body.amount"] = "must be at most 1,000,000 contracts";
    let expiresAt: string | null = null;
    if (input.expires_at) {
      const ms = Date.parse(input.expires_at);
      if (Number.isNaN(ms)) fields["body.expires_at"] = "must be an ISO 8601 timestamp";
      else if (ms <= this.deps.clock.now()) fields["body.expires_at"] = "must be in the future";
      else expiresAt = isoFromMs(ms);
    }
    if (Object.keys(fields).length > 0) throw validationError(fields);

    let price: number | undefined;
    if (input.price !== undefined) {
      price = parseMicros(input.price);
      if (price === undefined || price <= 0 || price >= MICROS)
        throw new AppError("INVALID_PRICE", `price must be strictly between 0 and 1 (got ${input.price})`, {
          field: "price",
          price: input.price,
        });
    }

    const market = await this.#market(input.market_id);
    if (!market)
      throw new AppError("MARKET_NOT_FOUND", `No market ${input.market_id}`, {
        market_ids: [input.market_id],
      });
    if (market.status !== "open")
      throw new AppError("MARKET_CLOSED", `Market ${market.id} is ${market.status}`, {
        market_id: market.id,
        status: market.status,
      });
    const caps = this.deps.venues.get(market.venue)?.capabilities.supports;
    if (caps && (!caps.orderTypes.includes(type) || !caps.timeInForce.includes(timeInForce)))
      throw new AppError(
        "UNSUPPORTED_ORDER_TYPE",
        `${market.venue} does not take ${type} ${timeInForce} orders`,
        {
          venue: market.venue,
          order_types: caps.orderTypes,
          time_in_force: caps.timeInForce,
        },
      );
    if (price !== undefined && price % market.tickSize !== 0)
      throw new AppError("PRICE_NOT_ON_TICK", `price must be a multiple of ${market.tickSize / MICROS}`, {
        field: "price",
        tick_size: market.tickSize / MICROS,
        nearest_below: (Math.floor(price / market.tickSize) * market.tickSize) / MICROS,
        nearest_above: (Math.ceil(price / market.tickSize) * market.tickSize) / MICROS,
      });
    if (amount! < market.minSize)
      throw new AppError("AMOUNT_BELOW_MINIMUM", `amount must be at least ${market.minSize / MICROS}`, {
        field: "amount",
        min_size: market.minSize / MICROS,
      });

    const now = isoNow(this.deps.clock);
    const order: OrderRow = {
      id: newId("ord"),
      account_id: owner.accountId,
      environment: owner.environment,
      market_id: market.id,
      venue: market.venue,
      side: input.side,
      outcome,
      type,
      time_in_force: timeInForce,
      price: price ?? 0,
      max_slippage_ppm:
        type === "market" ? Math.round((input.max_slippage ?? DEFAULT_MAX_SLIPPAGE) * 1_000_000) : null,
      amount: amount!,
      filled_amount: 0,
      filled_notional: 0,
      fees: 0,
      locked: 0,
      queue_ahead: 0,
      status: "open",
      cancel_reason: null,
      client_order_id: input.client_order_id ?? null,
      venue_order_id: null,
      // The position's id if it has one (found when the placement is written), else the one it gets.
      position_id: newId("pos"),
      expires_at: expiresAt,
      created_at: now,
      updated_at: now,
      cancelled_at: null,
      requested_amount: null,
      amount_note: null,
      fee_carry: 0,
    };
    return { market, order };
  }

  async #place(
    owner: Owner,
    order: OrderRow,
    market: TradableMarket,
    key: string | undefined,
    hash: string,
  ): Promise<OrderRow> {
    const execution = this.#execution(owner, market.venue);
    let claimed: OrderRow | undefined;
    const hooks: PlacementHooks = {
      stored: async (trx, row) => {
        claimed = row;
        await this.#claimKey(trx, owner, key, hash, row);
      },
    };
    try {
      const placed = await execution.place(owner, order, market, hooks);
      // A live order is stored pending before the venue sees it: a retry replays the order as this
      // response shows it (acknowledged, its first fills applied), not the row first claimed.
      if (claimed !== undefined && placed !== claimed)
        await this.#keepResponse(this.deps.db, owner, key, placed);
      return placed;
    } catch (error) {
      // The venue refused it, so nothing was placed: free the key and let a retry try again (after,
      // say, funding the venue account). A 503 keeps it: that order may exist at the venue.
      if (key && error instanceof AppError && error.code === "VENUE_REJECTED") {
        await idempotency.deleteIdempotencyKey(this.deps.db, owner, key);
      }
      throw error;
    }
  }

  // --- reading -----------------------------------------------------------------------------------

  /**
   * One of the owner's orders. With `refresh`, brought up to date where it executes first (a live
   * order's venue is asked now rather than at the poller's next pass: see Execution.read).
   */
  async get(owner: Owner, id: string, options: { refresh?: boolean } = {}): Promise<OrderRow> {
    const order = await repo.findOrder(this.deps.db, owner, id);
    if (!order) throw new AppError("ORDER_NOT_FOUND", `No order ${id}`, { order_id: id });
    return options.refresh ? this.#execution(owner, order.venue).read(owner, order) : order;
  }

  list(owner: Owner, filter: repo.OrderFilter, page: { limit: number; offset: number }) {
    return repo.listOrders(this.deps.db, owner, filter, page);
  }

  /** An order's fills, oldest first; with `refresh`, after bringing it up to date as `get` does. */
  async fills(owner: Owner, id: string, options: { refresh?: boolean } = {}): Promise<repo.FillRow[]> {
    const order = await this.get(owner, id);
    if (options.refresh) return this.#execution(owner, order.venue).fills(owner, order);
    return repo.fillsOf(this.deps.db, order.id);
  }

  /**
   * The owner's fills across orders, oldest first by (created_at, id), after a fill's id: a bot
   * reads on from the last fill it handled. A cursor that is not one of the owner's fills (another
   * account's, the other environment's, or deleted by a sandbox reset) is a 400, as is a `since`
   * that is no instant.
   */
  async listFills(owner: Owner, query: FillsQuery): Promise<FillsPage> {
    const limit = query.limit ?? DEFAULT_FILLS_LIMIT;
    const fields: Record<string, string> = {};
    let since: string | undefined;
    if (query.since !== undefined) {
      // The schema checked the shape; this catches what parses to no instant (a leap second).
      const ms = Date.parse(query.since);
      if (Number.isNaN(ms)) fields["query.since"] = "must be an ISO 8601 date-time with a zone";
      // Stored timestamps are UTC with milliseconds: compare like with like.
      else since = isoFromMs(ms);
    }
    if (query.after !== undefined && !FILL_ID.test(query.after))
      fields["query.after"] = "must be a fill's id (fil_…) from an earlier answer";
    if (Object.keys(fields).length > 0) throw validationError(fields);
    let after: repo.FillPosition | undefined;
    if (query.after !== undefined) {
      after = await repo.fillPosition(this.deps.db, owner, query.after);
      if (!after)
        throw validationError({
          "query.after":
            "is not one of this key's fills (a sandbox reset deletes them: read again without after)",
        });
    }
    const filter: repo.FillFilter = {
      ...(query.marketId ? { marketId: query.marketId } : {}),
      ...(query.orderId ? { orderId: query.orderId } : {}),
      ...(since ? { since } : {}),
    };
    // One more than asked says whether another page is waiting.
    const rows = await repo.listFills(this.deps.db, owner, filter, after, limit + 1);
    const fills = rows.slice(0, limit);
    return { fills, nextAfter: fills.at(-1)?.id ?? query.after ?? null, hasMore: rows.length > limit };
  }

  /** Markets' titles as the catalog has them (answers name their markets); unknown ids are absent. */
  async marketTitles(ids: readonly string[]): Promise<Map<string, string>> {
    const rows = await catalogRepo.findMarketTitles(this.deps.db, [...new Set(ids)]);
    return new Map(rows.map((row) => [row.id, row.title]));
  }

  // --- cancelling --------------------------------------------------------------------------------

  async cancel(owner: Owner, id: string, reason = "user"): Promise<OrderRow> {
    const order = await this.get(owner, id);
    if (!repo.CANCELLABLE.has(order.status))
      throw new AppError("ORDER_NOT_CANCELLABLE", `Order ${id} is ${order.status}`, {
        order_id: id,
        status: order.status,
      });
    const cancelled = await this.#execution(owner, order.venue).cancel(owner, order, reason);
    if (!cancelled) {
      // It filled or was cancelled between the read and the write: report what it is now.
      const now = await this.get(owner, id);
      if (repo.CANCELLABLE.has(now.status)) return this.cancel(owner, id, reason);
      throw new AppError("ORDER_NOT_CANCELLABLE", `Order ${id} is ${now.status}`, {
        order_id: id,
        status: now.status,
      });
    }
    return cancelled;
  }

  /** Cancels every open or pending order of the caller (optionally one market or side). */
  async cancelAll(owner: Owner, filter: { marketId?: string; side?: "buy" | "sell" }): Promise<OrderRow[]> {
    const orders = await repo.cancellableOrders(this.deps.db, owner, filter);
    const cancelled: OrderRow[] = [];
    for (const order of orders) {
      try {
        cancelled.push(await this.cancel(owner, order.id, "bulk_cancel"));
      } catch (error) {
        // Filled meanwhile: not cancelled, not an error for a bulk cancel.
        if (!(error instanceof AppError && error.code === "ORDER_NOT_CANCELLABLE")) throw error;
      }
    }
    return cancelled;
  }

  // --- time and the market's end ------------------------------------------------------------------

  /** Cancels sandbox GTD orders whose time is up (a timer calls this every second). */
  async expireDue(): Promise<number> {
    const due = await repo.expiredOrders(this.deps.db, "sandbox", isoNow(this.deps.clock));
    let count = 0;
    for (const order of due)
      if (await this.deps.executions.sandbox.cancel(ownerOf(order), order, "expired")) count++;
    return count;
  }

  /**
   * A market closed or resolved: sandbox orders on it are cancelled, and at resolution every open
   * position on it (sandbox and live) settles. Idempotent: safe to call on every catalog sync.
   */
  async settleMarket(
    marketId: string,
    observed?: { status: "open" | "closed" | "resolved"; resolution: "yes" | "no" | "void" | null },
  ): Promise<void> {
    const { db, outbox, clock } = this.deps;
    this.invalidateMarkets(marketId);
    if (observed) {
      // A venue feed reported it before the next catalog sync: record it now so what follows (and
      // the catalog) agree. The sync will write the same.
      await catalogRepo.recordObservedStatus(
        db,
        marketId,
        observed.status,
        observed.resolution,
        isoNow(clock),
      );
    }
    const market = await tradableMarket(db, marketId);
    if (!market || market.status === "open") return;
    for (const order of await repo.openOrdersOnMarket(db, marketId, "sandbox")) {
      await this.deps.executions.sandbox.cancel(
        ownerOf(order),
        order,
        market.status === "resolved" ? "market_resolved" : "market_closed",
      );
    }
    if (market.status !== "resolved" || !market.resolution) return;
    for (const position of await openPositionsOnMarket(db, marketId)) {
      await db.transaction().execute(async (trx) => {
        // Re-read inside the transaction so two settlements of one position cannot both pay.
        const fresh = await findPosition(trx, ownerOf(position), position.id);
        if (!fresh || fresh.status === "resolved" || fresh.size === 0) return;
        await settlePosition(
          trx,
          { outbox, nowIso: isoNow(clock), title: market.title },
          fresh,
          market.resolution!,
        );
      });
    }
  }

  /** Settles every market the catalog reports closed or resolved while exposure remains on it. */
  async settleFromCatalog(): Promise<void> {
    this.invalidateMarkets();
    for (const market of await settledMarketsWithExposure(this.deps.db)) await this.settleMarket(market.id);
  }
}

const ownerOf = (row: { account_id: string; environment: string }): Owner => ({
  accountId: row.account_id,
  environment: row.environment as Owner["environment"],
});

/** Order-independent hash of a request body (idempotency keys compare bodies, not key order). */
export function requestHash(body: object): string {
  return createHash("sha256").update(canonical(body)).digest("hex");
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
