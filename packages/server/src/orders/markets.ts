/** What trading needs to know about a market, read from the catalog. */
import type { FeeSchedule } from "@crossbook/fees";
import { storedSchedule } from "../catalog/fees";
import * as catalogRepo from "../catalog/repo";
import type { DbOrTrx } from "../infra/db/store";
import type { MarketStatus, Resolution, VenueId } from "../venues/model";

export interface TradableMarket {
  id: string;
  venue: VenueId;
  /** The event's title when the market belongs to one, else the market's (position events carry it). */
  title: string;
  /** The market's own title: `market_title` in answers about orders on it. */
  marketTitle: string;
  status: MarketStatus;
  resolution: Resolution | null;
  tickSize: number;
  minSize: number;
  /** The market's fee schedule as the catalog knows it; null: not known (the venue's default is charged). */
  fees: FeeSchedule | null;
}

export async function tradableMarket(db: DbOrTrx, id: string): Promise<TradableMarket | undefined> {
  const row = await catalogRepo.tradingMarketRow(db, id);
  if (!row) return undefined;
  return {
    id: row.id,
    venue: row.venue as VenueId,
    title: row.event_title ?? row.title,
    marketTitle: row.title,
    status: row.status as MarketStatus,
    resolution: row.resolution as Resolution | null,
    tickSize: Number(row.tick_size),
    minSize: Number(row.min_size),
    fees: storedSchedule(row),
  };
}

/** Markets the catalog says are closed or resolved while someone still has orders or positions on them. */
export async function settledMarketsWithExposure(
  db: DbOrTrx,
): Promise<Array<{ id: string; status: MarketStatus; resolution: Resolution | null }>> {
  const rows = await catalogRepo.closedMarketsWithExposure(db);
  return rows.map((r) => ({
    id: r.id,
    status: r.status as MarketStatus,
    resolution: r.resolution as Resolution | null,
  }));
}
