/**
 * WebSocket frames written by hand for the fan-out (RFC 6455 §5.2): a server frame is unmasked, so
 * a text frame is a 2-, 4- or 10-byte header and the payload. The hub writes every message a
 * connection is due in one buffer with one socket write, instead of one `ws.send` (header
 * allocation, write request, syscall) per message; `ws` still owns the handshake, reading, pings
 * and closing. Payloads here are ASCII JSON (market ids and numbers), so string length = byte length
 * is checked, not assumed.
 */

const OPCODE_TEXT = 0x81; // FIN + text

export function headerLength(payloadLength: number): number {
  return payloadLength < 126 ? 2 : payloadLength < 65_536 ? 4 : 10;
}

/** Writes a text frame header for `payloadLength` bytes at `offset`; returns the next offset. */
export function writeHeader(target: Buffer, offset: number, payloadLength: number): number {
  target[offset] = OPCODE_TEXT;
  if (payloadLength < 126) {
    target[offset + 1] = payloadLength;
    return offset + 2;
  }
  if (payloadLength < 65_536) {
    target[offset + 1] = 126;
    target.writeUInt16BE(payloadLength, offset + 2);
    return offset + 4;
  }
  target[offset + 1] = 127;
  target.writeUInt32BE(Math.floor(payloadLength / 2 ** 32), offset + 2);
  target.writeUInt32BE(payloadLength >>> 0, offset + 6);
  return offset + 10;
}

/** One complete text frame for a message (control messages: acks, errors). */
export function textFrame(text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  const frame = Buffer.allocUnsafe(headerLength(payload.length) + payload.length);
  payload.copy(frame, writeHeader(frame, 0, payload.length));
  return frame;
}

/** Decimal digits of a non-negative integer, for sizing a frame before writing it. */
export function digits(n: number): number {
  let count = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    count++;
  }
  return count;
}
