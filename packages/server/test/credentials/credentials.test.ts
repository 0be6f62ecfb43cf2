/**
 * Venue credentials, the happy path per venue: link, list, read, replace (same id, 200) and unlink,
 * and what the order router gets back from `credentialsFor`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, expectError } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import {
  type CredentialsTestApp,
  credentialsApp,
  FUNDER,
  FUNDER_LOWER,
  KALSHI_KEY_ID,
  link,
  linked,
  listCredentials,
  POLY_ADDRESS_A,
  POLY_ADDRESS_B,
  POLY_API,
  POLY_KEY_A,
  POLY_KEY_B,
  RSA_PKCS1_PEM,
  RSA_PKCS8_PEM,
} from "./setup";

describe.each(STORE_BACKENDS)("venue credentials on %s", (store) => {
  let t: CredentialsTestApp;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    ({ t, key, accountId } = await credentialsApp({ store }));
  });
  afterAll(() => t.close());

  const get = (id: string) =>
    t.app.inject({ method: "GET", url: `/v1/venue-credentials/${id}`, headers: bearer(key) });
  const unlink = (id: string) =>
    t.app.inject({ method: "DELETE", url: `/v1/venue-credentials/${id}`, headers: bearer(key) });

  it("links, lists, reads, replaces and unlinks a Polymarket account", async () => {
    const created = await link(t.app, key, { venue: "polymarket", private_key: POLY_KEY_A, label: "main" });
    expect(created.statusCode).toBe(201);
    const first = created.json().data;
    expect(first).toEqual({
      id: expect.stringMatching(/^vcr_[0-9A-Z]{26}$/),
      venue: "polymarket",
      label: "main",
      address: POLY_ADDRESS_A,
      key_id: null,
      funder: null,
      signature_type: 0,
      wallet_type: "eoa",
      has_api_credentials: false,
      created_at: "2026-11-22T12:00:00.000Z",
      updated_at: "2026-11-22T12:00:00.000Z",
    });
    expect(await listCredentials(t.app, key)).toEqual([first]);
    expect((await get(first.id)).json().data).toEqual(first);
    expect(await t.services.credentials.credentialsFor(accountId, "polymarket")).toEqual({
      venue: "polymarket",
      privateKey: POLY_KEY_A,
      signatureType: 0,
    });

    // Linking Polymarket again replaces the credential in place: same id, 200, new fields.
    t.clock.advance(60_000);
    const replaced = await link(t.app, key, {
      venue: "polymarket",
      private_key: POLY_KEY_B,
      signature_type: 2,
      funder: FUNDER_LOWER,
      ...POLY_API,
    });
    expect(replaced.statusCode).toBe(200);
    const second = replaced.json().data;
    expect(second).toEqual({
      id: first.id,
      venue: "polymarket",
      label: null,
      address: POLY_ADDRESS_B,
      key_id: null,
      funder: FUNDER,
      signature_type: 2,
      wallet_type: "safe",
      has_api_credentials: true,
      created_at: "2026-11-22T12:00:00.000Z",
      updated_at: "2026-11-22T12:01:00.000Z",
    });
    expect(await listCredentials(t.app, key)).toEqual([second]);
    expect(await t.services.credentials.credentialsFor(accountId, "polymarket")).toEqual({
      venue: "polymarket",
      privateKey: POLY_KEY_B,
      signatureType: 2,
      funder: FUNDER,
      apiKey: POLY_API.api_key,
      apiSecret: POLY_API.api_secret,
      apiPassphrase: POLY_API.api_passphrase,
    });

    const deleted = await unlink(first.id);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().data).toEqual({ id: first.id, venue: "polymarket", deleted: true });
    expectError(await get(first.id), 404, "VENUE_CREDENTIAL_NOT_FOUND");
    expectError(await unlink(first.id), 404, "VENUE_CREDENTIAL_NOT_FOUND");
    expect(await listCredentials(t.app, key)).toEqual([]);
    expect(await t.services.credentials.credentialsFor(accountId, "polymarket")).toBeUndefined();

    // Linking after an unlink is a new link with a new id.
    const again = await link(t.app, key, { venue: "polymarket", private_key: POLY_KEY_A });
    expect(again.statusCode).toBe(201);
    expect(again.json().data.id).not.toBe(first.id);
    await unlink(again.json().data.id);
  });

  it("accepts signature type 1 with a funder, and type 0 naming the signer itself as funder", async () => {
    const proxy = await linked(t.app, key, {
      venue: "polymarket",
      private_key: POLY_KEY_A,
      signature_type: 1,
      funder: FUNDER,
    });
    expect(proxy).toMatchObject({
      signature_type: 1,
      wallet_type: "proxy",
      funder: FUNDER,
      address: POLY_ADDRESS_A,
    });
    const eoa = await linked(t.app, key, {
      venue: "polymarket",
      private_key: POLY_KEY_A,
      funder: POLY_ADDRESS_A.toLowerCase(),
    });
    expect(eoa).toMatchObject({ id: proxy.id, signature_type: 0, funder: POLY_ADDRESS_A });
    await unlink(proxy.id);
  });

  it("links a deposit wallet (signature type 3): the wallet is the funder, the key its owner's", async () => {
    const deposit = await linked(t.app, key, {
      venue: "polymarket",
      private_key: POLY_KEY_A,
      signature_type: 3,
      funder: FUNDER_LOWER,
    });
    expect(deposit).toMatchObject({
      signature_type: 3,
      wallet_type: "deposit_wallet",
      funder: FUNDER,
      address: POLY_ADDRESS_A,
    });
    expect((await get(deposit.id)).json().data).toEqual(deposit);
    expect(await t.services.credentials.credentialsFor(accountId, "polymarket")).toEqual({
      venue: "polymarket",
      privateKey: POLY_KEY_A,
      signatureType: 3,
      funder: FUNDER,
    });
    await unlink(deposit.id);
  });

  it("links, replaces and unlinks a Kalshi account (PKCS#1 and PKCS#8 PEM)", async () => {
    const created = await link(t.app, key, {
      venue: "kalshi",
      key_id: KALSHI_KEY_ID,
      private_key_pem: RSA_PKCS1_PEM,
    });
    expect(created.statusCode).toBe(201);
    const first = created.json().data;
    expect(first).toEqual({
      id: expect.stringMatching(/^vcr_/),
      venue: "kalshi",
      label: null,
      address: null,
      key_id: KALSHI_KEY_ID,
      funder: null,
      signature_type: null,
      wallet_type: null,
      has_api_credentials: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(await t.services.credentials.credentialsFor(accountId, "kalshi")).toEqual({
      venue: "kalshi",
      keyId: KALSHI_KEY_ID,
      privateKeyPem: RSA_PKCS1_PEM,
    });

    const replaced = await link(t.app, key, {
      venue: "kalshi",
      key_id: "0f5c9b1e-1111-4a2b-9c3d-abcdefabcdef",
      private_key_pem: RSA_PKCS8_PEM,
      label: "trading bot",
    });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json().data).toMatchObject({
      id: first.id,
      key_id: "0f5c9b1e-1111-4a2b-9c3d-abcdefabcdef",
      label: "trading bot",
    });
    expect(await t.services.credentials.credentialsFor(accountId, "kalshi")).toEqual({
      venue: "kalshi",
      keyId: "0f5c9b1e-1111-4a2b-9c3d-abcdefabcdef",
      privateKeyPem: RSA_PKCS8_PEM,
    });
    expect((await get(first.id)).json().data).toMatchObject({ id: first.id, venue: "kalshi" });

    const deleted = await unlink(first.id);
    expect(deleted.json().data).toEqual({ id: first.id, venue: "kalshi", deleted: true });
    expect(await t.services.credentials.credentialsFor(accountId, "kalshi")).toBeUndefined();
  });

  it("keeps one credential per venue, listed by venue, and linking one venue leaves the other alone", async () => {
    const kalshi = await linked(t.app, key, {
      venue: "kalshi",
      key_id: KALSHI_KEY_ID,
      private_key_pem: RSA_PKCS8_PEM,
    });
    const poly = await linked(t.app, key, { venue: "polymarket", private_key: POLY_KEY_A });
    await linked(t.app, key, { venue: "polymarket", private_key: POLY_KEY_B });
    const list = await listCredentials(t.app, key);
    expect(list.map((c) => [c["venue"], c["id"]])).toEqual([
      ["kalshi", kalshi.id],
      ["polymarket", poly.id],
    ]);
    expect(await t.services.credentials.credentialsFor(accountId, "kalshi")).toMatchObject({
      privateKeyPem: RSA_PKCS8_PEM,
    });
  });

  it("settles concurrent links of one venue on one credential", async () => {
    const responses = await Promise.all(
      [POLY_KEY_A, POLY_KEY_B, POLY_KEY_A, POLY_KEY_B].map((privateKey) =>
        link(t.app, key, { venue: "polymarket", private_key: privateKey }),
      ),
    );
    for (const response of responses) expect([200, 201]).toContain(response.statusCode);
    const polymarket = (await listCredentials(t.app, key)).filter((c) => c["venue"] === "polymarket");
    expect(polymarket).toHaveLength(1);
    // Whichever write came last, what is stored opens and matches the address shown.
    const stored = await t.services.credentials.credentialsFor(accountId, "polymarket");
    expect(stored?.venue === "polymarket" && stored.privateKey).toBe(
      polymarket[0]!["address"] === POLY_ADDRESS_A ? POLY_KEY_A : POLY_KEY_B,
    );
  });
});
