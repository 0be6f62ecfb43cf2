/**
 * CLOB WebSocket channels. Market channel: subscribe by token ids, initial `book` dump, then
 * `price_change` (new aggregate size per level), `last_trade_price`, `tick_size_change`, and with
 * `custom_feature_enabled` also `best_bid_ask` and `market_resolved`; text `PING` → `PONG`.
 * User channel: API credentials in the subscribe message, filtered by condition id, `order` and
 * `trade` events for that key's orders. Wire format: VENUES.md §1.4.
 * A market socket can be stalled on purpose (`stallMarketSockets`): it keeps answering PING but
 * sends no market message again, as a stalled subscription does on the venue (VENUES-AUDIT #13).
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { ApiKeyStore } from "./auth";
import { bookSummary } from "./clob";
import { openOrderJson, tradeJson } from "./orders";
import { type FeedEvent, flip, type PmMarket, type PolymarketState } from "./state";
import { fmtPrice, fmtSize, PRICE_SCALE } from "./units";

interface MarketClient {
  kind: "market";
  socket: WebSocket;
  assets: Set<string>;
  custom: boolean;
  /** Stalled: PONG still answers, no market message is sent any more. */
  stalled: boolean;
}

interface UserClient {
  kind: "user";
  socket: WebSocket;
  apiKey: string | null;
  markets: Set<string>;
}

type Client = MarketClient | UserClient;

export interface WsHub {
  dropAll(): void;
  /** Stalls every open market socket; returns how many. */
  stallMarketSockets(): number;
  /** Assets subscribed on each open market socket. */
  marketSubscriptions(): number[];
  clientCount(): number;
  close(): Promise<void>;
}

/** `book` message — VENUES.md §1.4 (V2-era captures also carry tick_size and last_trade_price). */
function bookMessage(state: PolymarketState, m: PmMarket, tokenId: string): Record<string, unknown> {
  const s = bookSummary(state, m, tokenId);
  return {
    event_type: "book",
    market: s.market,
    asset_id: s.asset_id,
    timestamp: s.timestamp,
    hash: s.hash,
    bids: s.bids,
    asks: s.asks,
    tick_size: s.tick_size,
    last_trade_price: s.last_trade_price,
  };
}

function bestOf(state: PolymarketState, m: PmMarket, tokenId: string) {
  const { bids, asks } = state.tokenLevels(m, tokenId);
  return { bid: bids[0]?.price ?? null, ask: asks[0]?.price ?? null };
}

export function attachWebSockets(
  server: Server,
  opts: {
    state: PolymarketState;
    keys: ApiKeyStore;
    prefix: string;
    isDown: () => boolean;
    latencyMs: () => number;
    /** Last chance to rewrite an outgoing JSON frame (scripted malformed frames). */
    rewrite: (text: string) => string;
    /** Counts connection attempts per channel ("WS /clob/ws/market"). */
    count: (key: string) => void;
  },
): WsHub {
  const { state, keys, prefix } = opts;
  const wss = new WebSocketServer({ noServer: true });
  const now = () => String(state.clock());
  const clients = new Set<Client>();

  const send = (c: Client, msg: unknown) => {
    if (c.socket.readyState !== c.socket.OPEN) return;
    if (c.kind === "market" && c.stalled) return;
    const text = opts.rewrite(JSON.stringify(msg));
    const delay = opts.latencyMs();
    if (delay > 0) setTimeout(() => c.socket.readyState === c.socket.OPEN && c.socket.send(text), delay);
    else c.socket.send(text);
  };

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? "").split("?")[0];
    const kind = path === `${prefix}/market` ? "market" : path === `${prefix}/user` ? "user" : null;
    if (kind) opts.count(`WS /clob${prefix}/${kind}`);
    if (!kind || opts.isDown()) {
      socket.write(
        `HTTP/1.1 ${kind ? "503 Service Unavailable" : "404 Not Found"}\r\nConnection: close\r\n\r\n`,
      );
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const client: Client =
        kind === "market"
          ? { kind, socket: ws, assets: new Set(), custom: false, stalled: false }
          : { kind, socket: ws, apiKey: null, markets: new Set() };
      clients.add(client);
      ws.on("close", () => clients.delete(client));
      ws.on("error", () => clients.delete(client));
      ws.on("message", (data, isBinary) => onMessage(client, isBinary ? "" : data.toString()));
    });
  };
  server.on("upgrade", onUpgrade);

  const onMessage = (c: Client, text: string) => {
    if (text === "PING") {
      c.socket.send("PONG");
      return;
    }
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(text);
    } catch {
      c.socket.send("INVALID OPERATION");
      return;
    }
    if (c.kind === "market") onMarketMessage(c, msg);
    else onUserMessage(c, msg);
  };

  const onMarketMessage = (c: MarketClient, msg: Record<string, unknown>) => {
    const ids = Array.isArray(msg.assets_ids)
      ? msg.assets_ids.filter((x): x is string => typeof x === "string")
      : [];
    const op = typeof msg.operation === "string" ? msg.operation.toLowerCase() : undefined;
    const type = typeof msg.type === "string" ? msg.type.toLowerCase() : undefined;
    if (op === "unsubscribe") {
      for (const id of ids) c.assets.delete(id);
      return;
    }
    if (op !== "subscribe" && type !== "market") {
      c.socket.send("INVALID OPERATION");
      return;
    }
    if (msg.custom_feature_enabled === true) c.custom = true;
    const added = ids.filter((id) => !c.assets.has(id));
    for (const id of ids) c.assets.add(id);
    if (msg.initial_dump === false) return;
    const dump: Record<string, unknown>[] = [];
    for (const id of added) {
      const m = state.byToken.get(id);
      if (m && m.status === "open") dump.push(bookMessage(state, m, id));
    }
    if (dump.length > 0) send(c, dump);
  };

  const onUserMessage = (c: UserClient, msg: Record<string, unknown>) => {
    const auth = msg.auth as { apiKey?: string; secret?: string; passphrase?: string } | undefined;
    const markets = Array.isArray(msg.markets)
      ? msg.markets.filter((x): x is string => typeof x === "string")
      : [];
    const op = typeof msg.operation === "string" ? msg.operation.toLowerCase() : undefined;
    if (op === "unsubscribe") {
      for (const m of markets) c.markets.delete(m.toLowerCase());
      return;
    }
    if (c.apiKey === null) {
      const rec = auth?.apiKey ? keys.byKey.get(auth.apiKey) : undefined;
      if (!rec || rec.secret !== auth?.secret || rec.passphrase !== auth?.passphrase) {
        c.socket.close(1008, "Unauthorized/Invalid api key");
        return;
      }
      c.apiKey = rec.apiKey;
    }
    for (const m of markets) c.markets.add(m.toLowerCase());
  };

  const forMarket = (m: PmMarket, fn: (c: MarketClient, tokenIds: string[]) => void) => {
    for (const c of clients) {
      if (c.kind !== "market") continue;
      const subscribed = m.tokenIds.filter((t) => c.assets.has(t));
      if (subscribed.length > 0) fn(c, subscribed);
    }
  };

  const toUser = (apiKey: string, m: PmMarket, msg: unknown) => {
    for (const c of clients)
      if (c.kind === "user" && c.apiKey === apiKey && (c.markets.size === 0 || c.markets.has(m.conditionId)))
        send(c, msg);
  };

  const onFeed = (e: FeedEvent) => {
    switch (e.kind) {
      case "book":
        forMarket(e.market, (c, ids) => {
          for (const id of ids) send(c, bookMessage(state, e.market, id));
        });
        return;
      // `price_change` (array schema since 2025-09-15) and `best_bid_ask` — VENUES.md §1.4.
      case "levels": {
        const m = e.market;
        const perToken = new Map<string, Record<string, unknown>[]>();
        const hashes = new Map<string, string>();
        const bests = new Map<string, { bid: number | null; ask: number | null }>();
        for (const t of m.tokenIds) {
          hashes.set(t, bookSummary(state, m, t).hash as string);
          bests.set(t, bestOf(state, m, t));
          perToken.set(t, []);
        }
        for (const ch of e.changes) {
          for (const t of m.tokenIds) {
            const yes = t === m.yesTokenId;
            const b = bests.get(t)!;
            perToken.get(t)!.push({
              asset_id: t,
              price: fmtPrice(yes ? ch.price : PRICE_SCALE - ch.price),
              size: fmtSize(ch.size),
              side: yes ? ch.side : flip(ch.side),
              hash: hashes.get(t),
              best_bid: b.bid === null ? "0" : fmtPrice(b.bid),
              best_ask: b.ask === null ? "1" : fmtPrice(b.ask),
            });
          }
        }
        const ts = now();
        forMarket(m, (c, ids) => {
          send(c, {
            event_type: "price_change",
            market: m.conditionId,
            price_changes: ids.flatMap((t) => perToken.get(t)!),
            timestamp: ts,
          });
          if (!c.custom) return;
          for (const t of ids) {
            const b = bests.get(t)!;
            if (b.bid === null || b.ask === null) continue;
            send(c, {
              event_type: "best_bid_ask",
              market: m.conditionId,
              asset_id: t,
              best_bid: fmtPrice(b.bid),
              best_ask: fmtPrice(b.ask),
              spread: fmtPrice(b.ask - b.bid),
              timestamp: ts,
            });
          }
        });
        return;
      }
      // `last_trade_price` — VENUES.md §1.4.
      case "trade": {
        const m = e.market;
        const ts = now();
        forMarket(m, (c, ids) => {
          for (const t of ids) {
            const yes = t === m.yesTokenId;
            send(c, {
              event_type: "last_trade_price",
              market: m.conditionId,
              asset_id: t,
              price: fmtPrice(yes ? e.yesPrice : PRICE_SCALE - e.yesPrice),
              size: fmtSize(e.size),
              fee_rate_bps: "0",
              side: yes ? e.yesSide : flip(e.yesSide),
              timestamp: ts,
              transaction_hash: e.txHash,
            });
          }
        });
        return;
      }
      // `tick_size_change` — VENUES.md §1.4.
      case "tick_size": {
        const m = e.market;
        const ts = now();
        forMarket(m, (c, ids) => {
          for (const t of ids)
            send(c, {
              event_type: "tick_size_change",
              market: m.conditionId,
              asset_id: t,
              old_tick_size: fmtPrice(e.oldTick),
              new_tick_size: fmtPrice(e.newTick),
              timestamp: ts,
            });
        });
        return;
      }
      // `market_resolved` (custom_feature_enabled only) — VENUES.md §1.4.
      case "resolved": {
        const m = e.market;
        const winner = m.resolution === "yes" ? m.yesTokenId : m.noTokenId;
        forMarket(m, (c) => {
          if (!c.custom) return;
          send(c, {
            event_type: "market_resolved",
            id: m.id,
            market: m.conditionId,
            assets_ids: m.tokenIds,
            winning_asset_id: winner,
            winning_outcome: m.outcomes[m.tokenIds.indexOf(winner)],
            timestamp: now(),
          });
        });
        return;
      }
      // `new_market` (custom_feature_enabled only) — VENUES.md §1.4.
      case "new_market": {
        const m = e.market;
        const msg = {
          event_type: "new_market",
          id: m.id,
          question: m.seed.question,
          market: m.conditionId,
          slug: m.slug,
          description: m.seed.rules,
          assets_ids: m.tokenIds,
          outcomes: m.outcomes,
          event_message: {
            id: m.event.id,
            ticker: m.event.slug,
            slug: m.event.slug,
            title: m.event.title,
            description: m.seed.rules,
          },
          timestamp: now(),
        };
        for (const c of clients) if (c.kind === "market" && c.custom) send(c, msg);
        return;
      }
      // User channel `order` (PLACEMENT | UPDATE | CANCELLATION) — VENUES.md §1.4.
      case "order": {
        const o = e.order;
        if (o.owner === null) return;
        const j = openOrderJson(o);
        toUser(o.owner, o.market, {
          event_type: "order",
          type: e.type,
          id: j.id,
          owner: o.owner,
          order_owner: o.owner,
          maker_address: j.maker_address,
          market: j.market,
          asset_id: j.asset_id,
          side: j.side,
          price: j.price,
          original_size: j.original_size,
          size_matched: j.size_matched,
          outcome: j.outcome,
          order_type: j.order_type,
          status: o.status,
          expiration: j.expiration,
          associate_trades: j.associate_trades,
          created_at: String(o.createdAt),
          timestamp: now(),
        });
        return;
      }
      // User channel `trade` (MATCHED → MINED → CONFIRMED) — VENUES.md §1.4.
      case "user_trade": {
        const t = e.trade;
        const owners = new Set<string>();
        if (t.takerOwner) owners.add(t.takerOwner);
        for (const f of t.makers) if (f.order.owner) owners.add(f.order.owner);
        for (const owner of owners)
          toUser(owner, t.market, {
            event_type: "trade",
            type: "TRADE",
            ...tradeJson(t, owner),
            timestamp: now(),
          });
        return;
      }
    }
  };
  const unsubscribe = state.subscribe(onFeed);

  return {
    dropAll() {
      for (const c of clients) c.socket.terminate();
      clients.clear();
    },
    stallMarketSockets() {
      let n = 0;
      for (const c of clients)
        if (c.kind === "market") {
          c.stalled = true;
          n++;
        }
      return n;
    },
    marketSubscriptions: () =>
      [...clients].filter((c): c is MarketClient => c.kind === "market").map((c) => c.assets.size),
    clientCount: () => clients.size,
    close: () =>
      new Promise<void>((resolve) => {
        unsubscribe();
        server.off("upgrade", onUpgrade);
        for (const c of clients) c.socket.terminate();
        clients.clear();
        wss.close(() => resolve());
      }),
  };
}
