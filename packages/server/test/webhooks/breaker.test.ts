/** The endpoint circuit breaker on its own: opening, the single probe, growing and capped cool-downs. */
import { describe, expect, it } from "vitest";
import { EndpointBreakers, endpointOf } from "../../src/webhooks/breaker";

const E = endpointOf("acc_1", "https://hooks.example.com:8443/in?x=1");

describe("endpoint breakers", () => {
  it("key an endpoint by account and origin", () => {
    expect(E).toBe("acc_1 https://hooks.example.com:8443");
    expect(endpointOf("acc_2", "https://hooks.example.com:8443/other")).not.toBe(E);
  });

  it("open after `threshold` timeouts in a row; any answer in between resets the count", () => {
    const b = new EndpointBreakers({ threshold: 3, cooldownMs: 1_000, maxCooldownMs: 3_000 });
    b.record(E, "wh_1", true, 0, false);
    b.record(E, "wh_1", true, 0, false);
    b.record(E, "wh_1", false, 0, false); // an answer (even an error status)
    b.record(E, "wh_1", true, 0, false);
    b.record(E, "wh_2", true, 0, false);
    expect(b.admit(E, "wh_1", 0)).toBe("closed");
    b.record(E, "wh_1", true, 10, false);
    expect(b.admit(E, "wh_1", 500)).toBe(false);
    expect(b.held(500).sort()).toEqual(["wh_1", "wh_2"]);
    expect(b.allows(E)).toBe(false);
  });

  it("let one probe through after the cool-down; a probe that times out doubles it, up to the cap", () => {
    const b = new EndpointBreakers({ threshold: 1, cooldownMs: 1_000, maxCooldownMs: 3_000 });
    b.record(E, "wh_1", true, 0, false); // open until 1000
    expect(b.admit(E, "wh_1", 999)).toBe(false);
    expect(b.admit(E, "wh_1", 1_000)).toBe("probe");
    expect(b.admit(E, "wh_2", 1_000)).toBe(false); // one probe at a time
    b.record(E, "wh_2", true, 1_100, false); // an attempt already under way changes nothing
    b.record(E, "wh_1", true, 1_200, true); // open until 3200 (2 s)
    expect(b.admit(E, "wh_1", 3_199)).toBe(false);
    expect(b.admit(E, "wh_1", 3_200)).toBe("probe");
    b.record(E, "wh_1", true, 3_200, true); // 4 s, capped at 3 s: until 6200
    expect(b.admit(E, "wh_1", 6_199)).toBe(false);
    expect(b.admit(E, "wh_1", 6_200)).toBe("probe");
    b.release(E); // the probe had nothing to send
    expect(b.admit(E, "wh_2", 6_200)).toBe("probe");
    b.record(E, "wh_2", false, 6_300, true); // answered: closed
    expect(b.admit(E, "wh_1", 6_300)).toBe("closed");
    expect(b.held(6_300)).toEqual([]);
  });
});
