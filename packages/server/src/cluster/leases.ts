/**
 * Leases on cluster-wide jobs: which instance runs a job that must run once per cluster (a venue's
 * catalog sync, the matcher, the expiry sweep, the live fill poller…).
 *
 * Why PostgreSQL rows and not Redis: the jobs write to PostgreSQL, and a lease kept there is judged
 * by the same clock (`now()`) and could be checked in the jobs' own write transactions; a Redis
 * lease would add a second system whose view of time and of the holder can disagree with the
 * store's. A lease is a row (job, holder, token, expires_at): taken only once expired, extended
 * only by its holder under its token, and its token grows each time it changes hands.
 *
 * The embedded store runs one process: `LocalLeases` grants every job at once, as before.
 */
import type { Db } from "../infra/db/store";
import * as repo from "./repo";

export interface LeaseStore {
  /** Takes `job` for `holder` if free or expired: its fencing token, or undefined when held. */
  take(job: string, holder: string, ttlMs: number): Promise<number | undefined>;
  /** Extends a held lease; false when it is no longer this holder's under this token. */
  extend(job: string, holder: string, token: number, ttlMs: number): Promise<boolean>;
  /** Gives the lease up at once. */
  end(job: string, holder: string, token: number): Promise<void>;
}

/** Leases in the shared PostgreSQL store. */
export class StoreLeases implements LeaseStore {
  constructor(private readonly db: Db) {}

  take(job: string, holder: string, ttlMs: number): Promise<number | undefined> {
    return repo.takeLease(this.db, job, holder, ttlMs);
  }

  extend(job: string, holder: string, token: number, ttlMs: number): Promise<boolean> {
    return repo.extendLease(this.db, job, holder, token, ttlMs);
  }

  end(job: string, holder: string, token: number): Promise<void> {
    return repo.endLease(this.db, job, holder, token);
  }
}

/** One process, every job: each lease is granted at once and never lost (nobody takes one over). */
export class LocalLeases implements LeaseStore {
  async take(): Promise<number> {
    return 1;
  }

  async extend(): Promise<boolean> {
    return true;
  }

  async end(): Promise<void> {}
}
