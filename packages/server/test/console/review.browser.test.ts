/**
 * The match review desk in headless Chromium, on the demo's world: the fake Polymarket and Kalshi
 * synced through the real adapters and matched by the real matcher (what `crossbook demo` runs,
 * in-process here so the test runs the sources rather than a build). An operator signs in, opens the
 * queue, verifies one candidate with the keyboard and rejects another with a reason, and the API
 * shows both decisions; a non-operator finds no review desk at all.
 */
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../../src/config";
import { fakeVenueUrls } from "../../src/demo";
import { systemClock } from "../../src/infra/clock";
import { silentLogger } from "../../src/infra/log";
import { Matcher } from "../../src/matching/matcher";
import { createVenues } from "../../src/venues/registry";
import { type MatchingTestApp, matchingApp } from "../matching/setup";
import { HAVE_CHROMIUM, screenshot, startBrowser } from "./support";

const PASSWORD = "correct horse battery staple";

describe.skipIf(!HAVE_CHROMIUM)("the match review desk in headless Chromium, on the demo", () => {
  let polymarket: PolymarketFake;
  let kalshi: KalshiFake;
  let t: MatchingTestApp;
  let browser: Browser;
  let base: string;
  /** A live read-only key, to read decisions back through the API. */
  let readKey: string;

  beforeAll(async () => {
    polymarket = await startPolymarketFake();
    kalshi = await startKalshiFake();
    const config = testConfig({
      venues: ["polymarket", "kalshi"],
      venueUrls: fakeVenueUrls(polymarket, kalshi),
    });
    t = await matchingApp({
      venues: createVenues(config, systemClock, silentLogger),
      matcher: new Matcher(),
      config: { venues: config.venues, venueUrls: config.venueUrls },
    });
    await t.sync();
    // The demo's account: an operator, signed in with a password.
    const operator = await t.services.accounts.create({ email: "demo@crossbook.local", password: PASSWORD });
    await t.services.accounts.update(operator.id, { operator: true });
    readKey = (
      await t.services.apiKeys.create(operator.id, { name: "reads", type: "read_only", environment: "live" })
    ).secret;
    await t.services.accounts.create({ email: "someone@example.com", password: PASSWORD });
    base = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await startBrowser();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await Promise.all([polymarket?.close(), kalshi?.close()]);
  });

  async function signIn(page: Page, email: string) {
    await page.goto(`${base}/console/signin`);
    await page.fill("#f-email", email);
    await page.fill("#f-password", PASSWORD);
    await page.click("button[type=submit]:has-text('Sign in')");
    await page.waitForURL((url) => !url.pathname.endsWith("/signin"));
  }

  const apiMatch = async (id: string) => {
    const response = await fetch(`${base}/v1/matches/${id}`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: Record<string, unknown> }).data;
  };

  const matchId = (page: Page) => /\/console\/review\/(mat_[^/?#]+)$/.exec(new URL(page.url()).pathname)?.[1];

  /** Whether anything on the page sticks out past the window's right edge. */
  const scrollsSideways = (page: Page, width: number) =>
    page.evaluate(`document.documentElement.scrollWidth > ${width}`) as Promise<boolean>;

  it("lets an operator verify one candidate by keyboard and reject another with a reason", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, "demo@crossbook.local");
    await page.click("nav >> text=Match review");
    await page.waitForURL(`${base}/console/review`);
    const rows = page.locator("[data-testid=candidate]");
    expect(await rows.count()).toBeGreaterThan(2);
    expect(await scrollsSideways(page, 1280)).toBe(false);
    await screenshot(page, "review-queue");

    // j opens the first candidate of the queue.
    const first = await rows.first().getAttribute("data-id");
    await Promise.all([page.waitForURL(`${base}/console/review/${first}`), page.keyboard.press("j")]);
    expect(await page.locator("[data-testid=market-a] [data-testid=rules]").count()).toBe(1);
    expect(await page.locator("[data-testid=market-b] [data-testid=rules]").count()).toBe(1);
    expect(await page.locator("[data-testid=rules] mark").count()).toBeGreaterThan(0);
    expect(await page.locator("[data-testid=keys] kbd").count()).toBe(4);
    expect(await scrollsSideways(page, 1280)).toBe(false);
    // Side by side at this width.
    const a = (await page.locator("[data-testid=market-a]").boundingBox())!;
    const b = (await page.locator("[data-testid=market-b]").boundingBox())!;
    expect(b.x).toBeGreaterThan(a.x + a.width - 1);
    await screenshot(page, "review-pair");

    // v verifies it as it stands and moves on to the next candidate.
    const verified = matchId(page)!;
    await Promise.all([page.waitForURL((url) => !url.pathname.endsWith(verified)), page.keyboard.press("v")]);
    expect(await page.textContent(".flash.ok")).toContain("Verified");
    const rejected = matchId(page)!;
    expect(rejected).toBeTruthy();

    // r puts the focus on the reason; the operator picks one and rejects.
    await page.keyboard.press("r");
    expect(await page.evaluate("document.activeElement && document.activeElement.id")).toBe("reject-reason");
    await page.selectOption("#reject-reason", "different_contract");
    await page.fill("#reject-note", "Another meeting");
    await Promise.all([
      page.waitForURL((url) => !url.pathname.endsWith(rejected)),
      page.click("button:has-text('Reject')"),
    ]);
    expect(await page.textContent(".flash.ok")).toContain("Rejected (different_contract)");

    expect(await apiMatch(verified)).toMatchObject({
      status: "verified",
      decided_by: "admin",
      curated: true,
    });
    expect(await apiMatch(rejected)).toMatchObject({
      status: "rejected",
      status_reason: "different_contract",
      status_note: "Another meeting",
    });
    // Neither is in the queue any more.
    await page.goto(`${base}/console/review`);
    const left = await page
      .locator("[data-testid=candidate]")
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-id")));
    expect(left).not.toContain(verified);
    expect(left).not.toContain(rejected);

    // Pairing by hand: search both venues, pick one of each.
    await page.click("text=Pair two markets by hand");
    await page.fill("#f-q_polymarket", "fed");
    await page.fill("#f-q_kalshi", "fed");
    await page.click("button:has-text('Search')");
    await page.waitForSelector("[data-testid=results-kalshi]");
    expect(await scrollsSideways(page, 1280)).toBe(false);
    await screenshot(page, "review-pair-by-hand");
    await page.check("#pick-a-0");
    await page.check("#pick-b-0");
    await page.selectOption("#pair-relation", "overlap");
    await Promise.all([
      page.waitForURL(/\/console\/review\/mat_/),
      page.click("button:has-text('Create a verified match')"),
    ]);
    expect(await page.textContent(".flash.ok")).toMatch(/verified/);
    expect(await apiMatch(matchId(page)!)).toMatchObject({ status: "verified", relation: "overlap" });
    await context.close();
  });

  it("stacks the two markets on a phone", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await signIn(page, "demo@crossbook.local");
    await page.goto(`${base}/console/review`);
    expect(await scrollsSideways(page, 390)).toBe(false);
    await page.click("[data-testid=candidate] >> nth=0 >> text=Review");
    await page.waitForURL(/\/console\/review\/mat_/);
    const a = (await page.locator("[data-testid=market-a]").boundingBox())!;
    const b = (await page.locator("[data-testid=market-b]").boundingBox())!;
    expect(b.y).toBeGreaterThanOrEqual(a.y + a.height - 1);
    await screenshot(page, "review-pair-phone");
    expect(await scrollsSideways(page, 390)).toBe(false);
    await screenshot(page, "review-pair-phone");
    await context.close();
  });

  it("shows a non-operator no review desk", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, "someone@example.com");
    await page.goto(`${base}/console/sessions`);
    expect(await page.locator("nav >> text=Match review").count()).toBe(0);
    const response = await page.goto(`${base}/console/review`);
    expect(response?.status()).toBe(404);
    expect(await page.textContent("h1")).toBe("Not found");
    await context.close();
  });
});
