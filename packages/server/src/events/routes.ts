/** `GET /v1/account/events`: the caller's account events after a cursor (account-events.ts). */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { keyOwner } from "../http/auth";
import { Nullable } from "../http/envelope";
import { type AccountEvents, DEFAULT_EVENTS_LIMIT, MAX_EVENTS_LIMIT } from "./account-events";
import { SUBSCRIBABLE_EVENT_TYPES } from "./types";

const AccountEventSchema = Type.Object({
  id: Type.String({ description: "The event's id (evt_…); also accepted as `after`" }),
  seq: Type.Integer({
    description:
      "Its place in the account's event order; pass it as `after` to read on (unique, increasing in time, not by one)",
  }),
  type: Type.String({ description: `One of: ${SUBSCRIBABLE_EVENT_TYPES.join(", ")}, webhook.test` }),
  timestamp: Type.String({ format: "date-time", description: "When the event was recorded" }),
  data: Type.Unknown({ description: "The payload, exactly the `data` a webhook delivery of it carries" }),
});

const EventsQuery = Type.Object(
  {
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          "Read events after this one: an event's `seq` or `id` from an earlier answer. Omit (or 0) to start from the oldest event kept",
      }),
    ),
    types: Type.Optional(
      Type.String({
        maxLength: 500,
        description: "Only these event types, comma-separated (e.g. order.filled,order.cancelled)",
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_EVENTS_LIMIT, default: DEFAULT_EVENTS_LIMIT }),
    ),
  },
  { additionalProperties: false },
);

const EventsMeta = Type.Object({
  next_after: Nullable(
    Type.Integer({ description: "Pass as `after` for the next page (null: no event yet, nothing given)" }),
  ),
  has_more: Type.Boolean({ description: "More events are available right now" }),
});

export const accountEventRoutes: FastifyPluginAsyncTypebox<{ events: AccountEvents }> = async (app, deps) => {
  app.get(
    "/v1/account/events",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["account"],
        summary:
          "The account's events in the key's environment, oldest first, after a cursor: orders, fills, positions, transfers",
        querystring: EventsQuery,
        response: {
          200: Type.Object({
            success: Type.Literal(true),
            data: Type.Array(AccountEventSchema),
            meta: EventsMeta,
          }),
        },
      },
    },
    async (request) => {
      const { after, types, limit } = request.query;
      const page = await deps.events.list(keyOwner(request, "Account events are read with an API key"), {
        after,
        types: types
          ?.split(",")
          .map((t) => t.trim())
          .filter(Boolean),
        limit,
      });
      return {
        success: true as const,
        data: page.events.map((e) => ({
          id: e.id,
          seq: e.seq,
          type: e.type,
          timestamp: e.timestamp,
          data: JSON.parse(e.dataJson) as unknown,
        })),
        meta: { next_after: page.nextAfter, has_more: page.hasMore },
      };
    },
  );
};
