/**
 * Market ids that a subscribe named and the store did not have, remembered for a while: an id the
 * in-memory catalog does not know is looked up in the store (another instance's sync may have added
 * it), so without this a client repeating bogus ids would cost a query per message.
 *
 * Bounded in time and size: an entry lives `ttlMs` (a market that appears on another instance is
 * subscribable here within that time), at most `maxEntries` are kept (the oldest go first), and
 * the whole set is forgotten as soon as the local catalog changes (`version`, bumped by every
 * catalog sync and every market found in the store), so a market this instance's sync adds is
 * subscribable at once.
 */
export interface UnknownMarketsOptions {
  ttlMs: number;
  maxEntries: number;
}

export const DEFAULT_UNKNOWN_MARKETS: UnknownMarketsOptions = { ttlMs: 60_000, maxEntries: 10_000 };

export class UnknownMarkets {
  /** Id -> until when it is taken as unknown (ms); insertion order is expiry order. */
  readonly #until = new Map<string, number>();
  #version: number;

  constructor(
    /** Changes whenever the catalog could answer differently (PricesService.version). */
    private readonly version: () => number,
    private readonly options: UnknownMarketsOptions = DEFAULT_UNKNOWN_MARKETS,
  ) {
    this.#version = version();
  }

  get size(): number {
    return this.#until.size;
  }

  /** True when `id` was found missing less than `ttlMs` ago and the catalog has not changed since. */
  has(id: string, now: number): boolean {
    this.#sync();
    const until = this.#until.get(id);
    if (until === undefined) return false;
    if (until > now) return true;
    this.#until.delete(id);
    return false;
  }

  /**
   * Remembers ids a look-up found missing. `seenVersion` is the catalog version the look-up started
   * from: if the catalog changed meanwhile, the answer may be stale and nothing is remembered.
   */
  add(ids: readonly string[], now: number, seenVersion: number): void {
    if (ids.length === 0 || this.version() !== seenVersion) return;
    this.#sync();
    const until = now + this.options.ttlMs;
    for (const id of ids) {
      this.#until.delete(id);
      this.#until.set(id, until);
    }
    while (this.#until.size > this.options.maxEntries) {
      const oldest = this.#until.keys().next().value as string;
      this.#until.delete(oldest);
    }
  }

  #sync(): void {
    const version = this.version();
    if (version === this.#version) return;
    this.#version = version;
    this.#until.clear();
  }
}
