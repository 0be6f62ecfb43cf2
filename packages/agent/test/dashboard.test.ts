import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dashboard, startDashboard } from "../src/dashboard/server";
import { Crossbook } from "../src/index";
import { type Demo, startDemo } from "./support/demo";

const ARTIFACTS = fileURLToPath(new URL("../test-artifacts/", import.meta.url));

describe("the dashboard in headless Chromium", () => {
  let demo: Demo;
  let client: Crossbook;
  let dashboard: Dashboard;
  let browser: Browser;
  let marketId: string;
  let orderId: string;

  beforeAll(async () => {
    demo = await startDemo({ tickMs: 100 });
    client = new Crossbook({ apiKey: demo.sandboxKey, environment: "sandbox", baseUrl: demo.url });
    for (let i = 0; i < 100 && !marketId; i++) {
      const { data } = await client.markets.list({ venue: "kalshi", status: "open", limit: 50 });
      const m = data.find(
        (x) => x.best_ask !== null && x.best_ask < 0.9 && x.best_bid !== null && x.best_bid > 0.1,
      );
      if (m) marketId = m.id;
      else await new Promise((r) => setTimeout(r, 200));
    }
    // A position (a filled buy) and a resting order to cancel from the page.
    await client.orders.place({
      market_id: marketId,
      side: "buy",
      type: "market",
      amount: 5,
      max_slippage: 0.1,
    });
    orderId = (await client.orders.place({ market_id: marketId, side: "buy", price: 0.02, amount: 5 })).id;
    dashboard = await startDashboard({ client, markets: [marketId], port: 0, refreshMs: 500 });
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--headless", "--no-sandbox", "--disable-gpu"],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    await demo?.close();
  });

  it("shows balance, positions and prices, moves with the stream, and cancels an order", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } }); // a phone
    await page.goto(dashboard.openUrl);
    await page.waitForSelector("[data-testid=position]");
    const balance = await client.balance();
    await expect
      .poll(() => page.textContent("#total"))
      .toContain(
        balance.total
          .toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })
          .split(".")[0],
      );
    expect(await page.textContent("#env")).toBe("sandbox");
    expect(await page.textContent("[data-testid=position]")).toContain(marketId);

    // Prices move: the price cell shows a number, then changes as the fake venue trades.
    const priceCell = `[data-testid=price-row][data-market="${marketId}"] [data-testid=price]`;
    const cellText = `document.querySelector(${JSON.stringify(priceCell)})?.textContent ?? ""`;
    await page.waitForFunction(`/\\d/.test(${cellText})`);
    const first = await page.textContent(priceCell);
    await page.waitForFunction(`(${cellText}) !== ${JSON.stringify(first)}`, undefined, { timeout: 30_000 });

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, "dashboard.png"), fullPage: true });

    // Cancel from the page: the row goes and the service says cancelled.
    await page.click(`[data-testid=order][data-order="${orderId}"] [data-testid=cancel]`);
    await page.waitForSelector(`[data-testid=order][data-order="${orderId}"]`, { state: "detached" });
    expect((await client.orders.get(orderId)).status).toBe("cancelled");
    await page.close();
  }, 90_000);

  it("needs the token when it listens beyond loopback", async () => {
    const open = await startDashboard({ client, port: 0, host: "0.0.0.0" });
    try {
      const bare = await fetch(open.url.replace("0.0.0.0", "127.0.0.1"));
      expect(bare.status).toBe(401);
      const withToken = await fetch(open.openUrl.replace("0.0.0.0", "127.0.0.1"));
      expect(withToken.status).toBe(200);
    } finally {
      await open.close();
    }
  });
});
