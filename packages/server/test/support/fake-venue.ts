/**
 * An in-memory Venue for tests of the layers above the adapters (catalog, prices, orders): markets
 * you set, failures you switch on. Adapter behaviour itself is tested against the fake venue
 * servers in packages/fakes.
 */
import { VenueError } from "../../src/venues/errors";
import type { OrderBook, VenueEvent, VenueId, VenueMarket } from "../../src/venues/model";
import type { FeedEvent, FeedSubscription, Venue, VenueCapabilities } from "../../src/venues/venue";

export function testMarket(venue: VenueId, key: string, overrides: Partial<VenueMarket> = {}): VenueMarket {
  return {
    id: `${venue}:${key}`,
    venue,
    venueMarketId: key,
    eventId: null,
    title: `Market ${key}`,
    question: `Will ${key} happen?`,
    rules: `Resolves Yes if ${key} happens.`,
    settlementSource: "Official source",
    outcomes: {
      yes: { label: "Yes", venueTokenId: `${key}-yes` },
      no: { label: "No", venueTokenId: `${key}-no` },
    },
    status: "open",
    resolution: null,
    openTime: "2026-01-01T00:00:00.000Z",
    closeTime: "2026-12-31T23:59:59.000Z",
    tickSize: 10_000,
    minSize: 1_000_000,
    volume: 5_000_000_000,
    volume24h: 100_000_000,
    liquidity: 2_000_000_000,
    url: `https://example.invalid/${key}`,
    lastPrice: 420_000,
    bestBid: 410_000,
    bestAsk: 430_000,
    price24hAgo: null,
    negRisk: false,
    fees: null,
    updatedAt: "2026-11-22T12:00:00.000Z",
    ...overrides,
  };
}

export class TestVenue implements Venue {
  readonly capabilities: VenueCapabilities;
  markets = new Map<string, VenueMarket>();
  events: VenueEvent[] = [];
  failWith: VenueError | undefined;
  calls: string[] = [];

  constructor(readonly id: VenueId) {
    this.capabilities = {
      venue: id,
      displayName: id === "polymarket" ? "Polymarket" : "Kalshi",
      urls: { production: { api: `https://${id}.example.invalid` }, sandbox: null },
      supports: {
        events: true,
        orderBook: true,
        priceHistory: true,
        candles: ["1m", "1h", "1d"],
        feed: true,
        trading: true,
        orderTypes: ["limit", "market"],
        timeInForce: ["GTC", "GTD", "IOC", "FOK"],
        nativeNoBook: id === "polymarket",
      },
      rateLimits: { read: { requests: 100, windowMs: 1000 }, trade: { requests: 10, windowMs: 1000 } },
      fees: { model: id, description: "test" },
    };
  }

  set(...markets: VenueMarket[]): this {
    for (const market of markets) this.markets.set(market.id, market);
    return this;
  }

  #check(call: string) {
    this.calls.push(call);
    if (this.failWith) throw this.failWith;
  }

  async listEvents(): Promise<VenueEvent[]> {
    this.#check("listEvents");
    return this.events;
  }
  async listMarkets(query: { status?: string } = {}): Promise<VenueMarket[]> {
    this.#check("listMarkets");
    return [...this.markets.values()].filter(
      (m) => !query.status || query.status === "all" || m.status === query.status,
    );
  }
  async getMarket(id: string): Promise<VenueMarket> {
    this.#check(`getMarket ${id}`);
    const market = this.markets.get(id);
    if (!market) throw new VenueError(this.id, "not_found", `no market ${id}`, { status: 404 });
    return market;
  }
  /** Books `getOrderBook` returns (the sandbox walks them); an empty book otherwise. */
  books = new Map<string, OrderBook>();

  async getOrderBook(id: string): Promise<OrderBook> {
    this.#check(`getOrderBook ${id}`);
    const book = this.books.get(id);
    if (book) return book;
    return {
      marketId: id,
      yes: { bids: [], asks: [] },
      no: { bids: [], asks: [] },
      timestamp: new Date(0).toISOString(),
      sequence: null,
    };
  }
  async getPriceHistory(): Promise<never[]> {
    this.#check("getPriceHistory");
    return [];
  }
  /** The live subscription, as the layer above asked for it. */
  subscribed = new Set<string>();
  feedHandler: ((event: FeedEvent) => void) | undefined;

  async subscribe(marketIds: string[], onEvent: (event: FeedEvent) => void): Promise<FeedSubscription> {
    this.#check("subscribe");
    for (const id of marketIds) this.subscribed.add(id);
    this.feedHandler = onEvent;
    onEvent({ kind: "connection", state: "connected" });
    return {
      add: async (ids) => {
        for (const id of ids) this.subscribed.add(id);
      },
      remove: async (ids) => {
        for (const id of ids) this.subscribed.delete(id);
      },
      close: async () => {
        this.subscribed.clear();
        this.feedHandler = undefined;
      },
    };
  }

  /** Pushes a feed event as the venue's WebSocket would. */
  emit(event: FeedEvent): void {
    this.feedHandler?.(event);
  }
  #noTrading(): never {
    throw new VenueError(this.id, "rejected", "trading is not simulated by TestVenue");
  }
  async placeOrder(): Promise<never> {
    this.#noTrading();
  }
  async cancelOrder(): Promise<never> {
    this.#noTrading();
  }
  async getOrder(): Promise<never> {
    this.#noTrading();
  }
  async listOrders(): Promise<never> {
    this.#noTrading();
  }
  async listFills(): Promise<never> {
    this.#noTrading();
  }
  async listPositions(): Promise<never> {
    this.#noTrading();
  }
  async getBalance(): Promise<never> {
    this.#noTrading();
  }
}
