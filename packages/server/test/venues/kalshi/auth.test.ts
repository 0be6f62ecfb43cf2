/** RSA-PSS request signing (VENUES.md §2.5), verified with node:crypto against a fresh key pair. */
import { constants, generateKeyPairSync, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import { KALSHI_HEADERS, kalshiAuthHeaders, kalshiSignedMessage } from "../../../src/venues/kalshi/auth";

const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
const pkcs8 = pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const pkcs1 = pair.privateKey.export({ type: "pkcs1", format: "pem" }).toString();

function verifies(message: string, signatureB64: string, saltLength: number): boolean {
  return verify(
    "sha256",
    Buffer.from(message),
    { key: pair.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength },
    Buffer.from(signatureB64, "base64"),
  );
}

describe("kalshi signing", () => {
  it("signs timestamp_ms + METHOD + path, path without the query string, with the /trade-api/v2 prefix", () => {
    expect(kalshiSignedMessage(1703123456789, "GET", "/trade-api/v2/portfolio/orders?limit=5")).toBe(
      "1703123456789GET/trade-api/v2/portfolio/orders",
    );
    expect(kalshiSignedMessage(1703123456789, "post", "/trade-api/v2/portfolio/events/orders")).toBe(
      "1703123456789POST/trade-api/v2/portfolio/events/orders",
    );
  });

  it.each([
    ["PKCS#8", pkcs8],
    ["PKCS#1", pkcs1],
  ])("produces the three headers, PSS-SHA256 with salt = digest length (%s key)", (_name, pem) => {
    const headers = kalshiAuthHeaders(
      { keyId: "a952bcbe-ec3b-4b5b-b8f9-11dae589608c", privateKeyPem: pem },
      "GET",
      "/trade-api/v2/portfolio/orders?limit=5",
      1703123456789,
    );
    expect(Object.keys(headers).sort()).toEqual(
      ["KALSHI-ACCESS-KEY", "KALSHI-ACCESS-SIGNATURE", "KALSHI-ACCESS-TIMESTAMP"].sort(),
    );
    expect(headers[KALSHI_HEADERS.key]).toBe("a952bcbe-ec3b-4b5b-b8f9-11dae589608c");
    expect(headers[KALSHI_HEADERS.timestamp]).toBe("1703123456789");
    const signature = headers[KALSHI_HEADERS.signature]!;
    expect(Buffer.from(signature, "base64")).toHaveLength(256);
    const message = "1703123456789GET/trade-api/v2/portfolio/orders";
    expect(verifies(message, signature, 32)).toBe(true);
    expect(verifies(message, signature, constants.RSA_PSS_SALTLEN_AUTO)).toBe(true);
    // Any other message (with the query, another method, another timestamp) does not verify.
    expect(verifies(`${message}?limit=5`, signature, 32)).toBe(false);
    expect(verifies("1703123456789POST/trade-api/v2/portfolio/orders", signature, 32)).toBe(false);
    expect(verifies("1703123456788GET/trade-api/v2/portfolio/orders", signature, 32)).toBe(false);
  });

  it("PSS is randomised: two signatures of one message differ and both verify", () => {
    const key = { keyId: "k", privateKeyPem: pkcs8 };
    const a = kalshiAuthHeaders(key, "GET", "/trade-api/ws/v2", 1)[KALSHI_HEADERS.signature]!;
    const b = kalshiAuthHeaders(key, "GET", "/trade-api/ws/v2", 1)[KALSHI_HEADERS.signature]!;
    expect(a).not.toBe(b);
    expect(verifies("1GET/trade-api/ws/v2", a, 32) && verifies("1GET/trade-api/ws/v2", b, 32)).toBe(true);
  });

  it("a key that is not PEM fails as auth_failed", () => {
    expect(() => kalshiAuthHeaders({ keyId: "k", privateKeyPem: "not a key" }, "GET", "/x", 1)).toThrowError(
      expect.objectContaining({ kind: "auth_failed" }),
    );
  });
});
