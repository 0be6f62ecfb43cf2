/**
 * Request counts per API key and minute, for the console's usage page: how many requests the auth
 * plugin admitted and how many it refused with 429, in the rate limiter's own one-minute windows.
 *
 * Counting is on every request's hot path, so `record` is a Map look-up and an increment, no I/O.
 * The counts are written every few seconds (`flush`, a lifecycle job, and once more at shutdown)
 * with an additive upsert, so several instances add up in the same rows. What a page reads is the
 * stored counts plus what this process has not written yet.
 */
import { type KeyLimits, limitsFor } from "../access/limits";
import type { KeyType } from "../access/permissions";
import type { Account } from "../accounts/service";
import type { Config } from "../config";
import type { Clock } from "../infra/clock";
import type { Db } from "../infra/db/store";
import { WINDOW_MS } from "../infra/limiter/limiter";
import { type Logger, silentLogger } from "../infra/log";
import * as repo from "./usage-repo";

/** Counts older than this are deleted (the page shows 24 hours; the rest is slack). */
export const USAGE_RETENTION_MINUTES = 48 * 60;
/** How often, at most, a flush also prunes old rows. */
const PRUNE_EVERY_MS = 10 * 60_000;

interface Bucket {
  minute: number;
  requests: number;
  limited: number;
}

export interface UsageSlot {
  /** Start of the slot (ms since the epoch). */
  start: number;
  requests: number;
  limited: number;
  /** The most requests (admitted and refused) in a single minute of the slot. */
  peak: number;
  /** Minutes of the slot in which some request was refused. */
  limitedMinutes: number;
}

export interface KeyUsageReport {
  keyId: string;
  /** This minute (the limiter's current window), stored and not yet written. */
  thisMinute: { requests: number; limited: number };
  /** Oldest first, the last one holding now. */
  slots: UsageSlot[];
  totals: { requests: number; limited: number; peak: number; limitedMinutes: number };
}

export interface ReportOptions {
  /** How far back (default 24 h). */
  hours?: number;
  /** Width of a slot (default 15 min); must divide an hour. */
  slotMinutes?: number;
}

export class KeyUsage {
  /** key id -> the counts of its latest minute (since the last flush). */
  #current = new Map<string, Bucket>();
  /** Counts of earlier minutes not written yet, one entry per (key, minute) change. */
  #pending: Array<[string, Bucket]> = [];
  /** The batch being written: still counted by readers until it is committed. */
  #writing: Array<[string, Bucket]> = [];
  #flushing: Promise<void> | undefined;
  /** Batches committed so far: a report that saw one land while it read starts again. */
  #committed = 0;
  #lastPrune = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly log: Logger = silentLogger,
  ) {}

  /** Counts one request of a key: admitted, or refused by the rate limit. The hot path: no I/O. */
  record(keyId: string, admitted: boolean, nowMs: number): void {
    const minute = Math.floor(nowMs / WINDOW_MS);
    let bucket = this.#current.get(keyId);
    if (bucket === undefined || bucket.minute !== minute) {
      if (bucket !== undefined) this.#pending.push([keyId, bucket]);
      bucket = { minute, requests: 0, limited: 0 };
      this.#current.set(keyId, bucket);
    }
    if (admitted) bucket.requests++;
    else bucket.limited++;
  }

  /**
   * The limits of a key of this type on this account, as the auth plugin applies them (its
   * `requests_per_minute` is the budget the 429s are about).
   */
  limits(account: Account, keyType: KeyType): KeyLimits {
    return limitsFor(account, keyType, this.config);
  }

  /** Writes the counts collected so far; one flush at a time (a second waits, then writes its own). */
  async flush(): Promise<void> {
    // The earlier flush's failure is its caller's to report; this one still writes its own.
    while (this.#flushing) await this.#flushing.catch(() => undefined);
    this.#flushing = this.#write().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const batch = this.#pending;
    for (const entry of this.#current) batch.push(entry);
    this.#pending = [];
    // A fresh map: requests arriving during the write count from zero and are added next time.
    this.#current = new Map();
    this.#writing = batch;
    try {
      if (batch.length > 0) {
        await repo.addUsage(this.db, merge(batch));
        this.#committed++;
      }
    } catch (error) {
      // Kept for the next flush, unless it is already older than anything the page shows.
      const keep = Math.floor(this.clock.now() / WINDOW_MS) - USAGE_RETENTION_MINUTES;
      this.#pending.unshift(...batch.filter(([, b]) => b.minute >= keep));
      throw error;
    } finally {
      this.#writing = [];
    }
    const now = this.clock.now();
    if (now - this.#lastPrune >= PRUNE_EVERY_MS) {
      this.#lastPrune = now;
      await repo
        .pruneUsage(this.db, Math.floor(now / WINDOW_MS) - USAGE_RETENTION_MINUTES)
        .catch((error) => this.log.warn({ err: error }, "could not prune old request counts"));
    }
  }

  /** Counts not written yet (including a batch being written), per key and minute. */
  #unwritten(keyIds: ReadonlySet<string>): repo.UsageRow[] {
    const entries = [...this.#writing, ...this.#pending, ...this.#current];
    return merge(entries.filter(([id]) => keyIds.has(id)));
  }

  /** Per key: this minute, and the last hours in slots, for the usage page. */
  async report(keyIds: readonly string[], options: ReportOptions = {}): Promise<Map<string, KeyUsageReport>> {
    // Stored and unwritten counts are read at different moments: a batch written in between would
    // be counted twice or not at all, so such a reading is done again (a flush is seconds apart).
    for (let attempt = 0; ; attempt++) {
      if (this.#flushing) await this.#flushing.catch(() => undefined);
      const committed = this.#committed;
      const reports = await this.#report(keyIds, options);
      if (committed === this.#committed || attempt >= 2) return reports;
    }
  }

  async #report(keyIds: readonly string[], options: ReportOptions): Promise<Map<string, KeyUsageReport>> {
    const hours = options.hours ?? 24;
    const slotMinutes = options.slotMinutes ?? 15;
    const slotCount = (hours * 60) / slotMinutes;
    const nowMinute = Math.floor(this.clock.now() / WINDOW_MS);
    const lastSlot = Math.floor(nowMinute / slotMinutes);
    const firstSlot = lastSlot - slotCount + 1;
    const fromMinute = firstSlot * slotMinutes;

    const wanted = new Set(keyIds);
    const stored = await repo.usageSlots(this.db, keyIds, fromMinute, slotMinutes);
    const memory = this.#unwritten(wanted);
    // The stored rows of this minute and of the minutes memory adds to: a minute's total, peak and
    // whether it was limited depend on both parts.
    const since = memory.reduce((m, r) => Math.min(m, r.minute), nowMinute);
    const recent = await repo.usageMinutes(this.db, keyIds, since);
    const storedMinute = new Map(recent.map((r) => [`${r.key_id}\u0000${r.minute}`, r]));

    const reports = new Map<string, KeyUsageReport>();
    for (const id of keyIds) {
      reports.set(id, {
        keyId: id,
        thisMinute: { requests: 0, limited: 0 },
        slots: Array.from({ length: slotCount }, (_, i) => ({
          start: (firstSlot + i) * slotMinutes * WINDOW_MS,
          requests: 0,
          limited: 0,
          peak: 0,
          limitedMinutes: 0,
        })),
        totals: { requests: 0, limited: 0, peak: 0, limitedMinutes: 0 },
      });
    }
    for (const row of stored) {
      const slot = reports.get(row.key_id)?.slots[row.slot - firstSlot];
      if (!slot) continue;
      slot.requests += row.requests;
      slot.limited += row.limited;
      slot.peak = Math.max(slot.peak, row.peak);
      slot.limitedMinutes += row.limited_minutes;
    }
    for (const row of memory) {
      const report = reports.get(row.key_id);
      const slot = report?.slots[Math.floor(row.minute / slotMinutes) - firstSlot];
      if (!report || !slot) continue;
      const before = storedMinute.get(`${row.key_id}\u0000${row.minute}`);
      const requests = (before?.requests ?? 0) + row.requests;
      const limited = (before?.limited ?? 0) + row.limited;
      slot.requests += row.requests;
      slot.limited += row.limited;
      slot.peak = Math.max(slot.peak, requests + limited);
      if (limited > 0 && !(before && before.limited > 0)) slot.limitedMinutes++;
    }
    // This minute: what is stored of it plus what is not written yet.
    for (const row of [...recent, ...memory]) {
      const report = reports.get(row.key_id);
      if (row.minute !== nowMinute || !report) continue;
      report.thisMinute.requests += row.requests;
      report.thisMinute.limited += row.limited;
    }
    for (const report of reports.values()) {
      for (const slot of report.slots) {
        report.totals.requests += slot.requests;
        report.totals.limited += slot.limited;
        report.totals.peak = Math.max(report.totals.peak, slot.peak);
        report.totals.limitedMinutes += slot.limitedMinutes;
      }
    }
    return reports;
  }
}

/** Sums entries of the same key and minute into one row each. */
function merge(entries: ReadonlyArray<readonly [string, Bucket]>): repo.UsageRow[] {
  const rows = new Map<string, repo.UsageRow>();
  for (const [keyId, bucket] of entries) {
    const id = `${keyId}\u0000${bucket.minute}`;
    const row = rows.get(id);
    if (row) {
      row.requests += bucket.requests;
      row.limited += bucket.limited;
    } else {
      rows.set(id, {
        key_id: keyId,
        minute: bucket.minute,
        requests: bucket.requests,
        limited: bucket.limited,
      });
    }
  }
  return [...rows.values()];
}
