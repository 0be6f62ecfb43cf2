/**
 * Venue credentials, the errors: a link is checked offline before anything is stored, every bad
 * field is named, and no error message quotes the key it rejects.
 */
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, expectError } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import {
  type CredentialsTestApp,
  credentialsApp,
  EC_PEM,
  ED25519_PEM,
  FUNDER,
  KALSHI_KEY_ID,
  link,
  listCredentials,
  POLY_ADDRESS_A,
  POLY_API,
  POLY_KEY_A,
  pemBody,
  RSA_1024_PEM,
  RSA_PKCS8_PEM,
  RSA_PUBLIC_PEM,
} from "./setup";

describe.each(STORE_BACKENDS)("venue credential errors on %s", (store) => {
  let t: CredentialsTestApp;
  let key: string;

  beforeAll(async () => {
    ({ t, key } = await credentialsApp({ store }));
  });
  afterAll(() => t.close());

  async function badRequest(body: Record<string, unknown>) {
    const response = await link(t.app, key, body);
    return expectError(response, 400, "VALIDATION_ERROR").details?.["fields"] as Record<string, string>;
  }

  const poly = { venue: "polymarket", private_key: POLY_KEY_A };
  const kalshi = { venue: "kalshi", key_id: KALSHI_KEY_ID, private_key_pem: RSA_PKCS8_PEM };

  it("wants a Polymarket private key of 0x and 64 hex digits", async () => {
    for (const privateKey of [
      POLY_KEY_A.slice(2), // no 0x
      POLY_KEY_A.slice(0, -2), // 31 bytes
      `${POLY_KEY_A}00`, // 33 bytes
      `0x${"g".repeat(64)}`,
      "",
    ]) {
      const fields = await badRequest({ ...poly, private_key: privateKey });
      expect(Object.keys(fields), privateKey).toEqual(["body.private_key"]);
      expect(fields["body.private_key"]).toMatch(/pattern/);
    }
    expect(await badRequest({ venue: "polymarket" })).toEqual({
      "body.private_key": "is required for polymarket",
    });
  });

  it("refuses well-formed hex that is not a secp256k1 key, without quoting it", async () => {
    const curveOrder = "0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141";
    for (const privateKey of [`0x${"0".repeat(64)}`, curveOrder, `0x${"f".repeat(64)}`]) {
      const response = await link(t.app, key, { ...poly, private_key: privateKey });
      const error = expectError(response, 400, "VALIDATION_ERROR");
      expect(error.details?.["fields"]).toEqual({
        "body.private_key": "is not a valid secp256k1 private key (zero or not below the curve order)",
      });
      expect(response.body.toLowerCase()).not.toContain(privateKey.slice(2, 20));
      // viem's own message quotes the key as a decimal number.
      expect(response.body).not.toMatch(/\d{30,}/);
    }
  });

  it("wants a funder for signature types 1 and 2, and none other than the signer for type 0", async () => {
    for (const signatureType of [1, 2]) {
      const fields = await badRequest({ ...poly, signature_type: signatureType });
      expect(fields).toEqual({
        "body.funder": `is required for signature_type ${signatureType}: the proxy or Safe wallet that holds the funds`,
      });
    }
    expect(await badRequest({ ...poly, funder: FUNDER })).toEqual({
      "body.funder":
        "must be left out (or be the signer's own address) for signature_type 0: an EOA trades from itself " +
        "(a proxy, Safe or deposit wallet needs signature_type 1, 2 or 3)",
    });
    expect((await badRequest({ ...poly, signature_type: 2, funder: "0x1234" }))["body.funder"]).toMatch(
      /pattern/,
    );
    // Mixed case must be a valid EIP-55 checksum (one letter's case flipped here).
    const badChecksum = FUNDER.replace("aAeb", "aaeb");
    expect(await badRequest({ ...poly, signature_type: 2, funder: badChecksum })).toEqual({
      "body.funder": "has a bad EIP-55 checksum (check the address, or send it in lower case)",
    });
    expect((await badRequest({ ...poly, signature_type: 4, funder: FUNDER }))["body.signature_type"]).toBe(
      "must be one of: 0, 1, 2, 3",
    );
  });

  it("wants a deposit wallet's address as funder for signature type 3, and never the signer's own", async () => {
    expect(await badRequest({ ...poly, signature_type: 3 })).toEqual({
      "body.funder":
        "is required for signature_type 3: the deposit wallet's address (the account address shown on polymarket.com), which holds the funds and signs the orders",
    });
    // A proxy, Safe or deposit wallet is a contract the key controls, never the key's own address.
    for (const [signatureType, wallet] of [
      [1, "proxy wallet"],
      [2, "Safe wallet"],
      [3, "deposit wallet"],
    ] as const) {
      expect(await badRequest({ ...poly, signature_type: signatureType, funder: POLY_ADDRESS_A })).toEqual({
        "body.funder": `must be the ${wallet}, not the signer's own address, for signature_type ${signatureType} (send signature_type 0 to trade from the key's own address)`,
      });
    }
    expect(await listCredentials(t.app, key)).toEqual([]);
  });

  it("wants the Polymarket API key, secret and passphrase all together or not at all", async () => {
    expect(await badRequest({ ...poly, api_key: POLY_API.api_key })).toEqual({
      "body.api_secret":
        "is required when api_key is given: send api_key, api_secret and api_passphrase together, or none to derive them",
      "body.api_passphrase":
        "is required when api_key is given: send api_key, api_secret and api_passphrase together, or none to derive them",
    });
    const fields = await badRequest({
      ...poly,
      api_secret: POLY_API.api_secret,
      api_passphrase: POLY_API.api_passphrase,
    });
    expect(Object.keys(fields)).toEqual(["body.api_key"]);
    expect(fields["body.api_key"]).toMatch(/when api_secret and api_passphrase are given/);
  });

  it("wants a Kalshi key id and an unencrypted RSA private key in PEM", async () => {
    expect(await badRequest({ venue: "kalshi" })).toEqual({
      "body.key_id": "is required for kalshi",
      "body.private_key_pem": "is required for kalshi",
    });
    expect(await badRequest({ ...kalshi, private_key_pem: EC_PEM })).toEqual({
      "body.private_key_pem": "must be an RSA private key (this is an ec key): Kalshi signs with RSA-PSS",
    });
    expect((await badRequest({ ...kalshi, private_key_pem: ED25519_PEM }))["body.private_key_pem"]).toBe(
      "must be an RSA private key (this is a ed25519 key): Kalshi signs with RSA-PSS",
    );
    expect(await badRequest({ ...kalshi, private_key_pem: RSA_1024_PEM })).toEqual({
      "body.private_key_pem": "must be an RSA key of at least 2048 bits (this one has 1024)",
    });
    // Larger than Kalshi issues: every request we sign with it would cost a private-key operation
    // several times dearer, so it is refused at linking.
    const huge = generateKeyPairSync("rsa", { modulusLength: 4104 }).privateKey;
    expect(
      await badRequest({
        ...kalshi,
        private_key_pem: huge.export({ type: "pkcs8", format: "pem" }) as string,
      }),
    ).toEqual({
      "body.private_key_pem":
        "must be an RSA key of at most 4096 bits, as Kalshi issues them (this one has 4104)",
    });
    const unreadable =
      "is not a readable private key: send an unencrypted PEM (PKCS#1 BEGIN RSA PRIVATE KEY, or PKCS#8 BEGIN PRIVATE KEY)";
    for (const pem of [
      "not a key",
      RSA_PUBLIC_PEM,
      RSA_PKCS8_PEM.replace(/[A-Za-z]{8}/, "!!!!!!!!"),
      `-----BEGIN PRIVATE KEY-----\n${Buffer.from("garbage").toString("base64")}\n-----END PRIVATE KEY-----\n`,
    ]) {
      const response = await link(t.app, key, { ...kalshi, private_key_pem: pem });
      expect(expectError(response, 400, "VALIDATION_ERROR").details?.["fields"]).toEqual({
        "body.private_key_pem": unreadable,
      });
    }
    const fields = await badRequest({ ...kalshi, key_id: "has spaces in it" });
    expect(Object.keys(fields)).toEqual(["body.key_id"]);
    // No message quotes the rejected key.
    const response = await link(t.app, key, { ...kalshi, private_key_pem: EC_PEM });
    expect(response.body).not.toContain(pemBody(EC_PEM).slice(0, 40));
  });

  it("rejects unknown fields and the other venue's fields", async () => {
    expect(await badRequest({ ...poly, passphrase: "x" })).toEqual({
      "body.passphrase": "is not an accepted field",
    });
    expect(await badRequest({ ...kalshi, private_key: POLY_KEY_A, funder: FUNDER })).toEqual({
      "body.private_key": "is not an accepted field for kalshi",
      "body.funder": "is not an accepted field for kalshi",
    });
    expect(await badRequest({ ...poly, key_id: KALSHI_KEY_ID })).toEqual({
      "body.key_id": "is not an accepted field for polymarket",
    });
    expect((await badRequest({ ...poly, venue: "betfair" }))["body.venue"]).toBe(
      "must be one of: polymarket, kalshi",
    );
    expect((await badRequest({ private_key: POLY_KEY_A }))["body.venue"]).toBe("is required");
    expect((await badRequest({ ...poly, label: "" }))["body.label"]).toBeDefined();
  });

  it("stores nothing when a link is refused", async () => {
    expect(await listCredentials(t.app, key)).toEqual([]);
  });

  it("answers 404 for an unknown credential id", async () => {
    for (const method of ["GET", "DELETE"] as const) {
      const response = await t.app.inject({
        method,
        url: "/v1/venue-credentials/vcr_01JUNKJUNKJUNKJUNKJUNKJUNK",
        headers: bearer(key),
      });
      expect(expectError(response, 404, "VENUE_CREDENTIAL_NOT_FOUND").details).toEqual({
        credential_id: "vcr_01JUNKJUNKJUNKJUNKJUNKJUNK",
      });
    }
  });
});
