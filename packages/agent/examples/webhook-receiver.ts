/**
 * Webhooks on your own machine: a receiver listening on loopback with the library's
 * `webhookReceiver` (the signature is checked over the raw bytes, stale timestamps are refused, each
 * delivery runs once), registered with crossbook for a few event types; then a sandbox deposit and
 * an order at the ask, which fills at once, and the events they cause printed as they arrive. Once
 * the deposit, the order and its fill have been heard of (or the time is up), the webhook is
 * deleted and the receiver closed.
 *
 * `crossbook demo` accepts receivers on its own machine, over plain http. A crossbook running
 * elsewhere needs an https URL it can reach (and, self-hosted on a private network,
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).
 *
 *   CROSSBOOK_URL=http://127.0.0.1:8080 CROSSBOOK_API_KEY=cb_test_… \
 *     node --import tsx examples/webhook-receiver.ts [seconds]
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Crossbook, type WebhookEvent, webhookReceiver } from "@crossbook/agent";

const client = new Crossbook({ apiKey: process.env.CROSSBOOK_API_KEY!, environment: "sandbox" });
const seconds = Number(process.argv[2] ?? 30);
const EVENTS = ["deposit.completed", "order.created", "order.filled", "position.opened"];
// What this run surely causes; position.opened comes only when the account held none of the market.
const AWAITED = ["deposit.completed", "order.created", "order.filled"];

// Chosen here, so the receiver knows it before the first delivery (leave it out of `create` and
// crossbook generates one, returned once).
const secret = randomBytes(24).toString("base64url");
const seen = new Set<string>();
let received = 0;
let refused = 0;
let allSeen!: () => void;
const done = new Promise<void>((resolve) => {
  allSeen = resolve;
});

const handle = webhookReceiver({
  secret,
  onEvent: (event: WebhookEvent) => {
    const data = event.data as { order_id?: string; market_id?: string; amount?: number };
    const about = data.order_id ?? data.market_id ?? (data.amount !== undefined ? `${data.amount} USDC` : "");
    console.log(`received ${event.type} ${about} (delivery ${event.id}, signature verified)`);
    received++;
    seen.add(event.type);
    if (AWAITED.every((type) => seen.has(type))) allSeen();
  },
});
const server = createServer((request, response) => {
  // The receiver answers 401 to a bad or stale signature; say so, since onEvent never hears of it.
  response.on("finish", () => {
    if (response.statusCode === 401) {
      refused++;
      console.log("refused a delivery: its signature did not verify");
    }
  });
  void handle(request, response);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/crossbook-events`;

const webhook = await client.webhooks.create({ url, events: EVENTS, secret });
console.log(`receiving at ${url} (webhook ${webhook.id}: ${EVENTS.join(", ")})`);

try {
  await client.sandbox.deposit(100);
  // A limit a little above the ask fills at once against the fake venue's book, even if it moved.
  const { data: markets } = await client.markets.list({ venue: "kalshi", status: "open", limit: 50 });
  const market = markets.find((m) => m.best_ask !== null && m.best_ask <= 0.9);
  if (!market || market.best_ask === null) throw new Error("no open market with a book to trade");
  const limit = Math.round((market.best_ask + 0.05) * 100) / 100;
  const order = await client.orders.place({
    market_id: market.id,
    side: "buy",
    type: "limit",
    price: limit,
    amount: 2,
    time_in_force: "GTC",
  });
  console.log(`placed ${order.id} on ${market.id}: buy 2 up to ${limit} (${order.status})`);
  const timeout = new Promise<"timeout">((resolve) => setTimeout(resolve, seconds * 1000, "timeout").unref());
  if ((await Promise.race([done, timeout])) === "timeout")
    console.log(`out of time; still waiting for: ${AWAITED.filter((t) => !seen.has(t)).join(", ")}`);
} finally {
  await client.webhooks.delete(webhook.id);
  server.close();
}
console.log(
  `done: ${received} event(s) received (${[...seen].join(", ")}), ${refused} delivery(ies) refused`,
);
