/**
 * SQL for candles and the record of venue history fetched (`candle_backfill_ranges`). Timestamps are
 * ISO 8601 UTC text (which sorts), prices and volumes integer micro-units; the primary keys
 * (market_id, interval, start) and (market_id, interval, covered_from) serve every query.
 */
import { type Selectable, sql } from "kysely";
import type { CandleBackfillRangesTable, CandlesTable } from "../infra/db/schema";
import type { DbOrTrx } from "../infra/db/store";

export type CandleRow = Selectable<CandlesTable>;
export type BackfillRangeRow = Selectable<CandleBackfillRangesTable>;

/** Rows per statement: 10 parameters each stays far below both stores' parameter limits. */
const CHUNK = 500;

const stored = (column: string) => sql.ref(`candles.${column}`);
const incoming = (column: string) => sql.ref(`excluded.${column}`);

export function candleKey(row: Pick<CandleRow, "market_id" | "interval" | "start">): string {
  return `${row.market_id}\u0000${row.interval}\u0000${row.start}`;
}

/**
 * Upserts candles, merging each with the stored one by the rule of `mergeCandles` in candles.ts:
 * two views that do not overlap in time (the stored part of a period from before a restart, or
 * venue history from before live building began) add up; overlapping views are of the same feed,
 * so the wider one wins and writing the same candle twice changes nothing. Returns the merged rows,
 * keyed by `candleKey`. Keys must be unique within one call.
 */
export async function mergeCandles(db: DbOrTrx, rows: readonly CandleRow[]): Promise<Map<string, CandleRow>> {
  const merged = new Map<string, CandleRow>();
  for (let i = 0; i < rows.length; i += CHUNK) {
    const result = await db
      .insertInto("candles")
      .values(rows.slice(i, i + CHUNK))
      .onConflict((oc) =>
        oc.columns(["market_id", "interval", "start"]).doUpdateSet({
          open: sql<number>`case when ${incoming("first_at")} < ${stored("first_at")} then ${incoming("open")} else ${stored("open")} end`,
          high: sql<number>`case when ${incoming("high")} > ${stored("high")} then ${incoming("high")} else ${stored("high")} end`,
          low: sql<number>`case when ${incoming("low")} < ${stored("low")} then ${incoming("low")} else ${stored("low")} end`,
          close: sql<number>`case when ${incoming("last_at")} >= ${stored("last_at")} then ${incoming("close")} else ${stored("close")} end`,
          volume: sql<number>`case when ${stored("last_at")} < ${incoming("first_at")} or ${incoming("last_at")} < ${stored("first_at")} then ${stored("volume")} + ${incoming("volume")} when ${incoming("volume")} > ${stored("volume")} then ${incoming("volume")} else ${stored("volume")} end`,
          first_at: sql<string>`case when ${incoming("first_at")} < ${stored("first_at")} then ${incoming("first_at")} else ${stored("first_at")} end`,
          last_at: sql<string>`case when ${incoming("last_at")} > ${stored("last_at")} then ${incoming("last_at")} else ${stored("last_at")} end`,
        }),
      )
      .returningAll()
      .execute();
    for (const row of result) merged.set(candleKey(row), row);
  }
  return merged;
}

/** Inserts candles where none is stored yet; stored ones (built live) are left as they are. */
export async function insertMissingCandles(db: DbOrTrx, rows: readonly CandleRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await db
      .insertInto("candles")
      .values(rows.slice(i, i + CHUNK))
      .onConflict((oc) => oc.columns(["market_id", "interval", "start"]).doNothing())
      .execute();
  }
}

/** Candles of one market and interval with `from <= start < to`, oldest first. */
export async function listCandles(
  db: DbOrTrx,
  marketId: string,
  interval: string,
  from: string,
  to: string,
): Promise<CandleRow[]> {
  return db
    .selectFrom("candles")
    .selectAll()
    .where("market_id", "=", marketId)
    .where("interval", "=", interval)
    .where("start", ">=", from)
    .where("start", "<", to)
    .orderBy("start", "asc")
    .execute();
}

/** The latest candle that starts before `before`. */
export async function lastCandleBefore(
  db: DbOrTrx,
  marketId: string,
  interval: string,
  before: string,
): Promise<CandleRow | undefined> {
  return db
    .selectFrom("candles")
    .selectAll()
    .where("market_id", "=", marketId)
    .where("interval", "=", interval)
    .where("start", "<", before)
    .orderBy("start", "desc")
    .limit(1)
    .executeTakeFirst();
}

/** Start of the market's first stored candle of this interval with `from <= start < to`. */
export async function firstCandleStart(
  db: DbOrTrx,
  marketId: string,
  interval: string,
  from: string,
  to: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom("candles")
    .select("start")
    .where("market_id", "=", marketId)
    .where("interval", "=", interval)
    .where("start", ">=", from)
    .where("start", "<", to)
    .orderBy("start", "asc")
    .limit(1)
    .executeTakeFirst();
  return row?.start;
}

/** Every range of venue history fetched for a market and source interval, oldest first. */
export async function listBackfillRanges(
  db: DbOrTrx,
  marketId: string,
  interval: string,
): Promise<BackfillRangeRow[]> {
  return db
    .selectFrom("candle_backfill_ranges")
    .selectAll()
    .where("market_id", "=", marketId)
    .where("interval", "=", interval)
    .orderBy("covered_from", "asc")
    .execute();
}

/**
 * Records a fetched range, merged with the ranges of the same resolution it overlaps or touches, so
 * a market keeps a handful of rows however it is paged through. Run it in a transaction.
 */
export async function saveBackfillRange(db: DbOrTrx, row: BackfillRangeRow): Promise<void> {
  let query = db
    .selectFrom("candle_backfill_ranges")
    .selectAll()
    .where("market_id", "=", row.market_id)
    .where("interval", "=", row.interval)
    .where("covered_from", "<=", row.covered_to)
    .where("covered_to", ">=", row.covered_from);
  query =
    row.resolution_minutes === null
      ? query.where("resolution_minutes", "is", null)
      : query.where("resolution_minutes", "=", row.resolution_minutes);
  const touching = await query.execute();
  let from = row.covered_from;
  let to = row.covered_to;
  for (const r of touching) {
    if (r.covered_from < from) from = r.covered_from;
    if (r.covered_to > to) to = r.covered_to;
  }
  if (touching.length > 0) {
    await db
      .deleteFrom("candle_backfill_ranges")
      .where("market_id", "=", row.market_id)
      .where("interval", "=", row.interval)
      .where(
        "covered_from",
        "in",
        touching.map((r) => r.covered_from),
      )
      .execute();
  }
  const merged = { ...row, covered_from: from, covered_to: to };
  await db
    .insertInto("candle_backfill_ranges")
    .values(merged)
    .onConflict((oc) =>
      oc.columns(["market_id", "interval", "covered_from"]).doUpdateSet({
        covered_to: merged.covered_to,
        resolution_minutes: merged.resolution_minutes,
        fetched_at: merged.fetched_at,
      }),
    )
    .execute();
}
