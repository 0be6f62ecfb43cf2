// The SQLite checkpointer thread (infra/db/checkpointer.ts starts it): its own connection to the
// database file, copying committed pages from the WAL into the database with PASSIVE checkpoints,
// which never wait for nor block the writer. Plain JavaScript: it needs only better-sqlite3.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const { file, busyMs, idleMs } = workerData;
const db = new Database(file, { fileMustExist: true });
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");

let delay = busyMs;
let lastLog = -1;
let timer;

function tick() {
  try {
    const { log, checkpointed } = checkpoint.get();
    // Frames were added since the last run: look again soon. Nothing new: back off, up to idleMs.
    delay = log !== lastLog ? busyMs : Math.min(delay * 2, idleMs);
    lastLog = log;
    parentPort.postMessage({ log, checkpointed });
  } catch (error) {
    delay = idleMs;
    parentPort.postMessage({ error: String(error) });
  }
  timer = setTimeout(tick, delay);
}

parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
timer = setTimeout(tick, busyMs);
