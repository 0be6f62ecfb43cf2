/**
 * A `RiskState` read from the service through the client: open positions, open orders, quotes, and
 * realized PnL since the start of the (UTC) day as seen by this process.
 */
import type { Crossbook } from "../client.js";
import type { RiskOpenOrders, RiskPosition, RiskQuote, RiskState } from "./types.js";

/**
 * Live state for the risk chain.
 *
 * Realized PnL "today" is the change in the account's total realized PnL since the first read of
 * the current UTC day by this process (the service keeps realized PnL per position, not per day).
 *
 * @example
 * const chain = createRiskChain(config, { state: liveRiskState(client), cancelAll: () => client.orders.cancelAll() });
 * const exec = new Executor(client, { check: (o) => chain.check(o) });
 */
export function liveRiskState(client: Crossbook): RiskState {
  let day = "";
  let baseline = 0;
  const allPositions = async (status: "open" | "all") => {
    const out: Array<RiskPosition & { realized_pnl: number }> = [];
    for await (const p of client.paginate((q) => client.positions.list({ ...q, status } as never)))
      out.push(p as RiskPosition & { realized_pnl: number });
    return out;
  };
  return {
    positions: () => allPositions("open"),
    async realizedPnlToday() {
      const total = (await allPositions("all")).reduce((sum, p) => sum + p.realized_pnl, 0);
      const today = new Date().toISOString().slice(0, 10);
      if (today !== day) {
        day = today;
        baseline = total;
      }
      return total - baseline;
    },
    async openOrders(): Promise<RiskOpenOrders> {
      let count = 0;
      let notional = 0;
      for await (const o of client.paginate((q) => client.orders.list({ ...q, status: "open" }))) {
        count++;
        notional += o.price * (o.amount - o.filled_amount);
      }
      return { count, notional };
    },
    async quote(marketId: string): Promise<RiskQuote | null> {
      const entry = (await client.prices.get([marketId]))[marketId] as
        | { price: number | null; best_bid: number | null; best_ask: number | null }
        | undefined;
      return entry ? { mid: entry.price, best_bid: entry.best_bid, best_ask: entry.best_ask } : null;
    },
  };
}
