/**
 * The console's sign-in and its rules, through its routes: the session cookie (HttpOnly,
 * SameSite=Strict, Secure when HTTPS), CSRF on every form, cross-site posts refused, the API's login
 * limits, the sessions view, the assets' cache headers, and the console kept out of the API.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestApp, type TestApp } from "../support/app";
import { ConsoleClient } from "./support";

/** Each client signs in from its own address, so the login limits of one test do not reach another. */
let address = 0;
const fresh = (app: TestApp["app"], headers: Record<string, string> = {}) =>
  new ConsoleClient(app, { "x-forwarded-for": `10.9.0.${++address}`, ...headers });

describe("console sign-in, cookies and CSRF", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { loginAttemptsPerMinute: 3, trustProxy: ["loopback"] } });
  });
  afterAll(() => t.close());

  it("sends a signed-out visitor to the sign-in page, with a form token", async () => {
    const c = fresh(t.app);
    const home = await c.get("/console");
    expect(home.statusCode).toBe(303);
    expect(home.headers.location).toBe("/console/signin");
    const sessions = await c.get("/console/sessions");
    expect(sessions.statusCode).toBe(303);
    expect(sessions.headers.location).toBe("/console/signin?next=%2Fconsole%2Fsessions");
    const signin = await c.get("/console/signin");
    expect(signin.statusCode).toBe(200);
    expect(signin.headers["content-type"]).toContain("text/html");
    expect(signin.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(signin.headers["cache-control"]).toBe("no-store");
    expect(c.cookies.get("cb_form")).toBeTruthy();
    expect(c.csrf).toBe(c.cookies.get("cb_form"));
    expect(signin.body).toContain('<label for="f-email">Email</label>');
  });

  it("signs up into an HttpOnly, SameSite=Strict session cookie (not Secure over plain HTTP)", async () => {
    const c = fresh(t.app);
    await c.get("/console/signup");
    const response = await c.post("/console/signup", {
      email: "cookie-rules@example.com",
      password: "correct horse battery staple",
    });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/console/keys");
    const session = [response.headers["set-cookie"]].flat().find((s) => String(s).startsWith("cb_session="));
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Strict/);
    expect(session).toMatch(/Path=\/console/);
    expect(session).not.toMatch(/Secure/);
    expect(c.cookies.get("cb_session")).toMatch(/^cbs_/);
  });

  it("marks the cookie Secure when the request came over HTTPS", async () => {
    const c = fresh(t.app, { "x-forwarded-proto": "https" });
    await c.get("/console/signup");
    const response = await c.post("/console/signup", {
      email: "secure-cookie@example.com",
      password: "correct horse battery staple",
    });
    const session = [response.headers["set-cookie"]].flat().find((s) => String(s).startsWith("cb_session="));
    expect(session).toMatch(/; Secure/);
  });

  it("shows field errors next to the fields of a refused sign-up", async () => {
    const c = fresh(t.app);
    await c.get("/console/signup");
    const response = await c.post("/console/signup", { email: "not-an-email", password: "short" });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('id="f-email-error"');
    expect(response.body).toContain("must be an email address");
    expect(response.body).toContain("must be at least 10 characters");
    expect(response.body).toContain('aria-invalid="true"');
  });

  it("refuses a form without the right token, and any cross-site post", async () => {
    const c = fresh(t.app);
    await c.signUp();
    expect(c.csrf).toBeTruthy();
    // No token, a wrong token, a signed-out form's token: all refused, nothing changed.
    expect((await c.post("/console/sessions/end-all", { _csrf: "" })).statusCode).toBe(403);
    expect((await c.post("/console/sessions/end-all", { _csrf: "x".repeat(43) })).statusCode).toBe(403);
    // The right token from another site is refused too.
    await c.get("/console/sessions");
    const crossOrigin = await c.post("/console/sessions/end-all", {}, { origin: "https://evil.example" });
    expect(crossOrigin.statusCode).toBe(403);
    expect(crossOrigin.body).toContain("sent from another site");
    const marked = await c.post("/console/sessions/end-all", {}, { "sec-fetch-site": "cross-site" });
    expect(marked.statusCode).toBe(403);
    // Still signed in: none of those did anything.
    expect((await c.get("/console/sessions")).statusCode).toBe(200);
  });

  it("applies the API's login limits to console sign-ins", async () => {
    const c = fresh(t.app);
    const email = await c.signUp(`limited-${Date.now()}@example.com`);
    const other = fresh(t.app);
    await other.get("/console/signin");
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      statuses.push(
        (await other.post("/console/signin", { email, password: "wrong password!!" })).statusCode,
      );
    }
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.at(-1)).toBe(429);
    expect(other.last!.body).toMatch(/Too many (failed )?sign-in/);
  });

  it("lists the account's sign-ins and ends them all", async () => {
    const c = fresh(t.app);
    const email = await c.signUp();
    const second = fresh(t.app);
    await second.signIn(email);
    const sessions = await c.get("/console/sessions");
    expect(sessions.body.match(/data-testid="session"/g)).toHaveLength(2);
    expect(sessions.body).toContain("this one");
    const ended = await c.post("/console/sessions/end-all");
    expect(ended.statusCode).toBe(303);
    expect(ended.headers.location).toBe("/console/signin");
    expect((await second.get("/console/sessions")).statusCode).toBe(303); // signed out there too
  });

  it("signs out", async () => {
    const c = fresh(t.app);
    await c.signUp();
    const out = await c.post("/console/signout");
    expect(out.statusCode).toBe(303);
    expect(c.cookies.has("cb_session")).toBe(false);
    expect((await c.get("/console/sessions")).statusCode).toBe(303);
  });

  it("serves its assets itself, under content-hashed names cached for a year", async () => {
    const c = fresh(t.app);
    const page = await c.get("/console/signin");
    const css = /href="(\/console\/assets\/console\.[0-9a-f]{12}\.css)"/.exec(page.body)![1]!;
    const js = /src="(\/console\/assets\/console\.[0-9a-f]{12}\.js)"/.exec(page.body)![1]!;
    for (const url of [css, js]) {
      const asset = await c.get(url);
      expect(asset.statusCode).toBe(200);
      expect(asset.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
      expect((await c.get(url, { "if-none-match": String(asset.headers.etag) })).statusCode).toBe(304);
    }
    expect(page.body).not.toMatch(/(src|href)="https?:/);
    // Assets are the same for everyone: a signed-in browser's asset requests look up no session.
    const signedIn = fresh(t.app);
    await signedIn.signUp();
    const lookups = vi.spyOn(t.services.accounts, "resolveSession");
    try {
      expect((await signedIn.get(css)).statusCode).toBe(200);
      expect(lookups).not.toHaveBeenCalled();
      expect((await signedIn.get("/console/sessions")).statusCode).toBe(200);
      expect(lookups).toHaveBeenCalledTimes(1);
    } finally {
      lookups.mockRestore();
    }
  });

  it("is not part of the API: no envelope, not in the OpenAPI document, an HTML 404", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/v1/openapi.json" })).json() as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/console"))).toEqual([]);
    const missing = await fresh(t.app).get("/console/nowhere");
    expect(missing.statusCode).toBe(404);
    expect(missing.headers["content-type"]).toContain("text/html");
  });
});
