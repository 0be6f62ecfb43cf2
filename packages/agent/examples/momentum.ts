/**
 * A momentum trader in the sandbox: follows a few markets on the live stream, buys a little when a
 * market's price has risen three updates in a row, and sells the position when it falls twice.
 * Market orders carry a slippage guard; on exit it sells what it holds.
 *
 *   CROSSBOOK_URL=http://127.0.0.1:8080 CROSSBOOK_API_KEY=cb_test_… node --import tsx examples/momentum.ts [seconds]
 */
import { Crossbook, Executor } from "@crossbook/agent";

const client = new Crossbook({ apiKey: process.env.CROSSBOOK_API_KEY!, environment: "sandbox" });
const exec = new Executor(client);
const seconds = Number(process.argv[2] ?? 10);

const { data: markets } = await client.markets.list({ status: "open", limit: 10 });
const last = new Map<string, number[]>();
const holding = new Set<string>();
const stream = client.prices.stream(markets.map((m) => m.id));
setTimeout(() => stream.close(), seconds * 1000); // ends the loop below

for await (const update of stream) {
  if (update.price !== null) {
    const prices = [...(last.get(update.market_id) ?? []), update.price].slice(-4);
    last.set(update.market_id, prices);
    const rising = prices.length === 4 && prices.every((p, i) => i === 0 || p > prices[i - 1]!);
    const falling = prices.length >= 3 && prices.slice(-3).every((p, i, a) => i === 0 || p < a[i - 1]!);
    if (rising && !holding.has(update.market_id)) {
      const r = await exec.market({ market_id: update.market_id, side: "buy", amount: 5, maxSlippage: 0.03 });
      if (r.filled > 0) holding.add(update.market_id);
      console.log(`momentum buy ${update.market_id}: ${r.status}, ${r.filled} at ${r.average_price}`);
    } else if (falling && holding.has(update.market_id)) {
      holding.delete(update.market_id);
      const r = await exec.market({
        market_id: update.market_id,
        side: "sell",
        amount: 5,
        maxSlippage: 0.05,
      });
      console.log(`momentum exit ${update.market_id}: ${r.status}`);
    }
  }
}

for (const marketId of holding)
  await exec.market({ market_id: marketId, side: "sell", amount: 5, maxSlippage: 0.1 });
console.log("done; balance", await client.balance());
