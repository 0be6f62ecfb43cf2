/**
 * Kalshi WebSocket frames -> typed messages (VENUES.md §2.4), as a pure function like the REST
 * normalizers. Kept apart from them because it is the feed's hot path (once per frame, deltas most
 * of all), so it reads its shapes by literal field name, and apart from `feed.ts` so every message
 * shape is tested offline from fixtures.
 *
 * Envelope `{type, sid, seq?, msg}`; commands answer with `subscribed` / `ok` / `error` carrying the
 * command `id`.
 */
import { isoFromMs } from "../../infra/clock";
import { MICROS, type Micros } from "../decimal";
import type { BookLevel, Outcome, Trade } from "../model";
import { type FeedEvent, marketId, type VenueFill } from "../venue";
import { normalizeFill } from "./account";
import {
  asObject,
  decimalMicros,
  type Json,
  KalshiParseError,
  messageTime,
  type NormalizeContext,
  normalizeTrade,
  optMicros,
  parseLevels,
  text,
} from "./normalize";

export type KalshiWsMessage =
  | { type: "subscribed"; id: number | null; sid: number; channel: string }
  | { type: "unsubscribed"; id: number | null; sid: number }
  | { type: "ok"; id: number | null }
  | { type: "error"; id: number | null; code: number | null; message: string }
  | {
      type: "orderbook_snapshot";
      sid: number;
      seq: number | null;
      ticker: string;
      yes: BookLevel[];
      no: BookLevel[];
    }
  | {
      type: "orderbook_delta";
      sid: number;
      seq: number | null;
      ticker: string;
      outcome: Outcome;
      price: Micros;
      delta: Micros;
      timestamp: string;
    }
  | {
      type: "ticker";
      sid: number;
      seq: number | null;
      quote: Extract<FeedEvent, { kind: "quote" }>;
    }
  | { type: "trade"; sid: number; seq: number | null; trade: Trade }
  | { type: "fill"; sid: number; seq: number | null; fill: VenueFill }
  | { type: "ignored"; sid: number | null; seq: number | null; kind: string };

function numberField(o: Json, key: string): number | null {
  return finite(o[key]);
}

function finite(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** The frame fields every message shares, read by name: this runs once per frame at feed rate. */
interface WsFrame {
  type?: unknown;
  id?: unknown;
  sid?: unknown;
  seq?: unknown;
  msg?: unknown;
}

/** orderbook_delta's `msg` (VENUES.md §2.4). */
interface WsDelta {
  market_ticker?: unknown;
  side?: unknown;
  price_dollars?: unknown;
  delta_fp?: unknown;
  ts_ms?: unknown;
}

/** A decimal field of a feed message, or a parse error naming it. */
function feedMicros(v: unknown, key: string, ticker: string): Micros {
  const parsed = typeof v === "string" || typeof v === "number" ? decimalMicros(v) : undefined;
  if (parsed === undefined)
    throw new KalshiParseError(ticker, `${key} is not a decimal: ${JSON.stringify(v) ?? "missing"}`);
  return parsed;
}

/**
 * One parsed WS frame -> a typed message. Throws KalshiParseError for a data message we cannot
 * read (the feed reports and drops it); unknown message types come back as `ignored`.
 *
 * Fields are read by literal name rather than through the `text(o, key)` helpers on the delta path
 * (most frames): a property load at a fixed site stays fast, a keyed load in a helper shared
 * by every shape does not.
 */
export function parseWsMessage(frame: unknown, ctx: NormalizeContext): KalshiWsMessage {
  const o = asObject(frame) as (Json & WsFrame) | undefined;
  if (!o) throw new KalshiParseError("<ws>", "frame is not an object");
  const rawType = o.type;
  const type = typeof rawType === "string" ? rawType : "";
  const sid = finite(o.sid);
  const seq = finite(o.seq);
  if (type === "orderbook_delta") {
    const msg = (asObject(o.msg) ?? {}) as WsDelta;
    const ticker = msg.market_ticker;
    if (typeof ticker !== "string" || ticker.length === 0)
      throw new KalshiParseError("<ws>", "orderbook_delta without market_ticker");
    const side = msg.side;
    if (side !== "yes" && side !== "no")
      throw new KalshiParseError(ticker, `orderbook_delta side is ${JSON.stringify(side) ?? "missing"}`);
    const ms = msg.ts_ms;
    return {
      type,
      sid: sid ?? -1,
      seq,
      ticker,
      outcome: side,
      price: feedMicros(msg.price_dollars, "price_dollars", ticker),
      delta: feedMicros(msg.delta_fp, "delta_fp", ticker),
      timestamp:
        typeof ms === "number" && Number.isFinite(ms)
          ? isoFromMs(ms)
          : messageTime(msg as Json, () => ctx.now),
    };
  }
  const id = finite(o.id);
  const msg = asObject(o.msg) ?? {};
  switch (type) {
    case "subscribed":
      return {
        type,
        id,
        sid: numberField(msg, "sid") ?? sid ?? -1,
        channel: text(msg, "channel") ?? "",
      };
    case "unsubscribed":
      return { type, id, sid: sid ?? numberField(msg, "sid") ?? -1 };
    case "ok":
      return { type, id };
    case "error":
      return { type, id, code: numberField(msg, "code"), message: text(msg, "msg") ?? "unknown error" };
    case "orderbook_snapshot": {
      const ticker = text(msg, "market_ticker") ?? "<ws>";
      // The snapshot carries `yes_dollars_fp`/`no_dollars_fp` (VENUES.md §2.4); the REST names are
      // accepted too so a rename between the two does not blank the book.
      const yesKey = "yes_dollars_fp" in msg ? "yes_dollars_fp" : "yes_dollars";
      const noKey = "no_dollars_fp" in msg ? "no_dollars_fp" : "no_dollars";
      if (yesKey === "yes_dollars" || noKey === "no_dollars")
        ctx.report("ws_snapshot_rest_field_names", { ticker });
      return {
        type,
        sid: sid ?? -1,
        seq,
        ticker,
        yes: parseLevels(msg[yesKey], ticker, yesKey),
        no: parseLevels(msg[noKey], ticker, noKey),
      };
    }
    case "ticker": {
      const ticker = text(msg, "market_ticker");
      if (!ticker) throw new KalshiParseError("<ws>", "ticker without market_ticker");
      const bid = optMicros(msg, "yes_bid_dollars", ticker);
      const ask = optMicros(msg, "yes_ask_dollars", ticker);
      const last = optMicros(msg, "price_dollars", ticker);
      return {
        type,
        sid: sid ?? -1,
        seq,
        quote: {
          kind: "quote",
          marketId: marketId("kalshi", ticker),
          bestBid: bid === undefined || bid === 0 ? null : bid,
          bestAsk: ask === undefined || ask >= MICROS ? null : ask,
          lastPrice: last === undefined || last === 0 ? null : last,
          timestamp: messageTime(msg, () => ctx.now),
        },
      };
    }
    case "trade":
      return { type, sid: sid ?? -1, seq, trade: normalizeTrade(msg, ctx) };
    case "fill":
      return { type, sid: sid ?? -1, seq, fill: normalizeFill(msg, ctx) };
    default:
      if (type === "") ctx.report("ws_frame_without_type", {});
      return { type: "ignored", sid, seq, kind: type };
  }
}
