import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/infra/log";
import { createDataReporter } from "../../src/venues/report";

describe("data reporter", () => {
  it("logs the first of each kind and counts the rest", () => {
    const lines: Array<[object, string]> = [];
    const reporter = createDataReporter("kalshi", {
      ...silentLogger,
      warn: (obj, msg) => lines.push([obj, msg]),
    });
    for (let i = 0; i < 100; i++) reporter.report("unknown_status", { value: "paused" });
    reporter.report("market_parse_failed", { market_id: "kalshi:X" });
    expect(lines).toHaveLength(2);
    expect(lines[0]![0]).toEqual({ venue: "kalshi", kind: "unknown_status", value: "paused" });
    expect(reporter.counts()).toEqual({ unknown_status: 100, market_parse_failed: 1 });
  });
});
