/** Health, readiness and metrics. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("operations endpoints", () => {
  it("reports liveness", async () => {
    const response = await t.app.inject({ method: "GET", url: "/healthz" });
    expect(response.json()).toEqual({ status: "ok" });
  });

  it("reports readiness from the store, and 503 when it is gone", async () => {
    const ready = await t.app.inject({ method: "GET", url: "/readyz" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ready", checks: { store: "ok" } });

    const other = await createTestApp();
    await other.runtime.store.close();
    const down = await other.app.inject({ method: "GET", url: "/readyz" });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toEqual({ status: "not_ready", checks: { store: "unreachable" } });
    await other.app.close();
  });

  it("exposes request counts and latencies by route and status", async () => {
    await t.app.inject({ method: "GET", url: "/healthz" });
    await t.app.inject({ method: "GET", url: "/v1/account" });
    await t.app.inject({ method: "GET", url: "/no/such/path" });
    const response = await t.app.inject({ method: "GET", url: "/metrics" });
    expect(response.headers["content-type"]).toContain("text/plain");
    expect(response.body).toMatch(
      /crossbook_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/,
    );
    expect(response.body).toMatch(
      /crossbook_http_requests_total\{method="GET",route="\/v1\/account",status="401"\} 1/,
    );
    expect(response.body).toMatch(/route="unmatched",status="404"/);
    expect(response.body).toContain("crossbook_http_request_duration_seconds_bucket");
  });
});
