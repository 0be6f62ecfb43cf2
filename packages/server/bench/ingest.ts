/**
 * bench/ingest: venue WebSocket feed ingest — frames per second through parse, normalize, local
 * book and quote update — as a ratio against plain `JSON.parse` of the same frames, in the same run.
 * Target (issue 3): ratio >= 0.5.
 *
 * Frames are written here in each venue's documented format (VENUES.md §2.4 for Kalshi): per 100
 * frames, 80 order-book deltas, 10 tickers and 10 trades over 50 markets with 20-level books, after
 * one snapshot per market, at 10,000 frames per second of feed time. They go through the adapter's real feed object (`ingestFrame`, the same
 * code a socket frame takes), and every emitted event updates a QuoteBook, as in production.
 *
 *   npm run bench:ingest [-- --frames 200000 --rounds 9]
 */

import { seededRandom } from "@crossbook/fakes/random";
import { ManualClock } from "../src/infra/clock";
import { QuoteBook } from "../src/prices/quotes";
import { KalshiFeed } from "../src/venues/kalshi/feed";

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

const dollars = (cents: number) => (cents / 100).toFixed(4);
const count = (n: number) => n.toFixed(2);

function kalshiFrames(markets: number, frames: number): { setup: string[]; stream: string[] } {
  const rnd = seededRandom(42);
  const tickers = Array.from({ length: markets }, (_, i) => `KXBENCH-26DEC31-T${100 + i}`);
  const setup: string[] = [
    JSON.stringify({ id: 1, type: "subscribed", msg: { channel: "orderbook_delta", sid: 1 } }),
    JSON.stringify({ id: 2, type: "subscribed", msg: { channel: "ticker", sid: 2 } }),
    JSON.stringify({ id: 3, type: "subscribed", msg: { channel: "trade", sid: 3 } }),
  ];
  let seq = 0;
  const sizes = tickers.map(() => ({ yes: new Map<number, number>(), no: new Map<number, number>() }));
  tickers.forEach((ticker, m) => {
    const yes: [string, string][] = [];
    const no: [string, string][] = [];
    for (let c = 21; c <= 40; c++) {
      const s = 10 + Math.floor(rnd() * 500);
      sizes[m]!.yes.set(c, s);
      yes.push([dollars(c), count(s)]);
    }
    for (let c = 51; c <= 70; c++) {
      const s = 10 + Math.floor(rnd() * 500);
      sizes[m]!.no.set(c, s);
      no.push([dollars(c), count(s)]);
    }
    setup.push(
      JSON.stringify({
        type: "orderbook_snapshot",
        sid: 1,
        seq: ++seq,
        msg: { market_ticker: ticker, market_id: `id-${m}`, yes_dollars_fp: yes, no_dollars_fp: no },
      }),
    );
  });
  const stream: string[] = [];
  let tickerSeq = 0;
  let tradeSeq = 0;
  for (let i = 0; i < frames; i++) {
    const m = Math.floor(rnd() * markets);
    const ticker = tickers[m]!;
    // Ten frames per millisecond: a 10,000 messages/s feed, as a busy Kalshi connection carries.
    const ts = 1_795_000_000_000 + Math.floor(i / 10);
    const kind = i % 10;
    if (kind < 8) {
      const side = rnd() < 0.5 ? "yes" : "no";
      const ladder = sizes[m]![side];
      const cents = side === "yes" ? 21 + Math.floor(rnd() * 20) : 51 + Math.floor(rnd() * 20);
      const current = ladder.get(cents) ?? 0;
      // Never take a level below zero: a valid stream, so no resyncs distort the figure.
      const delta = current > 5 && rnd() < 0.5 ? -Math.floor(rnd() * current) : 1 + Math.floor(rnd() * 100);
      ladder.set(cents, current + delta);
      stream.push(
        JSON.stringify({
          type: "orderbook_delta",
          sid: 1,
          seq: ++seq,
          msg: {
            market_ticker: ticker,
            market_id: `id-${m}`,
            price_dollars: dollars(cents),
            delta_fp: count(delta),
            side,
            ts: new Date(ts).toISOString(),
            ts_ms: ts,
          },
        }),
      );
    } else if (kind === 8) {
      stream.push(
        JSON.stringify({
          type: "ticker",
          sid: 2,
          seq: ++tickerSeq,
          msg: {
            market_ticker: ticker,
            market_id: `id-${m}`,
            price_dollars: "0.4800",
            yes_bid_dollars: "0.4500",
            yes_ask_dollars: "0.5300",
            yes_bid_size_fp: "300.00",
            yes_ask_size_fp: "120.00",
            last_trade_size_fp: "5.00",
            volume_fp: "33896.00",
            open_interest_fp: "20422.00",
            dollar_volume: 16948,
            dollar_open_interest: 10211,
            ts: Math.floor(ts / 1000),
            ts_ms: ts,
          },
        }),
      );
    } else {
      stream.push(
        JSON.stringify({
          type: "trade",
          sid: 3,
          seq: ++tradeSeq,
          msg: {
            trade_id: `t-${i}`,
            market_ticker: ticker,
            yes_price_dollars: "0.5500",
            no_price_dollars: "0.4500",
            count_fp: "10.00",
            taker_side: "yes",
            taker_outcome_side: "yes",
            ts: Math.floor(ts / 1000),
            ts_ms: ts,
          },
        }),
      );
    }
  }
  return { setup, stream: stream };
}

/** Both paths start from a collected heap (run with --expose-gc), so neither pays the other's garbage. */
const collect = (globalThis as { gc?: () => void }).gc ?? (() => {});

function timeIt(fn: () => void): number {
  collect();
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function main(): void {
  const frames = arg("frames", 200_000);
  const rounds = arg("rounds", 9);
  const { setup, stream } = kalshiFrames(50, frames);
  const clock = new ManualClock(1_795_000_000_000);

  let sink = 0;
  const baseline = () => {
    for (const frame of stream) sink += (JSON.parse(frame) as { seq?: number }).seq ?? 0;
  };

  const pipeline = () => {
    const quotes = new QuoteBook();
    let problems = 0;
    const feed = new KalshiFeed({
      wsUrl: "ws://127.0.0.1:1/unused",
      clock,
      onEvent: (event) => {
        const quote = quotes.apply(event, clock.now());
        if (quote) sink += quote.updatedAt & 1;
      },
      report: () => {
        problems++;
      },
    });
    // Known markets, as after `start()`; no socket is opened.
    void feed.add(Array.from({ length: 50 }, (_, i) => `kalshi:KXBENCH-26DEC31-T${100 + i}`));
    for (const frame of setup) feed.ingestFrame(frame);
    const seconds = timeIt(() => {
      for (const frame of stream) feed.ingestFrame(frame);
    });
    if (problems > 0) throw new Error(`the feed reported ${problems} problems: the bench frames are wrong`);
    if (quotes.size !== 50) throw new Error(`expected quotes for 50 markets, got ${quotes.size}`);
    return seconds;
  };

  // Warm-up both paths, then alternate.
  timeIt(baseline);
  pipeline();
  const ratios: number[] = [];
  let bestBase = Number.POSITIVE_INFINITY;
  let bestPipe = Number.POSITIVE_INFINITY;
  for (let round = 1; round <= rounds; round++) {
    const base = timeIt(baseline);
    const pipe = pipeline();
    bestBase = Math.min(bestBase, base);
    bestPipe = Math.min(bestPipe, pipe);
    ratios.push(base / pipe);
    console.log(
      `round ${round}: JSON.parse ${(frames / base).toFixed(0)} frames/s, kalshi feed ingest ${(frames / pipe).toFixed(0)} frames/s, ratio ${(base / pipe).toFixed(3)}`,
    );
  }
  const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!;
  console.log(`frames: ${frames} (80% book deltas, 10% tickers, 10% trades; 50 markets, 20-level books)`);
  console.log(
    `bench/ingest  kalshi feed ingest (parse, normalize, book, quote): ${(frames / bestPipe).toFixed(0)} frames/s`,
  );
  console.log(
    `bench/ingest  plain JSON.parse of the same frames:              ${(frames / bestBase).toFixed(0)} frames/s`,
  );
  console.log(
    `bench/ingest  ratio ${median.toFixed(3)} (median of ${rounds}; target >= 0.5) ${median >= 0.5 ? "PASS" : "BELOW TARGET"}`,
  );
  if (sink === -1) console.log(sink);
}

main();
