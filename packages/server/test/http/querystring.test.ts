/** Our query-string parser must read every input exactly as Fastify's default (fast-querystring). */
import fc from "fast-check";
import { parse } from "fast-querystring";
import { describe, expect, it } from "vitest";
import { parseQuerystring } from "../../src/http/querystring";

describe("parseQuerystring", () => {
  it("agrees with fast-querystring on any input", () => {
    const chars = fc.constantFrom("a", "b", "=", "&", ":", ",", "%", "2", "C", "+", " ");
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 30 }), (parts) => {
        const input = parts.join("");
        expect({ ...parseQuerystring(input) }).toEqual({ ...parse(input) });
      }),
      { numRuns: 5000 },
    );
  });

  it("reads a long id list and repeated keys", () => {
    const ids = Array.from({ length: 50 }, (_, i) => `kalshi:M${i}`).join(",");
    expect({ ...parseQuerystring(`market_ids=${ids}&depth=3&x&x=1`) }).toEqual({
      market_ids: ids,
      depth: "3",
      x: ["", "1"],
    });
    expect("constructor" in parseQuerystring("a=1")).toBe(false);
  });
});
