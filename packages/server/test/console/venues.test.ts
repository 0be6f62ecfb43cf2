/**
 * The console's venue links through its routes: the API's checks with each error next to its field
 * (never a 500, never a secret echoed), a link listed without its secret and visible to the API,
 * unlinking through a confirmation page, and the refusal while live orders are open.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertOrder } from "../../src/ledger/orders-repo";
import {
  FUNDER,
  KALSHI_KEY_ID,
  listCredentials,
  POLY_ADDRESS_A,
  POLY_KEY_A,
  pemBody,
  RSA_1024_PEM,
  RSA_PKCS8_PEM,
} from "../credentials/setup";
import { createKey, createTestApp, type TestApp } from "../support/app";
import { ConsoleClient, openLiveOrder } from "./support";

let address = 0;
const fresh = (app: TestApp["app"]) => new ConsoleClient(app, { "x-forwarded-for": `10.7.0.${++address}` });

/** The error shown under a form field (field() renders it as `<div class="error" id="f-NAME-error">`). */
function fieldError(body: string, name: string): string | undefined {
  const match = new RegExp(`id="f-${name}-error">([^<]*)<`).exec(body);
  return match?.[1];
}

describe("console venue links", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { trustProxy: ["loopback"] } });
  });
  afterAll(() => t.close());

  async function signedIn() {
    const c = fresh(t.app);
    await c.signUp();
    const session = c.cookies.get("cb_session")!;
    const accountId = (await t.services.accounts.resolveSession(session))!.account_id;
    return { c, session, accountId };
  }

  it("asks a signed-out visitor to sign in", async () => {
    const response = await fresh(t.app).get("/console/venues");
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/console/signin?next=%2Fconsole%2Fvenues");
  });

  it("shows both forms with guidance on where each venue issues its keys", async () => {
    const { c } = await signedIn();
    const page = await c.get("/console/venues");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-testid="no-links"');
    expect(page.body).toContain("API keys");
    expect(page.body).toContain("private key file");
    expect(page.body).toContain("CLOB API credentials");
    for (const id of [
      "f-kalshi_key_id",
      "f-kalshi_private_key_pem",
      "f-polymarket_private_key",
      "f-polymarket_signature_type",
      "f-polymarket_funder",
    ])
      expect(page.body).toContain(`<label for="${id}"`);
  });

  it("shows the API's field errors next to the fields, as a 400, without echoing a secret", async () => {
    const { c } = await signedIn();
    await c.get("/console/venues");
    const kalshi = await c.post("/console/venues/link", {
      venue: "kalshi",
      kalshi_label: "main",
      kalshi_key_id: "not a key id!",
      kalshi_private_key_pem: RSA_1024_PEM,
    });
    expect(kalshi.statusCode).toBe(400);
    expect(fieldError(kalshi.body, "kalshi_key_id")).toMatch(/letters, digits/);
    expect(fieldError(kalshi.body, "kalshi_private_key_pem")).toMatch(/at least 2048 bits/);
    expect(kalshi.body).toContain('aria-invalid="true"');
    // The label comes back; the key never does.
    expect(kalshi.body).toContain('value="main"');
    expect(kalshi.body).not.toContain(pemBody(RSA_1024_PEM).slice(0, 40));

    const missing = await c.post("/console/venues/link", { venue: "kalshi", kalshi_key_id: KALSHI_KEY_ID });
    expect(missing.statusCode).toBe(400);
    expect(fieldError(missing.body, "kalshi_private_key_pem")).toBe("is required for kalshi");

    const unreadable = await c.post("/console/venues/link", {
      venue: "kalshi",
      kalshi_key_id: KALSHI_KEY_ID,
      kalshi_private_key_pem: "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----",
    });
    expect(unreadable.statusCode).toBe(400);
    expect(fieldError(unreadable.body, "kalshi_private_key_pem")).toMatch(/not a readable private key/);

    const polymarket = await c.post("/console/venues/link", {
      venue: "polymarket",
      polymarket_private_key: "0x1234",
      polymarket_signature_type: "2",
      polymarket_api_key: "only-the-key",
    });
    expect(polymarket.statusCode).toBe(400);
    expect(fieldError(polymarket.body, "polymarket_private_key")).toBe(
      "must be 0x followed by 64 hex digits",
    );
    expect(fieldError(polymarket.body, "polymarket_funder")).toMatch(/is required for signature_type 2/);
    expect(fieldError(polymarket.body, "polymarket_api_secret")).toMatch(
      /send api_key, api_secret and api_passphrase together/,
    );
    expect(polymarket.body).not.toContain("only-the-key");
    // The chosen wallet type is kept, and the API credentials unfold to show their errors.
    expect(polymarket.body).toMatch(/<option value="2"\s+selected>/);
    expect(polymarket.body).toMatch(/<details\s+open>/);

    const ownAddress = await c.post("/console/venues/link", {
      venue: "polymarket",
      polymarket_private_key: POLY_KEY_A,
      polymarket_signature_type: "2",
      polymarket_funder: POLY_ADDRESS_A,
    });
    expect(ownAddress.statusCode).toBe(400);
    expect(fieldError(ownAddress.body, "polymarket_funder")).toMatch(/not the signer&#39;s own address/);

    const badType = await c.post("/console/venues/link", {
      venue: "polymarket",
      polymarket_private_key: POLY_KEY_A,
      polymarket_signature_type: "9",
    });
    expect(badType.statusCode).toBe(400);
    expect(fieldError(badType.body, "polymarket_signature_type")).toBe("must be one of: 0, 1, 2, 3");

    const noVenue = await c.post("/console/venues/link", { venue: "nowhere" });
    expect(noVenue.statusCode).toBe(400);
    expect((await c.get("/console/venues")).body).toContain('data-testid="no-links"');
  });

  it("links both venues, lists them without secrets, and the API sees the same links", async () => {
    const { c, session } = await signedIn();
    await c.get("/console/venues");
    const kalshi = await c.post("/console/venues/link", {
      venue: "kalshi",
      kalshi_label: "trading desk",
      kalshi_key_id: KALSHI_KEY_ID,
      // As a browser sends a textarea: CRLF line ends.
      kalshi_private_key_pem: RSA_PKCS8_PEM.replace(/\n/g, "\r\n"),
    });
    expect(kalshi.statusCode).toBe(303);
    expect(kalshi.headers.location).toBe("/console/venues");
    const afterKalshi = await c.follow(kalshi);
    expect(afterKalshi.body).toContain(`Kalshi linked (key ID ${KALSHI_KEY_ID})`);

    const polymarket = await c.post("/console/venues/link", {
      venue: "polymarket",
      polymarket_private_key: POLY_KEY_A,
      polymarket_signature_type: "2",
      polymarket_funder: FUNDER.toLowerCase(),
    });
    expect(polymarket.statusCode).toBe(303);
    const page = await c.follow(polymarket);
    expect(page.body).toContain(`Polymarket linked (signer ${POLY_ADDRESS_A})`);
    expect(page.body.match(/data-testid="link"/g)).toHaveLength(2);
    expect(page.body).toContain(KALSHI_KEY_ID);
    expect(page.body).toContain("trading desk");
    expect(page.body).toContain(POLY_ADDRESS_A);
    expect(page.body).toContain(FUNDER);
    expect(page.body).toContain("Derived from the key");
    expect(page.body).toContain("Replace the Kalshi link");
    expect(page.body).not.toContain(pemBody(RSA_PKCS8_PEM).slice(0, 40));
    expect(page.body).not.toContain(POLY_KEY_A.slice(2));

    // The very links the API lists for a live key of the account.
    const live = (await createKey(t.app, session, { type: "trading", environment: "live" })).key;
    const listed = await listCredentials(t.app, live);
    expect(listed.map((l) => [l.venue, l.key_id ?? l.address]).sort()).toEqual([
      ["kalshi", KALSHI_KEY_ID],
      ["polymarket", POLY_ADDRESS_A],
    ]);

    // Linking again replaces in place.
    const again = await c.post("/console/venues/link", {
      venue: "kalshi",
      kalshi_key_id: "b1b2c3d4-0000-4000-8000-000000000001",
      kalshi_private_key_pem: RSA_PKCS8_PEM,
    });
    expect((await c.follow(again)).body).toContain(
      "Kalshi link replaced (key ID b1b2c3d4-0000-4000-8000-000000000001)",
    );
    expect(await listCredentials(t.app, live)).toHaveLength(2);
  });

  it("works whichever environment the header shows: links belong to the account", async () => {
    const { c } = await signedIn();
    await c.get("/console/venues");
    await c.post("/console/environment", { environment: "live", next: "/console/venues" });
    const linked = await c.post("/console/venues/link", {
      venue: "kalshi",
      kalshi_key_id: KALSHI_KEY_ID,
      kalshi_private_key_pem: RSA_PKCS8_PEM,
    });
    expect(linked.statusCode).toBe(303);
    await c.post("/console/environment", { environment: "sandbox", next: "/console/venues" });
    expect((await c.get("/console/venues")).body.match(/data-testid="link"/g)).toHaveLength(1);
  });

  it("unlinks through a confirmation page that works without script", async () => {
    const { c, session } = await signedIn();
    await c.get("/console/venues");
    await c.post("/console/venues/link", {
      venue: "kalshi",
      kalshi_key_id: KALSHI_KEY_ID,
      kalshi_private_key_pem: RSA_PKCS8_PEM,
    });
    const list = await c.get("/console/venues");
    const href = /href="(\/console\/venues\/(vcr_[^/"]+)\/unlink)"/.exec(list.body)!;
    const confirm = await c.get(href[1]!);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain("Unlink Kalshi?");
    expect(confirm.body).toContain(KALSHI_KEY_ID);
    expect(confirm.body).toContain(`<form method="post" action="${href[1]}"`);
    const unlinked = await c.post(href[1]!);
    expect(unlinked.statusCode).toBe(303);
    const after = await c.follow(unlinked);
    expect(after.body).toContain("Kalshi unlinked.");
    expect(after.body).toContain('data-testid="no-links"');
    const live = (await createKey(t.app, session, { type: "trading", environment: "live" })).key;
    expect(await listCredentials(t.app, live)).toEqual([]);
    // The link is gone: its page is a 404, not an error.
    expect((await c.get(href[1]!)).statusCode).toBe(404);
    // Another account cannot reach it either.
    const other = await signedIn();
    expect((await other.c.get(href[1]!)).statusCode).toBe(404);
  });

  it("says why it keeps a link while live orders are open, and unlinks when told to anyway", async () => {
    const { c, accountId } = await signedIn();
    await c.get("/console/venues");
    await c.post("/console/venues/link", {
      venue: "kalshi",
      kalshi_key_id: KALSHI_KEY_ID,
      kalshi_private_key_pem: RSA_PKCS8_PEM,
    });
    // A live order resting on Kalshi, as the order router would have recorded it.
    await insertOrder(
      t.runtime.store.db,
      openLiveOrder(accountId, { id: `ord_console_${accountId.slice(-8)}` }),
    );
    const list = await c.get("/console/venues");
    const action = /href="(\/console\/venues\/vcr_[^/"]+\/unlink)"/.exec(list.body)![1]!;
    await c.get(action);
    const refused = await c.post(action);
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain("1 live order is open on Kalshi, so the link was kept.");
    expect(refused.body).toContain('name="force" value="1"');
    expect((await c.get("/console/venues")).body.match(/data-testid="link"/g)).toHaveLength(1);
    await c.get(action);
    const forced = await c.post(action, { force: "1" });
    expect(forced.statusCode).toBe(303);
    expect((await c.follow(forced)).body).toContain('data-testid="no-links"');
  });
});
