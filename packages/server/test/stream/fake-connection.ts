/**
 * A stream connection the test controls, for driving the hub without a network: the socket keeps
 * what the hub writes (hand-built frames, undecoded), and the ws stand-in delivers client messages.
 */
import { EventEmitter } from "node:events";
import WebSocket from "ws";

/** Splits unmasked server text frames (RFC 6455 §5.2) into their payloads, checking each header. */
export function framePayloads(buffer: Buffer): string[] {
  const out: string[] = [];
  let offset = 0;
  while (offset < buffer.length) {
    if (buffer[offset] !== 0x81) throw new Error(`not a final text frame at byte ${offset}`);
    let length = buffer[offset + 1]!;
    let start = offset + 2;
    if (length === 126) {
      length = buffer.readUInt16BE(offset + 2);
      start = offset + 4;
      if (length < 126) throw new Error("a 16-bit length where 7 bits would do");
    } else if (length === 127) {
      length = Number(buffer.readBigUInt64BE(offset + 2));
      start = offset + 10;
      if (length < 65_536) throw new Error("a 64-bit length where 16 bits would do");
    }
    if (start + length > buffer.length) throw new Error("a frame longer than what was written");
    out.push(buffer.subarray(start, start + length).toString("utf8"));
    offset = start + length;
  }
  return out;
}

export class FakeSocket extends EventEmitter {
  writableLength = 0;
  readonly written: Buffer[] = [];
  write(chunk: Buffer): boolean {
    // A copy: the hub reuses the memory of a write the kernel took.
    this.written.push(Buffer.from(chunk));
    return true;
  }
  payloads(): string[] {
    return framePayloads(Buffer.concat(this.written));
  }
}

export class FakeWs extends EventEmitter {
  readyState: number = WebSocket.OPEN;
  terminated = false;
  close(): void {
    this.readyState = WebSocket.CLOSED;
    this.emit("close");
  }
  terminate(): void {
    this.terminated = true;
    this.readyState = WebSocket.CLOSED;
    this.emit("close");
  }
  ping(): void {}
  /** A client text message, as ws would deliver it. */
  sayText(text: string): void {
    this.emit("message", Buffer.from(text), false);
  }
  say(message: unknown): void {
    this.sayText(JSON.stringify(message));
  }
}
