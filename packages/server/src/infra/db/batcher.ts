/**
 * Group commit: units of work that arrive in the same turn of the event loop share one
 * transaction. A unit that throws is undone alone and its caller gets the error; the others commit
 * together, and every caller learns its outcome only after the commit (so nothing is acknowledged
 * before it is durable). On SQLite a commit costs far more than the small statements of an order
 * placement, so a burst of orders pays for one commit instead of one each.
 *
 * How a failing unit is undone alone:
 * - By default each unit runs inside its own savepoint, rolled back if it throws.
 * - With `rerunnable` (units whose only effects are in the transaction: no memory, no network), a
 *   batch first runs without savepoints. If a unit throws, the whole transaction rolls back and the
 *   batch runs again the default way, so the unit that failed is the only one left out. Savepoints
 *   are not free (SQLite copies every page a savepoint first changes, a real share of an order
 *   placement's work), and failures are rare, so this is cheaper on average. After a failure the next
 *   few batches use savepoints straight away: a caller that keeps failing does not make every
 *   batch run twice.
 * - A batch of one unit needs no savepoint either way: its transaction is its own.
 */
import { sql } from "kysely";
import { inTransaction, prepare } from "./prepared";
import type { Db, Trx } from "./store";

// Prepared: on SQLite they run straight on the transaction's connection (infra/db/prepared.ts).
const SAVEPOINT = prepare(() => sql`savepoint unit`);
const RELEASE = prepare(() => sql`release savepoint unit`);
const ROLLBACK = prepare(() => sql`rollback to savepoint unit`);

/** Batches that use savepoints from the start after a rerunnable batch had a failing unit. */
const CAUTIOUS_BATCHES = 8;

interface Unit {
  work: (trx: Trx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Thrown through an optimistic batch's transaction to roll it back when one of its units failed. */
class UnitFailed extends Error {}

export interface BatcherOptions {
  /** Most units per transaction. */
  maxBatch?: number;
  /** Units only touch the transaction, so running one twice (after a rollback) is safe. */
  rerunnable?: boolean;
}

export class TransactionBatcher {
  #queue: Unit[] = [];
  #scheduled = false;
  #running: Promise<void> = Promise.resolve();
  readonly #maxBatch: number;
  readonly #rerunnable: boolean;
  #cautious = 0;
  readonly #stats = { batches: 0, units: 0, reruns: 0 };

  constructor(
    private readonly db: Db,
    options: BatcherOptions = {},
  ) {
    this.#maxBatch = options.maxBatch ?? 64;
    this.#rerunnable = options.rerunnable ?? false;
  }

  /** Batches committed, units run, and optimistic batches run again after a failure (tests, ops). */
  stats(): { batches: number; units: number; reruns: number } {
    return { ...this.#stats };
  }

  /** Runs `work` in a shared transaction; resolves with its result once that transaction commits. */
  run<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#running = this.#running.then(() => this.#drain());
        });
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      let outcomes: Outcome[] | undefined;
      try {
        if (batch.length === 1) {
          outcomes = await this.#runAlone(batch[0]!);
        } else if (this.#rerunnable && this.#cautious === 0) {
          outcomes = await this.#runOptimistically(batch);
          if (!outcomes) {
            this.#stats.reruns++;
            this.#cautious = CAUTIOUS_BATCHES;
          }
        } else if (this.#cautious > 0) {
          this.#cautious--;
        }
        outcomes ??= await this.#runWithSavepoints(batch);
      } catch (error) {
        // The commit itself failed: nothing in the batch happened.
        for (const unit of batch) unit.reject(error);
        continue;
      }
      this.#stats.batches++;
      this.#stats.units += batch.length;
      batch.forEach((unit, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) unit.resolve(outcome.value);
        else unit.reject(outcome.error);
      });
    }
  }

  /** One unit, one transaction: its failure rolls the transaction back. */
  async #runAlone(unit: Unit): Promise<Outcome[]> {
    try {
      return [{ ok: true, value: await inTransaction(this.db, (trx) => unit.work(trx)) }];
    } catch (error) {
      return [{ ok: false, error }];
    }
  }

  /** Every unit without savepoints; undefined (and nothing written) if one of them threw. */
  async #runOptimistically(batch: Unit[]): Promise<Outcome[] | undefined> {
    try {
      return await inTransaction(this.db, async (trx) => {
        const outcomes: Outcome[] = [];
        for (const unit of batch) {
          try {
            outcomes.push({ ok: true, value: await unit.work(trx) });
          } catch {
            throw new UnitFailed();
          }
        }
        return outcomes;
      });
    } catch (error) {
      if (error instanceof UnitFailed) return undefined;
      throw error;
    }
  }

  async #runWithSavepoints(batch: Unit[]): Promise<Outcome[]> {
    return inTransaction(this.db, async (trx) => {
      const outcomes: Outcome[] = [];
      for (const unit of batch) {
        await SAVEPOINT.run(trx, []);
        try {
          const value = await unit.work(trx);
          await RELEASE.run(trx, []);
          outcomes.push({ ok: true, value });
        } catch (error) {
          await ROLLBACK.run(trx, []);
          await RELEASE.run(trx, []);
          outcomes.push({ ok: false, error });
        }
      }
      return outcomes;
    });
  }
}
