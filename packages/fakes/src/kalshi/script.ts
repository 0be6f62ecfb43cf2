/**
 * The test-facing control surface of the fake Kalshi: register API keys, shape books, print trades,
 * close and resolve markets, step the simulation, and switch on each failure mode. Everything a test
 * can observe over the wire can be arranged from here, deterministically.
 */
import type { Ctx, MalformKind } from "./context";
import {
  closeMarket as closeM,
  houseTake,
  resolveMarket as resolveM,
  setHouseBook,
  tick as tickOnce,
} from "./engine";
import { marketPayload, tradePayload } from "./payloads";
import type { KMarket } from "./state";
import { COUNT_SCALE, PRICE_SCALE } from "./units";
import type { KalshiWs } from "./ws";

export interface KalshiScript {
  /** Registers an RSA public key (PEM, SPKI or PKCS#1) under `keyId`; each key is its own account. */
  addApiKey(key: { keyId: string; publicKeyPem: string; balanceCents?: number }): void;
  /** Sets the account cash of a key's owner, in cents. */
  setBalance(keyId: string, cents: number): void;
  /**
   * Gives a key's owner a position as if bought elsewhere (the venue's site, another app): signed
   * `contracts` (+ YES, − NO; 0 clears it), bought at `averagePrice` dollars of the held side
   * (default: the market's last price for that side). Shows in `GET /portfolio/positions`.
   */
  setPosition(keyId: string, ticker: string, position: { contracts: number; averagePrice?: number }): void;
  /** Replaces the fake's own liquidity: YES bids and NO bids as `[priceDollars, contracts]`. */
  setBook(ticker: string, book: { yes?: [number, number][]; no?: [number, number][] }): void;
  /**
   * Outside flow: a taker on `side` ("yes" lifts YES asks, "no" hits YES bids) for `count`
   * contracts, up to `price` (YES dollars) if given. With no crossing liquidity and a price, the
   * trade is printed anyway (a trade that happened elsewhere). Returns the wire trades.
   */
  printTrade(
    ticker: string,
    trade: { side: "yes" | "no"; count: number; price?: number },
  ): Record<string, unknown>[];
  resolveMarket(ticker: string, result: "yes" | "no"): void;
  closeMarket(ticker: string): void;
  /**
   * Moves the historical cutoff (unix ms or ISO time; null = nothing archived): markets settled,
   * fills created and orders closed before it leave the live endpoints for `/historical/*`.
   */
  setHistoricalCutoff(at: number | string | null): void;
  /** Lets a market take fractional counts (0.01 contract), which the wire no longer announces. */
  setFractional(ticker: string, on: boolean): void;
  /** 503 on every REST call and WebSocket upgrade; going down also drops open sockets. */
  goDown(down: boolean): void;
  rateLimitNext(n: number, retryAfterSeconds: number): void;
  injectUnexpectedFields(on: boolean): void;
  malformNext(kind: MalformKind, options?: { count?: number; path?: string }): void;
  setLatency(ms: number): void;
  dropWebSockets(): void;
  skipSequenceNext(ticker: string): void;
  /** Requests seen for `"METHOD /route"` (e.g. `"POST /portfolio/events/orders"`). */
  requestCount(key: string): number;
  requestCounts(): Record<string, number>;
  /** Sum over every route under `/portfolio` that places, amends or cancels orders. */
  tradingRequestCount(): number;
  resetRequestCounts(): void;
  /** Advances the simulation `n` steps (books move with trades). */
  tick(n?: number): void;
  /** The market as `GET /markets/{ticker}` would show it. */
  market(ticker: string): Record<string, unknown>;
  /** Tickers in listing order (combos first), optionally only the open, non-combo ones. */
  tickers(options?: { openOnly?: boolean; includeMve?: boolean }): string[];
}

export function createScript(ctx: Ctx, ws: KalshiWs): KalshiScript {
  const { state, faults } = ctx;
  const market = (ticker: string): KMarket => {
    const m = state.markets.get(ticker);
    if (!m) throw new Error(`fake kalshi: unknown market ${ticker}`);
    return m;
  };
  return {
    addApiKey({ keyId, publicKeyPem, balanceCents }) {
      const userId = `user-${keyId}`;
      state.apiKeys.set(keyId, { keyId, publicKeyPem, userId });
      state.account(userId).cashMicro = (balanceCents ?? 100_000) * 10_000;
    },
    setBalance(keyId, cents) {
      const k = state.apiKeys.get(keyId);
      if (!k) throw new Error(`fake kalshi: unknown key ${keyId}`);
      state.account(k.userId).cashMicro = cents * 10_000;
    },
    setPosition(keyId, ticker, { contracts, averagePrice }) {
      const k = state.apiKeys.get(keyId);
      if (!k) throw new Error(`fake kalshi: unknown key ${keyId}`);
      const m = market(ticker);
      const count = Math.round(contracts * COUNT_SCALE);
      const side = count >= 0 ? m.lastPrice : PRICE_SCALE - m.lastPrice;
      const price = averagePrice === undefined ? side : Math.round(averagePrice * PRICE_SCALE);
      const acct = state.account(k.userId);
      const held = acct.positions.get(ticker);
      acct.positions.set(ticker, {
        ticker,
        eventTicker: m.eventTicker,
        position: count,
        exposureMicro: Math.abs(count) * price,
        realizedMicro: held?.realizedMicro ?? 0,
        feesMicro: held?.feesMicro ?? 0,
        tradedMicro: (held?.tradedMicro ?? 0) + Math.abs(count) * price,
        updatedMs: state.nowMs(),
      });
    },
    setBook(ticker, book) {
      setHouseBook(state, market(ticker), book);
    },
    printTrade(ticker, t) {
      const m = market(ticker);
      const count = Math.round(t.count * COUNT_SCALE);
      const limit = t.price === undefined ? undefined : Math.round(t.price * PRICE_SCALE);
      const trades = houseTake(state, m, t.side, count, limit);
      if (trades.length === 0 && limit !== undefined) {
        const trade = {
          tradeId: state.nextId("trade"),
          ticker,
          yesPrice: limit,
          count,
          takerSide: t.side,
          createdMs: state.nowMs(),
        };
        state.trades.push(trade);
        m.lastPrice = limit;
        m.lastTradeSize = count;
        m.volume += count;
        m.volume24h += count;
        state.emit({ kind: "trade", trade });
        state.emit({ kind: "ticker", ticker });
        trades.push(trade);
      }
      return trades.map(tradePayload);
    },
    resolveMarket(ticker, result) {
      resolveM(state, market(ticker), result);
    },
    closeMarket(ticker) {
      closeM(state, market(ticker));
    },
    setHistoricalCutoff(at) {
      const ms = at === null ? null : typeof at === "number" ? at : Date.parse(at);
      if (ms !== null && !Number.isFinite(ms)) throw new Error("fake kalshi: cutoff is not a time");
      state.historicalCutoffMs = ms;
    },
    setFractional(ticker, on) {
      market(ticker).fractional = on;
    },
    goDown(down) {
      faults.down = down;
      // An outage also cuts live feeds; reconnects are refused with 503 until it is over.
      if (down) ws.dropAll();
    },
    rateLimitNext(n, retryAfterSeconds) {
      faults.rateLimit = { remaining: n, retryAfterSeconds };
    },
    injectUnexpectedFields(on) {
      faults.unexpectedFields = on;
    },
    malformNext(kind, options) {
      faults.malform.push({ kind, remaining: options?.count ?? 1, path: options?.path ?? null });
    },
    setLatency(ms) {
      faults.latencyMs = ms;
    },
    dropWebSockets() {
      ws.dropAll();
    },
    skipSequenceNext(ticker) {
      market(ticker);
      faults.skipSeq.add(ticker);
    },
    requestCount(key) {
      return faults.counts.get(key) ?? 0;
    },
    requestCounts() {
      return Object.fromEntries(faults.counts);
    },
    tradingRequestCount() {
      let n = 0;
      for (const [k, v] of faults.counts) if (/^(POST|DELETE|PUT) \/portfolio\//.test(k)) n += v;
      return n;
    },
    resetRequestCounts() {
      faults.counts.clear();
    },
    tick(n = 1) {
      for (let i = 0; i < n; i++) tickOnce(state);
    },
    market(ticker) {
      return marketPayload(market(ticker));
    },
    tickers(options) {
      return state.marketOrder
        .filter((m) => (options?.openOnly ? m.status === "active" : true))
        .filter((m) => (options?.includeMve === false ? m.mve === null : true))
        .map((m) => m.ticker);
    },
  };
}
