/**
 * Raw WebSocket clients for the stream benches (bench/stream, bench/account-stream): the upgrade
 * request written by hand, masked text frames out, frames read straight from the socket's chunks.
 * A real client library would spend more CPU than the server under test and measure itself; this
 * spends next to nothing per frame and leaves each bench to look only at the bytes it needs.
 */
import { randomBytes } from "node:crypto";
import net from "node:net";

/** A client's text frame (clients must mask theirs). */
export function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const length = payload.length;
  const header = length < 126 ? 2 : 4;
  const frame = Buffer.alloc(header + 4 + length);
  frame[0] = 0x81;
  if (length < 126) frame[1] = 0x80 | length;
  else {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(length, 2);
  }
  const mask = randomBytes(4);
  mask.copy(frame, header);
  for (let i = 0; i < length; i++) frame[header + 4 + i] = payload[i]! ^ mask[i & 3]!;
  return frame;
}

export interface RawClientOptions {
  port: number;
  /** The request path (with its query, if any). */
  path: string;
  /** Sent as `Authorization: Bearer <key>` on the upgrade; null: no header. */
  key: string | null;
  /** Once the upgrade is accepted, before the frames that came with it are read. */
  onOpen(socket: net.Socket): void;
  /** A text frame; its payload is `data[start, end)` (valid during the call only). */
  onText(data: Buffer, start: number, end: number): void;
  /** The upgrade was refused, or the socket failed. */
  onError(error: Error): void;
}

/**
 * Opens one connection to 127.0.0.1:`port`. Text frames go to `onText`; pings are answered; other
 * frames (pong, close, continuation) are skipped.
 */
export function openRawClient(options: RawClientOptions): net.Socket {
  const { port, path: urlPath, key, onOpen, onText, onError } = options;
  const socket = net.connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  let upgraded = false;
  let pending: Buffer | null = null;
  socket.on("connect", () => {
    socket.write(
      `GET ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n` +
        (key ? `Authorization: Bearer ${key}\r\n` : "") +
        "\r\n",
    );
  });
  socket.on("error", onError);
  socket.on("data", (chunk: Buffer) => {
    let data = pending ? Buffer.concat([pending, chunk]) : chunk;
    pending = null;
    if (!upgraded) {
      const end = data.indexOf("\r\n\r\n");
      if (end < 0) {
        pending = data;
        return;
      }
      const head = data.subarray(0, end).toString();
      if (!head.startsWith("HTTP/1.1 101")) {
        onError(new Error(`upgrade refused: ${head.split("\r\n")[0]}`));
        socket.destroy();
        return;
      }
      upgraded = true;
      onOpen(socket);
      data = data.subarray(end + 4);
    }
    let offset = 0;
    while (data.length - offset >= 2) {
      const opcode = data[offset]! & 0x0f;
      let length = data[offset + 1]! & 0x7f;
      let start = offset + 2;
      if (length === 126) {
        if (data.length - offset < 4) break;
        length = data.readUInt16BE(offset + 2);
        start = offset + 4;
      } else if (length === 127) {
        if (data.length - offset < 10) break;
        length = Number(data.readBigUInt64BE(offset + 2));
        start = offset + 10;
      }
      if (data.length < start + length) break;
      if (opcode === 0x1) {
        onText(data, start, start + length);
      } else if (opcode === 0x9) {
        // Answer pings (masked pong with the same payload).
        const payload = data.subarray(start, start + length);
        const pong = Buffer.alloc(6 + payload.length);
        pong[0] = 0x8a;
        pong[1] = 0x80 | payload.length;
        payload.copy(pong, 6); // zero mask: payload unchanged
        socket.write(pong);
      }
      offset = start + length;
    }
    if (offset < data.length) pending = data.subarray(offset);
  });
  return socket;
}
