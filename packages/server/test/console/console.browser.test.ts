/**
 * The console's frame in a real browser (Debian's Chromium through playwright-core): signing up
 * and out through the pages, the session cookie the browser keeps, a form posted from another site
 * refused, keyboard focus visible, and the pages readable at 1280x800 and at phone width.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../support/app";
import { HAVE_CHROMIUM, screenshot, startBrowser } from "./support";

describe.skipIf(!HAVE_CHROMIUM)("the console in headless Chromium", () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let attacker: Server;
  let attackerUrl: string;

  beforeAll(async () => {
    t = await createTestApp();
    base = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await startBrowser();
    // Another site: a page that posts a console form on load (same IP, other port: another origin;
    // `localhost` below makes it another site too).
    attacker = createServer((_request, response) => {
      response.setHeader("content-type", "text/html");
      response.end(`<!doctype html><form id="f" method="post" action="${base}/console/sessions/end-all">
        <input name="_csrf" value="guessed"></form><script>document.getElementById("f").submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}/`;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => attacker?.close(resolve));
    await t?.close();
  });

  it("signs up, keeps the session in an HttpOnly cookie, refuses a cross-site post, signs out", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const started = Date.now();
    await page.goto(`${base}/console`);
    expect(Date.now() - started).toBeLessThan(5_000); // generous: the figure is in the README
    expect(page.url()).toBe(`${base}/console/signin`);
    await screenshot(page, "signin");

    await page.click("text=Create an account");
    await page.fill("#f-email", "browser-frame@example.com");
    await page.fill("#f-password", "short");
    await page.click("button[type=submit]:has-text('Create account')");
    expect(await page.textContent("#f-password-error")).toContain("at least 10 characters");
    await page.fill("#f-password", "correct horse battery staple");
    await page.click("button[type=submit]:has-text('Create account')");
    await page.waitForURL(/\/console\/keys/);

    // How long a signed-in page takes to load, assets cached or not (printed, never asserted).
    for (const visit of ["first", "second"]) {
      await page.goto(`${base}/console/sessions`);
      const loaded = (await page.evaluate(
        `performance.getEntriesByType("navigation")[0].loadEventEnd`,
      )) as number;
      process.stdout.write(`console page load (${visit}): ${loaded.toFixed(0)} ms\n`);
    }

    const session = (await context.cookies()).find((c) => c.name === "cb_session");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/console", secure: false });
    expect(await page.evaluate("document.cookie")).not.toContain("cb_session");

    // The attacker's page posts to the console from another site: refused, still signed in.
    const attack = await context.newPage();
    const refused = attack.waitForResponse((r) => r.url().endsWith("/console/sessions/end-all"));
    await attack.goto(attackerUrl);
    expect((await refused).status()).toBe(403);
    await page.goto(`${base}/console/sessions`);
    expect(page.url()).toBe(`${base}/console/sessions`);
    expect(await page.locator("[data-testid=session]").count()).toBe(1);
    await screenshot(page, "sessions");

    // Keyboard: the skip link comes first and focus is visible.
    await page.keyboard.press("Tab");
    const focused = (await page.evaluate(
      "({ text: document.activeElement.textContent, outline: getComputedStyle(document.activeElement).outlineStyle })",
    )) as { text: string; outline: string };
    expect(focused.text).toBe("Skip to content");
    expect(focused.outline).toBe("solid");
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(1280);

    await page.click("button:has-text('Sign out')");
    await page.waitForURL(/\/console\/signin/);
    expect(await page.textContent(".flash")).toContain("Signed out");
    await context.close();
  });

  it("is readable at phone width: nothing scrolls sideways", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${base}/console/signup`);
    await page.fill("#f-email", "phone@example.com");
    await page.fill("#f-password", "correct horse battery staple");
    await page.click("button[type=submit]:has-text('Create account')");
    await page.waitForURL(/\/console\/keys/);
    await page.goto(`${base}/console/sessions`);
    await screenshot(page, "sessions-phone");
    const wide = await page.evaluate(
      `[...document.querySelectorAll("body *")].filter((el) => el.getBoundingClientRect().right > 391).map((el) => el.tagName + "." + el.className)`,
    );
    expect(wide).toEqual([]);
    await context.close();
  });
});
