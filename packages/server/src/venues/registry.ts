/**
 * Builds the enabled venue adapters from config (CROSSBOOK_VENUES and the base URLs). Production
 * defaults point at the real venues; tests and `crossbook demo` point the same adapters at the
 * fake venues in packages/fakes.
 */
import type { Config } from "../config";
import type { Clock } from "../infra/clock";
import type { Logger } from "../infra/log";
import { createKalshiVenue } from "./kalshi/adapter";
import type { VenueId } from "./model";
import { createPolymarketVenue } from "./polymarket/adapter";
import type { Venue } from "./venue";

export function createVenues(config: Config, clock: Clock, log: Logger): Map<VenueId, Venue> {
  const venues = new Map<VenueId, Venue>();
  for (const id of config.venues) {
    if (id === "polymarket") {
      const urls = config.venueUrls.polymarket;
      venues.set(
        id,
        createPolymarketVenue({ gammaUrl: urls.gamma, clobUrl: urls.clob, wsUrl: urls.ws, clock, log }),
      );
    } else {
      const urls = config.venueUrls.kalshi;
      venues.set(
        id,
        createKalshiVenue({
          apiUrl: urls.api,
          wsUrl: urls.ws,
          clock,
          log,
          ...(config.kalshiFeedKey ? { feedKey: config.kalshiFeedKey } : {}),
        }),
      );
    }
  }
  return venues;
}

/** The base URLs in use, for `GET /v1/venues`. */
export function venueUrlsInUse(config: Config): Record<string, Record<string, string>> {
  const urls: Record<string, Record<string, string>> = {};
  for (const id of config.venues) urls[id] = { ...config.venueUrls[id] };
  return urls;
}
