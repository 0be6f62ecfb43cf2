/** One contract for both buses: delivery in publish order, unsubscribe, isolation of a bad handler. */
import { afterEach, describe, expect, it } from "vitest";
import type { Bus } from "../../src/infra/bus/bus";
import { MemoryBus } from "../../src/infra/bus/memory";
import { RedisBus } from "../../src/infra/bus/redis";
import { type Logger, silentLogger } from "../../src/infra/log";
import { INFRA_BACKENDS, REDIS_URL, uniqueName } from "../support/backends";

async function until(check: () => boolean, timeoutMs = 3000) {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error("timed out waiting for bus delivery");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.each(INFRA_BACKENDS)("%s bus", (backend) => {
  const opened: Bus[] = [];
  const prefix = `${uniqueName("cbbus")}:`;
  const make = (log: Logger = silentLogger) => {
    const bus = backend === "redis" ? new RedisBus(REDIS_URL!, prefix, log) : new MemoryBus(log);
    opened.push(bus);
    return bus;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((b) => b.close()));
  });

  it("delivers messages in order to every subscriber of the channel only", async () => {
    const bus = make();
    const a: unknown[] = [];
    const b: unknown[] = [];
    const other: unknown[] = [];
    await bus.subscribe("quotes", (m) => a.push(m));
    await bus.subscribe("quotes", (m) => b.push(m));
    await bus.subscribe("other", (m) => other.push(m));
    for (let i = 0; i < 50; i++) await bus.publish("quotes", { i });
    await until(() => a.length === 50 && b.length === 50);
    expect(a).toEqual(Array.from({ length: 50 }, (_, i) => ({ i })));
    expect(b).toEqual(a);
    expect(other).toEqual([]);
  });

  it("stops delivering after unsubscribe", async () => {
    const bus = make();
    const seen: unknown[] = [];
    const stop = await bus.subscribe("c", (m) => seen.push(m));
    await bus.publish("c", 1);
    await until(() => seen.length === 1);
    await stop();
    await bus.publish("c", 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual([1]);
  });

  it("isolates a throwing handler from the others, and logs it", async () => {
    const warnings: Array<{ obj: object; msg: string }> = [];
    const bus = make({ ...silentLogger, warn: (obj, msg) => warnings.push({ obj, msg }) });
    const seen: unknown[] = [];
    const boom = new Error("boom");
    await bus.subscribe("c", () => {
      throw boom;
    });
    await bus.subscribe("c", (m) => seen.push(m));
    await bus.publish("c", "x");
    await until(() => seen.length === 1);
    expect(warnings).toEqual([{ obj: { err: boom, channel: "c" }, msg: "bus handler failed" }]);
  });

  if (backend === "redis") {
    it("carries a message from one instance to another", async () => {
      const publisher = make();
      const subscriber = make();
      const seen: unknown[] = [];
      await subscriber.subscribe("cross", (m) => seen.push(m));
      await publisher.publish("cross", { price: 0.42 });
      await until(() => seen.length === 1);
      expect(seen).toEqual([{ price: 0.42 }]);
    });
  }
});
