/**
 * The sandbox and live trading pages: balance, orders (open first, then recent), positions and
 * recent fills of one environment of the account.
 *
 * /console/sandbox is always the account's sandbox and /console/trading always its live side,
 * whatever the header's environment switch says: each page names what it shows, so a user never
 * deposits fake money believing it is real or the reverse. The sandbox page can deposit, withdraw,
 * reset and cancel (all local to the simulated exchange); the live page is read-only, because every
 * live action goes through a venue, and a venue that cannot be read shows a message, never an error
 * page.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Owner } from "../access/owner";
import { AppError } from "../http/errors";
import type { FillRow, OrderRow } from "../ledger/orders-repo";
import { CANCELLABLE } from "../ledger/orders-repo";
import type { BalanceView, MarkedPosition, VenueReadView } from "../portfolio/service";
import { parseMicros } from "../venues/decimal";
import { fieldErrorsOf, formOf, messageOf, redirect, render, requireUser, text } from "./context";
import { html, type SafeHtml } from "./html";
import {
  type ConsoleUser,
  csrfField,
  decimal,
  type FieldErrors,
  type Flash,
  field,
  money,
  num,
  time,
} from "./layout";
import type { ConsoleDeps, ConsolePages } from "./plugin";

const OPEN_LIMIT = 100;
const RECENT_LIMIT = 30;
const POSITIONS_LIMIT = 50;
const FILLS_LIMIT = 50;
/** Fills are read per order (there is no account-wide listing): of this many recent filled orders. */
const FILLED_ORDERS_READ = 25;

const VENUE_NAMES: Record<string, string> = { kalshi: "Kalshi", polymarket: "Polymarket" };
const venueName = (venue: string) => VENUE_NAMES[venue] ?? venue;

const ownerOf = (user: ConsoleUser, environment: Owner["environment"]): Owner => ({
  accountId: user.account.id,
  environment,
});

// --- reading -------------------------------------------------------------------------------------

interface OrderLists {
  /** Open and pending orders, newest first. */
  open: OrderRow[];
  openTotal: number;
  /** The latest orders that are no longer open. */
  recent: OrderRow[];
  fills: FillRow[];
}

async function orderLists(deps: ConsoleDeps, owner: Owner): Promise<OrderLists> {
  const page = { limit: OPEN_LIMIT, offset: 0 };
  const [open, pending, latest] = await Promise.all([
    deps.orders.list(owner, { status: "open" }, page),
    deps.orders.list(owner, { status: "pending" }, page),
    deps.orders.list(owner, { status: "all" }, { limit: RECENT_LIMIT + OPEN_LIMIT, offset: 0 }),
  ]);
  const openRows = [...pending.rows, ...open.rows].sort(newestFirst).slice(0, OPEN_LIMIT);
  const recent = latest.rows.filter((o) => !CANCELLABLE.has(o.status)).slice(0, RECENT_LIMIT);
  const filled = [...openRows, ...recent].filter((o) => o.filled_amount > 0).slice(0, FILLED_ORDERS_READ);
  const fills = (await Promise.all(filled.map((o) => deps.orders.fills(owner, o.id))))
    .flat()
    .sort(newestFirst)
    .slice(0, FILLS_LIMIT);
  return { open: openRows, openTotal: open.total + pending.total, recent, fills };
}

function newestFirst(a: { created_at: string; id: string }, b: { created_at: string; id: string }): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.id < b.id ? 1 : -1;
}

/** A live read that failed: the message to show instead of the figures. */
function readFailure(error: unknown): string {
  if (error instanceof AppError) return error.message;
  return "the venue could not be reached";
}

// --- rendering -----------------------------------------------------------------------------------

type Titles = ReadonlyMap<string, string>;

function market(id: string, titles: Titles): SafeHtml {
  const title = titles.get(id);
  // One element per cell: on a phone a cell is a flex row of its label and its content.
  return title ? html`<span>${title}<br><code class="muted">${id}</code></span>` : html`<code>${id}</code>`;
}

const side = (s: string, outcome: string) => `${s === "sell" ? "Sell" : "Buy"} ${outcome.toUpperCase()}`;

function statusBadge(order: OrderRow): SafeHtml {
  const kind =
    order.status === "filled"
      ? "ok"
      : order.status === "pending"
        ? "warn"
        : order.status === "open"
          ? "ok"
          : "";
  return html`<span><span class="badge ${kind}">${order.status}</span>${
    order.cancel_reason ? html`<br><span class="muted">${order.cancel_reason.replace(/_/g, " ")}</span>` : ""
  }</span>`;
}

function averageFill(order: OrderRow): string {
  return order.filled_amount > 0
    ? decimal(Math.round((order.filled_notional / order.filled_amount) * 1e6))
    : "—";
}

function ordersTable(
  orders: OrderRow[],
  titles: Titles,
  testid: string,
  action?: (order: OrderRow) => SafeHtml,
): SafeHtml {
  return html`<table class="responsive" data-testid="${testid}">
    <thead><tr><th>Market</th><th>Side</th><th>Type</th><th class="num">Price</th><th class="num">Filled / amount</th>
      <th class="num">Avg fill</th><th class="num">Fees</th><th>Status</th><th>Placed</th>${action ? html`<th><span class="muted">Actions</span></th>` : ""}</tr></thead>
    <tbody>
      ${orders.map(
        (o) => html`<tr data-order="${o.id}">
          <td data-label="Market">${market(o.market_id, titles)}</td>
          <td data-label="Side">${side(o.side, o.outcome)}</td>
          <td data-label="Type">${o.type} ${o.time_in_force}</td>
          <td data-label="Price" class="num">${o.type === "market" && o.price === 0 ? "market" : decimal(o.price)}</td>
          <td data-label="Filled / amount" class="num">${decimal(o.filled_amount)} / ${decimal(o.amount)}</td>
          <td data-label="Avg fill" class="num">${averageFill(o)}</td>
          <td data-label="Fees" class="num">${money(o.fees)}</td>
          <td data-label="Status">${statusBadge(o)}</td>
          <td data-label="Placed">${time(o.created_at)}</td>
          ${action ? html`<td data-label="Actions">${action(o)}</td>` : ""}
        </tr>`,
      )}
    </tbody>
  </table>`;
}

function fillsTable(fills: FillRow[], titles: Titles): SafeHtml {
  if (fills.length === 0) return html`<p class="muted" data-testid="no-fills">No fills yet.</p>`;
  return html`<table class="responsive" data-testid="fills">
    <thead><tr><th>Time</th><th>Market</th><th>Side</th><th class="num">Price</th><th class="num">Size</th>
      <th class="num">Fee</th><th>Liquidity</th><th>Order</th></tr></thead>
    <tbody>
      ${fills.map(
        (f) => html`<tr>
          <td data-label="Time">${time(f.created_at)}</td>
          <td data-label="Market">${market(f.market_id, titles)}</td>
          <td data-label="Side">${side(f.side, f.outcome)}</td>
          <td data-label="Price" class="num">${decimal(f.price)}</td>
          <td data-label="Size" class="num">${decimal(f.size)}</td>
          <td data-label="Fee" class="num">${money(f.fee)}</td>
          <td data-label="Liquidity">${f.liquidity}</td>
          <td data-label="Order"><code>${f.order_id}</code></td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

function reconciliation(p: MarkedPosition): string {
  const r = p.reconciliation;
  if (!r) return "—";
  switch (r.status) {
    case "match":
      return "matches the venue";
    case "mismatch":
      return `venue holds ${decimal(r.venueSize)}`;
    case "venue_only":
      return "held at the venue only (cost unknown)";
    case "unavailable":
      return "venue could not be read";
    case "not_linked":
      return "venue not linked";
  }
}

function positionsTable(positions: MarkedPosition[], titles: Titles, live: boolean): SafeHtml {
  if (positions.length === 0) return html`<p class="muted" data-testid="no-positions">No positions.</p>`;
  return html`<table class="responsive" data-testid="positions">
    <thead><tr><th>Market</th><th>Outcome</th><th class="num">Size</th><th class="num">Avg price</th><th class="num">Cost</th>
      <th class="num">Mark</th><th class="num">Value</th><th class="num">Unrealized P&amp;L</th><th class="num">Realized P&amp;L</th>
      <th>Status</th>${live ? html`<th>Venue</th>` : ""}</tr></thead>
    <tbody>
      ${positions.map((p) => {
        const { row, mark, marketValue, unrealizedPnl } = p;
        const known = row.size - row.unknown_cost_size;
        return html`<tr>
          <td data-label="Market">${market(row.market_id, titles)}</td>
          <td data-label="Outcome">${row.outcome.toUpperCase()}</td>
          <td data-label="Size" class="num">${decimal(row.size)}</td>
          <td data-label="Avg price" class="num">${known > 0 ? decimal(Math.round((row.cost_basis / known) * 1e6)) : "—"}</td>
          <td data-label="Cost" class="num">${money(row.cost_basis)}</td>
          <td data-label="Mark" class="num">${decimal(mark)}</td>
          <td data-label="Value" class="num">${money(marketValue)}</td>
          <td data-label="Unrealized P&amp;L" class="num">${money(unrealizedPnl)}</td>
          <td data-label="Realized P&amp;L" class="num">${money(row.realized_pnl)}</td>
          <td data-label="Status">${row.status}${row.resolution ? ` (${row.resolution.toUpperCase()})` : ""}</td>
          ${live ? html`<td data-label="Venue">${reconciliation(p)}</td>` : ""}
        </tr>`;
      })}
    </tbody>
  </table>`;
}

function balanceStats(b: BalanceView, testid: string): SafeHtml {
  return html`<div class="stats" data-testid="${testid}">
    <div><div class="muted">Available</div><div class="value" data-testid="available">${money(b.available)}</div></div>
    <div><div class="muted">Locked in orders</div><div class="value">${money(b.locked)}</div></div>
    <div><div class="muted">Positions at cost</div><div class="value">${money(b.positionsCost)}</div></div>
    <div><div class="muted">Total</div><div class="value" data-testid="total">${money(b.total)}</div></div>
  </div>`;
}

function ordersSection(lists: OrderLists, titles: Titles, action?: (order: OrderRow) => SafeHtml): SafeHtml {
  return html`<h2 id="orders">Open orders <span class="badge">${num(lists.openTotal)}</span></h2>
    ${
      lists.open.length === 0
        ? html`<p class="muted" data-testid="no-open-orders">No open orders.</p>`
        : ordersTable(lists.open, titles, "open-orders", action)
    }
    ${lists.openTotal > lists.open.length ? html`<p class="muted">The newest ${num(lists.open.length)} are shown.</p>` : ""}
    <h2>Recent orders</h2>
    ${
      lists.recent.length === 0
        ? html`<p class="muted">No filled or cancelled orders yet.</p>`
        : ordersTable(lists.recent, titles, "recent-orders")
    }`;
}

/** A note when the header's switch points at the other environment than this page shows. */
function otherEnvironmentNote(user: ConsoleUser, page: Owner["environment"]): SafeHtml {
  if (user.environment === page) return html``;
  return page === "sandbox"
    ? html`<p class="flash warn" role="status">The header is set to Live, but this page always shows the sandbox. Live orders and positions are on <a href="/console/trading">Live trading</a>.</p>`
    : html`<p class="flash warn" role="status">The header is set to Sandbox, but this page always shows live trading. The sandbox is on <a href="/console/sandbox">Sandbox</a>.</p>`;
}

// --- the sandbox ---------------------------------------------------------------------------------

interface TransferForm {
  values?: Record<string, string>;
  errors?: FieldErrors;
  flash?: Flash[];
}

async function sandboxPage(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ConsoleDeps,
  user: ConsoleUser,
  form: TransferForm = {},
  status = 200,
) {
  const owner = ownerOf(user, "sandbox");
  const [balance, lists, positions] = await Promise.all([
    deps.portfolio.balance(owner),
    orderLists(deps, owner),
    deps.portfolio.list(owner, { status: "all" }, { limit: POSITIONS_LIMIT, offset: 0 }),
  ]);
  const titles = await deps.orders.marketTitles([
    ...lists.open.map((o) => o.market_id),
    ...lists.recent.map((o) => o.market_id),
    ...lists.fills.map((f) => f.market_id),
    ...positions.positions.map((p) => p.row.market_id),
  ]);
  const cancel = (o: OrderRow) => html`<form method="post" action="/console/sandbox/orders/${o.id}/cancel">
      ${csrfField(user)}<button type="submit" class="small secondary" aria-label="Cancel order ${o.id}">Cancel</button>
    </form>`;
  const transfer = (kind: "deposit" | "withdraw", label: string, hint: string) =>
    html`<section class="card" aria-labelledby="${kind}-heading">
      <h2 id="${kind}-heading">${label}</h2>
      <form method="post" action="/console/sandbox/${kind}" class="stack" novalidate>
        ${csrfField(user)}
        ${field({ name: `${kind}_amount`, label: "Amount (USDC)", value: form.values?.[`${kind}_amount`], errors: form.errors, required: true, autocomplete: "off", hint, attrs: html`inputmode="decimal"` })}
        <div class="actions"><button type="submit">${label}</button></div>
      </form>
    </section>`;
  return render(
    request,
    reply,
    {
      title: "Sandbox",
      section: "sandbox",
      flash: form.flash ?? [],
      body: html`<h1>Sandbox</h1>
        ${otherEnvironmentNote(user, "sandbox")}
        <p class="muted">Fake USDC on a simulated exchange that fills against the venues' real books and
          trades. Sandbox keys trade here; nothing reaches a venue.</p>
        <section class="card" aria-labelledby="balance-heading">
          <h2 id="balance-heading">Balance <span class="muted">in ${balance.currency}</span></h2>
          ${balanceStats(balance, "sandbox-balance")}
        </section>
        <div class="grid2">
          ${transfer("deposit", "Deposit", "Fake USDC, e.g. 250 or 12.50 (at most 6 decimals).")}
          ${transfer("withdraw", "Withdraw", `Up to the available ${money(balance.available)}.`)}
        </div>
        <p><a class="button danger" href="/console/sandbox/reset">Reset the sandbox…</a>
          <span class="muted">Deletes its orders, positions and history; the balance goes back to 10,000 USDC.</span></p>
        ${ordersSection(lists, titles, cancel)}
        <h2>Positions</h2>
        ${positionsTable(positions.positions, titles, false)}
        ${positions.total > positions.positions.length ? html`<p class="muted">The newest ${num(positions.positions.length)} of ${num(positions.total)} are shown.</p>` : ""}
        <h2>Recent fills</h2>
        ${fillsTable(lists.fills, titles)}`,
    },
    status,
  );
}

/** An amount typed in USDC as micro-units, or what is wrong with it. */
function parseAmount(raw: string): { micros: number } | { error: string } {
  // People type "$1,000" or "250 USDC": the symbols carry no meaning here.
  const cleaned = raw.replace(/[\s,$]/g, "").replace(/usdc$/i, "");
  if (cleaned === "") return { error: "Enter an amount in USDC" };
  const micros = parseMicros(cleaned);
  if (micros === undefined)
    return { error: "must be a number of USDC like 250 or 12.50, with at most 6 decimals" };
  if (micros <= 0) return { error: "must be more than 0" };
  return { micros };
}

// --- live trading --------------------------------------------------------------------------------

async function tradingPage(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ConsoleDeps,
  user: ConsoleUser,
) {
  const owner = ownerOf(user, "live");
  // The ledger is ours and always readable; the venues (cash, holdings) may not be.
  const [links, lists, balance, positions] = await Promise.all([
    deps.credentials.list(owner),
    orderLists(deps, owner),
    deps.portfolio.balance(owner).then(
      (b) => ({ ok: true as const, b }),
      (error: unknown) => ({ ok: false as const, message: readFailure(error) }),
    ),
    deps.portfolio.list(owner, { status: "all" }, { limit: POSITIONS_LIMIT, offset: 0 }).then(
      (p) => ({ ok: true as const, p }),
      (error: unknown) => ({ ok: false as const, message: readFailure(error) }),
    ),
  ]);
  for (const failed of [balance, positions])
    if (!failed.ok) request.log.warn({ reason: failed.message }, "console: a live read failed");
  const titles = await deps.orders.marketTitles([
    ...lists.open.map((o) => o.market_id),
    ...lists.recent.map((o) => o.market_id),
    ...lists.fills.map((f) => f.market_id),
    ...(positions.ok ? positions.p.positions.map((p) => p.row.market_id) : []),
  ]);
  const unreadable: VenueReadView[] = positions.ok
    ? (positions.p.venues ?? []).filter((v) => v.status !== "ok")
    : [];
  return render(request, reply, {
    title: "Live trading",
    section: "trading",
    body: html`<h1>Live trading</h1>
      ${otherEnvironmentNote(user, "live")}
      <p class="flash warn" role="status" data-testid="read-only">This page is read-only. Live orders are placed and
        cancelled at the venues: use a live trading key with the API (<code>POST /v1/orders</code>,
        <code>DELETE /v1/orders/{id}</code>) or the venue's own site.</p>
      <p>Linked venues: ${
        links.length === 0
          ? html`none. <a href="/console/venues">Link a venue</a> to trade live.`
          : html`${links.map((l) => venueName(l.venue)).join(", ")} (<a href="/console/venues">manage</a>).`
      }</p>
      <section class="card" aria-labelledby="balance-heading">
        <h2 id="balance-heading">Balance at the venues</h2>
        ${
          balance.ok
            ? balanceStats(balance.b, "live-balance")
            : html`<p class="flash error" role="alert" data-testid="balance-unavailable">The venues' cash could not be read: ${balance.message}. Orders and positions below are crossbook's own record.</p>`
        }
      </section>
      ${ordersSection(lists, titles)}
      <h2>Positions</h2>
      ${unreadable.map(
        (v) =>
          html`<p class="flash warn" role="status">${venueName(v.venue)} could not be read${v.reason ? `: ${v.reason}` : ""}. Its positions show crossbook's own record.</p>`,
      )}
      ${
        positions.ok
          ? positionsTable(positions.p.positions, titles, true)
          : html`<p class="flash error" role="alert" data-testid="positions-unavailable">Positions could not be read: ${positions.message}.</p>`
      }
      <h2>Recent fills</h2>
      ${fillsTable(lists.fills, titles)}`,
  });
}

// --- routes --------------------------------------------------------------------------------------

export const registerTradingPages: ConsolePages = (app, deps) => {
  app.get("/sandbox", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    return sandboxPage(request, reply, deps, user);
  });

  for (const kind of ["deposit", "withdraw"] as const) {
    app.post(`/sandbox/${kind}`, async (request, reply) => {
      const user = requireUser(request, reply);
      if (!user) return reply;
      const name = `${kind}_amount`;
      const raw = text(formOf(request), name);
      const refuse = (message: string, status: number) =>
        sandboxPage(
          request,
          reply,
          deps,
          user,
          { values: { [name]: raw }, errors: { [name]: message } },
          status,
        );
      const amount = parseAmount(raw);
      if ("error" in amount) return refuse(amount.error, 400);
      const owner = ownerOf(user, "sandbox");
      try {
        const { balance } =
          kind === "deposit"
            ? await deps.sandbox.deposit(owner, amount.micros)
            : await deps.sandbox.withdraw(owner, amount.micros);
        return redirect(request, reply, "/console/sandbox", {
          kind: "ok",
          text: `${kind === "deposit" ? "Deposited" : "Withdrew"} ${money(amount.micros)}; ${money(balance.available)} available.`,
        });
      } catch (error) {
        const fields = fieldErrorsOf(error, { amount: name });
        if (fields?.[name]) return refuse(fields[name], 400);
        if (error instanceof AppError && error.code === "INSUFFICIENT_BALANCE") {
          const available = (error.details as { available?: number } | undefined)?.available;
          return refuse(
            available === undefined
              ? "is more than the available balance"
              : `is more than the ${money(Math.round(available * 1e6))} available`,
            error.status,
          );
        }
        throw error;
      }
    });
  }

  app.get("/sandbox/reset", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    return render(request, reply, {
      title: "Reset the sandbox",
      section: "sandbox",
      body: html`<div class="card narrow">
        <h1>Reset the sandbox?</h1>
        <p>Open sandbox orders leave the simulated book, and the sandbox's orders, fills, positions and
          transfers are deleted. The balance starts again at 10,000 USDC. Live trading is not affected,
          and your API keys stay as they are.</p>
        <form method="post" action="/console/sandbox/reset" class="actions">
          ${csrfField(user)}
          <button type="submit" class="danger">Reset the sandbox</button>
          <a class="button secondary" href="/console/sandbox">Cancel</a>
        </form>
      </div>`,
    });
  });

  app.post("/sandbox/reset", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const balance = await deps.sandbox.reset(ownerOf(user, "sandbox"));
    return redirect(request, reply, "/console/sandbox", {
      kind: "ok",
      text: `The sandbox was reset: ${money(balance.available)} available.`,
    });
  });

  app.post<{ Params: { id: string } }>("/sandbox/orders/:id/cancel", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    try {
      const order = await deps.orders.cancel(ownerOf(user, "sandbox"), request.params.id);
      return redirect(request, reply, "/console/sandbox#orders", {
        kind: "ok",
        text: `Order ${order.id} cancelled (${decimal(order.filled_amount)} of ${decimal(order.amount)} had filled).`,
      });
    } catch (error) {
      // Filled or cancelled meanwhile, or not this account's: say so on the page it came from.
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      return redirect(request, reply, "/console/sandbox#orders", { kind: "error", text: messageOf(error) });
    }
  });

  app.get("/trading", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    return tradingPage(request, reply, deps, user);
  });
};
