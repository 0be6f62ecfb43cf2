/**
 * The trigger index against the simplest possible model of the rules (check every alert on every
 * update), on random sequences of alerts, deletions and quotes with many ties at thresholds.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CONDITIONS,
  type Condition,
  conditionHolds,
  crossedBack,
  TriggerIndex,
  type Watch,
  watchesChange,
} from "../../src/alerts/triggers";

interface ModelAlert {
  id: string;
  marketId: string;
  condition: Condition;
  threshold: number;
  repeat: boolean;
  armed: boolean;
  count: number;
}

/** The rules, stated directly: every alert of the market, every update. */
function modelEvaluate(
  alerts: Map<string, ModelAlert>,
  marketId: string,
  price: number | null,
  change: number | null,
) {
  const out: string[] = [];
  for (const alert of [...alerts.values()]) {
    if (alert.marketId !== marketId) continue;
    const value = watchesChange(alert.condition) ? change : price;
    if (value === null) continue;
    if (alert.armed && conditionHolds(alert.condition, value, alert.threshold)) {
      out.push(`fire ${alert.id} ${alert.count}`);
      alert.count += 1;
      alert.armed = false;
      if (!alert.repeat) alerts.delete(alert.id);
    } else if (!alert.armed && crossedBack(alert.condition, value, alert.threshold)) {
      out.push(`rearm ${alert.id} ${alert.count}`);
      alert.armed = true;
    }
  }
  return out.sort();
}

const level = fc.integer({ min: 1, max: 6 }).map((n) => n * 100_000);
const command = fc.oneof(
  fc.record({
    kind: fc.constant("add" as const),
    market: fc.constantFrom("m1", "m2"),
    condition: fc.constantFrom(...CONDITIONS),
    threshold: level,
    repeat: fc.boolean(),
    armed: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }),
  fc.record({
    kind: fc.constant("quote" as const),
    market: fc.constantFrom("m1", "m2", "m3"),
    price: fc.option(level, { nil: null }),
    change: fc.option(level, { nil: null }),
  }),
);

describe("trigger index", () => {
  it("fires and re-arms exactly what checking every alert would", () => {
    fc.assert(
      fc.property(fc.array(command, { maxLength: 80 }), (commands) => {
        const index = new TriggerIndex();
        const model = new Map<string, ModelAlert>();
        let next = 0;
        for (const c of commands) {
          if (c.kind === "add") {
            const id = `a${next++}`;
            const alert = {
              id,
              marketId: c.market,
              condition: c.condition,
              threshold: c.threshold,
              repeat: c.repeat,
              armed: c.armed || !c.repeat,
              count: 0,
            };
            model.set(id, { ...alert });
            index.put({ ...alert, stamp: 0 } satisfies Watch);
          } else if (c.kind === "remove") {
            const ids = [...model.keys()];
            if (ids.length === 0) continue;
            const id = ids[c.pick % ids.length]!;
            model.delete(id);
            expect(index.remove(id)?.id).toBe(id);
          } else {
            const got = index
              .evaluate(c.market, c.price, c.change)
              .map((t) => `${t.kind} ${t.watch.id} ${t.expectedCount}`)
              .sort();
            expect(got).toEqual(modelEvaluate(model, c.market, c.price, c.change));
          }
          expect(index.size).toBe(model.size);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("leaves a price exactly at the threshold alone: no firing, no re-arming", () => {
    const index = new TriggerIndex();
    index.put({
      id: "x",
      marketId: "m",
      condition: "price_above",
      threshold: 500_000,
      repeat: true,
      armed: true,
      count: 0,
      stamp: 0,
    });
    expect(index.evaluate("m", 500_000, null)).toEqual([]);
    expect(index.evaluate("m", 500_001, null).map((t) => t.kind)).toEqual(["fire"]);
    expect(index.evaluate("m", 500_000, null)).toEqual([]);
    expect(index.evaluate("m", 499_999, null).map((t) => t.kind)).toEqual(["rearm"]);
    expect(index.evaluate("m", null, null)).toEqual([]);
  });
});
