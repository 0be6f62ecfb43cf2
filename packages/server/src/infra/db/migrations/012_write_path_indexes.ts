import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../store";

/**
 * Two indexes that every order placement paid for and no query used:
 * - `events.id` was unique. Events are read by position (`seq`, and `tx_id` on PostgreSQL), never
 *   looked up by id; ids are ULIDs (infra/ids.ts), unique without the index. On SQLite every event
 *   written paid to maintain the index.
 * - `fills_account_idx` (account, environment, time): fills are read per order only; the sandbox
 *   reset, its one other user, now finds an owner's fills through their orders.
 *
 * SQLite cannot drop a column's UNIQUE constraint, so there the events table is rebuilt: copied
 * row for row (keeping every `seq`, and the AUTOINCREMENT high-water mark, so no consumer's cursor
 * ever sees a number twice), in one transaction, since SQLite's migrations run outside one.
 */
export function writePathIndexes(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect === "postgres") {
        await sql`alter table events drop constraint if exists events_id_key`.execute(db);
        await db.schema.dropIndex("fills_account_idx").ifExists().execute();
        return;
      }
      await db.transaction().execute(async (trx) => {
        const highWater = await sql<{
          seq: number;
        }>`select seq from sqlite_sequence where name = 'events'`.execute(trx);
        // 001's events table as SQLite has it, column for column, without UNIQUE on id (written
        // out again: a shipped migration is never edited or reused).
        await trx.schema
          .createTable("events_rebuilt")
          .addColumn("seq", "integer", (c) => c.primaryKey().autoIncrement())
          .addColumn("tx_id", "integer", (c) => c.notNull().defaultTo(0))
          .addColumn("id", "text", (c) => c.notNull())
          .addColumn("type", "text", (c) => c.notNull())
          .addColumn("account_id", "text")
          .addColumn("environment", "text")
          .addColumn("data", "text", (c) => c.notNull())
          .addColumn("created_at", "text", (c) => c.notNull())
          .execute();
        await sql`insert into events_rebuilt (seq, tx_id, id, type, account_id, environment, data, created_at)
          select seq, tx_id, id, type, account_id, environment, data, created_at from events order by seq`.execute(
          trx,
        );
        await trx.schema.dropTable("events").execute();
        await trx.schema.alterTable("events_rebuilt").renameTo("events").execute();
        const seq = highWater.rows[0]?.seq;
        if (seq !== undefined) {
          // The copy set the mark to the largest seq copied; events deleted at the end (none are
          // today) would otherwise have their numbers handed out again.
          await sql`update sqlite_sequence set seq = max(seq, ${seq}) where name = 'events'`.execute(trx);
          await sql`insert into sqlite_sequence (name, seq) select 'events', ${seq}
            where not exists (select 1 from sqlite_sequence where name = 'events')`.execute(trx);
        }
        await trx.schema.dropIndex("fills_account_idx").ifExists().execute();
      });
    },
  };
}
