/**
 * One connection's account events (the account stream, and the private actions on the price
 * stream): what it asked for (`resume` after a cursor, `subscribe` to types), and getting every
 * such event of its account and environment to it in the outbox's order, none twice, none missed.
 *
 * How a resume switches from the store to live without a gap or a duplicate: the feed first listens
 * to the instance's tail (events/live-tail.ts), whose `listen` resolves once everything the tail
 * will not hand on is committed; then it replays from the store after the cursor, page by page,
 * until a page comes back short. Live events that arrive meanwhile wait in `pending`; when the
 * replay ends, those past the last event replayed follow it. Every event carries its place (tx,
 * seq), so "past" is exact on both stores.
 *
 * Events are never conflated or dropped. A client that does not read (its socket holds more than the
 * hard bound, or the replay waits on it longer than the stall timeout, or `pending` outgrows its
 * bound) is closed with 4009 SLOW_CONSUMER after what was already written, naming the last event
 * sent; it reconnects and resumes from the last event it received.
 */
import type { Owner } from "../access/owner";
import type { AccountEvents } from "../events/account-events";
import type { AccountEventTail, TailedEvent, TailListener } from "../events/live-tail";
import { START_CURSOR } from "../events/outbox";
import { comparePositions, type EventPosition } from "../events/position";
import type { AccountEventRow } from "../events/repo";
import { AppError } from "../http/errors";
import type { Logger } from "../infra/log";
import { textFrame } from "./frames";
import { CLOSE } from "./protocol";
import { ALL_EVENT_TYPES } from "./schemas";

/** What the feed needs of its connection (a stream session; tests pass a fake). */
export interface FeedConnection {
  readonly closed: boolean;
  /** Bytes written and not yet taken by the peer's socket. */
  buffered(): number;
  /** Complete frames, written in order with everything else on the connection. */
  write(frames: Buffer): void;
  /** An ack or error message. */
  control(message: object): void;
  /** Resolves when the socket drained, or the connection closed. */
  drained(): Promise<void>;
  close(code: number, reason: string): void;
}

export interface AccountFeedLimits {
  /** The replay waits for the socket to drain past this many buffered bytes. */
  softBufferBytes: number;
  /** Live events finding more than this buffered close the connection (4009). */
  hardBufferBytes: number;
  /** How long the replay waits for a socket to drain before closing it (4009). */
  stallTimeoutMs: number;
  /** Live events held while a replay runs; past it the connection is closed (4009). */
  maxPending: number;
  /** Events read per replay page. */
  replayPage: number;
}

export const DEFAULT_FEED_LIMITS: Omit<
  AccountFeedLimits,
  "softBufferBytes" | "hardBufferBytes" | "stallTimeoutMs"
> = { maxPending: 10_000, replayPage: 500 };

export interface AccountFeedDeps {
  tail: AccountEventTail;
  events: AccountEvents;
  log: Logger;
  limits: Partial<Pick<AccountFeedLimits, "maxPending" | "replayPage">>;
}

/** The frame of an event as the stream sends it (declared in schemas.ts: AccountEventMessageSchema). */
export function eventFrame(row: AccountEventRow): Buffer {
  return textFrame(
    `{"type":"event","seq":${row.seq},"id":${JSON.stringify(row.id)},"event_type":${JSON.stringify(row.type)},` +
      `"timestamp":${JSON.stringify(row.created_at)},"data":${row.data}}`,
  );
}

type Mode = "idle" | "replaying" | "live";

export class AccountFeed implements TailListener {
  #mode: Mode = "idle";
  /** Types sent; null: every type. */
  #types: Set<string> | null = null;
  /** The place of the last event sent, or of the cursor the flow started after (set before it is live). */
  #last: EventPosition = START_CURSOR;
  /** The seq of the last event sent, for the slow-consumer close reason. */
  #lastSentSeq: number | null = null;
  /** Live events that arrived during a replay. */
  #pending: TailedEvent[] = [];
  /** Bumped by every resume and by close: a replay of an earlier generation stops. */
  #generation = 0;
  #unlisten: (() => void) | null = null;
  #listening: Promise<void> | null = null;
  #closed = false;

  constructor(
    private readonly deps: AccountFeedDeps,
    private readonly limits: AccountFeedLimits,
    readonly owner: Owner,
    private readonly connection: FeedConnection,
  ) {}

  /**
   * `resume` after a cursor (an event's seq or id, "0" for the oldest kept): acked with `resumed`,
   * then the replay runs on its own (the connection's next messages are not held up by it) and is
   * followed by `caught_up` and the live events. A cursor older than the retention is answered with
   * a CURSOR_EXPIRED error and nothing flows until the next resume.
   */
  async resume(after: string, types: readonly string[] | undefined): Promise<void> {
    const generation = ++this.#generation;
    let cursor: EventPosition;
    try {
      cursor = await this.deps.events.position(this.owner, after, "after");
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      if (generation === this.#generation) this.#error(error);
      return;
    }
    if (types) this.#setTypes(types);
    await this.#listen();
    if (this.#stale(generation)) return;
    this.connection.control({ type: "resumed", after: cursor.seq });
    this.#startReplay(generation, cursor, true);
  }

  /** Replays after `cursor` on its own, then goes live (`announce`: say `caught_up`). */
  #startReplay(generation: number, cursor: EventPosition, announce: boolean): void {
    this.#mode = "replaying";
    this.#pending = [];
    this.#last = cursor;
    void this.#replay(generation, announce).catch((error: unknown) => {
      if (this.#stale(generation)) return;
      this.deps.log.warn({ err: error }, "account stream replay failed");
      this.connection.control({
        type: "error",
        code: "INTERNAL_ERROR",
        message: "could not read your events; resume again",
      });
      this.#mode = "idle";
    });
  }

  /**
   * Which types are sent from now on. First thing on a connection it also starts the flow "from
   * now": after the account's last event, whose seq the ack carries as `after` (so a client that
   * drops before its first event can resume from there and miss nothing); the switch to live is
   * the resume's, without `resumed` and `caught_up`.
   */
  async subscribe(types: readonly string[]): Promise<void> {
    this.#setTypes(types);
    if (this.#mode !== "idle") {
      this.connection.control({ type: "subscribed", types });
      return;
    }
    const generation = ++this.#generation;
    const head = await this.deps.events.latest(this.owner);
    await this.#listen();
    if (this.#stale(generation)) return;
    this.#startReplay(generation, head, false);
    this.connection.control({ type: "subscribed", types, after: head.seq });
  }

  /** From the tail: this owner's live events, in order. */
  deliver(events: readonly TailedEvent[]): void {
    if (this.#closed) return;
    if (this.#mode === "replaying") {
      for (const event of events) this.#pending.push(event);
      if (this.#pending.length > this.limits.maxPending) this.#slow();
      return;
    }
    if (this.#mode === "live") this.#sendLive(events);
  }

  close(): void {
    this.#closed = true;
    this.#generation++;
    this.#pending = [];
    this.#unlisten?.();
    this.#unlisten = null;
  }

  #stale(generation: number): boolean {
    return this.#closed || this.connection.closed || generation !== this.#generation;
  }

  #setTypes(types: readonly string[]): void {
    this.#types = types.includes(ALL_EVENT_TYPES) ? null : new Set(types);
  }

  #wanted(type: string): boolean {
    return this.#types === null || this.#types.has(type);
  }

  #listen(): Promise<void> {
    this.#listening ??= this.deps.tail.listen(this.owner, this).then(
      (stop) => {
        if (this.#closed) stop();
        else this.#unlisten = stop;
      },
      (error: unknown) => {
        this.#listening = null; // the next action tries again
        throw error;
      },
    );
    return this.#listening;
  }

  async #replay(generation: number, announce: boolean): Promise<void> {
    const page = this.limits.replayPage;
    let replayed = 0;
    for (;;) {
      if (this.connection.buffered() > this.limits.softBufferBytes && !(await this.#drained())) return;
      if (this.#stale(generation)) return;
      const types = this.#types === null ? [] : [...this.#types];
      const rows = await this.deps.events.read(this.owner, this.#last, types, page);
      if (this.#stale(generation)) return;
      if (rows.length > 0) {
        const frames: Buffer[] = [];
        for (const row of rows) frames.push(eventFrame(row));
        this.connection.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
        const last = rows[rows.length - 1]!;
        this.#last = { tx: last.tx, seq: last.seq };
        this.#lastSentSeq = last.seq;
        replayed += rows.length;
      }
      if (rows.length < page) break;
    }
    // Live from here: what arrived meanwhile and lies past the replay follows it.
    const pending = this.#pending;
    this.#pending = [];
    this.#mode = "live";
    if (announce) this.connection.control({ type: "caught_up", replayed });
    this.#sendLive(pending);
  }

  /** Waits for the socket to drain; false (and the connection closed) when it stalls too long. */
  async #drained(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const stalled = await Promise.race([
      this.connection.drained().then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), this.limits.stallTimeoutMs);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    if (stalled) this.#slow();
    return !stalled;
  }

  #sendLive(events: readonly TailedEvent[]): void {
    let frames: Buffer[] | null = null;
    let sent: TailedEvent | null = null;
    const last = this.#last;
    for (const event of events) {
      if (comparePositions(event.position, last) <= 0) continue;
      if (!this.#wanted(event.row.type)) continue;
      event.frame ??= eventFrame(event.row);
      frames ??= [];
      frames.push(event.frame);
      sent = event;
    }
    if (!frames || !sent) return;
    if (this.connection.buffered() > this.limits.hardBufferBytes) {
      this.#slow();
      return;
    }
    this.connection.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
    this.#last = sent.position;
    this.#lastSentSeq = sent.row.seq;
  }

  /** Not keeping up: closed after what was written, saying where to resume. */
  #slow(): void {
    if (this.#closed) return;
    const after = this.#lastSentSeq;
    this.close();
    this.deps.log.warn(
      { account_id: this.owner.accountId, buffered_bytes: this.connection.buffered(), last_seq: after },
      "account stream client too slow: closed (4009)",
    );
    this.connection.control({
      type: "error",
      code: "SLOW_CONSUMER",
      message: `you did not keep up; reconnect and resume after the last event you received${after === null ? "" : ` (seq ${after})`}`,
    });
    this.connection.close(
      CLOSE.SLOW_CONSUMER,
      after === null ? "slow consumer" : `slow consumer: resume after ${after}`,
    );
  }

  #error(error: AppError): void {
    this.connection.control({
      type: "error",
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    });
  }
}
