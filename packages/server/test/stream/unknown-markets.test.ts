/** The stream's memory of unknown market ids: time-bounded, size-bounded, dropped on a catalog change. */
import { describe, expect, it } from "vitest";
import { UnknownMarkets } from "../../src/stream/unknown-markets";

describe("unknown market ids", () => {
  it("are remembered for the TTL only", () => {
    const unknown = new UnknownMarkets(() => 0, { ttlMs: 1_000, maxEntries: 10 });
    unknown.add(["a"], 0, 0);
    expect(unknown.has("a", 999)).toBe(true);
    expect(unknown.has("a", 1_000)).toBe(false);
    expect(unknown.size).toBe(0);
  });

  it("keep at most maxEntries, forgetting the oldest first", () => {
    const unknown = new UnknownMarkets(() => 0, { ttlMs: 60_000, maxEntries: 3 });
    unknown.add(["a", "b", "c"], 0, 0);
    unknown.add(["d"], 1, 0);
    expect(unknown.size).toBe(3);
    expect(["a", "b", "c", "d"].map((id) => unknown.has(id, 2))).toEqual([false, true, true, true]);
  });

  it("are all forgotten when the catalog changes, and a look-up older than the change is not kept", () => {
    let version = 0;
    const unknown = new UnknownMarkets(() => version, { ttlMs: 60_000, maxEntries: 10 });
    unknown.add(["a"], 0, 0);
    version = 1;
    expect(unknown.has("a", 1)).toBe(false);
    // Started before the change (version 0): its answer may be stale.
    unknown.add(["b"], 2, 0);
    expect(unknown.has("b", 3)).toBe(false);
    unknown.add(["b"], 2, 1);
    expect(unknown.has("b", 3)).toBe(true);
  });
});
