/**
 * Webhook signatures: known-answer vectors computed outside our code (openssl), interoperability
 * with the official `standardwebhooks` package, and the receiver-side check of SPEC 6.3.
 */
import { createHmac } from "node:crypto";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  deliveryHeaders,
  generateSecret,
  signSpec,
  signStandard,
  standardWebhooksKey,
  standardWebhooksSecret,
  verifySpecSignature,
} from "../../src/webhooks/signing";

const BODY =
  '{"id":"whd_01","type":"order.filled","timestamp":"2023-11-14T22:13:20.000Z","data":{"order_id":"ord_01"}}';
const TS = 1_700_000_000;
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe("known-answer vectors (computed with openssl, not with our code)", () => {
  // BODY='<the BODY literal above>'
  // printf '%s' "1700000000.$BODY" | openssl dgst -sha256 -hmac 'my-webhook-secret' -r
  it("spec signature keyed by a plain user secret", () => {
    expect(signSpec("my-webhook-secret", TS, BODY)).toBe(
      "sha256=0b0a9227eaadc1111c45adc1f88c0eaed0a8976fc817d01fe1366368176fcac6",
    );
  });

  // printf '%s' "1700000000.$BODY" | openssl dgst -sha256 -hmac 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' -r
  it("spec signature keyed by the whole whsec_ string, prefix included", () => {
    expect(signSpec("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", TS, BODY)).toBe(
      "sha256=f6d022de728df147866fe02db454a229140711b1b16ade0e89091fd4f8c4bb64",
    );
  });

  // printf '%s' "1700000000.$BODY" | openssl dgst -sha256 -hmac 'pässwörd-🔑' -r   (UTF-8 shell)
  it("spec signature uses the UTF-8 bytes of a non-ASCII secret", () => {
    expect(signSpec("pässwörd-🔑", TS, BODY)).toBe(
      "sha256=0a1106705bde96feedbf29c2ffe2d1bf65eeb9126639e740526f27a0791827b8",
    );
  });

  // The Standard Webhooks / Svix published example; rechecked with
  // key=$(printf '%s' MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw | base64 -d | xxd -p -c 256)
  // printf '%s' 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}' \
  //   | openssl dgst -sha256 -mac HMAC -macopt hexkey:$key -binary | base64
  it("Standard Webhooks signature of the published example, keyed by the decoded whsec_ bytes", () => {
    expect(
      signStandard(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  // printf '%s' "whd_01.1700000000.$BODY" | openssl dgst -sha256 -hmac 'my-webhook-secret' -binary | base64
  it("Standard Webhooks signature keyed by the UTF-8 bytes of a plain user secret", () => {
    expect(signStandard("my-webhook-secret", "whd_01", TS, BODY)).toBe(
      "v1,cOSriMwXDZShQ1HgxLVG0El43A2op4gx/xoN9Vef4aM=",
    );
  });

  // printf '%s' "whd_01.1700000000.$BODY" | openssl dgst -sha256 -hmac 'pässwörd-🔑' -binary | base64
  it("Standard Webhooks signature of a non-ASCII secret uses its UTF-8 bytes", () => {
    expect(signStandard("pässwörd-🔑", "whd_01", TS, BODY)).toBe(
      "v1,5+Q+1vdOPWfqeI+PNq2c0z0gJOEuPN4tXYp6JOfI9lo=",
    );
  });

  // printf '%s' "whd_01.1700000000.$BODY" | openssl dgst -sha256 -hmac 'whsec_not base64!' -binary | base64
  it("a whsec_ secret that is not canonical base64 is used as raw UTF-8 bytes, whole", () => {
    expect(signStandard("whsec_not base64!", "whd_01", TS, BODY)).toBe(
      "v1,Qd+gEe0u6CVMwResIKRRuMcGBx6oqGuxk2V4V378gnU=",
    );
  });
});

describe("key derivation", () => {
  it("decodes canonical whsec_ secrets and keeps everything else as UTF-8", () => {
    expect(standardWebhooksKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).toEqual(
      Buffer.from("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "base64"),
    );
    expect(standardWebhooksKey("pässwörd")).toEqual(Buffer.from("pässwörd", "utf8"));
    expect(standardWebhooksKey("whsec_")).toEqual(Buffer.from("whsec_", "utf8"));
    expect(standardWebhooksKey("whsec_abc")).toEqual(Buffer.from("whsec_abc", "utf8"));
  });

  it("tells the receiver which whsec_ secret to give the library", () => {
    const generated = generateSecret();
    expect(standardWebhooksSecret(generated)).toBe(generated);
    expect(standardWebhooksSecret("pässwörd")).toBe(
      `whsec_${Buffer.from("pässwörd", "utf8").toString("base64")}`,
    );
  });

  it("generates whsec_ secrets of 32 random bytes", () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), "base64")).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it("refuses timestamps that are not whole non-negative seconds, or are milliseconds", () => {
    expect(() => signSpec("s", 1.5, BODY)).toThrow(RangeError);
    expect(() => signStandard("s", "m", -1, BODY)).toThrow(RangeError);
    expect(() => signSpec("s", Date.now(), BODY)).toThrow(/milliseconds/);
  });
});

describe("delivery headers", () => {
  const input = {
    secret: "my-webhook-secret",
    deliveryId: "whd_01",
    eventType: "order.filled",
    rawBody: BODY,
  };

  it("carries exactly the spec headers, the Standard Webhooks headers and our user agent", () => {
    const headers = deliveryHeaders({ ...input, timestampSeconds: TS });
    expect(headers).toEqual({
      "content-type": "application/json",
      "x-service-signature": "sha256=0b0a9227eaadc1111c45adc1f88c0eaed0a8976fc817d01fe1366368176fcac6",
      "x-service-timestamp": "1700000000",
      "x-service-event": "order.filled",
      "x-service-delivery-id": "whd_01",
      "webhook-id": "whd_01",
      "webhook-timestamp": "1700000000",
      "webhook-signature": "v1,cOSriMwXDZShQ1HgxLVG0El43A2op4gx/xoN9Vef4aM=",
      "user-agent": "crossbook-webhooks/1",
    });
  });

  it("signs timestamp.body as SPEC 6.3 says, checked with node:crypto", () => {
    const ts = nowSeconds();
    const headers = deliveryHeaders({ ...input, timestampSeconds: ts });
    const digest = createHmac("sha256", "my-webhook-secret")
      .update(`${headers["x-service-timestamp"]}.${BODY}`)
      .digest("hex");
    expect(headers["x-service-signature"]).toBe(`sha256=${digest}`);
  });

  it("verifies with the official standardwebhooks package for a generated secret", () => {
    const secret = generateSecret();
    const headers = deliveryHeaders({ ...input, secret, timestampSeconds: nowSeconds() });
    expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
  });

  it("verifies with the official package for a user-supplied secret via standardWebhooksSecret", () => {
    for (const secret of ["my-webhook-secret", "pässwörd-🔑", "whsec_not base64!"]) {
      const headers = deliveryHeaders({ ...input, secret, timestampSeconds: nowSeconds() });
      expect(new Webhook(standardWebhooksSecret(secret)).verify(BODY, headers)).toEqual(JSON.parse(BODY));
      // The documented recipe, spelled out: whsec_ + base64 of the secret's UTF-8 bytes.
      const recipe = `whsec_${Buffer.from(secret, "utf8").toString("base64")}`;
      expect(() => new Webhook(recipe).verify(BODY, headers)).not.toThrow();
    }
  });

  it("fails the official verification for a tampered body, a wrong secret or another id", () => {
    const secret = generateSecret();
    const headers = deliveryHeaders({ ...input, secret, timestampSeconds: nowSeconds() });
    const tampered = BODY.replace("ord_01", "ord_02");
    expect(() => new Webhook(secret).verify(tampered, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(generateSecret()).verify(BODY, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(BODY, { ...headers, "webhook-id": "whd_02" })).toThrow(
      WebhookVerificationError,
    );
  });
});

describe("verifySpecSignature", () => {
  const secret = "my-webhook-secret";
  const good = signSpec(secret, TS, BODY);
  const at = { nowSeconds: TS + 10, toleranceSeconds: 300 };

  it("accepts a good signature within the tolerance, for a string or a Buffer body", () => {
    expect(verifySpecSignature(secret, "1700000000", BODY, good, at)).toBe(true);
    expect(verifySpecSignature(secret, "1700000000", Buffer.from(BODY), good, at)).toBe(true);
    expect(verifySpecSignature(secret, "1700000000", BODY, good, { ...at, nowSeconds: TS - 300 })).toBe(true);
  });

  it("accepts a fresh delivery with the default options (wall clock, 300 s)", () => {
    const ts = nowSeconds();
    expect(verifySpecSignature(secret, String(ts), BODY, signSpec(secret, ts, BODY))).toBe(true);
  });

  it("rejects a wrong secret, a tampered body and a signature made for another timestamp", () => {
    expect(verifySpecSignature("other-secret", "1700000000", BODY, good, at)).toBe(false);
    expect(verifySpecSignature(secret, "1700000000", `${BODY} `, good, at)).toBe(false);
    expect(verifySpecSignature(secret, "1700000001", BODY, good, at)).toBe(false);
    expect(verifySpecSignature(secret, "1700000000", BODY, good.toUpperCase(), at)).toBe(false);
  });

  it("rejects stale and far-future timestamps even with a valid signature", () => {
    expect(verifySpecSignature(secret, "1700000000", BODY, good, { ...at, nowSeconds: TS + 301 })).toBe(
      false,
    );
    expect(verifySpecSignature(secret, "1700000000", BODY, good, { ...at, nowSeconds: TS - 301 })).toBe(
      false,
    );
  });

  it("returns false, without throwing, for missing or garbage input", () => {
    const cases: Array<[unknown, unknown, unknown, unknown]> = [
      [secret, undefined, BODY, good],
      [secret, "1700000000", BODY, undefined],
      [secret, "1700000000", BODY, ""],
      [secret, "1700000000", BODY, "sha256="],
      [secret, "1700000000", BODY, "sha256=zz"],
      [secret, "1700000000", BODY, good.slice(0, -1)],
      [secret, "1700000000", BODY, `${good}00`],
      [secret, "1700000000", BODY, "é".repeat(71)],
      [secret, "17e8", BODY, good],
      [secret, "-1700000000", BODY, good],
      [secret, "", BODY, good],
      [secret, "9".repeat(40), BODY, good],
      [secret, "1700000000", null, good],
      ["", "1700000000", BODY, good],
      [null, "1700000000", BODY, good],
    ];
    for (const [s, t, b, sig] of cases) {
      expect(verifySpecSignature(s as string, t as string, b as string, sig as string, at)).toBe(false);
    }
  });
});
