/**
 * A place in the outbox's order: (transaction id, seq). On PostgreSQL sequence numbers are handed
 * out before commit, so the order consumers read in is by transaction first (see outbox.ts); on
 * SQLite every transaction id is "0" and the order is by seq alone.
 */
export interface EventPosition {
  /** The recording transaction's id as text ("0" on SQLite). */
  tx: string;
  seq: number;
}

/** Negative when `a` comes first, positive when `b` does, 0 for the same place. */
export function comparePositions(a: EventPosition, b: EventPosition): number {
  if (a.tx !== b.tx) {
    const tx = BigInt(a.tx) - BigInt(b.tx);
    if (tx !== 0n) return tx < 0n ? -1 : 1;
  }
  return a.seq - b.seq;
}
