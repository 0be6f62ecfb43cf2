/**
 * `crossbook demo`: the whole thing offline in one command. Starts the fake Polymarket and Kalshi
 * (seeded world, books that move with trades) on free local ports, runs the service against them
 * with the same configuration as `serve` (HOST, PORT, DATABASE_URL, …), creates a demo account with
 * a live and a sandbox key, and prints how to use them and where the console is (the password is
 * printed when the account is created; an existing demo database keeps its password). Stopping the demo stops the fakes.
 */
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import type { Config } from "./config";
import { serve } from "./serve";

export const DEMO_EMAIL = "demo@crossbook.local";

/** The venue base URLs (config shape) that point the adapters at running fake venues. */
export function fakeVenueUrls(polymarket: PolymarketFake, kalshi: KalshiFake): Config["venueUrls"] {
  return {
    polymarket: {
      gamma: polymarket.gammaUrl,
      clob: polymarket.clobUrl,
      ws: polymarket.wsUrl,
      data: polymarket.dataUrl,
    },
    kalshi: { api: kalshi.apiUrl, ws: kalshi.wsUrl },
  };
}

export async function demo(config: Config, options: { tickMs?: number } = {}): Promise<void> {
  const autoplay = { intervalMs: options.tickMs ?? 1000 };
  const polymarket = await startPolymarketFake({ autoplay });
  const kalshi = await startKalshiFake({ autoplay });
  const demoConfig: Config = {
    ...config,
    venues: ["polymarket", "kalshi"],
    venueUrls: fakeVenueUrls(polymarket, kalshi),
    // The fakes are local: sync often so changes show within seconds.
    catalogSyncIntervalSeconds: Math.min(config.catalogSyncIntervalSeconds, 15),
    // The fake Kalshi, like the real one, refuses an unsigned market-data WebSocket: sign with its key.
    kalshiFeedKey: await kalshi.feedKey(),
  };
  await serve(demoConfig, {
    async onListening({ services, address }) {
      let account = await services.accounts.getByEmail(DEMO_EMAIL);
      let password: string | undefined;
      if (!account) {
        password = `demo-${Math.random().toString(36).slice(2, 12)}`;
        account = await services.accounts.create({ email: DEMO_EMAIL, password, tier: "pro", plan: "agent" });
      }
      // The demo's own world: its account curates the fake venues' matches (a live admin key does).
      if (!account.operator) account = await services.accounts.update(account.id, { operator: true });
      // A re-run replaces the previous demo keys rather than piling them up against the key cap.
      for (const key of await services.apiKeys.list(account.id)) {
        if (!key.revoked_at && key.name.startsWith("demo "))
          await services.apiKeys.revoke(account.id, key.id);
      }
      const live = await services.apiKeys.create(account.id, {
        name: "demo live",
        type: "trading",
        environment: "live",
      });
      const sandbox = await services.apiKeys.create(account.id, {
        name: "demo sandbox",
        type: "trading",
        environment: "sandbox",
      });
      const lines = [
        "",
        "crossbook demo is running, offline, against local fake venues:",
        `  service      ${address}   (docs: ${address}/docs)`,
        `  console      ${address}/console   (sign in with the account below)`,
        `  polymarket   ${polymarket.gammaUrl} (gamma), ${polymarket.clobUrl} (clob)`,
        `  kalshi       ${kalshi.apiUrl}`,
        "",
        `  account      ${DEMO_EMAIL}${password ? `   password: ${password}` : " (existing)"}   (an operator: its live admin keys curate matches)`,
        `  live key     ${live.secret}`,
        `  sandbox key  ${sandbox.secret}`,
        "",
        "Try:",
        `  curl -s ${address}/v1/venues -H "authorization: Bearer ${live.secret}"`,
        `  curl -s "${address}/v1/markets?limit=5" -H "authorization: Bearer ${live.secret}"`,
        "Trade in the sandbox (10,000 fake USDC, filled against the fake venues' real-looking books):",
        `  curl -s ${address}/v1/balance -H "authorization: Bearer ${sandbox.secret}"`,
        `  curl -s ${address}/v1/orders -H "authorization: Bearer ${sandbox.secret}" -H 'content-type: application/json' \\`,
        `    -d '{"market_id":"<an id from /v1/markets>","side":"buy","price":0.5,"amount":10}'`,
        "",
        "Ctrl-C stops the service and the fake venues.",
        "",
      ];
      process.stdout.write(lines.join("\n"));
    },
    async onShutdown() {
      await Promise.allSettled([polymarket.close(), kalshi.close()]);
    },
  });
}
