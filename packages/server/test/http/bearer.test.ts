import { describe, expect, it } from "vitest";
import { bearerToken } from "../../src/http/auth";

/** The header grammar the fast path must keep: exactly what /^Bearer\s+(\S+)\s*$/i accepts. */
const reference = (header: string) => /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];

describe("bearerToken", () => {
  it("reads the token of every form the Bearer grammar allows, and nothing else", () => {
    const headers = [
      "Bearer cb_live_abc",
      "bearer cb_live_abc",
      "BEARER cb_live_abc",
      "Bearer   cb_live_abc",
      "Bearer\tcb_live_abc",
      "Bearer cb_live_abc  ",
      "Bearer tök",
      "Bearer",
      "Bearer ",
      "Bearer a b",
      "Bearer a\u0000",
      "Basic dXNlcjpwYXNz",
      "",
      " Bearer cb_live_abc",
    ];
    for (const header of headers) expect(bearerToken(header), JSON.stringify(header)).toBe(reference(header));
    expect(bearerToken("Bearer cb_live_abc")).toBe("cb_live_abc");
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
