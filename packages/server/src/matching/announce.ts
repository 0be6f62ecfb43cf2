/**
 * `market.matched` (spec 6.5): what a pair becoming verified announces. Both the matcher run and an
 * operator can verify a pair, and the event must be recorded in the transaction that did it, so
 * both call this with their transaction.
 */
import type { Outbox } from "../events/outbox";
import type { DbOrTrx } from "../infra/db/store";
import { MICROS } from "../venues/decimal";
import type { MarketInfo } from "./pairs";
import * as repo from "./repo";

export interface AnnounceDeps {
  outbox: Outbox;
  /** A market's current YES price in micro-units (PricesService.priceMicros); null when unknown. */
  priceMicros?: ((marketId: string) => number | null) | undefined;
}

/** Records `market.matched` for pairs that just became verified; global (no account). */
export async function recordMatched(
  deps: AnnounceDeps,
  trx: DbOrTrx,
  matchIds: readonly string[],
): Promise<void> {
  if (matchIds.length === 0) return;
  // Read together and written with one statement per hundred events: a first run over a large
  // catalog verifies thousands of pairs at once.
  const byId = new Map((await repo.findMatches(trx, matchIds)).map((row) => [row.id, row]));
  const rows = matchIds.flatMap((id) => byId.get(id) ?? []);
  const infos = await repo.marketInfos(
    trx,
    rows.flatMap((row) => [row.market_a, row.market_b]),
  );
  const events = rows.map((row) => {
    const priceA = currentPrice(deps, row.market_a, infos.get(row.market_a));
    const priceB = currentPrice(deps, row.market_b, infos.get(row.market_b));
    const platforms: Record<string, { event_id: string; title: string; yes_price: number }> = {};
    for (const [id, venue, price] of [
      [row.market_a, row.venue_a, priceA],
      [row.market_b, row.venue_b, priceB],
    ] as const) {
      const info = infos.get(id);
      platforms[venue] = {
        event_id: info?.event_id ?? id,
        title: info?.question ?? info?.title ?? id,
        yes_price: (price ?? 0) / MICROS,
      };
    }
    // B's price of A's YES leg: its YES for a same-polarity pair, its NO (1 - YES) for an inverted one.
    let spread = 0;
    let spreadPct = 0;
    if (priceA !== null && priceB !== null) {
      const comparable = row.polarity === "inverted" ? MICROS - priceB : priceB;
      const gap = Math.abs(priceA - comparable);
      const lower = Math.min(priceA, comparable);
      spread = gap / MICROS;
      spreadPct = lower > 0 ? Math.round((gap / lower) * 100 * 100) / 100 : 0;
    }
    return {
      type: "market.matched" as const,
      data: { match_id: row.id, confidence: row.confidence, platforms, spread, spread_pct: spreadPct },
      accountId: null,
      environment: null,
    };
  });
  await deps.outbox.recordMany(trx, events);
}

/** Current YES price (micro-units): the live one, else the catalog's mid or last trade. */
function currentPrice(deps: AnnounceDeps, marketId: string, info: MarketInfo | undefined): number | null {
  const live = deps.priceMicros?.(marketId) ?? null;
  if (live !== null) return live;
  if (!info) return null;
  if (info.best_bid !== null && info.best_ask !== null)
    return Math.round((info.best_bid + info.best_ask) / 2);
  return info.last_price;
}
