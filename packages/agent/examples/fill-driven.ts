/**
 * A sandbox agent that trades from its private stream alone: it buys a few contracts, and each time
 * the stream says a buy of its filled, it offers them back two cents higher; each time one of its
 * sells fills, it buys again. It never polls an order, never reads a price after the start, and
 * keeps its cursor in a file: stopped and started again, it resumes from the last event it handled
 * and misses no fill that happened while it was away.
 *
 *   CROSSBOOK_URL=http://127.0.0.1:8080 CROSSBOOK_API_KEY=cb_test_… \
 *     node --import tsx examples/fill-driven.ts [seconds] [cursor file]
 */
import { randomUUID } from "node:crypto";
import { Crossbook, FileCursorStore } from "@crossbook/agent";

const client = new Crossbook({ apiKey: process.env.CROSSBOOK_API_KEY!, environment: "sandbox" });
const seconds = Number(process.argv[2] ?? 30);
const cursor = new FileCursorStore(process.argv[3] ?? "./state/fill-driven-cursor.json");
const SIZE = 5;
const round = (x: number) => Math.round(x * 100) / 100;
let roundTrips = 0;

// The one price read: which market, and where its book is now.
const { data: markets } = await client.markets.list({ venue: "kalshi", status: "open", limit: 50 });
const market = markets.find((m) => m.best_ask !== null && m.best_ask <= 0.9 && m.best_bid !== null);
if (!market || market.best_ask === null) throw new Error("no open market with a book to trade");
console.log(`trading ${market.id}: ${market.title}`);

// Only what this agent acts on. Without a saved cursor it starts from now; with one, it first
// replays whatever happened since it last stopped.
const stream = client.accountStream({
  cursor,
  types: ["order.created", "order.filled", "order.cancelled"],
});
stream.on("caught_up", ({ replayed }) => console.log(`caught up: ${replayed} event(s) replayed`));
stream.on(
  "close",
  ({ code }) => code !== 1000 && console.log(`stream dropped (${code}); it resumes by itself`),
);
setTimeout(() => stream.close(), seconds * 1000);

/**
 * Orders this run placed. Each carries a client order id made before it is sent: the stream's
 * `order.created` (which comes before the order's fills) ties it to the order id, so a fill that
 * arrives before the placement's own answer is still recognised.
 */
const placing = new Set<string>();
const mine = new Set<string>();
const place = async (side: "buy" | "sell", price: number, amount: number) => {
  const clientOrderId = `fill-driven-${randomUUID()}`;
  placing.add(clientOrderId);
  const limit = Math.min(0.99, Math.max(0.01, round(price)));
  const order = await client.orders.place({
    market_id: market.id,
    side,
    type: "limit",
    price: limit,
    amount,
    time_in_force: "GTC",
    client_order_id: clientOrderId,
  });
  console.log(`${side === "buy" ? "bid" : "offer"} ${amount} @ ${limit} (${order.id}, ${order.status})`);
};

// The entry, once the stream is following (started from now, or caught up after a restart): a bid
// at the ask fills at once, and its fill arrives on the stream like any other.
let entered = false;
const enter = () => {
  if (entered) return;
  entered = true;
  void place("buy", market.best_ask!, SIZE);
};
stream.once("subscribed", enter);
stream.once("caught_up", enter);

for await (const event of stream) {
  const data = event.data as {
    order_id: string;
    client_order_id?: string | null;
    side: "buy" | "sell";
    filled_amount: number;
    average_fill_price: number;
  };
  if (event.type === "order.created") {
    if (data.client_order_id && placing.delete(data.client_order_id)) mine.add(data.order_id);
    continue;
  }
  if (!mine.has(data.order_id)) continue; // another run's or another agent's order
  if (event.type === "order.cancelled") {
    console.log(`cancelled ${data.order_id}`);
    continue;
  }
  console.log(
    `filled ${data.side} ${data.filled_amount} @ ${data.average_fill_price} (event ${event.seq}, from the stream)`,
  );
  if (data.side === "buy") await place("sell", data.average_fill_price + 0.02, data.filled_amount);
  else {
    roundTrips++;
    await place("buy", data.average_fill_price - 0.02, SIZE);
  }
}

// Out of time: take down what rests, and say where things stand.
let cancelled = 0;
for (const id of mine) {
  try {
    await client.orders.cancel(id);
    cancelled++;
  } catch {
    // filled or cancelled already
  }
}
const balance = await client.balance();
console.log(
  `stopped after ${roundTrips} round trip(s): cancelled ${cancelled} resting order(s); cursor at ${stream.lastSeq ?? "none"}; available ${balance.available}`,
);
