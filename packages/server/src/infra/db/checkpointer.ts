/**
 * Background checkpoints for a SQLite file in WAL mode.
 *
 * A commit appends pages to the WAL; a checkpoint copies them into the database file and, to be
 * safe against power loss, fsyncs the WAL before and the database after. By default the connection
 * that commits runs a checkpoint itself every 1,000 WAL pages, synchronously: on the server that is
 * the event loop, stalled for the copy and for the fsyncs, every few hundred order placements.
 *
 * Here a worker thread with its own connection runs PASSIVE checkpoints instead: it never waits for
 * the writer and never blocks it, and its work happens on another core. The server's connection
 * keeps a checkpoint of its own as a backstop, at a larger WAL size (`BACKSTOP_CHECKPOINT_PAGES`):
 * the WAL can only start over from the beginning after a checkpoint that caught up completely, and
 * under a steady stream of writes the background one can stay a commit or two behind for a long
 * stretch (or its thread may have failed). The backstop finds almost everything already copied, so
 * it costs little more than its fsyncs.
 *
 * Checkpoints change no data, so they do not move `PRAGMA data_version` on the server's connection
 * (which the store uses to notice other processes' writes).
 */
import { Worker } from "node:worker_threads";

/** The server connection's own checkpoint threshold while the background checkpointer runs. */
export const BACKSTOP_CHECKPOINT_PAGES = 4_000;

/**
 * Delay between checkpoints while the WAL grows. Not shorter: a checkpoint that catches up lets the
 * next commit start the WAL over, and SQLite then fsyncs the WAL header on the committing
 * connection, the event loop. Fewer checkpoints mean fewer of those fsyncs, and pages that several
 * commits rewrote in between are copied once. Not longer: the WAL must stay far below the backstop
 * (`BACKSTOP_CHECKPOINT_PAGES`) at the highest write rate the server sustains (bench/orders.ts).
 */
const BUSY_MS = 100;
/** Longest delay when nothing is written (the delay doubles up to it). */
const IDLE_MS = 250;

export interface CheckpointStats {
  /** Checkpoints run. */
  runs: number;
  /** After the latest one: frames in the WAL, and how many of them are in the database file. */
  walFrames: number;
  checkpointedFrames: number;
  /** The latest failure, if the latest checkpoint failed. */
  lastError: string | undefined;
}

export class BackgroundCheckpointer {
  readonly #worker: Worker;
  readonly #stats: CheckpointStats = { runs: 0, walFrames: 0, checkpointedFrames: 0, lastError: undefined };
  #stopped: Promise<void> | undefined;

  constructor(file: string) {
    this.#worker = new Worker(new URL("./checkpoint-worker.mjs", import.meta.url), {
      workerData: { file, busyMs: BUSY_MS, idleMs: IDLE_MS },
      // The worker is plain JavaScript: none of the parent's loaders or profilers.
      execArgv: [],
    });
    // It must not keep a process alive that has nothing else to do.
    this.#worker.unref();
    this.#worker.on("message", (message: { log: number; checkpointed: number } | { error: string }) => {
      this.#stats.runs++;
      if ("error" in message) {
        this.#stats.lastError = message.error;
        return;
      }
      this.#stats.lastError = undefined;
      this.#stats.walFrames = message.log;
      this.#stats.checkpointedFrames = message.checkpointed;
    });
    // A checkpointer that failed to start leaves checkpoints to the backstop: slower, still correct.
    this.#worker.on("error", (error) => {
      this.#stats.lastError = String(error);
    });
  }

  stats(): CheckpointStats {
    return { ...this.#stats };
  }

  /** Stops the thread and closes its connection (before the store's own, which then cleans up the WAL). */
  stop(): Promise<void> {
    this.#stopped ??= new Promise<void>((resolve) => {
      if (this.#worker.threadId === -1) return resolve();
      this.#worker.once("exit", () => resolve());
      this.#worker.postMessage("stop");
      // A thread stuck in a checkpoint is ended anyway.
      setTimeout(() => void this.#worker.terminate(), 2_000).unref();
    });
    return this.#stopped;
  }
}
