/**
 * Every message of the streams (the price stream, and the account stream, whose actions the price
 * stream also takes), declared once as a TypeBox schema: what clients send and what the server
 * writes. The TypeScript types derive from these. The messages themselves are still
 * parsed and written by hand for speed (protocol.ts, and the fan-out's price update, the session's
 * acks and errors), so the tests check those hand-built frames against these schemas. A WebSocket
 * has no request or response schema in OpenAPI, so nothing here reaches the OpenAPI document.
 * Heartbeats are WebSocket pings, not messages; a client's `ping` message gets `pong`.
 */
import { type Static, Type } from "typebox";
import { EVENT_SCHEMAS, type EventType } from "../events/types";
import { StringEnum } from "../http/envelope";
import { QuoteUpdateSchema } from "../prices/schemas";

// --- client messages --------------------------------------------------------------------------------

/** Most ids one subscribe/unsubscribe message may carry. */
export const MAX_IDS_PER_MESSAGE = 5_000;
/**
 * Longest market id and API key a message may carry. The parser counts UTF-16 code units, JSON
 * Schema's maxLength code points: past half the limit in astral characters (emoji), the parser is
 * the stricter.
 */
export const MAX_ID_LENGTH = 300;
export const MAX_API_KEY_LENGTH = 200;

const MarketIds = Type.Array(Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }), {
  minItems: 1,
  maxItems: MAX_IDS_PER_MESSAGE,
  description: "Market ids; one named twice counts once",
});

export const AuthMessageSchema = Type.Object(
  {
    action: Type.Literal("auth"),
    api_key: Type.String({ minLength: 1, maxLength: MAX_API_KEY_LENGTH }),
  },
  { description: "Authenticates a connection opened without a key: its first message, within 5 s" },
);

/** Every event type, and `*` for all of them. */
export const EVENT_TYPE_NAMES = Object.keys(EVENT_SCHEMAS) as EventType[];
export const ALL_EVENT_TYPES = "*" as const;

const EventTypes = Type.Array(StringEnum([...EVENT_TYPE_NAMES, ALL_EVENT_TYPES]), {
  minItems: 1,
  maxItems: 50,
  description: 'Account event types to receive (`"*"`: every type); replaces the earlier choice',
});

/** A largest seq a cursor may name (15 digits, a safe integer). */
export const MAX_EVENT_SEQ = 999_999_999_999_999;

/** An event's seq (a number, or its digits) or id; 0 for the oldest event kept. */
const EventCursor = Type.Union([
  Type.Integer({ minimum: 0, maximum: MAX_EVENT_SEQ }),
  Type.String({ pattern: "^([0-9]{1,15}|evt_[A-Za-z0-9_-]{1,80})$" }),
]);

/**
 * Markets to follow (prices) and/or account event types to receive. The price stream takes both;
 * the account stream takes `types` only.
 */
export const SubscribeMessageSchema = Type.Union([
  Type.Object({
    action: Type.Literal("subscribe"),
    market_ids: MarketIds,
    types: Type.Optional(EventTypes),
  }),
  Type.Object({
    action: Type.Literal("subscribe"),
    market_ids: Type.Optional(MarketIds),
    types: EventTypes,
  }),
]);

export const ResumeMessageSchema = Type.Object(
  {
    action: Type.Literal("resume"),
    after: EventCursor,
    types: Type.Optional(EventTypes),
  },
  {
    description:
      "Sends the account's events after the cursor, replayed from the store, then live, with no gap and no duplicate",
  },
);

export const UnsubscribeMessageSchema = Type.Object({
  action: Type.Literal("unsubscribe"),
  market_ids: MarketIds,
});

export const PingMessageSchema = Type.Object(
  { action: Type.Literal("ping") },
  { description: "For clients that cannot see WebSocket pings; answered with pong" },
);

/** What a client may send (fields besides these are ignored). */
export const ClientMessageSchema = Type.Union([
  AuthMessageSchema,
  SubscribeMessageSchema,
  ResumeMessageSchema,
  UnsubscribeMessageSchema,
  PingMessageSchema,
]);

export type ClientMessage = Static<typeof ClientMessageSchema>;

// --- server messages --------------------------------------------------------------------------------

/**
 * A quote change: the bus's QuoteUpdate with its type and the connection's `seq`, in the order
 * the fan-out writes the fields.
 */
export const PriceUpdateMessageSchema = Type.Object({
  type: Type.Literal("price_update"),
  ...QuoteUpdateSchema.properties,
  seq: Type.Integer({
    minimum: 1,
    description: "This connection's price updates numbered 1, 2, 3, … with no gaps",
  }),
});

export const AuthenticatedMessageSchema = Type.Object({
  type: Type.Literal("authenticated"),
  key_id: Type.String(),
  environment: StringEnum(["live", "sandbox"] as const, {
    description: "The key's environment: the account events a connection receives are of it",
  }),
  limits: Type.Object({
    connections: Type.Integer({ description: "Stream connections the key may hold" }),
    markets_per_subscription: Type.Integer({ description: "Markets one connection may follow" }),
  }),
});

/** Why a market in a subscribe/unsubscribe message was not taken. */
export const RejectReasonSchema = StringEnum([
  "MARKET_NOT_FOUND",
  "SUBSCRIPTION_LIMIT",
  "NOT_SUBSCRIBED",
] as const);

export type RejectReason = Static<typeof RejectReasonSchema>;

const Rejected = Type.Array(Type.Object({ market_id: Type.String(), reason: RejectReasonSchema }));

export const SubscribedMessageSchema = Type.Object({
  type: Type.Literal("subscribed"),
  market_ids: Type.Array(Type.String(), {
    description: "Accepted, in the order asked; their current quotes follow",
  }),
  rejected: Rejected,
  limit: Type.Optional(
    Type.Object(
      { markets_per_subscription: Type.Integer(), subscribed: Type.Integer() },
      { description: "With a SUBSCRIPTION_LIMIT rejection" },
    ),
  ),
});

/** The answer to a subscribe with `types`. */
export const TypesSubscribedMessageSchema = Type.Object({
  type: Type.Literal("subscribed"),
  types: EventTypes,
  after: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        "When this subscribe started the flow (no resume before it): it sends what follows this event (the account's last; 0: none yet). Resume after it to miss nothing",
    }),
  ),
});

/** The answer to a resume: the cursor understood (an id is answered with its seq; 0: the beginning). */
export const ResumedMessageSchema = Type.Object({
  type: Type.Literal("resumed"),
  after: Type.Integer({ minimum: 0 }),
});

/** One account event: the `data` is what a webhook delivery of it carries. */
export const AccountEventMessageSchema = Type.Object({
  type: Type.Literal("event"),
  seq: Type.Integer({
    minimum: 1,
    description: "The event's place; resume after the last one received (not increasing on PostgreSQL)",
  }),
  id: Type.String(),
  event_type: StringEnum(EVENT_TYPE_NAMES),
  timestamp: Type.String({ format: "date-time" }),
  data: Type.Unknown(),
});

/** The replay asked for by a resume is over: what follows is live. */
export const CaughtUpMessageSchema = Type.Object({
  type: Type.Literal("caught_up"),
  replayed: Type.Integer({ minimum: 0, description: "Events sent from the store" }),
});

export const UnsubscribedMessageSchema = Type.Object({
  type: Type.Literal("unsubscribed"),
  market_ids: Type.Array(Type.String()),
  rejected: Rejected,
});

export const StreamErrorCodeSchema = StringEnum([
  "VALIDATION_ERROR",
  "UNAUTHORIZED",
  "FORBIDDEN",
  "RATE_LIMITED",
  "AUTH_TIMEOUT",
  "CONNECTION_LIMIT",
  "CURSOR_EXPIRED",
  "SLOW_CONSUMER",
  "INTERNAL_ERROR",
] as const);

export type StreamErrorCode = Static<typeof StreamErrorCodeSchema>;

/** A problem with a message or the connection; it stays open unless a close follows. */
export const ErrorMessageSchema = Type.Object({
  type: Type.Literal("error"),
  code: StreamErrorCodeSchema,
  message: Type.String(),
  details: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description: "CURSOR_EXPIRED: retention_days, oldest_available {seq, id}, restart_after",
    }),
  ),
});

export const PongMessageSchema = Type.Object({ type: Type.Literal("pong") });

/** What the server may write on a stream connection. */
export const ServerMessageSchema = Type.Union([
  PriceUpdateMessageSchema,
  AuthenticatedMessageSchema,
  SubscribedMessageSchema,
  UnsubscribedMessageSchema,
  TypesSubscribedMessageSchema,
  ResumedMessageSchema,
  AccountEventMessageSchema,
  CaughtUpMessageSchema,
  ErrorMessageSchema,
  PongMessageSchema,
]);

export type PriceUpdateMessage = Static<typeof PriceUpdateMessageSchema>;
export type AuthenticatedMessage = Static<typeof AuthenticatedMessageSchema>;
export type SubscribedMessage = Static<typeof SubscribedMessageSchema>;
export type UnsubscribedMessage = Static<typeof UnsubscribedMessageSchema>;
export type ErrorMessage = Static<typeof ErrorMessageSchema>;
export type PongMessage = Static<typeof PongMessageSchema>;
export type AccountEventMessage = Static<typeof AccountEventMessageSchema>;
export type ServerMessage = Static<typeof ServerMessageSchema>;
