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
    model: "kalshi",
    description:
      "Per series (an event may override): fee = C × 0.07 × fee_multiplier × P × (1 − P) for takers; makers pay " +
      "a quarter of that on quadratic_with_maker_fees series, half on quadratic_with_combo_maker_fees, nothing " +
      "on quadratic; flat series a fee per contract. Each fill's fee is rounded up to $0.0001, the balance " +
      "change then to the cent, and the rounding an order overpaid comes back in whole cents. Each market's " +
      "`fees` gives its schedule.",
  },
};
