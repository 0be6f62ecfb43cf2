/**
 * The price stream's wire protocol (spec 4.2 plus what the spec leaves open): the parsing of client
 * messages, and close codes. The shape of every message, both ways, is declared in schemas.ts; the
 * parser is written by hand to answer each mistake with a message a person can act on, and its
 * tests hold it to those schemas.
 */
import {
  type ClientMessage,
  MAX_API_KEY_LENGTH,
  MAX_ID_LENGTH,
  MAX_IDS_PER_MESSAGE,
  type StreamErrorCode,
} from "./schemas";

export type { ClientMessage, RejectReason } from "./schemas";
export { MAX_IDS_PER_MESSAGE };

/** Close codes the stream uses (4000-4999 are application codes). */
export const CLOSE = {
  /** The server is shutting down; reconnect elsewhere or later. */
  GOING_AWAY: 1001,
  /** Bad key, revoked key, or a message before authenticating. */
  UNAUTHORIZED: 4001,
  /** The key lacks the `read` permission. */
  FORBIDDEN: 4003,
  /** No `auth` message within the deadline. */
  AUTH_TIMEOUT: 4008,
  /** The client did not keep up and its buffer passed the hard bound. */
  SLOW_CONSUMER: 4009,
  /** The key already holds its plan's number of stream connections. */
  CONNECTION_LIMIT: 4029,
} as const;

export class ProtocolError extends Error {
  constructor(
    readonly code: Extract<StreamErrorCode, "VALIDATION_ERROR">,
    message: string,
  ) {
    super(message);
  }
}

/** Parses one client text message; throws ProtocolError with a message a person can act on. */
export function parseClientMessage(text: string): ClientMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ProtocolError("VALIDATION_ERROR", "message is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ProtocolError("VALIDATION_ERROR", "message must be a JSON object with an `action`");
  }
  const o = value as Record<string, unknown>;
  switch (o["action"]) {
    case "auth": {
      const key = o["api_key"];
      if (typeof key !== "string" || key.length === 0 || key.length > MAX_API_KEY_LENGTH) {
        throw new ProtocolError("VALIDATION_ERROR", "auth needs `api_key`: your API key as a string");
      }
      return { action: "auth", api_key: key };
    }
    case "subscribe":
    case "unsubscribe": {
      const ids = o["market_ids"];
      if (!Array.isArray(ids) || ids.length === 0) {
        throw new ProtocolError("VALIDATION_ERROR", `${o["action"]} needs \`market_ids\`: a non-empty array`);
      }
      if (ids.length > MAX_IDS_PER_MESSAGE) {
        throw new ProtocolError("VALIDATION_ERROR", `at most ${MAX_IDS_PER_MESSAGE} market_ids per message`);
      }
      for (const id of ids) {
        if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID_LENGTH) {
          throw new ProtocolError(
            "VALIDATION_ERROR",
            `market_ids must be strings of 1 to ${MAX_ID_LENGTH} characters`,
          );
        }
      }
      return { action: o["action"], market_ids: [...new Set(ids as string[])] };
    }
    case "ping":
      return { action: "ping" };
    default:
      throw new ProtocolError(
        "VALIDATION_ERROR",
        "unknown `action`: expected auth, subscribe, unsubscribe or ping",
      );
  }
}
