/** A small test client for the price stream: collects messages and waits for the ones asked for. */
import WebSocket from "ws";
import type { OrderBook } from "../../src/venues/model";

/** A one-level YES book, as a feed would publish it. */
export const book = (marketId: string, bid: number, ask: number): OrderBook => ({
  marketId,
  yes: { bids: [{ price: bid, size: 1_000_000 }], asks: [{ price: ask, size: 1_000_000 }] },
  no: { bids: [], asks: [] },
  timestamp: "t",
  sequence: null,
});

export interface StreamMessage {
  type: string;
  [field: string]: unknown;
}

export class StreamClient {
  readonly messages: StreamMessage[] = [];
  closed: { code: number; reason: string } | undefined;
  #waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      this.messages.push(JSON.parse(data.toString()) as StreamMessage);
      this.#wake();
    });
    ws.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.#wake();
    });
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** Opens a connection; resolves once open, rejects with the HTTP status of a refused upgrade. */
  static connect(url: string, key?: string, headers: Record<string, string> = {}): Promise<StreamClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, {
        headers: { ...headers, ...(key ? { authorization: `Bearer ${key}` } : {}) },
      });
      const client = new StreamClient(ws);
      ws.once("open", () => resolve(client));
      ws.once("unexpected-response", (_request, response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => {
          body += chunk.toString();
        });
        response.on("end", () => reject(new UpgradeRefused(response.statusCode ?? 0, body)));
      });
      ws.once("error", (error) => reject(error));
    });
  }

  send(message: unknown): void {
    this.ws.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  /** The first message (from `from` on) matching `predicate`, waiting up to 5 s. */
  async next(predicate: (m: StreamMessage) => boolean, from = 0, timeoutMs = 5_000): Promise<StreamMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.slice(from).find(predicate);
      if (found) return found;
      if (this.closed) throw new Error(`closed (${this.closed.code}) before a matching message`);
      if (Date.now() > deadline) throw new Error(`no matching message; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** Resolves with the close code once the server closes the connection. */
  async closedWith(timeoutMs = 5_000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error("still open");
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return this.closed;
  }

  updates(marketId?: string): StreamMessage[] {
    return this.messages.filter(
      (m) => m.type === "price_update" && (!marketId || m["market_id"] === marketId),
    );
  }

  close(): void {
    this.ws.close();
  }
}

export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`upgrade refused with ${status}: ${body}`);
  }
}
