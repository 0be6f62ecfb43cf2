/**
 * Kalshi request signing (VENUES.md §2.5). Every authenticated REST call and the WebSocket upgrade
 * carry KALSHI-ACCESS-KEY (key id), KALSHI-ACCESS-TIMESTAMP (unix ms) and KALSHI-ACCESS-SIGNATURE =
 * base64(RSA-PSS-SHA256(timestamp + METHOD + path)) with MGF1-SHA256 and salt length = digest
 * length (32). `path` is the full path including `/trade-api/v2` and WITHOUT the query string.
 * Private keys are PEM (PKCS#1 or PKCS#8); parsed keys are cached so signing stays cheap.
 */
import { constants, createPrivateKey, type KeyObject, sign } from "node:crypto";
import { VenueError } from "../errors";

export interface KalshiKey {
  keyId: string;
  privateKeyPem: string;
}

export const KALSHI_HEADERS = {
  key: "KALSHI-ACCESS-KEY",
  signature: "KALSHI-ACCESS-SIGNATURE",
  timestamp: "KALSHI-ACCESS-TIMESTAMP",
} as const;

/** The exact string Kalshi verifies: `1703123456789GET/trade-api/v2/portfolio/orders`. */
export function kalshiSignedMessage(timestampMs: number, method: string, path: string): string {
  const query = path.indexOf("?");
  return `${timestampMs}${method.toUpperCase()}${query >= 0 ? path.slice(0, query) : path}`;
}

const keyCache = new Map<string, KeyObject>();

function privateKey(pem: string): KeyObject {
  let key = keyCache.get(pem);
  if (!key) {
    try {
      key = createPrivateKey(pem);
    } catch (error) {
      throw new VenueError("kalshi", "auth_failed", "kalshi private key is not a valid PEM RSA key", {
        cause: error,
      });
    }
    if (keyCache.size > 100) keyCache.clear();
    keyCache.set(pem, key);
  }
  return key;
}

/** The three auth headers for one request. */
export function kalshiAuthHeaders(
  key: KalshiKey,
  method: string,
  path: string,
  timestampMs: number,
): Record<string, string> {
  const message = kalshiSignedMessage(timestampMs, method, path);
  const signature = sign("sha256", Buffer.from(message), {
    key: privateKey(key.privateKeyPem),
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
  });
  return {
    [KALSHI_HEADERS.key]: key.keyId,
    [KALSHI_HEADERS.signature]: signature.toString("base64"),
    [KALSHI_HEADERS.timestamp]: String(timestampMs),
  };
}
