/**
 * The store: one Kysely instance over SQLite (better-sqlite3, WAL) or PostgreSQL (pg), chosen by
 * DATABASE_URL. Repos only ever see `Kysely<Database>`; the rare dialect-specific query asks
 * `store.dialect`.
 */
import fs from "node:fs";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Transaction } from "kysely";
import pg from "pg";
import type { StoreConfig } from "../../config";
import { BACKSTOP_CHECKPOINT_PAGES, BackgroundCheckpointer, type CheckpointStats } from "./checkpointer";
import { migrations } from "./migrations/index";
import { registerSqliteConnection } from "./prepared";
import type { Database } from "./schema";

export type Dialect = "sqlite" | "postgres";
export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Repo functions accept either the store or a transaction. */
export type DbOrTrx = Kysely<Database> | Transaction<Database>;

// int8 (counts, sums, micro-unit money) arrives as text by default; our values stay below 2^53.
pg.types.setTypeParser(20, (value) => Number(value));

export interface Store {
  db: Db;
  dialect: Dialect;
  /** A trivial query; throws when the store is unreachable. */
  ping(): Promise<void>;
  /**
   * SQLite only: a number that changes whenever ANOTHER process (the CLI) commits to the file, so
   * in-memory caches can tell when to re-read. Undefined on PostgreSQL, where instances tell each
   * other through the bus instead.
   */
  externalChangeCounter(): number | undefined;
  /** SQLite file with background checkpoints (infra/db/checkpointer.ts): how they are going. */
  checkpointStats(): CheckpointStats | undefined;
  close(): Promise<void>;
  /** PostgreSQL: the schema the store was opened on, when not the default. */
  schema?: string;
}

export interface OpenStoreOptions {
  /** PostgreSQL schema to use (created if missing); tests give each suite its own. */
  schema?: string;
  /** Largest number of pooled PostgreSQL connections. */
  poolSize?: number;
  /**
   * SQLite file: checkpoint the WAL on a background thread (infra/db/checkpointer.ts). Default
   * true; a short-lived command has no use for the thread.
   */
  backgroundCheckpoints?: boolean;
}

/**
 * Kysely's SQLite driver prepares every query afresh; preparing costs more than running a small
 * statement. Statements are reusable, so keep them by SQL text (the SQL of a query shape is the same
 * every time; values are bound). Bounded: an unexpected variety of SQL just clears the cache.
 */
function cachePreparedStatements(database: BetterSqlite3.Database): void {
  const prepare = database.prepare.bind(database);
  const cache = new Map<string, BetterSqlite3.Statement>();
  database.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      statement = prepare(source);
      if (cache.size >= 2_000) cache.clear();
      cache.set(source, statement);
    }
    return statement;
  }) as typeof database.prepare;
}

export async function openStore(config: StoreConfig, options: OpenStoreOptions = {}): Promise<Store> {
  if (config.kind === "sqlite") {
    // In-memory and temporary ("") databases exist only for their own connection: no folder, and no
    // second connection (the checkpointer's) can see them.
    const onDisk = config.file !== ":memory:" && config.file !== "";
    if (onDisk) {
      fs.mkdirSync(path.dirname(config.file), { recursive: true, mode: 0o700 });
      // The file holds hashed keys and sealed secrets: create it readable by its owner only. SQLite
      // gives its -wal and -shm files the database file's permissions. ("a": never truncates.)
      fs.closeSync(fs.openSync(config.file, "a", 0o600));
    }
    const database = new BetterSqlite3(config.file);
    database.pragma("journal_mode = WAL");
    database.pragma("synchronous = NORMAL");
    database.pragma("foreign_keys = ON");
    // Temporary files (the sub-journal a savepoint keeps, sort spills, temp tables) in memory. A
    // savepoint copies each page it first changes into its sub-journal; on disk that is a write
    // system call per page, for a file that only a rollback-to-savepoint ever reads (crash recovery
    // never does: the WAL is the journal). The group-commit batcher may open one per unit.
    database.pragma("temp_store = MEMORY");
    // The CLI and the server may write the same file at once; wait instead of failing.
    database.pragma("busy_timeout = 5000");
    cachePreparedStatements(database);
    const checkpointer =
      onDisk && options.backgroundCheckpoints !== false ? new BackgroundCheckpointer(config.file) : undefined;
    if (checkpointer) database.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
    registerSqliteConnection(db, database);
    const dataVersion = database.prepare("PRAGMA data_version").pluck();
    // Reading data_version runs a statement: read it at most once a millisecond, so a burst of
    // requests shares one read, and a request sent after another process's commit (a CLI revoke
    // returns long after a millisecond) still sees it.
    let version: number | undefined;
    let readAt = Number.NEGATIVE_INFINITY;
    const externalChangeCounter = () => {
      const now = performance.now();
      if (now - readAt >= 1 && database.open) {
        version = dataVersion.get() as number;
        readAt = now;
      }
      return version;
    };
    return {
      db,
      dialect: "sqlite",
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      externalChangeCounter,
      checkpointStats: () => checkpointer?.stats(),
      close: async () => {
        // The checkpointer's connection closes first: the last one to close checkpoints and removes the WAL.
        await checkpointer?.stop();
        await db.destroy();
      },
    };
  }

  // A suite's own schema (tests), else DATABASE_SCHEMA.
  options = { ...options, ...(options.schema ? {} : config.schema ? { schema: config.schema } : {}) };
  if (options.schema) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.schema)) throw new Error(`bad schema name ${options.schema}`);
    const admin = new pg.Client({ connectionString: config.url });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists ${options.schema}`);
    } finally {
      await admin.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: config.url,
    max: options.poolSize ?? 10,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: "postgres",
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    externalChangeCounter: () => undefined,
    checkpointStats: () => undefined,
    close: () => db.destroy(),
    ...(options.schema ? { schema: options.schema } : {}),
  };
}

export interface MigrationOutcome {
  applied: string[];
}

/**
 * Brings the schema up to date, or with `to` up to and including that migration (tests of a
 * migration start from the schema before it). Safe to run from several processes at once (Kysely
 * takes a lock).
 */
export async function migrate(store: Store, options: { to?: string } = {}): Promise<MigrationOutcome> {
  const migrator = new Migrator({
    db: store.db,
    provider: { getMigrations: async () => migrations(store.dialect) },
    // Without it Kysely looks for its tables in every schema, and a suite's fresh schema can
    // skip creating its own lock table because another suite's schema has one.
    ...(store.schema ? { migrationTableSchema: store.schema } : {}),
  });
  for (let attempt = 1; ; attempt++) {
    try {
      const { error, results } = options.to
        ? await migrator.migrateTo(options.to)
        : await migrator.migrateToLatest();
      if (error) throw error instanceof Error ? error : new Error(String(error));
      return { applied: (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName) };
    } catch (error) {
      if (attempt >= 5 || !otherSchemaVanished(error, store.schema)) throw error;
    }
  }
}

/**
 * Kysely's migrator lists the tables of every schema to find its own, and PostgreSQL fails that
 * listing when another schema is dropped meanwhile (3F000, invalid_schema_name): test suites drop
 * their schemas while others migrate theirs. Such a failure wrote nothing: the run can be retried.
 */
function otherSchemaVanished(error: unknown, own: string | undefined): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === "3F000" && typeof message === "string" && (!own || !message.includes(`"${own}"`));
}

/** Drops a test schema made by `openStore(…, { schema })`. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await admin.end();
  }
}
