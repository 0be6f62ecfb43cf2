/**
 * Group commit: units of work that arrive in the same turn of the event loop share one
 * transaction, each inside its own savepoint. A unit that throws is rolled back to its savepoint
 * alone and its caller gets the error; the others commit together, and every caller learns its
 * outcome only after the commit (so nothing is acknowledged before it is durable). On SQLite a
 * commit costs far more than the small statements of an order placement, so a burst of orders
 * pays for one commit instead of one each.
 */
import { inTransaction, Statement } from "./prepared";
import type { Db, Trx } from "./store";

const SAVEPOINT = new Statement("savepoint unit");
const RELEASE = new Statement("release savepoint unit");
const ROLLBACK = new Statement("rollback to savepoint unit");

interface Unit {
  work: (trx: Trx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class TransactionBatcher {
  #queue: Unit[] = [];
  #scheduled = false;
  #running: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly maxBatch = 64,
  ) {}

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
      const batch = this.#queue.splice(0, this.maxBatch);
      const outcomes: Array<{ ok: boolean; value: unknown }> = [];
      try {
        await inTransaction(this.db, async (trx) => {
          for (const unit of batch) {
            await SAVEPOINT.run(trx, []);
            try {
              const value = await unit.work(trx);
              await RELEASE.run(trx, []);
              outcomes.push({ ok: true, value });
            } catch (error) {
              await ROLLBACK.run(trx, []);
              await RELEASE.run(trx, []);
              outcomes.push({ ok: false, value: error });
            }
          }
        });
      } catch (error) {
        // The commit itself failed: nothing in the batch happened.
        for (const unit of batch) unit.reject(error);
        continue;
      }
      batch.forEach((unit, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) unit.resolve(outcome.value);
        else unit.reject(outcome.value);
      });
    }
  }
}
