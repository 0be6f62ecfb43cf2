/**
 * Webhook signatures: the spec's own scheme (SPEC 6.3) and Standard Webhooks
 * (https://www.standardwebhooks.com/), sent side by side on every delivery so a receiver can use
 * either our documented recipe or the official `standardwebhooks` libraries.
 *
 * - Spec: `X-Service-Signature: sha256=<hex(HMAC-SHA256(secret, "<timestamp>.<raw body>"))>`, keyed
 *   by the webhook secret exactly as the user supplied it (its UTF-8 bytes, `whsec_` prefix and all).
 * - Standard Webhooks: `webhook-signature: v1,<base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>"))>`.
 *   The libraries take a secret `whsec_<base64 key>` and sign with the decoded key bytes. Secrets we
 *   generate have that form (32 random bytes), so the user passes the secret to the library as is.
 *   A user-supplied secret that is not a canonical `whsec_<base64>` string is used as raw bytes: the
 *   key is its UTF-8 encoding, and the receiver passes `standardWebhooksSecret(secret)`, i.e.
 *   `"whsec_" + base64(utf8(secret))`, to the library. The rule is `standardWebhooksKey` below.
 *
 * No server imports here: the agent client library reuses `verifySpecSignature`.
 */
import { createHmac, createSecretKey, type KeyObject, randomBytes, timingSafeEqual } from "node:crypto";

const SW_PREFIX = "whsec_";
/** Canonical padded base64, as the Standard Webhooks libraries decode it. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DEFAULT_TOLERANCE_SECONDS = 300;

/** A new webhook secret: `whsec_` + base64 of 32 random bytes (valid for both schemes as is). */
export function generateSecret(): string {
  return SW_PREFIX + randomBytes(32).toString("base64");
}

/**
 * The HMAC key for the Standard Webhooks signature: the decoded bytes of a canonical `whsec_<base64>`
 * secret, otherwise the UTF-8 bytes of the whole secret.
 */
export function standardWebhooksKey(secret: string): Buffer {
  if (secret.startsWith(SW_PREFIX)) {
    const encoded = secret.slice(SW_PREFIX.length);
    if (encoded.length > 0 && BASE64.test(encoded)) return Buffer.from(encoded, "base64");
  }
  return Buffer.from(secret, "utf8");
}

/**
 * The secret string a receiver gives to `new Webhook(...)` of the `standardwebhooks` libraries to
 * verify our `webhook-signature` (the secret itself when it already is a canonical `whsec_` secret).
 */
export function standardWebhooksSecret(secret: string): string {
  return SW_PREFIX + standardWebhooksKey(secret).toString("base64");
}

function assertTimestamp(timestampSeconds: number): void {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new RangeError("timestampSeconds must be a non-negative integer number of seconds");
  }
  // 1e11 s is the year 5138: a larger value is almost surely Date.now() milliseconds.
  if (timestampSeconds >= 1e11) throw new RangeError("timestampSeconds looks like milliseconds");
}

function specDigestHex(secret: string, timestamp: string, rawBody: string | Uint8Array): string {
  return createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(`${timestamp}.`, "utf8")
    .update(rawBody)
    .digest("hex");
}

/** SPEC 6.3: `sha256=` + hex HMAC-SHA256 over `<timestamp>.<raw body>`, keyed by the secret. */
export function signSpec(secret: string, timestampSeconds: number, rawBody: string): string {
  assertTimestamp(timestampSeconds);
  return `sha256=${specDigestHex(secret, String(timestampSeconds), rawBody)}`;
}

/** Standard Webhooks: `v1,` + base64 HMAC-SHA256 over `<msg id>.<timestamp>.<body>`. */
export function signStandard(
  secret: string,
  msgId: string,
  timestampSeconds: number,
  rawBody: string,
): string {
  assertTimestamp(timestampSeconds);
  const mac = createHmac("sha256", standardWebhooksKey(secret))
    .update(`${msgId}.${timestampSeconds}.${rawBody}`, "utf8")
    .digest("base64");
  return `v1,${mac}`;
}

export interface DeliveryHeadersInput {
  secret: string;
  deliveryId: string;
  eventType: string;
  timestampSeconds: number;
  /** The exact bytes that will be sent as the body: sign what you send. */
  rawBody: string;
}

/** A secret's two HMAC keys, derived once (a sender signing many deliveries reuses them). */
export interface SigningKeys {
  spec: KeyObject;
  standard: KeyObject;
}

export function signingKeys(secret: string): SigningKeys {
  return {
    spec: createSecretKey(Buffer.from(secret, "utf8")),
    standard: createSecretKey(standardWebhooksKey(secret)),
  };
}

/** Every header of one delivery attempt (SPEC 6.2 plus Standard Webhooks), names in lower case. */
export function deliveryHeaders(
  input: DeliveryHeadersInput,
  keys: SigningKeys = signingKeys(input.secret),
): Record<string, string> {
  const { deliveryId, eventType, timestampSeconds, rawBody } = input;
  assertTimestamp(timestampSeconds);
  const timestamp = String(timestampSeconds);
  const spec = createHmac("sha256", keys.spec).update(`${timestamp}.`, "utf8").update(rawBody).digest("hex");
  const standard = createHmac("sha256", keys.standard)
    .update(`${deliveryId}.${timestamp}.${rawBody}`, "utf8")
    .digest("base64");
  return {
    "content-type": "application/json",
    "x-service-signature": `sha256=${spec}`,
    "x-service-timestamp": timestamp,
    "x-service-event": eventType,
    "x-service-delivery-id": deliveryId,
    "webhook-id": deliveryId,
    "webhook-timestamp": timestamp,
    "webhook-signature": `v1,${standard}`,
    "user-agent": "crossbook-webhooks/1",
  };
}

export interface VerifyOptions {
  /** Largest accepted distance between the timestamp and now, either way (default 300 s). */
  toleranceSeconds?: number;
  /** Current Unix time in seconds (default: the wall clock). */
  nowSeconds?: number;
}

/**
 * Receiver side of SPEC 6.3: true only for a well-formed, fresh timestamp and a matching signature,
 * compared in constant time. Never throws on malformed input (missing or garbage headers are false).
 */
export function verifySpecSignature(
  secret: string,
  timestampHeader: string | null | undefined,
  rawBody: string | Uint8Array,
  signatureHeader: string | null | undefined,
  options: VerifyOptions = {},
): boolean {
  if (typeof secret !== "string" || secret.length === 0) return false;
  if (typeof timestampHeader !== "string" || typeof signatureHeader !== "string") return false;
  if (typeof rawBody !== "string" && !(rawBody instanceof Uint8Array)) return false;
  if (!/^\d{1,15}$/.test(timestampHeader)) return false;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestampHeader)) > tolerance) return false;

  const expected = Buffer.from(`sha256=${specDigestHex(secret, timestampHeader, rawBody)}`, "utf8");
  const given = Buffer.from(signatureHeader.trim(), "utf8");
  if (given.length !== expected.length) {
    // Same amount of work either way, so the timing does not reveal the length check.
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(given, expected);
}
