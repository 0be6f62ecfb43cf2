/**
 * The events outbox. `record(trx, …)` writes an event in the caller's transaction, so the event
 * exists exactly when the state change it describes does; consumers (webhook dispatcher, stream,
 * audit) read events in order with `readAfter`.
 *
 * Ordering: SQLite serializes writers, so `seq` order is commit order. PostgreSQL hands out
 * sequence numbers before commit, so a consumer reading by `seq` could pass an event whose
 * transaction commits later. There each row also carries its transaction id, and `readAfter` only
 * returns rows of transactions older than every transaction still running
 * (`pg_snapshot_xmin`), ordered by (tx_id, seq): a row can never appear behind a cursor.
 */
import { Compile } from "typebox/compile";
import { type Clock, isoFromMs } from "../infra/clock";
import type { DbOrTrx, Dialect } from "../infra/db/store";
import { newId } from "../infra/ids";
import * as repo from "./repo";
import { EVENT_SCHEMAS, type EventPayload, type EventType } from "./types";

export interface RecordedEvent<T extends EventType = EventType> {
  seq: number;
  id: string;
  type: T;
  account_id: string | null;
  environment: string | null;
  data: EventPayload<T>;
  created_at: string;
  /** Position to resume after: pass to `readAfter`. */
  cursor: EventCursor;
}

/** An event with its payload as stored JSON text (consumers that only forward it skip the parse). */
export type RawRecordedEvent = Omit<RecordedEvent, "data"> & { dataJson: string };

/** Where a consumer has read up to. `{ tx: "0", seq: 0 }` is the beginning. */
export interface EventCursor {
  tx: string;
  seq: number;
}

export const START_CURSOR: EventCursor = { tx: "0", seq: 0 };

const validators = Object.fromEntries(
  Object.entries(EVENT_SCHEMAS).map(([type, schema]) => [type, Compile(schema)]),
) as Record<EventType, ReturnType<typeof Compile>>;

export class InvalidEventError extends Error {
  constructor(type: string, problems: string[]) {
    super(`event ${type} does not match its schema: ${problems.join("; ")}`);
    this.name = "InvalidEventError";
  }
}

export interface RecordInput<T extends EventType> {
  type: T;
  data: EventPayload<T>;
  /** The account whose event this is (webhooks deliver to its subscribers); null for global events. */
  accountId: string | null;
  environment?: "live" | "sandbox" | null;
}

export class Outbox {
  readonly #recorded = new Set<() => void>();

  constructor(
    private readonly dialect: Dialect,
    private readonly clock: Clock,
  ) {}

  /**
   * Calls `listener` when an account event was just written here (in a transaction that has not
   * committed yet): a hint for this instance's readers to look soon, never a delivery. Returns the
   * function that stops it.
   */
  onAccountEvent(listener: () => void): () => void {
    this.#recorded.add(listener);
    return () => this.#recorded.delete(listener);
  }

  #hint(inputs: ReadonlyArray<RecordInput<EventType>>): void {
    if (this.#recorded.size === 0 || !inputs.some((input) => input.accountId !== null)) return;
    for (const listener of this.#recorded) listener();
  }

  /** Writes the event in `trx`. Throws if the payload does not match its declared schema. */
  async record<T extends EventType>(
    trx: DbOrTrx,
    input: RecordInput<T>,
  ): Promise<{ id: string; seq: number }> {
    const parameters: unknown[] = [];
    const id = this.#bind(input, parameters);
    const row = await repo.insertEvent(trx, parameters);
    if (!row) throw new Error("insert into events returned no row");
    this.#hint([input]);
    return { id, seq: Number(row.seq) };
  }

  /**
   * Writes several events in `trx`, in the order given, with one statement (a placement that fills
   * at once records three or four). Every payload is checked before anything is written.
   */
  async recordMany(trx: DbOrTrx, inputs: ReadonlyArray<RecordInput<EventType>>): Promise<string[]> {
    const ids: string[] = [];
    const chunks: unknown[][] = [];
    for (let start = 0; start < inputs.length; start += repo.EVENTS_PER_STATEMENT) {
      const parameters: unknown[] = [];
      for (const input of inputs.slice(start, start + repo.EVENTS_PER_STATEMENT))
        ids.push(this.#bind(input, parameters));
      chunks.push(parameters);
    }
    for (const parameters of chunks) await repo.insertEvents(trx, parameters);
    this.#hint(inputs);
    return ids;
  }

  /** Checks an event against its schema and appends its row's values to `parameters`; its id. */
  #bind(input: RecordInput<EventType>, parameters: unknown[]): string {
    const validator = validators[input.type];
    if (!validator.Check(input.data)) {
      const problems = [...validator.Errors(input.data)].map((e) => `${e.instancePath || "/"} ${e.message}`);
      throw new InvalidEventError(input.type, problems);
    }
    const now = this.clock.now();
    const id = newId("evt", now);
    repo.bindEventRow(
      parameters,
      id,
      input.type,
      input.accountId,
      input.environment ?? null,
      JSON.stringify(input.data),
      isoFromMs(now),
    );
    return id;
  }

  /** Up to `limit` committed events after `cursor`, in recording order. */
  async readAfter(db: DbOrTrx, cursor: EventCursor, limit = 500): Promise<RecordedEvent[]> {
    const rows = await this.readRawAfter(db, cursor, limit);
    return rows.map(({ dataJson, ...rest }) => ({ ...rest, data: JSON.parse(dataJson) }));
  }

  /** As `readAfter`, with each payload left as the JSON text it was stored as (no parse). */
  async readRawAfter(db: DbOrTrx, cursor: EventCursor, limit = 500): Promise<RawRecordedEvent[]> {
    const rows = await repo.eventsAfter(db, this.dialect, cursor, limit);
    return rows.map((row) => {
      const tx = row.tx_text ?? "0";
      return {
        seq: Number(row.seq),
        id: row.id,
        type: row.type as EventType,
        account_id: row.account_id,
        environment: row.environment,
        dataJson: row.data,
        created_at: row.created_at,
        cursor: { tx, seq: Number(row.seq) },
      };
    });
  }
}
