/**
 * Prepared statements: a query written with the query builder, compiled once per dialect and then
 * run many times with new values.
 *
 * `prepare((db, p: P) => query)` takes a function that builds the query from its parameters `p`, a
 * record or a tuple. The function is called once per dialect, on the first run there, with `p`
 * standing in for every run's values: `p.x`, `p[0]` or a name destructured from `p` is a
 * placeholder, which the query builder binds as it would any value. The compiled query's
 * parameters then say, in the SQL's own order, which of a run's values goes where (one may go to
 * several places); parameters that are not placeholders are constants of the query, bound as they
 * are. So the query builder writes the SQL text and orders the parameters, and the types of `p`
 * are checked against the columns they meet. As the function runs once, the query's shape must
 * not depend on the values (there are none then); a tuple is destructured element by element (its
 * length is unknown, so no `...rest`). `prepareRows` does the same for statements over many rows
 * (a multi-row insert), one compiled query per row count, and `prepareList` for statements over a
 * list of plain values (the keys of an `update … where id in (…)`).
 *
 * Inside a transaction opened with `inTransaction` on SQLite, a statement runs directly on the
 * connection that transaction holds (SQLite has exactly one, and the transaction keeps it until it
 * ends), as a better-sqlite3 statement prepared once, skipping the query executor's per-statement
 * promise chain. Anywhere else (the store itself, other transactions, PostgreSQL) the compiled query
 * goes through Kysely's executor as any query does: neither builds nor compiles it again.
 */
import type BetterSqlite3 from "better-sqlite3";
import {
  type Compilable,
  type CompiledQuery,
  createQueryId,
  type DeleteResult,
  type InsertResult,
  type Kysely,
  type QueryResult,
  type RawBuilder,
  sql,
  type UpdateResult,
} from "kysely";
import type { Database } from "./schema";
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
 * which prepared statements run straight on SQLite's connection.
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

// --- placeholders --------------------------------------------------------------------------------

/** Where a placeholder's value comes from: `SHARED` (the parameters object) or a row's index. */
const SHARED = -1;

/** More parameters than any statement binds (a guard for destructuring, see below). */
const MAX_PARAMETERS = 10_000;

/** The key of a placeholder standing for a whole row: a plain value of a list (see prepareList). */
const WHOLE_ROW: unique symbol = Symbol("whole row");

/** Stands for one run-time value while the query is built and compiled. */
class Placeholder {
  constructor(
    readonly source: number,
    readonly key: string | number | typeof WHOLE_ROW,
  ) {
    Object.freeze(this);
  }

  // Using a placeholder as a value in JavaScript (arithmetic, a template string) would build a
  // query that is not the one meant: say so while building, not with wrong SQL.
  [Symbol.toPrimitive](): never {
    throw new Error(`placeholder ${String(this.key)} used as a value while building a prepared statement`);
  }
}

/** A stand-in for a parameters object or tuple: any property read is a placeholder. */
function placeholders(source: number): object {
  const made = new Map<string, Placeholder>();
  const at = (key: string): Placeholder => {
    let placeholder = made.get(key);
    if (!placeholder) {
      placeholder = new Placeholder(source, /^(0|[1-9]\d*)$/.test(key) ? Number(key) : key);
      made.set(key, placeholder);
    }
    return placeholder;
  };
  return new Proxy(
    {},
    {
      get(_target, key) {
        // Destructuring a tuple (`[a, b]`) iterates it. Its length is unknown here, so a rest
        // element (`[a, ...rest]`) would never end: stop it with an error that says why.
        if (key === Symbol.iterator) {
          return function* () {
            for (let i = 0; i < MAX_PARAMETERS; i++) yield at(String(i));
            throw new Error("prepared statement parameters: name each element, no `...rest` pattern");
          };
        }
        return typeof key === "string" ? at(key) : undefined;
      },
    },
  );
}

/** The properties `keys` of `row`, in that order (of placeholders, to insert a row's columns). */
export function pick<T extends object, K extends keyof T>(row: T, keys: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const key of keys) picked[key] = row[key];
  return picked;
}

/**
 * Checks at compile time that `Listed` names every key of `Row`: `everyColumn<Row, typeof LIST>(true)`
 * is a type error naming the missing ones otherwise.
 */
export function everyColumn<Row, Listed extends ReadonlyArray<keyof Row>>(
  _complete: [Exclude<keyof Row, Listed[number]>] extends [never]
    ? true
    : { missing: Exclude<keyof Row, Listed[number]> },
): void {}

// --- compiled statements -------------------------------------------------------------------------

/** What a statement's result rows are: none for an insert, update or delete without RETURNING. */
export type RowOf<R> = R extends InsertResult | UpdateResult | DeleteResult ? never : R;

type Query<R> = Compilable<R> | RawBuilder<R>;

function compileQuery(query: Query<unknown>, db: DbOrTrx): CompiledQuery {
  // A `sql` template compiles against an executor; a query builder already has its own.
  return "isRawBuilder" in query ? query.compile(db) : query.compile();
}

/** Makes a run's values, in the SQL's order, from its parameters (`shared`) and rows. */
type Binder = (shared: unknown, rows: readonly unknown[] | undefined, first: number) => readonly unknown[];

/**
 * A binder for one compiled query, written out as a function of its own: each value is read with
 * a property access of its own, which V8 caches for the one shape that statement's parameters
 * have. A generic loop reading `values[key]` for every statement goes through V8's slow
 * (megamorphic) lookups instead. Keys are emitted as JSON string literals; constants are passed in.
 */
function binderFor(parameters: readonly unknown[]): Binder {
  const rowsUsed = new Set<number>();
  const constants: unknown[] = [];
  const values = parameters.map((parameter, i) => {
    if (!(parameter instanceof Placeholder)) {
      constants[i] = parameter;
      return `constants[${i}]`;
    }
    if (parameter.key === WHOLE_ROW) {
      rowsUsed.add(parameter.source);
      return `row${parameter.source}`;
    }
    const key = typeof parameter.key === "number" ? String(parameter.key) : JSON.stringify(parameter.key);
    if (parameter.source === SHARED) return `shared[${key}]`;
    rowsUsed.add(parameter.source);
    return `row${parameter.source}[${key}]`;
  });
  const rows = [...rowsUsed].map((row) => `const row${row} = rows[first + ${row}];`).join("\n");
  const make = new Function(
    "constants",
    `return (shared, rows, first) => {\n${rows}\nreturn [${values.join(", ")}];\n};`,
  );
  return make(constants) as Binder;
}

/** A query compiled for one dialect, with the binder of its parameters. */
class Compiled {
  readonly sql: string;
  readonly query: CompiledQuery["query"];
  readonly #count: number;
  /** The run's values are the parameters as they are (a tuple in the SQL's order, no constants). */
  readonly #asGiven: boolean;
  readonly #parameters: readonly unknown[];
  /** Made on the first run that needs it (a statement whose values are passed as given never does). */
  #binder: Binder | undefined;
  /** SQLite: the statement prepared on the connection it last ran on (there is one per store). */
  #prepared: { connection: BetterSqlite3.Database; statement: BetterSqlite3.Statement } | undefined;

  constructor(compiled: CompiledQuery) {
    this.sql = compiled.sql;
    this.query = compiled.query;
    this.#count = compiled.parameters.length;
    this.#asGiven = compiled.parameters.every(
      (parameter, i) =>
        parameter instanceof Placeholder && parameter.source === SHARED && parameter.key === i,
    );
    this.#parameters = compiled.parameters;
  }

  /** The values of a run, in the SQL's order: from `shared`, or from `rows` starting at `first`. */
  bind(shared: unknown, rows?: readonly unknown[], first = 0): readonly unknown[] {
    if (this.#asGiven && Array.isArray(shared) && shared.length === this.#count) return shared;
    this.#binder ??= binderFor(this.#parameters);
    return this.#binder(shared, rows, first);
  }

  /** The statement prepared on `connection`. */
  on(connection: BetterSqlite3.Database): BetterSqlite3.Statement {
    if (this.#prepared?.connection !== connection) {
      this.#prepared = { connection, statement: connection.prepare(this.sql) };
    }
    return this.#prepared.statement;
  }

  execute<Row>(db: DbOrTrx, values: readonly unknown[]): Promise<QueryResult<Row>> {
    return db.executeQuery<Row>({
      query: this.query,
      queryId: createQueryId(),
      sql: this.sql,
      parameters: values,
    });
  }
}

/** The SQLite connection to run on directly: only in a transaction opened with `inTransaction`. */
function directConnection(db: DbOrTrx): BetterSqlite3.Database | undefined {
  return db.isTransaction ? connections.get(db) : undefined;
}

/** Compiles `build`'s query for a dialect on first use there. */
class PerDialect {
  #sqlite: Compiled | undefined;
  #postgres: Compiled | undefined;

  constructor(private readonly build: (db: Kysely<Database>) => Query<unknown>) {}

  for(db: DbOrTrx, dialect: Dialect): Compiled {
    if (dialect === "sqlite") {
      this.#sqlite ??= new Compiled(compileQuery(this.build(db), db));
      return this.#sqlite;
    }
    this.#postgres ??= new Compiled(compileQuery(this.build(db), db));
    return this.#postgres;
  }
}

export class PreparedStatement<P, Row> {
  readonly #compiled: PerDialect;

  constructor(build: (db: Kysely<Database>, parameters: P) => Query<unknown>) {
    this.#compiled = new PerDialect((db) => build(db, placeholders(SHARED) as P));
  }

  /** The SQL text on a dialect (tests, plans). */
  sqlFor(db: DbOrTrx): string {
    return this.#compiled.for(db, dialectOf(db)).sql;
  }

  run(db: DbOrTrx, parameters: P): Promise<QueryResult<Row>> {
    try {
      const connection = directConnection(db);
      if (connection)
        return Promise.resolve(runDirect<Row>(this.#compiled.for(db, "sqlite"), connection, parameters));
      const compiled = this.#compiled.for(db, dialectOf(db));
      return compiled.execute<Row>(db, compiled.bind(parameters));
    } catch (error) {
      // Compiling (on a first run) or SQLite's direct run threw: the caller awaits a rejection.
      return Promise.reject(error);
    }
  }

  /** Rows changed (insert, update, delete without RETURNING). */
  async changes(db: DbOrTrx, parameters: P): Promise<number> {
    const connection = directConnection(db);
    if (connection) {
      const compiled = this.#compiled.for(db, "sqlite");
      const statement = compiled.on(connection);
      if (!statement.reader) return statement.run(compiled.bind(parameters)).changes;
    }
    return Number((await this.run(db, parameters)).numAffectedRows ?? 0);
  }

  async first(db: DbOrTrx, parameters: P): Promise<Row | undefined> {
    const connection = directConnection(db);
    if (connection) {
      const compiled = this.#compiled.for(db, "sqlite");
      const statement = compiled.on(connection);
      // A reader's first row without building the array of all of them.
      if (statement.reader) return statement.get(compiled.bind(parameters)) as Row | undefined;
    }
    return (await this.run(db, parameters)).rows[0];
  }
}

function runDirect<Row>(
  compiled: Compiled,
  connection: BetterSqlite3.Database,
  parameters: unknown,
  rows?: readonly unknown[],
  first?: number,
): QueryResult<Row> {
  const statement = compiled.on(connection);
  const values = compiled.bind(parameters, rows, first);
  if (statement.reader) return { rows: statement.all(values) as Row[] };
  return { numAffectedRows: BigInt(statement.run(values).changes), rows: [] };
}

/**
 * A prepared statement: `build` makes the query from placeholders for `P` (a record or a tuple) and
 * is called once per dialect. Runs take `P`'s values.
 */
export function prepare<P extends object = [], R = unknown>(
  build: (db: Kysely<Database>, parameters: P) => Query<R>,
): PreparedStatement<P, RowOf<R>> {
  return new PreparedStatement<P, RowOf<R>>(build);
}

// --- many rows per statement ---------------------------------------------------------------------

/**
 * A statement over many rows (a multi-row insert, an update of a list of keys): `build` makes the
 * query for a given number of rows, each row's values from placeholders for `Row`, and values that
 * are the same for every row from placeholders for `Shared`. One compiled statement per row count
 * (kept, since the counts a caller uses are few).
 */
export class PreparedRows<Row, Shared> {
  readonly #byCount = new Map<number, PerDialect>();

  constructor(
    private readonly build: (db: Kysely<Database>, rows: readonly Row[], shared: Shared) => Query<unknown>,
    private readonly maxKept = 64,
    /** Each row is a plain value (see prepareList), not a record or a tuple of them. */
    private readonly plainRows = false,
  ) {}

  #forRows(count: number): PerDialect {
    let statement = this.#byCount.get(count);
    if (!statement) {
      statement = new PerDialect((db) =>
        this.build(
          db,
          Array.from(
            { length: count },
            (_, i) => (this.plainRows ? new Placeholder(i, WHOLE_ROW) : placeholders(i)) as Row,
          ),
          placeholders(SHARED) as Shared,
        ),
      );
      if (this.#byCount.size >= this.maxKept) this.#byCount.clear();
      this.#byCount.set(count, statement);
    }
    return statement;
  }

  /** The SQL text for `count` rows on a dialect (tests). */
  sqlFor(db: DbOrTrx, count: number): string {
    return this.#forRows(count).for(db, dialectOf(db)).sql;
  }

  /** Runs the statement over `rows[first…first+count)` in one statement. */
  run(db: DbOrTrx, rows: readonly Row[], shared: Shared, first = 0, count = rows.length - first) {
    try {
      const statements = this.#forRows(count);
      const connection = directConnection(db);
      if (connection) {
        return Promise.resolve(
          runDirect<never>(statements.for(db, "sqlite"), connection, shared, rows, first),
        );
      }
      const compiled = statements.for(db, dialectOf(db));
      return compiled.execute<never>(db, compiled.bind(shared, rows, first));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Runs the statement over `rows`, at most `maxRows` per statement (keeping the bound parameters
   * far below SQLite's and PostgreSQL's limits). Returns the rows changed.
   */
  async runInChunks(
    db: DbOrTrx,
    rows: readonly Row[],
    shared: Shared,
    options: { maxRows: number },
  ): Promise<number> {
    let changed = 0;
    for (let start = 0; start < rows.length; start += options.maxRows) {
      const count = Math.min(rows.length - start, options.maxRows);
      changed += Number((await this.run(db, rows, shared, start, count)).numAffectedRows ?? 0);
    }
    return changed;
  }
}

/** A statement over many rows; see PreparedRows. */
export function prepareRows<Row extends object, Shared extends object = []>(
  build: (db: Kysely<Database>, rows: readonly Row[], shared: Shared) => Query<unknown>,
  options: { maxKept?: number } = {},
): PreparedRows<Row, Shared> {
  return new PreparedRows(build, options.maxKept);
}

/**
 * A statement over a list of plain values (numbers or strings), such as the keys of an
 * `update … where id in (…)`: as `prepareRows`, each value being a row of its own, so a caller
 * passes its list of keys as it is.
 */
export function prepareList<Value extends number | string, Shared extends object = []>(
  build: (db: Kysely<Database>, values: readonly Value[], shared: Shared) => Query<unknown>,
  options: { maxKept?: number } = {},
): PreparedRows<Value, Shared> {
  return new PreparedRows(build, options.maxKept, true);
}
