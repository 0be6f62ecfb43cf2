/**
 * The crossbook app as the benches run it: a fresh SQLite store in a temp folder, no venues, one
 * enterprise account whose limits the run cannot exhaust (the limiter still counts every request),
 * and a read-only key. Plus catalog markets for benches that need some.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AccountsService } from "../../src/accounts/service";
import { type BuildOptions, buildApp } from "../../src/app";
import * as catalogRepo from "../../src/catalog/repo";
import { marketRow } from "../../src/catalog/service";
import { loadConfig } from "../../src/config";
import { createRuntime } from "../../src/runtime";

export async function startBenchApp(
  options: {
    account?: Parameters<AccountsService["update"]>[1];
    build?: BuildOptions;
    /** The bench key's type and environment; default a live read-only key. */
    key?: { type: string; environment?: "live" | "sandbox" };
    /** Extra environment settings (e.g. WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
    env?: Record<string, string>;
  } = {},
) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-bench-"));
  // The bench database is tens of megabytes: remove it when the bench process ends.
  process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  // A bench that runs this app in a child process stops it with SIGTERM: exit, so the above runs.
  process.once("SIGTERM", () => process.exit(0));
  const config = loadConfig({
    DATABASE_URL: `sqlite:${path.join(dir, "bench.db")}`,
    CROSSBOOK_DATA_DIR: dir,
    CROSSBOOK_VENUES: "none",
    LOG_LEVEL: "warn",
    PASSWORD_HASH_COST: "10",
    ...options.env,
  });
  const runtime = await createRuntime(config);
  const { app, services } = await buildApp(runtime, options.build);
  const account = await services.accounts.create({
    email: "bench@example.com",
    password: "bench password 123",
  });
  await services.accounts.update(account.id, {
    tier: "enterprise",
    rate_limit_per_minute: 100_000_000,
    ...options.account,
  });
  const { secret } = await services.apiKeys.create(account.id, {
    name: "bench",
    type: options.key?.type ?? "read_only",
    ...(options.key?.environment ? { environment: options.key.environment } : {}),
  });
  return { runtime, app, services, secret, accountId: account.id };
}

/** Open Kalshi markets `kalshi:<ticker>` in the catalog (bid 0.49, ask 0.51), in one transaction. */
export async function seedBenchMarkets(
  runtime: Awaited<ReturnType<typeof createRuntime>>,
  ids: readonly string[],
): Promise<void> {
  const now = new Date().toISOString();
  await runtime.store.db.transaction().execute(async (trx) => {
    for (const id of ids) {
      const ticker = id.slice("kalshi:".length);
      await catalogRepo.upsertMarket(
        trx,
        marketRow(
          {
            id,
            venue: "kalshi",
            venueMarketId: ticker,
            eventId: null,
            title: ticker,
            question: `Will ${ticker} resolve Yes?`,
            rules: null,
            settlementSource: null,
            outcomes: { yes: { label: "Yes", venueTokenId: "yes" }, no: { label: "No", venueTokenId: "no" } },
            status: "open",
            resolution: null,
            openTime: now,
            closeTime: null,
            tickSize: 10_000,
            minSize: 1_000_000,
            volume: 1_000_000_000,
            volume24h: 50_000_000,
            liquidity: 10_000_000_000,
            url: null,
            lastPrice: 500_000,
            bestBid: 490_000,
            bestAsk: 510_000,
            price24hAgo: null,
            negRisk: false,
            fees: null,
            updatedAt: now,
          },
          now,
        ),
      );
    }
  });
}
