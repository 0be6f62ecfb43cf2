/**
 * Console test helpers: `ConsoleClient` drives the pages through `app.inject` as a browser would
 * (a cookie jar, the CSRF token taken from the last page's forms, form-encoded posts), and
 * `startBrowser` launches Debian's Chromium through playwright-core (never a downloaded browser).
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { type Browser, chromium, type Page } from "playwright-core";
import type { OrderRow } from "../../src/ledger/orders-repo";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const ARTIFACTS = path.resolve(__dirname, "../../test-artifacts/console");

export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page that had a form. */
  csrf: string | undefined;
  last: LightMyRequestResponse | undefined;

  constructor(
    readonly app: FastifyInstance,
    readonly headers: Record<string, string> = {},
  ) {}

  #remember(response: LightMyRequestResponse): LightMyRequestResponse {
    const set = response.headers["set-cookie"];
    for (const line of set === undefined ? [] : Array.isArray(set) ? set : [set]) {
      const [pair, ...attributes] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = decodeURIComponent(pair!.slice(eq + 1).trim());
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const token = /name="_csrf" value="([^"]+)"/.exec(response.body);
    if (token) this.csrf = token[1];
    this.last = response;
    return response;
  }

  #cookieHeader(): Record<string, string> {
    return this.cookies.size === 0
      ? {}
      : { cookie: [...this.cookies].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("; ") };
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.#remember(
      await this.app.inject({
        method: "GET",
        url,
        headers: { ...this.headers, ...this.#cookieHeader(), ...headers },
      }),
    );
  }

  /** Posts a form; the CSRF token of the last page is added unless `_csrf` is given. */
  async post(
    url: string,
    fields: Record<string, string | string[]> = {},
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams();
    if (!("_csrf" in fields) && this.csrf) body.append("_csrf", this.csrf);
    for (const [name, value] of Object.entries(fields))
      for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    return this.#remember(
      await this.app.inject({
        method: "POST",
        url,
        payload: body.toString(),
        headers: {
          ...this.headers,
          ...this.#cookieHeader(),
          "content-type": "application/x-www-form-urlencoded",
          ...headers,
        },
      }),
    );
  }

  /** Follows a 303 to the page it names. */
  async follow(response: LightMyRequestResponse = this.last!): Promise<LightMyRequestResponse> {
    const location = response.headers.location;
    if (!location) throw new Error(`not a redirect: ${response.statusCode}`);
    return this.get(String(location));
  }

  /** Signs up a new account through the pages; returns its email. */
  async signUp(
    email = `console-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`,
    password = "correct horse battery staple",
  ) {
    await this.get("/console/signup");
    const response = await this.post("/console/signup", { email, password });
    if (response.statusCode !== 303)
      throw new Error(`sign-up failed: ${response.statusCode} ${response.body}`);
    await this.follow(response);
    return email;
  }

  async signIn(email: string, password = "correct horse battery staple") {
    await this.get("/console/signin");
    const response = await this.post("/console/signin", { email, password });
    if (response.statusCode !== 303)
      throw new Error(`sign-in failed: ${response.statusCode} ${response.body}`);
    await this.follow(response);
  }
}

export async function startBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}

/** Saves a full-page screenshot under test-artifacts/console/ for review. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/**
 * An open live limit buy on Kalshi, as the ledger stores one the venue acknowledged: written straight
 * into the orders table where a test needs open live orders without a live venue placing them.
 */
export function openLiveOrder(accountId: string, over: Partial<OrderRow> = {}): OrderRow {
  const now = "2026-11-22T12:00:00.000Z";
  return {
    id: `ord_console_${accountId.slice(-8)}`,
    account_id: accountId,
    environment: "live",
    market_id: "kalshi:K",
    venue: "kalshi",
    side: "buy",
    outcome: "yes",
    type: "limit",
    time_in_force: "GTC",
    price: 300_000,
    max_slippage_ppm: null,
    amount: 5_000_000,
    filled_amount: 0,
    filled_notional: 0,
    fees: 0,
    locked: 1_500_000,
    queue_ahead: 0,
    status: "open",
    cancel_reason: null,
    client_order_id: null,
    venue_order_id: "venue-1",
    position_id: `pos_console_${accountId.slice(-8)}`,
    expires_at: null,
    created_at: now,
    updated_at: now,
    cancelled_at: null,
    requested_amount: null,
    amount_note: null,
    fee_carry: 0,
    ...over,
  };
}
