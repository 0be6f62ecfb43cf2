/**
 * API keys and usage in a real browser (Debian's Chromium through playwright-core): a new user signs
 * up, generates a sandbox trading key and sees its secret exactly once (copied with the button),
 * renames it, looks at its usage, revokes it, and the API refuses it on the next request. The pages
 * fit 1280x800 without sideways scrolling and stay readable at phone width; screenshots are saved
 * under test-artifacts/console/.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, setAccount, type TestApp } from "../support/app";
import { HAVE_CHROMIUM, screenshot, startBrowser } from "./support";

const MINUTE = 60_000;

describe.skipIf(!HAVE_CHROMIUM)("API keys and usage in headless Chromium", () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp();
    // Half a minute into a minute, as a person would meet it.
    t.clock.set(Date.UTC(2026, 10, 22, 12, 0, 30));
    base = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await startBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const api = (key: string) => fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
  // Evaluated as strings: the test's TypeScript has no DOM types.
  const scrollWidth = (page: Page) =>
    page.evaluate("document.documentElement.scrollWidth") as Promise<number>;

  it("creates a key shown once, renames it, shows its usage, revokes it and the API refuses it", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    const page = await context.newPage();
    const email = `keys-browser-${Date.now()}@example.com`;

    await page.goto(`${base}/console/signup`);
    await page.fill("#f-email", email);
    await page.fill("#f-password", "correct horse battery staple");
    await page.click("button[type=submit]:has-text('Create account')");
    await page.waitForURL(/\/console\/keys$/);
    expect(await page.textContent("main")).toContain("No keys yet");
    // A low limit, so the usage page has 429s to show: an enterprise account with 5 a minute.
    const account = (await t.services.accounts.getByEmail(email))!;
    await setAccount(t.services, account.id, { tier: "enterprise", rate_limit_per_minute: 5 });

    // Name, then generate.
    await page.fill("#f-name", "browser bot");
    await page.check("input[name=type][value=trading]");
    await page.check("input[name=environment][value=sandbox]");
    await page.click("button:has-text('Generate key')");
    const secret = (await page.textContent("#new-key-secret"))!.trim();
    expect(secret).toMatch(/^cb_test_[A-Za-z0-9]{40}$/);
    expect(await page.textContent("[role=alert]")).toContain("you will not see it again");
    const copy = page.locator("button[data-copy=new-key-secret]");
    expect(await copy.isVisible()).toBe(true); // unhidden by the console's script
    await copy.click();
    await expect.poll(() => copy.textContent()).toBe("Copied");
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(secret);
    await screenshot(page, "keys-new-secret");

    // The key works; some requests now and some earlier today, a few of them over the limit.
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await api(secret)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const keyId = (await page.getAttribute("tbody tr", "data-key-id"))!;
    for (let m = 1; m < 24 * 60; m += 7) {
      const when = t.clock.now() - m * MINUTE;
      for (let i = 0; i < 1 + ((m * 13) % 5); i++) t.services.keyUsage.record(keyId, true, when);
      if (m % 97 === 1) for (let i = 0; i < 3; i++) t.services.keyUsage.record(keyId, false, when);
    }
    await t.services.keyUsage.flush();

    // Back to the list: the secret is gone for good, also after a reload.
    await page.click("text=I have stored it: back to API keys");
    await page.waitForURL(/\/console\/keys$/);
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    expect(await page.content()).not.toContain(secret);
    expect(await page.textContent("tbody")).toContain("browser bot");
    expect(await page.textContent("tbody")).toContain(secret.slice(0, 14));
    expect(await scrollWidth(page)).toBeLessThanOrEqual(1280);

    // Rename.
    await page.click("a[aria-label='Rename browser bot']");
    await page.fill("#f-name", "");
    await page.click("button:has-text('Save name')");
    expect(await page.textContent("#f-name-error")).toContain("1 to 100 characters");
    await page.fill("#f-name", "renamed bot");
    await page.click("button:has-text('Save name')");
    await page.waitForURL(/\/console\/keys$/);
    expect(await page.textContent(".flash")).toContain("renamed to “renamed bot”");
    expect(await page.textContent("tbody")).toContain("renamed bot");
    await screenshot(page, "keys");

    // Usage: this minute against the limit, the day's chart.
    await page.click("nav >> text=Usage");
    await page.waitForURL(/\/console\/usage$/);
    expect(await page.textContent("[data-testid=this-minute]")).toBe("5");
    expect(await page.textContent("[data-testid=limited-this-minute]")).toBe("2");
    expect(await page.textContent("main")).toContain("Limited now.");
    expect(await page.locator("svg.chart[role=img] title").count()).toBe(1);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(1280);
    await screenshot(page, "usage");

    // Revoke, after the confirmation page; the very next API request is refused.
    await page.goto(`${base}/console/keys`);
    await page.click("a[aria-label='Revoke renamed bot']");
    expect(await page.textContent("h1")).toContain("Revoke “renamed bot”?");
    await screenshot(page, "keys-revoke");
    expect((await api(secret)).status).not.toBe(401); // not yet
    await page.click("button:has-text('Revoke key')");
    await page.waitForURL(/\/console\/keys$/);
    expect((await api(secret)).status).toBe(401);
    expect(await page.textContent("tbody")).toContain("Revoked");

    // Phone width: the same pages, nothing sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    expect(await scrollWidth(page)).toBeLessThanOrEqual(390);
    await screenshot(page, "keys-phone");
    await page.goto(`${base}/console/usage`);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(390);
    await screenshot(page, "usage-phone");
    await context.close();
  });
});
