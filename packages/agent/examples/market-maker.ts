/**
 * A market maker in the sandbox: quotes a bid and an ask around the mid of one market, a tick or
 * two inside the venue's spread, and re-quotes when the mid moves. Every quote passes the risk
 * check; on exit it cancels everything it left.
 *
 *   CROSSBOOK_URL=http://127.0.0.1:8080 CROSSBOOK_API_KEY=cb_test_… node --import tsx examples/market-maker.ts [seconds]
 */
import { Crossbook, Executor } from "@crossbook/agent";

const client = new Crossbook({ apiKey: process.env.CROSSBOOK_API_KEY!, environment: "sandbox" });
const exec = new Executor(client, {
  // Never quote more than 20 contracts or further than 10 cents from the mid.
  check: (o) => ({ allowed: o.amount <= 20, reason: "max quote size 20" }),
});
const seconds = Number(process.argv[2] ?? 10);
const SIZE = 10;

const { data: markets } = await client.markets.list({ venue: "kalshi", status: "open", limit: 50 });
const market = markets.find(
  (m) => m.best_bid !== null && m.best_ask !== null && m.best_ask - m.best_bid >= 0.02,
);
if (!market) throw new Error("no market with a spread to make");
console.log(`making ${market.id}: ${market.title}`);

let quotedMid: number | null = null;
const stream = client.prices.stream([market.id]);
stream.on("update", async (u) => {
  if (u.best_bid === null || u.best_ask === null) return;
  const mid = Math.round(((u.best_bid + u.best_ask) / 2) * 100) / 100;
  if (mid === quotedMid || u.best_ask - u.best_bid < 0.02) return;
  quotedMid = mid;
  await exec.cancelAll({ market_id: market.id });
  const bidPrice = Math.max(0.01, Math.round((mid - 0.01) * 100) / 100);
  const askPrice = Math.min(0.99, Math.round((mid + 0.01) * 100) / 100);
  const bid = await exec.limit({ market_id: market.id, side: "buy", price: bidPrice, amount: SIZE });
  // Offering YES at the ask without holding it = bidding for NO at 1 − ask.
  const ask = await exec.limit({
    market_id: market.id,
    side: "buy",
    outcome: "no",
    price: Math.round((1 - askPrice) * 100) / 100,
    amount: SIZE,
  });
  console.log(
    `mid ${mid.toFixed(2)}: bid ${bid.steps[0]?.action} at ${bidPrice}, ask ${ask.steps[0]?.action} at ${askPrice}`,
  );
});

await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
stream.close();
const done = await exec.cancelAll({ market_id: market.id });
console.log(`stopped: cancelled ${done.steps.length} quote(s); balance`, await client.balance());
