/**
 * The test-facing control panel of the fake: set books, print trades, resolve or close markets,
 * fail on purpose (503, 429 with Retry-After, malformed or surprising payloads, latency, dropped
 * sockets), count requests per endpoint, and advance the simulation one deterministic step at a time.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { FairValues } from "../fair";
import type { SeedMarket } from "../world/seed";
import type { PmMarket, PolymarketState, Side } from "./state";
import { MICRO, PRICE_SCALE, parseScaled, Rng } from "./units";
import type { WsHub } from "./ws";

export type MalformKind =
  /** A 200 answer whose body is not JSON at all. */
  | "garbage"
  /** JSON cut off half way. */
  | "truncated"
  /** Key fields removed from every object (e.g. `clobTokenIds`, `bids`, `price`). */
  | "missing-fields"
  /** Unknown fields added to every object. */
  | "unexpected-fields"
  /** Decimal strings turned into numbers and numbers into strings. */
  | "wrong-types";

export type LevelInput =
  | { price: number | string; size: number | string }
  | [number | string, number | string];

export interface BookInput {
  bids: LevelInput[];
  asks: LevelInput[];
}

export interface WalletInput {
  /** The signer (EOA); for a deposit wallet (type 3), the wallet's owner. */
  address: string;
  /**
   * Proxy / safe wallet that holds the funds (the order's `maker`) for signature types 1 and 2; the
   * deposit wallet (the order's `maker` and `signer`, checked under ERC-1271) for type 3.
   */
  funder?: string;
  signatureType?: 0 | 1 | 2 | 3;
  /** pUSD balance of the funding wallet, in dollars. */
  collateral?: number | string;
  /** Outcome-token balances of the funding wallet: token id (or market key + ":yes"/":no") → shares. */
  positions?: Record<string, number | string>;
}

export interface MarketInfo {
  id: string;
  key: string;
  slug: string;
  conditionId: string;
  yesTokenId: string;
  noTokenId: string;
  tokenIds: [string, string];
  outcomes: [string, string];
  negRisk: boolean;
  tickSize: number;
  status: string;
}

/** Mutable failure switches read by the HTTP hooks and the WS hub. */
export class Faults {
  down = false;
  latencyMs = 0;
  rateLimited = 0;
  retryAfter = 1;
  malform: { remaining: number; kind: MalformKind; match?: string } | null = null;
  unexpectedFields = false;
  wsMalform: { remaining: number; kind: MalformKind } | null = null;
  readonly counts = new Map<string, number>();
}

/** Order, cancel, account and key endpoints: what a sandbox must never call. */
const TRADING =
  /^(POST \/clob\/orders?$|DELETE \/clob\/(order|orders|cancel-all|cancel-market-orders)$|GET \/clob\/data\/|GET \/clob\/balance-allowance|POST \/clob\/v1\/heartbeats|[A-Z]+ \/clob\/auth\/|WS \/clob\/ws\/user)/;

const MISSING = [
  "outcomes",
  "outcomePrices",
  "clobTokenIds",
  "conditionId",
  "bids",
  "asks",
  "price",
  "mid",
  "history",
  "asset_id",
  "markets",
  "data",
  "next_cursor",
];

function transform(value: unknown, kind: MalformKind, depth = 0): unknown {
  if (Array.isArray(value)) return value.map((v) => transform(v, kind, depth + 1));
  if (value === null || typeof value !== "object") {
    if (kind !== "wrong-types") return value;
    if (typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value) && value.length < 16) return Number(value);
    if (typeof value === "number") return String(value);
    return value;
  }
  const out: Record<string, unknown> = {};
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  // A keyset page (`{markets|events: [...], next_cursor?}`) stays whole: the rows in it lose their fields.
  const envelope =
    depth === 0 &&
    (Array.isArray(obj.markets) || Array.isArray(obj.events)) &&
    !("conditionId" in obj || "slug" in obj);
  const drop = kind === "missing-fields" && !envelope ? MISSING.filter((k) => k in obj) : [];
  if (kind === "missing-fields" && !envelope && drop.length === 0 && depth === 0 && keys[0])
    drop.push(keys[0]);
  for (const k of keys) if (!drop.includes(k)) out[k] = transform(obj[k], kind, depth + 1);
  if (kind === "unexpected-fields") {
    out.unexpectedField = "surprise";
    out.x_fake_extension = { nested: [1, "two", null], enabled: true };
  }
  return out;
}

export function malformPayload(payload: string, kind: MalformKind): string {
  if (kind === "garbage")
    return "<html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>";
  if (kind === "truncated") return payload.slice(0, Math.max(1, Math.floor(payload.length / 2)));
  try {
    return JSON.stringify(transform(JSON.parse(payload), kind));
  } catch {
    return payload;
  }
}

/** Applied to every outgoing WS frame: scripted malformed frames, then injected fields. */
export function rewriteWsFrame(faults: Faults, text: string): string {
  const mal = faults.wsMalform;
  if (mal && mal.remaining > 0) {
    mal.remaining -= 1;
    if (mal.remaining === 0) faults.wsMalform = null;
    return malformPayload(text, mal.kind);
  }
  return faults.unexpectedFields ? malformPayload(text, "unexpected-fields") : text;
}

/** onRequest/onSend hooks that apply the fault switches and count requests per endpoint. */
export function installFaultHooks(app: FastifyInstance, faults: Faults, service: string): void {
  const keyOf = (req: FastifyRequest) =>
    `${req.method} /${service}${req.routeOptions.url ?? req.url.split("?")[0]}`;
  app.addHook("onRequest", async (req: FastifyRequest, reply: FastifyReply) => {
    const key = keyOf(req);
    faults.counts.set(key, (faults.counts.get(key) ?? 0) + 1);
    if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
    if (faults.down) return reply.code(503).send({ error: "Service Unavailable" });
    if (faults.rateLimited > 0) {
      faults.rateLimited -= 1;
      return reply
        .code(429)
        .header("Retry-After", String(faults.retryAfter))
        .send({ error: "Too Many Requests" });
    }
  });
  app.addHook("onSend", async (req, reply, payload) => {
    if (typeof payload !== "string" || reply.statusCode >= 400) return payload;
    const mal = faults.malform;
    if (mal && mal.remaining > 0 && (!mal.match || keyOf(req).includes(mal.match))) {
      mal.remaining -= 1;
      if (mal.remaining === 0) faults.malform = null;
      if (mal.kind === "garbage") reply.header("content-type", "text/html");
      return malformPayload(payload, mal.kind);
    }
    if (faults.unexpectedFields) return malformPayload(payload, "unexpected-fields");
    return payload;
  });
}

export interface PolymarketScript {
  /** Ids of a market by seed key, slug, condition id or token id. */
  market(ref: string): MarketInfo;
  markets(): MarketInfo[];
  /** Replace a book. With a token id the levels are that token's; otherwise they are YES levels. */
  setBook(ref: string, book: BookInput): void;
  /** A trade prints on the feed; it takes any crossing liquidity up to `size`. Price in the ref's terms. */
  printTrade(ref: string, trade: { price: number | string; size: number | string; side?: Side }): void;
  /** List a new market now (Gamma, CLOB and a `new_market` WS event for custom-feature subscribers). */
  addMarket(seed: SeedMarket): MarketInfo;
  resolveMarket(ref: string, outcome: "yes" | "no"): void;
  closeMarket(ref: string): void;
  setTickSize(ref: string, tick: 0.1 | 0.01 | 0.001 | 0.0001): void;
  /**
   * A market's taker fee schedule from now on (Gamma `feeSchedule`, CLOB `fd`, and what takers are
   * charged): `false` makes it fee-free; base fees are 1000 on a fee-enabled market.
   */
  setFees(ref: string, fees: false | { rate: number; exponent: number; takerOnly?: boolean }): void;
  /** Exchange version served by GET /version (EIP-712 domain version for orders). */
  setExchangeVersion(v: 2 | 3): void;
  goDown(down: boolean): void;
  rateLimitNext(n: number, retryAfterSeconds?: number): void;
  /** Malform the next `n` successful JSON answers (optionally only routes whose "METHOD /path" contains `match`). */
  malformNext(n: number, kind: MalformKind, match?: string): void;
  /** Malform the next `n` WebSocket JSON frames (any channel). */
  malformNextWs(n: number, kind: MalformKind): void;
  /** Add unknown fields to every HTTP answer and WS frame while on. */
  injectUnexpectedFields(on: boolean): void;
  setLatency(ms: number): void;
  dropWebSockets(): void;
  /**
   * Stalls every open market-channel socket: it still answers PING with PONG but sends no book, price
   * or trade message again (a stalled subscription). New connections are not stalled. Returns how many.
   */
  stallMarketSockets(): number;
  /** Assets subscribed on each open market-channel socket. */
  marketSubscriptions(): number[];
  registerWallet(w: WalletInput): void;
  /** Requests per endpoint, keyed "METHOD /service/route" (e.g. "GET /clob/book", "POST /clob/order"). */
  requests(): Record<string, number>;
  requestCount(key: string): number;
  /** All calls to order, cancel, account and key endpoints, and user-channel connections. */
  tradingRequestCount(): number;
  resetRequests(): void;
  /** Advance the simulation `n` steps: simulated trades, requotes, trade lifecycle, GTD expiry. */
  tick(n?: number): void;
}

export function createScript(deps: {
  state: PolymarketState;
  faults: Faults;
  ws: () => WsHub | null;
  funders: Map<string, string>;
  setVersion: (v: 2 | 3) => void;
  /** The cross-venue fair values markets with a twin on the other venue follow; none: all wander. */
  fair?: FairValues | null;
}): PolymarketScript {
  const { state, faults } = deps;
  const fair = deps.fair ?? null;
  const sim = new Rng(state.seed ^ 0x5eed);
  /** Simulation steps taken: the position on the shared fair-value paths. */
  let step = 0;

  const find = (ref: string): PmMarket => {
    const m = state.resolveMarket(ref) ?? state.markets.find((x) => x.slug === ref || x.id === ref);
    if (!m) throw new Error(`polymarket fake: unknown market or token ${ref}`);
    return m;
  };
  const info = (m: PmMarket): MarketInfo => ({
    id: m.id,
    key: m.seed.key,
    slug: m.slug,
    conditionId: m.conditionId,
    yesTokenId: m.yesTokenId,
    noTokenId: m.noTokenId,
    tokenIds: m.tokenIds,
    outcomes: m.outcomes,
    negRisk: m.negRisk,
    tickSize: m.tick / PRICE_SCALE,
    status: m.status,
  });
  const price = (v: number | string): number => {
    const p = parseScaled(typeof v === "number" ? Number(v.toFixed(4)) : v, PRICE_SCALE);
    if (p === null || p <= 0 || p >= PRICE_SCALE) throw new Error(`polymarket fake: bad price ${v}`);
    return p;
  };
  const size = (v: number | string): number => {
    const s = parseScaled(typeof v === "number" ? Number(v.toFixed(6)) : v, MICRO);
    if (s === null || s <= 0) throw new Error(`polymarket fake: bad size ${v}`);
    return s;
  };
  const level = (l: LevelInput) =>
    Array.isArray(l)
      ? { price: price(l[0]), size: size(l[1]) }
      : { price: price(l.price), size: size(l.size) };

  /** The quote last posted on each market that follows the shared fair value. */
  const posted = new Map<PmMarket, { bid: number; ask: number }>();
  /**
   * One step of a market that follows the shared fair value: outside flow takes from the top (the
   * side a lagging quote is mispriced on, when `lean` says so), and the house requotes from the
   * quoted bid and ask when they moved (else now and then, as the other markets do).
   */
  const followQuote = (m: PmMarket, quote: { bid: number; ask: number }, lean: "yes" | "no" | null) => {
    const { bid, ask } = state.bestYes(m);
    if (sim.next() < 0.6 && (bid !== null || ask !== null)) {
      const coin: Side = sim.next() < 0.5 ? "BUY" : "SELL";
      const wanted: Side = lean === "yes" ? "BUY" : lean === "no" ? "SELL" : coin;
      const side: Side = ask === null ? "SELL" : bid === null ? "BUY" : wanted;
      state.simulatedTake(m, side, side === "BUY" ? ask! : bid!, sim.int(5, 150) * MICRO);
    }
    m.fair = Math.round((quote.bid + quote.ask) / 2);
    const last = posted.get(m);
    if (last?.bid !== quote.bid || last.ask !== quote.ask || sim.next() < 0.5) {
      posted.set(m, quote);
      state.mutate(m, () => {
        state.quote(m, sim, quote);
        state.uncross(m);
      });
    }
  };

  const stepMarket = (m: PmMarket) => {
    if (m.status !== "open") return;
    const quote = fair?.quote("polymarket", m.seed.key, step);
    if (quote) return followQuote(m, quote, fair!.flow("polymarket", m.seed.key, step));
    const { bid, ask } = state.bestYes(m);
    if (sim.next() < 0.6 && (bid !== null || ask !== null)) {
      const side: Side = ask === null ? "SELL" : bid === null ? "BUY" : sim.next() < 0.5 ? "BUY" : "SELL";
      const limit = side === "BUY" ? ask! : bid!;
      state.simulatedTake(m, side, limit, sim.int(5, 150) * MICRO);
    }
    const drift = sim.pick([-1, 0, 0, 1]) * m.tick;
    const towards = m.lastTrade ? Math.sign(m.lastTrade.price - m.fair) * m.tick : 0;
    m.fair = Math.min(PRICE_SCALE - m.tick, Math.max(m.tick, m.fair + (sim.next() < 0.5 ? drift : towards)));
    if (sim.next() < 0.5) {
      state.mutate(m, () => {
        state.quote(m, sim);
        state.uncross(m);
      });
    }
  };

  return {
    market: (ref) => info(find(ref)),
    markets: () => state.markets.map(info),
    setFees(ref, fees) {
      const m = find(ref);
      m.fees =
        fees === false
          ? null
          : {
              rate: fees.rate,
              exponent: fees.exponent,
              rebateRate: m.fees?.rebateRate ?? 0.25,
              takerOnly: fees.takerOnly ?? true,
              baseFee: 1000,
            };
    },
    setBook(ref, book) {
      const m = find(ref);
      let bids = book.bids.map(level);
      let asks = book.asks.map(level);
      if (ref === m.noTokenId) {
        const comp = (l: { price: number; size: number }) => ({ price: PRICE_SCALE - l.price, size: l.size });
        [bids, asks] = [asks.map(comp), bids.map(comp)];
      }
      state.mutate(m, () => {
        state.setLevels(m, bids, asks);
        state.uncross(m);
      });
      state.emit({ kind: "book", market: m });
    },
    printTrade(ref, t) {
      const m = find(ref);
      const no = ref === m.noTokenId;
      const own = price(t.price);
      const yesPrice = no ? PRICE_SCALE - own : own;
      const ownSide = t.side ?? "BUY";
      const yesSide: Side = no ? (ownSide === "BUY" ? "SELL" : "BUY") : ownSide;
      const shares = size(t.size);
      const trade = state.crosses(m, true, yesSide, yesPrice)
        ? state.simulatedTake(m, yesSide, yesPrice, shares)
        : null;
      if (!trade) state.printOnly(m, yesSide, yesPrice, shares);
    },
    addMarket(seed) {
      const m = state.addSeed({ ...seed, venue: "polymarket" });
      state.emit({ kind: "new_market", market: m });
      return info(m);
    },
    resolveMarket: (ref, outcome) => state.finish(find(ref), "resolved", outcome),
    closeMarket: (ref) => state.finish(find(ref), "closed", null),
    setTickSize: (ref, tick) => state.setTick(find(ref), Math.round(tick * PRICE_SCALE)),
    setExchangeVersion: (v) => deps.setVersion(v),
    goDown(down) {
      faults.down = down;
      if (down) deps.ws()?.dropAll();
    },
    rateLimitNext(n, retryAfterSeconds = 1) {
      faults.rateLimited = n;
      faults.retryAfter = retryAfterSeconds;
    },
    malformNext(n, kind, match) {
      faults.malform = n > 0 ? { remaining: n, kind, ...(match ? { match } : {}) } : null;
    },
    malformNextWs(n, kind) {
      faults.wsMalform = n > 0 ? { remaining: n, kind } : null;
    },
    injectUnexpectedFields(on) {
      faults.unexpectedFields = on;
    },
    setLatency(ms) {
      faults.latencyMs = Math.max(0, ms);
    },
    dropWebSockets: () => deps.ws()?.dropAll(),
    stallMarketSockets: () => deps.ws()?.stallMarketSockets() ?? 0,
    marketSubscriptions: () => deps.ws()?.marketSubscriptions() ?? [],
    registerWallet(w) {
      const type = w.signatureType ?? (w.funder ? 2 : 0);
      if (w.funder && type !== 0)
        deps.funders.set(`${w.address.toLowerCase()}:${type}`, w.funder.toLowerCase());
      const wallet = state.wallet(w.funder && type !== 0 ? w.funder : w.address);
      if (w.collateral !== undefined) {
        const c = parseScaled(w.collateral, MICRO);
        if (c === null) throw new Error(`polymarket fake: bad collateral ${w.collateral}`);
        wallet.collateral = BigInt(c);
      }
      for (const [ref, amount] of Object.entries(w.positions ?? {})) {
        const [base, leg] = ref.split(/:(yes|no)$/);
        const m = find(base!);
        const token = leg === "yes" ? m.yesTokenId : leg === "no" ? m.noTokenId : ref;
        wallet.positions.set(token, BigInt(size(amount)));
      }
    },
    requests: () => Object.fromEntries(faults.counts),
    requestCount: (key) => faults.counts.get(key) ?? 0,
    tradingRequestCount: () =>
      [...faults.counts].filter(([k]) => TRADING.test(k)).reduce((a, [, n]) => a + n, 0),
    resetRequests: () => faults.counts.clear(),
    tick(n = 1) {
      for (let i = 0; i < n; i += 1) {
        step += 1;
        state.advanceTrades();
        state.expireOrders(Math.floor(state.clock() / 1000));
        for (const m of state.markets) stepMarket(m);
      }
    },
  };
}
