/**
 * Venue credentials, the security matrix: only live keys holding `trade` reach them (a sandbox key
 * never does), another account's credential is a 404, and the secrets appear in no response and
 * nowhere in the stored row in clear. A sealed value only opens in the row it was sealed for.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createKey, expectError, setAccount, signup } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import {
  type CredentialsTestApp,
  credentialsApp,
  FUNDER,
  KALSHI_KEY_ID,
  link,
  linked,
  listCredentials,
  POLY_API,
  POLY_KEY_A,
  POLY_KEY_B,
  pemBody,
  RSA_PKCS1_PEM,
} from "./setup";

const polyBody = {
  venue: "polymarket",
  private_key: POLY_KEY_A,
  signature_type: 2,
  funder: FUNDER,
  ...POLY_API,
};
const kalshiBody = { venue: "kalshi", key_id: KALSHI_KEY_ID, private_key_pem: RSA_PKCS1_PEM };

/** Every secret string that was linked in this suite, as it must never be seen in clear. */
const SECRETS = [
  POLY_KEY_A.slice(2),
  POLY_KEY_B.slice(2),
  POLY_API.api_secret,
  POLY_API.api_passphrase,
  POLY_API.api_key,
  pemBody(RSA_PKCS1_PEM).slice(0, 64),
  pemBody(RSA_PKCS1_PEM).slice(-64),
];

function expectNoSecret(text: string, where: string) {
  for (const secret of SECRETS) expect(text.toLowerCase().includes(secret.toLowerCase()), where).toBe(false);
}

describe.each(STORE_BACKENDS)("venue credential security on %s", (store) => {
  let t: CredentialsTestApp;
  let owner: string;
  let session: string;
  let accountId: string;
  let stranger: string;
  let strangerAccount: string;
  let polyId: string;
  let kalshiId: string;

  beforeAll(async () => {
    ({ t, key: owner, session, accountId } = await credentialsApp({ store }));
    // This suite mints more keys than the free tier allows.
    await setAccount(t.services, accountId, { tier: "enterprise" });
    const other = await signup(t.app);
    strangerAccount = other.accountId;
    stranger = (await createKey(t.app, other.session, { type: "admin" })).key;
    polyId = (await linked(t.app, owner, polyBody)).id;
    kalshiId = (await linked(t.app, owner, kalshiBody)).id;
  });
  afterAll(() => t.close());

  const requests = (id: string) => [
    { method: "POST" as const, url: "/v1/venue-credentials", payload: kalshiBody },
    { method: "GET" as const, url: "/v1/venue-credentials" },
    { method: "GET" as const, url: `/v1/venue-credentials/${id}` },
    { method: "DELETE" as const, url: `/v1/venue-credentials/${id}` },
  ];

  it("refuses keys without the trade permission (403) and requests without a key (401)", async () => {
    const readOnly = (await createKey(t.app, session, { type: "read_only" })).key;
    const orders = (
      await createKey(t.app, session, { type: "agent", permissions: ["read", "manage_orders"] })
    ).key;
    for (const request of requests(polyId)) {
      for (const key of [readOnly, orders]) {
        const response = await t.app.inject({ ...request, headers: bearer(key) });
        expect(expectError(response, 403, "FORBIDDEN").details).toEqual({ required_permission: "trade" });
      }
      expectError(await t.app.inject(request), 401, "UNAUTHORIZED");
      // A sign-in session manages keys only.
      expectError(await t.app.inject({ ...request, headers: bearer(session) }), 401, "UNAUTHORIZED");
    }
    // An agent key with `trade` is enough.
    const agent = (await createKey(t.app, session, { type: "agent", permissions: ["trade"] })).key;
    expect((await listCredentials(t.app, agent)).map((c) => c["id"]).sort()).toEqual(
      [polyId, kalshiId].sort(),
    );
  });

  it("refuses sandbox keys with 403 on every route, before looking at the body", async () => {
    const sandbox = (await createKey(t.app, session, { type: "trading", environment: "sandbox" })).key;
    for (const request of [
      ...requests(polyId),
      { method: "POST" as const, url: "/v1/venue-credentials", payload: { venue: "nowhere" } },
    ]) {
      const response = await t.app.inject({ ...request, headers: bearer(sandbox) });
      const error = expectError(response, 403, "FORBIDDEN");
      expect(error.message).toMatch(/venue credentials are for live keys/i);
      expect(error.details).toEqual({ environment: "sandbox" });
    }
    // Nothing was linked, replaced or deleted through it.
    expect(await t.services.credentials.credentialsFor(accountId, "kalshi")).toMatchObject({
      keyId: KALSHI_KEY_ID,
    });
    expect((await listCredentials(t.app, owner)).map((c) => c["id"]).sort()).toEqual(
      [polyId, kalshiId].sort(),
    );
    // The service refuses a sandbox owner itself, whoever calls it.
    await expect(
      t.services.credentials.link({ accountId, environment: "sandbox" }, { venue: "polymarket" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("hides another account's credential: 404 on GET and DELETE, absent from its list", async () => {
    for (const method of ["GET", "DELETE"] as const) {
      for (const id of [polyId, kalshiId]) {
        const response = await t.app.inject({
          method,
          url: `/v1/venue-credentials/${id}`,
          headers: bearer(stranger),
        });
        expectError(response, 404, "VENUE_CREDENTIAL_NOT_FOUND");
      }
    }
    expect(await listCredentials(t.app, stranger)).toEqual([]);
    expect(await t.services.credentials.credentialsFor(strangerAccount, "polymarket")).toBeUndefined();
    // The stranger linking the same venue gets its own credential; the owner's is untouched.
    const theirs = await link(t.app, stranger, { venue: "polymarket", private_key: POLY_KEY_B });
    expect(theirs.statusCode).toBe(201);
    expect(theirs.json().data.id).not.toBe(polyId);
    expect(await t.services.credentials.credentialsFor(accountId, "polymarket")).toMatchObject({
      privateKey: POLY_KEY_A,
    });
    expect(await t.services.credentials.credentialsFor(strangerAccount, "polymarket")).toMatchObject({
      privateKey: POLY_KEY_B,
    });
  });

  it("returns no secret in any response body", async () => {
    const bodies: string[] = [];
    bodies.push((await link(t.app, owner, polyBody)).body); // a replacement
    bodies.push((await link(t.app, owner, kalshiBody)).body);
    bodies.push((await link(t.app, owner, { ...polyBody, api_key: undefined })).body); // a 400
    bodies.push(
      (await link(t.app, owner, { ...kalshiBody, private_key_pem: RSA_PKCS1_PEM.replace("MII", "@@@") }))
        .body,
    );
    for (const url of [
      "/v1/venue-credentials",
      `/v1/venue-credentials/${polyId}`,
      `/v1/venue-credentials/${kalshiId}`,
    ])
      bodies.push((await t.app.inject({ method: "GET", url, headers: bearer(owner) })).body);
    for (const body of bodies) expectNoSecret(body, body);
    expect(JSON.parse(bodies[0]!).data.id).toBe(polyId);
  });

  it("stores the secrets sealed: the raw rows hold none of them in clear", async () => {
    const rows = await t.runtime.store.db.selectFrom("venue_credentials").selectAll().execute();
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows) {
      expectNoSecret(JSON.stringify(row), row.id);
      expect(row.sealed_secret).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    }
    // The public fields are in clear, as shown.
    const poly = rows.find((row) => row.id === polyId)!;
    expect(poly).toMatchObject({
      account_id: accountId,
      venue: "polymarket",
      funder: FUNDER,
      signature_type: 2,
    });
  });

  it("hands the order router the decrypted originals", async () => {
    expect(await t.services.credentials.credentialsFor(accountId, "polymarket")).toEqual({
      venue: "polymarket",
      privateKey: POLY_KEY_A,
      signatureType: 2,
      funder: FUNDER,
      apiKey: POLY_API.api_key,
      apiSecret: POLY_API.api_secret,
      apiPassphrase: POLY_API.api_passphrase,
    });
    expect(await t.services.credentials.credentialsFor(accountId, "kalshi")).toEqual({
      venue: "kalshi",
      keyId: KALSHI_KEY_ID,
      privateKeyPem: RSA_PKCS1_PEM,
    });
  });

  it("binds each sealed value to its row: copied to another row, it does not open", async () => {
    const db = t.runtime.store.db;
    const source = await db
      .selectFrom("venue_credentials")
      .selectAll()
      .where("id", "=", polyId)
      .executeTakeFirstOrThrow();
    expect(() => t.runtime.secretBox.open(source.sealed_secret, kalshiId)).toThrow();
    expect(t.runtime.secretBox.open(source.sealed_secret, polyId)).toContain(POLY_KEY_A);

    // The stranger's row gets the owner's sealed Polymarket secret: it must not open there.
    await db
      .updateTable("venue_credentials")
      .set({ sealed_secret: source.sealed_secret })
      .where("account_id", "=", strangerAccount)
      .where("venue", "=", "polymarket")
      .execute();
    const failure = await t.services.credentials.credentialsFor(strangerAccount, "polymarket").then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).toMatch(/could not be decrypted/);
    expectNoSecret(failure?.message ?? "", "error message");
    // The owner's own row still opens.
    expect(await t.services.credentials.credentialsFor(accountId, "polymarket")).toMatchObject({
      privateKey: POLY_KEY_A,
    });
  });
});
