/**
 * The stream's fan-out: which sessions follow which market, and getting each quote update to them.
 * Apart from the sessions (protocol, auth, budgets) and the writer (sockets, backpressure) because
 * this is the part that runs per update and per subscriber, so it is built to touch little memory:
 *
 * - An update marks its market's channel changed; the channel is serialized and fanned out at the
 *   next flush, once however many updates it had meanwhile (latest wins). So the busier the stream,
 *   the less work per update.
 * - Per session, pending updates are kept per market, latest wins (conflation), and written as one
 *   buffer of complete frames: one socket write per session per turn instead of one per message
 *   (syscalls, not bytes, are what a busy stream runs out of), and at most one write per session per
 *   `flushIntervalMs`.
 * - Sessions with something to write wait in one first-in first-out queue, worked through in
 *   slices of about `SLICE_MS`, yielding to the event loop in between. Each slice first fans out
 *   what changed since the last one, so an update reaches every queued subscriber in the pass under
 *   way, and a session just written rejoins the back of the queue. Under load an update therefore
 *   waits at most about one pass over the queue (a flush of every session at once made it wait for
 *   the rest of the flush under way and then its own place in the next: up to two passes), and
 *   ingest, HTTP and new subscriptions are never blocked longer than a slice.
 * - Subscriptions are small integers (ids) in packed tables, not objects: a flag byte per id says
 *   what is queued, so the fan-out and the writes touch little memory.
 * - Updates identical to the last one seen for a market (same price, bid, ask and volume, e.g. the
 *   same venue tick ingested by two instances) are dropped.
 */
import type { QuoteUpdate } from "../prices/service";
import { priceUpdateHead, SEQ_FRAME_SLACK, writeSeqFrame } from "./frames";
import type { Session } from "./session";
import type { Timers } from "./timers";
import type { SocketWriter } from "./writer";

/** One market's subscribers and its latest serialized update. */
export interface Channel {
  id: string;
  /** The latest update up to `"seq":`; what every queued subscription writes (latest wins). */
  head: Buffer | null;
  /** An update newer than `head`, not yet fanned out (the channel waits in the next flush). */
  next: QuoteUpdate | null;
  /**
   * Its subscribers as pairs (subscription id, session number), packed: the fan-out walks small
   * integers instead of an object per subscription.
   */
  subs: number[];
}

/** The subscription has an update to write (a channel's head, or a snapshot). */
const QUEUED = 1;
/** What it has to write is a snapshot from its session's `snapshots`, not the channel's head. */
const SNAPSHOT = 2;

/**
 * About how long one flush slice writes before yielding to the event loop (ms): long enough that
 * the turns in between cost little latency, short enough that ingest and HTTP wait at most about
 * this long (bench/stream weighed both when it was chosen).
 */
const SLICE_MS = 10;

export class FanOut {
  readonly #writer: SocketWriter;
  readonly #timers: Timers;
  /** Least time between two writes to one session (ms); see HubOptions.flushIntervalMs. */
  readonly #interval: number;
  /** The current quote of a market nobody has published here yet, for the snapshot on subscribe. */
  readonly #snapshot: (marketId: string) => QuoteUpdate | undefined;
  readonly #channels = new Map<string, Channel>();
  readonly #latest = new Map<string, QuoteUpdate>();
  /** Sessions with pending updates, first in first out, from `#dirtyHead`. */
  #dirty: Session[] = [];
  #dirtyHead = 0;
  /** Sessions by number; a number is reused once its session is gone. */
  readonly #byIndex: Array<Session | undefined> = [];
  readonly #freeIndexes: number[] = [];
  /** Per session number: 1 while it is in `#dirty`. */
  #inDirty = new Uint8Array(1024);
  /** Per subscription id: QUEUED | SNAPSHOT. */
  #flags = new Uint8Array(16 * 1024);
  /** Per subscription id: its pair's position in `channel.subs`. */
  readonly #positions: number[] = [];
  #nextSid = 0;
  readonly #freeSids: number[] = [];
  /** Channels with an update not yet fanned out, for the next flush. */
  #changed: Channel[] = [];
  #flushScheduled = false;
  /** The longest head built so far (bytes): sizes a session's frames before writing them. */
  #longestHead = 0;
  messagesSent = 0;
  updatesConflated = 0;

  constructor(
    writer: SocketWriter,
    timers: Timers,
    flushIntervalMs: number,
    snapshot: (marketId: string) => QuoteUpdate | undefined,
  ) {
    this.#writer = writer;
    this.#timers = timers;
    this.#interval = flushIntervalMs;
    this.#snapshot = snapshot;
  }

  // --- sessions and their subscriptions ------------------------------------------------------------

  /** A number for a new session: it indexes the per-session tables. */
  takeIndex(): number {
    const free = this.#freeIndexes.pop();
    if (free !== undefined) return free;
    const index = this.#byIndex.length;
    this.#byIndex.push(undefined);
    if (index >= this.#inDirty.length) {
      const grown = new Uint8Array(this.#inDirty.length * 2);
      grown.set(this.#inDirty);
      this.#inDirty = grown;
    }
    return index;
  }

  register(session: Session): void {
    this.#byIndex[session.index] = session;
  }

  /** A session's subscriptions: market id -> slot. */
  slots(session: Session): Map<string, number> {
    const slots = new Map<string, number>();
    for (let slot = 0; slot < session.channels.length; slot++) slots.set(session.channels[slot]!.id, slot);
    return slots;
  }

  /** Subscribes a session to a market it does not follow yet; returns the subscription's slot. */
  add(session: Session, marketId: string): number {
    let channel = this.#channels.get(marketId);
    if (!channel) {
      channel = { id: marketId, head: null, next: null, subs: [] };
      this.#channels.set(marketId, channel);
    }
    const sid = this.#takeSid();
    this.#positions[sid] = channel.subs.length;
    channel.subs.push(sid, session.index);
    session.channels.push(channel);
    session.sids.push(sid);
    return session.sids.length - 1;
  }

  /**
   * Unsubscribes the subscription in `slot` (swap-remove: the last slot moves into it). Returns the
   * market id now in `slot`, or undefined when it was the last one.
   */
  remove(session: Session, slot: number): string | undefined {
    const sid = session.sids[slot]!;
    const channel = session.channels[slot]!;
    const lastSid = session.sids.pop()!;
    const lastChannel = session.channels.pop()!;
    let moved: string | undefined;
    if (lastSid !== sid) {
      session.sids[slot] = lastSid;
      session.channels[slot] = lastChannel;
      moved = lastChannel.id;
    }
    this.#detach(session, sid, channel);
    return moved;
  }

  /**
   * Queues the current quote of each of `marketIds` (subscribed, by `slots`) for the session, through
   * the same path as updates: the latest published here, else the snapshot the hub was given.
   */
  queueCurrent(session: Session, slots: Map<string, number>, marketIds: readonly string[]): void {
    for (const id of marketIds) {
      const slot = slots.get(id)!;
      const sid = session.sids[slot]!;
      const latest = this.#latest.get(id);
      if (latest) {
        session.channels[slot]!.head ??= this.#head(latest);
      } else {
        const current = this.#snapshot(id);
        if (!current) continue;
        session.snapshots ??= new Map();
        session.snapshots.set(sid, this.#head(current));
        this.#flags[sid] = this.#flags[sid]! | SNAPSHOT;
      }
      this.#enqueue(session, sid);
    }
  }

  /** Drops every subscription of a closed session; its number is reused once no flush holds it. */
  drop(session: Session): void {
    for (let slot = 0; slot < session.sids.length; slot++)
      this.#detach(session, session.sids[slot]!, session.channels[slot]!);
    session.sids = [];
    session.channels = [];
    session.snapshots = null;
    session.released = true;
    // Still listed for the next flush: that flush gives the number back.
    if (this.#inDirty[session.index] === 0) this.#releaseIndex(session);
  }

  /** Takes a subscription out of its channel (swap-remove) and frees its id; nothing of it is written. */
  #detach(session: Session, sid: number, channel: Channel): void {
    const subs = channel.subs;
    const at = this.#positions[sid]!;
    const lastIndex = subs.pop()!;
    const lastSid = subs.pop()!;
    if (lastSid !== sid) {
      subs[at] = lastSid;
      subs[at + 1] = lastIndex;
      this.#positions[lastSid] = at;
    }
    if (subs.length === 0 && this.#channels.get(channel.id) === channel) this.#channels.delete(channel.id);
    if (this.#flags[sid]! & SNAPSHOT) session.snapshots?.delete(sid);
    this.#flags[sid] = 0;
    this.#freeSids.push(sid);
  }

  #takeSid(): number {
    const free = this.#freeSids.pop();
    if (free !== undefined) return free;
    const sid = this.#nextSid++;
    if (sid >= this.#flags.length) {
      const grown = new Uint8Array(this.#flags.length * 2);
      grown.set(this.#flags);
      this.#flags = grown;
    }
    return sid;
  }

  #releaseIndex(session: Session): void {
    if (this.#byIndex[session.index] !== session) return;
    this.#byIndex[session.index] = undefined;
    this.#freeIndexes.push(session.index);
  }

  // --- updates -------------------------------------------------------------------------------------

  /** One quote update (from the bus) to every subscribed session. */
  publish(update: QuoteUpdate): void {
    const id = update.market_id;
    const last = this.#latest.get(id);
    if (
      last &&
      last.price === update.price &&
      last.best_bid === update.best_bid &&
      last.best_ask === update.best_ask &&
      last.volume_24h === update.volume_24h
    ) {
      return;
    }
    this.#latest.set(id, update);
    const channel = this.#channels.get(id);
    if (!channel) return;
    // Fanned out at the next flush, once per channel however many updates came before it: the
    // busier the stream, the less work per update.
    if (channel.next !== null) {
      this.updatesConflated += channel.subs.length >> 1;
    } else {
      this.#changed.push(channel);
      if (!this.#flushScheduled) this.#scheduleFlush();
    }
    channel.next = update;
  }

  /** An update serialized up to its seq (see Channel.head). */
  #head(update: QuoteUpdate): Buffer {
    const head = priceUpdateHead(update);
    if (head.length > this.#longestHead) this.#longestHead = head.length;
    return head;
  }

  /** Serializes a changed channel's update once and queues it for every subscriber. */
  #fanOut(channel: Channel): void {
    const update = channel.next;
    if (update === null) return;
    channel.next = null;
    channel.head = this.#head(update);
    const subs = channel.subs;
    const flags = this.#flags;
    const inDirty = this.#inDirty;
    let conflated = 0;
    for (let i = 0; i < subs.length; i += 2) {
      const sid = subs[i]!;
      const f = flags[sid]!;
      if (f & QUEUED) {
        // Still waiting (a backed-up socket, or a snapshot just queued): the newer head replaces it.
        conflated++;
        if (f & SNAPSHOT) {
          flags[sid] = QUEUED;
          this.#byIndex[subs[i + 1]!]!.snapshots?.delete(sid);
        }
        continue;
      }
      flags[sid] = QUEUED;
      const index = subs[i + 1]!;
      if (inDirty[index] === 0) {
        inDirty[index] = 1;
        this.#dirty.push(this.#byIndex[index]!);
      }
    }
    this.updatesConflated += conflated;
  }

  /** Queues a subscription's update for its session's next write (at most once: latest wins). */
  #enqueue(session: Session, sid: number): void {
    const f = this.#flags[sid]!;
    if (f & QUEUED) {
      this.updatesConflated++;
      return;
    }
    this.#flags[sid] = f | QUEUED;
    if (this.#inDirty[session.index] === 0) {
      this.#inDirty[session.index] = 1;
      this.#dirty.push(session);
      if (!this.#flushScheduled) this.#scheduleFlush();
    }
  }

  /** The next slice, on the next turn of the event loop. */
  #scheduleFlush(): void {
    this.#flushScheduled = true;
    setImmediate(this.#flushNow);
  }

  readonly #flushNow = () => this.#flush();

  /**
   * One slice: fans out what changed, then writes queued sessions in order for about `SLICE_MS`.
   * A session written less than `flushIntervalMs` ago stops the slice at the head of the queue
   * until its interval is up (so a quiet stream writes an update at once, and a busy one at most
   * once per interval per session; under overload a pass outlasts the interval and slices run
   * back to back).
   */
  #flush(): void {
    this.#flushScheduled = false;
    const changed = this.#changed;
    this.#changed = [];
    for (let i = 0; i < changed.length; i++) this.#fanOut(changed[i]!);
    const queue = this.#dirty;
    const interval = this.#interval;
    const timers = this.#timers;
    const started = timers.now();
    let head = this.#dirtyHead;
    let waitUntil = 0;
    while (head < queue.length) {
      const session = queue[head]!;
      if (!session.released && started - session.lastWrite < interval) {
        waitUntil = session.lastWrite + interval;
        break;
      }
      head++;
      this.#inDirty[session.index] = 0;
      if (session.released) this.#releaseIndex(session);
      else {
        session.lastWrite = started;
        this.write(session);
      }
      if ((head & 15) === 0 && timers.now() - started >= SLICE_MS) break;
    }
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
    } else if (head >= 1024 && head * 2 >= queue.length) {
      queue.splice(0, head);
      head = 0;
    }
    this.#dirtyHead = head;
    if (head < queue.length || this.#changed.length > 0) {
      this.#flushScheduled = true;
      if (waitUntil > 0) timers.after(Math.max(1, waitUntil - timers.now()), this.#flushNow, true);
      else setImmediate(this.#flushNow);
    }
  }

  /**
   * Writes a session's queued updates as one buffer of frames, numbered with its own `seq`, unless
   * its socket is backed up. Also called outside a flush, when a stalled socket drains.
   */
  write(session: Session): void {
    const buffered = this.#writer.writable(session);
    if (buffered < 0) return;
    const sids = session.sids;
    const flags = this.#flags;
    let queued = 0;
    for (let slot = 0; slot < sids.length; slot++) queued += flags[sids[slot]!]! & QUEUED;
    if (queued === 0) return;
    // Room for every frame: a bound from the longest head seen, so the frames take one pass.
    const slab = this.#writer.room(queued * (this.#longestHead + SEQ_FRAME_SLACK));
    const start = this.#writer.offset;
    const channels = session.channels;
    const snapshots = session.snapshots;
    let offset = start;
    let seq = session.seq;
    for (let slot = 0; slot < sids.length; slot++) {
      const sid = sids[slot]!;
      const f = flags[sid]!;
      if ((f & QUEUED) === 0) continue;
      flags[sid] = 0;
      const head = f & SNAPSHOT ? snapshots?.get(sid) : channels[slot]!.head;
      if (head) offset = writeSeqFrame(slab, offset, head, ++seq);
    }
    // Every queued subscription was written, snapshots included.
    session.snapshots = null;
    const count = seq - session.seq;
    session.seq = seq;
    if (count === 0) return;
    this.messagesSent += count;
    this.#writer.send(session, start, offset, buffered);
  }
}
