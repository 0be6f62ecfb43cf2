/**
 * Counted slots per subject with a cap: how many stream connections a key holds. The in-memory
 * implementation counts in this process; the Redis one counts across instances (a sorted set per
 * subject whose members expire unless their instance keeps refreshing them, so a crashed instance's
 * connections stop counting within a minute).
 */
export interface ConnectionSlots {
  readonly kind: "memory" | "redis";
  /** Takes a slot if fewer than `limit` are held; returns its token, or null when full. */
  acquire(subject: string, limit: number, nowMs: number): Promise<string | null>;
  release(subject: string, token: string): Promise<void>;
  /** Keeps this instance's slots alive (call at least every `SLOT_TTL_MS / 2`). */
  refresh(held: ReadonlyArray<{ subject: string; token: string }>, nowMs: number): Promise<void>;
  /** Slots currently held for a subject. */
  count(subject: string, nowMs: number): Promise<number>;
  close(): Promise<void>;
}

export const SLOT_TTL_MS = 60_000;
