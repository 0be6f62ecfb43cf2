/**
 * The price stream's wire protocol (spec 4.2 plus what the spec leaves open): the parsing of client
 * messages, and close codes. The shape of every message, both ways, is declared in schemas.ts; the
 * parser is written by hand to answer each mistake with a message a person can act on, and its
 * tests hold it to those schemas.
 */
import {
  ALL_EVENT_TYPES,
  type ClientMessage,
  EVENT_TYPE_NAMES,
  MAX_API_KEY_LENGTH,
  MAX_EVENT_SEQ,
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
  /**
   * The client did not keep up: its buffer passed the hard bound. On the account stream it is closed
   * with this code after what was already sent; reconnect and resume after the last event received.
   */
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
    case "subscribe": {
      const hasIds = o["market_ids"] !== undefined;
      const hasTypes = o["types"] !== undefined;
      if (!hasIds && !hasTypes) {
        throw new ProtocolError(
          "VALIDATION_ERROR",
          'subscribe needs `market_ids` (markets\' prices) or `types` (account event types, or ["*"])',
        );
      }
      return {
        action: "subscribe",
        ...(hasIds ? { market_ids: marketIds("subscribe", o["market_ids"]) } : {}),
        ...(hasTypes ? { types: eventTypes(o["types"]) } : {}),
      } as ClientMessage;
    }
    case "unsubscribe":
      return { action: "unsubscribe", market_ids: marketIds("unsubscribe", o["market_ids"]) };
    case "resume":
      return {
        action: "resume",
        after: eventCursor(o["after"]),
        ...(o["types"] !== undefined ? { types: eventTypes(o["types"]) } : {}),
      };
    case "ping":
      return { action: "ping" };
    default:
      throw new ProtocolError(
        "VALIDATION_ERROR",
        "unknown `action`: expected auth, subscribe, unsubscribe, resume or ping",
      );
  }
}

function marketIds(action: string, ids: unknown): string[] {
  if (!Array.isArray(ids) || ids.length === 0) {
    throw new ProtocolError("VALIDATION_ERROR", `${action} needs \`market_ids\`: a non-empty array`);
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
  return [...new Set(ids as string[])];
}

const KNOWN_TYPES = new Set<string>([...EVENT_TYPE_NAMES, ALL_EVENT_TYPES]);
const MAX_TYPES = 50;

type EventTypeName = (typeof EVENT_TYPE_NAMES)[number] | typeof ALL_EVENT_TYPES;

function eventTypes(types: unknown): EventTypeName[] {
  if (!Array.isArray(types) || types.length === 0 || types.length > MAX_TYPES) {
    throw new ProtocolError(
      "VALIDATION_ERROR",
      `\`types\` must be a non-empty array of at most ${MAX_TYPES} event types (or ["*"] for every type)`,
    );
  }
  for (const type of types) {
    if (typeof type !== "string" || !KNOWN_TYPES.has(type)) {
      throw new ProtocolError(
        "VALIDATION_ERROR",
        `unknown event type ${JSON.stringify(type)} in \`types\`; known: ${EVENT_TYPE_NAMES.join(", ")}, or "*"`,
      );
    }
  }
  return [...new Set(types as EventTypeName[])];
}

const CURSOR_TEXT = /^([0-9]{1,15}|evt_[A-Za-z0-9_-]{1,80})$/;

/** A resume's `after`, as text: an event's seq (digits) or id; "0" for the oldest event kept. */
function eventCursor(after: unknown): string {
  if (typeof after === "number" && Number.isInteger(after) && after >= 0 && after <= MAX_EVENT_SEQ) {
    return String(after);
  }
  if (typeof after === "string" && CURSOR_TEXT.test(after)) return after;
  throw new ProtocolError(
    "VALIDATION_ERROR",
    "resume needs `after`: the seq (a number) or id (evt_…) of the last event received, or 0 for the oldest kept",
  );
}
