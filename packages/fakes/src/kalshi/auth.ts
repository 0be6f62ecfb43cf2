/**
 * RSA-PSS request verification as Kalshi does it (VENUES.md §2.5): the client signs
 * `timestamp_ms + METHOD + path` (full path incl. `/trade-api/v2`, no query) with SHA-256, MGF1-SHA256
 * and a digest-length salt; the fake verifies against the public key registered by the script,
 * accepting any salt length (as the doc suggests) and refusing stale timestamps.
 */
import { constants, createPublicKey, verify } from "node:crypto";
import { KalshiError } from "./engine";
import type { ApiKey, KalshiState } from "./state";

export const HDR_KEY = "kalshi-access-key";
export const HDR_SIGNATURE = "kalshi-access-signature";
export const HDR_TIMESTAMP = "kalshi-access-timestamp";

type Headers = Record<string, string | string[] | undefined>;

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** True if the request carries any of the signing headers. */
export function hasAuthHeaders(headers: Headers): boolean {
  return Boolean(one(headers[HDR_KEY]) || one(headers[HDR_SIGNATURE]) || one(headers[HDR_TIMESTAMP]));
}

/**
 * Verifies the three headers over `method` and `path` (query already stripped). Throws a 401
 * KalshiError on anything wrong; returns the key on success.
 */
export function verifySignedRequest(
  state: KalshiState,
  headers: Headers,
  method: string,
  path: string,
  toleranceMs: number,
): ApiKey {
  const keyId = one(headers[HDR_KEY]);
  const signature = one(headers[HDR_SIGNATURE]);
  const timestamp = one(headers[HDR_TIMESTAMP]);
  if (!keyId || !signature || !timestamp)
    throw new KalshiError(401, "authentication_error", "missing authentication headers");
  const key = state.apiKeys.get(keyId);
  if (!key) throw new KalshiError(401, "authentication_error", "api key not found");
  if (!/^\d{13}$/.test(timestamp))
    throw new KalshiError(401, "authentication_error", "invalid timestamp: expected unix milliseconds");
  if (Math.abs(state.nowMs() - Number(timestamp)) > toleranceMs)
    throw new KalshiError(401, "authentication_error", "request timestamp is too old or in the future");
  let ok = false;
  try {
    ok = verify(
      "sha256",
      Buffer.from(`${timestamp}${method.toUpperCase()}${path}`),
      {
        key: createPublicKey(key.publicKeyPem),
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength: constants.RSA_PSS_SALTLEN_AUTO,
      },
      Buffer.from(signature, "base64"),
    );
  } catch {
    ok = false;
  }
  if (!ok) throw new KalshiError(401, "authentication_error", "invalid signature");
  return key;
}
