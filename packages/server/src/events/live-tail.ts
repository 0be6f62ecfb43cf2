/**
 * The live end of the account events: one reader per instance that follows the outbox in the shared
 * store and hands each account event to whoever listens for its account and environment here (the
 * account streams, stream/account-feed.ts). Reading the store, not a bus, is what makes it work
 * across instances with nothing lost: an event recorded on any instance is in the store, in the
 * outbox's order (outbox.ts: on PostgreSQL only transactions older than every running one are read,
 * so a late commit is never passed over).
 *
 * It reads only while someone listens, every `pollMs` (at once again after a full batch), and soon
 * after `hint()` (an account event was written on this instance: the outbox says so), so events
 * recorded here reach this instance's streams in about a millisecond, others' within a poll. A
 * listener's `listen` resolves once the reader has its place: everything committed before it is
 * behind that place (a replay from the store covers it), everything after is handed to the listener.
 */

import type { Owner } from "../access/owner";
import type { Db, Dialect } from "../infra/db/store";
import type { Logger } from "../infra/log";
import type { EventPosition } from "./position";
import * as repo from "./repo";

/** One account event as the tail hands it on; `frame` is left for the stream to fill once. */
export interface TailedEvent {
  readonly row: repo.AccountEventRow;
  readonly position: EventPosition;
  /** The stream frame of this event, built by its first listener and shared by the others. */
  frame?: Buffer;
}

export interface TailListener {
  /** Events of the listener's account and environment, in order (called synchronously). */
  deliver(events: readonly TailedEvent[]): void;
}

export interface LiveTailOptions {
  /** How often the store is read while someone listens (ms). */
  pollMs: number;
  /** Events read per query. */
  batch: number;
}

export const DEFAULT_LIVE_TAIL_OPTIONS: LiveTailOptions = { pollMs: 10, batch: 1_000 };

/**
 * How long after a hint (an account event written on this instance) the tail reads: long enough for
 * the recording transaction to have committed in the usual case, and at most one read per this long
 * however many events are written. A read that comes too early finds nothing; the poll catches up.
 */
const HINT_DELAY_MS = 1;

const ownerKey = (accountId: string, environment: string) => `${accountId}\u0000${environment}`;

export class AccountEventTail {
  readonly #options: LiveTailOptions;
  readonly #listeners = new Map<string, Set<TailListener>>();
  #count = 0;
  /** Where the reader stands; null while it is not running. */
  #cursor: EventPosition | null = null;
  /** The start under way (the first listener waits for it). */
  #starting: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** When the pending timer fires (performance.now()), to tell whether a hint should bring it forward. */
  #due = 0;
  #reading = false;
  /** A hint came while a read was under way: read again soon after it. */
  #hinted = false;
  #closed = false;
  /** Events handed on since start (for stats). */
  delivered = 0;

  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
    private readonly log: Logger,
    options: Partial<LiveTailOptions> = {},
  ) {
    this.#options = { ...DEFAULT_LIVE_TAIL_OPTIONS, ...options };
  }

  /** Listeners now. */
  get listeners(): number {
    return this.#count;
  }

  /**
   * Hands `listener` every event of `owner` committed from now on. Resolves (with the function that
   * stops it) once the reader has its place, so that whatever it will not hand on is already in
   * the store for a replay to read.
   */
  async listen(owner: Owner, listener: TailListener): Promise<() => void> {
    if (this.#closed) throw new Error("the account event tail is closed");
    const key = ownerKey(owner.accountId, owner.environment);
    let set = this.#listeners.get(key);
    if (!set) {
      set = new Set();
      this.#listeners.set(key, set);
    }
    set.add(listener);
    this.#count++;
    let listening = true;
    const stop = () => {
      if (!listening) return;
      listening = false;
      const current = this.#listeners.get(key);
      if (current?.delete(listener)) {
        this.#count--;
        if (current.size === 0) this.#listeners.delete(key);
      }
      if (this.#count === 0) this.#stop();
    };
    try {
      await this.#start();
    } catch (error) {
      stop();
      throw error;
    }
    return stop;
  }

  #start(): Promise<void> {
    if (this.#cursor) return Promise.resolve();
    this.#starting ??= repo
      .lastCommittedPosition(this.db, this.dialect)
      .then((position) => {
        this.#starting = null;
        if (this.#count === 0 || this.#closed) return;
        this.#cursor = position;
        this.#schedule(this.#options.pollMs);
      })
      .catch((error) => {
        this.#starting = null;
        throw error;
      });
    return this.#starting;
  }

  /** Nobody listens: stop reading (a later listener starts again from the end). */
  #stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#cursor = null;
  }

  /** An account event was just written on this instance: read soon rather than at the next poll. */
  hint(): void {
    if (!this.#cursor || this.#closed) return;
    if (this.#reading) {
      this.#hinted = true;
      return;
    }
    if (this.#timer && this.#due - performance.now() > HINT_DELAY_MS) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    this.#schedule(HINT_DELAY_MS);
  }

  #schedule(ms: number): void {
    if (this.#timer || this.#closed) return;
    const timer = setTimeout(() => {
      this.#timer = null;
      void this.#read();
    }, ms);
    timer.unref();
    this.#timer = timer;
    this.#due = performance.now() + ms;
  }

  async #read(): Promise<void> {
    const cursor = this.#cursor;
    if (!cursor || this.#reading) return;
    this.#reading = true;
    this.#hinted = false;
    let full = false;
    try {
      const rows = await repo.allAccountEventsAfter(this.db, this.dialect, cursor, this.#options.batch);
      // Stopped (nobody listens) or restarted meanwhile: this read belongs to a past run.
      if (this.#cursor !== cursor) return;
      full = rows.length === this.#options.batch;
      if (rows.length > 0) {
        const last = rows[rows.length - 1]!;
        this.#cursor = { tx: last.tx, seq: last.seq };
        this.#handOn(rows);
      }
    } catch (error) {
      this.log.warn({ err: error }, "could not read account events for the account streams; trying again");
    } finally {
      this.#reading = false;
    }
    if (this.#cursor) this.#schedule(full ? 0 : this.#hinted ? HINT_DELAY_MS : this.#options.pollMs);
  }

  #handOn(rows: readonly repo.AccountEventRow[]): void {
    // Grouped by owner, in order, so each listener gets one call per read.
    let groups: Map<string, TailedEvent[]> | null = null;
    for (const row of rows) {
      const key = ownerKey(row.account_id, row.environment);
      if (!this.#listeners.has(key)) continue;
      groups ??= new Map();
      let group = groups.get(key);
      if (!group) {
        group = [];
        groups.set(key, group);
      }
      group.push({ row, position: { tx: row.tx, seq: row.seq } });
    }
    if (!groups) return;
    for (const [key, events] of groups) {
      this.delivered += events.length;
      for (const listener of this.#listeners.get(key) ?? []) {
        try {
          listener.deliver(events);
        } catch (error) {
          this.log.error({ err: error }, "an account stream failed to take its events");
        }
      }
    }
  }

  close(): void {
    this.#closed = true;
    this.#stop();
    this.#listeners.clear();
    this.#count = 0;
  }
}
