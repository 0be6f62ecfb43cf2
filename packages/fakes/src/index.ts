/**
 * Faithful local Polymarket and Kalshi servers for tests, benchmarks and `crossbook demo`.
 * Import a venue's fake from its own entry (`@crossbook/fakes/polymarket`, `@crossbook/fakes/kalshi`)
 * or the main names from here.
 */
export { type KalshiFake, type KalshiFakeOptions, type KalshiScript, startKalshiFake } from "./kalshi/index";
export {
  type PolymarketFake,
  type PolymarketFakeOptions,
  type PolymarketScript,
  startPolymarketFake,
} from "./polymarket/index";
export { type CrossListing, crossListings } from "./world/cross";
export { DEFAULT_WORLD, type SeedMarket, seedFor } from "./world/seed";
