import { Type } from "typebox";
import { ENVIRONMENTS } from "../access/permissions";
import { SUBSCRIBABLE_EVENT_TYPES } from "../events/types";
import { StringEnum } from "../http/envelope";

const Timestamp = Type.String({ format: "date-time" });
const EVENTS_HELP = `Event types (spec 6.1): ${SUBSCRIBABLE_EVENT_TYPES.join(", ")}`;

export const WebhookSchema = Type.Object({
  id: Type.String({ description: "wh_…" }),
  url: Type.String(),
  events: Type.Array(Type.String(), { description: EVENTS_HELP }),
  status: StringEnum(["active", "failed"] as const, {
    description:
      "failed: six attempts of a delivery failed in a row; nothing is sent until PATCH status=active",
  }),
  environment: StringEnum(ENVIRONMENTS, {
    description: "Events of this environment (the creating key's) are sent",
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
  failed_at: Type.Union([Timestamp, Type.Null()]),
  secret: Type.Optional(
    Type.String({
      description:
        "Only when crossbook generated it (creation without a secret, or rotate_secret): shown once",
    }),
  ),
});

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: "HTTPS URL of your receiver" }),
    events: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50, description: EVENTS_HELP }),
    secret: Type.Optional(
      Type.String({
        description: "16-256 characters used to sign deliveries; omit to have one generated (returned once)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const UpdateWebhookBody = Type.Object(
  {
    events: Type.Optional(
      Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50, description: EVENTS_HELP }),
    ),
    url: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: "Extension: a new HTTPS URL" }),
    ),
    secret: Type.Optional(
      Type.String({ description: "Extension: a new signing secret (16-256 characters)" }),
    ),
    rotate_secret: Type.Optional(
      Type.Boolean({ description: "Extension: generate a new secret; it is returned once in this response" }),
    ),
    status: Type.Optional(
      Type.Literal("active", {
        description: "Extension: re-enable a failed webhook; waiting deliveries resume",
      }),
    ),
  },
  { additionalProperties: false },
);

export const WebhookParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const DeliveryRecordSchema = Type.Object({
  id: Type.String({
    description: "The delivery id (whd_…): the same on every attempt; X-Service-Delivery-Id",
  }),
  event_type: Type.String(),
  status: StringEnum(["success", "failed"] as const),
  response_code: Type.Union([Type.Integer(), Type.Null()], { description: "null when no HTTP answer came" }),
  response_time_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()], { description: "Why an attempt failed" }),
  retry_count: Type.Integer({ description: "0 for the first attempt of a delivery, then 1, 2, …" }),
  attempt_id: Type.String({ description: "wha_…" }),
  timestamp: Timestamp,
});

export const DeliveriesQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })) },
  { additionalProperties: false },
);

export const DeletedWebhookSchema = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });
