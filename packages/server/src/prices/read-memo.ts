/**
 * Store reads kept between requests. The history route reads the same few rows (the market, its
 * stored candles, its backfill record) for every request about a market; most of its cost was those
 * reads. An entry serves while the revision it was read at is still current (this process bumps a
 * market's revision whenever it writes that market's candles or backfill record) and for at most
 * `ttlMs`, within which writes by other instances become visible. Entries are shared: callers must
 * not change what they get. Bounded: past `maxEntries` the oldest entry goes.
 */
import type { Clock } from "../infra/clock";

interface Entry {
  revision: number;
  expiresAt: number;
  value: Promise<unknown>;
}

export class ReadMemo {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** The value kept for `key` at `revision`, or what `load` gives (kept unless it fails). */
  read<T>(key: string, revision: number, load: () => Promise<T>): Promise<T> {
    const now = this.clock.now();
    const kept = this.#entries.get(key);
    if (kept && kept.revision === revision && kept.expiresAt > now) return kept.value as Promise<T>;
    if (kept) this.#entries.delete(key);
    if (this.ttlMs <= 0) return load();
    const value = load();
    const entry: Entry = { revision, expiresAt: now + this.ttlMs, value };
    value.catch(() => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    if (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, entry);
    return value;
  }

  get size(): number {
    return this.#entries.size;
  }
}
