/** Event payloads for suites that record events without the services that usually emit them. */

/** A `price.alert` payload, numbered so each is told apart. */
export const priceAlert = (n: number) => ({
  alert_id: `alt_${n}`,
  market_id: "kalshi:KXBTC",
  event_title: "Bitcoin",
  condition: "price_above",
  threshold: 0.5,
  current_price: 0.51,
  platform: "kalshi",
});
