/**
 * How bytes reach a stream connection's socket, and what happens when it stops draining. The fan-out
 * decides what a session is due; this decides whether it may be written now and where its frames
 * are built, so a slow client is handled in one place and never slows the others.
 *
 * - Frames are built in a slab shared by every connection. A TCP socket that takes a write at once
 *   (the usual case) holds no reference to the bytes, so the same warm room is reused for the next
 *   connection and a flush allocates nothing per write.
 * - A socket holding more than `softBufferBytes` gets nothing more until it drains; the session's
 *   updates keep conflating in the fan-out meanwhile (bounded by its subscriptions). Past
 *   `hardBufferBytes`, or stalled longer than `stallTimeoutMs`, it is cut: a close frame would only
 *   queue behind the bytes it is not reading.
 * - Control messages (acks, errors) are written at once, in order with the updates.
 */
import WebSocket from "ws";
import type { Logger } from "../infra/log";
import { textFrame } from "./frames";
import type { Session } from "./session";
import type { Timers } from "./timers";

/**
 * Frames are built in slabs of this size, each connection's write a slice of one. A slice a socket
 * still holds (queued, not yet taken by the kernel) is never written again; a slice it has taken is
 * reused (see `send`).
 */
const SLAB_BYTES = 64 * 1024;

export interface WriterLimits {
  softBufferBytes: number;
  hardBufferBytes: number;
  stallTimeoutMs: number;
}

export interface WriterEvents {
  /** A stalled session's socket drained: write what it is due now. */
  drained(session: Session): void;
  /** A session was cut for not keeping up; forget it. */
  dropped(session: Session): void;
}

export class SocketWriter {
  readonly #limits: WriterLimits;
  readonly #timers: Timers;
  readonly #log: Logger;
  readonly #events: WriterEvents;
  #slab: Buffer = Buffer.allocUnsafeSlow(SLAB_BYTES);
  #offset = 0;
  slowConsumersDropped = 0;

  constructor(limits: WriterLimits, timers: Timers, log: Logger, events: WriterEvents) {
    this.#limits = limits;
    this.#timers = timers;
    this.#log = log;
    this.#events = events;
  }

  /**
   * The bytes the session's socket still holds, or -1 when nothing is to be written to it now: it is
   * closed, or backed up past the soft bound (it then waits for `drain`, or is cut).
   */
  writable(session: Session): number {
    if (session.closed || session.ws.readyState !== WebSocket.OPEN) return -1;
    const buffered = session.socket.writableLength;
    if (buffered > this.#limits.softBufferBytes) {
      this.#stall(session, buffered);
      return -1;
    }
    session.stalledSince = 0;
    return buffered;
  }

  /** The slab to build frames in, with at least `bytes` free from `offset` (a fresh one if needed). */
  room(bytes: number): Buffer {
    if (this.#slab.length - this.#offset < bytes) {
      this.#slab = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, bytes));
      this.#offset = 0;
    }
    return this.#slab;
  }

  /** Where the next frames go in the slab `room` returned. */
  get offset(): number {
    return this.#offset;
  }

  /**
   * Writes the frames built in the slab from `start` to `end` as one socket write. `buffered` is what
   * `writable` answered for the session.
   */
  send(session: Session, start: number, end: number, buffered: number): void {
    const slab = this.#slab;
    if (buffered > 0) {
      // Queued behind earlier bytes: a copy of its own, so the queue holds only its bytes.
      session.socket.write(Buffer.from(slab.subarray(start, end)));
      return;
    }
    const aligned = (end + 7) & ~7;
    this.#offset = aligned;
    session.socket.write(slab.subarray(start, end));
    // A TCP socket with nothing left queued has handed every byte to the kernel and holds no
    // reference to them: the room is reused for the next connection (hot in cache, no allocation).
    // Otherwise the bytes wait in the socket's queue and the room stays theirs; a slow client's
    // later writes are copies (above), so it never pins more than this one slab.
    if (session.kernelWrites && session.socket.writableLength === 0 && this.#offset === aligned) {
      this.#offset = start;
    }
  }

  /** A message written at once (an ack, an error), unless the session is gone or hopelessly behind. */
  control(session: Session, message: object): void {
    if (session.closed || session.ws.readyState !== WebSocket.OPEN) return;
    const buffered = session.socket.writableLength;
    if (buffered > this.#limits.hardBufferBytes) {
      this.#drop(session, buffered);
      return;
    }
    session.socket.write(textFrame(JSON.stringify(message)));
  }

  #stall(session: Session, buffered: number): void {
    const now = this.#timers.now();
    if (session.stalledSince === 0) session.stalledSince = now;
    if (buffered > this.#limits.hardBufferBytes || now - session.stalledSince > this.#limits.stallTimeoutMs) {
      this.#drop(session, buffered);
      return;
    }
    if (!session.waitingDrain) {
      session.waitingDrain = true;
      session.socket.once("drain", () => {
        session.waitingDrain = false;
        this.#events.drained(session);
      });
    }
  }

  #drop(session: Session, buffered: number): void {
    this.slowConsumersDropped++;
    this.#log.warn(
      { key_id: session.principal?.keyId, buffered_bytes: buffered },
      "stream client too slow: disconnected",
    );
    // Its buffer is full: a close frame would wait behind it. Cut the connection.
    session.closed = true;
    session.ws.terminate();
    this.#events.dropped(session);
  }
}
