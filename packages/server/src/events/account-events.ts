/**
 * An account's events as an API (`GET /v1/account/events`): what the outbox recorded for the
 * account in one environment, oldest first, after a cursor, so an agent that reads on from the last
 * event it saw never misses one. The order is the outbox's (see outbox.ts): on PostgreSQL only
 * events of transactions older than every running one are served, ordered by (transaction id,
 * sequence), so an event committed late is never behind a cursor already handed out. A cursor is an
 * event's `seq` or `id`; its place in that order is looked up, so `seq` need not grow by one.
 *
 * Events are kept for EVENT_RETENTION_DAYS: a cursor older than that is 410 CURSOR_EXPIRED (the
 * oldest event still kept is in the details), and `prune` deletes what is older once every outbox
 * consumer has read it.
 */
import type { Owner } from "../access/owner";
import { AppError, validationError } from "../http/errors";
import { type Clock, isoFromMs } from "../infra/clock";
import type { Db, Dialect } from "../infra/db/store";
import { START_CURSOR } from "./outbox";
import type { EventPosition } from "./position";
import * as repo from "./repo";
import { isEventType } from "./types";

export const DEFAULT_EVENTS_LIMIT = 100;
export const MAX_EVENTS_LIMIT = 1000;
const DAY_MS = 86_400_000;
/** Events deleted per statement when pruning. */
const PRUNE_BATCH = 1000;

export interface AccountEvent {
  id: string;
  seq: number;
  type: string;
  timestamp: string;
  /** The payload, as webhooks deliver it in `data` (already JSON text: sent as is). */
  dataJson: string;
}

export interface EventsPage {
  events: AccountEvent[];
  /** The cursor to read on from: the last event's seq, or the request's own cursor when none came. */
  nextAfter: number | null;
  hasMore: boolean;
}

export interface EventsQuery {
  /** An event's seq (digits) or id (`evt_…`), from an earlier answer or a webhook. */
  after?: string | undefined;
  /** Only these types (all when absent). */
  types?: readonly string[] | undefined;
  limit?: number | undefined;
}

export class AccountEvents {
  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
    private readonly clock: Clock,
    private readonly retentionDays: number,
  ) {}

  /** The oldest moment an event is still served from. */
  #since(): string {
    return isoFromMs(this.clock.now() - this.retentionDays * DAY_MS);
  }

  async list(owner: Owner, query: EventsQuery): Promise<EventsPage> {
    const limit = query.limit ?? DEFAULT_EVENTS_LIMIT;
    const types = [...new Set(query.types ?? [])];
    const unknown = types.filter((t) => !isEventType(t));
    if (unknown.length > 0) {
      throw validationError({ "query.types": `unknown event type: ${unknown.join(", ")}` });
    }
    const since = this.#since();
    const cursor = query.after === undefined ? START_CURSOR : await this.#position(owner, query.after, since);
    const rows = await repo.accountEventsAfter(this.db, this.dialect, owner, cursor, {
      since,
      types,
      limit: limit + 1,
    });
    const hasMore = rows.length > limit;
    const events = rows.slice(0, limit).map((row) => ({
      id: row.id,
      seq: Number(row.seq),
      type: row.type,
      timestamp: row.created_at,
      dataJson: row.data,
    }));
    const last = events.at(-1);
    const given = query.after === undefined ? null : cursor.seq;
    return { events, nextAfter: last ? last.seq : given, hasMore };
  }

  /**
   * Where a client's cursor (an event's seq or id; "0" for the beginning) stands in the order:
   * AppError CURSOR_EXPIRED when it is older than what is kept, VALIDATION_ERROR (`field`) when it
   * is not one of the owner's events.
   */
  position(owner: Owner, after: string, field = "query.after"): Promise<EventPosition> {
    return this.#position(owner, after, this.#since(), field);
  }

  /** The place of the owner's last committed event (the beginning when none): "from now". */
  latest(owner: Owner): Promise<EventPosition> {
    return repo.lastCommittedPosition(this.db, this.dialect, owner);
  }

  /**
   * Up to `limit` of the owner's events after `cursor` that are still kept, of the given types (all
   * when empty), each with its place in the order: the account stream's replay.
   */
  read(
    owner: Owner,
    cursor: EventPosition,
    types: readonly string[],
    limit: number,
  ): Promise<repo.AccountEventRow[]> {
    return repo.accountEventsAfter(this.db, this.dialect, owner, cursor, {
      since: this.#since(),
      types,
      limit,
    });
  }

  async #position(owner: Owner, after: string, since: string, field = "query.after"): Promise<EventPosition> {
    const bySeq = /^\d{1,15}$/.test(after);
    if (!bySeq && !/^evt_[A-Za-z0-9_-]{1,80}$/.test(after)) {
      throw validationError({ [field]: "must be an event's seq (a number) or id (evt_…)" });
    }
    const seq = bySeq ? Number(after) : undefined;
    if (seq === 0) return START_CURSOR;
    const key = seq === undefined ? { id: after } : { seq };
    const found = await repo.eventPosition(this.db, this.dialect, key);
    if (found && found.account_id === owner.accountId && found.environment === owner.environment) {
      if (found.created_at < since) throw await this.#expired(owner, since);
      return { tx: found.tx, seq: found.seq };
    }
    // Not this account's: deleted by age (a seq below every one kept), or never one of its events.
    if (!found && seq !== undefined) {
      const oldest = await repo.oldestSeq(this.db);
      if (oldest === undefined || seq < oldest) throw await this.#expired(owner, since);
    }
    throw validationError({ [field]: "is not one of this key's account events" });
  }

  async #expired(owner: Owner, since: string): Promise<AppError> {
    const oldest = await repo.oldestAccountEvent(this.db, owner, since);
    return new AppError(
      "CURSOR_EXPIRED",
      `Events older than ${this.retentionDays} days are not kept; read again without \`after\` (or with after=0) to start from the oldest event kept`,
      {
        retention_days: this.retentionDays,
        oldest_available: oldest ? { seq: oldest.seq, id: oldest.id } : null,
        restart_after: 0,
      },
    );
  }

  /**
   * Deletes events older than the retention that every outbox consumer has read (none while no
   * consumer has started). Returns how many went.
   */
  async prune(): Promise<number> {
    const horizon = await repo.slowestOutboxCursor(this.db);
    if (!horizon) return 0;
    const before = this.#since();
    let total = 0;
    for (;;) {
      const deleted = await repo.pruneEvents(this.db, this.dialect, before, horizon, PRUNE_BATCH);
      total += deleted;
      if (deleted < PRUNE_BATCH) return total;
    }
  }
}
