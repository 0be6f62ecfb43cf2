import { type Logger, silentLogger } from "../log";
import type { Bus, BusHandler } from "./bus";

/**
 * Same-process bus: handlers run synchronously in publish order. A throwing handler is logged and
 * isolated, so the others still get the message and the publisher never sees the failure.
 */
export class MemoryBus implements Bus {
  readonly kind = "memory" as const;
  readonly #channels = new Map<string, Set<BusHandler>>();

  constructor(private readonly log: Logger = silentLogger) {}

  async publish(channel: string, message: unknown): Promise<void> {
    this.publishSync(channel, message);
  }

  /** For hot paths in the same process: no promise per message. */
  publishSync(channel: string, message: unknown): void {
    const handlers = this.#channels.get(channel);
    if (!handlers) return;
    for (const handler of handlers) {
      try {
        handler(message);
      } catch (error) {
        this.log.warn({ err: error, channel }, "bus handler failed");
      }
    }
  }

  async subscribe(channel: string, handler: BusHandler): Promise<() => Promise<void>> {
    let handlers = this.#channels.get(channel);
    if (!handlers) {
      handlers = new Set();
      this.#channels.set(channel, handlers);
    }
    // Wrap so the same function can be subscribed twice and removed once per subscription.
    const entry: BusHandler = (message) => handler(message);
    handlers.add(entry);
    return async () => {
      handlers.delete(entry);
      if (handlers.size === 0) this.#channels.delete(channel);
    };
  }

  async close(): Promise<void> {
    this.#channels.clear();
  }
}
