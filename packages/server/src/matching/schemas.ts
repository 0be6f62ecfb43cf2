import { Type } from "typebox";
import { Nullable, PageMeta, StringEnum } from "../http/envelope";
import { VENUE_IDS } from "../venues/model";
import { MATCH_STATUSES, POLARITIES, REJECT_REASONS } from "./pairs";
import { RELATIONS } from "./types";

const Timestamp = Type.String({ format: "date-time" });
const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 }));
const Offset = Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }));
const Note = Type.String({ maxLength: 1000, description: "Why, in a sentence, for the record" });

const RelationSchema = StringEnum(RELATIONS, {
  description:
    "Read \"market_a is <relation> of market_b\": identity (same contract), complement (A's YES is B's NO), " +
    "subset (A's YES implies B's YES), superset, overlap, disjoint",
});
const PolaritySchema = StringEnum(POLARITIES, {
  description: "same: A's YES is hedged by B's NO (identity-like); inverted: by B's YES (complement-like)",
});

export const MatchMarketSchema = Type.Object({
  id: Type.String(),
  venue: StringEnum(VENUE_IDS),
  title: Type.String(),
  question: Type.String(),
  close_time: Nullable(Type.String()),
  url: Nullable(Type.String()),
  yes_label: Type.String({ description: "The venue's label of the YES leg" }),
});

export const MatchSchema = Type.Object({
  id: Type.String({ description: "mat_…" }),
  market_a: MatchMarketSchema,
  market_b: MatchMarketSchema,
  relation: RelationSchema,
  polarity: PolaritySchema,
  confidence: Type.Number({
    minimum: 0,
    maximum: 1,
    description: "The matcher's confidence in its relation (1 for a pair an admin made)",
  }),
  reasons: Type.Array(Type.String(), { description: "What agreed and what differed, readable" }),
  blockers: Type.Array(Type.String(), { description: "What keeps the matcher from verifying it alone" }),
  caveats: Type.Array(Type.String(), {
    description:
      "Differences in edge clauses only (how a tie, cancellation or postponement settles, the close instant, a source or trigger named on one side only): the relation stands; a settlement-strict arbitrage may skip the pair",
  }),
  status: StringEnum(MATCH_STATUSES),
  status_reason: Nullable(StringEnum(REJECT_REASONS, { description: "The reason code of a rejection" })),
  status_note: Nullable(Type.String()),
  decided_by: Nullable(
    StringEnum(["matcher", "admin"] as const, {
      description: "admin: a person (an operator) decided; matcher: verified automatically",
    }),
  ),
  decided_by_account: Nullable(
    Type.String({ description: "The operator's account (acc_…) behind a person's decision" }),
  ),
  decided_by_key: Nullable(
    Type.String({
      description:
        "The API key (key_…) that made that decision; null for one made in the console's review desk",
    }),
  ),
  decided_at: Nullable(Timestamp),
  curated: Type.Boolean({
    description: "An admin decided or made it: re-runs of the matcher never change its status",
  }),
  matcher_relation: Nullable(
    StringEnum(RELATIONS, { description: "The matcher's latest relation (null for a pair it never saw)" }),
  ),
  event_id: Nullable(
    Type.String({
      description: "The cross-venue event (xev_…) of a non-rejected identity or complement pair",
    }),
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const MatchListQuery = Type.Object(
  {
    venue: Type.Optional(StringEnum(VENUE_IDS, { description: "Pairs with a market on this venue" })),
    status: Type.Optional(StringEnum(MATCH_STATUSES)),
    relation: Type.Optional(StringEnum(RELATIONS)),
    min_confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    q: Type.Optional(
      Type.String({
        maxLength: 200,
        description: "Words that must all appear in the title or question of either market",
      }),
    ),
    market_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 300, description: "Pairs holding this market" }),
    ),
    limit: Limit,
    offset: Offset,
  },
  { additionalProperties: false },
);

export const MatchParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const VerifyMatchBody = Type.Object(
  {
    relation: Type.Optional(RelationSchema),
    polarity: Type.Optional(PolaritySchema),
    note: Type.Optional(Note),
  },
  { additionalProperties: false },
);

export const RejectMatchBody = Type.Object(
  {
    reason: StringEnum(REJECT_REASONS, { description: "Why the two markets are not the same contract" }),
    note: Type.Optional(Note),
  },
  { additionalProperties: false },
);

export const CreateMatchBody = Type.Object(
  {
    market_ids: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
      minItems: 2,
      maxItems: 2,
      description: "Two markets on two different venues",
    }),
    relation: StringEnum(RELATIONS, { description: 'Read "first is <relation> of second"' }),
    polarity: Type.Optional(PolaritySchema),
    note: Type.Optional(Note),
  },
  { additionalProperties: false },
);

export const EVENT_STATUSES = ["verified", "candidate"] as const;

export const CrossEventSchema = Type.Object({
  event_id: Type.String({ description: "xev_…: usable wherever the spec takes an event_id" }),
  title: Type.String(),
  category: Nullable(Type.String()),
  close_time: Nullable(Type.String({ description: "The earliest close of its markets" })),
  status: StringEnum(EVENT_STATUSES, { description: "verified when every pair is verified" }),
  markets: Type.Array(
    Type.Object({
      market_id: Type.String(),
      venue: StringEnum(VENUE_IDS),
      title: Type.String(),
      yes_label: Type.String(),
      url: Nullable(Type.String()),
    }),
  ),
  matches: Type.Array(
    Type.Object({
      match_id: Type.String(),
      relation: StringEnum(RELATIONS),
      polarity: StringEnum(POLARITIES),
      confidence: Type.Number(),
      status: StringEnum(MATCH_STATUSES),
    }),
  ),
});

export const EventListQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(EVENT_STATUSES)),
    venue: Type.Optional(StringEnum(VENUE_IDS)),
    q: Type.Optional(
      Type.String({ maxLength: 200, description: "Words that must all appear in its markets' titles" }),
    ),
    category: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    limit: Limit,
    offset: Offset,
  },
  { additionalProperties: false },
);

export const EventParams = Type.Object({ event_id: Type.String({ minLength: 1, maxLength: 300 }) });

export { PageMeta };
