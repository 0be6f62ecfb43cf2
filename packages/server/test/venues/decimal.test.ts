import { describe, expect, it } from "vitest";
import { complement, formatMicros, microsToNumber, parseMicros } from "../../src/venues/decimal";

describe("exact decimals", () => {
  it("parses venue decimal strings exactly", () => {
    expect(parseMicros("0.4200")).toBe(420_000);
    expect(parseMicros("10.00")).toBe(10_000_000);
    expect(parseMicros("0.001")).toBe(1_000);
    expect(parseMicros("1")).toBe(1_000_000);
    expect(parseMicros("-0.5")).toBe(-500_000);
    expect(parseMicros("0.12345600")).toBe(123_456);
    expect(parseMicros(0.1 + 0.2)).toBe(300_000);
  });

  it("refuses what it cannot represent exactly", () => {
    for (const bad of ["", "abc", "1e5", "0.1234567", "NaN", "0x10", " . ", "1,5"])
      expect(parseMicros(bad), bad).toBeUndefined();
    expect(parseMicros(null)).toBeUndefined();
    expect(parseMicros(Number.POSITIVE_INFINITY)).toBeUndefined();
  });

  it("formats and converts at the edge", () => {
    expect(formatMicros(420_000)).toBe("0.42");
    expect(formatMicros(420_000, 4)).toBe("0.4200");
    expect(formatMicros(10_000_000, 2)).toBe("10.00");
    expect(formatMicros(-1_500)).toBe("-0.0015");
    expect(microsToNumber(420_000)).toBe(0.42);
    expect(complement(420_000)).toBe(580_000);
  });
});
