import { Type } from "typebox";
import { PERMISSIONS } from "../apikeys/permissions";
import { StringEnum } from "../http/envelope";
import { PLANS, TIERS } from "./limits";

export const AccountSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  tier: StringEnum(TIERS),
  plan: StringEnum(PLANS),
  created_at: Type.String({ format: "date-time" }),
});

export const SignupBody = Type.Object(
  {
    email: Type.String({ maxLength: 254, description: "Sign-in email; case-insensitive" }),
    password: Type.String({ minLength: 1, maxLength: 1024, description: "At least 10 characters" }),
  },
  { additionalProperties: false },
);

export const LoginBody = SignupBody;

export const SessionResult = Type.Object({
  account: AccountSchema,
  session: Type.Object({
    token: Type.String({ description: "Bearer token for key management; shown once" }),
    expires_at: Type.String({ format: "date-time" }),
  }),
});

export const LimitsSchema = Type.Object({
  requests_per_minute: Type.Integer(),
  websocket_connections: Type.Integer(),
  markets_per_subscription: Type.Integer(),
  // A type list, not anyOf: the serializer handles it without running a validator per response.
  keys_allowed: Type.Unsafe<number | null>({ type: ["integer", "null"], description: "null: unlimited" }),
});

export const WhoAmI = Type.Object({
  account: AccountSchema,
  key: Type.Object({
    id: Type.String(),
    name: Type.String(),
    type: Type.String(),
    permissions: Type.Array(StringEnum(PERMISSIONS)),
    environment: Type.String(),
  }),
  limits: LimitsSchema,
});
