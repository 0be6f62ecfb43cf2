/**
 * The console's sandbox and live trading pages through their routes: deposits and withdrawals in
 * USDC with field errors for bad amounts, reset through a confirmation page, the sandbox's orders
 * (cancel an open one), positions and fills, and the read-only live page that survives venues that
 * cannot be read.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AppError } from "../../src/http/errors";
import { insertOrder } from "../../src/ledger/orders-repo";
import { book, get, placed, setBook, type Trading, tradingApp } from "../orders/setup";
import { createKey } from "../support/app";
import { ConsoleClient, openLiveOrder } from "./support";

let address = 0;

function fieldError(body: string, name: string): string | undefined {
  return new RegExp(`id="f-${name}-error">([^<]*)<`).exec(body)?.[1];
}

/** The sandbox page's "Available" figure. */
function available(body: string): string | undefined {
  return /data-testid="available">([^<]*)</.exec(body)?.[1];
}

describe("console sandbox and live trading pages", () => {
  let s: Trading;
  beforeAll(async () => {
    s = await tradingApp({ config: { trustProxy: ["loopback"] } });
  });
  afterAll(() => s.t.close());

  /** A console user with a sandbox trading key of the same account. */
  async function trader() {
    const c = new ConsoleClient(s.t.app, { "x-forwarded-for": `10.8.0.${++address}` });
    await c.signUp();
    const session = c.cookies.get("cb_session")!;
    const accountId = (await s.t.services.accounts.resolveSession(session))!.account_id;
    const key = (await createKey(s.t.app, session, { type: "trading", environment: "sandbox" })).key;
    return { c, key, accountId };
  }

  it("shows the sandbox balance and moves it with a deposit and a withdrawal", async () => {
    const { c, key } = await trader();
    const page = await c.get("/console/sandbox");
    expect(page.statusCode).toBe(200);
    expect(available(page.body)).toBe("$10,000.00");
    expect(page.body).toContain('<label for="f-deposit_amount">Amount (USDC)</label>');
    expect(page.body).toContain('<label for="f-withdraw_amount">Amount (USDC)</label>');

    const deposit = await c.post("/console/sandbox/deposit", { deposit_amount: "$1,250.50" });
    expect(deposit.statusCode).toBe(303);
    const after = await c.follow(deposit);
    expect(after.body).toContain("Deposited $1,250.50; $11,250.50 available.");
    expect(available(after.body)).toBe("$11,250.50");
    // Stored in micro-units: the API reads the same USDC amount.
    expect((await get(s.t.app, key, "/v1/balance")).data.available).toBeCloseTo(11_250.5, 6);

    const withdraw = await c.post("/console/sandbox/withdraw", { withdraw_amount: "250.5" });
    expect(withdraw.statusCode).toBe(303);
    expect(available((await c.follow(withdraw)).body)).toBe("$11,000.00");
    expect((await get(s.t.app, key, "/v1/balance")).data.available).toBeCloseTo(11_000, 6);
  });

  it("refuses bad amounts and a withdrawal beyond the balance with a field error", async () => {
    const { c } = await trader();
    await c.get("/console/sandbox");
    const tooMuch = await c.post("/console/sandbox/withdraw", { withdraw_amount: "20000" });
    expect(tooMuch.statusCode).toBe(422);
    expect(fieldError(tooMuch.body, "withdraw_amount")).toBe("is more than the $10,000.00 available");
    expect(tooMuch.body).toContain('value="20000"');
    for (const [amount, message] of [
      ["", "Enter an amount in USDC"],
      ["abc", /like 250 or 12.50/],
      ["0", "must be more than 0"],
      ["-5", "must be more than 0"],
      ["1.1234567", /at most 6 decimals/],
      ["2000000000", /at most 1,000,000,000/],
    ] as const) {
      const response = await c.post("/console/sandbox/deposit", { deposit_amount: amount });
      expect(response.statusCode, amount).toBe(400);
      expect(fieldError(response.body, "deposit_amount"), amount).toMatch(message);
    }
    expect(available((await c.get("/console/sandbox")).body)).toBe("$10,000.00");
  });

  it("resets the sandbox through a confirmation page", async () => {
    const { c } = await trader();
    await c.get("/console/sandbox");
    await c.post("/console/sandbox/deposit", { deposit_amount: "500" });
    const sandbox = await c.get("/console/sandbox");
    expect(sandbox.body).toContain('href="/console/sandbox/reset"');
    const confirm = await c.get("/console/sandbox/reset");
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain("Reset the sandbox?");
    expect(confirm.body).toContain('<form method="post" action="/console/sandbox/reset"');
    const reset = await c.post("/console/sandbox/reset");
    expect(reset.statusCode).toBe(303);
    const after = await c.follow(reset);
    expect(after.body).toContain("The sandbox was reset: $10,000.00 available.");
    expect(available(after.body)).toBe("$10,000.00");
  });

  it("lists the sandbox's orders open first, cancels an open one, and shows positions and fills", async () => {
    const { c, key } = await trader();
    setBook(s.kalshi, book("kalshi:K", { bids: [[0.4, 100]], asks: [[0.45, 50]] }));
    const filled = await placed(s.t.app, key, { market_id: "kalshi:K", side: "buy", price: 0.45, amount: 4 });
    expect(filled.status).toBe("filled");
    const resting = await placed(s.t.app, key, {
      market_id: "kalshi:K",
      side: "buy",
      price: 0.3,
      amount: 10,
    });
    expect(resting.status).toBe("open");

    const page = await c.get("/console/sandbox");
    const open = /data-testid="open-orders"[\s\S]*?<\/table>/.exec(page.body)![0];
    expect(open).toContain(`data-order="${resting.id}"`);
    expect(open).not.toContain(`data-order="${filled.id}"`);
    expect(open).toContain("K market"); // the market's title, with its id
    expect(open).toContain("kalshi:K");
    expect(open).toContain(`action="/console/sandbox/orders/${resting.id}/cancel"`);
    const recent = /data-testid="recent-orders"[\s\S]*?<\/table>/.exec(page.body)![0];
    expect(recent).toContain(`data-order="${filled.id}"`);
    expect(recent).not.toContain("/cancel");
    // The position the fill opened, and the fill itself.
    const positions = /data-testid="positions"[\s\S]*?<\/table>/.exec(page.body)![0];
    expect(positions).toContain("K market");
    expect(positions).toContain(">4.00<");
    const fills = /data-testid="fills"[\s\S]*?<\/table>/.exec(page.body)![0];
    expect(fills).toContain(filled.id);
    expect(fills).toContain(">0.45<");
    // Every cell of the responsive tables is labelled for the narrow layout.
    expect(page.body.match(/<td(?![^>]*data-label)/g)).toBeNull();

    const cancel = await c.post(`/console/sandbox/orders/${resting.id}/cancel`);
    expect(cancel.statusCode).toBe(303);
    const after = await c.follow(cancel);
    expect(after.body).toContain(`Order ${resting.id} cancelled`);
    expect(after.body).toContain('data-testid="no-open-orders"');
    expect((await get(s.t.app, key, `/v1/orders/${resting.id}`)).data.status).toBe("cancelled");
    // Cancelling again says why not, on the page.
    const again = await c.post(`/console/sandbox/orders/${resting.id}/cancel`);
    expect(again.statusCode).toBe(303);
    expect((await c.follow(again)).body).toContain(`Order ${resting.id} is cancelled`);
    // Another account's order is not found, and nothing changes.
    const other = await trader();
    const theirs = await placed(s.t.app, other.key, {
      market_id: "kalshi:K",
      side: "buy",
      price: 0.3,
      amount: 1,
    });
    await c.get("/console/sandbox");
    await c.post(`/console/sandbox/orders/${theirs.id}/cancel`);
    expect((await c.follow()).body).toContain(`No order ${theirs.id}`);
    expect((await get(s.t.app, other.key, `/v1/orders/${theirs.id}`)).data.status).toBe("open");
  });

  it("always shows the sandbox there, whatever the header's environment", async () => {
    const { c, key } = await trader();
    await c.get("/console/sandbox");
    await c.post("/console/environment", { environment: "live", next: "/console/sandbox" });
    const page = await c.get("/console/sandbox");
    expect(page.body).toContain("this page always shows the sandbox");
    await c.post("/console/sandbox/deposit", { deposit_amount: "100" });
    expect((await get(s.t.app, key, "/v1/balance")).data.available).toBeCloseTo(10_100, 6);
  });

  it("shows live orders read-only, and a message instead of figures a venue cannot give", async () => {
    const { c, accountId } = await trader();
    const order = openLiveOrder(accountId, { id: `ord_live_${accountId.slice(-8)}` });
    await insertOrder(s.t.runtime.store.db, order);
    const page = await c.get("/console/trading");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-testid="read-only"');
    expect(page.body).toContain(`data-order="${order.id}"`);
    expect(page.body).toContain("K market");
    expect(page.body).not.toContain("/cancel");
    expect(page.body).toContain('data-testid="live-balance"');
    expect(page.body).toContain("Link a venue");
    // The sandbox page does not show live orders, nor the live page sandbox ones.
    expect((await c.get("/console/sandbox")).body).not.toContain(order.id);

    const balance = vi
      .spyOn(s.t.services.portfolio, "balance")
      .mockRejectedValue(new AppError("VENUE_UNAVAILABLE", "kalshi did not answer"));
    const positions = vi.spyOn(s.t.services.portfolio, "list").mockRejectedValue(new Error("socket hang up"));
    try {
      const down = await c.get("/console/trading");
      expect(down.statusCode).toBe(200);
      expect(down.body).toContain('data-testid="balance-unavailable"');
      expect(down.body).toContain("kalshi did not answer");
      expect(down.body).toContain('data-testid="positions-unavailable"');
      expect(down.body).toContain(`data-order="${order.id}"`); // the ledger still reads
    } finally {
      balance.mockRestore();
      positions.mockRestore();
    }
  });
});
