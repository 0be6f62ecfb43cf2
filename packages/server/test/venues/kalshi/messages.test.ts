/** Offline fixture tests: Kalshi WebSocket frames (VENUES.md §2.4) in, typed messages out. */
import { describe, expect, it } from "vitest";
import { parseWsMessage } from "../../../src/venues/kalshi/messages";
import { KalshiParseError } from "../../../src/venues/kalshi/normalize";
import { fixture } from "./fixtures";

const NOW = "2026-11-22T12:30:00.000Z";

describe("WebSocket messages", () => {
  const ws = fixture<Record<string, unknown>>("ws-messages.json");
  const ctx = { report: () => {}, now: NOW };

  it("acks and errors", () => {
    expect(parseWsMessage(ws["subscribed"], ctx)).toEqual({
      type: "subscribed",
      id: 1,
      sid: 2,
      channel: "orderbook_delta",
    });
    expect(parseWsMessage(ws["ok"], ctx)).toEqual({ type: "ok", id: 2 });
    expect(parseWsMessage(ws["error"], ctx)).toEqual({
      type: "error",
      id: 123,
      code: 2,
      message: "Params required",
    });
  });

  it("orderbook_snapshot reads yes_dollars_fp / no_dollars_fp, a missing side is empty", () => {
    expect(parseWsMessage(ws["orderbook_snapshot"], ctx)).toEqual({
      type: "orderbook_snapshot",
      sid: 2,
      seq: 1,
      ticker: "FED-23DEC-T3.00",
      yes: [
        { price: 80_000, size: 300_000_000 },
        { price: 220_000, size: 333_000_000 },
      ],
      no: [
        { price: 540_000, size: 20_000_000 },
        { price: 560_000, size: 146_000_000 },
      ],
    });
    expect(parseWsMessage(ws["orderbook_snapshot_empty_no"], ctx)).toMatchObject({ no: [] });
  });

  it("orderbook_delta carries side, price, signed delta, seq and ts_ms", () => {
    expect(parseWsMessage(ws["orderbook_delta"], ctx)).toEqual({
      type: "orderbook_delta",
      sid: 2,
      seq: 2,
      ticker: "FED-23DEC-T3.00",
      outcome: "yes",
      price: 220_000,
      delta: -54_000_000,
      timestamp: new Date(1795348801000).toISOString(),
    });
  });

  it("ticker -> quote", () => {
    expect(parseWsMessage(ws["ticker"], ctx)).toEqual({
      type: "ticker",
      sid: 11,
      seq: null,
      quote: {
        kind: "quote",
        marketId: "kalshi:FED-23DEC-T3.00",
        bestBid: 450_000,
        bestAsk: 530_000,
        lastPrice: 480_000,
        timestamp: new Date(1669149841000).toISOString(),
      },
    });
  });

  it("trade -> the taker bought the taker side at that side's price", () => {
    expect(parseWsMessage(ws["trade"], ctx)).toEqual({
      type: "trade",
      sid: 3,
      seq: null,
      trade: {
        marketId: "kalshi:FED-23DEC-T3.00",
        outcome: "no",
        price: 450_000,
        size: 100_000_000,
        takerSide: "buy",
        timestamp: new Date(1714512345678).toISOString(),
        venueTradeId: "d91bc706-ee49-470d-82d8-11418bda6fed",
      },
    });
  });

  it("fill -> VenueFill keyed by trade_id", () => {
    expect(parseWsMessage(ws["fill"], ctx)).toEqual({
      type: "fill",
      sid: 4,
      seq: null,
      fill: {
        venueFillId: "t-77",
        venueOrderId: "o-55",
        marketId: "kalshi:FED-23DEC-T3.00",
        outcome: "yes",
        side: "buy",
        price: 400_000,
        size: 1_000_000,
        fee: 10_000,
        liquidity: "maker",
        timestamp: new Date(1700000000000).toISOString(),
      },
    });
  });

  it("other channels are ignored; a delta without a side is a parse error", () => {
    expect(parseWsMessage(ws["lifecycle"], ctx)).toMatchObject({
      type: "ignored",
      kind: "market_lifecycle_v2",
    });
    const bad = {
      type: "orderbook_delta",
      sid: 2,
      seq: 3,
      msg: { market_ticker: "X", price_dollars: "0.1000" },
    };
    expect(() => parseWsMessage(bad, ctx)).toThrow(KalshiParseError);
  });
});
