import { Redis } from "ioredis";
import { type Logger, silentLogger } from "../log";
import type { Bus, BusHandler } from "./bus";

/**
 * Redis pub/sub bus. Messages are JSON; channels are namespaced by `prefix` so several deployments
 * (or test runs) can share one Redis. Publishing and subscribing use separate connections because a
 * subscribed Redis connection cannot issue other commands. A message that is not JSON, or a handler
 * that throws, is logged and skipped; the other handlers still get it.
 */
export class RedisBus implements Bus {
  readonly kind = "redis" as const;
  readonly #publisher: Redis;
  readonly #subscriber: Redis;
  readonly #channels = new Map<string, Set<BusHandler>>();

  constructor(
    url: string,
    private readonly prefix = "crossbook:",
    private readonly log: Logger = silentLogger,
  ) {
    this.#publisher = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 3 });
    this.#subscriber = new Redis(url, { lazyConnect: false });
    this.#subscriber.on("message", (fullChannel: string, payload: string) => {
      const handlers = this.#channels.get(fullChannel);
      if (!handlers) return;
      let message: unknown;
      try {
        message = JSON.parse(payload);
      } catch (error) {
        const channel = fullChannel.slice(this.prefix.length);
        this.log.warn({ err: error, channel }, "bus message is not JSON; dropped");
        return;
      }
      for (const handler of handlers) {
        try {
          handler(message);
        } catch (error) {
          const channel = fullChannel.slice(this.prefix.length);
          this.log.warn({ err: error, channel }, "bus handler failed");
        }
      }
    });
  }

  async publish(channel: string, message: unknown): Promise<void> {
    await this.#publisher.publish(this.prefix + channel, JSON.stringify(message));
  }

  async subscribe(channel: string, handler: BusHandler): Promise<() => Promise<void>> {
    const full = this.prefix + channel;
    let handlers = this.#channels.get(full);
    if (!handlers) {
      handlers = new Set();
      this.#channels.set(full, handlers);
      await this.#subscriber.subscribe(full);
    }
    const entry: BusHandler = (message) => handler(message);
    handlers.add(entry);
    return async () => {
      handlers.delete(entry);
      if (handlers.size === 0 && this.#channels.get(full) === handlers) {
        this.#channels.delete(full);
        await this.#subscriber.unsubscribe(full);
      }
    };
  }

  async ping(): Promise<void> {
    await this.#publisher.ping();
  }

  async close(): Promise<void> {
    this.#channels.clear();
    this.#subscriber.disconnect();
    await this.#publisher.quit().catch(() => this.#publisher.disconnect());
  }
}
