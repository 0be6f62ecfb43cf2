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
    // Background work is not started in tests: every cluster job stands by.
    const standby = {
      "live fill poller": "standby",
      "sandbox matching": "standby",
      "sandbox order expiry": "standby",
      "session sweep": "standby",
      "event pruning": "standby",
    };
    expect(ready.json()).toEqual({
      status: "ready",
      checks: { store: "ok" },
      instance_id: t.runtime.config.instanceId,
      jobs: standby,
    });

    const other = await createTestApp();
    await other.runtime.store.close();
    const down = await other.app.inject({ method: "GET", url: "/readyz" });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({
      status: "not_ready",
      checks: { store: "unreachable" },
      jobs: standby,
    });
    await other.app.close();
  });

  it("says which cluster jobs run here once started: all of them on the embedded store", async () => {
    await t.services.clusterJobs.start();
    try {
      const ready = (await t.app.inject({ method: "GET", url: "/readyz" })).json();
      expect(ready.jobs).toEqual({
        "live fill poller": "running",
        "sandbox matching": "running",
        "sandbox order expiry": "running",
        "session sweep": "running",
        "event pruning": "running",
      });
      const metrics = (await t.app.inject({ method: "GET", url: "/metrics" })).body;
      expect(metrics).toContain('crossbook_job_running{job="event pruning"} 1');
      expect(metrics).toContain('crossbook_job_takeovers_total{job="event pruning"} 0');
    } finally {
      await t.services.clusterJobs.stop();
    }
    expect((await t.app.inject({ method: "GET", url: "/readyz" })).json().jobs["event pruning"]).toBe(
      "standby",
    );
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

  it("keeps each series' histogram consistent with its count: cumulative buckets, +Inf = count", async () => {
    for (let i = 0; i < 3; i++) await t.app.inject({ method: "GET", url: "/healthz" });
    const body = (await t.app.inject({ method: "GET", url: "/metrics" })).body;
    const labels = 'method="GET",route="/healthz",status="200"';
    const value = (line: RegExp) => Number(line.exec(body)?.[1]);
    const count = value(new RegExp(`crossbook_http_requests_total\\{${labels}\\} (\\d+)`));
    expect(count).toBeGreaterThanOrEqual(3);
    expect(value(new RegExp(`crossbook_http_request_duration_seconds_count\\{${labels}\\} (\\d+)`))).toBe(
      count,
    );
    expect(
      value(new RegExp(`crossbook_http_request_duration_seconds_bucket\\{le="\\+Inf",${labels}\\} (\\d+)`)),
    ).toBe(count);
    const buckets = [...body.matchAll(new RegExp(`_bucket\\{le="([^"]+)",${labels}\\} (\\d+)`, "g"))].map(
      (m) => Number(m[2]),
    );
    expect(buckets).toHaveLength(14);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1]!);
    expect(
      value(new RegExp(`crossbook_http_request_duration_seconds_sum\\{${labels}\\} ([0-9.e-]+)`)),
    ).toBeGreaterThan(0);
  });
});
