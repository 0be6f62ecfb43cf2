import { Type } from "typebox";
import { AGENT_PERMISSIONS, ENVIRONMENTS, PERMISSIONS } from "../access/permissions";
import { StringEnum } from "../http/envelope";

export const ApiKeySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String({ description: "read_only, trading, admin or agent" }),
  permissions: Type.Array(StringEnum(PERMISSIONS)),
  environment: StringEnum(ENVIRONMENTS),
  prefix: Type.String({ description: "First characters of the secret, to tell keys apart" }),
  created_at: Type.String({ format: "date-time" }),
  last_used_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "Updated in batches: may lag real use by up to a minute",
  }),
  revoked_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
});

export const CreatedApiKeySchema = Type.Object({
  id: Type.String(),
  key: Type.String({ description: "The secret. Shown only in this response; store it now" }),
  name: Type.String(),
  type: Type.String(),
  permissions: Type.Array(StringEnum(PERMISSIONS)),
  environment: StringEnum(ENVIRONMENTS),
  prefix: Type.String(),
  created_at: Type.String({ format: "date-time" }),
});

export const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    type: Type.String({
      description: "read_only | trading | admin | agent (the spec's Read-Only, Trading, Admin are accepted)",
    }),
    permissions: Type.Optional(
      Type.Array(StringEnum(AGENT_PERMISSIONS), {
        maxItems: 3,
        description: "Agent keys only: chosen from read, trade, manage_orders (default [read])",
      }),
    ),
    environment: Type.Optional(
      StringEnum(ENVIRONMENTS, {
        description:
          "live or sandbox. Default: the calling key's own environment (an API key may create only those); live for a session token",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ListKeysQuery = Type.Object(
  {
    environment: Type.Optional(
      StringEnum(ENVIRONMENTS, {
        description:
          "Only keys of this environment. An API key lists its own environment's keys (the other is 403); a session token lists both by default",
      }),
    ),
  },
  { additionalProperties: false },
);

export const RenameKeyBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const KeyIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
