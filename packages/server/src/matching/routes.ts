/**
 * Matched markets and cross-venue events over HTTP. Reads take any key with `read`; curation
 * (verify, reject, pair by hand) takes an operator (http/auth.ts), since matches are shared by every
 * account: an ordinary account's admin key must not rewrite what other tenants trade on.
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { requireAuth } from "../http/auth";
import { Envelope, ok, PagedEnvelope, PageMeta, pageMeta } from "../http/envelope";
import { AppError } from "../http/errors";
import type { VenueId } from "../venues/model";
import type { Curator } from "./curation";
import { type MarketInfo, type MatchStatus, marketYesLabel, type RejectReason, venueOf } from "./pairs";
import type { CrossEventDetail, MatchDetail } from "./reads";
import {
  CreateMatchBody,
  CrossEventSchema,
  EventListQuery,
  EventParams,
  MatchListQuery,
  MatchParams,
  MatchSchema,
  RejectMatchBody,
  VerifyMatchBody,
} from "./schemas";
import type { MatchingService } from "./service";
import type { Polarity, Relation } from "./types";

function marketView(id: string, info: MarketInfo | undefined) {
  return {
    id,
    venue: (info?.venue ?? venueOf(id)) as VenueId,
    title: info?.title ?? id,
    question: info?.question ?? info?.title ?? id,
    close_time: info?.close_time ?? null,
    url: info?.url ?? null,
    yes_label: marketYesLabel(info),
  };
}

export function matchView({ row, a, b }: MatchDetail) {
  return {
    id: row.id,
    market_a: marketView(row.market_a, a),
    market_b: marketView(row.market_b, b),
    relation: row.relation as Relation,
    polarity: row.polarity as Polarity,
    confidence: row.confidence,
    reasons: JSON.parse(row.reasons) as string[],
    blockers: JSON.parse(row.blockers) as string[],
    caveats: JSON.parse(row.caveats) as string[],
    status: row.status as MatchStatus,
    status_reason: row.status_reason as RejectReason | null,
    status_note: row.status_note,
    decided_by: row.decided_by as "matcher" | "admin" | null,
    decided_by_account: row.decided_by_account,
    decided_by_key: row.decided_by_key,
    decided_at: row.decided_at,
    curated: row.curated === 1,
    matcher_relation: row.matcher_relation as Relation | null,
    event_id: row.event_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function eventView(event: CrossEventDetail) {
  return {
    event_id: event.id,
    title: event.title,
    category: event.category,
    close_time: event.close_time,
    status: event.status,
    markets: event.markets.map((m) => ({
      market_id: m.id,
      venue: m.venue,
      title: m.info?.title ?? m.id,
      yes_label: marketYesLabel(m.info),
      url: m.info?.url ?? null,
    })),
    matches: event.pairs.map((p) => ({
      match_id: p.id,
      relation: p.relation as Relation,
      polarity: p.polarity as Polarity,
      confidence: p.confidence,
      status: p.status as MatchStatus,
    })),
  };
}

/** The operator behind a curation request (the auth hook has already checked the role). */
function curator(request: FastifyRequest): Curator {
  const auth = requireAuth(request);
  if (auth.kind !== "key") throw new AppError("FORBIDDEN", "Curating matches needs an operator's API key");
  return { accountId: auth.account.id, keyId: auth.key.id };
}

export const matchingRoutes: FastifyPluginAsyncTypebox<{ matching: MatchingService }> = async (
  app,
  { matching },
) => {
  const tags = ["matching"];

  app.get(
    "/v1/matches",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags,
        summary: "Pairs of markets across venues, most confident first",
        querystring: MatchListQuery,
        response: { 200: PagedEnvelope(MatchSchema, PageMeta) },
      },
    },
    async (request) => {
      const { limit = 50, offset = 0, venue, status, relation, min_confidence, q, market_id } = request.query;
      const { items, total } = await matching.list(
        {
          ...(venue ? { venue } : {}),
          ...(status ? { status } : {}),
          ...(relation ? { relation } : {}),
          ...(min_confidence !== undefined ? { minConfidence: min_confidence } : {}),
          ...(q ? { q } : {}),
          ...(market_id ? { marketId: market_id } : {}),
        },
        { limit, offset },
      );
      return { success: true as const, data: items.map(matchView), meta: pageMeta(offset, limit, total) };
    },
  );

  app.post(
    "/v1/matches",
    {
      config: { auth: "key", permission: "operator" },
      schema: {
        tags,
        summary:
          "Pair two markets by hand (operator): verified and curated; an existing pair is verified instead",
        body: CreateMatchBody,
        response: { 200: Envelope(MatchSchema), 201: Envelope(MatchSchema) },
      },
    },
    async (request, reply) => {
      const { match, created } = await matching.create(request.body, curator(request));
      return reply.code(created ? 201 : 200).send(ok(matchView(match)));
    },
  );

  app.get(
    "/v1/matches/:id",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags,
        summary: "One pair with both markets, the relation, confidence, reasons and curation",
        params: MatchParams,
        response: { 200: Envelope(MatchSchema) },
      },
    },
    async (request) => ok(matchView(await matching.get(request.params.id))),
  );

  app.post(
    "/v1/matches/:id/verify",
    {
      config: { auth: "key", permission: "operator" },
      schema: {
        tags,
        summary: "Verify a pair (operator), optionally correcting its relation and polarity",
        params: MatchParams,
        body: VerifyMatchBody,
        response: { 200: Envelope(MatchSchema) },
      },
      // Everything in the body is optional: a bare POST verifies the pair as it stands.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request) =>
      ok(matchView(await matching.verify(request.params.id, request.body, curator(request)))),
  );

  app.post(
    "/v1/matches/:id/reject",
    {
      config: { auth: "key", permission: "operator" },
      schema: {
        tags,
        summary: "Reject a pair (operator) with a reason code; re-runs of the matcher keep it rejected",
        params: MatchParams,
        body: RejectMatchBody,
        response: { 200: Envelope(MatchSchema) },
      },
    },
    async (request) =>
      ok(matchView(await matching.reject(request.params.id, request.body, curator(request)))),
  );

  app.get(
    "/v1/events",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags,
        summary: "Cross-venue events: markets linked by identity or complement pairs, newest first",
        querystring: EventListQuery,
        response: { 200: PagedEnvelope(CrossEventSchema, PageMeta) },
      },
    },
    async (request) => {
      const { limit = 50, offset = 0, status, venue, q, category } = request.query;
      const { items, total } = await matching.listEvents(
        {
          ...(status ? { status } : {}),
          ...(venue ? { venue } : {}),
          ...(q ? { q } : {}),
          ...(category ? { category } : {}),
        },
        { limit, offset },
      );
      return { success: true as const, data: items.map(eventView), meta: pageMeta(offset, limit, total) };
    },
  );

  app.get(
    "/v1/events/:event_id",
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags,
        summary: "One cross-venue event by its id (xev_…), or the event a market id belongs to",
        params: EventParams,
        response: { 200: Envelope(CrossEventSchema) },
      },
    },
    async (request) => ok(eventView(await matching.getEvent(request.params.event_id))),
  );
};
