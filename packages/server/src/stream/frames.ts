/**
 * WebSocket frames written by hand for the fan-out (RFC 6455 §5.2): a server frame is unmasked, so
 * a text frame is a 2-, 4- or 10-byte header and the payload. The hub writes every message a
 * connection is due in one buffer with one socket write, instead of one `ws.send` (header
 * allocation, write request, syscall) per message; `ws` still owns the handshake, reading, pings
 * and closing. Payloads here are ASCII JSON (market ids and numbers), so string length = byte length
 * is checked, not assumed. What each payload must be is declared in schemas.ts, and
 * test/stream/schemas.test.ts checks the frames the hub builds against it.
 */
import type { QuoteUpdate } from "../prices/service";

const OPCODE_TEXT = 0x81; // FIN + text
const CLOSE_BRACE = 0x7d; // "}"

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

/**
 * Most bytes `writeSeqFrame` adds to a head: a 10-byte header, a seq of up to 16 digits (any safe
 * integer) and the closing brace. Enough room for a frame is `head.length + SEQ_FRAME_SLACK`.
 */
export const SEQ_FRAME_SLACK = 10 + 16 + 1;

/**
 * Writes one complete text frame whose payload is `head` (a JSON object cut just after a key's
 * colon), the decimal digits of `seq` and `}` at `offset`; returns the next offset. The caller
 * makes sure there is room (`SEQ_FRAME_SLACK`). Digits are written as bytes: no string per message.
 */
export function writeSeqFrame(target: Buffer, offset: number, head: Uint8Array, seq: number): number {
  let count = 1;
  for (let n = seq; n >= 10; n = Math.floor(n / 10)) count++;
  const length = head.length + count + 1;
  target[offset] = OPCODE_TEXT;
  if (length < 126) {
    target[offset + 1] = length;
    offset += 2;
  } else if (length < 65_536) {
    target[offset + 1] = 126;
    target[offset + 2] = length >>> 8;
    target[offset + 3] = length & 0xff;
    offset += 4;
  } else {
    offset = writeHeader(target, offset, length);
  }
  target.set(head, offset);
  offset += head.length;
  let n = seq;
  for (let at = offset + count - 1; at >= offset; at--) {
    const rest = Math.floor(n / 10);
    target[at] = 48 + (n - rest * 10); // "0" + digit
    n = rest;
  }
  offset += count;
  target[offset] = CLOSE_BRACE;
  return offset + 1;
}

/**
 * A quote update as a `price_update` payload cut just after `"seq":`, for `writeSeqFrame`: the JSON
 * is written by hand, once per update, in the order schemas.ts declares (PriceUpdateMessageSchema).
 */
export function priceUpdateHead(update: QuoteUpdate): Buffer {
  return Buffer.from(
    `{"type":"price_update","market_id":${JSON.stringify(update.market_id)},"price":${update.price},` +
      `"best_bid":${update.best_bid},"best_ask":${update.best_ask},"volume_24h":${update.volume_24h},` +
      `"timestamp":${JSON.stringify(update.timestamp)},"seq":`,
    "utf8",
  );
}
