import { randomUUID } from "node:crypto";
import type { ConnectionSlots } from "./slots";

export class MemoryConnectionSlots implements ConnectionSlots {
  readonly kind = "memory" as const;
  readonly #held = new Map<string, Set<string>>();

  async acquire(subject: string, limit: number): Promise<string | null> {
    const held = this.#held.get(subject) ?? new Set<string>();
    if (held.size >= limit) return null;
    const token = randomUUID();
    held.add(token);
    this.#held.set(subject, held);
    return token;
  }

  async release(subject: string, token: string): Promise<void> {
    const held = this.#held.get(subject);
    if (!held) return;
    held.delete(token);
    if (held.size === 0) this.#held.delete(subject);
  }

  async refresh(): Promise<void> {}

  async count(subject: string): Promise<number> {
    return this.#held.get(subject)?.size ?? 0;
  }

  async close(): Promise<void> {
    this.#held.clear();
  }
}
