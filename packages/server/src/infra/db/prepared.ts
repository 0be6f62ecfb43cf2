/**
 * Hot-path statements as fixed SQL text: written once with `?` placeholders (numbered `$1…` for
 * PostgreSQL), every value bound as a parameter. Building and compiling a query through the query
 * builder costs more than running a small statement on SQLite; a fixed text skips that. Only for
 * statements whose shape never changes; everything else uses the builder.
 *
 * Inside a transaction opened with `inTransaction` on SQLite, a Statement runs directly on the
 * connection that transaction holds (SQLite has exactly one, and the transaction keeps it until it
 * ends), skipping the query executor's per-statement promise chain: the same statement in the same
 * transaction, several microseconds cheaper. Anywhere else (the store itself, other transactions,
 * PostgreSQL) it goes through Kysely as any query does.
 */
import type BetterSqlite3 from "better-sqlite3";
import { CompiledQuery, type QueryResult, sql } from "kysely";
import type { Db, DbOrTrx, Dialect, Trx } from "./store";

const dialects = new WeakMap<object, Dialect>();
/** SQLite: the store's connection, by store, and by transaction while that transaction is open. */
const connections = new WeakMap<object, BetterSqlite3.Database>();

/** Called by the store: `db` runs on this SQLite connection. */
export function registerSqliteConnection(db: Db, connection: BetterSqlite3.Database): void {
  connections.set(db, connection);
  dialects.set(db, "sqlite");
}

/**
 * Runs `work` in a transaction of `db` (committed when it resolves, rolled back when it throws), in
 * which Statements run straight on SQLite's connection.
 */
export function inTransaction<T>(db: Db, work: (trx: Trx) => Promise<T>): Promise<T> {
  const connection = connections.get(db);
  if (!connection) return db.transaction().execute(work);
  return db.transaction().execute(async (trx) => {
    connections.set(trx, connection);
    dialects.set(trx, "sqlite");
    try {
      return await work(trx);
    } finally {
      // Nothing may reach the connection through this transaction once it is over.
      connections.delete(trx);
    }
  });
}

/** The dialect a store or transaction speaks (learnt once per Kysely instance). */
export function dialectOf(db: DbOrTrx): Dialect {
  let dialect = dialects.get(db);
  if (dialect === undefined) {
    dialect = sql`${0}`.compile(db).sql.includes("$1") ? "postgres" : "sqlite";
    dialects.set(db, dialect);
  }
  return dialect;
}

/** `?` placeholders numbered for PostgreSQL. The text must not contain a literal `?`. */
function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

export class Statement<Row = never> {
  readonly #sqlite: string;
  readonly #postgres: string;
  /** The statement prepared on a SQLite connection (there is one per store). */
  #prepared: { connection: BetterSqlite3.Database; statement: BetterSqlite3.Statement } | undefined;

  constructor(text: string) {
    this.#sqlite = text;
    this.#postgres = numbered(text);
  }

  run(db: DbOrTrx, parameters: readonly unknown[]): Promise<QueryResult<Row>> {
    const statement = this.#direct(db);
    if (statement) {
      try {
        if (statement.reader) return Promise.resolve({ rows: statement.all(parameters) as Row[] });
        const { changes } = statement.run(parameters);
        return Promise.resolve({ numAffectedRows: BigInt(changes), rows: [] });
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const text = dialectOf(db) === "postgres" ? this.#postgres : this.#sqlite;
    return db.executeQuery(CompiledQuery.raw(text, parameters as unknown[])) as Promise<QueryResult<Row>>;
  }

  /**
   * The statement prepared on SQLite's connection when `db` is a transaction opened with
   * `inTransaction` there (run it directly); undefined anywhere else (go through Kysely).
   */
  #direct(db: DbOrTrx): BetterSqlite3.Statement | undefined {
    const connection = db.isTransaction ? connections.get(db) : undefined;
    if (!connection) return undefined;
    if (this.#prepared?.connection !== connection) {
      this.#prepared = { connection, statement: connection.prepare(this.#sqlite) };
    }
    return this.#prepared.statement;
  }

  /** Rows changed (insert, update, delete without RETURNING). */
  async changes(db: DbOrTrx, parameters: readonly unknown[]): Promise<number> {
    const statement = this.#direct(db);
    if (statement && !statement.reader) return statement.run(parameters).changes;
    return Number((await this.run(db, parameters)).numAffectedRows ?? 0);
  }

  async first(db: DbOrTrx, parameters: readonly unknown[]): Promise<Row | undefined> {
    const statement = this.#direct(db);
    // A reader's first row without building the array of all of them.
    if (statement?.reader) return statement.get(parameters) as Row | undefined;
    return (await this.run(db, parameters)).rows[0];
  }
}

/**
 * A multi-row statement: `head` + `template` repeated per row + `tail`, one Statement per row count
 * (kept, since the counts a caller uses are few).
 */
export class MultiRowStatement<Row = never> {
  readonly #byCount = new Map<number, Statement<Row>>();

  constructor(
    private readonly head: string,
    private readonly template: string,
    private readonly tail = "",
    private readonly maxKept = 64,
  ) {}

  /**
   * Runs the statement over `rows`, at most `maxRows` per statement (keeping the bound parameters
   * far below SQLite's and PostgreSQL's limits): `bind` appends one row's values, after `leading`
   * (values that come before the rows in the text). Returns the rows changed.
   */
  async runInChunks<T>(
    db: DbOrTrx,
    rows: readonly T[],
    bind: (row: T, parameters: unknown[]) => void,
    options: { maxRows: number; leading?: readonly unknown[] },
  ): Promise<number> {
    let changed = 0;
    for (let start = 0; start < rows.length; start += options.maxRows) {
      const end = Math.min(rows.length, start + options.maxRows);
      const parameters: unknown[] = options.leading ? [...options.leading] : [];
      for (let i = start; i < end; i++) bind(rows[i]!, parameters);
      changed += await this.forRows(end - start).changes(db, parameters);
    }
    return changed;
  }

  forRows(rows: number): Statement<Row> {
    let statement = this.#byCount.get(rows);
    if (!statement) {
      statement = new Statement<Row>(
        `${this.head}${Array.from({ length: rows }, () => this.template).join(", ")}${this.tail}`,
      );
      if (this.#byCount.size >= this.maxKept) this.#byCount.clear();
      this.#byCount.set(rows, statement);
    }
    return statement;
  }
}
