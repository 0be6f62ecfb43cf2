import { EventEmitter } from "node:events";
import { crossListings } from "@crossbook/fakes/world";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccountStream } from "../src/account-stream";
import { ORDER_EVENT_TYPES, OrderWatcher } from "../src/execution/order-watcher";
import { Crossbook, createRiskChain, Executor, liveRiskState, split } from "../src/index";
import { type Demo, startDemo } from "./support/demo";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stands in for an AccountStream: the test says when it is acknowledged, drops, and what arrives. */
class FakeStream extends EventEmitter {
  closed = false;
  #seq = 0;
  constructor(readonly options: { types?: readonly string[] } = {}) {
    super();
  }
  close() {
    if (this.closed) return;
    this.closed = true;
    this.emit("close", { code: 1000, reason: "client closed" });
  }
  ack() {
    this.emit("subscribed", { type: "subscribed", types: this.options.types, after: 0 });
  }
  order(type: string, orderId: string) {
    const seq = ++this.#seq;
    this.emit("event", {
      seq,
      id: `evt_${seq}`,
      type,
      timestamp: new Date().toISOString(),
      data: { order_id: orderId },
    });
  }
}

function fakeWatcher(options: { idleCloseMs?: number } = {}) {
  const opened: FakeStream[] = [];
  const watcher = new OrderWatcher({
    open: (o) => {
      const stream = new FakeStream(o);
      opened.push(stream);
      return stream as unknown as AccountStream;
    },
    ...options,
  });
  return { watcher, opened, stream: () => opened.at(-1)! };
}

describe("split", () => {
  it("slices an amount in cents with the remainder last", () => {
    expect(split(10, 3)).toEqual([3.33, 3.33, 3.34]);
    expect(split(5, 1)).toEqual([5]);
  });
});

describe("order watcher with a scripted stream", () => {
  it("opens the stream on first use, for the order events only", () => {
    const { watcher, opened } = fakeWatcher();
    expect(opened).toHaveLength(0);
    watcher.checkpoint();
    watcher.checkpoint();
    expect(opened).toHaveLength(1);
    expect(opened[0]!.options.types).toEqual([...ORDER_EVENT_TYPES]);
    watcher.close();
    expect(opened[0]!.closed).toBe(true);
  });

  it("answers at once for an event that arrived between placing and waiting, then waits for the next", async () => {
    const { watcher, stream } = fakeWatcher();
    const since = watcher.checkpoint();
    stream().ack();
    expect(watcher.live).toBe(true);
    const placedAfterAck = watcher.checkpoint();
    stream().order("order.partially_filled", "ord_1"); // before anyone waits
    // A 60 s timeout: only the remembered event can make this true.
    expect(await watcher.changed("ord_1", 60_000, placedAfterAck)).toBe(true);
    expect(watcher.lastEvent("ord_1")?.type).toBe("order.partially_filled");
    // Looked: nothing new until the next event.
    expect(await watcher.changed("ord_1", 20, since)).toBe(false);
    const waiting = watcher.changed("ord_1", 60_000);
    stream().order("order.filled", "ord_2"); // another order: no news for ord_1
    stream().order("order.filled", "ord_1");
    expect(await waiting).toBe(true);
    expect(watcher.lastEvent("ord_1")?.type).toBe("order.filled");
    watcher.close();
  });

  it("wakes waiters to re-read when it may have missed something: first subscription, a drop, close()", async () => {
    const { watcher, opened, stream } = fakeWatcher();
    const since = watcher.checkpoint();
    const beforeAck = watcher.changed("ord_1", 60_000, since);
    stream().ack(); // started from now: what happened since the checkpoint is unknown
    expect(await beforeAck).toBe(true);
    const beforeDrop = watcher.changed("ord_1", 60_000);
    stream().emit("close", { code: 1006, reason: "" });
    expect(watcher.live).toBe(false);
    expect(await beforeDrop).toBe(true);
    stream().emit("resumed", { type: "resumed", after: 0 }); // a resume replays: no resync
    expect(watcher.live).toBe(true);
    expect(await watcher.changed("ord_1", 20)).toBe(false);
    const beforeClose = watcher.changed("ord_1", 60_000);
    watcher.close();
    expect(await beforeClose).toBe(true);
    expect(stream().closed).toBe(true);
    // Closed for good: waits are timeouts and nothing reopens.
    expect(await watcher.changed("ord_1", 20)).toBe(false);
    expect(opened).toHaveLength(1);
  });

  it("waits are plain timeouts when no stream can be opened", async () => {
    const watcher = new OrderWatcher({
      open: () => {
        throw new Error("no stream here");
      },
    });
    expect(await watcher.changed("ord_1", 20, watcher.checkpoint())).toBe(false);
    expect(watcher.live).toBe(false);
    expect(await watcher.ready(20)).toBe(false);
  });

  it("closes an idle stream after idleCloseMs and reopens on the next use", async () => {
    const { watcher, opened } = fakeWatcher({ idleCloseMs: 10 });
    const release = watcher.hold();
    opened[0]!.ack();
    expect(await watcher.ready(1_000)).toBe(true);
    release();
    await expect.poll(() => opened[0]!.closed).toBe(true);
    expect(watcher.live).toBe(false);
    watcher.checkpoint();
    expect(opened).toHaveLength(2);
    watcher.close();
  });
});

/**
 * A scripted client whose one resting order fills `fillAfterMs` after it is placed, announced on a
 * scripted account stream (when the client has one).
 */
function restingClient(options: { fillAfterMs?: number; stream: boolean }) {
  const counts = { get: 0, prices: 0, streams: 0 };
  const streams: FakeStream[] = [];
  let filled = false;
  let placed: Record<string, unknown> | undefined;
  const fill = () => {
    filled = true;
    for (const s of streams) s.order("order.filled", "ord_1");
  };
  const view = () => ({
    ...placed,
    status: filled ? "filled" : "open",
    filled_amount: filled ? placed!.amount : 0,
    average_fill_price: filled ? placed!.price : null,
  });
  const client = {
    prices: {
      get: async (ids: string[]) => {
        counts.prices++;
        return { [ids[0]!]: { best_bid: 0.4, best_ask: 0.45 } };
      },
    },
    orders: {
      place: async (order: Record<string, unknown>) => {
        placed = { ...order, id: "ord_1", outcome: order.outcome ?? "yes" };
        if (options.fillAfterMs !== undefined) setTimeout(fill, options.fillAfterMs);
        return view();
      },
      get: async () => {
        counts.get++;
        return view();
      },
    },
    ...(options.stream
      ? {
          accountStream: (o: { types?: string[] }) => {
            counts.streams++;
            const stream = new FakeStream(o);
            streams.push(stream);
            setTimeout(() => stream.ack(), 5);
            return stream;
          },
        }
      : {}),
  } as unknown as Crossbook;
  return { client, counts, streams, fill };
}

describe("executor following fills with a scripted client", () => {
  const iceberg = (exec: Executor) =>
    exec.iceberg({
      market_id: "kalshi:A",
      side: "buy",
      price: 0.4,
      amount: 2,
      visible: 2,
      timeoutMs: 30_000,
    });

  it("iceberg re-reads its slice when the stream reports the fill, not on a timer", async () => {
    const { client, counts, streams } = restingClient({ fillAfterMs: 50, stream: true });
    const exec = new Executor(client, { pollMs: 60_000, safetyPollMs: 60_000 });
    try {
      const report = await iceberg(exec);
      expect(report).toMatchObject({ status: "done", filled: 2 });
      expect(report.steps.map((s) => s.action)).toEqual(["placed", "filled"]);
      expect(counts.streams).toBe(1);
      // Once when the stream was acknowledged after the slice was placed, once for the fill.
      expect(counts.get).toBeLessThanOrEqual(2);
    } finally {
      exec.close();
    }
    expect(streams[0]!.closed).toBe(true);
  });

  it("chase re-checks the book every pollMs but re-reads its order only on news", async () => {
    const { client, counts } = restingClient({ fillAfterMs: 300, stream: true });
    const exec = new Executor(client, { pollMs: 20, safetyPollMs: 60_000 });
    try {
      const report = await exec.chase({ market_id: "kalshi:A", side: "buy", amount: 2, priceCap: 0.5 });
      expect(report).toMatchObject({ status: "done", filled: 2 });
      expect(counts.prices).toBeGreaterThan(counts.get + 2);
      expect(counts.get).toBeLessThanOrEqual(2);
    } finally {
      exec.close();
    }
  });

  it('polls with watch: "poll", and when the client has no accountStream', async () => {
    for (const [stream, watch] of [
      [true, "poll"],
      [false, undefined],
    ] as const) {
      const { client, counts } = restingClient({ fillAfterMs: 50, stream });
      const exec = new Executor(client, { pollMs: 10, ...(watch ? { watch } : {}) });
      const report = await iceberg(exec);
      exec.close();
      expect(report).toMatchObject({ status: "done", filled: 2 });
      expect(counts.streams).toBe(0);
      expect(counts.get).toBeGreaterThanOrEqual(2); // polled until the fill showed
    }
  });

  it("falls back to polling every pollMs while the stream is down", async () => {
    const { client, counts, streams, fill } = restingClient({ stream: true });
    const exec = new Executor(client, { pollMs: 10, safetyPollMs: 60_000 });
    try {
      const working = iceberg(exec);
      await expect.poll(() => streams.length).toBe(1);
      await sleep(100);
      const quiet = counts.get; // live: no re-reads beyond the one at the acknowledgement
      expect(quiet).toBeLessThanOrEqual(1);
      streams[0]!.emit("close", { code: 1006, reason: "" }); // the connection drops
      await expect.poll(() => counts.get).toBeGreaterThan(quiet + 3);
      fill();
      expect(await working).toMatchObject({ status: "done", filled: 2 });
    } finally {
      exec.close();
    }
  });
});

describe("arbitrage executor with a scripted client", () => {
  /** A client whose compare shows a verified identity pair and whose second leg never fills. */
  function scripted(secondLegFills: boolean) {
    const placed: Array<Record<string, unknown>> = [];
    let n = 0;
    const client = {
      prices: {
        compare: async () => ({
          arbitrage: {
            match_id: "mat_1",
            status: "verified",
            size: 50,
            avg_edge: 0.03,
            edge_first_contract: 0.04,
            legs: [
              { platform: "kalshi", market_id: "kalshi:A", outcome: "yes", best_ask: 0.45 },
              { platform: "polymarket", market_id: "polymarket:B", outcome: "no", best_ask: 0.5 },
            ],
          },
        }),
      },
      orders: {
        place: async (order: Record<string, unknown>) => {
          placed.push(order);
          const id = `ord_${++n}`;
          const second = order.market_id === "polymarket:B";
          const filled = second && !secondLegFills ? 0 : (order.amount as number);
          return {
            id,
            market_id: order.market_id,
            side: order.side,
            outcome: order.outcome,
            amount: order.amount,
            price: order.price ?? 0.4,
            filled_amount: filled,
            average_fill_price: filled > 0 ? ((order.price as number) ?? 0.4) : null,
            status: filled > 0 ? "filled" : "cancelled",
          };
        },
      },
    } as unknown as Crossbook;
    return { client, placed };
  }

  it("places both legs when the second fills", async () => {
    const { client, placed } = scripted(true);
    const report = await new Executor(client).arbitrage("xev_1", 20, { minEdge: 0.01 });
    expect(report.status).toBe("done");
    expect(report.filled).toBe(20);
    expect(placed.map((o) => [o.market_id, o.side, o.outcome, o.time_in_force])).toEqual([
      ["kalshi:A", "buy", "yes", "IOC"],
      ["polymarket:B", "buy", "no", "IOC"],
    ]);
  });

  it("unwinds the first leg when the second does not fill", async () => {
    const { client, placed } = scripted(false);
    const report = await new Executor(client).arbitrage("xev_1", 20, { minEdge: 0.01 });
    expect(report.status).toBe("partial");
    expect(placed).toHaveLength(3);
    expect(placed[2]).toMatchObject({
      market_id: "kalshi:A",
      side: "sell",
      outcome: "yes",
      amount: 20,
      type: "market",
    });
    expect(report.steps.at(-1)?.reason).toMatch(/unwind/);
  });

  it("refuses an edge below the minimum without placing anything", async () => {
    const { client, placed } = scripted(true);
    const report = await new Executor(client).arbitrage("xev_1", 20, { minEdge: 0.05 });
    expect(report.status).toBe("failed");
    expect(report.steps[0]!.action).toBe("skipped");
    expect(placed).toHaveLength(0);
  });
});

describe("execution helpers against a running crossbook", () => {
  let demo: Demo;
  let client: Crossbook;
  let exec: Executor;
  let marketId: string;
  let ask: number;

  beforeAll(async () => {
    demo = await startDemo();
    client = new Crossbook({ apiKey: demo.sandboxKey, environment: "sandbox", baseUrl: demo.url });
    exec = new Executor(client, { pollMs: 50 });
    const followed = new Set(
      crossListings()
        .filter((l) => l.relation !== "lookalike")
        .map((l) => `kalshi:${l.kalshi}`),
    );
    for (let i = 0; i < 100 && !marketId; i++) {
      const { data } = await client.markets.list({ venue: "kalshi", status: "open", limit: 50 });
      // Not one of the world's cross-venue contracts: those follow a shared fair value with a house
      // ladder that rarely changes, so liquidity the sandbox takes stays taken for the next tests.
      const m = data.find(
        (x) =>
          !followed.has(x.id) &&
          x.best_ask !== null &&
          x.best_ask < 0.9 &&
          x.best_bid !== null &&
          x.best_bid > 0.1,
      );
      if (m) {
        marketId = m.id;
        ask = m.best_ask!;
      } else await new Promise((r) => setTimeout(r, 200));
    }
    expect(marketId).toBeDefined();
  }, 90_000);
  afterAll(async () => {
    exec?.close();
    await demo?.close();
  });

  /**
   * A market and a buy price one tick under its ask with a bid below that: the order rests (it does
   * not cross) with no volume ahead of it, so the next trade on the bid side, which prints through
   * its price, fills it. The fake venues trade every few ticks. A market is used once.
   */
  const used = new Set<string>();
  async function restingBuy(): Promise<{ market: string; price: number }> {
    for (let i = 0; i < 100; i++) {
      const { data } = await client.markets.list({ venue: "kalshi", status: "open", limit: 50 });
      const m = data.find(
        (x) =>
          x.id !== marketId &&
          !used.has(x.id) &&
          x.best_ask !== null &&
          x.best_bid !== null &&
          x.best_bid >= 0.2 &&
          x.best_ask <= 0.8 &&
          x.best_ask - x.best_bid >= 0.0199,
      );
      if (m) {
        used.add(m.id);
        return { market: m.id, price: Math.round((m.best_ask! - 0.01) * 100) / 100 };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("no market with a two-tick spread");
  }

  /** The client, counting order reads and account streams opened. */
  function counting() {
    const counts = { get: 0, streams: 0 };
    const opened: Array<{ connected: boolean }> = [];
    const wrapped = {
      prices: client.prices,
      orders: {
        ...client.orders,
        get: (id: string) => {
          counts.get++;
          return client.orders.get(id);
        },
      },
      accountStream: (options: Parameters<Crossbook["accountStream"]>[0]) => {
        counts.streams++;
        const stream = client.accountStream(options);
        opened.push(stream);
        return stream;
      },
    } as unknown as Crossbook;
    return { client: wrapped, counts, opened };
  }

  it("iceberg learns of a resting slice's fill from the account stream, long before any poll", async () => {
    const watched = counting();
    // Neither a poll, nor the safety net, nor the deadline comes within 50 s: only the stream can
    // end a slice sooner.
    const streamed = new Executor(watched.client, { pollMs: 60_000, safetyPollMs: 60_000 });
    try {
      let report: Awaited<ReturnType<Executor["iceberg"]>> | undefined;
      let elapsed = 0;
      for (let attempt = 0; attempt < 3 && report?.status !== "done"; attempt++) {
        const { market, price } = await restingBuy();
        watched.counts.get = 0;
        const started = Date.now();
        // The fake market can move away from a resting price. Then the test itself cancels the slice
        // after 8 s (the iceberg learns that from the stream too: an order.cancelled event) and tries
        // another market.
        const watchdog = setTimeout(async () => {
          for (const o of (await client.orders.list({ market_id: market })).data)
            await client.orders.cancel(o.id).catch(() => {});
        }, 8_000);
        report = await streamed.iceberg({
          market_id: market,
          side: "buy",
          price,
          amount: 1,
          visible: 1,
          timeoutMs: 50_000,
        });
        clearTimeout(watchdog);
        elapsed = Date.now() - started;
      }
      expect(report).toMatchObject({ status: "done", filled: 1 });
      expect(report!.steps.map((s) => s.action)).toEqual(["placed", "filled"]);
      expect(elapsed).toBeLessThan(50_000);
      expect(watched.counts.streams).toBe(1);
      // Read when the stream was acknowledged (if after the placement) and when the fill arrived:
      // no timer drove these reads.
      expect(watched.counts.get).toBeLessThanOrEqual(3);
    } finally {
      streamed.close();
    }
    await expect.poll(() => watched.opened.every((s) => !s.connected)).toBe(true);
  }, 60_000);

  it('with watch: "poll" the iceberg polls as before and opens no stream', async () => {
    const watched = counting();
    const polling = new Executor(watched.client, { watch: "poll" }); // every 500 ms, the default
    let report: Awaited<ReturnType<Executor["iceberg"]>> | undefined;
    for (let attempt = 0; attempt < 3 && report?.status !== "done"; attempt++) {
      const { market, price } = await restingBuy();
      report = await polling.iceberg({
        market_id: market,
        side: "buy",
        price,
        amount: 1,
        visible: 1,
        timeoutMs: 10_000,
      });
    }
    expect(report).toMatchObject({ status: "done", filled: 1 });
    expect(watched.counts.streams).toBe(0);
    expect(watched.counts.get).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it("market order with the slippage guard fills and reports the fill", async () => {
    // The guard is relative to the best ask: wide enough to reach the next level, since the tests
    // before this one may have left only a few contracts at the best ask.
    const report = await exec.market({ market_id: marketId, side: "buy", amount: 5, maxSlippage: 0.3 });
    expect(report.status).toBe("done");
    expect(report.filled).toBe(5);
    expect(report.average_price).toBeGreaterThan(0);
    expect(report.steps[0]).toMatchObject({ action: "filled", market_id: marketId, filled_amount: 5 });
  });

  it("twap places its slices and iceberg works slice after slice", async () => {
    const twap = await exec.twap({
      market_id: marketId,
      side: "buy",
      amount: 6,
      slices: 3,
      intervalMs: 10,
      maxSlippage: 0.3,
    });
    expect(twap.steps.map((s) => s.amount)).toEqual([2, 2, 2]);
    expect(twap.filled).toBe(6);
    const iceberg = await exec.iceberg({
      market_id: marketId,
      side: "buy",
      price: Math.min(0.99, ask + 0.05),
      amount: 9,
      visible: 3,
      timeoutMs: 20_000,
    });
    expect(iceberg.status).toBe("done");
    expect(iceberg.filled).toBe(9);
    expect(
      iceberg.steps.filter((s) => s.action === "placed" || s.action === "filled").length,
    ).toBeGreaterThanOrEqual(3);
  });

  it("chase rests at the best bid under its cap and cancels at the timeout", async () => {
    const report = await exec.chase({
      market_id: marketId,
      side: "buy",
      amount: 5,
      priceCap: 0.05,
      timeoutMs: 400,
    });
    expect(report.steps[0]).toMatchObject({ action: "placed", price: 0.05 });
    expect(report.steps.at(-1)!.action).toBe("cancelled");
    const { data: open } = await client.orders.list({ market_id: marketId });
    expect(open).toHaveLength(0);
  });

  it("closes a position and cancels everything", async () => {
    const { data: positions } = await client.positions.list({ market_id: marketId });
    const position = positions.find((p) => p.size > 0)!;
    const closed = await exec.closePosition(position.id, { maxSlippage: 0.2 });
    expect(closed.steps[0]).toMatchObject({ side: "sell", market_id: marketId });
    await exec.limit({ market_id: marketId, side: "buy", price: 0.02, amount: 5 });
    await exec.limit({ market_id: marketId, side: "buy", price: 0.03, amount: 5 });
    const cancelled = await exec.cancelAll({ market_id: marketId });
    expect(cancelled.steps.filter((s) => s.action === "cancelled")).toHaveLength(2);
  });

  it("the risk chain on live state refuses an order over its notional limit, and the kill switch cancels", async () => {
    const chain = createRiskChain(
      { maxOrderNotional: 1 },
      { state: liveRiskState(client), cancelAll: () => client.orders.cancelAll() },
    );
    const guarded = new Executor(client, { check: (o) => chain.check(o) });
    const small = await guarded.limit({ market_id: marketId, side: "buy", price: 0.02, amount: 5 });
    expect(small.steps[0]!.action).toBe("placed");
    const big = await guarded.limit({ market_id: marketId, side: "buy", price: 0.5, amount: 5 });
    expect(big.steps[0]).toMatchObject({ action: "rejected" });
    expect(big.steps[0]!.reason).toMatch(/risk:/);
    const cancelled = await chain.kill("test");
    expect(cancelled?.cancelled_count).toBeGreaterThanOrEqual(1);
    const blocked = await guarded.limit({ market_id: marketId, side: "buy", price: 0.02, amount: 5 });
    expect(blocked.steps[0]!.action).toBe("rejected");
    expect(chain.status()).toMatchObject({ killed: true });
  });

  it("a pre-trade check can refuse an order before it is sent", async () => {
    const guarded = new Executor(client, {
      check: (o) => ({ allowed: o.amount <= 1, reason: "max order size 1" }),
    });
    const before = (await client.orders.list({ status: "all", limit: 1 })).meta.total;
    const report = await guarded.limit({ market_id: marketId, side: "buy", price: 0.02, amount: 5 });
    expect(report.status).toBe("failed");
    expect(report.steps[0]).toMatchObject({ action: "rejected", reason: "risk: max order size 1" });
    expect((await client.orders.list({ status: "all", limit: 1 })).meta.total).toBe(before);
  });
});
