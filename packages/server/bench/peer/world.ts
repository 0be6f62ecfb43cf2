/**
 * The venues bench/peer runs against: the fakes' default world plus enough generated markets that
 * each venue lists more than 100 open ones (the listing job asks for the first 100), with
 * venue-length rules text; and the books the freshness job switches between.
 */
import type { SeedMarket } from "@crossbook/fakes/world";

/** The Kalshi market of the book, price, history and freshness jobs (a default-world market). */
export const KALSHI_MARKET = "KXFEDDECISION-26DEC-C25";

const CITIES = ["NY", "CHI", "MIA", "AUS", "DEN", "LAX", "PHIL", "SEA"];
const DAYS = ["27JAN10", "27JAN11", "27JAN12", "27JAN13", "27JAN14", "27JAN15"];

function rules(city: string, low: number, day: string): string {
  return (
    `If the highest temperature recorded in ${city} for ${day}, as reported by the National Weather ` +
    `Service's Climatological Report (Daily), is between ${low}° and ${low + 1}° inclusive, then the market ` +
    "resolves to Yes. Not all weather data is the same: the information in the report itself is final. " +
    "The market will be settled using the first complete report released after the end of the day, and " +
    "revisions published after expiration will not be considered. If no report is published within 7 " +
    "days, the market resolves according to the rulebook's provisions for an unavailable source."
  );
}

/**
 * Temperature ladders on both venues: `perVenue` markets each, in events of eight, quiet (small
 * volume) so the default world's markets stay the most traded.
 */
export function generatedMarkets(perVenue = 240): SeedMarket[] {
  const out: SeedMarket[] = [];
  for (let i = 0; i < perVenue; i++) {
    const city = CITIES[Math.floor(i / 8) % CITIES.length]!;
    const day = DAYS[Math.floor(i / (8 * CITIES.length)) % DAYS.length]!;
    const low = 40 + (i % 8) * 2;
    const yesPrice = [0.04, 0.11, 0.23, 0.31, 0.18, 0.08, 0.03, 0.02][i % 8]!;
    const common = {
      category: "weather" as const,
      question: `Will the high temperature in ${city} be ${low}-${low + 1}° on ${day}?`,
      rules: rules(city, low, day),
      settlementSource: "National Weather Service",
      closeTime: "2027-01-20T04:59:00Z",
      yesPrice,
      tickSize: 0.01 as const,
      openTime: "2026-11-01T15:00:00Z",
      volume: 1_000 + i,
      volume24h: 10 + (i % 50),
    };
    out.push({
      ...common,
      venue: "kalshi",
      key: `KXBENCHHIGH${city}-${day}-B${low}.5`,
      eventKey: `KXBENCHHIGH${city}-${day}`,
      eventTitle: `Highest temperature in ${city} on ${day}`,
      seriesKey: `KXBENCHHIGH${city}`,
    });
    out.push({
      ...common,
      venue: "polymarket",
      key: `bench-high-${city.toLowerCase()}-${day.toLowerCase()}-${low}`,
      eventKey: `bench-high-${city.toLowerCase()}-${day.toLowerCase()}`,
      eventTitle: `Highest temperature in ${city} on ${day}?`,
    });
  }
  return out;
}

/** Levels `[price, size]` from `top` down (bids) or up (asks), a cent apart. */
function ladder(top: number, direction: 1 | -1): Array<[number, number]> {
  return [0, 1, 2].map((i) => [Math.round((top + direction * i * 0.01) * 100) / 100, 100 * (i + 1)]);
}

/** The freshness job's books on Kalshi: YES bids from `bid` down, and NO bids making YES asks from 0.45 up. */
export function kalshiBook(bid: number) {
  return {
    yes: ladder(bid, -1),
    no: ladder(0.45, 1).map(([p, s]): [number, number] => [Math.round((1 - p) * 100) / 100, s]),
  };
}

/** The freshness job's books on Polymarket: YES bids from `bid` down, asks from 0.45 up. */
export function polymarketBook(bid: number) {
  return { bids: ladder(bid, -1), asks: ladder(0.45, 1) };
}
