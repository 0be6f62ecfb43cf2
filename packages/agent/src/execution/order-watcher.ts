/**
 * Order watching on the private account stream: instead of re-reading a working order on a timer,
 * a helper asks `await watcher.changed(orderId, timeoutMs)`, which returns as soon as an
 * `order.filled`, `order.partially_filled` or `order.cancelled` event for that order arrives on
 * `/v1/account/stream`, or after `timeoutMs` (the caller then re-reads the order anyway: a safety
 * net). The watcher never says what the order looks like now; it only says when to look.
 *
 * Nothing can slip between placing an order and waiting for it: every event is remembered per
 * order (the latest `remember` orders), and a caller passes `checkpoint()` taken before it placed
 * the order, so an event that arrived in between answers the first wait at once. When the watcher
 * cannot vouch that it saw everything (the stream started "from now" after the checkpoint, the
 * service no longer had the resume cursor, a connection dropped, the watcher was closed), waiting
 * callers are woken and told to re-read. While the stream is not live (`live` false: connecting,
 * reconnecting, or stopped for good after a refused key), a wait is just its timeout, so callers
 * should then wait as long as they would poll.
 */
import type { AccountStream } from "../account-stream.js";
import type { AccountEvent } from "../client.js";

/** The account events that change a working order. (`order.created` is news to nobody: the caller placed it.) */
export const ORDER_EVENT_TYPES = ["order.filled", "order.partially_filled", "order.cancelled"] as const;

export interface OrderWatcherOptions {
  /** Opens the account stream, e.g. `(o) => client.accountStream(o)`; called on first use. */
  open: (options: { types: string[] }) => AccountStream;
  /**
   * Closes the stream this long after the last `hold()` was released (it reopens on the next use);
   * default: never, only `close()` does.
   */
  idleCloseMs?: number;
  /** How many orders' latest events are remembered (default 1,000). */
  remember?: number;
}

interface OrderNews {
  /** The watcher's tick when the latest event for this order arrived (0: none). */
  news: number;
  /** The tick when a caller last looked (a `changed` returned); undefined: never. */
  looked?: number;
  event?: AccountEvent;
}

type Waiter = (news: boolean) => void;

/**
 * Wakes callers when their orders change, from one lazily opened `AccountStream`.
 *
 * @example
 * const watcher = new OrderWatcher({ open: (o) => client.accountStream(o) });
 * const since = watcher.checkpoint();
 * const order = await client.orders.place({ market_id, side: "buy", price: 0.4, amount: 10 });
 * let current = order;
 * while (current.status === "open") {
 *   await watcher.changed(order.id, watcher.live ? 5_000 : 500, since);
 *   current = await client.orders.get(order.id);
 * }
 * watcher.close();
 */
export class OrderWatcher {
  readonly #options: OrderWatcherOptions;
  #stream: AccountStream | undefined;
  /** Whether the current connection was acknowledged (subscribed or resumed): events arrive as they happen. */
  #live = false;
  #closed = false;
  /** Opening the stream threw (e.g. a client without `accountStream`): waits are plain timeouts. */
  #unavailable = false;
  /** Counts everything that happens (events, resyncs); `checkpoint()` hands it out. */
  #tick = 0;
  /** The tick of the last moment the watcher may have missed an event: everyone should re-read. */
  #resync = 0;
  readonly #orders = new Map<string, OrderNews>();
  readonly #waiters = new Map<string, Set<Waiter>>();
  #holds = 0;
  #idleTimer: NodeJS.Timeout | undefined;
  #readyWaiters = new Set<() => void>();

  constructor(options: OrderWatcherOptions) {
    this.#options = options;
  }

  /** Whether order events arrive as they happen right now (the stream is connected and acknowledged). */
  get live(): boolean {
    return this.#live;
  }

  /** Whether `close()` was called: the watcher stays closed and waits are plain timeouts. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Where "news" starts for an order about to be placed: pass it to `changed`. Opens the stream if
   * it is not open yet.
   */
  checkpoint(): number {
    this.#ensure();
    return this.#tick;
  }

  /**
   * Keeps the stream open until the returned function is called (with `idleCloseMs`, the stream
   * closes that long after the last hold is released). Opens it if needed.
   */
  hold(): () => void {
    this.#holds++;
    clearTimeout(this.#idleTimer);
    this.#ensure();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holds--;
      this.#scheduleIdleClose();
    };
  }

  /** Resolves true once the stream is live, false after `timeoutMs` (or when closed first). */
  ready(timeoutMs: number): Promise<boolean> {
    this.#ensure();
    if (this.#live) return Promise.resolve(true);
    if (this.#closed || this.#unavailable) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#readyWaiters.delete(done);
        resolve(this.#live);
      };
      const timer = setTimeout(done, timeoutMs);
      this.#readyWaiters.add(done);
    });
  }

  /**
   * Resolves `true` as soon as there is news for the order since the caller last looked (for the
   * first call: since `since`, a `checkpoint()` taken before placing it; default 0, i.e. any event
   * remembered for it): an event for it arrived, or the watcher may have missed one. Resolves
   * `false` after `timeoutMs` with no news. Either way the caller re-reads the order; `false` only
   * says nothing was heard.
   */
  changed(orderId: string, timeoutMs: number, since = 0): Promise<boolean> {
    this.#ensure();
    const record = this.#orders.get(orderId);
    const baseline = record?.looked ?? since;
    if (Math.max(record?.news ?? 0, this.#resync) > baseline) {
      this.#look(orderId);
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const set = this.#waiters.get(orderId) ?? new Set<Waiter>();
      this.#waiters.set(orderId, set);
      const wake: Waiter = (news) => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.#waiters.get(orderId) === set) this.#waiters.delete(orderId);
        // Looked now, synchronously: an event arriving after this is news for the next call.
        this.#look(orderId);
        resolve(news);
      };
      const timer = setTimeout(() => wake(false), Math.max(0, timeoutMs));
      set.add(wake);
    });
  }

  /** The latest event remembered for an order. */
  lastEvent(orderId: string): AccountEvent | undefined {
    return this.#orders.get(orderId)?.event;
  }

  /** Forgets an order that is done with (what it remembered is only useful while someone waits). */
  forget(orderId: string): void {
    if (!this.#waiters.has(orderId)) this.#orders.delete(orderId);
  }

  /** Closes the stream for good; callers still waiting are woken (`true`: re-read) and later waits are timeouts. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    this.#shutStream();
    this.#wakeAll();
    for (const done of [...this.#readyWaiters]) done();
  }

  #ensure(): void {
    if (this.#stream || this.#closed || this.#unavailable) return;
    let stream: AccountStream;
    try {
      stream = this.#options.open({ types: [...ORDER_EVENT_TYPES] });
    } catch {
      this.#unavailable = true;
      return;
    }
    this.#stream = stream;
    // Before the first acknowledgement nothing is known: started "from now", the stream does not
    // replay what happened before it subscribed.
    let acknowledged = false;
    stream.on("event", (event: AccountEvent) => {
      if (this.#stream !== stream) return;
      this.#onEvent(event);
    });
    const onAck = (kind: "subscribed" | "resumed") => () => {
      if (this.#stream !== stream) return;
      this.#live = true;
      // A first subscription starts from now: whatever happened since a caller's checkpoint and
      // before it is unknown. A resume replays what was missed, so it needs no resync.
      if (kind === "subscribed" && !acknowledged) this.#markResync();
      acknowledged = true;
      for (const done of [...this.#readyWaiters]) done();
    };
    stream.on("subscribed", onAck("subscribed"));
    stream.on("resumed", onAck("resumed"));
    stream.on("expired", () => {
      // The resume cursor is gone: events in between are lost for good.
      if (this.#stream === stream) this.#markResync();
    });
    stream.on("close", () => {
      if (this.#stream !== stream) return;
      // Not live any more: waiters re-read now and wait as long as they would poll from here on.
      // (The stream resumes after the last event it received, so nothing is lost on reconnect.)
      this.#live = false;
      this.#wakeAll();
    });
  }

  #onEvent(event: AccountEvent): void {
    const data = event.data as { order_id?: unknown } | null | undefined;
    const orderId = typeof data?.order_id === "string" ? data.order_id : undefined;
    if (!orderId) return;
    const tick = ++this.#tick;
    const previous = this.#orders.get(orderId);
    // Re-inserted so the Map's order is the order of the latest news: the oldest is dropped first.
    this.#orders.delete(orderId);
    this.#orders.set(orderId, {
      news: tick,
      event,
      ...(previous?.looked !== undefined ? { looked: previous.looked } : {}),
    });
    this.#trim();
    for (const wake of [...(this.#waiters.get(orderId) ?? [])]) wake(true);
  }

  #look(orderId: string): void {
    const record = this.#orders.get(orderId);
    if (record) record.looked = this.#tick;
    else {
      this.#orders.set(orderId, { news: 0, looked: this.#tick });
      this.#trim();
    }
  }

  #trim(): void {
    const limit = Math.max(1, this.#options.remember ?? 1_000);
    for (const key of this.#orders.keys()) {
      if (this.#orders.size <= limit) break;
      if (!this.#waiters.has(key)) this.#orders.delete(key);
    }
  }

  #markResync(): void {
    this.#resync = ++this.#tick;
    this.#wakeAll();
  }

  #wakeAll(): void {
    for (const waiters of [...this.#waiters.values()]) for (const wake of [...waiters]) wake(true);
  }

  #scheduleIdleClose(): void {
    const idle = this.#options.idleCloseMs;
    if (idle === undefined || this.#holds > 0 || !this.#stream) return;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      if (this.#holds > 0) return;
      // Someone waits without a hold: not idle yet, look again later.
      if (this.#waiters.size > 0) return this.#scheduleIdleClose();
      this.#shutStream();
      // The next stream starts from now: whatever happens until it is acknowledged is unknown.
      this.#markResync();
    }, idle);
    this.#idleTimer.unref?.();
  }

  #shutStream(): void {
    const stream = this.#stream;
    this.#stream = undefined;
    this.#live = false;
    stream?.close();
  }
}
