/** Frames built by hand (a head, the seq's digits, `}`) decode as the JSON they claim to be. */
import { describe, expect, it } from "vitest";
import { priceUpdateHead, SEQ_FRAME_SLACK, writeSeqFrame } from "../../src/stream/frames";

function decode(frame: Buffer): { length: number; text: string } {
  expect(frame[0]).toBe(0x81);
  let length = frame[1]!;
  let start = 2;
  if (length === 126) {
    length = frame.readUInt16BE(2);
    start = 4;
  } else if (length === 127) {
    length = Number(frame.readBigUInt64BE(2));
    start = 10;
  }
  expect(frame.length).toBe(start + length);
  return { length, text: frame.subarray(start).toString() };
}

describe("writeSeqFrame", () => {
  it.each([
    [0, 1],
    [100, 9],
    [113, 10], // payload 125: the last 2-byte header
    [114, 9],
    [114, 10], // payload 126: the first 4-byte header
    [200, 99],
    [200, 100],
    [65_519, 1], // payload 65,535: the last 4-byte header
    [65_520, 1], // payload 65,536: a 10-byte header
    [300, Number.MAX_SAFE_INTEGER],
  ])("a head of %i bytes with seq %i", (padding, seq) => {
    const head = Buffer.from(`{"a":"${"x".repeat(padding)}","seq":`);
    const target = Buffer.alloc(head.length + SEQ_FRAME_SLACK + 8, 0xee);
    const end = writeSeqFrame(target, 3, head, seq);
    const { text } = decode(target.subarray(3, end));
    expect(JSON.parse(text)).toEqual({ a: "x".repeat(padding), seq });
    expect(end - 3).toBeLessThanOrEqual(head.length + SEQ_FRAME_SLACK);
    expect(target[end]).toBe(0xee); // nothing written past the frame
  });
});

describe("priceUpdateHead", () => {
  it("is a price_update cut after its seq key, which writeSeqFrame completes", () => {
    const update = {
      market_id: 'poly:"é"\u2028',
      price: 0.5,
      best_bid: null,
      best_ask: 0.51,
      volume_24h: 1234.5,
      timestamp: "2026-11-22T12:00:00.000Z",
    };
    const head = priceUpdateHead(update);
    expect(head.toString()).toMatch(/,"seq":$/);
    const target = Buffer.alloc(head.length + SEQ_FRAME_SLACK);
    const { text } = decode(target.subarray(0, writeSeqFrame(target, 0, head, 42)));
    expect(text).toBe(JSON.stringify({ type: "price_update", ...update, seq: 42 }));
  });
});
