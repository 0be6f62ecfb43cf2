/**
 * A cross-venue arbitrageur in the sandbox: walks the verified cross-venue events, asks the
 * compare endpoint for the edge from both books after fees, and trades both legs (unwinding the
 * first if the second fails) only when the edge pays at the size it wants.
 *
 *   CROSSBOOK_URL=http://127.0.0.1:8080 CROSSBOOK_API_KEY=cb_test_… node --import tsx examples/arbitrageur.ts [seconds]
 */
import { Crossbook, Executor } from "@crossbook/agent";

const client = new Crossbook({ apiKey: process.env.CROSSBOOK_API_KEY!, environment: "sandbox" });
const exec = new Executor(client);
const seconds = Number(process.argv[2] ?? 10);
const SIZE = 10;
const MIN_EDGE = 0.01; // a cent a pair after fees, at least

const until = Date.now() + seconds * 1000;
while (Date.now() < until) {
  const { data: events } = await client.events.list({ status: "verified", limit: 50 });
  for (const event of events) {
    const cmp = await client.prices.compare(event.event_id);
    const edge = cmp.arbitrage?.avg_edge ?? cmp.arbitrage?.edge_first_contract ?? null;
    console.log(
      `${event.title}: spread ${(cmp.spread_analysis.yes_spread ?? 0).toFixed(3)}, edge ${edge?.toFixed(4) ?? "n/a"}`,
    );
    if (!cmp.spread_analysis.arbitrage_opportunity) continue;
    const report = await exec.arbitrage(event.event_id, SIZE, { minEdge: MIN_EDGE });
    for (const step of report.steps) console.log(`  ${step.action} ${step.market_id} ${step.reason ?? ""}`);
  }
  await new Promise((resolve) => setTimeout(resolve, 2000));
}
console.log("positions:", (await client.positions.list()).data.length);
