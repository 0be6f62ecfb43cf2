/**
 * Price alerts: an account asks to hear when a market's price (or its 24-hour change) goes above
 * or below a threshold. Every quote update is checked synchronously against that market's alerts
 * only (`triggers.ts`, O(log n)); a transition is applied to the index at once and written to the
 * store afterwards, with the `price.alert` event in the same transaction.
 *
 * Why fencing: several instances share one database and all see the same quotes, so all of them
 * try to fire the same crossing. Each write is a conditional UPDATE that expects the
 * `trigger_count` this process last knew (firing also needs `armed`), so exactly one write per
 * crossing succeeds and records the event; the others match no row and re-read the alert. Writes of
 * one alert are queued in order within a process. Expecting the count, not just `armed`, also
 * stops an instance whose feed lags from re-arming and re-firing a crossing another instance has
 * already recorded. Each instance follows firing and re-arming through its own feed; other
 * instances learn of created and deleted alerts over the bus, and every instance reloads from the
 * store periodically in case a message was lost.
 *
 * Each account may hold its tier's number of active alerts (`alertsAllowed`, both environments
 * together): the index lives in every instance's memory and every quote consults it, so its size
 * is bounded per tenant. The count and the insert share a transaction that locks the account row
 * (PostgreSQL; SQLite serializes writers), so concurrent creations cannot pass the cap together.
 */

import { alertsAllowed, type Tier } from "../access/limits";
import type { Owner } from "../access/owner";
import type { KeyEnvironment } from "../access/permissions";
import * as accountsRepo from "../accounts/repo";
import * as catalogRepo from "../catalog/repo";
import type { Outbox } from "../events/outbox";
import { AppError, validationError } from "../http/errors";
import type { Bus } from "../infra/bus/bus";
import { type Clock, isoFromMs } from "../infra/clock";
import type { Db, DbOrTrx, Dialect, Trx } from "../infra/db/store";
import { newId, randomToken } from "../infra/ids";
import type { Logger } from "../infra/log";
import type { Quote } from "../prices/quotes";
import { MICROS, type Micros, microsToNumber, parseMicros } from "../venues/decimal";
import * as repo from "./repo";
import {
  type Condition,
  conditionHolds,
  type Transition,
  TriggerIndex,
  type Watch,
  watchesChange,
} from "./triggers";

export type AlertRow = repo.AlertRow;

export interface CreateAlertInput {
  market_id: string;
  condition: Condition;
  threshold: number;
  repeat?: boolean | undefined;
}

/** Where current quotes come from (LiveMarkets). */
export interface QuoteSource {
  readonly quotes: { get(marketId: string, now: number): Quote | undefined };
  /** Asks the venue feeds to carry these markets, when the source can. */
  want?(marketIds: readonly string[]): void;
}

export interface AlertsOptions {
  /** How often the index is rebuilt from the store (the safety net for lost bus messages). */
  reloadIntervalMs: number;
  /** The store's dialect: on PostgreSQL the cap check locks the account row. Default sqlite. */
  dialect?: Dialect;
}

/** Bus channel: an alert was created, fired or deleted by the instance named in `origin`. */
export const ALERTS_CHANNEL = "alerts.changed";

interface ChangeMessage {
  origin: string;
  alert_id: string;
  op: "created" | "deleted";
}

/** Percent thresholds are kept within what a 24-hour change of a 0-1 price sensibly reaches. */
const MIN_CHANGE_PCT = -100;
const MAX_CHANGE_PCT = 10_000;

/** The threshold as an integer × 1,000,000; throws a 400 naming the field when out of range. */
export function parseThreshold(condition: Condition, value: number): number {
  const scaled = Number.isFinite(value) ? parseMicros(value) : undefined;
  if (watchesChange(condition)) {
    if (scaled === undefined || scaled <= MIN_CHANGE_PCT * MICROS || scaled >= MAX_CHANGE_PCT * MICROS) {
      throw validationError({
        "body.threshold": `must be a percentage strictly between ${MIN_CHANGE_PCT} and ${MAX_CHANGE_PCT} (5 = 5 %) for ${condition}`,
      });
    }
  } else if (scaled === undefined || scaled <= 0 || scaled >= MICROS) {
    throw validationError({ "body.threshold": `must be a price strictly between 0 and 1 for ${condition}` });
  }
  return scaled;
}

/** The 24-hour change in micro-percent (the quote keeps four decimals, so this is exact). */
function changeMicroPct(quote: Quote): number | null {
  return quote.changePct24h === null ? null : Math.round(quote.changePct24h * MICROS);
}

function toWatch(row: AlertRow, stamp: number): Watch {
  return {
    id: row.id,
    marketId: row.market_id,
    condition: row.condition as Condition,
    threshold: Number(row.threshold),
    repeat: row.repeat === 1,
    armed: row.armed === 1,
    count: row.trigger_count,
    stamp,
  };
}

export class AlertsService {
  readonly #index = new TriggerIndex();
  /** Per alert with writes in flight: the tail of its queue and how many writes are queued. */
  readonly #queues = new Map<string, { tail: Promise<void>; queued: number }>();
  /** Other background reads (bus-driven refreshes), awaited by `idle`. */
  readonly #background = new Set<Promise<void>>();
  /** Names this instance on the bus, so it ignores its own messages. */
  readonly #origin = randomToken(9);
  /** Increases on every placement; tells a reload which watches changed after it began. */
  #stamp = 0;
  #unsubscribe: (() => Promise<void>) | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly outbox: Outbox,
    private readonly source: QuoteSource,
    private readonly clock: Clock,
    private readonly bus: Bus,
    private readonly log: Logger,
    private readonly options: AlertsOptions,
  ) {}

  /** Listens for other instances' changes and loads the index. Quotes before this are not checked. */
  async start(): Promise<void> {
    this.#unsubscribe = await this.bus.subscribe(ALERTS_CHANNEL, (message) => this.#onMessage(message));
    await this.reload();
  }

  /** Background work: the periodic reload. */
  startReloading(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      this.reload().catch((error) => this.log.warn({ err: error }, "could not reload alerts"));
    }, this.options.reloadIntervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    await this.idle();
  }

  /** Resolves once every queued store write and background read has finished. */
  async idle(): Promise<void> {
    while (this.#queues.size > 0 || this.#background.size > 0) {
      await Promise.allSettled([...[...this.#queues.values()].map((q) => q.tail), ...this.#background]);
    }
  }

  /** Alerts in the in-memory index (those that can still fire). */
  get watching(): number {
    return this.#index.size;
  }

  /**
   * The hot path: called synchronously with every quote change. Never throws, never waits. Every
   * instance evaluates every quote (so each one's alert state is current if it produces the venue
   * later); only the instance that produced the quote (`here`) triggers, so an alert fires once.
   */
  onQuote(quote: Quote, here = true): void {
    if (this.#index.size === 0) return;
    try {
      const transitions = this.#index.evaluate(quote.marketId, quote.price, changeMicroPct(quote));
      if (!here) return;
      for (const transition of transitions) this.#enqueue(transition, quote.price);
    } catch (error) {
      this.log.warn({ err: error, market_id: quote.marketId }, "alert evaluation failed");
    }
  }

  async create(owner: Owner, input: CreateAlertInput): Promise<AlertRow> {
    const threshold = parseThreshold(input.condition, input.threshold);
    const market = await catalogRepo.findMarket(this.db, input.market_id);
    if (!market) {
      throw new AppError("MARKET_NOT_FOUND", `No market ${input.market_id}`, { market_id: input.market_id });
    }
    if (market.status !== "open") {
      throw validationError(
        { "body.market_id": `is ${market.status}; alerts can only watch open markets` },
        `Market ${market.id} is ${market.status}: alerts can only watch open markets`,
      );
    }
    const now = this.clock.now();
    const nowIso = isoFromMs(now);
    const repeat = input.repeat === true;
    // An alert meets the market as it is: if the condition already holds on the current quote, it
    // fires now, in the transaction that creates it.
    const quote = this.source.quotes.get(market.id, now);
    const value = quote ? (watchesChange(input.condition) ? changeMicroPct(quote) : quote.price) : null;
    const price = quote?.price ?? null;
    const firesNow = price !== null && value !== null && conditionHolds(input.condition, value, threshold);
    const row: AlertRow = {
      id: newId("alt", now),
      account_id: owner.accountId,
      environment: owner.environment,
      market_id: market.id,
      condition: input.condition,
      threshold,
      repeat: repeat ? 1 : 0,
      status: firesNow && !repeat ? "triggered" : "active",
      armed: firesNow ? 0 : 1,
      trigger_count: firesNow ? 1 : 0,
      last_triggered_at: firesNow ? nowIso : null,
      created_at: nowIso,
      updated_at: nowIso,
    };
    await this.db.transaction().execute(async (trx) => {
      await this.#checkCap(trx, owner.accountId);
      await repo.insertAlert(trx, row);
      if (firesNow) await this.#recordEvent(trx, row, price);
    });
    if (row.status === "active") {
      this.#index.put(toWatch(row, ++this.#stamp));
      // Updates that arrived while the row was being written were not checked against it.
      const current = this.source.quotes.get(market.id, this.clock.now());
      if (current) {
        const transition = this.#index.check(row.id, current.price, changeMicroPct(current));
        if (transition) this.#enqueue(transition, current.price);
      }
      this.source.want?.([market.id]);
    }
    await this.#announce(row.id, "created");
    return row;
  }

  /** Refuses a new alert past the tier's cap; locks the account row until the transaction ends. */
  async #checkCap(trx: Trx, accountId: string): Promise<void> {
    const account = await accountsRepo.lockAccountTier(trx, accountId, this.options.dialect ?? "sqlite");
    if (!account) throw new AppError("ACCOUNT_NOT_FOUND");
    const tier = account.tier as Tier;
    const cap = alertsAllowed(tier);
    if ((await repo.countActiveAlerts(trx, accountId)) >= cap) {
      throw new AppError(
        "ALERT_LIMIT_REACHED",
        `The ${tier} tier allows ${cap} active price alerts; delete one or upgrade`,
        { tier, alerts_allowed: cap },
      );
    }
  }

  async get(owner: Owner, id: string): Promise<AlertRow> {
    const row = await repo.findAlert(this.db, owner, id);
    if (!row) throw new AppError("ALERT_NOT_FOUND", `No alert ${id}`, { alert_id: id });
    return row;
  }

  async list(
    owner: Owner,
    filter: repo.AlertFilter,
    page: { limit: number; offset: number },
  ): Promise<{ rows: AlertRow[]; total: number }> {
    return repo.listAlerts(this.db, owner, filter, page);
  }

  /** Deletes an alert; it stops being evaluated at once. Returns it as it was. */
  async delete(owner: Owner, id: string): Promise<AlertRow> {
    const row = await this.get(owner, id);
    if (!(await repo.deleteAlert(this.db, owner, id))) {
      throw new AppError("ALERT_NOT_FOUND", `No alert ${id}`, { alert_id: id });
    }
    this.#index.remove(id);
    await this.#announce(id, "deleted");
    return row;
  }

  /**
   * Brings the index in line with the store: adds alerts it misses, drops deleted and triggered
   * ones. A watch whose alert fired more often in the store than this process knows is kept as is:
   * the crossings it has not seen yet may still be on their way through this process's feed, and
   * taking them for new ones would fire them again. Its next write, fenced, settles it.
   */
  async reload(): Promise<void> {
    const mark = ++this.#stamp;
    const rows = await repo.activeAlerts(this.db);
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.id);
      if (this.#knowsBetter(row.id, mark)) continue;
      const current = this.#index.get(row.id);
      if (
        current &&
        (row.trigger_count > current.count ||
          (row.trigger_count === current.count && (row.armed === 1) === current.armed))
      )
        continue;
      this.#index.put(toWatch(row, mark));
    }
    for (const id of [...this.#index.ids()]) {
      if (!seen.has(id) && !this.#knowsBetter(id, mark)) this.#index.remove(id);
    }
    this.source.want?.(this.#index.marketIds());
  }

  /** True when this process placed the watch after `mark`, or still has writes of it queued. */
  #knowsBetter(id: string, mark: number): boolean {
    if (this.#queues.has(id)) return true;
    const current = this.#index.get(id);
    return current !== undefined && current.stamp > mark;
  }

  #enqueue(transition: Transition, price: Micros | null): void {
    const { watch } = transition;
    const at = isoFromMs(this.clock.now());
    let queue = this.#queues.get(watch.id);
    if (!queue) {
      queue = { tail: Promise.resolve(), queued: 0 };
      this.#queues.set(watch.id, queue);
    }
    const own = queue;
    own.queued += 1;
    own.tail = own.tail
      .then(async () => {
        let applied = false;
        try {
          applied =
            transition.kind === "fire"
              ? await this.#storeFire(transition, price, at)
              : await repo.markRearmed(this.db, watch.id, transition.expectedCount, at);
        } catch (error) {
          this.log.warn({ err: error, alert_id: watch.id }, `could not ${transition.kind} an alert`);
        }
        if (!applied && own.queued === 1) {
          // Another instance got there first, the alert was deleted, or the write failed: take the
          // store's word, unless a later transition is queued and will settle it.
          await this.#adopt(watch.id, 1).catch((error) =>
            this.log.warn({ err: error, alert_id: watch.id }, "could not re-read an alert"),
          );
        }
      })
      .finally(() => {
        watch.stamp = ++this.#stamp;
        own.queued -= 1;
        if (own.queued === 0 && this.#queues.get(watch.id) === own) this.#queues.delete(watch.id);
      });
  }

  async #storeFire(transition: Transition, price: Micros | null, at: string): Promise<boolean> {
    const { watch } = transition;
    // A known 24-hour change implies a known price, so a firing transition always has one.
    if (price === null) return false;
    return this.db.transaction().execute(async (trx) => {
      const won = await repo.markFired(trx, watch.id, transition.expectedCount, { repeat: watch.repeat, at });
      if (!won) return false;
      const row = await repo.findAlertById(trx, watch.id);
      if (row) await this.#recordEvent(trx, row, price);
      return true;
    });
  }

  async #recordEvent(trx: DbOrTrx, row: AlertRow, price: Micros): Promise<void> {
    const market = await repo.marketContext(trx, row.market_id);
    await this.outbox.record(trx, {
      type: "price.alert",
      data: {
        alert_id: row.id,
        market_id: row.market_id,
        event_title: market?.title ?? row.market_id,
        condition: row.condition,
        threshold: microsToNumber(Number(row.threshold)),
        current_price: microsToNumber(price),
        platform: market?.venue ?? row.market_id.split(":")[0]!,
      },
      accountId: row.account_id,
      environment: row.environment as KeyEnvironment,
    });
  }

  /**
   * Replaces this process's view of one alert with the store's, unless the process moved on while
   * reading: more writes queued than the caller's own (`ownWrites`), or the watch placed anew.
   */
  async #adopt(id: string, ownWrites: number): Promise<void> {
    const mark = ++this.#stamp;
    const row = await repo.findAlertById(this.db, id);
    const current = this.#index.get(id);
    if ((this.#queues.get(id)?.queued ?? 0) > ownWrites || (current && current.stamp > mark)) return;
    if (row?.status !== "active") {
      this.#index.remove(id);
      return;
    }
    this.#index.put(toWatch(row, mark));
    this.source.want?.([row.market_id]);
  }

  async #announce(id: string, op: ChangeMessage["op"]): Promise<void> {
    const message: ChangeMessage = { origin: this.#origin, alert_id: id, op };
    await this.bus
      .publish(ALERTS_CHANNEL, message)
      .catch((error) =>
        this.log.warn({ err: error, channel: ALERTS_CHANNEL }, "could not announce an alert change"),
      );
  }

  #onMessage(message: unknown): void {
    const change = message as Partial<ChangeMessage> | null;
    if (!change || change.origin === this.#origin || typeof change.alert_id !== "string") return;
    const id = change.alert_id;
    if (change.op === "deleted") {
      this.#index.remove(id);
      return;
    }
    if (this.#queues.has(id)) return;
    const refresh = this.#adopt(id, 0)
      .catch((error) => this.log.warn({ err: error, alert_id: id }, "could not load an alert"))
      .finally(() => this.#background.delete(refresh));
    this.#background.add(refresh);
  }
}
