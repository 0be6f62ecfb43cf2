/**
 * Cluster-wide jobs: each runs on one instance at a time, the one holding its lease (leases.ts);
 * the others stand by and take it over when the lease expires (the holder died or stalled).
 *
 * A holder extends its leases every `leaseMs / 3`. Fencing: after each extension it has until
 * `leaseMs - leaseMs / 3` (on its own monotonic clock, counted from before the extension was asked
 * for) to extend again; past that, a watchdog stops the job, whatever the store says. The store only
 * lets another instance take the lease `leaseMs` after the last extension (by the store's clock, which
 * sets the expiry after the request left), so the holder has stopped at least `leaseMs / 3` before
 * anyone else may start, as long as the job's `stop` returns within that. An instance standing by
 * tries free leases every second (at most `leaseMs / 3`), so a dead holder's jobs run again within
 * about `leaseMs` plus that.
 */
import type { Logger } from "../infra/log";
import type { LeaseStore } from "./leases";

export interface ClusterJob {
  /** Also the lease's name: the same on every instance. */
  name: string;
  /** Starts the work (timers, connections); what it starts runs until `stop`. */
  start(): void | Promise<void>;
  /** Stops the work; resolves when nothing of it runs any more. */
  stop(): void | Promise<void>;
}

export type JobState = "running" | "standby";

export interface ClusterJobsOptions {
  /** This instance, as leases name their holder. */
  instanceId: string;
  /** How long a lease lasts without being extended (JOB_LEASE_SECONDS). */
  leaseMs: number;
  log: Logger;
  /** How often a free lease is tried while standing by (default min(1 s, leaseMs / 3)). */
  standbyPollMs?: number;
  /** The instance will run its background work by lease (see `clustered`), even before `start`. */
  clustered?: boolean;
}

interface Slot {
  job: ClusterJob;
  /** The lease's fencing token while this instance holds it. */
  token: number | null;
  /** When (performance.now()) the lease is next extended. */
  extendAt: number;
  watchdog: NodeJS.Timeout | null;
  /** The start or stop under way: transitions of one job never overlap. */
  transition: Promise<void>;
  busy: boolean;
}

export class ClusterJobs {
  readonly #slots = new Map<string, Slot>();
  readonly #options: Required<ClusterJobsOptions>;
  /** Times this instance took a job another had held (the lease's token had moved on before). */
  readonly #takeovers = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;
  #ticking = false;
  #stopped = true;
  #everStarted = false;

  constructor(
    private readonly leases: LeaseStore,
    options: ClusterJobsOptions,
  ) {
    this.#options = {
      standbyPollMs: Math.min(1_000, Math.floor(options.leaseMs / 3)),
      clustered: false,
      ...options,
    };
  }

  get instanceId(): string {
    return this.#options.instanceId;
  }

  add(job: ClusterJob): void {
    if (this.#slots.has(job.name)) throw new Error(`cluster job ${job.name} added twice`);
    this.#slots.set(job.name, {
      job,
      token: null,
      extendAt: 0,
      watchdog: null,
      transition: Promise.resolve(),
      busy: false,
    });
  }

  /**
   * Whether this instance's background work goes by the leases: it was built to run them
   * (`clustered`), or `start` was called. Otherwise (tests, tools) an instance does what the jobs
   * would in one process; clustered, it does only what it holds (none of it while starting or after
   * stopping).
   */
  get clustered(): boolean {
    return this.#options.clustered || this.#everStarted;
  }

  /** Whether this instance runs the job now (holds its lease). */
  runs(name: string): boolean {
    return this.#slots.get(name)?.token != null;
  }

  /** Per job, how many times this instance took it over from another holder. */
  takeovers(): Record<string, number> {
    return Object.fromEntries([...this.#slots.keys()].map((name) => [name, this.#takeovers.get(name) ?? 0]));
  }

  /** Each job's state on this instance. */
  status(): Record<string, JobState> {
    const status: Record<string, JobState> = {};
    for (const [name, slot] of this.#slots) status[name] = slot.token === null ? "standby" : "running";
    return status;
  }

  /** Starts contending for every job; those it gets start at once. */
  async start(): Promise<void> {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#everStarted = true;
    await this.#tick();
  }

  /** Stops every job this instance runs, then gives their leases up (another may take them at once). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await Promise.all(
      [...this.#slots.values()].map(async (slot) => {
        const token = slot.token;
        await this.#lose(slot, null);
        if (token !== null) {
          await this.#bounded(this.leases.end(slot.job.name, this.instanceId, token)).catch((error) =>
            this.#options.log.warn({ err: error, job: slot.job.name }, "could not end a job lease"),
          );
        }
      }),
    );
  }

  async #tick(): Promise<void> {
    if (this.#ticking || this.#stopped) return;
    this.#ticking = true;
    try {
      await Promise.all([...this.#slots.values()].map((slot) => this.#visit(slot)));
    } finally {
      this.#ticking = false;
      this.#schedule();
    }
  }

  #schedule(): void {
    if (this.#stopped || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#tick();
    }, this.#options.standbyPollMs);
    this.#timer.unref();
  }

  async #visit(slot: Slot): Promise<void> {
    // A job still stopping is not taken again until it has stopped; one starting is still extended.
    if (slot.busy && slot.token === null) return;
    const { leaseMs, instanceId, log } = this.#options;
    const name = slot.job.name;
    const asked = performance.now();
    try {
      if (slot.token === null) {
        const token = await this.#bounded(this.leases.take(name, instanceId, leaseMs));
        if (token === undefined || this.#stopped) {
          if (token !== undefined) await this.#bounded(this.leases.end(name, instanceId, token));
          return;
        }
        this.#held(slot, token, asked);
        // Token 1 is the job's first holder ever; a later one took it from someone.
        if (token > 1) this.#takeovers.set(name, (this.#takeovers.get(name) ?? 0) + 1);
        log.info({ job: name, token, instance_id: instanceId }, "took cluster job");
        this.#transition(slot, () => slot.job.start());
        return;
      }
      if (asked < slot.extendAt) return;
      const token = slot.token;
      if (await this.#bounded(this.leases.extend(name, instanceId, token, leaseMs))) {
        if (slot.token === token) this.#held(slot, token, asked);
      } else {
        await this.#lose(slot, "its lease was taken or expired");
      }
    } catch (error) {
      // The store is unreachable: keep running until the watchdog says the lease may be gone.
      log.warn({ err: error, job: name }, "could not reach the job lease store");
    }
  }

  /**
   * A lease call that has not answered within a third of the lease counts as failed (a store that
   * hangs must not stall the runner: it would neither stop its jobs in time nor take any later).
   */
  #bounded<T>(call: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      call,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error("the lease store did not answer in time")),
          this.#options.leaseMs / 3,
        );
        timer.unref();
      }),
    ]).finally(() => clearTimeout(timer));
  }

  /** Holds the lease from `asked` on: extend a third of the way, stop (watchdog) two thirds in. */
  #held(slot: Slot, token: number, asked: number): void {
    const { leaseMs } = this.#options;
    slot.token = token;
    slot.extendAt = asked + leaseMs / 3;
    if (slot.watchdog) clearTimeout(slot.watchdog);
    const deadline = asked + leaseMs - leaseMs / 3;
    slot.watchdog = setTimeout(
      () => void this.#lose(slot, "its lease could not be extended in time"),
      Math.max(0, deadline - performance.now()),
    );
    slot.watchdog.unref();
  }

  /** Stops the job here (if it runs); `why` null: a shutdown, not a loss. */
  async #lose(slot: Slot, why: string | null): Promise<void> {
    if (slot.watchdog) clearTimeout(slot.watchdog);
    slot.watchdog = null;
    if (slot.token === null) return slot.transition;
    const token = slot.token;
    slot.token = null;
    if (why) {
      this.#options.log.warn({ job: slot.job.name, token, reason: why }, "lost cluster job: stopping it");
    }
    this.#transition(slot, () => slot.job.stop());
    return slot.transition;
  }

  #transition(slot: Slot, work: () => void | Promise<void>): void {
    slot.busy = true;
    slot.transition = slot.transition
      .then(work)
      .catch((error) =>
        this.#options.log.error({ err: error, job: slot.job.name }, "cluster job failed to change state"),
      )
      .finally(() => {
        slot.busy = false;
      });
  }
}
