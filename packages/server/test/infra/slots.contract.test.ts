/** One contract for both connection-slot counters: a cap per subject, release, expiry, atomicity. */
import { afterEach, describe, expect, it } from "vitest";
import { MemoryConnectionSlots } from "../../src/infra/slots/memory";
import { RedisConnectionSlots } from "../../src/infra/slots/redis";
import { type ConnectionSlots, SLOT_TTL_MS } from "../../src/infra/slots/slots";
import { INFRA_BACKENDS, REDIS_URL, uniqueName } from "../support/backends";

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

describe.each(INFRA_BACKENDS)("%s connection slots", (backend) => {
  const opened: ConnectionSlots[] = [];
  const prefix = `${uniqueName("cbslot")}:`;
  const make = () => {
    const slots =
      backend === "redis" ? new RedisConnectionSlots(REDIS_URL!, prefix) : new MemoryConnectionSlots();
    opened.push(slots);
    return slots;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  it("grants up to the limit per subject, and again after a release", async () => {
    const slots = make();
    const a = await slots.acquire("key_a", 2, NOW);
    const b = await slots.acquire("key_a", 2, NOW);
    expect(a).toEqual(expect.any(String));
    expect(b).not.toBe(a);
    expect(await slots.acquire("key_a", 2, NOW)).toBeNull();
    expect(await slots.acquire("key_b", 2, NOW)).not.toBeNull();
    expect(await slots.count("key_a", NOW)).toBe(2);
    await slots.release("key_a", a!);
    expect(await slots.count("key_a", NOW)).toBe(1);
    expect(await slots.acquire("key_a", 2, NOW)).not.toBeNull();
  });

  it("never grants more than the limit to racing acquirers", async () => {
    const slots = make();
    const results = await Promise.all(Array.from({ length: 20 }, () => slots.acquire("race", 5, NOW)));
    expect(results.filter((r) => r !== null)).toHaveLength(5);
  });

  if (backend === "redis") {
    it("shares the count between instances and lets a dead instance's slots expire", async () => {
      const one = make();
      const two = make();
      const held = await one.acquire("shared", 1, NOW);
      expect(held).not.toBeNull();
      expect(await two.acquire("shared", 1, NOW)).toBeNull();
      // Refreshed slots live on; unrefreshed ones stop counting after the TTL.
      await one.refresh([{ subject: "shared", token: held! }], NOW + SLOT_TTL_MS / 2);
      expect(await two.acquire("shared", 1, NOW + SLOT_TTL_MS)).toBeNull();
      expect(await two.acquire("shared", 1, NOW + SLOT_TTL_MS * 2)).not.toBeNull();
      // Refreshing a released slot does not bring it back.
      await one.release("shared", held!);
      await one.refresh([{ subject: "shared", token: held! }], NOW + SLOT_TTL_MS * 2);
      expect(await one.count("shared", NOW + SLOT_TTL_MS * 2)).toBe(1);
    });
  }
});
