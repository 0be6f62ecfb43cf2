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

  it("parses a number as its text rounded to 6 places would parse", () => {
    const viaText = (n: number) => parseMicros((Math.round(n * 1_000_000) / 1_000_000).toFixed(6));
    let seed = 7;
    const random = () => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    const samples = [
      0, -0, 0.4, 0.51, 1e-7, 5e-7, -5e-7, 0.0000015, 123.4567891, -0.30000000000000004, 9_000_000,
    ];
    for (let i = 0; i < 20_000; i++) {
      const digits = Math.floor(random() * 10);
      samples.push(Number(((random() - 0.5) * 2_000).toFixed(digits)), (random() - 0.5) * 10 ** (digits - 3));
    }
    for (const n of samples) expect(parseMicros(n), String(n)).toBe(viaText(n));
    expect(Object.is(parseMicros(-1e-9), 0)).toBe(true);
    expect(parseMicros(1e10)).toBeUndefined();
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
