/**
 * The Kalshi WebSocket (VENUES.md §2.4) on `/trade-api/ws/v2`: RSA-PSS headers on the upgrade
 * (signed over `timestamp + "GET" + "/trade-api/ws/v2"`), `subscribe` / `unsubscribe` /
 * `update_subscription` / `list_subscriptions` commands, one `sid` per channel subscription, and
 * per-sid `seq` on the orderbook channel (snapshot first, then deltas) so gaps are detectable.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import { hasAuthHeaders, verifySignedRequest } from "./auth";
import type { Ctx } from "./context";
import { KalshiError, sizeAt } from "./engine";
import { orderbookFp, yesAskPrice, yesBidPrice } from "./payloads";
import type { KFill, KMarket, KTrade, StateEvent } from "./state";
import { fmtDollars, fmtFp, fmtMicroDollars, isoFromMs, PRICE_SCALE } from "./units";

export const WS_PATH = "/trade-api/ws/v2";

const CHANNELS = ["orderbook_delta", "ticker", "trade", "fill"] as const;
type Channel = (typeof CHANNELS)[number];
const PRIVATE: Channel[] = ["fill"];

/** Error codes from the asyncapi summary in VENUES.md §2.4. */
const WS_ERRORS = {
  1: "Unable to process message",
  2: "Params required",
  3: "Channels required",
  4: "Subscription IDs required",
  5: "Unknown command",
  7: "Unknown subscription ID",
  8: "Unknown channel name",
  9: "Authentication required",
  11: "Invalid parameter",
  12: "Exactly one subscription ID is required",
  13: "Unsupported action",
  14: "Market Ticker required",
  15: "Action required",
  16: "Market not found",
  17: "Internal error",
} as const;
type WsErrorCode = keyof typeof WS_ERRORS;

interface Sub {
  sid: number;
  channel: Channel;
  /** null = every market. */
  tickers: Set<string> | null;
  seq: number;
}

interface Conn {
  ws: WebSocket;
  userId: string | null;
  subs: Map<number, Sub>;
  nextSid: number;
}

class CommandError extends Error {
  constructor(readonly code: WsErrorCode) {
    super(WS_ERRORS[code]);
  }
}

/** VENUES.md §2.4 `ticker` message. */
function tickerMsg(m: KMarket, nowMs: number): Record<string, unknown> {
  return {
    market_ticker: m.ticker,
    market_id: m.marketId,
    price_dollars: fmtDollars(m.lastPrice),
    yes_bid_dollars: fmtDollars(yesBidPrice(m)),
    yes_ask_dollars: fmtDollars(yesAskPrice(m)),
    yes_bid_size_fp: fmtFp(sizeAt(m.bids)),
    yes_ask_size_fp: fmtFp(sizeAt(m.asks)),
    last_trade_size_fp: fmtFp(m.lastTradeSize),
    volume_fp: fmtFp(m.volume),
    open_interest_fp: fmtFp(m.openInterest),
    dollar_volume: Math.round(m.volume / 200),
    dollar_open_interest: Math.round(m.openInterest / 200),
    ts: Math.floor(nowMs / 1000),
    ts_ms: nowMs,
  };
}

/** VENUES.md §2.4 `trade` message. */
function tradeMsg(t: KTrade): Record<string, unknown> {
  return {
    trade_id: t.tradeId,
    market_ticker: t.ticker,
    yes_price_dollars: fmtDollars(t.yesPrice),
    no_price_dollars: fmtDollars(PRICE_SCALE - t.yesPrice),
    count_fp: fmtFp(t.count),
    taker_side: t.takerSide,
    taker_outcome_side: t.takerSide,
    ts: Math.floor(t.createdMs / 1000),
    ts_ms: t.createdMs,
  };
}

/** VENUES.md §2.4 `fill` message (keyed by `trade_id`, no `fill_id`). */
function fillMsg(f: KFill): Record<string, unknown> {
  return {
    trade_id: f.fillId,
    order_id: f.orderId,
    client_order_id: f.clientOrderId,
    market_ticker: f.ticker,
    exchange_index: 0,
    is_taker: f.isTaker,
    yes_price_dollars: fmtDollars(f.yesPrice),
    count_fp: fmtFp(f.count),
    fee_cost: fmtMicroDollars(f.feeMicro),
    outcome_side: f.outcomeSide,
    book_side: f.bookSide,
    post_position_fp: fmtFp(f.postPosition),
    ts: Math.floor(f.createdMs / 1000),
    ts_ms: f.createdMs,
    subaccount: 0,
  };
}

export interface KalshiWs {
  dropAll(): void;
  close(): Promise<void>;
}

export function attachWs(server: Server, ctx: Ctx): KalshiWs {
  const { state, faults } = ctx;
  const wss = new WebSocketServer({ noServer: true });
  const conns = new Set<Conn>();

  const send = (c: Conn, payload: Record<string, unknown>) => {
    if (c.ws.readyState !== c.ws.OPEN) return;
    if (faults.unexpectedFields) {
      payload["x_fake_unknown"] = "unexpected";
      const msg = payload["msg"];
      if (msg && typeof msg === "object" && !Array.isArray(msg))
        (msg as Record<string, unknown>)["x_fake_extra_field"] = 1;
    }
    c.ws.send(JSON.stringify(payload));
  };
  const sendError = (c: Conn, id: unknown, code: WsErrorCode) =>
    send(c, { ...(id !== undefined ? { id } : {}), type: "error", msg: { code, msg: WS_ERRORS[code] } });

  const covers = (s: Sub, ticker: string) => s.tickers === null || s.tickers.has(ticker);

  /** VENUES.md §2.4 `orderbook_snapshot`. */
  const snapshot = (c: Conn, s: Sub, m: KMarket) => {
    const book = orderbookFp(m, 0);
    s.seq += 1;
    send(c, {
      type: "orderbook_snapshot",
      sid: s.sid,
      seq: s.seq,
      msg: {
        market_ticker: m.ticker,
        market_id: m.marketId,
        yes_dollars_fp: book.yes_dollars,
        no_dollars_fp: book.no_dollars,
      },
    });
  };

  const onEvent = (ev: StateEvent) => {
    if (ev.kind === "delta") {
      const m = state.markets.get(ev.ticker);
      if (!m) return;
      const skip = faults.skipSeq.delete(ev.ticker);
      const now = state.nowMs();
      for (const c of conns)
        for (const s of c.subs.values()) {
          if (s.channel !== "orderbook_delta" || !covers(s, ev.ticker)) continue;
          s.seq += skip ? 2 : 1;
          const msg: Record<string, unknown> = {
            market_ticker: ev.ticker,
            market_id: m.marketId,
            price_dollars: fmtDollars(ev.price),
            delta_fp: fmtFp(ev.delta),
            side: ev.side,
            ts: isoFromMs(now),
            ts_ms: now,
          };
          if (ev.origin && c.userId === ev.origin.userId && ev.origin.clientOrderId)
            msg["client_order_id"] = ev.origin.clientOrderId;
          send(c, { type: "orderbook_delta", sid: s.sid, seq: s.seq, msg });
        }
    } else if (ev.kind === "ticker") {
      const m = state.markets.get(ev.ticker);
      if (!m) return;
      const msg = tickerMsg(m, state.nowMs());
      for (const c of conns)
        for (const s of c.subs.values())
          if (s.channel === "ticker" && covers(s, ev.ticker)) send(c, { type: "ticker", sid: s.sid, msg });
    } else if (ev.kind === "trade") {
      const msg = tradeMsg(ev.trade);
      for (const c of conns)
        for (const s of c.subs.values())
          if (s.channel === "trade" && covers(s, ev.trade.ticker))
            send(c, { type: "trade", sid: s.sid, msg });
    } else if (ev.kind === "fill") {
      const msg = fillMsg(ev.fill);
      for (const c of conns) {
        if (c.userId !== ev.fill.userId) continue;
        for (const s of c.subs.values())
          if (s.channel === "fill" && covers(s, ev.fill.ticker)) send(c, { type: "fill", sid: s.sid, msg });
      }
    }
  };
  state.listeners.add(onEvent);

  const tickersOf = (params: Record<string, unknown>): string[] | null => {
    const list = params["market_tickers"];
    const single = params["market_ticker"];
    if (Array.isArray(list)) {
      if (!list.every((t) => typeof t === "string")) throw new CommandError(11);
      return list as string[];
    }
    if (typeof single === "string") return [single];
    if (list !== undefined || single !== undefined) throw new CommandError(11);
    return null;
  };
  const checkMarkets = (tickers: string[]) => {
    for (const t of tickers) if (!state.liveMarket(t)) throw new CommandError(16);
  };

  const handle = (c: Conn, raw: string) => {
    let cmd: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
      cmd = parsed as Record<string, unknown>;
    } catch {
      sendError(c, undefined, 1);
      return;
    }
    const id = cmd["id"];
    try {
      const params = cmd["params"];
      const p = (params && typeof params === "object" ? params : null) as Record<string, unknown> | null;
      switch (cmd["cmd"]) {
        case "subscribe": {
          if (!p) throw new CommandError(2);
          const channels = p["channels"];
          if (!Array.isArray(channels) || channels.length === 0) throw new CommandError(3);
          for (const ch of channels) if (!CHANNELS.includes(ch as Channel)) throw new CommandError(8);
          const tickers = tickersOf(p);
          if (tickers) checkMarkets(tickers);
          for (const ch of channels as Channel[]) {
            if (PRIVATE.includes(ch) && !c.userId) throw new CommandError(9);
            if (ch === "orderbook_delta" && (!tickers || tickers.length === 0)) throw new CommandError(14);
          }
          for (const ch of channels as Channel[]) {
            const s: Sub = {
              sid: c.nextSid++,
              channel: ch,
              tickers: tickers ? new Set(tickers) : null,
              seq: 0,
            };
            c.subs.set(s.sid, s);
            send(c, { id, type: "subscribed", msg: { channel: ch, sid: s.sid } });
            if (ch === "orderbook_delta")
              for (const t of tickers ?? []) snapshot(c, s, state.markets.get(t)!);
          }
          return;
        }
        case "unsubscribe": {
          if (!p) throw new CommandError(2);
          const sids = p["sids"];
          if (!Array.isArray(sids) || sids.length === 0) throw new CommandError(4);
          for (const sid of sids) if (!c.subs.has(sid as number)) throw new CommandError(7);
          for (const sid of sids as number[]) {
            const s = c.subs.get(sid)!;
            c.subs.delete(sid);
            send(c, { id, sid, seq: s.seq, type: "unsubscribed" });
          }
          return;
        }
        case "update_subscription": {
          if (!p) throw new CommandError(2);
          const sids = Array.isArray(p["sids"])
            ? (p["sids"] as unknown[])
            : p["sid"] !== undefined
              ? [p["sid"]]
              : [];
          if (sids.length !== 1) throw new CommandError(12);
          const s = c.subs.get(sids[0] as number);
          if (!s) throw new CommandError(7);
          const action = p["action"];
          if (action === undefined) throw new CommandError(15);
          if (action !== "add_markets" && action !== "delete_markets") throw new CommandError(13);
          const tickers = tickersOf(p);
          if (!tickers || tickers.length === 0) throw new CommandError(14);
          checkMarkets(tickers);
          if (action === "add_markets") {
            s.tickers ??= new Set();
            for (const t of tickers) {
              const fresh = !s.tickers.has(t);
              s.tickers.add(t);
              if (fresh && s.channel === "orderbook_delta") snapshot(c, s, state.markets.get(t)!);
            }
          } else if (s.tickers) for (const t of tickers) s.tickers.delete(t);
          send(c, {
            id,
            sid: s.sid,
            seq: s.seq,
            type: "ok",
            msg: { market_tickers: s.tickers ? [...s.tickers] : [] },
          });
          return;
        }
        case "list_subscriptions": {
          send(c, {
            id,
            type: "ok",
            msg: [...c.subs.values()].map((s) => ({ channel: s.channel, sid: s.sid })),
          });
          return;
        }
        default:
          throw new CommandError(5);
      }
    } catch (err) {
      sendError(c, id, err instanceof CommandError ? err.code : 17);
    }
  };

  const reject = (socket: Duplex, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} ${status === 401 ? "Unauthorized" : status === 503 ? "Service Unavailable" : "Error"}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  };

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== WS_PATH) {
      reject(socket, 404, { error: { code: "not_found", message: "not found", service: "exchange" } });
      return;
    }
    ctx.faults.counts.set(`GET ${WS_PATH}`, (ctx.faults.counts.get(`GET ${WS_PATH}`) ?? 0) + 1);
    if (faults.down) {
      reject(socket, 503, {
        error: { code: "service_unavailable", message: "service unavailable", service: "exchange" },
      });
      return;
    }
    let userId: string | null = null;
    if (hasAuthHeaders(req.headers) || ctx.wsRequireAuth) {
      try {
        userId = verifySignedRequest(state, req.headers, "GET", WS_PATH, ctx.authToleranceMs).userId;
      } catch (err) {
        const e =
          err instanceof KalshiError ? err : new KalshiError(401, "authentication_error", "unauthorized");
        reject(socket, e.status, { error: { code: e.code, message: e.message, service: "exchange" } });
        return;
      }
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const c: Conn = { ws, userId, subs: new Map(), nextSid: 1 };
      conns.add(c);
      ws.on("message", (data) => handle(c, data.toString()));
      // The venue pings every 10 s with the body "heartbeat"; clients answer with pong frames.
      const ping = setInterval(() => {
        if (ws.readyState === ws.OPEN) ws.ping("heartbeat");
      }, ctx.wsPingIntervalMs);
      ping.unref();
      ws.on("close", () => clearInterval(ping));
      ws.on("close", () => conns.delete(c));
      ws.on("error", () => conns.delete(c));
    });
  };
  server.on("upgrade", onUpgrade);

  return {
    dropAll() {
      for (const c of conns) c.ws.terminate();
      conns.clear();
    },
    async close() {
      state.listeners.delete(onEvent);
      server.off("upgrade", onUpgrade);
      for (const c of conns) c.ws.terminate();
      conns.clear();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
