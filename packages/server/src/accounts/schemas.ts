import { Type } from "typebox";
import { PLANS, TIERS } from "../access/limits";
import { PERMISSIONS } from "../access/permissions";
import { StringEnum } from "../http/envelope";

export const AccountSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  tier: StringEnum(TIERS),
  plan: StringEnum(PLANS),
  operator: Type.Boolean({
    description: "May curate matched markets (global data); granted only by an operator with the CLI",
  }),
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

export const SessionSummarySchema = Type.Object({
  id: Type.String({ description: "ses_…" }),
  created_at: Type.String({ format: "date-time", description: "When this sign-in happened" }),
  expires_at: Type.String({ format: "date-time" }),
  ip: Type.Union([Type.String(), Type.Null()], { description: "The client address that signed in" }),
  user_agent: Type.Union([Type.String(), Type.Null()], { description: "Its User-Agent, as sent" }),
  current: Type.Boolean({ description: "The session making this request" }),
});

export const RevokeSessionsQuery = Type.Object(
  {
    keep_current: Type.Optional(
      Type.Boolean({ description: "true: end every other sign-in and keep this one (default false)" }),
    ),
  },
  { additionalProperties: false },
);
