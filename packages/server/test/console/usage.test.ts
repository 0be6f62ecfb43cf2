/**
 * The console's usage page through its routes: per key, the requests of this minute against its
 * limit and the 429s, from counts not yet written and from the store alike, and the last 24 hours as
 * an accessible chart with a table of the same figures.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createTestApp, PASSWORD, setAccount, signup, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { ConsoleClient } from "./support";

const SECRET = /id="new-key-secret"[^>]*>(cb_(?:test|live)_[A-Za-z0-9]{40})</;

describe.each(STORE_BACKENDS)("console usage on %s", (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ store, config: { loginAttemptsPerMinute: 1000 } });
    t.clock.set(Date.UTC(2026, 10, 22, 12, 0, 5));
  });
  afterAll(() => t.close());

  const api = (key: string) => t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(key) });
  /** The figures of one key's row in the summary table. */
  function cell(body: string, testId: string): string {
    return new RegExp(`data-testid="${testId}">([^<]*)<`).exec(body)![1]!;
  }

  it("says so when there are no keys", async () => {
    const c = new ConsoleClient(t.app);
    await c.signUp();
    const page = await c.get("/console/usage");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("No API keys yet");
  });

  it("shows this minute against the limit, the 429s, and the day's chart", async () => {
    // A low limit: an enterprise account with a custom rate of 3 requests a minute.
    const { email, accountId } = await signup(t.app);
    await setAccount(t.services, accountId, { tier: "enterprise", rate_limit_per_minute: 3 });
    const c = new ConsoleClient(t.app);
    await c.signIn(email, PASSWORD);
    await c.get("/console/keys");
    const created = await c.post("/console/keys", {
      name: "busy bot",
      type: "read_only",
      environment: "sandbox",
    });
    const secret = SECRET.exec(created.body)![1]!;

    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await api(secret)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);

    // Nothing written yet: the page reads what is in memory.
    let page = await c.get("/console/usage");
    expect(page.statusCode).toBe(200);
    expect(cell(page.body, "this-minute")).toBe("3");
    expect(cell(page.body, "limited-this-minute")).toBe("2");
    expect(page.body).toContain('<td data-label="Limit per minute" class="num">3</td>');
    expect(page.body).toContain("Limited now.");
    expect(page.body).toContain("Its budget is whole again in 55 s.");
    expect(page.body).toMatch(/<meter min="0" max="3" value="3"/);

    // Written: the same figures from the store, and more requests added on top.
    await t.services.keyUsage.flush();
    await api(secret);
    page = await c.get("/console/usage");
    expect(cell(page.body, "this-minute")).toBe("3");
    expect(cell(page.body, "limited-this-minute")).toBe("3");

    // The chart: inline SVG with a title and a description, and the figures as a table.
    expect(page.body).toMatch(
      /<svg class="chart" viewBox="0 0 960 220" role="img" aria-labelledby="key-[^"]+-chart-title key-[^"]+-chart-desc"/,
    );
    expect(page.body).toContain("<title id=");
    expect(page.body).toContain("Requests of “busy bot”, last 24 hours</title>");
    expect(page.body).toContain("3 admitted and 3 refused with 429 in 1 minute.");
    expect(page.body).toContain('fill="#b42318"'); // a 429 bar
    expect(page.body).toContain("<summary>The last 24 hours as a table</summary>");
    expect(page.body).toMatch(/<td data-label="Refused \(429\)" class="num">3<\/td>/);
    expect(page.body).not.toMatch(/<script(?! src="\/console\/assets\/)/); // no chart library, no inline script

    // A minute later: this minute starts from zero, the day keeps what happened.
    t.clock.advance(60_000);
    expect((await api(secret)).statusCode).toBe(200);
    page = await c.get("/console/usage");
    expect(cell(page.body, "this-minute")).toBe("1");
    expect(cell(page.body, "limited-this-minute")).toBe("0");
    expect(page.body).toContain('<td data-label="Requests, 24 h" class="num">4</td>');
    expect(page.body).toContain('<td data-label="429s, 24 h" class="num">3</td>');
    expect(page.body).toContain("3 requests were refused with 429 in the last 24");
    expect(page.body).not.toContain("Limited now.");
  });

  it("shows only the account's own keys, and revoked ones only with traffic", async () => {
    const c = new ConsoleClient(t.app);
    await c.signUp();
    await c.get("/console/keys");
    const created = await c.post("/console/keys", { name: "quiet", type: "read_only", environment: "live" });
    expect(created.statusCode).toBe(200);
    const page = await c.get("/console/usage");
    expect(page.body).toContain("quiet");
    expect(page.body).not.toContain("busy bot");
    expect(page.body).toContain("No requests in the last 24 hours.");
    const id = /data-key-id="([^"]+)"/.exec(page.body)![1]!;
    await c.get(`/console/keys/${id}/revoke`);
    await c.post(`/console/keys/${id}/revoke`);
    expect((await c.get("/console/usage")).body).toContain("No API keys yet");
  });
});
