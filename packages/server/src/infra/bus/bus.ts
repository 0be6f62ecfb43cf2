/**
 * The message bus carries hot, lossy-tolerant traffic between components and instances: quote
 * updates, cache invalidations. Durable facts go through the events outbox instead. In-process by
 * default; Redis pub/sub when REDIS_URL is set so every instance sees every message.
 */
export type BusHandler = (message: unknown) => void;

export interface Bus {
  readonly kind: "memory" | "redis";
  publish(channel: string, message: unknown): Promise<void>;
  /** Present when delivery needs no I/O (in-process): the hot path skips a promise per message. */
  publishSync?(channel: string, message: unknown): void;
  /** Returns a function that removes the subscription. Resolves once the subscription is live. */
  subscribe(channel: string, handler: BusHandler): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
