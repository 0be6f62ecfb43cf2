/**
 * The backtest report in headless Chromium: at a desktop and a phone width the page never scrolls
 * sideways (a wide table scrolls inside its own box), and at 1280 px the trades table fits whole.
 * Screenshots go to test-artifacts/ to be looked at.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { seededRandom } from "@crossbook/fakes/random";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BacktestResult, backtest, type MarketCandle, writeReport } from "../src/backtest/index";

const ARTIFACTS = fileURLToPath(new URL("../test-artifacts/", import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

// Real-looking ids: a Polymarket condition id is 66 characters with no place to break.
const KALSHI = "kalshi:KXFEDDECISION-26DEC-T4.00";
const POLY = `polymarket:0x${"7f3a9c1e".repeat(8)}`;
const TITLES = {
  [KALSHI]: "Will the Fed's upper bound be above 4.00% after the December 2026 meeting?",
  [POLY]: "Fed rate above 4% after December meeting?",
};
const T0 = Date.UTC(2026, 9, 1);
const H = 3_600_000;

/** A seeded random walk per market, one candle an hour. */
function candles(hours: number): MarketCandle[] {
  const random = seededRandom(11);
  const out: MarketCandle[] = [];
  for (const market_id of [KALSHI, POLY]) {
    let p = 0.45;
    for (let h = 0; h < hours; h++) {
      const open = p;
      p = Math.min(0.95, Math.max(0.05, p + (random() - 0.5) * 0.05));
      const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
      out.push({
        market_id,
        timestamp: T0 + h * H,
        open: r4(open),
        high: r4(Math.max(open, p) + 0.01),
        low: r4(Math.min(open, p) - 0.01),
        close: r4(p),
        volume: 100,
      });
    }
  }
  return out;
}

describe.skipIf(!existsSync(CHROMIUM))("the backtest report in headless Chromium", () => {
  let browser: Browser;
  let result: BacktestResult;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    result = await backtest({
      strategy: {
        onCandle(ctx) {
          for (const c of ctx.candles) {
            const held = ctx.portfolio.position(c.market_id);
            if (c.close < 0.4 && held < 40)
              ctx.order({ market_id: c.market_id, side: "buy", type: "market", amount: 10 });
            if (c.close > 0.55 && held > 0)
              ctx.order({ market_id: c.market_id, side: "sell", type: "market", amount: held });
            // Refused every time (nothing of NO is held): the rejected table gets long messages.
            if (c.time % (24 * H) === 0)
              ctx.order({ market_id: c.market_id, side: "sell", outcome: "no", price: 0.5, amount: 5 });
          }
        },
      },
      markets: [KALSHI, POLY],
      interval: "1h",
      from: T0,
      to: T0 + 24 * 14 * H,
      initialCash: 1_000,
      source: candles(24 * 14),
      titles: TITLES,
      progressLog: false,
    });
    dir = mkdtempSync(path.join(tmpdir(), "cb-report-"));
    file = path.join(dir, "report.html");
    await writeReport(result, file, { title: "Fed mean reversion, two venues" });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("never scrolls the page sideways; the trades table fits at 1280 px", async () => {
    expect(result.trades.length).toBeGreaterThan(5);
    expect(result.rejected.length).toBeGreaterThan(5);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await page.goto(pathToFileURL(file).href);
      // Markets by title, the id beneath.
      const cells = await page.locator("table td.wrap").allTextContents();
      expect(cells).toContain(`${TITLES[KALSHI]}${KALSHI}`);
      expect(cells).toContain(`${TITLES[POLY]}${POLY}`);
      await page.evaluate("document.querySelector('details').open = true");
      mkdirSync(ARTIFACTS, { recursive: true });
      for (const [width, height] of [
        [1280, 900],
        [390, 844],
      ] as const) {
        await page.setViewportSize({ width, height });
        const scrollWidth = Number(await page.evaluate("document.scrollingElement.scrollWidth"));
        expect(scrollWidth, `page width at ${width} px`).toBeLessThanOrEqual(width);
        if (width === 1280) {
          const [inner, box] = (await page.evaluate(
            "(() => { const s = document.querySelector('.scroll'); return [s.scrollWidth, s.clientWidth]; })()",
          )) as [number, number];
          expect(inner, "the trades table's width at 1280 px").toBeLessThanOrEqual(box);
        }
        await page.screenshot({ path: path.join(ARTIFACTS, `backtest-report-${width}.png`), fullPage: true });
      }
    } finally {
      await page.close();
    }
  }, 60_000);
});
