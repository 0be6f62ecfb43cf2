/**
 * Venue links, the sandbox and live trading in a real browser (Debian's Chromium through
 * playwright-core): a new user links a venue with a bad field and sees the error next to it, deposits
 * in the sandbox and sees the balance move; the pages are screenshotted at 1280x800 and the sandbox
 * at phone width, without horizontal scrolling.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertOrder } from "../../src/ledger/orders-repo";
import { KALSHI_KEY_ID } from "../credentials/setup";
import { book, placed, setBook, type Trading, tradingApp } from "../orders/setup";
import { createKey } from "../support/app";
import { HAVE_CHROMIUM, openLiveOrder, screenshot, startBrowser } from "./support";

describe.skipIf(!HAVE_CHROMIUM)("venue links and trading pages in headless Chromium", () => {
  let s: Trading;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    s = await tradingApp();
    base = await s.t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await startBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await s?.t.close();
  });

  it("links a venue with a bad field, deposits in the sandbox, and shows live trading", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${base}/console/signup`);
    await page.fill("#f-email", "browser-trading@example.com");
    await page.fill("#f-password", "correct horse battery staple");
    await page.click("button[type=submit]:has-text('Create account')");
    await page.waitForURL(/\/console\/keys/);

    // Venue links: a key ID that is fine and a private key that is not.
    await page.goto(`${base}/console/venues`);
    await page.fill("#f-kalshi_key_id", KALSHI_KEY_ID);
    await page.fill("#f-kalshi_private_key_pem", "this is not a PEM");
    await page.click("button[type=submit]:has-text('Link Kalshi')");
    const error = page.locator("#f-kalshi_private_key_pem-error");
    await error.waitFor();
    expect(await error.textContent()).toContain("is not a readable private key");
    expect(await page.getAttribute("#f-kalshi_private_key_pem", "aria-invalid")).toBe("true");
    expect(await page.getAttribute("#f-kalshi_private_key_pem", "aria-describedby")).toContain(
      "f-kalshi_private_key_pem-error",
    );
    expect(await page.inputValue("#f-kalshi_key_id")).toBe(KALSHI_KEY_ID);
    expect(await page.inputValue("#f-kalshi_private_key_pem")).toBe("");
    await screenshot(page, "venues");

    // Some sandbox activity through the API, with a key of the same account.
    const session = (await context.cookies()).find((c) => c.name === "cb_session")!.value;
    const accountId = (await s.t.services.accounts.resolveSession(session))!.account_id;
    const key = (await createKey(s.t.app, session, { type: "trading", environment: "sandbox" })).key;
    setBook(s.kalshi, book("kalshi:K", { bids: [[0.4, 100]], asks: [[0.45, 50]] }));
    await placed(s.t.app, key, { market_id: "kalshi:K", side: "buy", price: 0.45, amount: 4 });
    await placed(s.t.app, key, { market_id: "kalshi:K", side: "buy", price: 0.3, amount: 10 });

    await page.goto(`${base}/console/sandbox`);
    const available = page.locator("[data-testid=available]");
    const before = await available.textContent();
    expect(before).toMatch(/^\$9,9\d\d\.\d\d$/); // 10,000 less what the orders took or hold
    await page.fill("#f-deposit_amount", "250");
    await page.click("button[type=submit]:has-text('Deposit')");
    await page.waitForSelector(".flash.ok");
    const after = await available.textContent();
    const dollars = (text: string | null) => Number(text!.replace(/[$,]/g, ""));
    expect(dollars(after) - dollars(before)).toBeCloseTo(250, 2);
    // A withdrawal beyond the balance is refused next to its field.
    await page.fill("#f-withdraw_amount", "1000000");
    await page.click("button[type=submit]:has-text('Withdraw')");
    expect(await page.locator("#f-withdraw_amount-error").textContent()).toContain("available");
    await page.goto(`${base}/console/sandbox`);
    expect(await page.locator("[data-testid=open-orders] tbody tr").count()).toBe(1);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(1280);
    await screenshot(page, "sandbox");

    // Phone width: the tables become labelled rows, still without horizontal scrolling.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/console/sandbox`);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await screenshot(page, "sandbox-phone");
    await page.setViewportSize({ width: 1280, height: 800 });

    // Live trading: read-only, with a live order from the ledger.
    await insertOrder(
      s.t.runtime.store.db,
      openLiveOrder(accountId, {
        id: "ord_browser_live",
        price: 350_000,
        amount: 20_000_000,
        locked: 7_000_000,
        venue_order_id: "venue-browser-1",
        position_id: "pos_browser_live",
      }),
    );
    await page.goto(`${base}/console/trading`);
    expect(await page.locator("[data-testid=read-only]").isVisible()).toBe(true);
    expect(await page.locator("[data-testid=open-orders] tbody tr").count()).toBe(1);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(1280);
    await screenshot(page, "trading");
    await context.close();
  }, 60_000);
});
