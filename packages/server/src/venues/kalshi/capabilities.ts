/**
 * What the Kalshi adapter can do, where Kalshi lives, and the budgets we keep to (VENUES.md §2.1,
 * §2.7). Rate limits are the Basic tier (20 reads/s, 10 writes/s), the floor every account has;
 * writes are order create/cancel/amend.
 */
import type { VenueCapabilities } from "../venue";

export const KALSHI_URLS = {
  production: {
    api: "https://api.elections.kalshi.com/trade-api/v2",
    ws: "wss://api.elections.kalshi.com/trade-api/ws/v2",
  },
  demo: {
    api: "https://demo-api.kalshi.co/trade-api/v2",
    ws: "wss://demo-api.kalshi.co/trade-api/ws/v2",
  },
} as const;

export const KALSHI_CAPABILITIES: VenueCapabilities = {
  venue: "kalshi",
  displayName: "Kalshi",
  urls: { production: { ...KALSHI_URLS.production }, sandbox: { ...KALSHI_URLS.demo } },
  supports: {
    events: true,
    orderBook: true,
    priceHistory: true,
    candles: ["1m", "1h", "1d"],
    feed: true,
    trading: true,
    // "market" is sent as an immediate-or-cancel limit at the worst acceptable price.
    orderTypes: ["limit", "market"],
    timeInForce: ["GTC", "GTD", "IOC", "FOK"],
    // Kalshi publishes NO bids of its own; NO asks are implied from YES bids.
    nativeNoBook: true,
  },
  rateLimits: {
    read: { requests: 20, windowMs: 1000 },
    trade: { requests: 10, windowMs: 1000 },
  },
  fees: {
    model: "kalshi_quadratic",
    description:
      "Taker fee ceil(0.07 × contracts × P × (1 − P)) rounded up to the cent; some series carry a fee multiplier.",
  },
};
